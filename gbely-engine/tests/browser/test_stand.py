"""The stand (`gbely stand`) walked in a real browser: agents appear as they are copied in, with
their check; a duel is watched live and kept; a human seat is played by clicking; a league's
standings are `gbely league`'s; a running match is stopped; paths out of the folder are refused.

Run with the viewer's tests (`./run-tests`), or by hand:

    GBELY_BIN=target/debug/gbely target/py-venv/bin/python -m pytest -q -s gbely-engine/tests/browser/test_stand.py
"""

from __future__ import annotations

import gzip
import http.client
import json
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from proc_kit import zombie_children
from browser_fixtures import Page
from test_viewer import ROOT, click, gbely, gbely_bin, shot

# Each round takes 0.3 s: a match long enough to be stopped while it runs.
SLOW = "import time\nAGENT_NAME = 'slowpoke_stand'\ndef decide(stav):\n    time.sleep(0.3)\n    return []\n"
BROKEN = "def decide(stav)\n    return []\n"


class Stand:
    """`gbely stand FOLDER` in the background; its address from stderr."""

    def __init__(self, work: Path):
        self.work = work
        self.folder = work / "agents"
        self.folder.mkdir(exist_ok=True)
        self.err = open(work / "stand.err", "w+")
        self.proc = subprocess.Popen([gbely_bin(), "stand", "agents", "--no-open", "--data", "data", "--jobs", "2",
                                      "--check-rounds", "5"], cwd=work, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        deadline = time.monotonic() + 60
        while True:
            self.err.seek(0)
            m = re.search(r"is at (http://\S+)", self.err.read())
            if m:
                self.url = m.group(1)
                break
            assert self.proc.poll() is None and time.monotonic() < deadline, "no address on stderr"
            time.sleep(0.05)
        u = urllib.parse.urlparse(self.url)
        self.port, self.token = u.port, urllib.parse.parse_qs(u.query)["t"][0]

    def call(self, method: str, path: str, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Host": f"127.0.0.1:{self.port}", "X-Gbely-Token": self.token, "Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, body=None if body is None else json.dumps(body), headers=h)
        r = c.getresponse()
        text = r.read().decode()
        return r.status, text

    def state(self) -> dict:
        status, text = self.call("GET", "/api/state")
        assert status == 200, text
        return json.loads(text)

    def run(self, rid: int) -> dict:
        return next(r for r in self.state()["runs"] if r["id"] == rid)

    def wait_run(self, rid: int, statuses, timeout=240) -> dict:
        deadline = time.monotonic() + timeout
        while (r := self.run(rid))["status"] not in statuses:
            assert time.monotonic() < deadline, r
            time.sleep(0.2)
        return r

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)
        return self.proc.returncode


@pytest.fixture(scope="module")
def stand(tmp_path_factory):
    work = tmp_path_factory.mktemp("stand")
    s = Stand(work)
    yield s
    if s.proc.poll() is None:
        assert s.stop() == 0
    err = Path(s.err.name).read_text()
    assert "panicked" not in err, err


def newest_run(stand: Stand) -> int:
    return max(r["id"] for r in stand.state()["runs"])


def processes_with(marker: str) -> int:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return len([p for p in out.stdout.split() if p.strip()])


def start_duel(p, seat0: str, rounds: int, seed: str | None = None, size: int = 0):
    """Starts a duel of `seat0` against the Council from the page's form (on a map of `seed` and
    `size`, else the reference map); the live page it opens."""
    p.page.wait_for_function(f"() => [...document.querySelectorAll('#seat0 option')].some(o => o.value === '{seat0}')",
                             timeout=30000)
    p.page.select_option("#mode", "duel")
    p.page.select_option("#seat0", seat0)
    p.page.select_option("#seat1", "council")
    if seed is None:
        p.page.select_option("#mapkind", "reference")
    else:
        p.page.select_option("#mapkind", "seed")
        p.page.fill("#mapseed", seed)
        p.page.fill("#mapsize", str(size))
    p.page.fill("#rounds", str(rounds))
    with p.context.expect_page() as opened:
        p.page.click("#start")
    return opened.value


