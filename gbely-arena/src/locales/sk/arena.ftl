# Texty arény po slovensky. Každá správa je aj v ../en/arena.ftl, s tými istými premennými
# (drží ich pri tom unit test). Ako pridať jazyk: docs/arena.md, „Languages“.
# Pojmy hry ako v pravidlách: kolo, políčko, podiel, porušenie, Zastupiteľstvo (the Council).

language-name = Slovensky

## Hlavička

nav-board = rebríček
nav-final = finále
nav-results = výsledky
nav-rules = pravidlá
nav-me = tvoje riešenie
nav-org = organizátori
nav-signout = odhlásiť sa
nav-signin = prihlásiť sa
nav-language = Jazyk

## Fázy

phase-before = Prihlasovanie sa otvára { $at }.
phase-registration = Registrácia: nahrávanie sa otvára { $at }.
phase-testing = Testovanie: nahrávaj do { $deadline } (platí posledné nahraté riešenie).
phase-closed = Termín uplynul ({ $deadline }); finále bude { $final }.
phase-final = Finále.

## Stránka súťaže

home-registration = Registrácia
home-testing = Začiatok testovania
home-deadline = Termín (posledné nahratie)
home-final = Živé finále
home-me = Tvoje riešenie
home-board = rebríček
home-signin = Prihlás sa svojou e-mailovou adresou
home-signin-why = a nahraj agenta.
home-phases = Fázy
home-note = Časy sú v časovom pásme { $zone }. Rebríček odohrá každé riešenie raz proti Zastupiteľstvu na referenčnej mape; najlepších osem sa stretne v živom finále.
home-rules = Pravidlá súťaže

## Pravidlá

rules-title = Pravidlá
rules-note = Pravidlá súťaže od organizátorov.
rules-none = Táto súťaž nemá stránku s pravidlami: opýtaj sa organizátorov.

## Prihlásenie

signin-title = Prihlásenie
signin-identity = Tvoja e-mailová adresa je tvoja identita: pošleme na ňu odkaz na prihlásenie.
signin-address = E-mailová adresa
signin-send = Poslať odkaz
signin-check = Pozri si e-mail
signin-sent = Odkaz na prihlásenie sme poslali na
signin-open = Otvor ho v tomto prehliadači.
signin-as = Prihlásiť sa ako
signin-confirm = Prihlásiť sa

## Stavy riešenia

state-queued = čaká v poradí
state-checking = kontroluje sa
state-running = hrá sa zápas
state-scored = ohodnotené
state-disqualified = diskvalifikované
state-check-failed = neprešlo kontrolou
state-error = neohodnotené (chyba hodnotiteľa)
state-superseded = nahradené (novšie nahratie prišlo skôr, než sa ohodnotilo)

## Stĺpce tabuliek
# Dlhé slová stĺpcov majú mäkké spojovníky (U+00AD, neviditeľné): na úzkom displeji sa rozdelia
# so spojovníkom, namiesto aby tabuľka pretiekla do strany.

col-uploaded = nahraté
col-file = súbor
col-state = stav
col-share = podiel
col-tiebreak = roz­hodu­júce kolo
col-cells = políčka
col-violations = poru­še­nia
col-rounds = kolá
col-agent = agent
col-version = verzia
col-replay = záznam
col-round = kolo
col-place = miesto
col-address = adresa
col-reason = dôvod
col-when = kedy
col-who = kto
col-what = čo

## Odmietnutia

refused-title = Nevykonané
refused-back-me = Späť na tvoje riešenie
refused-back-home = stránka súťaže

## Tvoje riešenie

upload-agent = Tvoj agent
upload-button = Nahrať
upload-note = jeden súbor .py, najviac { $kib } KiB; nahradí tvoje posledné riešenie
me-title = Tvoje riešenie
me-none = Zatiaľ si nič nenahral(a).
me-uploads = Tvoje nahratia
me-last-counts = Platí posledné.
status-title = Riešenie { $id }:
status-bytes = { $bytes ->
    [one] { $bytes } bajt
    [few] { $bytes } bajty
   *[other] { $bytes } bajtov
}
status-uploaded = nahraté { $at }
status-updates = Táto stránka sa aktualizuje sama.
result-caption = Ohodnotený zápas
result-council = Zastupiteľstvo padlo
result-council-fell = v { $round }. kole
result-council-held = nie
result-slowest = Najpomalšie odpovede:
answer-time = kolo { $round }: { $took }
answer-time-of = kolo { $round }: { $took } z { $limit }
result-replay = záznam zápasu
result-log = výpis tvojho agenta
check-title = Kontrola
check-passes = prešla
check-fails = neprešla
check-log = Výpis tvojho agenta pri kontrole
check-log-what = (čo vypísal a výpis chyby, ak spadol)

