"""Judges over HTTP (`gbely arena worker --server URL`), tested as they will run: the worker in a
network namespace of its own (its own loopback, a veth pair to the test's namespace, where the
server listens on the veth address), with the server's folder — its configuration, data folder
and SQLite database — hidden under an empty tmpfs in the worker's mount namespace. The worker is
killed mid-match and started again; the server keeps the lease rules of its own judges: the
dead worker's job is judged again, one result a submission, a late result dropped. A token an
organiser revokes is refused at once.

The worker's API is also driven by hand (a worker that misbehaves): no token, a wrong one, a
late attempt's heartbeat, file and result, a judged result without its replay, a second result."""

from __future__ import annotations

import concurrent.futures
import gzip
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from arena_kit import GBELY, Arena, body_of, post_upload, sign_in, slow_agent, wait_until


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


class Netns:
    """A network namespace of the test's own, with its own loopback up and a veth pair to the
    test's namespace: `outer` (10.213.K.1) on the test's side, `inner` (10.213.K.2) in it."""

    def __init__(self):
        assert os.geteuid() == 0, "network namespaces need root (CI runs the tests as root)"
        k = os.getpid() % 200 + 20
        self.name = f"gbely-worker-{os.getpid()}"
        self.veth = f"gbw{os.getpid() % 100000}"
        self.outer, self.inner = f"10.213.{k}.1", f"10.213.{k}.2"
        sh("ip", "netns", "add", self.name)
        try:
            sh("ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up")
            sh("ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.name)
            sh("ip", "addr", "add", f"{self.outer}/30", "dev", self.veth)
            sh("ip", "link", "set", self.veth, "up")
            sh("ip", "netns", "exec", self.name, "ip", "addr", "add", f"{self.inner}/30", "dev", "eth0")
            sh("ip", "netns", "exec", self.name, "ip", "link", "set", "eth0", "up")
        except Exception:
            self.close()
            raise

    def command(self, cmd: list[str], hide: list) -> list[str]:
        """`cmd` run in the namespace, in a mount namespace of its own where each of `hide` is
        an empty tmpfs."""
        mounts = " && ".join(f"mount -t tmpfs gbely-hidden '{h}'" for h in hide)
        return ["ip", "netns", "exec", self.name, "unshare", "--mount", "--propagation", "private",
                "sh", "-c", f'{mounts} && exec "$@"', "sh", *cmd]

    def pids(self) -> list[str]:
        return sh("ip", "netns", "pids", self.name).split()

    def close(self):
        for pid in self.pids() if os.path.exists(f"/run/netns/{self.name}") else []:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


@pytest.fixture
def netns():
    ns = Netns()
    yield ns
    ns.close()


def issue_token(page, arena: Arena, name: str) -> str:
    """An organiser's page issues a worker token: shown once."""
    page.goto(arena.url + "/org")
    page.fill("#worker-name", name)
    page.click("#issue-worker button")
    try:
        page.wait_for_selector("#worker-token")
    except Exception:
        raise AssertionError(page.url + "\n" + page.locator("main").inner_text()[:2000])
    token = page.locator("#worker-token").inner_text().strip()
    assert re.fullmatch(r"gbw_[0-9a-f]{64}", token), token
    return token


def start_worker(arena: Arena, netns: Netns, token: str, folder) -> subprocess.Popen:
    log = open(arena.folder.parent / f"remote-worker-{time.time_ns()}.log", "w")
    cmd = netns.command([GBELY, "arena", "worker", "--server", arena.url, "--folder", str(folder)], hide=[arena.folder])
    # The token in the environment, as the worker's help says; no $GBELY_ARENA_CLOCK: nothing of
    # the server's reaches it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GBELY_ARENA")}
    w = subprocess.Popen(cmd, env={**env, "GBELY_WORKER_TOKEN": token}, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True, cwd="/")
    w.log_path = log.name
    return w


PROBE = """import os, socket, sys
seen = os.listdir(sys.argv[1])
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", int(sys.argv[2])))
    reach = "reached"
except OSError as e:
    reach = "refused"
print(len(seen), reach)
"""


def test_a_worker_in_its_own_namespace_judges_over_http_is_killed_restarted_and_revoked(sink, pages, netns, tmp_path):
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    arena = Arena(server_dir, sink, workers=0, lease=3, rounds=150, host=netns.outer)
    arena.start()
    workers = []
    try:
        # What the worker's namespace sees: no file of the server's folder, and nothing listens
        # on its own loopback at the server's port (the server is reached over the veth pair).
        probe = subprocess.run(netns.command([sys.executable, "-c", PROBE, str(arena.folder), str(arena.port)],
                                             hide=[arena.folder]), capture_output=True, text=True, check=True)
        assert probe.stdout.split() == ["0", "refused"], probe
        assert len(os.listdir(arena.data)) > 0, "the server's data folder, seen from the test's side"

        org = pages()
        sign_in(org.page, arena, sink, "org@mail.example")
        token = issue_token(org.page, arena, "hall-pc-1")
        # Kept hashed: the token itself is nowhere in the database.
        stored = arena.sqlite("SELECT name, token_hash, revoked FROM workers")
        assert stored == [("hall-pc-1", hashlib.sha256(token.encode()).hexdigest(), 0)], stored
        assert token.encode() not in b"".join(p.read_bytes() for p in arena.data.glob("arena.sqlite*"))

        ana = pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        sid = post_upload(ana.page, arena, "ana.py", slow_agent("ana 1"))
        ana.close()

        work = tmp_path / "worker"
        first = start_worker(arena, netns, token, work)
        workers.append(first)
        # Judged by the worker: the job is its (worker_id 1) and the participant sees `running`.
        running = lambda: arena.sqlite(f"SELECT s.state, j.worker_id, j.attempt FROM submissions s JOIN jobs j "
                                       f"ON j.submission = s.id WHERE s.id = {sid} AND s.state = 'running'")
        assert wait_until(running, timeout=120) == [("running", 1, 1)]
        time.sleep(1.0)
        first.send_signal(signal.SIGKILL)
        first.wait()
        # Its agents die with it: nothing is left running in the namespace.
        wait_until(lambda: netns.pids() == [], timeout=20)
        assert arena.sqlite(f"SELECT COUNT(*) FROM results WHERE submission = {sid}")[0][0] == 0, "killed mid-match"

        second = start_worker(arena, netns, token, work)
        workers.append(second)
        # The server is killed (-9) while the worker plays the second attempt, and started again:
        # the worker's renewals fail meanwhile and are tried again; its result lands once.
        wait_until(lambda: arena.sqlite(f"SELECT 1 FROM jobs WHERE submission = {sid} AND attempt = 2 "
                                        f"AND state = 'running'"), timeout=120)
        time.sleep(0.5)
        arena.kill9(arena.proc)
        time.sleep(1.0)
        arena.start()
        msg = sink.wait_for("ana@mail.example", f"your submission {sid}", timeout=300)
        assert re.search(r"scored \d+\.\d\d % of the map", body_of(msg)), body_of(msg)
        # One result, from the second attempt or a later one (the first's lease lapsed after 3 s).
        jobs = arena.sqlite(f"SELECT state, attempt, worker_id FROM jobs WHERE submission = {sid}")
        assert len(jobs) == 1 and jobs[0][0] == "done" and jobs[0][1] >= 2 and jobs[0][2] == 1, jobs
        attempt = jobs[0][1]
        result = arena.sqlite(f"SELECT share, replay, log FROM results WHERE submission = {sid}")
        assert len(result) == 1 and result[0][0] is not None, result
        share, replay, log = result[0]
        assert replay == f"judging/{sid}-{attempt}/replay.json.gz" and log == f"judging/{sid}-{attempt}/agent.log", result
        assert arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid}") == [("scored",)]
        # The replay the worker sent is whole: its result is the one kept, and the engine
        # re-simulates it to that result.
        sides = json.load(gzip.open(arena.data / replay))["result"]["sides"]
        assert (sides[0]["name"], sides[0]["score"]) == ("ana 1", share), sides[0]
        verified = subprocess.run([GBELY, "replay", "verify", str(arena.data / replay)], capture_output=True, text=True)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert (arena.data / log).is_file(), "the agent's log (empty: the agent prints nothing), sent by the worker"
        # Only this attempt's folder is kept on the server; the worker keeps no job's files (the
        # killed worker's were removed when the second started in its folder).
        assert sorted(p.name for p in (arena.data / "judging").iterdir()) == [f"{sid}-{attempt}"]
        assert [p.name for p in work.rglob("*") if p.is_file()] == [".lock"], list(work.rglob("*"))

        # The organisers' page lists it, with its host and the job it ended; revoked, the token
        # is refused and the worker stops with the reason.
        org.page.goto(arena.url + "/org")
        row = org.page.locator("#worker-list tr[data-worker='1']")
        assert "hall-pc-1" in row.inner_text() and "\t1\t" in row.inner_text().replace("\n", "\t"), row.inner_text()
        # Its speed as it measured it, against the server's own.
        assert re.search(r"\d\.\d\d× the server's", row.locator("td.speed").inner_text()), row.inner_text()
        row.locator("button").click()
        org.page.wait_for_load_state()
        assert "revoked" in org.page.locator("#worker-list tr[data-worker='1']").inner_text()
        assert second.wait(timeout=30) != 0
        said = open(second.log_path).read()
        assert "revoked" in said, said
        audit = [r[0] for r in arena.sqlite("SELECT what FROM audit ORDER BY id")]
        assert "issue a worker token" in audit and "revoke a worker token" in audit, audit
        # One result e-mail however the worker and the server died (counted at the end: a
        # second would have come by now).
        assert [str(m["Subject"]) for m in sink.to("ana@mail.example")].count(f"Gbely test cup: your submission {sid}") == 1
        org.close()
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGKILL)
                w.wait()
        arena.stop()