def test_an_agent_copied_into_the_folder_appears_with_its_check(stand, pages):
    p = pages(1366, 768).open(stand.url).wait_ready()
    shutil.copy(ROOT / "agents" / "my_agent.py", stand.folder / "my_agent.py")
    (stand.folder / "broken.py").write_text(BROKEN)
    row = p.page.locator('#agents tr[data-file="my_agent.py"]')
    row.wait_for(timeout=30000)
    # The source check at once; the test match's verdict when it has been played.
    p.page.wait_for_function(
        """() => { const r = document.querySelector('#agents tr[data-file="my_agent.py"]');
                   return r && r.cells[4].textContent === 'ok'; }""", timeout=120000)
    assert row.locator("td").nth(3).inner_text().startswith("ok")
    broken = p.page.locator('#agents tr[data-file="broken.py"]')
    broken.wait_for(timeout=30000)
    assert broken.locator("td").nth(3).inner_text().startswith("fail")
    assert "does not parse" in broken.inner_text()
    # Its details: the check's report and its log.
    row.click()
    p.page.wait_for_function("() => document.getElementById('agentdetail').textContent.includes('passes the check')",
                             timeout=30000)
    assert "test match: 5 rounds against the Council" in p.page.locator("#agentdetail").inner_text()
    # Removed from the folder: gone from the page.
    (stand.folder / "broken.py").unlink()
    broken.wait_for(state="detached", timeout=30000)


def test_a_duel_is_watched_live_to_its_end_and_kept_with_a_replay_that_verifies(stand, pages):
    shutil.copy(ROOT / "agents" / "my_agent.py", stand.folder / "my_agent.py")
    p = pages(1366, 768).open(stand.url).wait_ready()
    live = start_duel(p, "my_agent.py", 40, "stand-duel", 20)
    live_errors: list[str] = []
    live.on("console", lambda m: live_errors.append(m.text) if m.type == "error" else None)
    # The live page follows the match to its end, then is the replay's page.
    live.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=180000)
    assert "over" in live.locator("#status").inner_text()
    assert not live_errors, live_errors
    rid = newest_run(stand)
    r = stand.wait_run(rid, {"finished"})
    assert r["kind"] == "duel" and r["replay"] and r["versions"]["my_agent.py"]
    status, text = stand.call("GET", f"/api/runs/{rid}")
    doc = json.loads(text)
    replay = Path(doc["result"]["replay"])
    assert replay.exists()
    out = gbely("replay", "verify", str(replay), cwd=stand.work)
    assert "verified" in out.stdout or out.returncode == 0
    # The history lists it with its replay page.
    row = p.page.locator(f'#runs tr[data-id="{rid}"]')
    row.wait_for(timeout=10000)
    row.locator("a", has_text="replay").wait_for(timeout=10000)
    with p.context.expect_page() as opened:
        row.locator("a", has_text="replay").click()
    page = opened.value
    page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=60000)
    # The finished match's page shows 40 rounds (frames: the start and one a round).
    assert page.evaluate("window.gbely.frames()") == 41
    page.close()
    live.close()


def test_a_human_seat_is_played_by_clicking(stand, pages):
    p = pages(1366, 768).open(stand.url).wait_ready()
    human = Page.__new__(Page)
    human.context, human.page, human.errors = p.context, start_duel(p, "human", 3, "stand-human", 16), []
    for rnd in range(3):
        human.page.wait_for_function(f"() => window.gbely && window.gbely.human.round === {rnd} && window.gbely.human.waiting",
                                     timeout=60000)
        obs = human.page.evaluate("window.gbely.human.obs")
        mine = {c["id"]: c for c in obs["moje_pola"]}
        src = mine.get(obs["moja_zakladna"]) or obs["moje_pola"][0]
        visible = {c["id"] for c in obs["viditelne_susedne_pola"]}
        target = next(n for n in src["susedia"] if n in visible)
        click(human, src["id"])
        click(human, target)
        human.page.locator("#cmdadd").click()
        assert human.page.locator("#pending div").count() == 1
        human.page.locator("#endturn").click()
    human.page.wait_for_function("() => !document.getElementById('resultbox').hidden", timeout=60000)
    rid = newest_run(stand)
    r = stand.wait_run(rid, {"finished"})
    replay = json.loads(stand.call("GET", f"/api/runs/{rid}")[1])["result"]["replay"]
    # Each round the seat sent the one ATTACK clicked.
    for rnd in range(3):
        out = gbely("replay", "show", replay, "--observation", "--json", "--seat", "0", "--round", str(rnd), cwd=stand.work).stdout
        answer = json.loads(out.split("# its answer\n")[1])
        assert len(answer["prikazy"]) == 1 and answer["prikazy"][0]["typ"] == "ATTACK", answer
    assert r["summary"].startswith("human")
    human.page.close()