## Rebríček

board-title = Rebríček
board-note = Posledné nahraté riešenie každého účastníka proti Zastupiteľstvu na referenčnej mape: podiel mapy, potom kolo, v ktorom agent tento podiel prvý raz dosiahol (nižšie je lepšie). Diskvalifikované riešenie v ňom nie je.
board-pending = hodnotí sa
board-empty = V rebríčku zatiaľ nie je nikto.
flash-title = Blesková výhra
flash-note = Zastupiteľstvo vyradené, najskoršie kolo prvé (ktorékoľvek nahratie počas testovania).
flash-empty = Zastupiteľstvo zatiaľ nepadlo.

## Finále

final-title = Finále
final-at = Finále bude { $at }.
final-playing = Finále sa práve hrá.
final-watch = Sledovať naživo
final-failed = Finále zlyhalo:
final-results = Výsledky
final-council-fell = Zastupiteľstvo padlo v { $round }. kole.
final-council-held = Zastupiteľstvo vydržalo.
final-disqualified = vyradený
final-replay = Záznam

## Stránka organizátorov

org-title = Organizátori
org-jobs = úlohy:
org-pending = čakajúce:
org-database = databáza:
org-finalists = Finalisti
org-newer-judged = (hodnotí sa novšie nahratie)
org-download-review = stiahnuť na kontrolu
org-seating = Rozsadenie
org-submissions = Riešenia
org-rejudge-all = Znova ohodnotiť všetky aktuálne riešenia
org-submissions-region = riešenia (posúva sa do strán)
org-file = súbor
org-rejudge = znova ohodnotiť
org-audit = Záznam činností
org-audit-region = záznam činností (posúva sa do strán)
seat-col-seat = miesto
seat-col-region = oblasť
seat-col-finalist = finalista
seat-region-corner = roh
seat-region-edge = okraj
seat-on-board = { $place }. v rebríčku
seat-fill = doplnenie (final.fill)
seat-note = Miesta idú podľa pevnej permutácie poradia v rebríčku na finálovej mape (pravidlá, §9); miesto 0 začína vyhodnotenie kola 0, Zastupiteľstvo sedí posledné. Presnú zhodu vo finále rozhodne lepšie miesto v rebríčku.
seat-error = Rozsadenie sa nedá zobraziť:
final-cut-stopped = Finále (beh { $run }) sa prerušilo (server bol zastavený).
final-cut-died = Finále (beh { $run }) sa prerušilo (server počas neho spadol).
final-cut-continue = Pokračuj od posledného celého kola: stav enginu sa obnoví zo záznamu, agenti finalistov sa spustia znova (bez pamäti, bez započítaného porušenia), projekcia pokračuje tam, kde skončila.
final-continue = Pokračovať vo finále
final-run-state = Finále (beh { $run }): { $state }.
final-state-running = hrá sa
final-state-interrupted = prerušené
final-state-finished = dohrané
final-state-failed = zlyhalo
final-state-abandoned = odložené
final-run = Spustiť finále
final-pending = { $pending ->
    [one] { $pending } nahratie alebo opätovné hodnotenie sa ešte hodnotí: finále naň čaká (táto stránka sa aktualizuje sama)
    [few] { $pending } nahratia alebo opätovné hodnotenia sa ešte hodnotia: finále na ne čaká (táto stránka sa aktualizuje sama)
   *[other] { $pending } nahratí alebo opätovných hodnotení sa ešte hodnotí: finále na ne čaká (táto stránka sa aktualizuje sama)
}
final-run-again = Spustiť finále znova od začiatku
final-run-again-note = kolá prerušeného finále sa odložia; „Pokračovať vo finále“ ich zachová
final-run-note = rozsadenie nižšie na finálovej mape proti finálovému súperovi; otvorí sa stránka projekcie a čaká na štart
final-not-yet = Finále sa dá spustiť, keď uplynie termín.

