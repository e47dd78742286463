"""The replay viewer, the live page and the human seat in a real browser.

Playwright (from pip) drives Debian's `chromium` (Playwright's own browser download is not
needed). `./run-tests` runs this file with the `gbely` binary that `cargo test` built; by hand:

    GBELY_BIN=target/debug/gbely target/py-venv/bin/python -m pytest -q -s gbely-engine/tests/browser

Figures (the draw time of a final's round under 4× CPU throttling, page sizes) are printed, not
asserted: speed is reported, never a pass/fail condition.
"""

from __future__ import annotations

import decimal
import gzip
import hashlib
import http.client
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
from browser_fixtures import Page

ROOT = Path(__file__).resolve().parents[3]


def gbely_bin() -> str:
    given = os.environ.get("GBELY_BIN")
    if given:
        # The tests run gbely from their own folders: a relative path is made absolute here.
        return str(Path(given).resolve())
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return str(target / "debug" / "gbely")


def gbely(*args: str, cwd: Path, ok=(0,)) -> subprocess.CompletedProcess:
    # stdin not a terminal: a live page is not kept up after its match (see Match).
    out = subprocess.run([gbely_bin(), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    assert out.returncode in ok, f"gbely {' '.join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


# An agent that answers garbage: four violations, disqualified in round 3. Its name holds markup
# and the page template's placeholders: it must show as text and break nothing.
BAD_NAME = '<img src=x onerror="window.pwned=1">{{DATA}} {{TITLE}}'
BAD_AGENT = f"""
AGENT_NAME = {BAD_NAME!r}

def decide(stav):
    return "garbage"
"""


@pytest.fixture(scope="session")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="session")
def duel(work) -> Path:
    gbely("play", "expander-rs", "--opponent", "council", "--map", "seed:browser", "--size", "30",
          "--rounds", "60", "--replay", "duel.json.gz", "--run-dir", "duel-run", "-q", cwd=work)
    gbely("replay", "view", "duel.json.gz", "-o", "duel.html", cwd=work)
    return work / "duel.html"


@pytest.fixture(scope="session")
def disqualified(work) -> Path:
    (work / "bad.py").write_text(BAD_AGENT)
    # Exit code 3: the user's agent was disqualified.
    gbely("play", "bad.py", "--opponent", "council", "--map", "seed:dq", "--size", "20", "--rounds", "30",
          "--replay", "dq.json.gz", "--run-dir", "dq-run", "-q", cwd=work, ok=(3,))
    gbely("replay", "view", "dq.json.gz", "-o", "dq.html", cwd=work)
    return work / "dq.html"


@pytest.fixture(scope="session")
def final(work) -> Path:
    gbely("final", "expander-rs", "--fill", "template-rs", "--replay", "final.json.gz", "--run-dir", "final-run",
          "-q", cwd=work)
    gbely("replay", "view", "final.json.gz", "-o", "final.html", cwd=work)
    return work / "final.html"


def shot(page: Page, name: str):
    """A screenshot for docs/ when GBELY_SCREENSHOTS names a folder."""
    folder = os.environ.get("GBELY_SCREENSHOTS")
    if folder:
        page.page.screenshot(path=str(Path(folder) / name))


def test_the_result_panel_tells_who_was_disqualified(disqualified, pages):
    p = pages().open(disqualified.as_uri()).wait_ready()
    assert p.page.locator("#resultbox").is_visible()
    headline = p.page.locator("#headline").inner_text()
    # SPEC §8: the fourth violation disqualifies; the duel ends at the end of that round (round 3).
    assert headline == f"council wins — {BAD_NAME} disqualified in round 3 (fourth violation)", headline
    rows = p.page.locator("#result tr").all_inner_texts()
    assert rows[1].startswith("1\tcouncil"), rows
    assert rows[2].startswith(f"DQ\t{BAD_NAME}"), rows
    assert "disqualified" in rows[2] and rows[2].rstrip().endswith("4"), rows
    # The name is text: no element was made from it, no script ran, the title is intact.
    assert p.page.locator("img").count() == 0
    assert p.page.evaluate("window.pwned") is None
    assert p.page.locator("#title").inner_text() == f"{BAD_NAME} vs council"
    # Four violations, the last one a disqualification, on the timeline.
    kinds = [m["kind"] for m in p.page.evaluate("window.gbely.markers()")]
    assert kinds.count("viol") == 3 and kinds.count("dq") == 1, kinds


def test_a_phone_shows_the_map_at_least_300px_wide(duel, pages):
    p = pages(390, 844, 3).open(duel.as_uri()).wait_ready()
    st = p.state()
    box = p.page.locator("#map").bounding_box()
    drawn = st["canvas"]["cs"] * st["canvas"]["w"]
    assert box["width"] >= 300 and drawn >= 300, (box, drawn)
    assert 0 <= box["y"] < 844 and box["y"] + st["canvas"]["cs"] * st["canvas"]["h"] <= 844
    # HiDPI: the canvas has a pixel per device pixel.
    assert p.page.evaluate("document.getElementById('map').width") == round(box["width"] * 3)
    shot(p, "viewer-duel-phone.png")


def test_the_address_keeps_the_round_and_refuses_nonsense(duel, pages):
    p = pages().open(duel.as_uri() + "#round=17").wait_ready()
    assert p.state()["round"] == 17
    p.page.keyboard.press("ArrowRight")
    p.page.wait_for_function("() => location.hash.includes('round=18')")
    assert p.state()["round"] == 18
    # With a control focused, an arrow key still moves one round, not two.
    p.page.locator("#fwd").focus()
    p.page.keyboard.press("ArrowLeft")
    p.page.wait_for_function("() => location.hash.includes('round=17')")
    assert p.state()["round"] == 17
    # Going to a round is immediate: no stepping through the rounds before it.
    p.page.evaluate("location.hash = '#round=55&cell=P03_04&zoom=14'")
    p.page.wait_for_function("() => window.gbely.state().round === 55")
    assert p.page.evaluate("window.gbely.view.s") == 14
    p.page.wait_for_function("() => location.hash.includes('cell=P03_04')")
    # Nonsense is ignored with a notice, and the map is still drawn.
    q = pages().open(duel.as_uri() + "#zoom=abc&round=xyz&cell=Q1&seat=9").wait_ready()
    assert q.page.locator("#toast").is_visible()
    assert "zoom=abc" in q.page.locator("#toast").inner_text()
    st = q.state()
    assert st["canvas"]["cs"] > 4 and st["round"] == -1
    p.page.evaluate("location.hash = '#round=45&zoom=fit&cell=P12_13'")
    p.page.wait_for_function("() => window.gbely.state().round === 45")
    shot(p, "viewer-duel-desktop.png")


def test_a_replay_inline_in_a_notebook_plays_in_its_iframe(work, pages):
    """``gbely.Replay._repr_html_`` (what Jupyter shows for a replay) is the viewer in an iframe
    whose ``srcdoc`` is the page: it has no URL of its own, so the viewer keeps its round in memory
    (writing the address would throw) and plays as on its own page."""
    import gbely as gbely_py  # ./run-tests runs this file in the venv that has the wheel
    gbely_py.play("expander-rs", "council", map="seed:inline", size=20, rounds=12, replay=work / "inline.json.gz")
    notebook = work / "notebook.html"
    notebook.write_text("<!doctype html><html><body><h1>a notebook cell</h1>"
                        + gbely_py.Replay.load(work / "inline.json.gz")._repr_html_() + "</body></html>")
    p = pages().open(notebook.as_uri())
    frame = p.page.frame_locator("iframe")
    inner = p.page.frames[1]
    inner.wait_for_function("() => document.body && document.body.dataset.ready === '1'", timeout=30000)
    assert inner.url == "about:srcdoc"
    last = gbely_py.Replay.load(work / "inline.json.gz").rounds_played - 1
    frame.locator("#last").click()
    inner.wait_for_function(f"() => window.gbely.state().round === {last}")
    frame.locator("#back").focus()
    p.page.keyboard.press("ArrowLeft")  # the keys work inside the frame too
    inner.wait_for_function(f"() => window.gbely.state().round === {last - 1}")
    p.page.wait_for_timeout(500)  # the address is written 300 ms after a change: no error from it
    assert inner.url == "about:srcdoc"


def test_wheel_drag_keys_and_the_timeline(duel, pages):
    p = pages().open(duel.as_uri() + "#round=20").wait_ready()
    box = p.page.locator("#map").bounding_box()
    before = p.page.evaluate("window.gbely.view.s")
    p.page.mouse.move(box["x"] + 200, box["y"] + 200)
    p.page.mouse.wheel(0, -600)
    p.page.wait_for_function("() => location.hash.includes('zoom=') && !location.hash.includes('zoom=fit')")
    after = p.page.evaluate("window.gbely.view.s")
    assert after > before * 1.5, (before, after)
    # Dragging pans the map, and a drag is not a click: nothing gets selected.
    ox = p.page.evaluate("window.gbely.view.ox")
    p.page.mouse.down()
    p.page.mouse.move(box["x"] + 120, box["y"] + 180, steps=5)
    p.page.mouse.up()
    assert p.page.evaluate("window.gbely.view.ox") < ox
    assert "cell=" not in p.page.evaluate("location.hash")
    # `0` fits the map again; `?` opens the key help, Escape closes it.
    p.page.keyboard.press("0")
    p.page.wait_for_function("() => location.hash.includes('zoom=fit')")
    p.page.keyboard.press("?")
    assert p.page.locator("#help").is_visible()
    p.page.keyboard.press("Escape")
    assert not p.page.locator("#help").is_visible()
    # A key moment on the timeline takes the page to its round and its cell.
    first = p.page.evaluate("window.gbely.markers()[0]")
    p.page.locator("#moments div").first.click()
    p.page.wait_for_function(f"() => window.gbely.state().round === {first['r']}")
    p.page.wait_for_function("() => location.hash.includes('cell=')")
    # `]` goes to the next key moment.
    second = p.page.evaluate("window.gbely.markers()[1]")
    p.page.locator("#map").focus()
    p.page.keyboard.press("]")
    assert p.state()["round"] == second["r"]


def test_seat_view_shows_only_what_the_seat_observed(duel, pages):
    p = pages().open(duel.as_uri() + "#round=10&seat=0").wait_ready()
    assert p.page.locator("#seatview").input_value() == "0"
    # Every cell drawn in the fog colour is neither the seat's nor a neighbour of its cells.
    fogged = p.page.evaluate("""() => {
        const st = window.gbely.state(); const W = st.canvas.w, H = st.canvas.h;
        const c = document.getElementById('map'), ctx = c.getContext('2d');
        const s = window.gbely.view.s, ox = window.gbely.view.ox, oy = window.gbely.view.oy;
        const out = [];
        for (let i = 0; i < W * H; i++) {
          const x = Math.floor(ox + (i % W) * s + s * 0.3), y = Math.floor(oy + Math.floor(i / W) * s + s * 0.3);
          const d = ctx.getImageData(x, y, 1, 1).data;
          out.push(d[0] === 0x1a && d[1] === 0x1c && d[2] === 0x21 ? 1 : 0);
        }
        return out;
    }""")
    # The observation of round 10 is made of the state at the end of round 9.
    p.page.evaluate("location.hash = '#round=9'")
    p.page.wait_for_function("() => window.gbely.state().round === 9")
    st = p.state()
    w, h, owners = st["canvas"]["w"], st["canvas"]["h"], st["owners"]

    def seen(i):
        r, c = divmod(i, w)
        near = [i] + [j for j, ok in ((i - w, r > 0), (i + w, r < h - 1), (i - 1, c > 0), (i + 1, c < w - 1)) if ok]
        return any(owners[j] == "0" for j in near)

    assert all(fogged[i] == (0 if seen(i) else 1) for i in range(w * h))
    assert 0 < sum(fogged) < w * h


def test_a_final_round_draws_fast_under_4x_cpu_throttling(final, pages):
    p = pages(1366, 768).open(final.as_uri()).wait_ready()
    cdp = p.context.new_cdp_session(p.page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    # Each round: everything the page redraws, and a one-pixel read of the map that makes the
    # canvas finish its drawing (software raster has no GPU to hide it in).
    times = p.page.evaluate("""() => {
        const ctx = document.getElementById('map').getContext('2d'), out = [];
        for (let k = 1; k < window.gbely.frames(); k++) {
            const t = performance.now(); window.gbely.show(k); ctx.getImageData(0, 0, 1, 1); out.push(performance.now() - t);
        }
        return out;
    }""")
    times.sort()
    rate = p.page.evaluate("""() => new Promise((done) => {
        document.getElementById('speed').value = '16';
        window.gbely.show(0); const t0 = performance.now(); document.getElementById('play').click();
        setTimeout(() => { document.getElementById('play').click(); done(window.gbely.state().frame / ((performance.now() - t0) / 1000)); }, 4000);
    })""")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
    size = final.stat().st_size
    print(f"\n[figures] final 90x90 at 1366x768, one round drawn (map, standings, charts, timeline, events) with 4x CPU throttling:"
          f" median {times[len(times) // 2]:.1f} ms, 90th percentile {times[int(len(times) * 0.9)]:.1f} ms, max {times[-1]:.1f} ms;"
          f" playing at 16 rounds/s gives {rate:.1f} rounds/s; page {size / 1e6:.2f} MB")
    shot(p, "viewer-final-desktop.png")


def test_4k_and_laptop_windows_fit_the_whole_map(final, pages):
    for width, height in [(1366, 768), (3840, 2160)]:
        p = pages(width, height).open(final.as_uri() + "#round=80").wait_ready()
        st = p.state()
        bottom = st["canvas"]["y"] + st["canvas"]["cs"] * st["canvas"]["h"]
        assert bottom <= height, (width, height, st["canvas"])
        if width == 3840:
            assert st["canvas"]["cs"] * st["canvas"]["w"] > 1500, st["canvas"]


# ---------- live pages ----------

RUNNING: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_match_left_behind():
    """A failed test must not leave a match waiting for its human seat forever."""
    yield
    while RUNNING:
        proc = RUNNING.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Match:
    """`gbely play|final … --watch` in the background; its address from stderr.

    Its stdin is not a terminal, so the page stops being served once the match is over unless
    `--keep-serving` is given (from a terminal it stays up until Ctrl-C).
    """

    def __init__(self, work: Path, *args: str):
        self.err = open(work / f"watch-{time.monotonic_ns()}.err", "w+")
        self.proc = subprocess.Popen([gbely_bin(), *args, "--no-open"], cwd=work, stdout=subprocess.PIPE,
                                     stderr=self.err, stdin=subprocess.DEVNULL, text=True)
        RUNNING.append(self.proc)
        deadline = time.monotonic() + 60
        while True:
            self.err.seek(0)
            m = re.search(r"(?:watch the match|play seat \d+ \(.*\)) at (http://\S+)", self.err.read())
            if m:
                self.url = m.group(1)
                break
            assert self.proc.poll() is None and time.monotonic() < deadline, "no address on stderr"
            time.sleep(0.05)
        self.stderr_head = m.group(0)
        u = urllib.parse.urlparse(self.url)
        self.port = u.port
        self.token = urllib.parse.parse_qs(u.query)["t"][0]

    def request(self, method: str, path: str, host: str | None = None, body: str | None = None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Host": host or f"127.0.0.1:{self.port}"}
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read().decode()

    def wait(self) -> str:
        out, _ = self.proc.communicate(timeout=120)
        return out


def test_the_live_server_refuses_requests_without_the_token_or_with_another_host(work, pages):
    m = Match(work, "play", "expander-rs", "--opponent", "council", "--map", "seed:live", "--size", "20",
              "--rounds", "40", "--watch", "--watch-speed", "8", "--run-dir", "live-run")
    assert m.url.startswith("http://127.0.0.1:")
    assert m.request("GET", f"/?t={m.token}")[0] == 200
    assert m.request("GET", "/")[0] == 403
    assert m.request("GET", f"/api/turns?from=0&t={m.token[:-1]}x")[0] == 403
    assert m.request("GET", f"/?t={m.token}", host=f"evil.example:{m.port}")[0] == 403
    assert m.request("GET", f"/api/header?t={m.token}", host="127.0.0.1")[0] == 403
    assert m.request("GET", f"/api/header?t={m.token}", host=f"localhost:{m.port}")[0] == 200
    # The page follows the match as rounds are resolved, then shows the result.
    p = pages().open(m.url)
    p.page.wait_for_function("() => window.gbely.frames() > 2", timeout=30000)
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    assert p.page.evaluate("window.gbely.frames()") == 41
    out = m.wait()
    assert m.proc.returncode == 0, out
    replay = work / "live-run" / "replay.json.gz"
    assert json.loads(gzip.decompress(replay.read_bytes()))["result"]["last_round"] == 39
    # The live page drew the same state as the replay's viewer.
    gbely("replay", "view", str(replay), "-o", "live.html", cwd=work)
    q = pages().open((work / "live.html").as_uri() + "#round=39").wait_ready()
    p.page.evaluate("window.gbely.show(40)")
    assert p.state()["owners"] == q.state()["owners"]
    # Once the match is over the live page is the replay's page: the same key moments, the same
    # events (with the discarded commands' text).
    assert p.page.evaluate("window.gbely.markers()") == q.page.evaluate("window.gbely.markers()")
    assert p.page.locator("#events").inner_text() == q.page.locator("#events").inner_text()


def test_three_rounds_played_by_clicking_as_the_human_seat(work, pages):
    m = Match(work, "play", "human", "--opponent", "council", "--map", "seed:human", "--size", "16",
              "--rounds", "3", "--run-dir", "human-run")
    # The agent protocol, as a script would use it: nothing to read before the page connects is
    # fine; the observation is exactly SPEC §5.
    deadline = time.monotonic() + 30
    while (answer := m.request("GET", f"/api/observation?t={m.token}"))[0] == 204 and time.monotonic() < deadline:
        time.sleep(0.05)
    status, body = answer
    assert status == 200, (status, body)
    obs = json.loads(body)
    assert set(obs) == {"kolo", "moja_zakladna", "moje_pola", "viditelne_susedne_pola"} and obs["kolo"] == 0
    # The match itself is hidden from the human seat while it is played.
    assert m.request("GET", f"/api/turns?t={m.token}")[0] == 403
    p = pages(1366, 768).open(m.url)
    sent = []
    for rnd in range(3):
        p.page.wait_for_function(f"() => window.gbely.human.round === {rnd} && window.gbely.human.waiting", timeout=30000)
        obs = p.page.evaluate("window.gbely.human.obs")
        base = obs["moja_zakladna"]
        mine = {c["id"]: c for c in obs["moje_pola"]}
        src = mine[base] if base in mine else obs["moje_pola"][0]
        # Attack a neutral neighbour: the page suggests floor(defence) + 1.
        visible = {c["id"]: c for c in obs["viditelne_susedne_pola"]}
        target = next(n for n in src["susedia"] if n in visible)
        if rnd == 0:
            # A notice of this round's (a cell not its own picked first)...
            click(p, target)
            assert p.page.locator("#toast").inner_text() == "pick one of your cells first"
        if rnd == 1:
            # ... does not outlive its round (it stayed 6 s, into the next rounds).
            assert p.page.locator("#toast").is_hidden()
        click(p, src["id"])
        click(p, target)
        assert p.page.locator("#cmdtype").input_value() == "ATTACK"
        t = visible[target]
        bonus = {"luka": 1.0, "vrch": 1.5, "rieka": 1.3}[t["typ"]]  # TERENNY_BONUS, SPEC §12
        want = int(t["posadka"] * bonus + t["opevnenie"]) + 1
        assert float(p.page.locator("#cmdamount").input_value()) == want
        p.page.locator("#cmdadd").click()
        # And fortify the source with 1 unit: click it twice.
        click(p, src["id"])
        click(p, src["id"])
        assert p.page.locator("#cmdtype").input_value() == "FORTIFY"
        p.page.locator("#cmdamount").fill("1")
        p.page.keyboard.press("Enter")
        assert p.page.locator("#pending div").count() == 2
        sent.append([{"typ": "ATTACK", "z": src["id"], "na": target, "pocet": want},
                     {"typ": "FORTIFY", "pole": src["id"], "investicia": 1}])
        if rnd == 2:
            shot(p, "human-seat-desktop.png")
        if rnd == 0:
            # A zoom while playing (regression: the finished page then opened at round "start").
            p.page.mouse.move(5, 5)
            p.page.keyboard.press("+")
        p.page.locator("#endturn").click()
    # After the match the page shows the whole match and its result, at its last round.
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    p.page.wait_for_function("() => window.gbely.state().round === 2", timeout=10000)
    assert p.page.locator("#roundlabel").inner_text() == "round 2 / 2"
    m.wait()
    assert m.proc.returncode == 0
    replay = work / "human-run" / "replay.json.gz"
    for rnd in range(3):
        out = gbely("replay", "show", str(replay), "--observation", "--json", "--seat", "0", "--round", str(rnd), cwd=work).stdout
        answer = json.loads(out.split("# its answer\n")[1])
        assert answer == {"prikazy": sent[rnd]}, (rnd, answer)


def click(p: Page, cell_id: str):
    """Clicks the middle of a cell of the human seat's map."""
    r, c = (int(x) for x in cell_id[1:].split("_"))
    # The human seat's grid starts at the corner of what it has seen.
    r0, c0 = p.page.evaluate("window.gbely.origin()")
    r, c = r - r0, c - c0
    v = p.page.evaluate("({s: window.gbely.view.s, ox: window.gbely.view.ox, oy: window.gbely.view.oy})")
    box = p.page.locator("#map").bounding_box()
    p.page.mouse.click(box["x"] + v["ox"] + (c + 0.5) * v["s"], box["y"] + v["oy"] + (r + 0.5) * v["s"])


def test_the_human_page_on_a_phone_and_a_script_speaking_its_protocol(work, pages):
    m = Match(work, "play", "human", "--map", "seed:phone", "--size", "16", "--rounds", "4", "--run-dir", "phone-run")
    p = pages(390, 844, 2).open(m.url)
    # A script answers for the page (POST the answer JSON): three rounds of expanding from the
    # base with everything ready, the fourth by the page.
    for rnd in range(3):
        p.page.wait_for_function(f"() => window.gbely.human.round === {rnd} && window.gbely.human.waiting", timeout=30000)
        status, body = m.request("GET", f"/api/observation?t={m.token}")
        assert status == 200
        obs = json.loads(body)
        visible = {c["id"] for c in obs["viditelne_susedne_pola"]}
        cmds = [{"typ": "ATTACK", "z": c["id"], "na": n, "pocet": c["jednotky"] / 2}
                for c in obs["moje_pola"] for n in c["susedia"][:1] if n in visible]
        status, body = m.request("POST", f"/api/answer?round={rnd}&t={m.token}", body=json.dumps({"prikazy": cmds}))
        assert status == 200 and json.loads(body) == {"round": rnd, "commands": len(cmds)}
        # A second answer for the same round is refused (the next round may be asked already).
        assert m.request("POST", f"/api/answer?round={rnd}&t={m.token}", body="[]")[0] == 409
    assert m.request("POST", f"/api/answer?t={m.token}", body="not json")[0] == 400
    p.page.wait_for_function("() => window.gbely.human.round === 3 && window.gbely.human.waiting", timeout=30000)
    assert p.page.locator("#map").bounding_box()["width"] >= 300
    # A pick does not focus the amount field (a phone's keyboard covered the map at every pick),
    # and "end turn" is in the window with the command's form open.
    obs = p.page.evaluate("window.gbely.human.obs")
    src = next(c for c in obs["moje_pola"] if any(n in {v["id"] for v in obs["viditelne_susedne_pola"]} for n in c["susedia"]))
    click(p, src["id"])
    click(p, next(n for n in src["susedia"] if n in {v["id"] for v in obs["viditelne_susedne_pola"]}))
    assert p.page.locator("#cmdform").is_visible()
    assert p.page.evaluate("document.activeElement.id") != "cmdamount"
    end = p.page.locator("#endturn").bounding_box()
    assert end["y"] >= 0 and end["y"] + end["height"] <= 844, end
    p.page.locator("#cmdcancel").click()
    shot(p, "human-seat-phone.png")
    p.page.locator("#endturn").click()
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    m.wait()
    assert m.proc.returncode == 0


def test_a_human_seat_with_a_time_limit_that_never_answers_is_disqualified(work):
    # --human-limit: no answer in time is a timeout violation; the fourth disqualifies (SPEC §8).
    m = Match(work, "play", "human", "--human-limit", "0.2", "--map", "seed:slow", "--size", "12", "--rounds", "10",
              "--run-dir", "slow-run", "--json")
    out = json.loads(m.wait())
    assert m.proc.returncode == 3, out
    me = out["sides"][0]
    assert me["disqualified"] and me["violations"] == 4 and out["last_round"] == 3, out


def test_one_human_seat_per_match(work):
    out = gbely("final", "human", "human", "--rounds", "2", "--no-open", "--run-dir", "two-humans", cwd=work, ok=(1,))
    assert "one human seat per match" in out.stderr
    assert not (work / "two-humans" / "replay.json.gz").exists()


# ---------- colours ----------

# Colour-vision deficiencies (Machado, Oliveira & Fernandes 2009, severity 1), applied in linear
# RGB: the same matrices as the Rust test of the colour table (replays/terminal.rs).
VISIONS = {
    "normal": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def css_rgb(text: str) -> tuple[int, int, int]:
    m = re.match(r"rgba?\((\d+), (\d+), (\d+)", text)
    assert m, text
    return int(m[1]), int(m[2]), int(m[3])


def simulated(rgb, m):
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return [min(1.0, max(0.0, sum(m[i][j] * lin[j] for j in range(3)))) for i in range(3)]


def lab(rgb, m):
    s = simulated(rgb, m)
    x = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2]
    y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]
    z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2]
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116  # noqa: E731
    fx, fy, fz = f(x / 0.95047), f(y), f(z / 1.08883)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def contrast(a, b, m) -> float:
    ya, yb = (sum(k * c for k, c in zip((0.2126, 0.7152, 0.0722), simulated(x, m))) for x in (a, b))
    return (max(ya, yb) + 0.05) / (min(ya, yb) + 0.05)


def test_the_eight_armies_and_the_council_stay_apart_on_the_dark_page(final, pages):
    p = pages(1366, 768).open(final.as_uri()).wait_ready()
    swatches = [css_rgb(c) for c in p.page.evaluate(
        "[...document.querySelectorAll('#standings .sw')].map((e) => getComputedStyle(e).backgroundColor)")]
    backgrounds = [css_rgb(c) for c in p.page.evaluate("""[document.body, document.querySelector('.box'),
        document.getElementById('mapbox')].map((e) => getComputedStyle(e).backgroundColor)""")]
    assert len(swatches) == 9 and len(set(swatches)) == 9, swatches
    closest, darkest = 1e9, 1e9
    for vision, m in VISIONS.items():
        labs = [lab(c, m) for c in swatches]
        for i in range(9):
            for j in range(i + 1, 9):
                d = sum((a - b) ** 2 for a, b in zip(labs[i], labs[j])) ** 0.5
                assert d >= 15, (vision, swatches[i], swatches[j], d)
                closest = min(closest, d)
            for bg in backgrounds:
                k = contrast(swatches[i], bg, m)
                # WCAG 2, 1.4.11: 3:1 for what must be seen of a graphic.
                assert k >= 3, (vision, swatches[i], bg, k)
                darkest = min(darkest, k)
    print(f"\n[figures] seat colours: closest pair ΔE {closest:.1f} (CIE76, any simulated vision), lowest contrast on the page {darkest:.2f}:1")


# ---------- polish ----------

def test_no_error_on_a_phone_over_twenty_loads(duel, work, browser):
    # Regression: the chart and resize handlers ran before the data had loaded ("Cannot read
    # properties of null (reading 'seats')") in 12 of 18 loads on a phone, also on the human seat.
    m = Match(work, "play", "human", "--map", "seed:phones", "--size", "12", "--rounds", "3", "--run-dir", "phones-run")
    for url in [duel.as_uri(), m.url]:
        for k in range(20):
            p = Page(browser, 390, 844, 3)
            p.open(url)
            p.page.set_viewport_size({"width": 844, "height": 390})
            p.page.set_viewport_size({"width": 390, "height": 844})
            if url == m.url:
                p.page.wait_for_function("() => window.gbely.human.waiting", timeout=30000)
            else:
                p.wait_ready()
            p.page.evaluate("window.dispatchEvent(new Event('resize'))")
            p.page.wait_for_timeout(30)
            p.close()


def cell_centre(p: Page, i: int) -> tuple[float, float]:
    """The middle of cell i of the map in the window's coordinates."""
    st = p.state()
    v = p.page.evaluate("({s: window.gbely.view.s, ox: window.gbely.view.ox, oy: window.gbely.view.oy})")
    box = p.page.locator("#map").bounding_box()
    w = st["canvas"]["w"]
    return box["x"] + v["ox"] + (i % w + 0.5) * v["s"], box["y"] + v["oy"] + (i // w + 0.5) * v["s"]


def within(box: dict, width: int, height: int) -> bool:
    return box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height


def test_hover_shows_a_tooltip_by_the_cursor_that_a_click_pins(final, browser):
    # Regression: at 1366×768 the hovered cell's information was only in the side panel, below
    # the window (y ≈ 1100–1400).
    p = Page(browser, 1366, 768)
    p.open(final.as_uri() + "#round=60").wait_ready()
    st = p.state()
    w, h = st["canvas"]["w"], st["canvas"]["h"]
    for i in [0, w - 1, (h - 1) * w, h * w - 1, (h // 2) * w + w // 2]:
        x, y = cell_centre(p, i)
        p.page.mouse.move(x, y)
        tip = p.page.locator("#tip")
        tip.wait_for(state="visible")
        box = tip.bounding_box()
        assert within(box, 1366, 768), (i, box)
        # By the cursor: its nearest corner within 40 px.
        dx = min(abs(box["x"] - x), abs(box["x"] + box["width"] - x))
        dy = min(abs(box["y"] - y), abs(box["y"] + box["height"] - y))
        assert dx <= 40 and dy <= 40, (i, box, x, y)
        r, c = divmod(i, w)
        assert tip.inner_text().startswith(f"P{r:02d}_{c:02d}"), tip.inner_text()
    # A click pins it: it stays on that cell while the cursor looks at others and leaves the map.
    p.page.mouse.click(x, y)
    pin = p.page.locator("#pin")
    pin.wait_for(state="visible")
    x2, y2 = cell_centre(p, 0)
    p.page.mouse.move(x2, y2)
    assert p.page.locator("#tip").inner_text().startswith("P00_00")
    p.page.mouse.move(683, 5)
    assert p.page.locator("#tip").is_hidden() and pin.is_visible()
    assert pin.inner_text().startswith(f"P{r:02d}_{c:02d}") and within(pin.bounding_box(), 1366, 768)
    p.page.keyboard.press("Escape")
    assert pin.is_hidden()
    p.close()
    # On a touch screen a tap pins the tip.
    t = Page(browser, 390, 844, 3)
    t.context.close()
    t.context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3, has_touch=True, is_mobile=True)
    t.page = t.context.new_page()
    t.page.on("pageerror", lambda e: t.errors.append(f"page error: {e}"))
    t.open(final.as_uri() + "#round=60").wait_ready()
    x, y = cell_centre(t, w * h - 1)
    t.page.touchscreen.tap(x, y)
    t.page.locator("#pin").wait_for(state="visible")
    assert within(t.page.locator("#pin").bounding_box(), 390, 844)
    assert t.page.locator("#pin").inner_text().startswith(f"P{h - 1:02d}_{w - 1:02d}")
    t.close()


def test_the_key_help_fits_the_window_and_has_a_legend_of_the_map(duel, pages):
    # Regression: the rows of the key help did not wrap, and the box was cut off on the right.
    for width, height in [(1366, 768), (390, 844)]:
        p = pages(width, height).open(duel.as_uri()).wait_ready()
        p.page.keyboard.press("?")
        box = p.page.locator("#help .box")
        assert within(box.bounding_box(), width, height), (width, box.bounding_box())
        assert p.page.evaluate("(() => { const b = document.querySelector('#help .box'); return b.scrollWidth <= b.clientWidth; })()")
        # The legend: every symbol the map draws, each a picture drawn by the map's code and a line of text.
        items = p.page.evaluate("""[...document.querySelectorAll('#legend > div:not(.marks)')].map((d) => {
            const c = d.querySelector('canvas'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let painted = 0; for (let k = 3; k < px.length; k += 4) painted += px[k] > 0;
            return { text: d.innerText, painted: painted / (c.width * c.height) };
        })""")
        texts = " ".join(i["text"] for i in items)
        for word in ["units", "neutral", "hill", "river", "base", "taken this round", "selected", "not seen", "ATTACK"]:
            assert word in texts, (word, texts)
        assert all(i["painted"] > 0.9 for i in items), items
        if width == 1366:
            shot(p, "viewer-help.png")


def test_the_final_charts_have_a_legend_and_values_on_hover(final, pages):
    # Regression: eight lines between 5 % and 11 % with no legend and no values.
    p = pages(1366, 768).open(final.as_uri() + "#round=100").wait_ready()
    legend = p.page.locator("#chartlegend > span").all_inner_texts()
    names = [r.split("\t")[0] for r in p.page.locator("#standings tr[data-seat]").all_inner_texts()]
    assert len(legend) == 9 and [t.strip() for t in legend] == [n.strip() for n in names], (legend, names)
    p.page.locator("#chartsbox").scroll_into_view_if_needed()
    box = p.page.locator("#chart").bounding_box()
    p.page.mouse.move(box["x"] + box["width"] - 6, box["y"] + box["height"] / 2)
    tip = p.page.locator("#charttip")
    tip.wait_for(state="visible")
    assert within(tip.bounding_box(), 1366, 768)
    rows = tip.locator("div").all_inner_texts()
    assert rows[0] == "round 149", rows
    shares = [float(re.search(r"([\d.]+) %$", r)[1]) for r in rows[1:]]
    assert len(shares) == 9 and shares == sorted(shares, reverse=True), rows
    # The values are the standings' at that round.
    p.page.evaluate("window.gbely.show(150)")
    want = sorted((float(r.split("\t")[1].rstrip(" %")) for r in p.page.locator("#standings tr[data-seat]").all_inner_texts()), reverse=True)
    assert shares == want, (shares, want)
    ubox = p.page.locator("#uchart").bounding_box()
    p.page.mouse.move(ubox["x"] + ubox["width"] / 2, ubox["y"] + ubox["height"] / 2)
    assert tip.locator("div").count() == 10 and "%" not in tip.inner_text()
    p.page.mouse.move(5, 5)
    assert tip.is_hidden()


def test_the_controls_stay_put_while_the_round_label_grows(final, pages):
    p = pages(1366, 768).open(final.as_uri()).wait_ready()
    xs = set()
    for frame in [0, 1, 10, 11, 100, 150]:
        p.page.evaluate(f"window.gbely.show({frame})")
        xs.add(round(p.page.locator("#speed").bounding_box()["x"], 1))
    assert len(xs) == 1, xs


def test_key_moments_have_drawn_icons_and_plain_words(disqualified, duel, pages):
    p = pages().open(disqualified.as_uri()).wait_ready()
    rows = p.page.locator("#moments > div")
    kinds = [rows.nth(k).locator("canvas.icon").get_attribute("data-kind") for k in range(rows.count())]
    assert kinds == ["viol", "viol", "viol", "dq"], kinds
    # Regression: "⛔" was a missing-font box on Debian's Chromium; the icons are drawn.
    assert "⛔" not in p.page.locator("#moments").inner_text()
    box = rows.nth(3).locator("canvas.icon").bounding_box()
    assert box["width"] >= 10 and box["height"] >= 10, box
    # The key help names them.
    assert p.page.locator("#legend .marks canvas.icon").count() == 7
    # One command, not "1 commands"; many commands in the plural.
    q = pages().open(duel.as_uri()).wait_ready()
    counts = q.page.evaluate("""(() => { const out = []; for (let k = 1; k < window.gbely.frames(); k++) {
        window.gbely.show(k); for (const d of document.querySelectorAll('#events div')) if (/: \\d+ commands?$/.test(d.textContent)) out.push(d.textContent); }
        return out; })()""")
    assert counts and all(not re.search(r": 1 commands$", c) and not re.search(r": ([02-9]|\d\d+) command$", c) for c in counts), counts
    assert any(re.search(r"council: \d+ commands", c) for c in counts), "the Council's commands are counted"


def test_a_seats_view_says_it_is_the_state_before_the_round_was_resolved(duel, pages):
    p = pages().open(duel.as_uri() + "#round=10&seat=0").wait_ready()
    note = p.page.locator("#viewnote")
    assert note.is_visible()
    assert "view of round 10" in note.inner_text() and "before the round was resolved" in note.inner_text(), note.inner_text()
    p.page.keyboard.press("v")
    p.page.keyboard.press("v")
    assert p.page.locator("#seatview").input_value() == "-1" and note.is_hidden()


def number_bands(p: Page, ids: list[str]) -> list[list[int]]:
    """The pixels of the band where each cell's units are written (0.57–0.87 of its height)."""
    return p.page.evaluate("""(ids) => {
        const [r0, c0] = window.gbely.origin(), v = window.gbely.view, c = document.getElementById('map');
        const ctx = c.getContext('2d'), k = c.width / c.getBoundingClientRect().width;
        return ids.map((id) => {
            const r = Number(id.slice(1, 3)) - r0, q = Number(id.slice(4)) - c0;
            const x = Math.round((v.ox + (q + 0.1) * v.s) * k), y = Math.round((v.oy + (r + 0.57) * v.s) * k);
            return Array.from(ctx.getImageData(x, y, Math.round(0.8 * v.s * k), Math.round(0.3 * v.s * k)).data);
        });
    }""", ids)


def test_the_human_seat_keeps_its_grid_warns_of_a_hopeless_attack_and_stays_up(work, pages):
    m = Match(work, "play", "human", "--opponent", "council", "--map", "seed:hall", "--size", "16", "--rounds", "4",
              "--run-dir", "hall-run", "--keep-serving")
    # How to play, not "watch the match".
    assert m.stderr_head.startswith("play seat 0 (human) at http://"), m.stderr_head
    m.err.seek(0)
    assert "Enter adds the command, E ends the turn" in m.err.read()
    p = pages(1366, 768).open(m.url)
    where, seen = [], []
    for rnd in range(4):
        p.page.wait_for_function(f"() => window.gbely.human.round === {rnd} && window.gbely.human.waiting", timeout=30000)
        obs = p.page.evaluate("window.gbely.human.obs")
        base = obs["moja_zakladna"]
        r0, c0 = p.page.evaluate("window.gbely.origin()")
        v = p.page.evaluate("({s: window.gbely.view.s, ox: window.gbely.view.ox, oy: window.gbely.view.oy})")
        where.append((v["ox"] + (int(base[4:]) - c0) * v["s"], v["oy"] + (int(base[1:3]) - r0) * v["s"], v["s"]))
        seen.append(len(obs["viditelne_susedne_pola"]) + len(obs["moje_pola"]))
        if rnd < 3:
            visible = {c["id"] for c in obs["viditelne_susedne_pola"]}
            cmds = [{"typ": "ATTACK", "z": c["id"], "na": n, "pocet": c["jednotky"] - 0.5}
                    for c in obs["moje_pola"] for n in c["susedia"][:1] if n in visible and c["jednotky"] > 4]
            assert m.request("POST", f"/api/answer?round={rnd}&t={m.token}", body=json.dumps({"prikazy": cmds}))[0] == 200
    # Regression: the grid was the box around what the seat had seen, so the map moved and
    # rescaled every round as that box grew.
    assert seen[-1] > seen[0] and len(set(where)) == 1, (seen, where)
    # An attack weaker than the defence shown is accepted with a warning (it can be the plan: a
    # failed attack wears the defence down).
    mine = {c["id"]: c for c in obs["moje_pola"]}
    src = mine[base]
    target = next(c for c in obs["viditelne_susedne_pola"] if c["id"] in src["susedia"] and c["posadka"] >= 1)
    before = number_bands(p, [src["id"], target["id"]])
    click(p, src["id"])
    click(p, target["id"])
    assert p.page.locator("#cmdwarn").is_hidden(), "the suggested amount wins"
    p.page.locator("#cmdamount").fill("0.5")
    warn = p.page.locator("#cmdwarn")
    assert warn.is_visible() and "cannot win: 0.5 against defence" in warn.inner_text(), warn.inner_text()
    p.page.keyboard.press("Enter")
    assert "(cannot win)" in p.page.locator("#pending").inner_text()
    assert "cannot win" in p.page.locator("#toast").inner_text()
    # The command's arrow leaves the units' numbers whole (every pixel of their glyphs as it
    # was: the arrow goes under them), and has a head.
    after = number_bands(p, [src["id"], target["id"]])
    for b, a in zip(before, after):
        glyph = [k for k in range(0, len(b), 4) if tuple(b[k:k + 3]) in ((255, 255, 255), (17, 17, 17))]
        assert len(glyph) > 20 and all(a[k:k + 3] == b[k:k + 3] for k in glyph), len(glyph)
    arrow = p.page.evaluate("""(ids) => {
        const [r0, c0] = window.gbely.origin(), v = window.gbely.view, c = document.getElementById('map');
        const ctx = c.getContext('2d'), k = c.width / c.getBoundingClientRect().width;
        let red = 0;
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        for (let i = 0; i < px.length; i += 4) red += px[i] === 0xff && px[i + 1] === 0x52 && px[i + 2] === 0x52;
        return red / (k * k);
    }""", [src["id"], target["id"]])
    s = p.page.evaluate("window.gbely.view.s")
    # A bare line of width s/12 along one cell would be about s²/12 pixels; the head adds a triangle.
    assert arrow > s * s / 12 * 1.2, (arrow, s)
    p.page.locator("#endturn").click()
    # The line is written once the server has taken the answer (a request): wait for it.
    p.page.wait_for_function("() => document.getElementById('sent').innerText !== ''", timeout=10000)
    assert p.page.locator("#sent").inner_text() == "round 3: 1 command sent"
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    assert "yet" not in p.page.locator("#moments").inner_text()
    # The match is over and the page is still served: reloading shows the finished match.
    deadline = time.monotonic() + 30
    while "The page stays up" not in (m.err.seek(0) or m.err.read()) and time.monotonic() < deadline:
        time.sleep(0.05)
    m.err.seek(0)
    log = m.err.read()
    replay = work / "hall-run" / "replay.json.gz"
    assert f"its replay: hall-run/replay.json.gz" in log or f"its replay: {replay}" in log, log
    p.page.reload()
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=30000)
    assert p.page.evaluate("window.gbely.frames()") == 5
    # Ctrl-C ends the serving; the exit code is the match's.
    m.proc.send_signal(2)
    m.wait()
    assert m.proc.returncode == 0


# ---------- the projection layout ----------

def test_the_projection_layout_reads_from_the_back_of_a_hall(final, pages):
    # Regression: at 4K the side panel stayed ~370 px wide with ~12 px text and listed the seats
    # in seat order.
    markers = None
    for width, height in [(1920, 1080), (3840, 2160)]:
        p = pages(width, height).open(final.as_uri() + "#round=100&layout=projection").wait_ready()
        assert p.page.evaluate("document.body.classList.contains('proj')")
        rows = p.page.evaluate("""[...document.querySelectorAll('#board .row')].map((r) => {
            const who = r.querySelector('.who'), b = who.getBoundingClientRect();
            return { share: Number(r.dataset.share), text: r.innerText, font: parseFloat(getComputedStyle(who).fontSize),
                     top: b.top, bottom: b.bottom, visible: who.checkVisibility() };
        })""")
        assert len(rows) == 9
        # Sorted by share, as the standings are at that round.
        shares = [r["share"] for r in rows]
        assert shares == sorted(shares, reverse=True), shares
        st = p.state()
        counts = [st["owners"].count(str(k)) for k in range(9)]
        assert [round(c / len(st["owners"]) * 100, 4) for c in sorted(counts, reverse=True)] == [round(s, 4) for s in shares]
        # Names at least 2 % of the screen's height, all on the screen.
        assert all(r["visible"] and r["font"] >= 0.02 * height and r["bottom"] <= height for r in rows), rows
        # The round counter, large.
        big = p.page.locator("#biground")
        assert big.inner_text() == "round 100 / 149"
        assert p.page.evaluate("parseFloat(getComputedStyle(document.getElementById('biground')).fontSize)") >= 0.04 * height
        # The map fills most of the room the standings leave: the whole height, and nearly the
        # whole width left of them.
        aside = p.page.locator("aside").bounding_box()
        side = st["canvas"]["cs"] * st["canvas"]["w"]
        assert side >= 0.85 * height and side >= 0.9 * min(aside["x"], height), (side, aside)
        assert st["canvas"]["y"] >= 0 and st["canvas"]["y"] + side <= height
        # The desk layout's controls and panels are gone.
        for hidden in ["#bar", "#chartsbox", "#eventsbox", "#standings"]:
            assert p.page.locator(hidden).is_hidden(), hidden
        print(f"\n[figures] projection at {width}×{height}: standings names {rows[0]['font']:.0f} px"
              f" ({rows[0]['font'] / height * 100:.1f} % of the height), round counter"
              f" {p.page.evaluate('parseFloat(getComputedStyle(document.getElementById(`biground`)).fontSize)'):.0f} px,"
              f" map {side:.0f} px square ({side / height * 100:.0f} % of the height)")
        # Key moments as they happen: none before the first; the first as the newest when its
        # round is shown.
        markers = p.page.evaluate("window.gbely.markers()")
        first = markers[0]
        p.page.evaluate(f"window.gbely.show({first['r']})")
        assert first["text"] not in p.page.locator("#feed").inner_text()
        p.page.evaluate(f"window.gbely.show({first['r'] + 1})")
        newest = p.page.locator("#feed div").first
        assert first["text"] in newest.inner_text() and "new" in newest.get_attribute("class")
        assert newest.locator("canvas.icon").count() == 1
        if width == 1920:
            p.page.evaluate("window.gbely.show(113)")
            shot(p, "viewer-projection.png")
        # At the end, the result's headline and places.
        p.page.keyboard.press("End")
        assert p.page.locator("#boardhead").inner_text() == p.page.locator("#headline").inner_text()
        places = p.page.locator("#board .rank").all_inner_texts()
        assert places[0] == "—" and places[1:] == [f"{k}." for k in range(1, 9)], places


def test_the_layout_switches_with_p_and_a_button_and_stays_in_the_address(duel, pages):
    p = pages(1920, 1080).open(duel.as_uri() + "#round=30").wait_ready()
    assert not p.page.evaluate("document.body.classList.contains('proj')")
    desk = p.state()["canvas"]["cs"]
    p.page.keyboard.press("p")
    p.page.wait_for_function("() => location.hash.includes('layout=projection')")
    assert p.page.locator("#board .row").count() == 2
    # A duel's 30 cells a side grow past the desk's 64 px a cell cap? no: they fill the height.
    assert p.state()["canvas"]["cs"] > desk
    assert "round=30" in p.page.evaluate("location.hash")
    p.page.locator("#layoutbtn").click()
    p.page.wait_for_function("() => !location.hash.includes('layout=')")
    assert p.page.locator("#standings").is_visible() and p.page.locator("#board").is_hidden()
    # Nonsense is refused as other state is.
    q = pages().open(duel.as_uri() + "#layout=poster").wait_ready()
    assert "layout=poster" in q.page.locator("#toast").inner_text()


def test_a_projected_final_waits_for_its_start_plays_a_round_a_second_pauses_and_says_when_the_server_stops(work, pages):
    m = Match(work, "final", "expander-rs", "--fill", "template-rs", "--size", "40", "--rounds", "60", "--watch",
              "--projection", "--run-dir", "show-run")
    # A 4:3 projector.
    p = pages(1024, 768).open(m.url)
    p.page.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=30000)
    # The intro card: the nine seats by name.
    assert p.page.locator("#startarmies div").count() == 9
    time.sleep(2.5)
    assert p.page.evaluate("window.gbely.frames()") == 1, "no round before the start"
    assert p.page.evaluate("window.gbely.arrivals().length") == 0
    p.page.keyboard.press("s")
    p.page.wait_for_function("() => window.gbely.arrivals().length >= 22", timeout=60000)
    assert p.page.locator("#startcard").is_hidden()
    t = p.page.evaluate("window.gbely.arrivals()")
    gaps = [(b - a) / 1000 for a, b in zip(t[1:21], t[2:22])]
    print(f"projection rhythm over 20 rounds: {min(gaps):.3f}–{max(gaps):.3f} s, mean {sum(gaps) / 20:.3f} s")
    # One round a second (the default of a projection), each within 0.1 s.
    assert all(abs(g - 1.0) <= 0.1 for g in gaps), gaps
    # Every army's name whole on the 4:3 screen's standings.
    cut = p.page.evaluate("""[...document.querySelectorAll('#board .row .who')].filter((e) =>
        e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1).map((e) => e.textContent)""")
    assert cut == [], cut
    # Paused from the page: no round arrives; resumed: they come again.
    p.page.click("#pausebtn")
    time.sleep(1.5)
    n = p.page.evaluate("window.gbely.arrivals().length")
    time.sleep(2.5)
    assert p.page.evaluate("window.gbely.arrivals().length") == n, "paused"
    assert p.page.locator("#pausebtn").inner_text() == "resume"
    p.page.click("#pausebtn")
    p.page.wait_for_function(f"() => window.gbely.arrivals().length > {n + 1}", timeout=10000)
    # The server goes away mid-match: the projection says so on the screen.
    before = len(p.errors)
    m.proc.kill()
    m.proc.wait()
    p.page.wait_for_function("() => !document.getElementById('stopbanner').hidden", timeout=30000)
    assert "stopped" in p.page.locator("#stopbanner").inner_text()
    # The browser logs the stream cut by the kill and each refused reconnection; nothing else may
    # have gone wrong.
    killed = ("ERR_CONNECTION_REFUSED", "ERR_INCOMPLETE_CHUNKED_ENCODING")
    p.errors[before:] = [e for e in p.errors[before:] if not any(k in e for k in killed)]


def test_a_final_watched_with_projection_opens_in_the_projection_layout(work, pages):
    # --start-when-ready: started by the page's watching, not by its button (for scripts).
    m = Match(work, "final", "expander-rs", "--fill", "template-rs", "--size", "40", "--rounds", "12", "--watch",
              "--watch-speed", "8", "--projection", "--start-when-ready", "--run-dir", "proj-run")
    assert m.url.endswith("#layout=projection"), m.url
    p = pages(1920, 1080).open(m.url)
    p.page.wait_for_function("() => window.gbely.frames() > 3", timeout=30000)
    assert p.page.locator("#startcard").is_hidden()
    assert p.page.evaluate("document.body.classList.contains('proj')")
    assert p.page.locator("#board .row").count() == 9
    assert re.fullmatch(r"round \d+( of \d+ so far)? · live", p.page.locator("#biground").inner_text())
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    assert p.page.locator("#biground").inner_text() == "round 11 / 11"
    m.wait()
    assert m.proc.returncode == 0
    # --projection needs --watch.
    out = gbely("final", "expander-rs", "--rounds", "2", "--projection", cwd=work, ok=(2,))
    assert "--watch" in out.stderr


# ---------- export ----------

def test_a_round_saves_as_a_png_and_rounds_as_a_video(final, duel, pages):
    import struct
    p = pages(1366, 768).open(final.as_uri() + "#round=50").wait_ready()
    with p.page.expect_download() as got:
        p.page.keyboard.press("s")
    d = got.value
    assert d.suggested_filename == "gbely-final-gbely-final-round-50.png", d.suggested_filename
    png = Path(d.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    # 18 px a cell (about 1600 px a side for 90 cells), and a caption with the standings below.
    assert width == 90 * 18 and height > width, (width, height)
    # A video of the last rounds of a duel, recorded in the page.
    q = pages(1366, 768).open(duel.as_uri() + "#round=54").wait_ready()
    q.page.select_option("#speed", "16")
    with q.page.expect_download(timeout=30000) as got:
        q.page.locator("#webmbtn").click()
    v = got.value
    assert v.suggested_filename == "gbely-seed-browser-round-54-to-59.webm", v.suggested_filename
    webm = Path(v.path()).read_bytes()
    assert webm[:4] == b"\x1a\x45\xdf\xa3" and len(webm) > 2000, len(webm)
    # Seekable, with its length (regression: no duration, no cues: a player could not jump in it).
    # Played in a page of its own (the viewer's page allows no media).
    import base64
    blank = pages(800, 600).open("about:blank")
    got_video = blank.page.evaluate("""async (b64) => { const v = document.createElement('video'); v.muted = true; v.src = 'data:video/webm;base64,' + b64;
        await new Promise((res, rej) => { v.onloadedmetadata = res; v.onerror = () => rej(new Error(v.error && v.error.message)); });
        const d = v.duration; v.currentTime = 0.2; await new Promise((res) => { v.onseeked = res; });
        return { duration: d, seekable: v.seekable.length ? v.seekable.end(0) : null, now: v.currentTime }; }""", base64.b64encode(webm).decode())
    # 6 frames at 16 a second: 0.375 s.
    assert abs(got_video["duration"] - 0.375) < 0.01 and got_video["seekable"] == got_video["duration"], got_video
    assert abs(got_video["now"] - 0.2) < 0.01, got_video
    # What makes it seekable for any player: the segment and clusters of known sizes, a Duration
    # in its Info, and Cues pointing at each cluster (EBML, read here by hand).
    def vint(at, keep):
        n = next(k for k in range(8) if webm[at] & (0x80 >> k)) + 1
        v = webm[at] if keep else webm[at] & (0xFF >> n)
        for k in range(1, n):
            v = v * 256 + webm[at + k]
        return v, n, all(b == 0xFF for b in webm[at + 1:at + n]) and (webm[at] & (0xFF >> n)) == 0xFF >> n

    def children(start, end):
        at = start
        while at < end:
            eid, n, _ = vint(at, True)
            size, m, unknown = vint(at + n, False)
            assert not unknown, f"an element {eid:x} of unknown size at {at}"
            yield eid, at, at + n + m, size
            at = at + n + m + size

    (_, _, hdata, hsize), = [next(children(0, len(webm)))]
    seg = next(children(hdata + hsize, len(webm)))
    assert seg[0] == 0x18538067 and seg[2] + seg[3] == len(webm)
    top = list(children(seg[2], seg[2] + seg[3]))
    ids = [t[0] for t in top]
    clusters = [t[1] - seg[2] for t in top if t[0] == 0x1F43B675]
    info = next(t for t in top if t[0] == 0x1549A966)
    assert 0x4489 in [c[0] for c in children(info[2], info[2] + info[3])], "a Duration"
    cues = next(t for t in top if t[0] == 0x1C53BB6B)
    positions = []
    for point in children(cues[2], cues[2] + cues[3]):
        for track in children(point[2], point[2] + point[3]):
            if track[0] == 0xB7:
                positions += [int.from_bytes(webm[c[2]:c[2] + c[3]], "big") for c in children(track[2], track[2] + track[3]) if c[0] == 0xF1]
    assert clusters and positions == clusters, (positions, clusters, [hex(i) for i in ids])
    # At the speed chosen: 6 frames at 16 a second, one every 62.5 ms (regression: a frame's
    # time was waited after its drawing, 20 frames at "16/s" took 2.59 s).
    times = q.page.evaluate("window.gbely.videoTimes()")
    assert len(times) == 6
    step = (times[-1] - times[0]) / 5
    assert 56 <= step <= 75, (step, times)
    # A shift-click on the timeline ends the video earlier (regression: always the last round).
    box = q.page.locator("#timeline").bounding_box()
    frames = q.page.evaluate("window.gbely.frames()")
    # Frame 58 (round 57) at its place on the timeline (6 px margins, frames 0 … 60).
    x = box["x"] + 6 + 58 / (frames - 1) * (box["width"] - 12)
    q.page.keyboard.down("Shift")
    q.page.mouse.click(x, box["y"] + box["height"] / 2)
    q.page.keyboard.up("Shift")
    assert q.state()["round"] == 54, "a shift-click does not move the round shown"
    with q.page.expect_download(timeout=30000) as got:
        q.page.locator("#webmbtn").click()
    assert got.value.suggested_filename == "gbely-seed-browser-round-54-to-57.webm", got.value.suggested_filename
    assert len(q.page.evaluate("window.gbely.videoTimes()")) == 4, "rounds 54 to 57"


@pytest.fixture(scope="session")
def noted(work) -> Path:
    # agents/expander.py notes why it attacks its five best targets (its answers' debug key).
    gbely("play", str(ROOT / "agents" / "expander.py"), "--opponent", "council", "--map", "seed:notes", "--size", "30",
          "--rounds", "30", "--replay", "noted.json.gz", "--run-dir", "noted-run", "-q", cwd=work)
    gbely("replay", "view", "noted.json.gz", "-o", "noted.html", cwd=work)
    return work / "noted.html"


def test_agent_notes_show_at_their_round_on_their_cells_and_are_searchable(noted, duel, pages):
    p = pages().open(noted.as_uri()).wait_ready()
    p.page.evaluate("window.gbely.show(11)")
    assert p.page.is_visible("#notesbox")
    notes = p.page.locator("#notes div[data-cell]")
    assert 1 <= notes.count() <= 5, "at most its five best targets"
    first = notes.first.inner_text()
    assert first.startswith("expander.py: P") and ": target: needs " in first, first
    # The round's notes are the replay's notes of round 10, on the cells they name.
    cell_id = first.split(": ")[1]
    notes.first.click()
    assert f"note of expander.py: target: needs" in p.page.inner_text("#cellinfo")
    assert p.page.inner_text("#cellinfo").startswith(cell_id)
    # Searching looks through every round; a hit goes to its round.
    p.page.fill("#notesearch", "needs 2.0")
    hits = p.page.locator("#notes div[data-round]")
    assert hits.count() > 5, "found in many rounds"
    texts = [hits.nth(k).inner_text() for k in range(min(hits.count(), 20))]
    assert all(t.startswith("round ") and "needs 2.0" in t for t in texts), texts
    last = hits.nth(hits.count() - 1)
    r = int(last.inner_text().split(" ")[1])
    last.click()
    assert p.state()["round"] == r
    p.page.fill("#notesearch", "no such note anywhere")
    assert p.page.inner_text("#notes") == "no note matches"
    # A replay without notes shows no notes panel.
    q = pages().open(duel.as_uri()).wait_ready()
    assert not q.page.is_visible("#notesbox")


# An agent whose every round has ATTACKs, MOVEs, a FORTIFY and a discarded command (a MOVE from a
# cell it does not own: source_not_owned).
ARROWS_AGENT = """
AGENT_NAME = {name!r}

def decide(stav):
    own = {{c["id"] for c in stav["moje_pola"]}}
    prikazy = []
    for c in stav["moje_pola"]:
        if c["jednotky"] < 2:
            continue
        others = [n for n in c["susedia"] if n not in own]
        mine = [n for n in c["susedia"] if n in own]
        if others:
            prikazy.append({{"typ": "ATTACK", "z": c["id"], "na": others[0], "pocet": round(c["jednotky"] * 0.6, 1)}})
        elif mine:
            prikazy.append({{"typ": "MOVE", "z": c["id"], "na": mine[0], "pocet": round(c["jednotky"] * 0.3, 1)}})
    prikazy.append({{"typ": "FORTIFY", "pole": stav["moja_zakladna"], "investicia": 0.5}})
    seen = [c["id"] for c in stav["viditelne_susedne_pola"]]
    if seen:
        prikazy.append({{"typ": "MOVE", "z": seen[0], "na": stav["moja_zakladna"], "pocet": 1}})
    return {{"prikazy": prikazy}}
"""


@pytest.fixture(scope="session")
def commanded(work) -> Path:
    (work / "arrows_a.py").write_text(ARROWS_AGENT.format(name="north"))
    (work / "arrows_b.py").write_text(ARROWS_AGENT.format(name="south"))
    gbely("play", "arrows_a.py", "--opponent", "arrows_b.py", "--map", "seed:arrows", "--size", "16", "--rounds", "12",
          "--replay", "arrows.json.gz", "--run-dir", "arrows-run", "-q", cwd=work)
    gbely("replay", "view", "arrows.json.gz", "-o", "arrows.html", cwd=work)
    return work / "arrows.html"


def replay_commands(path: Path, rnd: int) -> list[tuple]:
    """Every seat's commands of round `rnd` as the replay file holds them (format version 3's
    columns, docs/replay-format.md: the cells as steps), with the discard reasons of its
    `discarded`."""
    replay = json.loads(gzip.decompress(path.read_bytes()))
    width = replay["map"]["width"]
    cell = lambda i: f"P{i // width:02d}_{i % width:02d}"
    turn = replay["turns"][rnd]
    why = {(d["seat"], d["index"]): d["reason"] for d in turn.get("discarded", [])}
    out = []
    for seat, answer in enumerate(turn["answers"]):
        k = answer["compact"]
        cells, amounts = itertools.accumulate(k["d"]), iter(k["n"])
        for index, letter in enumerate(k["k"]):
            if letter == "r":
                continue
            a = next(cells)
            b = a if letter == "F" else next(cells)
            kind = {"M": "MOVE", "A": "ATTACK", "F": "FORTIFY"}[letter]
            out.append((seat, index, kind, cell(a), cell(b), next(amounts), why.get((seat, index))))
    return sorted(out)


def attack_pixels(p: Page) -> int:
    """How many pixels of the map are the ATTACK arrows' red (#ff5252)."""
    return p.page.evaluate("""(() => { const c = document.getElementById('map'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let k = 0; k < d.length; k += 4) n += d[k] === 0xff && d[k + 1] === 0x52 && d[k + 2] === 0x52; return n; })()""")


def test_every_seats_commands_are_arrows_on_the_map_with_their_amounts(commanded, duel, work, pages):
    p = pages(1366, 768).open(commanded.as_uri() + "#round=6").wait_ready()
    want = replay_commands(work / "arrows.json.gz", 6)
    assert {w[0] for w in want} == {0, 1} and any(w[6] == "source_not_owned" for w in want), want
    drawn = sorted((a["seat"], a["index"], a["kind"], a["from"], a["to"], a["amount"], a["discarded"]) for a in p.page.evaluate("window.gbely.arrows()"))
    assert drawn == want
    # Labelled with their amounts (a cell of 30 px or more has room for them).
    labels = {(a["seat"], a["index"]): a["label"] for a in p.page.evaluate("window.gbely.arrows()")}
    for seat, index, kind, a, b, amount, reason in want:
        if reason is None:
            assert labels[(seat, index)] == f"{amount:g}", (seat, index, labels[(seat, index)], amount)
    assert attack_pixels(p) > 100
    # A discarded command's tip says why.
    gone = next(w for w in want if w[6] == "source_not_owned")
    st = p.state()
    src = int(gone[3][1:3]) * st["canvas"]["w"] + int(gone[3][4:])
    x, y = cell_centre(p, src)
    p.page.mouse.move(x, y)
    tip = p.page.locator("#tip")
    tip.wait_for(state="visible")
    name = ["north", "south"][gone[0]]
    assert f"{name}: MOVE {gone[3]} → {gone[4]} 1 — discarded: source not owned" in tip.inner_text(), tip.inner_text()
    # Toggled per seat: the panel's box, `c` for all of them, kept in the address.
    p.page.locator("#cmdseats input[data-seat='1']").uncheck()
    assert {a["seat"] for a in p.page.evaluate("window.gbely.arrows()")} == {0}
    p.page.wait_for_function("() => location.hash.includes('cmds=0')")
    p.page.mouse.move(5, 5)
    p.page.keyboard.press("c")
    assert p.page.evaluate("window.gbely.arrows()") == [] and attack_pixels(p) == 0
    p.page.keyboard.press("c")
    assert {a["seat"] for a in p.page.evaluate("window.gbely.arrows()")} == {0, 1}
    # Another round, the replay's commands of that round.
    p.page.keyboard.press("ArrowRight")
    drawn = sorted((a["seat"], a["index"], a["kind"], a["from"], a["to"], a["amount"], a["discarded"]) for a in p.page.evaluate("window.gbely.arrows()"))
    assert drawn == replay_commands(work / "arrows.json.gz", 7)
    # The Council's commands are not in the file (a built-in seat's are regenerated): drawn as
    # `gbely replay show --observation` prints its answer of the round.
    out = gbely("replay", "show", "duel.json.gz", "--round", "30", "--seat", "1", "--observation", "--json", "--color", "never", cwd=work).stdout
    answer = json.loads(out.split("# its answer\n")[1].splitlines()[0])["prikazy"]
    council = [(c["typ"], c.get("z", c.get("pole")), c.get("na", c.get("pole")), c.get("pocet", c.get("investicia"))) for c in answer]
    q = pages(1366, 768).open(duel.as_uri() + "#round=30").wait_ready()
    arrows = q.page.evaluate("window.gbely.arrows()")
    assert council and sorted(council) == sorted((a["kind"], a["from"], a["to"], a["amount"]) for a in arrows if a["seat"] == 1)
    assert any(a["seat"] == 0 for a in arrows)


# Takes cells for 25 rounds, then waits: after 2500 rounds its cells hold thousands of units and
# its base tens of thousands (numbers of four and five digits).
GROWER = """
def decide(stav):
    if stav["kolo"] >= 25:
        return {"prikazy": []}
    own = {c["id"] for c in stav["moje_pola"]}
    prikazy = []
    for c in stav["moje_pola"]:
        others = [n for n in c["susedia"] if n not in own]
        if others and c["jednotky"] >= 2:
            prikazy.append({"typ": "ATTACK", "z": c["id"], "na": others[0], "pocet": c["jednotky"]})
    return {"prikazy": prikazy}
"""


@pytest.fixture(scope="session")
def crowded(work) -> Path:
    (work / "grower.py").write_text(GROWER)
    gbely("play", "grower.py", "--opponent", "grower.py", "--map", "seed:spill", "--size", "20", "--rounds", "2500",
          "--replay", "crowded.json.gz", "--run-dir", "crowded-run", "-q", cwd=work)
    gbely("replay", "view", "crowded.json.gz", "-o", "crowded.html", cwd=work)
    return work / "crowded.html"


def test_unit_numbers_stay_inside_their_cells_at_30px(crowded, pages):
    # Regression: "64609.4" ran over into the cells beside it at 30 px a cell.
    p = pages(1366, 768).open(crowded.as_uri() + "#round=2499&zoom=30").wait_ready()
    st = p.state()
    assert p.page.evaluate("window.gbely.view.s") == 30
    assert max(st["units100"]) >= 1_000_000, "a number of five digits before the point"
    # The numbers of half the cells (a checkerboard) drawn, then none: every pixel they change
    # is in a cell of theirs; then the other half.
    got = p.page.evaluate("""(() => {
        const g = window.gbely, W = g.state().canvas.w, v = g.view, c = document.getElementById('map');
        const ctx = c.getContext('2d'), k = c.width / c.getBoundingClientRect().width;
        const image = () => ctx.getImageData(0, 0, c.width, c.height).data;
        const out = [];
        for (const parity of [0, 1]) {
          g.numbers.only = () => false; g.redraw(); const none = image();
          g.numbers.only = (i) => (i % W + Math.floor(i / W)) % 2 === parity; g.redraw(); const half = image();
          let inside = 0, outside = 0;
          for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
            const n = (y * c.width + x) * 4;
            if (none[n] === half[n] && none[n + 1] === half[n + 1] && none[n + 2] === half[n + 2]) continue;
            const q = Math.floor((x / k - v.ox) / v.s), r = Math.floor((y / k - v.oy) / v.s);
            if ((q + r) % 2 === parity) inside++; else outside++;
          }
          out.push([inside, outside]);
        }
        g.numbers.only = null; g.redraw();
        return out;
    })()""")
    for inside, outside in got:
        assert inside > 5000 and outside == 0, got
    # Nothing of a hill's peak, a river's band or the base mark runs through a number: the middle
    # of each owned hill's, river's and base's number (a third of the cell wide, 0.64–0.80 of its
    # height) has no pixel of the terrain's colour, nor of the base mark's outline (black).
    found = p.page.evaluate("""(() => {
        const g = window.gbely, st = g.state(), W = st.canvas.w, v = g.view, c = document.getElementById('map');
        const ctx = c.getContext('2d'), k = c.width / c.getBoundingClientRect().width, { t, bases } = g.terrain();
        const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
        let cells = 0, bad = 0;
        for (let i = 0; i < W * st.canvas.h; i++) {
          if (st.owners[i] === '.' || !(t[i] !== '.' || bases[i])) continue;
          const x = v.ox + (i % W) * v.s, y = v.oy + Math.floor(i / W) * v.s;
          if (x < 0 || y < 0 || x + v.s > c.width / k || y + v.s > c.height / k) continue;
          const want = bases[i] ? [0, 0, 0] : hex(st.terrain[t[i]]);
          const d = ctx.getImageData(Math.round((x + 0.35 * v.s) * k), Math.round((y + 0.64 * v.s) * k), Math.round(0.3 * v.s * k), Math.round(0.16 * v.s * k)).data;
          cells++;
          for (let n = 0; n < d.length; n += 4) bad += d[n] === want[0] && d[n + 1] === want[1] && d[n + 2] === want[2];
        }
        return [cells, bad];
    })()""")
    assert found[0] >= 20 and found[1] == 0, found


LONG_NAME = "an agent whose AGENT_NAME runs to fifty-one letters"
assert len(LONG_NAME) == 51


@pytest.fixture(scope="session")
def long_named(work) -> Path:
    (work / "long.py").write_text(GROWER.replace("def decide", f"AGENT_NAME = {LONG_NAME!r}\n\ndef decide"))
    gbely("play", "long.py", "--opponent", "council", "--map", "seed:browser", "--size", "30", "--rounds", "60",
          "--replay", "long.json.gz", "--run-dir", "long-run", "-q", cwd=work)
    gbely("replay", "view", "long.json.gz", "-o", "long.html", cwd=work)
    return work / "long.html"


def test_a_long_name_does_not_move_the_controls(long_named, duel, pages):
    # Regression: a 51-character AGENT_NAME widened the seat-view selector to ~480 px, which
    # wrapped the control bar, and the events' seat selector stuck out of its panel.
    ids = ["first", "play", "last", "speed", "zoomfit", "seatview", "pngbtn", "webmbtn"]

    def boxes(path):
        p = pages(1366, 768).open(path.as_uri() + "#round=30").wait_ready()
        got = {i: p.page.locator(f"#{i}").bounding_box() for i in ids}
        got["bar"] = p.page.locator("#bar").bounding_box()
        ev, panel = p.page.locator("#evseat").bounding_box(), p.page.locator("#eventsbox").bounding_box()
        assert ev["x"] + ev["width"] <= panel["x"] + panel["width"] - 4, (ev, panel)
        return p, got

    p, long = boxes(long_named)
    assert LONG_NAME in p.page.locator("#seatview").inner_text()
    _, short = boxes(duel)
    for i in ids + ["bar"]:
        assert long[i] == short[i], (i, long[i], short[i])
    # The controls are on one line.
    assert len({round(long[i]["y"]) for i in ids}) == 1, long


def test_a_note_clicked_brings_its_cell_into_view(noted, pages):
    # Regression: on a phone, zoomed in, a click on a note below the map selected the cell
    # somewhere out of sight.
    p = pages(390, 844, 2).open(noted.as_uri() + "#round=10&zoom=40").wait_ready()
    note = p.page.locator("#notes div[data-cell]").last
    cell = int(note.get_attribute("data-cell"))
    note.scroll_into_view_if_needed()
    assert p.page.locator("#mapbox").bounding_box()["y"] + 40 < 0, "the map is above the window"
    note.click()
    p.page.wait_for_function("() => location.hash.includes('cell=')")
    x, y = cell_centre(p, cell)
    box = p.page.locator("#mapbox").bounding_box()
    s = p.page.evaluate("window.gbely.view.s")
    assert box["x"] <= x - s / 2 and x + s / 2 <= box["x"] + box["width"], (x, box)
    assert box["y"] <= y - s / 2 and y + s / 2 <= box["y"] + box["height"], (y, box)
    assert 0 <= y - s / 2 and y + s / 2 <= 844, "in the window"


# 1.5 KB of notes a round, every round (issue 35: the match's 64 KiB ran out at round 46).
CHATTY = """
AGENT_NAME = "chatty"

def decide(stav):
    return {"prikazy": [], "debug": {"text": "round %d: " % stav["kolo"] + "x" * 1520}}
"""


def test_an_agent_writing_1_5_kb_of_notes_a_round_keeps_notes_in_every_round_of_150(work, pages):
    (work / "chatty.py").write_text(CHATTY)
    # Against a side that waits too: nobody is eliminated, all 150 rounds are played.
    (work / "idle.py").write_text("def decide(stav):\n    return []\n")
    gbely("play", "chatty.py", "--opponent", "idle.py", "--map", "seed:chatty", "--size", "20", "--rounds", "150",
          "--replay", "chatty.json.gz", "--run-dir", "chatty-run", "-q", cwd=work)
    gbely("replay", "view", "chatty.json.gz", "-o", "chatty.html", cwd=work)
    p = pages(1366, 768).open((work / "chatty.html").as_uri()).wait_ready()
    shown = p.page.evaluate("""(() => { const out = [];
        for (let k = 1; k <= 150; k++) { window.gbely.show(k); out.push(document.getElementById('notes').innerText); }
        return out; })()""")
    assert len(shown) == 150
    for r, text in enumerate(shown):
        assert text == f"chatty: round {r}: " + "x" * 1520, (r, text[:80])


# Draws on the map every round (its answer's debug key's `draw`): a magenta dot on its base, a
# green line to the cell three rows away, that cell coloured and labelled; and two drawings the
# replay leaves out (a cell not on the map, a shape that is none).
DRAWER = """
AGENT_NAME = "drawer"

def decide(stav):
    base = stav["moja_zakladna"]
    r, c = int(base[1:3]), int(base[4:6])
    far = "P%02d_%02d" % (r - 3 if r >= 3 else r + 3, c)
    return {"prikazy": [], "debug": {"text": "drawing", "draw": [
        {"dot": base, "color": "#ff00ff"},
        {"line": [base, far], "color": "#0f0"},
        {"fill": far},
        {"label": far, "text": "round %d" % stav["kolo"]},
        {"dot": "P99_99"}, {"nonsense": 1},
    ]}}
"""


def magenta_pixels(p: Page) -> int:
    return p.page.evaluate("""(() => { const c = document.getElementById('map'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let k = 0; k < d.length; k += 4) n += d[k] === 0xff && d[k + 1] === 0 && d[k + 2] === 0xff; return n; })()""")


def test_an_agents_drawings_show_at_their_round_and_hide_with_their_toggle(work, pages):
    (work / "drawer.py").write_text(DRAWER)
    gbely("play", "drawer.py", "--opponent", "council", "--map", "seed:draw", "--size", "16", "--rounds", "8",
          "--replay", "drawn.json.gz", "--run-dir", "drawn-run", "-q", cwd=work)
    gbely("replay", "view", "drawn.json.gz", "-o", "drawn.html", cwd=work)
    replay = json.loads(gzip.decompress((work / "drawn.json.gz").read_bytes()))
    base = replay["seats"][0]["base"]
    r, c = int(base[1:3]), int(base[4:6])
    far = f"P{r - 3 if r >= 3 else r + 3:02d}_{c:02d}"
    width = replay["map"]["width"]
    index = lambda cell_id: int(cell_id[1:3]) * width + int(cell_id[4:6])
    # The replay keeps them in its notes, on the map's cells, the colours as #rrggbb.
    assert replay["turns"][5]["notes"][0]["draw"] == [
        {"dot": index(base), "color": "#ff00ff"}, {"line": [index(base), index(far)], "color": "#00ff00"},
        {"fill": index(far)}, {"label": index(far), "text": "round 5"}]
    # `gbely replay show` prints them with the round's notes.
    shown = gbely("replay", "show", "drawn.json.gz", "--round", "5", "--seat", "0", "--color", "never", cwd=work).stdout
    assert (f"  drawing\n  drawn: dot {base} #ff00ff\n  drawn: line {base} {far} #00ff00\n  drawn: fill {far}\n"
            f"  drawn: label {far} \"round 5\"\n") in shown, shown
    p = pages(1366, 768).open((work / "drawn.html").as_uri() + "#round=5&cmds=none").wait_ready()
    seat = p.page.evaluate("window.gbely.state().colors[0]")
    got = sorted((d["kind"], tuple(d["cells"]), d["text"], d["color"]) for d in p.page.evaluate("window.gbely.drawings()"))
    assert got == sorted([("dot", (base,), "", "#ff00ff"), ("line", (base, far), "", "#00ff00"),
                          ("fill", (far,), "", seat), ("label", (far,), "round 5", seat)]), got
    assert magenta_pixels(p) > 20
    # At its round: round 2's label at round 2.
    p.page.evaluate("window.gbely.show(3)")
    assert ("label", (far,), "round 2") in [(d["kind"], tuple(d["cells"]), d["text"]) for d in p.page.evaluate("window.gbely.drawings()")]
    # Hidden by its seat's toggle, and back with `d`.
    p.page.locator("#drawseats input[data-seat='0']").uncheck()
    assert p.page.evaluate("window.gbely.drawings()") == [] and magenta_pixels(p) == 0
    p.page.mouse.move(5, 5)
    p.page.keyboard.press("d")
    assert len(p.page.evaluate("window.gbely.drawings()")) == 4 and magenta_pixels(p) > 20
    # The tooltip of the labelled cell says who drew what.
    x, y = cell_centre(p, index(far))
    p.page.mouse.move(x, y)
    p.page.locator("#tip").wait_for(state="visible")
    assert 'drawn by drawer: "round 2"' in p.page.locator("#tip").inner_text()


def test_a_finals_moments_are_its_leader_changes_and_record_swings_and_it_ends_on_a_podium(final, work, pages):
    doc = json.loads(gzip.open(work / "final.json.gz").read())
    council = next(s["seat"] for s in doc["seats"] if s["role"] == "council")
    armies = [s["seat"] for s in doc["seats"] if s["seat"] != council]
    # The leader of the armies after each round: the one army with strictly the most cells.
    want, leader = [], None
    for turn in doc["turns"]:
        cells = turn["cells"]
        best = max(cells[s] for s in armies)
        top = [s for s in armies if cells[s] == best]
        now = top[0] if len(top) == 1 else None
        if now is not None and leader is not None and now != leader:
            want.append((turn["round"], now))
        if now is not None:
            leader = now
    p = pages(1920, 1080).open(final.as_uri() + "#layout=projection").wait_ready()
    markers = p.page.evaluate("window.gbely.markers()")
    got = [(m["r"], m["seat"]) for m in markers if m["kind"] == "lead"]
    assert got == want, (got, want)
    # Big swings are records of the armies, never the Council's (the backdrop of a final).
    swings = [m for m in markers if m["kind"] == "swing"]
    assert all(m["seat"] != council for m in swings), swings
    assert all(a["n"] < b["n"] for a, b in zip(swings, swings[1:])), swings
    # The end: the podium, second, first and third, as the rules rank the armies (§10: share,
    # then the earlier tie-break round).
    p.page.keyboard.press("End")
    p.page.locator("#podium").wait_for(timeout=5000)
    sides = sorted((s for s in doc["result"]["sides"] if s["seat"] != council and s["score"] is not None),
                   key=lambda s: (-s["score"], s["tiebreak_round"] if s["tiebreak_round"] is not None else 10**9))
    names = p.page.locator("#podium .who").all_inner_texts()
    assert names == [sides[1]["name"], sides[0]["name"], sides[2]["name"]], names
    assert p.page.locator("#podium .place").all_inner_texts() == ["2.", "1.", "3."]


# Every round: a note (its answer's debug key) naming the MOVE it sends from a cell it sees but
# does not own (discarded: source_not_owned); in round 4 garbage (a violation: unreadable).
WATCHED = """
AGENT_NAME = "watched"

def decide(stav):
    r = stav["kolo"]
    if r == 4:
        return "garbage"
    seen = stav["viditelne_susedne_pola"][0]["id"]
    base = stav["moja_zakladna"]
    return {"prikazy": [{"typ": "MOVE", "z": seen, "na": base, "pocet": 1}],
            "debug": {"text": "round %d: MOVE %s %s" % (r, seen, base)}}
"""


def test_a_watched_match_shows_its_notes_discards_and_violations_as_it_is_played(work, pages):
    (work / "watched.py").write_text(WATCHED)
    (work / "idle.py").write_text("def decide(stav):\n    return []\n")
    m = Match(work, "play", "watched.py", "--opponent", "idle.py", "--map", "seed:watched", "--size", "16",
              "--rounds", "40", "--watch", "--watch-speed", "4", "--run-dir", "watched-run")
    p = pages(1366, 768).open(m.url)
    # Regression: the notes' panel was hidden until the match was over. It shows from the first
    # rounds on (4 a second: round 8 is 2 s away), long before the end.
    p.page.wait_for_function("""() => !document.getElementById('notesbox').hidden
        && document.getElementById('resultbox').hidden && window.gbely.frames() < 10""", timeout=30000)
    p.page.wait_for_function("() => window.gbely.frames() >= 7", timeout=30000)
    # Paused from the page, before the end: the match waits while the page is looked at.
    p.page.click("#pausebtn")
    p.page.wait_for_function("() => document.getElementById('pausebtn').textContent === 'resume'", timeout=10000)
    assert p.page.is_hidden("#resultbox")
    assert p.page.evaluate("window.gbely.frames()") < 20
    assert "· live" in p.page.inner_text("#roundlabel")
    # Round 3: its note, and in the events its MOVE discarded with the command's text and why.
    p.page.evaluate("window.gbely.show(4)")
    assert p.page.is_visible("#notesbox")
    note = p.page.inner_text("#notes")
    assert re.fullmatch(r"watched: round 3: MOVE P\d\d_\d\d P\d\d_\d\d", note), note
    seen, base = note.split(" ")[-2:]
    events = p.page.inner_text("#events").split("\n")
    want = f'· watched: command #0 discarded (source not owned) {{"typ":"MOVE","z":"{seen}","na":"{base}","pocet":1}}'
    assert want in events, events
    # Round 4: the violation by its kind, and no note.
    p.page.evaluate("window.gbely.show(5)")
    events = p.page.inner_text("#events").split("\n")
    assert any(e.startswith("⚠ watched: violation (unreadable) ") for e in events), events
    assert p.page.inner_text("#notes") == "no notes this round"
    # Resumed, the match plays to its end, and the notes of round 3 are the replay's.
    p.page.click("#pausebtn")
    p.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    out = m.wait()
    assert m.proc.returncode == 0, out
    replay = json.loads(gzip.decompress((work / "watched-run" / "replay.json.gz").read_bytes()))
    assert replay["turns"][3]["notes"][0]["text"] == note.removeprefix("watched: ")
    p.page.evaluate("window.gbely.show(4)")
    assert p.page.inner_text("#notes") == note


def test_the_timeline_marks_the_rounds_with_discarded_commands_and_says_why(tmp_path, pages):
    """Each round with discarded commands has a mark on the timeline whose tip counts them by
    reason (from the replay's `discarded`); a command whose cell a seat resolved earlier in the
    round took says so, in the viewer as in `gbely replay show --observation`."""
    work = tmp_path
    gbely("play", "template", "--map", "seed:r", "--size", "20", "--rounds", "40", "--replay", "d.json.gz", "--quiet",
          cwd=work)
    gbely("replay", "view", "d.json.gz", "-o", "d.html", cwd=work)
    replay = json.loads(gzip.decompress((work / "d.json.gz").read_bytes()))
    want = []
    for r, t in enumerate(replay["turns"]):
        counts: dict[str, int] = {}
        for d in t.get("discarded", []):
            counts[d["reason"]] = counts.get(d["reason"], 0) + 1
        if counts:
            want.append((r, sum(counts.values()), counts))
    assert want, "the template's commands are discarded now and then"
    p = pages(1366, 768).open((work / "d.html").as_uri()).wait_ready()
    got = p.page.evaluate("window.gbely.discards()")
    assert [(d["r"], d["n"], dict(d["counts"])) for d in got] == want
    # The timeline's tip over such a round counts them by reason.
    frames = p.page.evaluate("window.gbely.frames()")
    box = p.page.locator("#timeline").bounding_box()
    for d in [got[0], got[len(got) // 2], got[-1]]:
        x = box["x"] + 6 + (d["r"] + 1) / (frames - 1) * (box["width"] - 12)
        p.page.mouse.move(x, box["y"] + box["height"] - 4)
        title = p.page.locator("#timeline").get_attribute("title")
        word = "command" if d["n"] == 1 else "commands"
        assert f"round {d['r']}: {d['n']} discarded {word} (" in title, (d, title)
        for reason, n in d["counts"]:
            assert f"{reason.replace('_', ' ')} {n}" in title, (d, title)
    # A discard of a cell the Council took earlier in the round says so, in the events of the
    # round, for the same commands `gbely replay show --observation` marks.
    taken = 0
    for r, _, _ in want:
        shown = gbely("replay", "show", "d.json.gz", "--round", str(r), "--seat", "0", "--observation", cwd=work).stdout
        marked = [line for line in shown.splitlines() if "(taken by seat 1, council, earlier in this round)" in line]
        p.page.evaluate(f"window.gbely.show({r + 1})")
        events = p.page.locator("#events").inner_text()
        in_viewer = [line for line in events.splitlines() if "(taken by seat 1, council, earlier in this round)" in line]
        assert len(in_viewer) == len(marked), (r, marked, events)
        if marked:
            # SPEC §4: the Council (seat 1) resolves first on odd rounds only.
            assert r % 2 == 1, (r, marked)
            taken += 1
    assert taken, "the template loses cells to the Council and still commands them"
    p.close()


# An agent process that sleeps 0.3 s in round 5 and answers at once otherwise: its answer times
# are recorded (replay version 4), round 5's the slowest.
SLOW_AGENT = """
import time
AGENT_NAME = "sleeper"

def decide(stav):
    if stav["kolo"] == 5:
        time.sleep(0.3)
    return []
"""


@pytest.fixture(scope="session")
def timed(work) -> Path:
    """A 12-round duel of SLOW_AGENT against the Council, its page, and a fork of it at round 6
    (forked.json.gz, forked.html)."""
    (work / "sleeper.py").write_text(SLOW_AGENT)
    gbely("play", "sleeper.py", "--opponent", "council", "--map", "seed:timed", "--size", "20", "--rounds", "12",
          "--replay", "timed.json.gz", "--run-dir", "timed-run", "-q", cwd=work)
    gbely("replay", "view", "timed.json.gz", "-o", "timed.html", cwd=work)
    gbely("play", "sleeper.py", "--from", "timed.json.gz", "--round", "6", "--replay", "forked.json.gz",
          "--run-dir", "forked-run", "-q", cwd=work)
    gbely("replay", "view", "forked.json.gz", "-o", "forked.html", cwd=work)
    return work / "timed.html"


def replay_json(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def pixel(p: Page, canvas: str, x: float, y: float) -> list[int]:
    """The colour drawn at (x, y) of a canvas, in CSS pixels from its corner."""
    return p.page.evaluate(f"""(() => {{ const c = document.getElementById('{canvas}'), k = c.width / c.clientWidth;
        return Array.from(c.getContext('2d').getImageData(Math.floor({x} * k), Math.floor({y} * k), 1, 1).data).slice(0, 3); }})()""")


def near(rgb: list[int], hex_color: str, tol: int = 40) -> bool:
    want = [int(hex_color[k:k + 2], 16) for k in (1, 3, 5)]
    return all(abs(a - b) <= tol for a, b in zip(rgb, want))


def test_the_answer_times_graph_shows_the_recorded_times_and_the_2_s_line(timed, duel, work, pages):
    replay = replay_json(work / "timed.json.gz")
    assert replay["version"] >= 4
    # What the graph must show: each timed seat's (round, ms) from the file; the Council, a
    # built-in, is not timed.
    want = {}
    for t in replay["turns"]:
        for seat, ms in enumerate(t.get("answer_ms") or []):
            if ms is not None:
                want.setdefault(seat, []).append([t["round"], ms])
    assert list(want) == [0] and len(want[0]) == 12, want
    slowest = max(want[0], key=lambda p: p[1])
    assert slowest[0] == 5 and 300 <= slowest[1] < 2000, want[0]

    p = pages(1366, 900).open(timed.as_uri()).wait_ready()
    p.page.evaluate("window.gbely.show(6)")
    got = p.page.evaluate("window.gbely.times()")
    assert got["shown"] and p.page.locator("#timesbox").is_visible()
    assert {s["seat"]: s["points"] for s in got["seats"]} == want
    assert got["limit_ms"] == 2000
    # Drawn: the limit's red line at 2 s on the graph's axis (0 at the bottom, max_s at the top,
    # 6 px above and 16 px below the plot), and the slowest round's dot in the seat's colour.
    box = p.page.locator("#tchart").bounding_box()
    h, w = box["height"], box["width"]
    y = lambda s: 6 + (1 - s / got["max_s"]) * (h - 6 - 16)
    assert abs(got["limit_y"] - y(2.0)) <= 1, got
    assert near(pixel(p, "tchart", 39, round(y(2.0))), "#ff5252"), pixel(p, "tchart", 39, round(y(2.0)))
    x = 38 + (slowest[0] + 1) / 12 * (w - 38 - 6)
    color = p.state()["colors"][0]
    assert near(pixel(p, "tchart", x, y(slowest[1] / 1000)), color), (pixel(p, "tchart", x, y(slowest[1] / 1000)), color)
    # The round shown (frame 6: round 5), in words, as `gbely play` writes seconds.
    assert p.page.locator("#timesround").inner_text() == f"round 5: sleeper: {slowest[1] / 1000:.2f}".rstrip("0").rstrip(".") + " s of 2 s"

    # A match of in-process agents has no times: no graph.
    assert not any(t.get("answer_ms") for t in replay_json(work / "duel.json.gz")["turns"])
    q = pages(1366, 900).open(duel.as_uri()).wait_ready()
    assert q.page.evaluate("window.gbely.times()")["seats"] == []
    assert not q.page.locator("#timesbox").is_visible()


def test_a_fork_is_marked_on_the_timeline_with_its_source_and_round(timed, work, pages):
    forked = replay_json(work / "forked.json.gz")
    # The fork names its source by the SHA-256 of the source's JSON text.
    with gzip.open(work / "timed.json.gz", "rb") as f:
        source = hashlib.sha256(f.read()).hexdigest()
    assert forked["fork"] == {"source": source, "round": 6}, forked.get("fork")
    p = pages(1366, 768).open((work / "forked.html").as_uri()).wait_ready()
    assert p.page.evaluate("window.gbely.fork()")["round"] == 6
    note = p.page.locator("#forknote")
    assert note.is_visible()
    text = note.inner_text()
    assert source in text and "forked at round 6" in text and "rounds 0–5" in text, text
    # The timeline: the purple line at frame 6 (the state at the start of round 6), the bar before
    # it purple, after it not.
    frames = p.page.evaluate("window.gbely.frames()")
    assert frames == 13
    box = p.page.locator("#timeline").bounding_box()
    tl = lambda k: 6 + k / (frames - 1) * (box["width"] - 12)
    h = box["height"]
    assert near(pixel(p, "timeline", tl(6), 2), "#c792ea"), pixel(p, "timeline", tl(6), 2)
    assert not near(pixel(p, "timeline", tl(9), 2), "#c792ea")
    assert not near(pixel(p, "timeline", tl(9), h / 2), "#c792ea", 20)
    bar_before = pixel(p, "timeline", tl(3), h / 2)
    assert bar_before[0] > 80 and bar_before[2] > 100, bar_before
    # Its tip says which rounds are the source's; a click there goes to that round.
    p.page.mouse.move(box["x"] + tl(4), box["y"] + h - 3)
    assert "before the fork at round 6" in p.page.locator("#timeline").get_attribute("title")
    p.page.mouse.click(box["x"] + tl(6), box["y"] + h - 3)
    p.page.wait_for_function("() => window.gbely.state().frame === 6")
    # A replay without a fork has no note.
    q = pages(1366, 768).open(timed.as_uri()).wait_ready()
    assert q.page.evaluate("window.gbely.fork()") is None and not q.page.locator("#forknote").is_visible()


def test_continue_from_here_copies_the_fork_command_of_the_round_shown(timed, work, pages):
    p = pages(1366, 768)
    p.context.grant_permissions(["clipboard-read", "clipboard-write"])
    p.open(timed.as_uri()).wait_ready()
    p.page.evaluate("window.gbely.show(4)")
    p.page.click("#forkbtn")
    p.page.wait_for_function("() => window.gbely.copied() !== null")
    want = "gbely play my_agent.py --from timed.json.gz --round 4"
    assert p.page.evaluate("navigator.clipboard.readText()") == want
    assert p.page.locator("#forkbtn").inner_text() == "copied ✓"
    assert p.page.locator("#forkdone").inner_text().startswith("copied")
    assert p.page.locator("#forkcmd").input_value() == want
    # Another round: the field follows it.
    p.page.evaluate("window.gbely.show(9)")
    assert p.page.locator("#forkcmd").input_value() == want.replace("--round 4", "--round 9")
    # The end of a match that ended: nothing is left to play.
    p.page.evaluate("window.gbely.show(12)")
    assert p.page.locator("#forkbtn").is_disabled()

    # The clipboard refused (as a file:// page may be): the command is in its field, selected.
    (work / "it's mine.json.gz").write_bytes((work / "timed.json.gz").read_bytes())
    gbely("replay", "view", "it's mine.json.gz", "-o", "mine.html", cwd=work)
    q = pages(1366, 768).open((work / "mine.html").as_uri()).wait_ready()
    q.page.evaluate("(() => { navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError')); })()")
    q.page.evaluate("window.gbely.show(2)")
    q.page.click("#forkbtn")
    q.page.wait_for_function("() => window.gbely.copied() !== null")
    # The name in shell quotes.
    want = "gbely play my_agent.py --from 'it'\\''s mine.json.gz' --round 2"
    field = q.page.locator("#forkcmd")
    assert field.is_visible() and field.input_value() == want
    assert q.page.evaluate("(() => { const f = document.getElementById('forkcmd'); return document.activeElement === f "
                           "&& f.value.slice(f.selectionStart, f.selectionEnd); })()") == want
    assert q.page.locator("#forkdone").inner_text() != ""


def engine_round(replay: Path, rnd: int) -> dict:
    """The engine's own state at the end of round `rnd` and the round's captures and failed
    attacks, re-simulated (`gbely replay show --json`)."""
    out = gbely("replay", "show", replay.name, "--round", str(rnd), "--json", cwd=replay.parent)
    return json.loads(out.stdout)


def engine_discards(replay: Path, rnd: int, seat: int) -> list:
    """A seat's discarded commands of a round as the engine says (`gbely replay show
    --observation --json`): `[index, reason, item's JSON text, taken_by]` each."""
    out = gbely("replay", "show", replay.name, "--round", str(rnd), "--seat", str(seat), "--observation", "--json",
                cwd=replay.parent).stdout.splitlines()
    listed = json.loads(out[out.index("# its discarded commands") + 1]) if "# its discarded commands" in out else []
    items = json.loads(out[out.index("# its answer") + 1])["prikazy"] if "# its answer" in out else []
    text = lambda i: json.dumps(items[i], separators=(",", ":"), ensure_ascii=False) if i < len(items) else ""  # noqa: E731
    return [[d["index"], d["reason"], text(d["index"]), d["taken_by"]] for d in listed]


def hundredths(x: float) -> int:
    """`(x × 100).round()` as Rust computes it (halves away from zero; x ≥ 0 here)."""
    v = x * 100
    whole = float(int(v))
    return int(whole) + (1 if v - whole >= 0.5 else 0)


@pytest.mark.parametrize("case", ["duel", "final", "disqualified", "noted", "forked"])
def test_each_round_the_page_shows_is_the_engines_round(case, request, work, pages):
    """The page rebuilds every round from the starting position and the seats' commands: what it
    holds and shows for a round — each cell's owner, units and fortification, the round's captures
    and failed attacks, the standings — is the engine's state of that round, re-simulated by
    `gbely`, for the first round, one in the middle, the last, and after going back to an early
    one."""
    if case == "forked":
        request.getfixturevalue("timed")
        page, replay = work / "forked.html", work / "forked.json.gz"
    else:
        page = request.getfixturevalue(case)
        replay = page.with_suffix("").with_suffix(".json.gz")
        if not replay.exists():
            replay = work / {"disqualified": "dq.json.gz"}[case]
    doc = replay_json(replay)
    names = [s["name"] for s in doc["seats"]]
    width = doc["map"]["width"]
    last = len(doc["turns"]) - 1
    p = pages(1366, 900).open(page.as_uri()).wait_ready()
    assert p.page.evaluate("window.gbely.frames()") == last + 2
    for rnd in [0, last // 2, last, 1]:
        want = engine_round(replay, rnd)
        p.page.evaluate(f"window.gbely.show({rnd + 1})")
        st = p.state()
        assert st["round"] == rnd
        owners = "".join("." if o < 0 else str(o) for o in want["owner"])
        assert st["owners"] == owners, f"{case}, round {rnd}: owners"
        assert st["units100"] == [hundredths(u) for u in want["units"]], f"{case}, round {rnd}: units"
        assert st["fort100"] == [hundredths(f) for f in want["fortification"]], f"{case}, round {rnd}: fortification"
        events = p.page.evaluate(f"window.gbely.events({rnd + 1})")
        assert {k: events[k] for k in ("captures", "failed")} == {"captures": want["captures"], "failed": want["failed"]}, \
            f"{case}, round {rnd}: events"
        # Each discarded command: its index, reason, who took its cell, and its text (the page
        # writes a command's text itself where the engine's text is its own).
        seats = sorted({d["seat"] for d in doc["turns"][rnd].get("discarded", [])})
        assert [d[0] for d in events["discarded"]] == [d["seat"] for d in doc["turns"][rnd].get("discarded", [])]
        for seat in seats:
            said = engine_discards(replay, rnd, seat)
            shown = [d[1:] for d in events["discarded"] if d[0] == seat]
            assert shown == said, f"{case}, round {rnd}, seat {seat}: discarded commands"
        # The standings as shown: each seat's share, cells and units (the engine's cells summed).
        rows = p.page.locator("#standings tr[data-seat]")
        for seat, name in enumerate(names):
            cells = sum(1 for o in want["owner"] if o == seat)
            units = sum(hundredths(u) for o, u in zip(want["owner"], want["units"]) if o == seat)
            shown = [rows.nth(seat).locator("td").nth(k).inner_text() for k in (1, 2, 3)]
            share = decimal.Decimal(cells / len(owners) * 100).quantize(decimal.Decimal("0.01"), decimal.ROUND_HALF_UP)
            assert shown == [f"{share} %", str(cells), f"{math.floor(units / 10 + 0.5) / 10:.1f}"], (case, rnd, name)
        # The events box: the round's captures as lines, in the engine's order (the first 60
        # lines of the round when it has more).
        lines = p.page.locator("#events div").all_inner_texts()
        took = [t for t in lines if t.startswith("⚑")]
        cell_id = lambda c: f"P{c // width:02d}_{c % width:02d}"  # noqa: E731
        owner = lambda o: "hbp" if o < 0 else names[o]  # noqa: E731
        expect = [f"⚑ {names[s]} took {cell_id(c)} from {owner(f)}" for s, c, f in want["captures"]]
        more = any(t.startswith("… and") for t in lines)
        assert took == (expect[:len(took)] if more else expect), (case, rnd)
