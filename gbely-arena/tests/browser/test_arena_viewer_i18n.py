"""The replay viewer and the live final in Slovak (issue 45, item 1): a browser that asks for
Slovak (Chromium with locale sk-SK) opens a leaderboard match's replay and the final's live page
and reads them in Slovak — `<html lang=sk>`, the page's Slovak texts, and none of the viewer's
English texts (the engine's `TEXTS`, which the English page carries) among what it shows: its
visible text, with the key help open and a cell's tip, and its titles, labels and placeholders.
A key the Slovak catalogue lacks shows its English and fails this test; the catalogue's own
checks (a message for every key, the same placeholders) are unit tests in
gbely-arena/src/i18n.rs."""

from __future__ import annotations

import json
import re

from arena_kit import AFTER_DEADLINE, Arena, agent_file, good_agent, run_final, sign_in
from browser_fixtures import Page
from test_arena_pages import page_width, serious_violations

# What a viewer's page shows: its visible text (the key help's addresses and protocol words in
# <code> left out: they are the same in every language) and its elements' titles, labels and
# placeholders.
SHOWN = """() => {
    const code = [...document.querySelectorAll('code')];
    code.forEach((c) => { c.dataset.was = c.style.display; c.style.display = 'none'; });
    const text = document.body.innerText;
    code.forEach((c) => { c.style.display = c.dataset.was; });
    const attrs = [...document.querySelectorAll('[title], [aria-label], [placeholder]')]
        .flatMap((e) => ['title', 'aria-label', 'placeholder'].map((a) => e.getAttribute(a)).filter(Boolean));
    return text + '\\n' + attrs.join('\\n');
}"""

TABLE = "() => JSON.parse(document.getElementById('gbely-text').textContent)"


def english_pieces(english: dict, slovak: dict) -> list[str]:
    """The English texts' fixed pieces (between their `{placeholders}`, markup taken out) of the
    keys whose Slovak differs, each a few letters at least: none may be seen on a Slovak page."""
    pieces = set()
    for key, en in english.items():
        if slovak.get(key) == en:
            continue
        plain = re.sub(r"<[^>]+>", "", en).replace("&amp;", "&")
        for piece in re.split(r"\{\w+\}", plain):
            piece = piece.strip(" :;,·—()\n")
            if len(re.sub(r"[^A-Za-z]", "", piece)) >= 3:
                pieces.add(piece)
    return sorted(pieces)