## Kontrola podobnosti

review-title = Kontrola podobnosti
review-note = Posledné nahratie každého účastníka ({ $uploads }) proti všetkým ostatným, na kontrolu kódu pred finále (docs/arena.md, „The similarity review“).
review-col-code = Kód
review-code-note = podiel odtlačkov menšieho súboru (normalizované tokeny Pythonu: bez mien a literálov), ktoré má aj druhý súbor; označí sa od { $flag }.
review-col-behaviour = Správanie
review-behaviour-note = podiel kôl ich zápasov v rebríčku, v ktorých oba agenty pri rovnakom pohľade dali rovnaké príkazy; označí sa od { $flag }. Označenie žiada pozrieť sa, nie verdikt.
review-flagged = označené
review-none = Zatiaľ niet dvojice na porovnanie.
review-col-who = účastníci (nahratie, agent)
review-col-files = súbory
review-and = a
review-side-by-side = vedľa seba
review-by-code = Najpodobnejšie podľa kódu
review-by-behaviour = Najpodobnejšie podľa správania
compare-title = Vedľa seba
compare-download = stiahnuť
compare-file = súbor riešenia { $id }
compare-marked = Označené
compare-marked-note = riadky pokrýva odtlačok, ktorý má aj druhý súbor.
compare-back = Späť na kontrolu

## Odmietnutá e-mailová adresa

email-refused = `{ $address }` nie je e-mailová adresa, ktorú táto stránka prijme: { $why }
email-not-ascii = `{ $char }` nie je znak ASCII
email-too-long = má { $length } znakov; najviac 254
email-no-at = chýba v nej `@`
email-two-ats = má viac ako jeden znak `@`
email-no-local = pred `@` nič nie je
email-local-too-long = časť pred `@` má { $length } znakov; najviac 64
email-local-char = `{ $char }` pred `@` (len písmená, číslice a .+-_)
email-local-dots = bodka na začiatku alebo na konci časti pred `@`, alebo dve bodky za sebou
email-no-domain = za `@` nič nie je
email-domain-dots = bodka na začiatku alebo na konci domény, alebo dve bodky za sebou
email-no-dot = doména `{ $domain }` nemá bodku (názov ako example.org)
email-label-too-long = časť domény má { $length } znakov; najviac 63
email-domain-char = `{ $char }` v doméne (len písmená, číslice a spojovníky)
email-hyphen = časť domény `{ $label }` začína alebo končí spojovníkom

## Názvy stránok

title-submission = Riešenie { $id }

## Odmietnutia a chyby