def test_a_league_of_three_shows_the_standings_gbely_league_gives(stand, pages):
    shutil.copy(ROOT / "agents" / "my_agent.py", stand.folder / "my_agent.py")
    shutil.copy(ROOT / "agents" / "expander.py", stand.folder / "expander.py")
    p = pages(1366, 768).open(stand.url).wait_ready()
    p.page.wait_for_function("() => document.querySelectorAll('#entries input[value=\"expander.py\"]').length === 1",
                             timeout=30000)
    p.page.select_option("#mode", "league")
    for entry in ["my_agent.py", "expander.py", "council"]:
        p.page.check(f'#entries input[value="{entry}"]')
    p.page.fill("#leaguemaps", "seed:stand-league")
    p.page.fill("#rounds", "25")
    p.page.click("#start")
    p.page.wait_for_function("() => document.getElementById('msg').textContent.includes('queued')", timeout=10000)
    rid = newest_run(stand)
    stand.wait_run(rid, {"finished"}, timeout=600)
    row = p.page.locator(f'#runs tr[data-id="{rid}"]')
    row.locator("button", has_text="details").click()
    p.page.locator("#rundetail table.standings").wait_for(timeout=10000)
    shown = [[c.inner_text() for c in r.locator("td").all()] for r in p.page.locator("#rundetail table.standings tr").all()[1:]]
    # The same entries and map with `gbely league`, from the folder.
    out = gbely("league", "my_agent.py", "expander.py", "council", "--maps", "seed:stand-league", "--rounds", "25",
                "--db", str(stand.work / "cli-league.sqlite"), "--json", cwd=stand.folder)
    cli = json.loads(out.stdout)["standings"]
    want = [[str(s["rank"]), s["name"], str(s["played"]), str(s["wins"]), str(s["draws"]), str(s["losses"]),
             f"{round(s['rating'])} ± {round(s['uncertainty'])}", f"{s['mean_share']:.1f} %"] for s in cli]
    assert shown == want, (shown, want)
    assert len(shown) == 3
    # The history names the entries.
    title = p.page.locator(f'#runs tr[data-id="{rid}"] td').nth(1).inner_text()
    entries, _, maps = title.removeprefix("league: ").partition(" on ")
    assert sorted(entries.split(", ")) == ["council", "expander.py", "my_agent.py"] and maps == "seed:stand-league", title
    doc = json.loads(stand.call("GET", f"/api/runs/{rid}")[1])["result"]
    names = [s["name"] for s in doc["standings"]]
    name_of = {e["id"]: e["name"] for e in doc["entries"]}
    # The pair matrix: each against each, the row's wins–draws–losses against the column: as many
    # as the matches of the two in the list, a win of one a loss of the other, and the score a
    # win 1, a draw ½.
    cells = {(c.get_attribute("data-row"), c.get_attribute("data-col")): c.inner_text()
             for c in p.page.locator("#rundetail table.matrix td").all()}
    assert len(cells) == 9
    wdl = lambda a, b: tuple(int(x) for x in cells[(a, b)].split(" ")[0].split("–"))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                assert cells[(a, b)] == "—"
                continue
            played = sum(1 for m in doc["matches"] if sorted([name_of[m["seat0"]], name_of[m["seat1"]]]) == sorted([a, b]))
            w, d, l = wdl(a, b)
            # One game a pairing and map, in each seat.
            assert w + d + l == played == 2, (a, b, cells[(a, b)])
            assert wdl(b, a) == (l, d, w)
            assert cells[(a, b)].endswith(f"({round((w + d / 2) / played * 100)} %)")
    # The standings' wins are the matrix rows' wins.
    for s in doc["standings"]:
        assert s["wins"] == sum(wdl(s["name"], b)[0] for b in names if b != s["name"])
    # The matches, each with its replay in the viewer.
    rows = p.page.locator("#rundetail table.matches tr").all()[1:]
    assert len(rows) == len(doc["matches"]) == 6
    for row in rows:
        href = row.locator("a", has_text="replay").get_attribute("href")
        assert re.match(rf"^r/{rid}/[0-9a-f]{{16}}\?t=", href), href
        status, page = stand.call("GET", "/" + href.split("?")[0])
        assert status == 200 and "gbely" in page, (status, page[:200])
    viewer = pages(1366, 768)
    viewer.open(urllib.parse.urljoin(stand.url, rows[0].locator("a", has_text="replay").get_attribute("href"))).wait_ready()
    assert viewer.page.evaluate("window.gbely.frames()") == 26
    viewer.close()
    shot(p, "stand.png")


