"""What the competition server bears on this machine: N participants signing in and uploading at
once (none may be lost), the leaderboard page's latency (median, p99) while judging runs, and
judged matches per minute against `gbely league`'s rate for the same agent against the Council
(the same rounds, the same number of matches at once, the sandbox in both), and a leaderboard
entry's replay in the viewer: its page's bytes against the replay's, and the time to open it on a
desktop and on a phone (Playwright and Debian's chromium; without them only the bytes).

    python3 gbely-arena/benches/arena.py [--participants 200] [--uploads-each 1] [--seconds 60] [--rounds 150] [--quick]

The event's size (docs/arena.md, "Load"): --participants 2000 --uploads-each 5 (10 000 uploads;
the database's and the disk's bytes per upload are printed).

Needs the `gbely` binary (GBELY_BIN, else target/debug/gbely; build the release one for figures
that mean something: cargo build --release -p gbely-engine, GBELY_BIN=target/release/gbely),
aiosmtpd (the e-mails are caught by an SMTP sink) and bubblewrap. Figures are printed (with the
load average), never asserted — except that no upload is lost, which is the server's promise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gbely-engine" / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "gbely-arena" / "tests" / "browser"))

from arena_kit import GBELY, Arena, Sink, body_of, good_agent  # noqa: E402


def request(arena: Arena, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    c = http.client.HTTPConnection("127.0.0.1", arena.port, timeout=120)
    c.request(method, path, body=body, headers={"Host": f"127.0.0.1:{arena.port}", **(headers or {})})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict(r.getheaders()), data


def sign_in(arena: Arena, sink: Sink, address: str) -> tuple[str, str]:
    """A session cookie and the form token of `address`."""
    form = urllib.parse.urlencode({"email": address}).encode()
    status, _, _ = request(arena, "POST", "/signin", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200, status
    code = re.search(r"/signin/([0-9a-f]{32})", body_of(sink.wait_for(address, "sign-in link"))).group(1)
    status, headers, _ = request(arena, "POST", f"/signin/{code}")
    assert status == 303, status
    cookie = headers["set-cookie"].split(";")[0]
    _, _, page = request(arena, "GET", "/me", headers={"Cookie": cookie})
    csrf = re.search(rb'name="?csrf"? value="([0-9a-f]+)"', page).group(1).decode()
    return cookie, csrf


def upload(arena: Arena, cookie: str, csrf: str, name: str, source: str) -> int:
    boundary = "gbelybench" + os.urandom(8).hex()
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n',
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\nContent-Type: text/x-python\r\n\r\n{source}\r\n',
        f"--{boundary}--\r\n",
    ]
    status, _, _ = request(arena, "POST", "/upload", "".join(parts).encode(),
                           {"Cookie": cookie, "Content-Type": f"multipart/form-data; boundary={boundary}"})
    return status


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def entry_replay(arena: Arena):
    """A leaderboard entry's replay as its visitors get it (`/replay/ID`, public once on the
    board): its page's bytes against the replay file's, the server's time to make it and to send
    it again (kept), and the time to open it in Chromium, from navigation to the first round drawn
    and to the last round shown, on a desktop window and on a phone
    (gbely-engine/benches/viewer.py's `open_times`). The open time is skipped without Playwright."""
    rows = arena.sqlite("SELECT submission, replay FROM results WHERE replay <> '' ORDER BY submission LIMIT 1")
    if not rows:
        print("  a leaderboard entry's replay: none judged yet")
        return
    sid, stored = rows[0]
    replay_bytes = (arena.data / stored).stat().st_size
    took = []
    for _ in range(2):
        s = time.perf_counter()
        status, _, page = request(arena, "GET", f"/replay/{sid}")
        took.append(time.perf_counter() - s)
        assert status == 200, status
    print(f"  a leaderboard entry's replay: {replay_bytes:,} B; its page {len(page):,} B = {len(page) / replay_bytes:.1f}x,"
          f" made and sent in {took[0] * 1000:.0f} ms, then (kept) in {took[1] * 1000:.0f} ms")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("    (no Playwright: the page's open time is not measured)")
        return
    sys.path.insert(0, str(ROOT / "gbely-engine" / "benches"))
    from viewer import SCREENS, open_times  # noqa: E402
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name, (w, h, rate) in SCREENS.items():
            first, last = open_times(browser, f"{arena.url}/replay/{sid}", w, h, rate)
            print(f"    {name}: first round drawn {first:.0f} ms after navigation (the server's part included),"
                  f" last round shown at {last:.0f} ms")
        browser.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--uploads-each", type=int, default=1,
                    help="uploads of each participant, sent in waves (all participants at once each)")
    ap.add_argument("--seconds", type=float, default=60, help="how long the leaderboard is read while judging runs")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--judges", type=int, default=2, help="matches judged at once (and league jobs)")
    ap.add_argument("--quick", action="store_true", help="10 participants, 5 s, 30 rounds: only that it runs")
    a = ap.parse_args()
    if a.quick:
        a.participants, a.seconds, a.rounds = 10, 5, 30
    print(f"gbely arena bench: {GBELY}; load average {os.getloadavg()[0]:.2f}")
    folder = Path(tempfile.mkdtemp(prefix="gbely-arena-bench-"))
    sink = Sink()
    arena = Arena(folder, sink, rounds=a.rounds, workers=a.judges, uploads_per_hour=10_000)
    arena.config.write_text(arena.config.read_text().replace("signin_emails_per_hour = 5",
                                                             "signin_emails_per_hour = 5\nsignin_emails_per_hour_total = 100000\n"
                                                             # All from this machine: one requester.
                                                             "signin_emails_per_hour_requester = 100000"))
    arena.start()
    try:
        source = good_agent("bench")
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            sessions = list(pool.map(lambda k: sign_in(arena, sink, f"p{k}@mail.example"), range(a.participants)))
        signed = time.time() - t0
        t0 = time.time()
        statuses = []
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            for wave in range(a.uploads_each):
                # Each wave's files differ (another AGENT_NAME): no two uploads are the same file.
                statuses += pool.map(lambda s: upload(arena, s[1][0], s[1][1], f"agent{s[0]}.py",
                                                      source.replace('"bench"', f'"bench {wave}"', 1)), enumerate(sessions))
        uploaded = time.time() - t0
        total = a.participants * a.uploads_each
        stored = arena.sqlite("SELECT COUNT(*) FROM submissions")[0][0]
        jobs = arena.sqlite("SELECT COUNT(*) FROM jobs")[0][0]
        print(f"  {a.participants} participants signed in in {signed:.1f} s; their {total} uploads ({a.uploads_each} each, "
              f"32 at once) in {uploaded:.2f} s ({total / uploaded * 60:.0f} a minute): {statuses.count(303)} accepted, "
              f"{stored} stored, {jobs} jobs")
        assert statuses.count(303) == total == stored == jobs, "an upload was lost"
        # The leaderboard read while the judges work.
        latencies = []
        done0 = 0
        t0 = time.time()
        # Until the window ends or every upload is judged (the rate counts the judging time only).
        while time.time() - t0 < a.seconds:
            if len(latencies) % 10 == 0 and arena.sqlite("SELECT COUNT(*) FROM jobs WHERE state <> 'done'")[0][0] == 0:
                break
            s = time.perf_counter()
            status, _, _ = request(arena, "GET", "/board")
            latencies.append((time.perf_counter() - s) * 1000)
            assert status == 200
            time.sleep(0.05)
        window = time.time() - t0
        judged = arena.sqlite("SELECT COUNT(*) FROM results")[0][0] - done0
        # The first results may have come while the uploads were still being sent.
        window += uploaded
        print(f"  leaderboard while judging: {len(latencies)} reads, median {statistics.median(latencies):.1f} ms, "
              f"p99 {pct(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms")
        arena_rate = judged / window * 60
        print(f"  judged: {judged} matches in {window:.1f} s = {arena_rate:.1f} a minute ({a.judges} at once, "
              f"load average {os.getloadavg()[0]:.2f})")
        # What an upload costs: the database's rows (the file with its write-ahead log), the
        # stored file, and a judged upload's folder (its replay and log).
        db = sum(f.stat().st_size for f in arena.data.glob("arena.sqlite*"))
        files = sum(f.stat().st_size for f in (arena.data / "submissions").iterdir())
        folders = [d for d in (arena.data / "judging").iterdir() if d.is_dir()]
        judged_bytes = [sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) for d in folders]
        done = [b for d, b in zip(folders, judged_bytes) if (d / "replay.json.gz").exists()]
        print(f"  per upload: {db / total / 1024:.1f} KiB of database ({db / 2**20:.1f} MiB for {total}), "
              f"{files / total / 1024:.1f} KiB of stored file; per judged upload: "
              f"{statistics.median(done) / 1024 if done else 0:.0f} KiB of replay and log (median of {len(done)})")
        entry_replay(arena)
    finally:
        arena.stop()
        sink.stop()
    # The same matches by `gbely league`: the agent against the Council, the same jobs.
    agent = folder / "bench.py"
    agent.write_text(source)
    games = max(1, a.judges * 2)
    t0 = time.time()
    subprocess.run([GBELY, "league", str(agent), "--council", "--gauntlet", "--games", str(games), "--rounds", str(a.rounds),
                    "-j", str(a.judges), "--sandbox", "require", "--quiet", "--db", str(folder / "league.sqlite"),
                    "--report", str(folder / "report.html")], check=True, cwd=folder)
    took = time.time() - t0
    matches = games * 2
    print(f"  gbely league: {matches} matches in {took:.1f} s = {matches / took * 60:.1f} a minute ({a.judges} at once, "
          f"load average {os.getloadavg()[0]:.2f}); the arena judges at {arena_rate / (matches / took * 60):.2f}× "
          f"its rate (each arena job also plays the check's {5}-round test match)")


if __name__ == "__main__":
    main()