err-misdirected = táto stránka je { $url }
err-cross-site = zakázané: požiadavka z inej stránky
err-internal = server zlyhal pri { $doing }; organizátori to majú v zázname: skús to o chvíľu znova
err-signin-closed = prihlasovanie sa otvára { $at }
err-signins-address = na túto adresu odišlo za poslednú hodinu priveľa e-mailov na prihlásenie: použi posledný, alebo to skús neskôr
err-signins-requester = z tvojej siete sa za poslednú hodinu vyžiadalo priveľa e-mailov na prihlásenie: skús to neskôr
err-signins-site = stránka za poslednú hodinu poslala priveľa e-mailov na prihlásenie na nové adresy: skús to neskôr
err-mail = e-mail sa nepodarilo poslať: poštový server ho odmietol; skús to neskôr
err-link = tento odkaz na prihlásenie je neznámy, použitý alebo vypršal: vyžiadaj si nový
err-randomness = chýba zdroj náhodnosti
err-not-yours = nemáš riešenie s týmto číslom
err-no-log = toto riešenie (zatiaľ) nemá výpis
err-log = výpis: { $error }
err-uploads-open = nahrávanie sa otvára { $at }
err-deadline-passed = termín uplynul { $at }: po ňom sa žiadne nahratie neprijíma (nahratie platí, keď súbor dorazí celý); platí to, čo si mal(a) nahraté dovtedy
err-upload-broken = nahratie: { $error }
err-too-big = súbor má viac ako { $bytes } bajtov ({ $kib } KiB): riešenie je jeden súbor .py najviac tejto veľkosti
err-upload-slow = nahrávanie trvalo dlhšie ako { $seconds } s: pošli súbor znova cez lepšie pripojenie
err-stale-upload = formulár je starý alebo odinakiaľ: obnov stránku a nahraj súbor znova
err-stale = formulár je starý alebo odinakiaľ: obnov stránku
err-form = formulár sa nedá prečítať ({ $error }): obnov stránku
err-no-file = nevybral(a) si žiadny súbor
err-not-python = riešenie je jeden súbor Pythonu (*.py)
err-empty = súbor je prázdny
err-too-many-uploads = { $limit ->
    [one] limit je { $limit } nahratie za hodinu a ten si už využil(a): skús to neskôr
    [few] limit sú { $limit } nahratia za hodinu a tie si už využil(a): skús to neskôr
   *[other] limit je { $limit } nahratí za hodinu a tie si už využil(a): skús to neskôr
}
err-no-such-submission = také riešenie neexistuje
err-no-replay = toto riešenie (zatiaľ) nemá záznam zápasu
err-replay-private = tento záznam patrí autorovi, kým riešenie nie je v rebríčku
err-replay = záznam: { $error }
err-not-organiser = stránky organizátorov vyžadujú adresu organizátora
err-no-submission = riešenie { $id } neexistuje
err-rejudge-what = znova ohodnotiť sa dá číslo riešenia alebo všetky (all)
err-file = súbor: { $error }
err-final-early = finále sa hrá po termíne ({ $deadline }): dovtedy môžu nahratia zmeniť najlepšiu osmičku
err-final-cut = finále (beh { $run }) sa prerušilo: pokračuj od posledného celého kola (Pokračovať vo finále), alebo ho spusti znova od začiatku (Spustiť finále znova)
err-final-pending = { $pending ->
    [one] { $pending } nahratie alebo opätovné hodnotenie sa ešte hodnotí: rebríček, a teda ani finalisti, nie sú uzavretí, kým sa nedohodnotí. Tlačidlo bude fungovať, keď stránka organizátorov neukáže nič čakajúce.
    [few] { $pending } nahratia alebo opätovné hodnotenia sa ešte hodnotia: rebríček, a teda ani finalisti, nie sú uzavretí, kým sa nedohodnotia. Tlačidlo bude fungovať, keď stránka organizátorov neukáže nič čakajúce.
   *[other] { $pending } nahratí alebo opätovných hodnotení sa ešte hodnotí: rebríček, a teda ani finalisti, nie sú uzavretí, kým sa nedohodnotia. Tlačidlo bude fungovať, keď stránka organizátorov neukáže nič čakajúce.
}
err-no-cut-final = žiadne finále sa neprerušilo: niet v čom pokračovať
err-no-seats = rozsadenie tohto finále sa nezaznamenalo (spustila ho staršia verzia): spusti ho radšej znova
err-final-not-cut = finále už nie je prerušené
err-final-not-played = finále sa ešte nehralo
err-final-organiser = finále spúšťa a pozastavuje len organizátor
err-final-not-live = finále sa teraz nehrá (pozri /final)

## Čo server robil, keď zlyhal (po „server zlyhal pri“: 6. pád)

doing-signin-code = losovaní kódu na prihlásenie
doing-signin-record = zaznamenávaní prihlásenia
doing-board = čítaní rebríčka
doing-mail = posielaní e-mailu
doing-session = otváraní relácie
doing-count-uploads = počítaní nahratí
doing-store-file = ukladaní súboru
doing-record-upload = zaznamenávaní nahratia
doing-find-submission = hľadaní riešenia
doing-queue-rejudge = zaraďovaní opätovného hodnotenia
doing-read-file = čítaní súboru riešenia
doing-compare = porovnávaní súborov
doing-read-final = čítaní finále
doing-read-board = čítaní rebríčka
doing-start-final = spúšťaní finále
doing-read-final-replay = čítaní záznamu finále
doing-mark-final = označovaní finále ako bežiaceho
doing-continue-final = pokračovaní vo finále

## E-maily

mail-signin-subject = { $name }: tvoj odkaz na prihlásenie
mail-signin-body =
    Ak sa chceš prihlásiť do súťaže { $name } ako { $email }, otvor tento odkaz do { $minutes ->
        [one] { $minutes } minúty
       *[other] { $minutes } minút
    }:

    { $link }

    Ak si o prihlásenie nežiadal(a), tento e-mail ignoruj.
