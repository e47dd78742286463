"""The competition server (`gbely arena`) played through in Chromium, once on SQLite and once on
PostgreSQL: two participants sign in through e-mails caught by an SMTP sink, upload agents (one
good, one that fails the check, one that the judge disqualifies), see their status pages and the
leaderboard update by itself; the deadline passes on a clock the test sets and uploads are
refused; the organiser runs the final of the top entries, the projection page shows it, and the
results are published."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from arena_kit import (AFTER_DEADLINE, AT_DEADLINE, LATE_NONSENSE, SYNTAX_ERROR, THREE_UNREADABLE, Arena, Postgres,
                       agent_file, body_of, good_agent, run_final, sign_in)


def upload(page, path) -> int:
    """Uploads a file from /me; the submission's number (the status page it lands on)."""
    page.goto(page.url.split("/me")[0] + "/me")
    page.set_input_files("#upload input[type=file]", str(path))
    page.click("#upload button")
    page.wait_for_url(re.compile(r"/me/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def wait_state(page, state: str, timeout: float = 120_000):
    """The status page shows `state` — without a reload: it is pushed."""
    page.wait_for_function("s => document.getElementById('state')?.textContent === s", arg=state, timeout=timeout)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_whole_competition(backend, sink, pages, tmp_path):
    pg = Postgres(tmp_path) if backend == "postgres" else None
    arena = Arena(tmp_path, sink, database=pg.url if pg else "sqlite")
    arena.start()
    try:
        ana, bob, org, public = pages(), pages(), pages(), pages(390, 844, 3)
        # Every HTML answer the browsers get carries the Content-Security-Policy (issue 42).
        html: list[tuple[str, str | None]] = []
        for p in (ana, bob, org, public):
            p.context.on("response", lambda r: html.append((r.url, r.headers.get("content-security-policy")))
                         if r.headers.get("content-type", "").startswith("text/html") else None)
        good = agent_file(tmp_path, "ana_agent.py", good_agent("Ana's expander"))
        broken = agent_file(tmp_path, "broken.py", SYNTAX_ERROR)
        late = agent_file(tmp_path, "late.py", LATE_NONSENSE)
        three = agent_file(tmp_path, "three.py", THREE_UNREADABLE)

        # The leaderboard, open on a phone before anything is judged, fills by itself.
        public.open(arena.url + "/board")
        assert public.page.locator("#board tr").count() == 1

        sign_in(ana.page, arena, sink, "Ana@Mail.Example")
        assert ana.page.url.endswith("/me")
        ana_id = upload(ana.page, good)
        wait_state(ana.page, "scored")
        share = ana.page.locator("#result td").first.inner_text()
        assert share.endswith(" %") and float(share[:-2]) > 0
        # The result e-mail links to the status page.
        mail = sink.wait_for("ana@mail.example", f"submission {ana_id}")
        assert f"{arena.url}/me/{ana_id}" in body_of(mail) and "scored" in body_of(mail)
        public.page.wait_for_function("() => document.querySelectorAll('#board tr').length === 2")
        assert public.page.locator("#board td.agent").inner_text() == "Ana's expander"
        assert public.page.locator("#board td").nth(3).inner_text() == share

        sign_in(bob.page, arena, sink, "bob@mail.example")
        broken_id = upload(bob.page, broken)
        wait_state(bob.page, "check failed")
        # The check's problems are listed once: in its report, not again as the reason.
        assert "does not parse" in bob.page.locator("#problems").inner_text()
        assert bob.page.locator("#reason").count() == 0
        late_id = upload(bob.page, late)
        wait_state(bob.page, "disqualified")
        reason = bob.page.locator("#reason").inner_text()
        assert "disqualified in round 13" in reason, reason
        # Bob's own log and replay are his; the disqualified agent is not on the leaderboard.
        bob.page.goto(f"{arena.url}/me/{late_id}/log")
        assert bob.page.locator("body").inner_text() != ""
        bob.page.goto(f"{arena.url}/me")
        assert bob.page.locator("#history tr").count() == 3
        public.page.reload()
        assert [t.inner_text() for t in public.page.locator("#board td.agent").all()] == ["Ana's expander"]

        # Three violations are within the rules (§8): the check warns of them, the judge scores
        # the agent and it is on the board (the rules refuse a file, not a way of playing).
        three_id = upload(bob.page, three)
        wait_state(bob.page, "scored")
        warnings = bob.page.locator("#warnings").inner_text()
        assert "violation in round 2: unreadable" in warnings and "3 violations in the test match" in warnings, warnings
        assert bob.page.locator("#problems li").count() == 0
        public.page.wait_for_function("() => document.querySelectorAll('#board td.agent').length === 2")
        assert [t.inner_text() for t in public.page.locator("#board td.agent").all()] == ["Ana's expander", "three strikes"]
        assert public.page.locator("#board td.num").nth(7).inner_text() == "3", "its violations on the board"

        # A participant sees only their own: Ana's status, log and file are not Bob's to see.
        for path in [f"/me/{ana_id}", f"/me/{ana_id}/log", "/org", f"/org/file/{ana_id}"]:
            r = bob.context.request.get(arena.url + path, max_redirects=0)
            assert r.status in (403, 404), (path, r.status)
            assert "Ana" not in r.text() or path == "/org", path
        assert bob.context.request.get(f"{arena.url}/replay/{broken_id}").status == 404
        assert public.context.request.get(f"{arena.url}/replay/{late_id}").status == 403
        assert public.context.request.get(f"{arena.url}/replay/{ana_id}").status == 200
        # A form posted from another site is refused, also with a valid session.
        r = bob.context.request.post(arena.url + "/org/rejudge", form={"csrf": "x", "what": "all"},
                                     headers={"Origin": "http://evil.example"})
        assert r.status == 403

        # At the deadline's last second an upload is accepted; one second later it is refused.
        arena.set_clock(AT_DEADLINE)
        last_id = upload(ana.page, good)
        wait_state(ana.page, "scored")
        arena.set_clock(AFTER_DEADLINE)
        ana.page.goto(arena.url + "/me")
        assert "deadline has passed" in ana.page.locator("#closed").inner_text()
        r = ana.context.request.post(arena.url + "/upload", multipart={
            "csrf": ana.page.locator("input[name=csrf]").first.input_value(),
            "file": {"name": "x.py", "mimeType": "text/x-python", "buffer": good.read_bytes()}})
        assert r.status == 403 and "deadline passed" in r.text()
        assert arena_count(arena, pg, "submissions") == 5

        # The organiser: every submission, the finalists, the final.
        sign_in(org.page, arena, sink, "org@mail.example")
        assert org.page.url.endswith("/org")
        assert org.page.locator("#submissions tr").count() == 6
        assert [li.inner_text().split(" — ")[1].split(" (")[0] for li in org.page.locator("#finalists li").all()] == [
            "Ana's expander", "three strikes"]
        download = org.context.request.get(f"{arena.url}/org/file/{last_id}")
        assert download.status == 200 and download.body() == good.read_bytes()
        # The seating, before the start: eight seats, the two finalists and six fills, each
        # finalist with its board place (docs/rules.md §9).
        seating = org.page.locator("#seating tr")
        assert seating.count() == 9
        seats = [seating.nth(k).inner_text() for k in range(1, 9)]
        assert sum("1. on the board" in r for r in seats) == 1 and sum("2. on the board" in r for r in seats) == 1, seats
        assert sum("fill" in r for r in seats) == 6, seats
        # A re-judging is pending: the final waits for it, and says how many.
        csrf = org.page.locator("input[name=csrf]").first.input_value()
        r = org.context.request.post(arena.url + "/org/rejudge", form={"csrf": csrf, "what": str(three_id)}, max_redirects=0)
        assert r.status == 303
        # Meanwhile the board keeps its last result, marked as being judged.
        board = public.context.request.get(arena.url + "/board?part=1").text()
        row = next(r for r in board.split("<tr>") if "three strikes" in r)
        assert "being judged" in row, row
        r = org.context.request.post(arena.url + "/org/final", form={"csrf": csrf}, max_redirects=0)
        assert r.status == 409 and "1 upload(s) or re-judging(s) are still being judged" in r.text(), (r.status, r.text())
        # A bogus re-judging is refused with a reason, and nothing of the database shows.
        r = org.context.request.post(arena.url + "/org/rejudge", form={"csrf": csrf, "what": "999999"}, max_redirects=0)
        assert r.status == 404 and "there is no submission 999999" in r.text(), r.text()
        org.page.goto(arena.url + "/org")
        org.page.wait_for_function("() => document.getElementById('pending')?.textContent === '0'", timeout=120_000)
        # It waits for the screen: the intro card, no round before the start.
        run_final(org.page)
        org.page.wait_for_timeout(1500)
        assert org.page.evaluate("window.gbely.frames()") == 1, "no round before the start"
        # Only an organiser starts it.
        assert public.context.request.post(f"{arena.url}/final/live/api/start").status == 403
        org.page.keyboard.press("s")
        org.page.wait_for_function("() => window.gbely.arrivals().length >= 20", timeout=120_000)
        public.page.goto(arena.url + "/final")
        public.page.wait_for_selector("#results")
        places = [r.inner_text() for r in public.page.locator("#results tr td:first-child").all()]
        assert places[:3] == ["1", "2", "3"], places
        names = public.page.locator("#results").inner_text()
        assert "Ana's expander" in names
        # The organisers' actions are in the audit log, newest first.
        org.page.goto(arena.url + "/org")
        audit = [org.page.locator("#audit tr").nth(k).inner_text() for k in range(1, org.page.locator("#audit tr").count())]
        assert [next(w for w in ("run the final", "re-judge", "download") if w in a) for a in audit] == [
            "run the final", "re-judge", "download"], audit
        assert all("org@mail.example" in a for a in audit), audit
        assert [u for u, csp in html if not csp] == []
        assert all("frame-ancestors 'self'" in csp for _, csp in html)
        seen = {re.sub(r"^http://[^/]+", "", u).split("?")[0] for u, _ in html}
        for path in ["/board", "/signin", "/me", "/org", "/final/live/", "/final"]:
            assert path in seen, (path, sorted(seen))
        assert any(re.fullmatch(r"/me/\d+", p) for p in seen) and any(p.startswith("/signin/") for p in seen)
        ana.close(), bob.close(), org.close(), public.close()
    finally:
        arena.stop()
        if pg:
            pg.stop()


def arena_count(arena: Arena, pg, table: str) -> int:
    sql = f"SELECT COUNT(*) FROM {table}"
    return int(pg.query(sql)) if pg else arena.sqlite(sql)[0][0]


# Answers at once, but sleeps 0.6 s in round 7 of the judged match (the check's test match plays
# 5 rounds, so the check never sees it): round 7 is its slowest answer at the judge.
SLEEPS_IN_ROUND_7 = '''AGENT_NAME = "sleeps in round 7"
import time

def decide(stav):
    if stav["kolo"] == 7:
        time.sleep(0.6)
    return {"prikazy": []}
'''


def test_the_status_page_shows_the_judged_matchs_slowest_answers(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=12).start()
    try:
        ana = pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        sub = upload(ana.page, agent_file(tmp_path, "sleepy.py", SLEEPS_IN_ROUND_7))
        wait_state(ana.page, "scored")
        text = ana.page.locator("#slowest").inner_text()
        first = text.removeprefix("Slowest answers: ").split(", ")[0]
        m = re.fullmatch(r"round 7: (\d+(?:\.\d+)?) s of 2 s", first)
        assert m and 0.6 <= float(m.group(1)) < 2, text
        assert text.count(" of 2 s") == 3, text
        # The same time as the judged replay records for round 7 (answer_ms, in seconds as
        # `gbely play` writes them: two decimals from 0.1 s).
        (replay,) = (arena.data / "judging").glob(f"{sub}-*/replay.json.gz")
        turns = json.loads(gzip.decompress(replay.read_bytes()))["turns"]
        ms = turns[7]["answer_ms"][0]
        assert ms == max(t["answer_ms"][0] for t in turns), [t["answer_ms"] for t in turns]
        assert float(m.group(1)) == round(ms / 1000, 2), (text, ms)
        ana.close()   # before the server stops: its page's event stream ends cleanly
    finally:
        arena.stop()
