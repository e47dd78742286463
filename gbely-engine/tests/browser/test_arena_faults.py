"""The arena under faults and attack: `kill -9` of the server and of a worker in the middle of
judging leaves every submission with exactly one result once judging resumes, and a submission
that tries to read another's file, the database or the server's configuration from inside the
sandbox gets nothing."""

from __future__ import annotations

import concurrent.futures
import http.client
import re
import threading
import time
import urllib.parse
import uuid

import pytest

from arena_kit import AFTER_DEADLINE, AT_DEADLINE, Arena, Sink, body_of, good_agent, sign_in


@pytest.fixture
def sink():
    s = Sink()
    yield s
    s.stop()


def csrf_of(page) -> str:
    page.goto(page.url.split("/me")[0].split("/org")[0] + "/me")
    return page.locator("#upload input[name=csrf]").input_value()


def post_upload(page, arena: Arena, name: str, source: str) -> int:
    r = page.context.request.post(arena.url + "/upload", max_redirects=0, multipart={
        "csrf": csrf_of(page), "file": {"name": name, "mimeType": "text/x-python", "buffer": source.encode()}})
    assert r.status == 303, (r.status, r.text())
    return int(r.headers["location"].rsplit("/", 1)[1])


def parallel(n: int, call) -> list:
    """`call(k)` for k < n, all at once (threads released together)."""
    barrier = threading.Barrier(n)

    def run(k):
        barrier.wait()
        return call(k)

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def request(arena: Arena, method: str, path: str, body: bytes, headers: dict, source: str = "127.0.0.1") -> tuple:
    """One request on a connection of its own from the address `source` (any of 127.0.0.0/8):
    (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", arena.port, timeout=60, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        conn.close()


def post_form(arena: Arena, path: str, form: dict, source: str = "127.0.0.1") -> tuple:
    body = urllib.parse.urlencode(form).encode()
    return request(arena, "POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"}, source)


def post_upload_raw(arena: Arena, cookie: str, csrf: str, name: str, source: bytes) -> tuple:
    boundary = "gbely" + uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'.encode(),
             f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
             f'Content-Type: text/x-python\r\n\r\n'.encode() + source + b"\r\n", f"--{boundary}--\r\n".encode()]
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Cookie": f"gbely_arena={cookie}"}
    return request(arena, "POST", "/upload", b"".join(parts), headers)


def wait_until(what, timeout=180):
    end = time.time() + timeout
    while time.time() < end:
        got = what()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out")


def slow_agent(name):
    """The expander taking 20 ms a round: a match lasts 3 s at least, so that it is still being
    played when the test kills its judge a second after it started (a plain expander's match in
    a quick sandbox can be over by then)."""
    return good_agent(name).replace("def decide(stav):\n", "def decide(stav):\n    time.sleep(0.02)\n", 1).replace(
        "import math\n", "import math\nimport time\n", 1)


def test_kill_9_of_the_server_and_of_a_worker_mid_judging_leaves_one_result_a_submission(sink, pages, tmp_path):
    # Judged by a worker process only at first; leases of 3 s, so a dead worker's job comes back soon.
    arena = Arena(tmp_path, sink, workers=0, lease=3, rounds=150)
    arena.start()
    try:
        ana, bo = pages(), pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        sign_in(bo.page, arena, sink, "bo@mail.example")
        # Two uploads each before any is judged: each participant's first is superseded by the
        # second (the last upload counts), and the two second ones are judged.
        uploads = [post_upload(p.page, arena, f"{who}{k}.py", slow_agent(f"{who} {k}"))
                   for k in range(2) for who, p in (("ana", ana), ("bo", bo))]
        superseded, ids = uploads[:2], uploads[2:]
        # (Closed before the kills: their event streams would be cut.)
        ana.close(), bo.close()
        worker = arena.start_worker()
        running = lambda: arena.sqlite("SELECT submission FROM jobs WHERE state = 'running'")
        first = wait_until(running)[0][0]
        time.sleep(1.0)
        arena.kill9(worker)
        assert arena.sqlite(f"SELECT COUNT(*) FROM results WHERE submission = {first}")[0][0] == 0, "killed mid-match"
        # The server judges now; it is killed in the middle of a match too, and started again.
        arena.stop()
        text = arena.config.read_text().replace("workers = 0", "workers = 1")
        arena.config.write_text(text)
        arena.workers = []
        arena.start()
        wait_until(running)
        time.sleep(1.0)
        arena.kill9(arena.proc)
        arena.start()
        done = lambda: arena.sqlite("SELECT COUNT(*) FROM jobs WHERE state <> 'done'")[0][0] == 0
        wait_until(done, timeout=600)
        results = arena.sqlite("SELECT submission, COUNT(*) FROM results GROUP BY submission ORDER BY submission")
        assert results == [(i, 1) for i in ids], results
        states = arena.sqlite("SELECT state FROM submissions ORDER BY id")
        assert states == [("superseded",)] * 2 + [("scored",)] * 2, states
        # Each job ended once; the killed attempts were taken again (attempt above 1).
        attempts = dict(arena.sqlite("SELECT submission, MAX(attempt) FROM jobs GROUP BY submission"))
        assert attempts[first] >= 2, attempts
        assert arena.sqlite("SELECT COUNT(*) FROM jobs")[0][0] == 4
    finally:
        arena.stop()


HOSTILE = '''AGENT_NAME = "nosy"
import os, sys

TARGETS = {targets!r}

def attempt(path):
    try:
        with open(path, "rb") as f:
            data = f.read(200)
        return "READ " + repr(data[:60])
    except Exception as e:
        return "refused " + type(e).__name__

def decide(stav):
    if stav["kolo"] == 0:
        for t in TARGETS:
            print("nosy:", t, attempt(t), file=sys.stderr)
        listing = []
        for d in {dirs!r}:
            try:
                listing.append(d + ": " + ",".join(os.listdir(d)))
            except Exception as e:
                listing.append(d + ": refused " + type(e).__name__)
        print("nosy: dirs", listing, file=sys.stderr)
        print("nosy: env", sorted(k for k in os.environ if "SMTP" in k or "ARENA" in k or k.startswith("PG")), file=sys.stderr)
    return {{"prikazy": []}}
'''


def test_a_hostile_submission_reads_nothing_of_others_nor_the_database_nor_the_configuration(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=20)
    arena.start()
    try:
        ana, eve = pages(), pages()
        sign_in(ana.page, arena, sink, "ana@mail.example")
        secret = "SECRET-MARK-" + "7" * 8
        ana_id = post_upload(ana.page, arena, "ana.py", good_agent("ana") + f"\n# {secret}\n")
        stored = arena.sqlite(f"SELECT stored FROM submissions WHERE id = {ana_id}")[0][0]
        targets = [str(arena.data / "submissions" / stored), str(arena.data / "arena.sqlite"), str(arena.config),
                   str(arena.clock), "/etc/shadow", "/proc/1/environ"]
        dirs = [str(arena.data / "submissions"), str(arena.data), str(tmp_path), "/"]
        sign_in(eve.page, arena, sink, "eve@mail.example")
        eve_id = post_upload(eve.page, arena, "nosy.py", HOSTILE.format(targets=targets, dirs=dirs))
        wait_until(lambda: arena.sqlite(f"SELECT state FROM submissions WHERE id = {eve_id}")[0][0] in ("scored", "disqualified", "check_failed", "error"))
        assert arena.sqlite(f"SELECT state, reason FROM submissions WHERE id = {eve_id}")[0] == ("scored", "")
        r = eve.context.request.get(f"{arena.url}/me/{eve_id}/log")
        assert r.status == 200
        log = r.text()
        lines = [l for l in log.splitlines() if l.startswith("nosy:")]
        assert len([l for l in lines if l.split(" ")[1] in targets]) == len(targets), log
        for t in targets:
            line = next(l for l in lines if l.startswith(f"nosy: {t} "))
            assert " refused " in line, line
        assert secret not in log and "SQLite format" not in log and "smtp://" not in log
        listing = next(l for l in lines if l.startswith("nosy: dirs"))
        assert stored not in listing and "arena.sqlite" not in listing, listing
        assert "nosy: env []" in log, log
        ana.close(), eve.close()
    finally:
        arena.stop()


def test_uploads_and_sign_in_emails_are_limited_and_names_are_shown_as_text(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=10, uploads_per_hour=2)
    arena.start()
    try:
        p, public = pages(), pages()
        # Five sign-in e-mails an address and hour from one requester (the configuration): twenty
        # asked at once send five, the count and the insert being one step.
        answers = parallel(20, lambda k: post_form(arena, "/signin", {"email": "mal@mail.example"}))
        assert sorted(status for status, _ in answers) == [200] * 5 + [429] * 15, answers
        assert all("too many sign-in e-mails to this address" in body for status, body in answers if status == 429)
        assert len(sink.to("mal@mail.example")) == 5
        # They were a stranger's (all from 127.0.0.1): the address's owner, elsewhere (127.0.0.2),
        # still gets a link.
        status, body = post_form(arena, "/signin", {"email": "mal@mail.example"}, source="127.0.0.2")
        assert status == 200, body
        # That link signs in.
        link = re.search(r"http://\S+/signin/[0-9a-f]{32}", body_of(sink.wait_for("mal@mail.example", "sign-in", 6))).group(0)
        p.page.goto(link)
        p.page.click("#confirm")
        p.page.wait_for_url(re.compile(r"/me$"))
        # A file over 512 KiB is refused and stored nowhere.
        big = "# " + "x" * (512 * 1024) + "\ndef decide(stav):\n    return []\n"
        r = p.context.request.post(arena.url + "/upload", max_redirects=0, multipart={
            "csrf": csrf_of(p.page), "file": {"name": "big.py", "mimeType": "text/x-python", "buffer": big.encode()}})
        assert r.status == 413 and "512 KiB" in r.text()
        # A name that is markup, and a file name that is a path: both shown as text, stored under our name.
        evil = '<img src=x onerror="document.title=1">'
        sid = post_upload(p.page, arena, "../../etc/evil<b>.py", f"AGENT_NAME = {evil!r}\n\ndef decide(stav):\n    return []\n")
        stored = arena.sqlite(f"SELECT stored, file_name FROM submissions WHERE id = {sid}")[0]
        assert re.fullmatch(r"[0-9a-f]{32}\.py", stored[0]) and stored[1] == "evil<b>.py", stored
        assert (arena.data / "submissions" / stored[0]).is_file() and not (tmp_path / "etc").exists()
        wait_until(lambda: arena.sqlite(f"SELECT state FROM submissions WHERE id = {sid}")[0][0] == "scored")
        public.open(arena.url + "/board")
        assert public.page.locator("#board td.agent").inner_text() == evil
        assert public.page.locator("#board img").count() == 0 and public.page.title() != "1"
        p.page.goto(f"{arena.url}/me/{sid}")
        assert "evil<b>.py" in p.page.locator("main").inner_text() and p.page.locator("main b:text('.py')").count() == 0
        # Two uploads an hour: the third is refused.
        post_upload(p.page, arena, "b.py", "def decide(stav):\n    return []\n")
        r = p.context.request.post(arena.url + "/upload", max_redirects=0, multipart={
            "csrf": csrf_of(p.page), "file": {"name": "c.py", "mimeType": "text/x-python", "buffer": b"def decide(stav):\n    return []\n"}})
        assert r.status == 429 and "the limit is 2" in r.text()
        assert arena.sqlite("SELECT COUNT(*) FROM submissions")[0][0] == 2
        # Twenty uploads at once by another participant, with a limit of 2 an hour: two stored.
        pat = pages()
        sign_in(pat.page, arena, sink, "pat@mail.example")
        cookie = next(c["value"] for c in pat.context.cookies() if c["name"] == "gbely_arena")
        token = csrf_of(pat.page)
        answers = parallel(20, lambda k: post_upload_raw(arena, cookie, token, f"p{k}.py", b"def decide(stav):\n    return []\n"))
        assert sorted(status for status, _ in answers) == [303] * 2 + [429] * 18, answers
        assert arena.sqlite("SELECT COUNT(*) FROM submissions WHERE email = 'pat@mail.example'")[0][0] == 2
        stored = {f.name for f in (arena.data / "submissions").iterdir()}
        assert len(stored) == 4, "the refused uploads' files are not kept"
        p.close(), public.close(), pat.close()
    finally:
        arena.stop()


def slow_upload(arena: Arena, cookie: str, csrf: str, between) -> tuple:
    """An upload whose body is sent in two halves, `between()` called after the first: (status, body)."""
    boundary = "gbely" + uuid.uuid4().hex
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.py"\r\n'
            f'Content-Type: text/x-python\r\n\r\ndef decide(stav):\r\n    return []\r\n--{boundary}--\r\n').encode()
    conn = http.client.HTTPConnection("127.0.0.1", arena.port, timeout=60)
    try:
        conn.putrequest("POST", "/upload")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(body)))
        conn.putheader("Cookie", f"gbely_arena={cookie}")
        conn.endheaders()
        conn.send(body[: len(body) // 2])
        between()
        try:
            conn.send(body[len(body) // 2:])
        except OSError:
            pass  # the server answered and closed first
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        conn.close()


def test_an_upload_counts_when_its_body_has_arrived_and_a_slow_body_is_refused(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=10, upload_seconds=3)
    arena.set_clock(AT_DEADLINE)
    arena.start()
    try:
        p = pages()
        sign_in(p.page, arena, sink, "ana@mail.example")
        cookie = next(c["value"] for c in p.context.cookies() if c["name"] == "gbely_arena")
        token = csrf_of(p.page)
        # Begun at the deadline's last second, arrived whole after it: refused, nothing stored.
        status, body = slow_upload(arena, cookie, token, lambda: arena.set_clock(AFTER_DEADLINE))
        assert status == 403 and "deadline passed" in body, (status, body)
        assert arena.sqlite("SELECT COUNT(*) FROM submissions")[0][0] == 0
        # A body that takes longer than upload_seconds (3 s) is refused too.
        arena.set_clock(AT_DEADLINE)
        status, body = slow_upload(arena, cookie, token, lambda: time.sleep(4))
        assert status == 408 and "took over 3 s" in body, (status, body)
        assert arena.sqlite("SELECT COUNT(*) FROM submissions")[0][0] == 0
        # Within both: accepted, stamped at its arrival.
        status, body = slow_upload(arena, cookie, token, lambda: time.sleep(0.5))
        assert status == 303, (status, body)
        assert arena.sqlite("SELECT COUNT(*) FROM submissions")[0][0] == 1
        p.close()
    finally:
        arena.stop()