mail-result-subject = { $name }: tvoje riešenie { $id }
mail-result-subject-again = { $name }: tvoje riešenie { $id }, ohodnotené znova
mail-result-again = Na žiadosť organizátorov sa ohodnotilo znova; tento výsledok nahrádza ten, ktorý prišiel predtým.
mail-result-body =
    Tvoje riešenie { $file } ({ $agent }) v súťaži { $name } { $what }.

    { $again }Jeho stránka so stavom: { $link }
mail-scored = { $violations ->
    [one] získalo { $share } % mapy (rozhodujúce kolo { $tiebreak }, { $violations } porušenie)
    [few] získalo { $share } % mapy (rozhodujúce kolo { $tiebreak }, { $violations } porušenia)
   *[other] získalo { $share } % mapy (rozhodujúce kolo { $tiebreak }, { $violations } porušení)
}
mail-disqualified = bolo { $reason }
mail-check-failed = neprešlo kontrolou: { $reason }
mail-error = sa nedalo ohodnotiť: { $reason }

## Dôvody

reason-disqualified = vyradené v { $round }. kole
reason-disqualified-violation = vyradené v { $round }. kole: štvrté porušenie ({ $kind }: { $detail })
violation-timeout = prekročený čas
violation-crash = pád
violation-unreadable = nečitateľná odpoveď
reason-map = mapa rebríčka: { $detail }
reason-folder = hodnotiteľ nevie vytvoriť svoj priečinok { $detail }
reason-not-python = súbor sa nedá prečítať ako Python: { $detail }
reason-check-did-not-run = kontrola sa nedala spustiť: { $detail }
reason-match-not-played = zápas sa nedal odohrať: { $detail }
reason-superseded = nahradené riešením { $detail } skôr, než sa ohodnotilo (platí posledné nahratie)

## Verejné výsledky

export-title = Verejné výsledky
export-closed = Verejné výsledky ešte nie sú otvorené: otvoria sa po termíne ({ $opens }) alebo skôr, keď ich otvoria organizátori.
export-intro = Všetko, na čom výsledky stoja, aby si ich mohol overiť ktokoľvek: rebríček, finále a každý záznam, z ktorého pochádzajú.
export-downloads = Na stiahnutie
export-archive = ({ $bytes } bajtov): všetko nižšie v jednom archíve
export-board = rebríček (JSON obsahuje aj bleskové víťazstvá)
export-final = poradie vo finále
export-final-later = Výsledky finále pribudnú sem, keď sa finále odohrá.
export-manifest = každý záznam ({ $replays }) s jeho SHA-256 a číslami, ktoré sa z neho zverejnili
export-check-title = Ako ich overiť
export-check-how = Príkazovým riadkom gbely, v novom priečinku:
export-check-what = Overí SHA-256 každého súboru podľa manifestu, každý záznam znova odsimuluje z príkazov, ktoré agenti dali, a porovná zverejnený podiel, políčka, rozhodujúce kolo a porušenia s výsledkom záznamu: jeden riadok na záznam, potom súhrn, a návratový kód 0, len ak všetko sedí.
export-api = Pre nástroje a notebooky: /api/board vráti rebríček ako JSON; po prihlásení /api/me/submissions tvoje vlastné riešenia.
export-no-final = finále sa ešte neodohralo
export-no-file = taký súbor verejných výsledkov neexistuje (pozri /export)
export-open-since = Otvorené od { $at }, otvoril ich organizátor.
export-open-deadline = Otvorené: termín uplynul { $deadline }.
export-state-closed = Zatvorené: otvoria sa samy po termíne ({ $deadline }).
export-open-now = Otvoriť verejné výsledky hneď
export-open-note = rebríček, záznamy a ich manifest budú hneď verejné; vrátiť sa to nedá
doing-export-state = zisťovaní, či sú výsledky otvorené
doing-export = zostavovaní verejných výsledkov
doing-export-open = otváraní verejných výsledkov

