"""What the arena's tests share: an SMTP sink (aiosmtpd) that keeps the e-mails the site sends,
a PostgreSQL server of the test's own (Debian's initdb in a temporary folder), the competition's
configuration, the server and worker processes, and signing in through the e-mailed link."""

from __future__ import annotations

import email
import email.policy
import glob
import os
import pathlib
import re
import resource
import shutil
import signal
import socket
import sqlite3
import tempfile
import subprocess
import threading
import time
import urllib.request

from aiosmtpd.controller import Controller

from proc_kit import zombie_children  # noqa: F401 (the engine's browser tests' kit: see conftest.py)

GBELY = os.environ.get("GBELY_BIN") or str(pathlib.Path(__file__).resolve().parents[3] / "target" / "debug" / "gbely")
ROOT = pathlib.Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sink:
    """An SMTP server on 127.0.0.1 that keeps every message it is sent."""

    def __init__(self):
        self.messages: list[email.message.EmailMessage] = []
        self.lock = threading.Lock()
        sink = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
                with sink.lock:
                    sink.messages.append(msg)
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def to(self, address: str) -> list:
        with self.lock:
            return [m for m in self.messages if address in str(m["To"])]

    def wait_for(self, address: str, subject_part: str, count: int = 1, timeout: float = 60) -> email.message.EmailMessage:
        """The `count`-th message to `address` whose subject has `subject_part`."""
        end = time.time() + timeout
        while time.time() < end:
            found = [m for m in self.to(address) if subject_part in str(m["Subject"])]
            if len(found) >= count:
                return found[count - 1]
            time.sleep(0.1)
        raise AssertionError(f"no e-mail #{count} to {address} about {subject_part!r}; got {[str(m['Subject']) for m in self.to(address)]}")

    def stop(self):
        self.controller.stop()


