"""The public results and the JSON API (issue 45, item 4): a small competition (two participants
judged, one of them twice, the deadline passed with the competition's clock, the final played)
publishes its results; the archive, downloaded in Chromium and unpacked into a fresh folder,
matches its manifest file by file, and `gbely replay verify` re-derives every published result
from it (the manifest, and each replay alone); a replay with one byte changed fails. Before the
deadline the results answer 403 and say when they open. `/api/board` answers the rows `/board`
shows, `/api/me/submissions` what `/me` shows, and another participant's submission is 404."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import pathlib
import tarfile


from arena_kit import AFTER_DEADLINE, GBELY, ROOT, Arena, agent_file, good_agent, run_final, sign_in


def upload(page, url: str, path) -> int:
    page.goto(url + "/me")
    page.set_input_files("#upload input[type=file]", str(path))
    page.click("#upload button")
    page.wait_for_url(re.compile(r"/me/\d+$"))
    page.wait_for_function("() => ['scored', 'disqualified', 'check failed'].includes("
                           "document.getElementById('state')?.textContent)", timeout=180_000)
    assert page.locator("#state").inner_text() == "scored", page.locator("main").inner_text()
    return int(page.url.rsplit("/", 1)[1])


def verify(folder: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([GBELY, "replay", "verify", *args], cwd=folder, capture_output=True, text=True, timeout=300)


def sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


ANA = 'Ana, the "first"'


def test_the_public_results_verify_from_a_fresh_folder_and_the_api_answers_what_the_pages_show(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=30, rate=50.0, final_rounds=10)
    arena.start()
    try:
        # A phone: the pages at 390 px.
        ana = pages(390, 844)
        sign_in(ana.page, arena, sink, "ana@mail.example")
        first = upload(ana.page, arena.url, agent_file(tmp_path, "ana.py", good_agent(ANA)))
        second = upload(ana.page, arena.url, agent_file(tmp_path, "ana2.py", good_agent(ANA + " 2")))
        ben = pages()
        sign_in(ben.page, arena, sink, "ben@mail.example")
        bens = upload(ben.page, arena.url, ROOT / "agents" / "my_agent.py")

        # Before the deadline: closed, saying when it opens.
        r = ana.context.request.get(arena.url + "/export/manifest.json")
        assert r.status == 403 and "15 Nov 2026, 23:59" in r.text(), r.status
        ana.page.goto(arena.url + "/export")
        assert "15 Nov 2026, 23:59" in ana.page.locator("#export-closed").inner_text()
        # The page's own 403, as asked for: the browser logs it as a failed load, nothing else.
        assert ana.errors == ["console.error: Failed to load resource: the server responded with a status of 403 "
                              "(Forbidden)"], ana.errors
        ana.errors.clear()

        # The deadline passes; the organisers run the final.
        arena.set_clock(AFTER_DEADLINE)
        org = pages()
        sign_in(org.page, arena, sink, "org@mail.example")
        org.page.goto(arena.url + "/org")
        assert "deadline passed" in org.page.locator("#export-state").inner_text()
        run_final(org.page)
        org.page.keyboard.press("s")
        ana.page.goto(arena.url + "/final")
        ana.page.wait_for_selector("#results", timeout=120_000)
        final_names = [r.inner_text() for r in ana.page.locator("#results tr td:nth-child(2)").all()]

        # The export page: its downloads, at 390 px without sideways scrolling.
        ana.page.goto(arena.url + "/export")
        assert ana.page.locator("h1").inner_text() == "Public results"
        assert ana.page.evaluate("() => document.documentElement.scrollWidth") <= 390
        ana.page.screenshot(path=str(tmp_path / "export-390.png"), full_page=True)
        with ana.page.expect_download() as d:
            ana.page.click("a[href='/export/gbely-results.tar.gz']")
        archive = tmp_path / "gbely-results.tar.gz"
        d.value.save_as(archive)
        print(f"the archive: {archive.stat().st_size} bytes")

        # Unpacked into a fresh folder (nothing of the arena's beside it): every file as the
        # manifest says.
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        with tarfile.open(archive) as t:
            t.extractall(fresh, filter="data")
        folder = fresh / "gbely-results"
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["format"] == "gbely-results" and manifest["competition"] == "Gbely test cup"
        served = ana.context.request.get(arena.url + "/export/manifest.json")
        assert served.body() == (folder / "manifest.json").read_bytes()
        for f in manifest["files"] + manifest["replays"]:
            p = folder / f["path"]
            assert sha256(p) == f["sha256"] and p.stat().st_size == f["bytes"], f["path"]
        for p in folder.rglob("*"):
            if p.is_file():
                assert b"mail.example" not in p.read_bytes(), f"{p} has an address"
        kinds = sorted(r["kind"] for r in manifest["replays"])
        board = json.loads((folder / "board.json").read_text())
        on_board = {r["submission"] for r in board["rows"]}
        flash_only = {f["submission"] for f in board["flash"]} - on_board
        assert kinds == sorted(["final"] + ["leaderboard"] * (len(on_board) + len(flash_only))), kinds
        assert on_board == {second, bens}, "each participant's last upload"
        assert [r["agent"] for r in json.loads((folder / "final.json").read_text())["rows"]] == final_names

        # Anyone re-derives every published result.
        v = verify(folder, "manifest.json")
        assert v.returncode == 0, v.stdout + v.stderr
        lines = v.stdout.splitlines()
        assert len(lines) == len(manifest["files"]) + len(manifest["replays"]) + 1, v.stdout
        assert all(line.startswith("ok: ") for line in lines), v.stdout
        assert f"{len(manifest['replays'])} replay(s) verified, 0 mismatch(es)" in lines[-1], lines[-1]
        for r in manifest["replays"]:
            one = verify(folder, r["path"])
            assert one.returncode == 0 and one.stdout.startswith("ok: "), one.stdout + one.stderr

        # One byte changed in a replay: the check fails and says which.
        victim = folder / manifest["replays"][0]["path"]
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
        v = verify(folder, "manifest.json")
        assert v.returncode == 5, v.stdout + v.stderr
        assert f"MISMATCH in {manifest['replays'][0]['path']}" in v.stdout, v.stdout
        assert v.stdout.splitlines()[-1].startswith("MISMATCH: "), v.stdout

        # /api/board is the board /board shows (Chromium's rendering of it).
        ana.page.goto(arena.url + "/board")
        shown = ana.page.evaluate("""() => [...document.querySelectorAll('#board tr')].slice(1).map((tr) =>
            [...tr.querySelectorAll('td')].slice(0, 6).map((td) => td.innerText.trim()))""")
        api = ana.context.request.get(arena.url + "/api/board")
        assert api.status == 200 and b"mail.example" not in api.body()
        rows = api.json()["rows"]
        expect = [[str(r["place"]), r["agent"], r["version"] or "—", f"{r['share']:.2f} %",
                   "—" if r["tiebreak"] is None else str(r["tiebreak"]), str(r["violations"])] for r in rows]
        assert shown == expect, (shown, expect)
        assert rows == board["rows"], "the archive's board is the API's"

        # /api/me/submissions is what /me shows: the uploads' numbers, files and states, and the
        # current one's share.
        ana.page.goto(arena.url + "/me")
        history = ana.page.evaluate("""() => [...document.querySelectorAll('#history tr')].slice(1).map((tr) => {
            const td = tr.querySelectorAll('td');
            return [Number(td[0].innerText), td[2].innerText, td[3].className.replace('state ', '')]; })""")
        mine = ana.context.request.get(arena.url + "/api/me/submissions")
        assert mine.status == 200
        subs = mine.json()
        assert [[s["id"], s["file_name"], s["state"]] for s in subs] == history == [
            [second, "ana2.py", "scored"], [first, "ana.py", "scored"]], history
        share = ana.page.locator("#result td").first.inner_text()
        assert share == f"{subs[0]['result']['share']:.2f} %", share
        one = ana.context.request.get(f"{arena.url}/api/me/submissions/{first}")
        assert one.status == 200 and one.json() == subs[1]
        replay = ana.context.request.get(f"{arena.url}/api/me/submissions/{second}/replay")
        assert replay.status == 200 and replay.body()[:2] == b"\x1f\x8b"
        # Another participant's submission and replay: 404, as for one that does not exist.
        for path in (f"/api/me/submissions/{bens}", f"/api/me/submissions/{bens}/replay", "/api/me/submissions/999999"):
            r = ana.context.request.get(arena.url + path)
            assert r.status == 404 and "error" in r.json(), (path, r.status)
        stranger = pages()
        r = stranger.context.request.get(arena.url + "/api/me/submissions")
        assert r.status == 401 and "error" in r.json()
        for p in (ana, ben, org, stranger):
            p.close()
    finally:
        arena.stop()