def test_equal_rows_of_the_standings_are_said_to_be_tied(stand, pages):
    p = pages(1366, 768).open(stand.url).wait_ready()
    row = lambda rank, name, rating, wins, share: {"rank": rank, "name": name, "played": 2, "wins": wins, "draws": 0,
                                                   "losses": 2 - wins, "rating": rating, "uncertainty": 30.0,
                                                   "mean_share": share}
    # b and c: the same rating, wins and mean share, ordered by name only; d differs in share.
    rows = [row(1, "a", 40.0, 2, 60.0), row(2, "b", 0.0, 1, 50.0), row(3, "c", 0.0, 1, 50.0), row(4, "d", 0.0, 1, 49.0)]
    shown = p.page.evaluate("""(rows) => { const t = standingsTable(rows); document.body.append(t); t.id = 'tietest';
        return [...t.querySelectorAll('tr')].slice(1).map((r) => r.cells[0].textContent); }""", rows)
    assert shown == ["1", "2=", "2=", "4"]
    assert "tied" in p.page.locator("#tietest").inner_text()
    p.close()


def test_an_ab_test_shows_its_figures(stand, pages):
    """The A/B result as figures, not a JSON block: the verdict with the LLR between its bounds,
    the estimate with its 95 % interval (the one `gbely ab` prints), LOS, the pairs and the
    pentanomial counts of the pairs' outcomes."""
    p = pages(1366, 768).open(stand.url).wait_ready()
    p.page.select_option("#mode", "ab")
    p.page.wait_for_function("() => [...document.querySelectorAll('#abnew option')].some(o => o.value === 'expander')",
                             timeout=30000)
    p.page.select_option("#abold", "template")
    p.page.select_option("#abnew", "expander")
    p.page.fill("#maxpairs", "3")
    p.page.fill("#abmaps", "seed:ab-stand")
    p.page.fill("#rounds", "15")
    p.page.click("#start")
    p.page.wait_for_function("() => document.getElementById('msg').textContent.includes('queued')", timeout=10000)
    rid = newest_run(stand)
    r = stand.wait_run(rid, {"finished"}, timeout=600)
    doc = json.loads(stand.call("GET", f"/api/runs/{rid}")[1])["result"]
    # The list says the verdict with its figures.
    assert r["summary"] == f"{doc['verdict_text']} · {doc['estimate_text']} · {doc['pairs']} pairs", r["summary"]
    p.page.locator(f'#runs tr[data-id="{rid}"]').locator("button", has_text="details").click()
    fig = p.page.locator("#rundetail table.abfigures")
    fig.wait_for(timeout=10000)
    rows = {tr.get_attribute("data-k"): tr.locator("td").inner_text() for tr in fig.locator("tr").all()}
    lower, upper = doc["bounds"]
    assert rows["verdict"].startswith(doc["verdict_text"] + " — LLR ")
    assert f"{doc['llr']:.2f} between the bounds {lower:.2f} (no better) and {upper:.2f} (better)" in rows["verdict"]
    assert "H0 0 Elo, H1 40 Elo" in rows["verdict"], rows["verdict"]
    assert rows["estimate"].startswith(re.sub(r"^B−A ", "", doc["estimate_text"])), (rows["estimate"], doc["estimate_text"])
    assert rows["los"].startswith(f"{100 * doc['estimate']['los']:.1f} %")
    assert rows["pairs"].startswith(f"{len(doc['outcomes'])} of at most 3")
    # Each pair's outcome is B's mean score over its two games: 0, ¼, ½, ¾ or 1 (LL … WW).
    counts = [0] * 5
    for o in doc["outcomes"]:
        counts[round(o * 4)] += 1
    assert rows["pentanomial"] == "LL {} · LD {} · LW/DD {} · DW {} · WW {}".format(*counts)
    # The figures are on the page, outside the raw document.
    assert fig.is_visible() and not p.page.locator("#rundetail details").evaluate("d => d.open")
    p.close()