## Hodnotitelia cez HTTP (/org, Hodnotitelia)
workers-title = Hodnotitelia
workers-intro = Hodnotitelia na iných strojoch: `gbely arena worker --server URL` s tokenom vydaným tu hodnotí cez HTTP a nepotrebuje ani databázu, ani dátový priečinok. Odvolaný token je odmietnutý hneď a úlohy, ktoré jeho hodnotiteľ držal, sa vrátia do frontu.
workers-none = Zatiaľ nebol vydaný žiadny token hodnotiteľa.
workers-col-name = Hodnotiteľ
workers-col-issued = Vydaný
workers-col-seen = Posledná požiadavka
workers-col-judged = Dokončené úlohy
workers-col-state = Token
workers-revoked = odvolaný { $at }
workers-revoke = Odvolať
workers-name = Meno nového hodnotiteľa
workers-issue = Vydať token hodnotiteľa
workers-issued-title = Token hodnotiteľa { $name }
workers-issued-once = Zobrazuje sa iba teraz: server si uchováva len jeho odtlačok. Skopíruj ho hneď na stroj hodnotiteľa.
workers-issued-how = Spusti s ním hodnotiteľa (token v prostredí, nikdy nie na príkazovom riadku):
workers-back = Späť na stránku organizátorov
workers-err-name = Daj hodnotiteľovi meno (zobrazí sa na stránke organizátorov).
workers-err-none = Platný token hodnotiteľa { $id } neexistuje (nikdy nebol vydaný alebo už bol odvolaný).
doing-worker-token = ukladaní tokenu hodnotiteľa
doing-worker-revoke = odvolávaní tokenu hodnotiteľa
workers-col-speed = Rýchlosť
workers-speed = { $share }-násobok rýchlosti servera
workers-slow = { $share }-násobok rýchlosti servera: príliš pomalý, nedostáva úlohy
workers-speed-figures = simulácia { $engine } ms, Python { $python } ms ({ $at })
workers-rejudge-timeouts = Znova ohodnotiť { $count ->
    [one] jeho diskvalifikáciu
    [few] jeho { $count } diskvalifikácie
   *[other] jeho { $count } diskvalifikácií
} pre prekročený časový limit

## Záznam úkonov (/org): čo organizátor urobil a podrobnosti
audit-rejudge = opätovné hodnotenie
audit-rejudge-one = riešenie { $submission }
audit-rejudge-all = všetky aktuálne riešenia ({ $count })
audit-download = stiahnutie
audit-download-detail = súbor riešenia { $submission } ({ $email })
audit-compare = porovnanie
audit-compare-detail = súbory riešení { $first } ({ $first_email }) a { $second } ({ $second_email })
audit-run-final = spustenie finále
audit-final = finále { $run }
audit-set-aside-final = odloženie finále
audit-set-aside-detail = finále { $run }, prerušené, spustené znova od začiatku
audit-resume-final = pokračovanie finále
audit-resume-detail = finále { $run } od { $round }. kola
audit-open-results = zverejnenie výsledkov
audit-open-results-detail = pred uzávierkou, ručne
audit-issue-worker = vydanie tokenu hodnotiteľa
audit-revoke-worker = odvolanie tokenu hodnotiteľa
audit-worker = hodnotiteľ { $worker }
audit-rejudge-timeouts = opätovné hodnotenie vyradení hodnotiteľa pre prekročený čas
audit-rejudge-timeouts-detail = hodnotiteľ { $worker }: riešenia { $submissions }

