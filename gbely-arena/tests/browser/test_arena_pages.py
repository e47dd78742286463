"""The arena's pages as a participant and an organiser read them (issue 45, item 7): on a phone
(390 px) no page scrolls sideways; each page passes axe-core's accessibility check (no serious or
critical violation, axe-core run in Chromium by axe-playwright-python); sign-in and upload work
from the keyboard alone; a refusal keeps a way back; the leaderboard shows the author's
AGENT_VERSION and keeps names and shares on one line at 1366 px; a failed check lists its
problems once, with a link to the log that holds the traceback; the organisers' page links no
replay that is not there; the e-mails read as sentences and a re-judging's says what it is."""

from __future__ import annotations

import re
import urllib.request

from axe_playwright_python.sync_playwright import Axe

from arena_kit import AFTER_DEADLINE, Arena, agent_file, body_of, good_agent, sign_in

# Fails at import with a traceback of its own: the check refuses it (the agent cannot start).
FAILS_AT_IMPORT = '''AGENT_NAME = "fails at import"

def helper():
    raise RuntimeError("boom at import: the table is missing")

helper()

def decide(stav):
    return {"prikazy": []}
'''

# Passes the check (5 rounds), then answers nonsense from round 10 on: disqualified in round 13.
LATE_NONSENSE = '''AGENT_NAME = "late nonsense"

def decide(stav):
    if stav["kolo"] >= 10:
        return "nonsense"
    return {"prikazy": []}
'''

AXE = Axe()


def serious_violations(page) -> list[str]:
    """axe-core's violations of the serious and critical levels on the page as it is now."""
    results = AXE.run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def page_width(page) -> int:
    return page.evaluate("() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")


def check_phone_page(page, url: str | None = None):
    """The page (at `url`, or as it is) fits 390 px and passes the accessibility check."""
    if url:
        page.goto(url)
    page.wait_for_load_state()
    assert page_width(page) <= 390, (page.url, page_width(page))
    assert serious_violations(page) == [], page.url


def upload_by_keyboard(page, path) -> int:
    """Chooses the file and presses the upload button from the keyboard alone (Tab to the file
    field, the chooser answered, Tab to the button, Enter); the submission's number."""
    page.goto(page.url.split("/me")[0] + "/me")
    page.locator("body").focus()
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.type === 'file'"):
            break
    else:
        raise AssertionError("no file field reachable with Tab")
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")
    chooser.value.set_files(str(path))
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement?.textContent") == "Upload"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/me/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def wait_state(page, state: str, timeout: float = 120_000):
    page.wait_for_function("s => document.getElementById('state')?.textContent === s", arg=state, timeout=timeout)


