"""The arena in Slovak and English (issue 45, item 1): a participant whose browser asks for
Slovak (Chromium with locale sk-SK, which sends Accept-Language) walks the whole path on a phone
(390 px) — the competition's page, the rules, sign-in with its e-mail, their page, an upload, its
status until scored with its e-mail, the leaderboard, a refused upload, the final, a
disqualification's reason and e-mail — and reads
every page in Slovak (`<html lang=sk>`, Slovak texts, dates as Slovak writes them, no English
word of the site's own left), with no sideways scrolling and no serious or critical
accessibility violation; the header's switch turns the site English. A browser that asks for
English gets English. The catalogues' own check (every message in both languages) is the unit
test in gbely-arena/src/i18n.rs."""

from __future__ import annotations

import re
import urllib.request


from arena_kit import LATE_NONSENSE, Arena, agent_file, body_of, good_agent
from test_arena_pages import page_width, serious_violations

# Words of the site's English texts; none may be left on a Slovak page, the check's report
# included (its lines are said from their codes; only a violation's detail is the engine's).
ENGLISH = ["Sign in", "sign in", "sign out", "leaderboard", "Leaderboard", "submission", "Submission", "Upload",
           "upload", "share", "violations", "round", "Council", "Deadline", "Phases", "Your", "your", "The final",
           "replay", "bytes", "queued", "scored", "Check", "e-mail address", "rules", "Not done", "Times in",
           "uploaded", "state", "file", "agent's log", "Flash victory", "Nobody", "being judged"]

# A Slovak date and time: 15. 11. 2026 23:59.
SK_DATE = re.compile(r"\b\d{1,2}\. \d{1,2}\. \d{4} \d{2}:\d{2}\b")

RULES = """# Pravidlá súťaže Gbely

Hrá sa **150 kôl**; vyhráva najväčší *podiel* mapy.

<script>window.ruleScript = 1</script>

* [rebríček](/board)
* [zlý odkaz](javascript:alert(1))
"""


class Phone:
    """A page at 390 × 844 in a browser that asks for `locale`'s language."""

    def __init__(self, browser, locale: str):
        self.context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3, locale=locale)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def close(self):
        self.context.close()
        # The refusals the test asks for (400, 404) are documents the console reports as failed.
        errors = [e for e in self.errors if not re.fullmatch(r"Failed to load resource: .* status of 40[04] .*", e)]
        assert not errors, errors


def visible_text(page) -> str:
    """What the page shows."""
    return page.evaluate("""() => document.body.innerText.replaceAll('\\u00ad', '')""")  # soft hyphens