def answer_before_body(arena: Arena, method: str, path: str, length: int, token: str | None = None,
                       send: int = 0) -> int:
    """The status answered to a request that announces a body of `length` bytes and sends only
    `send` of them (a server that waited for the whole body would not answer within the
    timeout)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    with socket.create_connection((arena.host, arena.port), timeout=10) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {arena.host}:{arena.port}\r\n{auth}"
                  f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode() + b" " * send)
        head = s.recv(4096)
    return int(head.split(b" ", 2)[1])


def api(arena: Arena, method: str, path: str, token: str | None = None, body: bytes | None = None,
        json_body=None, headers: dict | None = None) -> tuple[int, bytes]:
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if json_body is not None:
        body = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(arena.url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()



def test_the_workers_api_keeps_the_lease_rules_against_a_misbehaving_worker(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, workers=0, lease=2)
    arena.start()
    try:
        org = pages()
        sign_in(org.page, arena, sink, "org@mail.example")
        one, two = issue_token(org.page, arena, "one"), issue_token(org.page, arena, "two")
        assert one != two
        ana = pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        source = slow_agent("ana 1")
        sid = post_upload(ana.page, arena, "ana.py", source)

        # Without a token, with a made-up one: refused, and nothing is claimed.
        assert api(arena, "POST", "/worker/claim")[0] == 401
        status, said = api(arena, "POST", "/worker/claim", "gbw_" + "0" * 64)
        assert status == 401 and b"unknown worker token" in said, said
        assert arena.sqlite("SELECT state FROM jobs") == [("queued",)]

        status, said = api(arena, "POST", "/worker/claim", one, headers={"X-Gbely-Worker-Host": "pc-1"})
        assert status == 200, said
        assert arena.sqlite("SELECT name, host FROM workers WHERE name = 'one'") == [("one", "pc-1")]
        claim = json.loads(said)
        job = claim["assignment"]["job"]
        assert (job["submission"], job["attempt"]) == (sid, 1)
        assert claim["assignment"]["file_name"] == "ana.py" and claim["assignment"]["settings"]["rounds"] == 40
        assert claim["map"].startswith("gbely-map"), claim["map"][:40]
        base = f"/worker/jobs/{job['id']}/1"
        assert api(arena, "GET", base + "/file", one) == (200, source.encode())
        # Another worker may not read it, renew it, send for it or give it back, nor claim it
        # while the lease runs.
        assert api(arena, "GET", base + "/file", two)[0] == 409
        assert api(arena, "POST", base + "/heartbeat", two)[0] == 409
        assert api(arena, "PUT", base + "/files/agent.log", two, body=b"not mine")[0] == 409
        assert api(arena, "POST", base + "/result", two, json_body={"check_failed": {"reason": "x", "check": "{}"}})[0] == 409
        assert api(arena, "POST", base + "/release", two)[0] == 409
        assert api(arena, "POST", "/worker/claim", two)[0] == 204
        assert arena.sqlite("SELECT state, attempt, worker_id FROM jobs") == [("running", 1, 1)]
        # A body without a token is refused before it is read (the answer comes with none of the
        # 8 MiB announced sent); a verdict is refused once past 1 MiB, the rest unread.
        assert answer_before_body(arena, "POST", base + "/result", 8 << 20) == 401
        assert answer_before_body(arena, "PUT", base + "/files/replay.json.gz", 8 << 20) == 401
        assert answer_before_body(arena, "POST", base + "/result", 8 << 20, one, send=(1 << 20) + 1024) == 413
        status, said = api(arena, "POST", base + "/heartbeat", one, json_body={"state": "running"})
        assert status == 200, said
        assert arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid}") == [("running",)]
        assert api(arena, "POST", base + "/heartbeat", one, json_body={"state": "scored"})[0] == 400
        # A name outside the three files, a judged result without its replay: refused.
        assert api(arena, "PUT", base + "/files/arena.sqlite", one, body=b"x")[0] == 404
        assert api(arena, "PUT", base + "/files/..%2Farena.sqlite", one, body=b"x")[0] == 404
        judged = {"judged": {"reason": "", "check": "{}", "outcome": {
            "submission": 999, "share": 99.0, "cells": 9, "tiebreak": None, "violations": 0, "disqualified": None,
            "council_fell": None, "rounds": 150, "replay": "../../etc/passwd", "log": "", "judged": 0,
            "times": {"limit": 2.0, "slowest": []}}}}
        status, said = api(arena, "POST", base + "/result", one, json_body=judged)
        assert status == 400 and b"replay" in said, (status, said)

        # A judged verdict is its replay's, re-simulated by the server: not a replay, refused;
        # a real replay of this agent's leaderboard match with a share one higher, refused.
        assert api(arena, "PUT", base + "/files/replay.json.gz", one, body=b"not a replay")[0] == 204
        judged["judged"]["outcome"]["replay"] = ""
        status, said = api(arena, "POST", base + "/result", one, json_body=judged)
        assert status == 422 and b"cannot be read" in said, (status, said)
        agent = tmp_path / "ana.py"
        agent.write_text(source)
        played = tmp_path / "played.json.gz"
        subprocess.run([GBELY, "play", str(agent), "--rounds", "40", "--sandbox", "off", "--replay", str(played)],
                       check=True, capture_output=True, cwd=tmp_path)
        side = json.load(gzip.open(played))["result"]["sides"][0]
        assert side["name"] == "ana 1", side
        assert api(arena, "PUT", base + "/files/replay.json.gz", one, body=played.read_bytes())[0] == 204
        judged["judged"]["outcome"].update(share=side["score"] + 1, cells=side["cells"], tiebreak=side["tiebreak_round"],
                                           violations=0, rounds=40)
        status, said = api(arena, "POST", base + "/result", one, json_body=judged)
        assert status == 422 and b"its replay" in said, (status, said)
        assert arena.sqlite(f"SELECT COUNT(*) FROM results WHERE submission = {sid}") == [(0,)]

        # Worker one falls silent: after the lease (2 s) worker two takes the job as attempt 2.
        time.sleep(3)
        status, said = api(arena, "POST", "/worker/claim", two, headers={"X-Gbely-Worker-Host": "pc-2"})
        assert status == 200, said
        assert json.loads(said)["assignment"]["job"]["attempt"] == 2
        # Worker one's late heartbeat, file and result are refused; nothing of it is kept.
        assert api(arena, "POST", base + "/heartbeat", one)[0] == 409
        assert api(arena, "PUT", base + "/files/agent.log", one, body=b"late")[0] == 409
        late = {"check_failed": {"reason": "late", "check": "{}"}}
        assert api(arena, "POST", base + "/result", one, json_body=late)[0] == 409
        assert not (arena.data / "judging" / f"{sid}-1" / "agent.log").exists()
        # Worker two's machine cannot judge (its own error): the job goes back to the queue,
        # the submission keeps no result and its participant no e-mail.
        second = f"/worker/jobs/{job['id']}/2"
        status, said = api(arena, "POST", second + "/result", two, json_body={"error": {"reason": "no sandbox here"}})
        assert (status, json.loads(said)) == (200, {"kept": False}), said
        assert arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid}") == [("queued",)]
        assert arena.sqlite("SELECT state, attempt FROM jobs") == [("queued", 2)]
        # Taken again (attempt 3): its check failed, kept, once.
        status, said = api(arena, "POST", "/worker/claim", two)
        assert status == 200 and json.loads(said)["assignment"]["job"]["attempt"] == 3, said
        third = f"/worker/jobs/{job['id']}/3"
        failed = {"check_failed": {"reason": "decide() is missing", "check": '{"ok": false, "log": "/etc/passwd"}'}}
        status, said = api(arena, "POST", third + "/result", two, json_body=failed)
        assert (status, json.loads(said)) == (200, {"kept": True}), said
        assert api(arena, "POST", third + "/result", two, json_body=failed)[0] == 409
        stored = arena.sqlite(f"SELECT state, reason, check_report FROM submissions WHERE id = {sid}")[0]
        assert stored[:2] == ("check_failed", "decide() is missing"), stored
        assert "log" not in json.loads(stored[2]), "the server names the check's log, not the worker"
        assert arena.sqlite("SELECT state, attempt, worker_id FROM jobs") == [("done", 3, 2)]
        # What worker one sent while it held the job goes with its attempt.
        assert not (arena.data / "judging" / f"{sid}-1").exists()
        # Nothing is left to claim.
        assert api(arena, "POST", "/worker/claim", two)[0] == 204

        # Eight workers ask at once for four participants' queued uploads: each job is given once.
        tokens = [issue_token(org.page, arena, f"rush-{k}") for k in range(8)]
        for who in ("bo", "cy", "di", "ed"):
            p = pages()
            sign_in(p.page, arena, sink, f"{who}@mail.example")
            post_upload(p.page, arena, f"{who}.py", slow_agent(who))
            p.close()
        queued = arena.sqlite("SELECT COUNT(*) FROM jobs WHERE state = 'queued'")[0][0]
        assert queued == 4
        barrier = threading.Barrier(len(tokens))

        def rush(t):
            barrier.wait()
            return api(arena, "POST", "/worker/claim", t)

        with concurrent.futures.ThreadPoolExecutor(len(tokens)) as pool:
            answers = list(pool.map(rush, tokens))
        given = [json.loads(body)["assignment"]["job"]["id"] for status, body in answers if status == 200]
        assert sorted(status for status, _ in answers) == [200] * queued + [204] * (len(tokens) - queued), answers
        assert len(set(given)) == len(given) == queued, given
        # Revoking a worker that holds one: its job is back in the queue at once, for another.
        holder = next(k for k, (status, _) in enumerate(answers) if status == 200)
        held_job = json.loads(answers[holder][1])["assignment"]["job"]
        worker_id = arena.sqlite(f"SELECT id FROM workers WHERE name = 'rush-{holder}'")[0][0]
        org.page.goto(arena.url + "/org")
        org.page.locator(f"#worker-list tr[data-worker='{worker_id}'] button").click()
        org.page.wait_for_load_state()
        idle = next(t for (status, _), t in zip(answers, tokens) if status == 204)
        status, said = api(arena, "POST", "/worker/claim", idle)
        assert status == 200, said
        again = json.loads(said)["assignment"]["job"]
        assert (again["id"], again["attempt"]) == (held_job["id"], held_job["attempt"] + 1)
        assert api(arena, "POST", "/worker/claim", tokens[holder])[0] == 401
        # (Closed before the server stops: their event streams would be cut.)
        org.close(), ana.close()
    finally:
        arena.stop()


# Answers in time for the check (5 rounds), then sleeps past the 2 s limit from round 10 on: the
# fourth timeout (round 13) disqualifies it (SPEC §8).
LATE_SLEEPER = '''AGENT_NAME = "late sleeper"
import time

def decide(stav):
    if stav["kolo"] >= 10:
        time.sleep(5)
    return {"prikazy": []}
'''


def test_a_worker_slower_than_asked_gets_no_job_and_its_timeouts_are_judged_again_in_one_click(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, workers=0, lease=30, min_speed=0.5)
    arena.start()
    try:
        org = pages()
        sign_in(org.page, arena, sink, "org@mail.example")
        token = issue_token(org.page, arena, "old-laptop")
        ana = pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        sid = post_upload(ana.page, arena, "sleeper.py", LATE_SLEEPER)
        # Until the server has measured its own speed (its first seconds), a worker is asked to
        # come again; then one that sends no speed is refused.
        status, said = wait_until(lambda: (lambda r: r if r[0] != 503 else None)(api(arena, "POST", "/worker/claim", token)), 120)
        assert status == 403 and b"send their speed" in said, said
        slow = {"engine_ms": 1e7, "python_ms": 1.0}
        status, said = api(arena, "POST", "/worker/claim", token, json_body={"speed": slow})
        assert status == 403 and b"too slow" in said and b"at least 0.5" in said, said
        assert arena.sqlite("SELECT state FROM jobs") == [("queued",)]
        org.page.goto(arena.url + "/org")
        assert "too slow" in org.page.locator("#worker-list td.speed").inner_text()
        # (Closed before the server stops: their event streams would be cut.)
        org.close(), ana.close()

        # The real worker measures itself; asked for 1000 times the server's speed, it is refused,
        # waits, measures itself again and asks again (every second here: --measure-every 1).
        text = arena.config.read_text().replace("min_speed = 0.5", "min_speed = 1000")
        arena.stop()
        arena.config.write_text(text)
        arena.start()
        log = tmp_path / "worker.log"
        with open(log, "w") as out:
            w = subprocess.Popen([GBELY, "arena", "worker", "--server", arena.url, "--folder", str(tmp_path / "w"),
                                  "--measure-every", "1"], env={**os.environ, "GBELY_WORKER_TOKEN": token}, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until(lambda: log.read_text().count("too slow") >= 2, 300)
        finally:
            os.killpg(w.pid, signal.SIGINT)
            assert w.wait(timeout=60) == 0
        said = log.read_text()
        assert "at least 1000" in said, said
        measured = re.findall(r"this machine's speed: the engine's match \d+ ms, the Python workload \d+ ms", said)
        assert len(measured) >= 2, said
        assert arena.sqlite("SELECT state FROM jobs") == [("queued",)]

        # Fast enough now (the same worker; the share asked low, so that the machine's load
        # while the test runs cannot refuse it): it judges the upload, which stops answering in
        # time from round 10, and disqualifies it by timeouts.
        arena.stop()
        arena.config.write_text(text.replace("min_speed = 1000", "min_speed = 0.01"))
        arena.start()
        with open(log, "w") as out:
            w = subprocess.Popen([GBELY, "arena", "worker", "--server", arena.url, "--folder", str(tmp_path / "w")],
                                 env={**os.environ, "GBELY_WORKER_TOKEN": token}, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        try:
            wait_until(lambda: arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid} AND state = 'disqualified'"), 300)
        finally:
            os.killpg(w.pid, signal.SIGINT)
            w.wait(timeout=60)
        reason = arena.sqlite(f"SELECT reason FROM submissions WHERE id = {sid}")[0][0]
        assert reason.startswith("disqualified in round 13: the fourth violation (timeout:"), reason
        assert arena.sqlite(f"SELECT worker_id FROM jobs WHERE submission = {sid}") == [(1,)]

        # The organiser judges its timeout disqualifications again, in one click.
        org = pages()
        sign_in(org.page, arena, sink, "org@mail.example", nth=2)
        button = org.page.locator("#worker-list button.rejudge-timeouts")
        assert button.inner_text() == "Re-judge its disqualification by timeouts", button.inner_text()
        button.click()
        org.page.wait_for_load_state()
        assert arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid}") == [("queued",)]
        assert org.page.locator("#worker-list button.rejudge-timeouts").count() == 0
        audit = arena.sqlite("SELECT what, detail FROM audit ORDER BY id DESC LIMIT 1")
        assert audit == [("re-judge a worker's timeout disqualifications", f"worker 1: submissions {sid}")], audit
        org.close()
    finally:
        arena.stop()