def test_a_participant_and_an_organiser_read_every_page_on_a_phone(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=16).start()
    try:
        phone, desk, org = pages(390, 844, 3), pages(1366, 768), pages(390, 844, 3)
        for path in ["/", "/signin", "/board", "/final"]:
            check_phone_page(phone.page, arena.url + path)

        # Sign-in from the keyboard: Tab to the address, type it, Enter sends the link.
        phone.page.goto(arena.url + "/signin")
        phone.page.locator("body").focus()
        for _ in range(20):
            phone.page.keyboard.press("Tab")
            if phone.page.evaluate("() => document.activeElement?.name === 'email'"):
                break
        phone.page.keyboard.type("ana@mail.example")
        phone.page.keyboard.press("Enter")
        phone.page.wait_for_selector("#sent")
        check_phone_page(phone.page)
        link = re.search(r"http://\S+/signin/[0-9a-f]{32}", body_of(sink.wait_for("ana@mail.example", "sign-in link"))).group(0)
        check_phone_page(phone.page, link)
        phone.page.locator("#confirm").focus()
        phone.page.keyboard.press("Enter")
        phone.page.wait_for_url(re.compile(r"/me$"))

        # /me says the phase once.
        text = phone.page.locator("main").inner_text()
        assert text.count("upload until") == 1, text
        check_phone_page(phone.page)

        # An agent that names its version: the board shows it in the version column.
        versioned = good_agent("Ana's expander").replace("import math\n", "import math\nAGENT_VERSION = \"7b\"\n", 1)
        good_id = upload_by_keyboard(phone.page, agent_file(tmp_path, "ana.py", versioned))
        wait_state(phone.page, "scored")
        check_phone_page(phone.page)
        mail = body_of(sink.wait_for("ana@mail.example", f"submission {good_id}"))
        assert re.search(r"Ana's expander 7b\) to Gbely test cup scored \d+\.\d\d % of the map", mail), mail

        # A check that fails lists its problem once, and links the log with the traceback.
        failed_id = upload_by_keyboard(phone.page, agent_file(tmp_path, "crash.py", FAILS_AT_IMPORT))
        wait_state(phone.page, "check failed")
        main = phone.page.locator("main").inner_text()
        problems = phone.page.locator("#problems li").all_inner_texts()
        assert problems and all("boom at import" in p for p in problems), problems
        assert all(main.count(p) == 1 for p in problems), main
        log_link = phone.page.locator(f"a[href='/me/{failed_id}/log']")
        assert log_link.count() == 1
        check_phone_page(phone.page)
        log = phone.context.request.get(f"{arena.url}/me/{failed_id}/log")
        assert log.status == 200 and "RuntimeError: boom at import: the table is missing" in log.text(), log.text()
        mail = body_of(sink.wait_for("ana@mail.example", f"submission {failed_id}"))
        assert "to Gbely test cup failed the check: " in mail, mail

        # Disqualified: the e-mail says so in a sentence.
        late_id = upload_by_keyboard(phone.page, agent_file(tmp_path, "late.py", LATE_NONSENSE))
        wait_state(phone.page, "disqualified")
        mail = body_of(sink.wait_for("ana@mail.example", f"submission {late_id}"))
        assert "(late nonsense) to Gbely test cup was disqualified in round 13: the fourth violation" in mail, mail

        # A refusal (no file chosen): the reason, and the form to try again on the same page.
        csrf = phone.page.locator("input[name=csrf]").first.input_value()
        r = phone.context.request.post(arena.url + "/upload", multipart={"csrf": csrf})
        assert r.status == 400
        phone.page.set_content(r.text())
        assert phone.page.locator("[role=alert]").inner_text().endswith("no file was chosen")
        assert phone.page.locator("a[href='/me']").count() >= 1

        # Back to the good one: the board shows its name, its version and its share.
        good_again = upload_by_keyboard(phone.page, agent_file(tmp_path, "ana2.py", versioned))
        wait_state(phone.page, "scored")
        desk.open(arena.url + "/board")
        desk.page.wait_for_function("() => document.querySelectorAll('#board td.agent').length === 1")
        cells = [c.inner_text() for c in desk.page.locator("#board tr").nth(1).locator("td").all()]
        assert cells[1] == "Ana's expander" and cells[2] == "7b", cells
        # At 1366 px no cell of the board breaks its line.
        wrapped = desk.page.evaluate("""() => [...document.querySelectorAll('#board td, #board th, #flash td, #flash th')]
            .filter(c => c.textContent.trim() && c.getClientRects().length &&
                    c.getBoundingClientRect().height > 1.8 * parseFloat(getComputedStyle(c).lineHeight))
            .map(c => c.textContent)""")
        assert wrapped == [], wrapped
        check_phone_page(phone.page, arena.url + "/board")
        check_phone_page(phone.page, arena.url + "/me")

        # The organiser: /org fits the phone, and links a replay only where there is one.
        arena.set_clock(AFTER_DEADLINE)
        sign_in(org.page, arena, sink, "org@mail.example")
        org.page.wait_for_selector("#submissions")
        check_phone_page(org.page)
        # The public results, open after the deadline.
        check_phone_page(phone.page, arena.url + "/export")
        replays = {int(h.rsplit("/", 1)[1]) for h in
                   org.page.locator("#submissions a[href^='/replay/']").evaluate_all("l => l.map(a => a.getAttribute('href'))")}
        assert replays == {good_id, late_id, good_again}, replays
        for sub in replays:
            assert org.context.request.get(f"{arena.url}/replay/{sub}").status == 200, sub

        # A re-judging's e-mail says it is one.
        org.page.locator(f"#submissions form:has(input[name=what][value='{good_again}']) button").click()
        mail = sink.wait_for("ana@mail.example", f"submission {good_again}", count=2)
        assert "judged again" in str(mail["Subject"]), mail["Subject"]
        assert "judged again at the organisers' request" in body_of(mail), body_of(mail)
        phone.close(), desk.close(), org.close()
    finally:
        arena.stop()


def test_the_server_says_at_start_that_its_clock_is_set_by_gbely_arena_clock(sink, tmp_path):
    arena = Arena(tmp_path, sink).start()
    try:
        with urllib.request.urlopen(arena.url + "/health", timeout=5) as r:
            assert r.read() == b"ok"
    finally:
        arena.stop()
    log = next(tmp_path.glob("server-*.log")).read_text()
    assert f"the clock is read from $GBELY_ARENA_CLOCK ({arena.clock})" in log, log
    assert "it is 2026-11-01 11:00:00 CET for this server" in log, log