def read_page(page, lang: str, *expected: str, url: str | None = None):
    """The page (at `url`, or as it is) is in `lang`, shows each of `expected`, fits 390 px and
    passes the accessibility check; a Slovak page has no English word of the site's."""
    if url:
        page.goto(url)
    page.wait_for_load_state()
    assert page.evaluate("() => document.documentElement.lang") == lang, page.url
    text = visible_text(page)
    for e in expected:
        assert e in text, (page.url, e, text)
    if lang == "sk":
        left = [w for w in ENGLISH if re.search(rf"\b{re.escape(w)}\b", text)]
        assert left == [], (page.url, left, text)
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(n => n.getBoundingClientRect().right > 391).map(n => n.tagName + '.' + n.className + ' ' + n.textContent.slice(0, 40))""")
    assert page_width(page) <= 390, (page.url, page_width(page), wide[:8])
    assert serious_violations(page) == [], page.url
    return text


def test_a_slovak_participant_walks_the_whole_path_in_slovak_and_switches_to_english(sink, browser, tmp_path):
    (tmp_path / "rules.md").write_text(RULES)
    arena = Arena(tmp_path, sink, rounds=16, language="en", rules="rules.md").start()
    sk = Phone(browser, "sk-SK")
    try:
        page = sk.page
        text = read_page(page, "sk", "Prihlás sa svojou e-mailovou adresou", "Termín (posledné nahratie)", "pravidlá",
                         url=arena.url + "/")
        assert SK_DATE.search(text), text

        # The rules: the organisers' Markdown, its raw HTML shown as text, a javascript: link dead.
        read_page(page, "sk", "Pravidlá súťaže Gbely", "150 kôl", url=arena.url + "/rules")
        assert page.locator("#rules strong").inner_text() == "150 kôl"
        assert page.locator("#rules script").count() == 0 and page.evaluate("() => window.ruleScript") is None
        assert "<script>" in page.locator("#rules").inner_text()
        assert page.locator("#rules a", has_text="zlý odkaz").get_attribute("href") == "#"

        # Sign-in, and its e-mail in Slovak.
        read_page(page, "sk", "Prihlásenie", "E-mailová adresa", url=arena.url + "/signin")
        page.fill("input[name=email]", "ana@mail.example")
        page.click("form[action='/signin'] button")
        page.wait_for_selector("#sent")
        read_page(page, "sk", "Pozri si e-mail", "Otvor ho v tomto prehliadači.")
        mail = sink.wait_for("ana@mail.example", "odkaz na prihlásenie")
        assert "Ak sa chceš prihlásiť do súťaže Gbely test cup" in body_of(mail), body_of(mail)
        assert re.search(r"do \d+ minú(t|ty):", body_of(mail)), body_of(mail)
        link = re.search(r"http://\S+/signin/[0-9a-f]{32}", body_of(mail)).group(0)
        read_page(page, "sk", "Prihlásiť sa ako", url=link)
        page.click("#confirm")
        page.wait_for_url(re.compile(r"/me$"))
        read_page(page, "sk", "Tvoje riešenie", "Zatiaľ si nič nenahral(a).", "Testovanie: nahrávaj do")

        # A refused upload: the reason in Slovak, the form again, a way back.
        page.set_input_files("input[type=file]", str(agent_file(tmp_path, "mravec.txt", "print(1)\n")))
        page.click("#upload button")
        read_page(page, "sk", "Nevykonané", "riešenie je jeden súbor Pythonu (*.py)", "Späť na tvoje riešenie")
        assert page.locator("#upload").count() == 1

        # An upload, its status page until scored, and the result's e-mail in Slovak.
        page.goto(arena.url + "/me")
        page.set_input_files("input[type=file]", str(agent_file(tmp_path, "mravec.py", good_agent("Mravec"))))
        page.click("#upload button")
        page.wait_for_url(re.compile(r"/me/\d+$"))
        sub = int(page.url.rsplit("/", 1)[1])
        page.wait_for_function("() => document.getElementById('state')?.textContent === 'ohodnotené'", timeout=180_000)
        text = read_page(page, "sk", f"Riešenie {sub}:", "Ohodnotený zápas", "rozhodujúce kolo", "porušenia",
                         "záznam zápasu", "bajtov", "skúšobný zápas: 5 kôl proti Zastupiteľstvu", "meno Mravec")
        assert SK_DATE.search(text), text
        assert re.search(r"\d+,\d\d %", text), text
        mail = sink.wait_for("ana@mail.example", f"tvoje riešenie {sub}")
        assert "Tvoje riešenie mravec.py (Mravec) v súťaži Gbely test cup získalo" in body_of(mail), body_of(mail)
        assert re.search(r"\d+ porušen(ie|ia|í)\)", body_of(mail)), body_of(mail)

        read_page(page, "sk", "Rebríček", "Blesková výhra", "Mravec", url=arena.url + "/board")
        read_page(page, "sk", "Finále", "Finále bude", url=arena.url + "/final")
        read_page(page, "sk", "Nevykonané", "nemáš riešenie s týmto číslom", url=arena.url + "/me/999999")

        # A disqualification: its reason and its e-mail in Slovak, the violation's kind too (its
        # own detail is the engine's words).
        page.goto(arena.url + "/me")
        page.set_input_files("input[type=file]", str(agent_file(tmp_path, "zly.py", LATE_NONSENSE)))
        page.click("#upload button")
        page.wait_for_url(re.compile(r"/me/\d+$"))
        bad = int(page.url.rsplit("/", 1)[1])
        page.wait_for_function("() => document.getElementById('state')?.textContent === 'diskvalifikované'",
                               timeout=180_000)
        assert page.locator("#reason").inner_text().startswith("vyradené v 13. kole: štvrté porušenie (nečitateľná odpoveď: "), \
            page.locator("#reason").inner_text()
        mail = body_of(sink.wait_for("ana@mail.example", f"tvoje riešenie {bad}"))
        assert "(late nonsense) v súťaži Gbely test cup bolo vyradené v 13. kole: štvrté porušenie (nečitateľná odpoveď: " in mail, mail

        # The organisers' page in Slovak: the seating's regions and the audit log (what was done,
        # and its detail) too.
        org = Phone(browser, "sk-SK")
        try:
            org.page.goto(arena.url + "/signin")
            org.page.fill("input[name=email]", "org@mail.example")
            org.page.click("form[action='/signin'] button")
            org.page.wait_for_selector("#sent")
            link = re.search(r"http://\S+/signin/[0-9a-f]{32}",
                             body_of(sink.wait_for("org@mail.example", "odkaz na prihlásenie"))).group(0)
            org.page.goto(link)
            org.page.click("#confirm")
            org.page.wait_for_load_state()
            with org.page.expect_download():
                org.page.evaluate(f"() => {{ const a = document.createElement('a'); a.href = '/org/file/{bad}'; "
                                  "a.download = ''; document.body.appendChild(a); a.click(); }")
            text = read_page(org.page, "sk", "stiahnutie", f"súbor riešenia {bad} (ana@mail.example)", "roh", "okraj",
                             url=arena.url + "/org")
            assert org.page.locator("#audit tr").nth(1).inner_text().split("\t")[2:] == [
                "stiahnutie", f"súbor riešenia {bad} (ana@mail.example)"], text
        finally:
            org.close()

        # The header's switch: the same page in English, and the choice kept.
        page.goto(arena.url + "/board")
        page.click("header a[hreflang=en]")
        page.wait_for_url(re.compile(r"/board$"))
        read_page(page, "en", "Leaderboard", "Flash victory", "your submission")
        read_page(page, "en", "Your submission", "Submission", "The judged match", url=arena.url + "/me")
        page.click("header a[hreflang=sk]")
        page.wait_for_url(re.compile(r"/me$"))
        read_page(page, "sk", "Tvoje riešenie")
    finally:
        sk.close()
        arena.stop()


def test_an_english_browser_reads_english_and_the_switch_is_safe(sink, browser, tmp_path):
    arena = Arena(tmp_path, sink, language="sk").start()
    en = Phone(browser, "en-GB")
    try:
        page = en.page
        text = read_page(page, "en", "Sign in with your e-mail address", "Deadline (last upload)", url=arena.url + "/")
        assert re.search(r"\b\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}\b", text), text
        # No rules file configured: no link, and /rules says so.
        assert page.locator("header a[href='/rules']").count() == 0
        r = page.goto(arena.url + "/rules")
        assert r.status == 404 and "This competition has no rules page" in visible_text(page)
        # The switch goes back only to a path of this site.
        for back in ["//evil.example/x", "https://evil.example/", "/\\evil.example"]:
            r = page.context.request.get(arena.url + "/lang", params={"to": "sk", "back": back}, max_redirects=0)
            assert r.status == 303 and r.headers["location"] == "/", (back, r.headers)
        # Without a choice nor Accept-Language: the configuration's language.
        with urllib.request.urlopen(arena.url + "/", timeout=10) as r:
            home = r.read().decode()
        assert '<html lang="sk">' in home and "Prihlás sa" in home, home
    finally:
        en.close()
        arena.stop()