def test_a_running_match_is_stopped_its_agents_gone_its_replay_interrupted(stand, pages):
    (stand.folder / "slowpoke_stand.py").write_text(SLOW)
    p = pages(1366, 768).open(stand.url).wait_ready()
    start_duel(p, "slowpoke_stand.py", 150).close()
    rid = newest_run(stand)
    stand.wait_run(rid, {"running"})
    # A few rounds in: its process is there.
    deadline = time.monotonic() + 60
    while processes_with("slowpoke_stand") == 0:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1.5)
    row = p.page.locator(f'#runs tr[data-id="{rid}"]')
    row.locator("button", has_text="stop").click()
    r = stand.wait_run(rid, {"interrupted"}, timeout=30)
    time.sleep(0.5)
    assert processes_with("slowpoke_stand.py") == 0, "the agent is gone"
    replay = json.loads(stand.call("GET", f"/api/runs/{rid}")[1])["result"]["replay"]
    doc = json.loads(gzip.open(replay).read())
    assert doc["result"]["ended_by"] == "interrupted"
    assert 0 < len(doc["turns"]) < 150
    assert r["replay"]


def test_paths_out_of_the_folder_and_cross_site_posts_are_refused(stand, tmp_path):
    outside = tmp_path / "x.py"
    outside.write_text("def decide(stav):\n    return []\n")
    link = stand.folder / "link.py"
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(outside)
    for name in ["../x.py", "link.py", str(outside), "cmd:python3 x.py"]:
        status, text = stand.call("POST", "/api/runs", {"kind": "duel", "seats": [name, "council"]})
        assert status == 400, (name, status, text)
    status, text = stand.call("POST", "/api/runs", {"kind": "duel", "seats": ["link.py", "council"]})
    assert "leads out of the folder" in text
    assert stand.call("GET", "/api/agents/..%2Fx.py")[0] == 400
    status, text = stand.call("POST", "/api/runs", {"kind": "duel", "seats": ["council", "council"],
                                                    "map": {"kind": "file", "file": "../x.map"}})
    assert status == 400, text
    # Listed, and said to be refused.
    deadline = time.monotonic() + 30
    while not any(a["file"] == "link.py" for a in stand.state()["agents"]):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    entry = next(a for a in stand.state()["agents"] if a["file"] == "link.py")
    assert entry["source"] == "fail" and "leads out of the folder" in " ".join(entry["why"])
    # A form of another site cannot post; without the token nothing is answered.
    status, _ = stand.call("POST", "/api/runs", {"kind": "duel", "seats": ["council", "council"]},
                           headers={"Origin": "http://evil.example"})
    assert status == 403
    status, _ = stand.call("GET", "/api/state", headers={"X-Gbely-Token": "0" * 32})
    assert status == 403
    link.unlink()


@pytest.mark.parametrize("size", [(390, 844), (1366, 768)])
def test_no_console_error_on_a_phone_and_a_laptop(stand, pages, size):
    p = pages(*size).open(stand.url).wait_ready()
    p.page.locator("#runs tr").nth(1).wait_for(timeout=10000)
    # Nothing sticks out sideways.
    assert p.page.evaluate("document.documentElement.scrollWidth") <= size[0] + 1
    for mode in ["duel", "final", "league", "ab"]:
        p.page.select_option("#mode", mode)
    p.page.select_option("#mode", "duel")
    if size[0] < 500:
        shot(p, "stand-phone.png")


def test_ctrl_c_stops_the_stand_and_the_history_is_kept(stand):
    before = {r["id"]: r["status"] for r in stand.state()["runs"]}
    assert stand.stop() == 0
    again = Stand(stand.work)
    try:
        after = {r["id"]: r["status"] for r in again.state()["runs"]}
        assert after == before
    finally:
        assert again.stop() == 0


def test_twenty_matches_leave_the_stand_no_zombie_children(tmp_path):
    # A stand of its own: the module's is stopped by the Ctrl-C test.
    stand = Stand(tmp_path)
    try:
        # An agent that crashes in round 1 (its process ends by itself and is started again)
        # and one that plays on: every sandbox process of 20 matches is reaped.
        (stand.folder / "crasher.py").write_text(
            "def decide(stav):\n    if stav['kolo'] == 1:\n        raise SystemExit(3)\n    return []\n")
        shutil.copy(ROOT / "agents" / "my_agent.py", stand.folder / "my_agent.py")
        ids = []
        for k in range(20):
            seat = "crasher.py" if k % 2 else "my_agent.py"
            status, text = stand.call("POST", "/api/runs", {"kind": "duel", "seats": [seat, "council"],
                                                            "settings": {"rounds": 5}})
            assert status == 200, text
            ids.append(json.loads(text)["id"])
        for rid in ids:
            assert stand.wait_run(rid, {"finished", "failed", "stopped"})["status"] == "finished", stand.run(rid)
        time.sleep(0.5)
        assert zombie_children(stand.proc.pid) == []
    finally:
        if stand.proc.poll() is None:
            assert stand.stop() == 0