def body_of(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


class Postgres:
    """A PostgreSQL server in a temporary folder, on 127.0.0.1, trusting local connections."""

    def __init__(self, folder: pathlib.Path):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        assert found, "the arena's PostgreSQL tests need Debian's postgresql (./run-tests installs it)"
        bindir = pathlib.Path(found[-1]).parent
        # Its own folder under /tmp: the test's folder may be closed to the server's user.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="gbely-pg-"))
        self.port = free_port()
        as_user: list[str] = []
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root: as the package's own user.
            shutil.chown(self.dir, "postgres")
            as_user = ["runuser", "-u", "postgres", "--"]
        self.as_user = as_user
        subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres", "--no-sync"],
                       check=True, capture_output=True)
        self.pg_ctl = str(bindir / "pg_ctl")
        subprocess.run([*as_user, self.pg_ctl, "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w", "-o",
                        f"-h 127.0.0.1 -p {self.port} -k {self.dir} -F", "start"], check=True, capture_output=True)
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def query(self, sql: str) -> str:
        out = subprocess.run([*self.as_user, "psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-At", "-c", sql],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self):
        subprocess.run([*self.as_user, self.pg_ctl, "-D", str(self.dir / "data"), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


CONFIG = """name = "Gbely test cup"
time_zone = "Europe/Bratislava"
public_url = "http://{host}:{port}"
port = {port}
organisers = ["org@mail.example"]
data = "data"
database = "{database}"
language = "{language}"
{rules}
[phases]
registration = "2026-10-05 00:00:00"
testing = "2026-10-19 00:00:00"
deadline = "2026-11-15 23:59:59"
final = "2026-11-27 18:00:00"

[leaderboard]
map = "gbely"
opponent = "council"
rounds = {rounds}

[final]
map = "seed:test-final"
size = 30
opponent = "council"
rate = {rate}
fill = "template"
rounds = {final_rounds}

[judge]
workers = {workers}
time_limit = 2.0
sandbox = "require"
check_rounds = 5
lease_seconds = {lease}
min_speed = {min_speed}

[limits]
uploads_per_hour = {uploads_per_hour}
upload_seconds = {upload_seconds}
signin_emails_per_hour = 5
header_seconds = {header_seconds}
connections = {connections}

[mail]
url = "smtp://127.0.0.1:{smtp}"
from = "Gbely test cup <cup@mail.example>"
"""

# Instants as UTC for the clock file: the deadline 2026-11-15 23:59:59 in Bratislava (UTC+1).
DURING_TESTING = "2026-11-01T10:00:00Z"
AT_DEADLINE = "2026-11-15T22:59:59Z"
AFTER_DEADLINE = "2026-11-15T23:00:00Z"


class Arena:
    """A competition: its folder, configuration, clock file and server process."""

    def __init__(self, folder: pathlib.Path, sink: Sink, database: str = "sqlite", rounds: int = 40, workers: int = 1,
                 lease: int = 60, rate: float = 20.0, final_rounds: int = 20, uploads_per_hour: int = 30,
                 upload_seconds: int = 60, header_seconds: int = 10, connections: int = 0,
                 descriptors: int | None = None, language: str = "en", rules: str | None = None,
                 host: str = "127.0.0.1", min_speed: float = 0.0):
        # The site's default language ("en": the older tests read English from clients that send
        # no Accept-Language); `rules`: a Markdown file's name in `folder`, for /rules.
        self.folder = folder
        # The server's descriptor limit, soft and hard (None: the test's own).
        self.descriptors = descriptors
        # `host`: the address it listens on and is known by (another than 127.0.0.1: a veth
        # address of a network namespace the test made).
        self.host = host
        self.port = free_port()
        self.url = f"http://{host}:{self.port}"
        self.config = folder / "arena.toml"
        self.config.write_text(CONFIG.format(host=host, min_speed=min_speed, port=self.port, database=database, rounds=rounds, workers=workers, lease=lease,
                                             rate=rate, final_rounds=final_rounds, smtp=sink.port, uploads_per_hour=uploads_per_hour,
                                             upload_seconds=upload_seconds, header_seconds=header_seconds,
                                             connections=connections, language=language,
                                             rules=f'rules = "{rules}"\n' if rules else ""))
        self.clock = folder / "clock"
        self.set_clock(DURING_TESTING)
        self.data = folder / "data"
        self.proc: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    def env(self) -> dict:
        return {**os.environ, "GBELY_ARENA_CLOCK": str(self.clock)}

    def set_clock(self, instant: str):
        self.clock.write_text(instant + "\n")

    def start(self):
        self.log = open(self.folder / f"server-{time.time_ns()}.log", "w")
        limit = self.descriptors
        preexec = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))) if limit else None
        listen = ["--listen", f"{self.host}:{self.port}"]
        self.proc = subprocess.Popen([GBELY, "arena", "serve", str(self.config), *listen], env=self.env(), stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=preexec)
        end = time.time() + 60
        while time.time() < end:
            assert self.proc.poll() is None, (self.folder / self.log.name).read_text()
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.read() == b"ok":
                        return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the arena did not answer")

    def start_worker(self) -> subprocess.Popen:
        log = open(self.folder / f"worker-{time.time_ns()}.log", "w")
        w = subprocess.Popen([GBELY, "arena", "worker", str(self.config)], env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.workers.append(w)
        return w

    def stop(self):
        for p in [self.proc, *self.workers]:
            if p and p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
        for p in [self.proc, *self.workers]:
            if p:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()

    def kill9(self, p: subprocess.Popen):
        """kill -9 of the process alone (its agents die with it: the sandbox's --die-with-parent)."""
        os.kill(p.pid, signal.SIGKILL)
        p.wait()

    def sqlite(self, sql: str) -> list:
        with sqlite3.connect(self.data / "arena.sqlite", timeout=30) as c:
            return c.execute(sql).fetchall()


def sign_in(page, arena: Arena, sink: Sink, address: str, nth: int = 1):
    """Signs `page` in as `address` through the e-mailed link."""
    page.goto(arena.url + "/signin")
    page.fill("input[name=email]", address)
    page.click("form[action='/signin'] button")
    page.wait_for_selector("#sent")
    msg = sink.wait_for(address.lower(), "sign-in link", nth)
    link = re.search(r"http://\S+/signin/[0-9a-f]{32}", body_of(msg)).group(0)
    page.goto(link)
    page.click("#confirm")
    page.wait_for_load_state()


def run_final(page):
    """On the organisers' page (`page` signed in as an organiser, the final ready): runs the final
    and waits for its live page's intro card."""
    page.wait_for_function("() => !document.getElementById('run-final').disabled")
    page.click("#run-final")
    page.wait_for_url(re.compile(r"/final/live/(#.*)?$"))
    page.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=60_000)


def agent_file(folder: pathlib.Path, name: str, body: str) -> pathlib.Path:
    p = folder / name
    p.write_text(body)
    return p


def good_agent(name: str) -> str:
    """The example expander under another AGENT_NAME."""
    src = (ROOT / "agents" / "expander.py").read_text()
    return src.replace("import math\n", f"import math\n\nAGENT_NAME = {name!r}\n", 1)


# Passes the check (5 rounds), then answers nonsense from round 10 on: the fourth violation
# (round 13) disqualifies it (SPEC §8).
LATE_NONSENSE = '''AGENT_NAME = "late nonsense"

def decide(stav):
    if stav["kolo"] >= 10:
        return "nonsense"
    return {"prikazy": []}
'''

# Unreadable answers in rounds 0–2: three violations, within the rules (§8: the fourth
# disqualifies). The check warns of them; the judge scores it.
THREE_UNREADABLE = '''AGENT_NAME = "three strikes"

def decide(stav):
    if stav["kolo"] < 3:
        return "nonsense"
    return {"prikazy": []}
'''

SYNTAX_ERROR = '''AGENT_NAME = "broken"

def decide(stav)
    return []
'''


def csrf_of(page) -> str:
    page.goto(page.url.split("/me")[0].split("/org")[0] + "/me")
    return page.locator("#upload input[name=csrf]").input_value()


def post_upload(page, arena: Arena, name: str, source: str) -> int:
    r = page.context.request.post(arena.url + "/upload", max_redirects=0, multipart={
        "csrf": csrf_of(page), "file": {"name": name, "mimeType": "text/x-python", "buffer": source.encode()}})
    assert r.status == 303, (r.status, r.text())
    return int(r.headers["location"].rsplit("/", 1)[1])


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