## Hlásenie kontroly (/me): každý riadok `gbely check` z jeho kódu a hodnôt
check-not-python-file = { $file } nie je súbor .py: riešenie je jeden súbor Pythonu
check-too-big = súbor má { $bytes } { $bytes ->
    [one] bajt
    [few] bajty
   *[other] bajtov
}; limit je { $limit } (512 KiB)
check-size = veľkosť { $bytes } { $bytes ->
    [one] bajt
    [few] bajty
   *[other] bajtov
} z povolených { $limit }
check-does-not-parse = súbor sa nedá rozobrať: { $error }
check-name = meno { $name } (AGENT_NAME / AGENT_VERSION)
check-game-version = { $file } uvádza GAME_VERSION = { $version }, ale tento engine hrá podľa pravidiel verzie { $engine }
check-no-decide = súbor nedefinuje na najvyššej úrovni funkciu decide(stav)
check-other-branch = v inej vetve: { $kind ->
    [async] decide (riadok { $line }) je asynchrónna funkcia: volá sa decide(stav) a treba príkazy, nie korutinu
    [class] decide (riadok { $line }) je trieda, nie funkcia decide(stav)
    [value] decide (riadok { $line }) má priradenú hodnotu ({ $type }), nie funkciu: definuj def decide(stav): na najvyššej úrovni
   *[other] decide nie je vôbec definovaná
}
check-decide-not-a-function = { $kind ->
    [async] decide (riadok { $line }) je asynchrónna funkcia: volá sa decide(stav) a treba príkazy, nie korutinu
    [class] decide (riadok { $line }) je trieda, nie funkcia decide(stav)
   *[other] decide (riadok { $line }) má priradenú hodnotu ({ $type }), nie funkciu: definuj def decide(stav): na najvyššej úrovni
}
check-decide-assigned = decide (riadok { $line }) má priradený výsledok výrazu: kontrola nevie overiť, že je to funkcia
check-foreign-imports = importy mimo štandardnej knižnice (hodnotiteľ ich mať nebude): { $modules }
check-optional-imports = voliteľné importy mimo štandardnej knižnice, chránené try/except ImportError: { $modules } (hodnotiteľ ich mať nebude: pobeží tvoja náhrada)
check-cannot-at-judge = { $imports ->
    [yes] importuje
   *[no] volá
} { $name } ({ $count ->
    [one] riadok
   *[other] riadky
} { $lines }{ $more ->
    [0] {""}
   *[other] {" "}a ďalších { $more }
}): { $network ->
    [yes] hodnotiteľ nemá sieť
   *[no] hodnotiteľ nedovolí ďalšie procesy
}
check-dropped-lines = { $count ->
    [one] { $count } riadok vypísaný po odpovedi v kole sa zahodil
    [few] { $count } riadky vypísané po odpovedi v kole sa zahodili
   *[other] { $count } riadkov vypísaných po odpovedi v kole sa zahodilo
}: odpoveďou je prvý riadok po pozorovaní, jeden za kolo (vypisuj na stderr, nie na stdout)
check-violation = porušenie v { $round }. kole: { $kind } — { $detail }
check-disqualified = skúšobný zápas agenta vyradil v { $round }. kole (jeho štvrté porušenie): zápas u hodnotiteľa by sa skončil rovnako
check-violations = { $count ->
    [one] { $count } porušenie
    [few] { $count } porušenia
   *[other] { $count } porušení
} v skúšobnom zápase: zápas znesie tri, štvrté vyraďuje (pravidlá §8)
check-test-match = skúšobný zápas: { $rounds } { $rounds ->
    [one] kolo
    [few] kolá
   *[other] kôl
} proti Zastupiteľstvu na referenčnej mape; na konci { $cells } { $cells ->
    [one] políčko
    [few] políčka
   *[other] políčok
}; { $discarded ->
    [0] žiadny príkaz sa nezahodil
    [one] { $discarded } zahodený príkaz: { $discards }
    [few] { $discarded } zahodené príkazy: { $discards }
   *[other] { $discarded } zahodených príkazov: { $discards }
}
check-sandboxed = skúšobný zápas v izolácii hodnotiteľa: bez siete a bez iných súborov než vlastných
check-not-sandboxed = skúšobný zápas bežal bez izolácie hodnotiteľa: { $why }
# Dôvod zahodenia príkazu (jeho kód ako v záznamoch) v riadku skúšobného zápasu.
discard-not_an_object = nie je objekt JSON
discard-unknown_type = neznámy typ príkazu (nie MOVE, ATTACK ani FORTIFY)
discard-missing_field = chýba povinné pole
discard-wrong_field_type = pole má zlý typ JSON
discard-unknown_cell = číslo políčka nie je na mape
discard-invalid_amount = počet nie je konečné číslo > 0
discard-source_not_owned = zdrojové políčko nie je tvoje
discard-target_not_owned = cieľ presunu (MOVE) nie je tvoj
discard-not_adjacent = cieľ nie je susedný
discard-target_own_cell = útok (ATTACK) na vlastné políčko
discard-target_finalist = útok (ATTACK) na iného finalistu
discard-no_ready_units = málo pripravených jednotiek (0 pripravených)
