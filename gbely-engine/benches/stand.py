"""What the stand costs: its idle memory, and a match played from it against `gbely play` of the
same match (wall and CPU time, taken alternately: play, stand, play, stand … with the load
average printed, because this machine's timings swing with its load).

    python3 gbely-engine/benches/stand.py [--rounds 150] [--pairs 3] [--quick]

Needs the `gbely` binary (GBELY_BIN, else target/debug/gbely; build the release one for figures
that mean something: cargo build --release -p gbely-engine, GBELY_BIN=target/release/gbely).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TICK = os.sysconf("SC_CLK_TCK")


def gbely_bin() -> str:
    given = os.environ.get("GBELY_BIN")
    if given:
        return str(Path(given).resolve())
    return str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "gbely")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time and that of its children it reaped (its agents)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[k]) for k in (11, 12, 13, 14)) / TICK


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one pair of 10 rounds: that it runs")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.pairs = 10, 1
    work = Path(tempfile.mkdtemp(prefix="gbely-stand-bench-"))
    (work / "agents").mkdir()
    shutil.copy(ROOT / "agents" / "my_agent.py", work / "agents" / "my_agent.py")
    err = open(work / "stand.err", "w+")
    stand = subprocess.Popen([gbely_bin(), "stand", "agents", "--no-open", "--data", "data", "--jobs", "1"],
                             cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not (m := re.search(r"is at (http://\S+)", (err.seek(0), err.read())[1])):
            assert stand.poll() is None and time.monotonic() < deadline, "no address"
            time.sleep(0.05)
        u = urllib.parse.urlparse(m.group(1))
        token = urllib.parse.parse_qs(u.query)["t"][0]

        def call(method: str, path: str, body=None):
            c = http.client.HTTPConnection("127.0.0.1", u.port, timeout=30)
            c.request(method, path, body=None if body is None else json.dumps(body),
                      headers={"Host": f"127.0.0.1:{u.port}", "X-Gbely-Token": token})
            r = c.getresponse()
            return json.loads(r.read())

        # Idle: once the folder's agent has been checked.
        while not all(x["check"] in ("ok", "warn", "fail", "error") for x in call("GET", "/api/state")["agents"]):
            time.sleep(0.2)
        time.sleep(2)
        idle = rss_mib(stand.pid)
        print(f"stand idle: {idle:.1f} MiB resident (the server, the folder's watcher, one agent listed and checked)")
        plays, stands = [], []
        for k in range(a.pairs):
            print(f"pair {k + 1}: load average {os.getloadavg()[0]:.2f}")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            subprocess.run([gbely_bin(), "play", "my_agent.py", "--opponent", "council", "--rounds", str(a.rounds),
                            "--replay", str(work / f"play{k}.json.gz"), "--run-dir", str(work / f"play{k}"), "-q"],
                           cwd=work / "agents", check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            plays.append((wall, cpu))
            c0, t0 = cpu_seconds(stand.pid), time.monotonic()
            rid = call("POST", "/api/runs", {"kind": "duel", "seats": ["my_agent.py", "council"],
                                             "settings": {"rounds": a.rounds}})["id"]
            while call("GET", f"/api/runs/{rid}")["status"] in ("queued", "running"):
                time.sleep(0.02)
            stands.append((time.monotonic() - t0, cpu_seconds(stand.pid) - c0))
            print(f"  gbely play: {plays[-1][0]:.2f} s wall, {plays[-1][1]:.2f} s CPU;"
                  f" the stand: {stands[-1][0]:.2f} s wall, {stands[-1][1]:.2f} s CPU")
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        print(f"median over {a.pairs} pair(s) of {a.rounds} rounds: gbely play {med(plays, 0):.2f} s wall /"
              f" {med(plays, 1):.2f} s CPU; from the stand {med(stands, 0):.2f} s wall / {med(stands, 1):.2f} s CPU"
              f" (+{med(stands, 0) - med(plays, 0):.2f} s, +{med(stands, 1) - med(plays, 1):.2f} s CPU)")
        print(f"stand after the matches: {rss_mib(stand.pid):.1f} MiB resident")
    finally:
        stand.send_signal(signal.SIGINT)
        stand.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