def english_left(text: str, pieces: list[str]) -> list[str]:
    # In any case: the panels' headings are shown in capitals (CSS), and so is the pause mark.
    return [p for p in pieces if re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", text, re.IGNORECASE)]


def read_in_slovak(page, pieces: list[str], *expected: str) -> str:
    assert page.evaluate("() => document.documentElement.lang") == "sk"
    text = page.evaluate(SHOWN)
    for e in expected:
        assert e.lower() in text.lower(), (e, text)
    # The fork's command line (`gbely play my_agent.py --from … --round N`), the seats' names (the
    # final's empty seats are the arena's "template (seat 3)") and the map's name (the status
    # line's first part: "final:test-final") are the same in every language.
    shown = re.sub(r"gbely play [^\n]*", "", text)
    names = page.evaluate("""() => [...document.getElementById('title').title.split(' vs '),
                                     document.getElementById('status').textContent.split(' · ')[0]]""")
    for name in names:
        shown = re.sub(re.escape(name), "", shown, flags=re.IGNORECASE)
    left = english_left(shown, pieces)
    assert left == [], [line for line in shown.splitlines() if english_left(line, left)] + [names]
    return text


def fits_a_phone(page, where: str):
    """The Slovak page as it is now fits 390 px and has no serious or critical accessibility
    violation."""
    assert page.evaluate("() => document.documentElement.lang") == "sk", where
    assert page_width(page) <= 390, (where, page_width(page))
    violations = serious_violations(page)
    assert violations == [], (where, "\n".join(violations))


def test_a_slovak_browser_reads_the_replay_and_the_live_final_in_slovak(sink, browser, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=16, rate=5.0, final_rounds=10, language="en").start()
    sk = browser.new_context(viewport={"width": 1366, "height": 768}, locale="sk-SK")
    errors: list[str] = []
    ana, org = pages(1366, 768), pages(1366, 768)
    try:
        sign_in(ana.page, arena, sink, "ana@mail.example")
        ana.page.set_input_files("#upload input[type=file]", str(agent_file(tmp_path, "mravec.py", good_agent("Mravec"))))
        ana.page.click("#upload button")
        ana.page.wait_for_url(re.compile(r"/me/\d+$"))
        sub = int(ana.page.url.rsplit("/", 1)[1])
        ana.page.wait_for_function("() => document.getElementById('state')?.textContent === 'scored'", timeout=180_000)

        # The English page's texts are the engine's defaults.
        en = Page(browser, 1366, 768).open(f"{arena.url}/replay/{sub}").wait_ready()
        assert en.page.evaluate("() => document.documentElement.lang") == "en"
        english = en.page.evaluate(TABLE)
        assert english["round-n"] == "round {r}" and english["start-match"] == "start the match"
        assert "round" in en.page.evaluate(SHOWN)
        en.close()

        # The replay in Slovak: at its end (the result, the events), in the middle, a cell's tip,
        # the key help.
        page = sk.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{arena.url}/replay/{sub}")
        page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=30_000)
        slovak = page.evaluate(TABLE)
        assert slovak["round-n"] == "kolo {r}" and slovak["n-commands.few"] == "{n} príkazy"
        # Every English key, and the plural forms Slovak has besides (few, many).
        assert set(english) <= set(slovak) and "n-commands.many" in slovak
        pieces = english_pieces(english, slovak)
        assert "round" in pieces and "start the match" in pieces, pieces
        read_in_slovak(page, pieces, "Poradie", "Podiel mapy", "Kľúčové momenty", "Udalosti kola")
        page.keyboard.press("End")
        page.wait_for_function("() => !document.getElementById('resultbox').hidden")
        text = read_in_slovak(page, pieces, "Výsledok", "vyhráva")
        # Shares with the Slovak decimal mark, as the arena's pages write them.
        assert re.search(r"\d+,\d\d %", text) and not re.search(r"\d+\.\d\d %", text), text
        page.evaluate("window.gbely.show(6)")
        box = page.locator("#map").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
        page.wait_for_function("() => !document.getElementById('tip').hidden")
        read_in_slovak(page, pieces, "kolo 5 / ", "vlastník")
        page.keyboard.press("?")
        read_in_slovak(page, pieces, "Klávesy", "Značky na mape", "táto nápoveda")
        page.keyboard.press("Escape")
        # The projection layout (its board and its feed of key moments).
        page.keyboard.press("p")
        read_in_slovak(page, pieces, "stôl")

        # On a phone (390 px): no sideways scrolling, and no serious or critical accessibility
        # violation, at the start and at the end.
        phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3, locale="sk-SK",
                                    has_touch=True, is_mobile=True)
        small = phone.new_page()
        small.goto(f"{arena.url}/replay/{sub}")
        small.wait_for_function("() => document.body.dataset.ready === '1'", timeout=30_000)
        for where in ["Home", "End"]:
            small.keyboard.press(where)
            fits_a_phone(small, where)

        # The live final: the organiser starts it; a Slovak viewer watches it from the start card
        # to the podium.
        arena.set_clock(AFTER_DEADLINE)
        sign_in(org.page, arena, sink, "org@mail.example")
        run_final(org.page)
        hall = sk.new_page()
        hall.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        hall.on("pageerror", lambda e: errors.append(str(e)))
        hall.goto(arena.url + "/final/live/")
        hall.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=30_000)
        read_in_slovak(hall, pieces, "zápas spustia organizátori zo svojej obrazovky", "Zastupiteľstvo")
        assert hall.evaluate(TABLE) == slovak
        small.goto(arena.url + "/final/live/")
        small.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=30_000)
        fits_a_phone(small, "the live final's start card")
        phone.close()
        org.page.keyboard.press("s")
        hall.wait_for_function("() => window.gbely.arrivals().length >= 3", timeout=60_000)
        read_in_slovak(hall, pieces, "naživo")
        hall.wait_for_function("() => window.gbely.endedAt() !== null", timeout=120_000)
        hall.wait_for_function("() => /koniec/.test(document.getElementById('status').textContent)", timeout=60_000)
        hall.keyboard.press("p")
        read_in_slovak(hall, pieces, "Výsledok", "koniec")
        # The English page is unchanged by the Slovak: the organiser's (an English browser's) page.
        assert org.page.evaluate("() => document.documentElement.lang") == "en"
        assert json.dumps(org.page.evaluate(TABLE), sort_keys=True) == json.dumps(english, sort_keys=True)
    finally:
        # Off the site before it stops: a page's event stream cut by the stop is a console error.
        for p in (ana, org):
            p.page.goto("about:blank")
        sk.close()
        arena.stop()
    assert errors == [], errors
