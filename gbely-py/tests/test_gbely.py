"""The gbely package as a competitor uses it, installed with pip into a fresh virtualenv."""
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gbely

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "agents" / "my_agent.py"
EXPANDER = ROOT / "agents" / "expander.py"


def load_decide(path):
    spec = importlib.util.spec_from_file_location(path.stem + "_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.decide


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_python_m_gbely_plays_the_template():
    out = subprocess.run([sys.executable, "-m", "gbely", str(TEMPLATE), "--rounds", "20", "--json", "--no-replay"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["last_round"] == 19
    assert doc["sides"][0]["name"] == "my_agent.py"
    assert doc["sides"][0]["violations"] == 0 and doc["sides"][0]["details"]["violations"] == []


def test_python_m_gbely_stand_serves_the_stand_until_ctrl_c(tmp_path):
    """`python -m gbely stand`: the stand of a folder, its address on stderr, its state over HTTP
    with the token, Ctrl-C stops it with exit 0."""
    import http.client
    import re
    import signal
    import shutil
    import time

    (tmp_path / "bots").mkdir()
    shutil.copy(TEMPLATE, tmp_path / "bots" / "mine.py")
    err = open(tmp_path / "stand.err", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "gbely", "stand", "bots", "--no-open", "--data", "d"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not (m := re.search(r"is at http://127\.0\.0\.1:(\d+)/\?t=(\w+)", (err.seek(0), err.read())[1])):
            assert proc.poll() is None and time.monotonic() < deadline, "no address"
            time.sleep(0.05)
        port, token = int(m.group(1)), m.group(2)
        while True:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", f"/api/state?t={token}", headers={"Host": f"127.0.0.1:{port}"})
            state = json.loads(c.getresponse().read())
            if state["agents"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [a["file"] for a in state["agents"]] == ["mine.py"]
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/api/state", headers={"Host": f"127.0.0.1:{port}"})
        assert c.getresponse().status == 403, "no token, no answer"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0


def test_the_console_script_is_the_same_cli():
    exe = Path(sys.executable).with_name("gbely")
    out = subprocess.run([str(exe), "map", "stats", "--map", "seed:py", "--size", "20"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "(20×20)" in out.stdout and "symmetric    yes" in out.stdout
    bad = subprocess.run([str(exe), "play", "x.py", "--bogus"], capture_output=True, text=True)
    assert bad.returncode == 2


def test_play_a_file_agent():
    r = gbely.play(str(TEMPLATE), rounds=30)
    assert r.last_round == 29 and r.ended_by == "rounds"
    assert r.sides[0].name == "my_agent.py" and r.sides[1].name == "council"
    assert r.violations == [0, 0]
    assert r.cells[0] > 1
    assert r.sides[0].log.endswith("seat0-my_agent.log") and os.path.exists(r.sides[0].log)


def test_play_a_callable_and_an_object():
    class Agent:
        def __init__(self):
            self.rounds = []

        def decide(self, stav):
            self.rounds.append(stav["kolo"])
            assert set(stav) == {"kolo", "moja_zakladna", "moje_pola", "viditelne_susedne_pola"}
            assert stav["moja_zakladna"] == "P57_02"
            return []

    a = Agent()
    r = gbely.play(a, rounds=7)
    assert a.rounds == list(range(7))
    assert r.cells[0] == 1
    r = gbely.play(lambda stav: {"prikazy": []}, opponent="council", map="seed:x", size=20, rounds=3)
    assert r.map == "seed:x"


def test_the_same_match_through_the_file_and_the_callable_is_identical(tmp_path):
    by_file = gbely.play(str(EXPANDER), rounds=60, replay=tmp_path / "file.json")
    by_callable = gbely.play(load_decide(EXPANDER), rounds=60, replay=tmp_path / "callable.json")
    assert by_file.cells == by_callable.cells
    assert by_file.shares == by_callable.shares
    assert by_file.tiebreak_rounds == by_callable.tiebreak_rounds
    assert by_file.discarded == by_callable.discarded
    a = json.loads((tmp_path / "file.json").read_text())
    b = json.loads((tmp_path / "callable.json").read_text())
    # The same but for the answer times, which are measured (docs/replay-format.md): the agent
    # process's are recorded every round, within the 2 s limit.
    times = [t.pop("answer_ms") for t in a["turns"]]
    assert all(ms[0] is not None and ms[0] < 2000 and ms[1] is None for ms in times)
    for t in b["turns"]:
        t.pop("answer_ms", None)
    assert a["turns"] == b["turns"] and a["final"] == b["final"]


def test_import_pravidla_inside_an_agent(tmp_path):
    agent = tmp_path / "rules_agent.py"
    agent.write_text("import pravidla\nfrom pravidla import POCET_KOL\n"
                     "def decide(stav):\n    assert POCET_KOL == 150 and pravidla.PRIECHODNOST['vrch'] == 0.6\n    return []\n")
    r = gbely.play(str(agent), rounds=3)
    assert r.violations == [0, 0]
    import pravidla  # installed with the package, next to gbely
    assert pravidla is gbely.pravidla
    assert gbely.pravidla.TERENNY_BONUS == {"luka": 1.0, "vrch": 1.5, "rieka": 1.3}
    source = Path(gbely.pravidla.__file__).read_text()
    assert source == gbely._gbely.pravidla_source()
    assert "import" not in [line.split(" ")[0] for line in source.splitlines()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_the_sandbox_holds_one_file_as_the_judge_does_and_can_be_turned_off(tmp_path):
    # A module beside the agent file: the judge receives one file, and so does the sandbox.
    (tmp_path / "helper.py").write_text("ANSWER = []\n")
    agent = tmp_path / "uses_helper.py"
    agent.write_text("import helper\ndef decide(stav):\n    return helper.ANSWER\n")
    boxed = gbely.play(str(agent), rounds=2, sandbox="require")
    assert boxed.isolation is not None and boxed.isolation.startswith("sandboxed (bubblewrap")
    assert [v["kind"] for v in boxed.sides[0].violations] == ["crash", "crash"]
    assert "No module named 'helper'" in boxed.sides[0].violations[0]["detail"]
    bare = gbely.play(str(agent), rounds=2, sandbox="off")
    assert bare.violations == [0, 0]
    assert bare.isolation == "not sandboxed: the sandbox is off (--no-sandbox)"
    assert gbely.play(lambda stav: [], rounds=1).isolation is None
    with pytest.raises(ValueError, match="auto, require or off"):
        gbely.play(str(agent), rounds=1, sandbox="maybe")


def test_the_step_api_through_a_full_match(tmp_path):
    decide = load_decide(EXPANDER)
    m = gbely.Match(map="gbely", rounds=150, record=True)
    assert m.seats == 2 and m.map.name == "gbely"
    while not m.is_over:
        m.submit(0, decide(m.observation(0)))
        report = m.advance()
        assert report.round == m.round - (0 if m.is_over else 1) and report.over == m.is_over
    res = m.result()
    assert res["last_round"] == 149
    fig = m.figures()
    assert fig["cells"] == [s["cells"] for s in res["sides"]]
    m.save_replay(tmp_path / "steps.json")
    rp = gbely.Replay.load(tmp_path / "steps.json")
    assert rp.rounds_played == 150
    assert rp.figures()[-1]["cells"] == fig["cells"]
    # The same match through gbely.play gives the same result.
    r = gbely.play(decide, rounds=150)
    assert r.cells == fig["cells"]
    with pytest.raises(RuntimeError, match="over"):
        m.advance()


def test_a_callable_that_raises_is_disqualified_after_four_violations(capfd):
    def decide(stav):
        raise ZeroDivisionError("oops")

    r = gbely.play(decide, rounds=150)
    s = r.sides[0]
    assert [v["kind"] for v in s.violations] == ["crash"] * 4
    assert "ZeroDivisionError" in s.violations[0]["detail"]
    assert s.disqualified and s.share is None
    assert r.ended_by == "disqualification" and r.last_round == 3
    assert "ZeroDivisionError" in capfd.readouterr().err


def test_a_callable_that_is_too_slow_loses_those_rounds():
    def decide(stav):
        if stav["kolo"] in (1, 2):
            time.sleep(0.15)
        return []

    with pytest.warns(gbely.TimeLimitWarning, match="isolate=True"):
        r = gbely.play(decide, rounds=5, time_limit=0.1)
    assert [(v["round"], v["kind"]) for v in r.sides[0].violations] == [(1, "timeout"), (2, "timeout")]
    assert not r.sides[0].disqualified


def test_garbage_answers_are_violations_and_bad_commands_are_discarded():
    answers = {0: "hello", 1: {"prikazy": 5}, 2: [{"typ": "MOVE", "pocet": float("nan")}],
               3: [5, {"typ": "JUMP"}, {"typ": "MOVE", "z": "P99_99", "na": "P57_02", "pocet": 1}]}

    def decide(stav):
        return answers.get(stav["kolo"], [])

    r = gbely.play(decide, rounds=5)
    assert [v["kind"] for v in r.sides[0].violations] == ["unreadable"] * 3
    assert r.sides[0].discarded == {"not_an_object": 1, "unknown_type": 1, "unknown_cell": 1}
    assert not r.sides[0].disqualified


def test_maps_from_python(tmp_path):
    m = gbely.Map.reference()
    assert (m.width, m.height) == (60, 60)
    assert m.seats == [("army", "P57_02"), ("council", "P02_57")]
    assert m.terrain("P57_02") == "luka" and m.is_base("P57_02") and m.garrison("P57_02") == 0
    assert m.neighbours("P12_07") == ["P11_07", "P13_07", "P12_06", "P12_08"]
    assert len(m.cells()) == 3600 and m.cells()[0] == "P00_00"
    assert all(1 <= m.garrison(c) <= 8 for c in m.cells() if not m.is_base(c))
    assert m.render().splitlines()[0].startswith("gbely — 60×60")
    assert m.stats()["symmetric"] is True
    g = gbely.Map.generate("abc", 30, 20)
    assert (g.width, g.height) == (30, 20)
    g.save(tmp_path / "abc.map")
    assert gbely.Map.load(tmp_path / "abc.map").fingerprint == g.fingerprint
    with pytest.raises(OSError, match="cannot read the map"):
        gbely.Map.load(tmp_path / "missing.map")
    (tmp_path / "bad.map").write_text("gbely-map 1\nname x\nsize 2 2\nterrain\n..\n.X\n")
    with pytest.raises(ValueError, match="line 6: cell P01_01"):
        gbely.Map.load(tmp_path / "bad.map")
    with pytest.raises(ValueError, match="not a cell"):
        m.terrain("P99_99")
    with pytest.raises(ValueError, match="out of range"):
        gbely.Map.generate("x", 5)


def test_clear_errors_for_bad_agents_and_maps(tmp_path):
    (tmp_path / "nodecide.py").write_text("def think(stav):\n    return []\n")
    with pytest.raises(ValueError, match="defines no top-level function decide"):
        gbely.play(str(tmp_path / "nodecide.py"))
    with pytest.raises(gbely.AgentError, match="not found"):
        gbely.play(str(tmp_path / "ghost.py"))
    with pytest.raises(ValueError, match="cannot read the map"):
        gbely.play(lambda s: [], map=str(tmp_path / "nomap.map"))
    with pytest.raises(TypeError, match="an agent is"):
        gbely.play(42)


def test_replays_load_plain_and_gzipped(tmp_path):
    import gzip
    r = gbely.play(lambda s: [], rounds=4, replay=tmp_path / "r.json")
    assert r.replay.endswith("r.json")
    (tmp_path / "r.json.gz").write_bytes(gzip.compress((tmp_path / "r.json").read_bytes()))
    a, b = gbely.Replay.load(tmp_path / "r.json"), gbely.Replay.load(tmp_path / "r.json.gz")
    assert a.figures() == b.figures() and len(a.figures()) == 4
    assert len(a.final_state["owner"]) == 3600
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a replay"):
        gbely.Replay.load(tmp_path / "broken.json")


def test_replay_to_html_and_verify(tmp_path):
    gbely.play(load_decide(EXPANDER), rounds=20, replay=tmp_path / "r.json.gz")
    rp = gbely.Replay.load(tmp_path / "r.json.gz")
    rp.verify()
    out = rp.to_html(tmp_path / "r.html")
    text = Path(out).read_text()
    assert text.startswith("<!doctype html>") and "gbely-data" in text
    rp.doc["turns"][5]["cells"][0] += 1  # version 2 keeps per-round figures, not cell changes
    with pytest.raises(ValueError, match="round 5"):
        rp.verify()


def test_a_final_from_python_with_files_and_callables(tmp_path):
    decide = load_decide(EXPANDER)
    r = gbely.final([decide, str(TEMPLATE)], fill="expander", size=40, rounds=25, seats=[1, 4],
                    replay=tmp_path / "final.json.gz")
    assert len(r.sides) == 9 and r.sides[8].name == "council"
    assert r.sides[1].name == "decide" and r.sides[4].name == "my_agent.py"
    total = sum(s.cells for s in r.sides)
    assert total <= 40 * 40
    shares = sum(s.share for s in r.sides)
    neutral = (40 * 40 - total) / (40 * 40) * 100
    assert abs(shares + neutral - 100) < 1e-9
    gbely.Replay.load(tmp_path / "final.json.gz").verify()
    with pytest.raises(ValueError, match="1 to 8"):
        gbely.final([])


SLOW_AGENT = "import time\ndef decide(stav):\n    time.sleep(0.3)\n    return []\n"


@pytest.mark.parametrize("kind", ["file", "callable"])
def test_ctrl_c_in_gbely_play_raises_keyboardinterrupt_and_keeps_the_replay(tmp_path, kind):
    """Ctrl-C is never swallowed into a disqualification: the match stops, the agents are
    killed, the replay of the rounds played is written (marked interrupted), and Python raises
    KeyboardInterrupt as usual."""
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, time, gbely\n"
        "sys.path.insert(0, %r)\n"
        "import slow_agent\n"
        "agent = 'slow_agent.py' if sys.argv[1] == 'file' else slow_agent.decide\n"
        "try:\n"
        "    gbely.play(agent, 'template', map='seed:ki', size=16, replay='r.json', time_limit=5)\n"
        "    print('FINISHED')\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', flush=True)\n" % str(tmp_path)
    )
    child = subprocess.Popen([sys.executable, str(script), kind], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    assert child.poll() is None, child.communicate()
    sent = time.monotonic()
    child.send_signal(2)  # SIGINT, as Ctrl-C in a terminal
    out, err = child.communicate(timeout=30)
    took = time.monotonic() - sent
    assert "KeyboardInterrupt" in out, out + err
    assert took < 3, took
    replay = gbely.Replay.load(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["result"]["ended_by"] == "interrupted"
    assert 0 < len(doc["turns"]) < 150
    assert replay.verify() is None
    # No agent process is left behind.
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert [p for p in left if int(p) != child.pid] == []


def test_a_match_without_recording_steps_and_refuses_to_save(tmp_path):
    m = gbely.Match(map="seed:norec", rounds=3, record=False)
    while not m.is_over:
        m.submit(0, [])
        m.advance()
    assert m.result()["last_round"] == 2
    with pytest.raises(ValueError, match="not recorded"):
        m.save_replay(tmp_path / "r.json")


def test_league_and_ab_from_python(tmp_path):
    db = tmp_path / "league.sqlite"
    doc = gbely.league(["template", "expander"], council=True, maps="seed:py-league", rounds=10, db=db)
    assert doc["run"]["total"] == 6 and doc["run"]["played"] == 6
    assert sorted(s["name"] for s in doc["standings"]) == ["council", "expander", "template"]
    again = gbely.league(["template", "expander"], council=True, maps="seed:py-league", rounds=10, db=db)
    assert again["run"]["played"] == 0 and again["standings"] == doc["standings"]
    r = gbely.ab("expander", "template", rounds=30, elo1=50, db=tmp_path / "ab.sqlite")
    assert r["verdict"] == "better" and r["pairs"] == 23 and r["pentanomial"] == [0, 0, 2, 0, 21]
    with pytest.raises(gbely.Error, match="not found"):
        gbely.league(["no_such_agent.py", "council"], db=db)
    # More thinking agents than cores (4096, the most allowed): allowed, and said.
    doc = gbely.league(["template", "expander"], maps="seed:py-th", rounds=3, db=tmp_path / "th.sqlite", thinking=4096)
    assert doc["run"]["played"] == 2
    assert any(n.startswith("up to 4096 agent processes think at once") for n in doc["run"]["notes"]), doc["run"]


def test_a_league_from_python_leaves_the_programs_other_processes_alone(tmp_path):
    """Regression: gbely.league made the calling Python process a child subreaper and then killed
    every child it had, so a daemon the program had started (a Ray head, say) died with the
    league. Only the `gbely` command line, which owns its process, may reap orphans."""
    db = tmp_path / "l.sqlite"
    gbely.league(["template-rs", "council"], maps="seed:orphans", rounds=3, db=db)
    # A daemon: its parent shell exits at once, so it is an orphan of this process's tree.
    out = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True)
    daemon = int(out.stdout)
    try:
        gbely.league(["template-rs", "council:easy"], maps="seed:orphans", rounds=3, db=tmp_path / "m.sqlite")
        time.sleep(0.2)
        state = Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "Z", "the daemon was killed"
    finally:
        try:
            os.kill(daemon, 9)
            os.waitpid(daemon, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _comparable(doc):
    """A result document without what differs between two runs of the same match: where the
    logs are (each run has its own folder) and how long agents took (timings, CPU notes)."""
    doc = json.loads(json.dumps(doc))
    doc.pop("fairness")
    for side in doc["sides"]:
        side["details"].pop("log")
        side["details"].pop("timing")
    return doc


def _cli_json(*args):
    """The ``--json`` document of a ``gbely`` command, run as the command line (``python -m gbely``)."""
    out = subprocess.run([sys.executable, "-m", "gbely", *args, "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_cli_and_python_give_the_same_result_for_the_same_match(tmp_path):
    # One match service plays both: the same names (an agent's AGENT_NAME and AGENT_VERSION, a
    # name two seats share with its seat number), sides, details, isolation and interpreter.
    agent = tmp_path / "named.py"
    agent.write_text('AGENT_NAME = "lab"\nAGENT_VERSION = "2"\n' + TEMPLATE.read_text())
    args = ["--rounds", "25", "--time-limit", "off", "--python", sys.executable, "--no-replay"]
    cli = _cli_json("play", str(agent), "--opponent", str(agent), *args)
    py = json.loads(gbely._gbely.play_match([str(agent), str(agent)], rounds=25, time_limit=None,
                                            python=sys.executable))
    assert [s["name"] for s in cli["sides"]] == ["lab 2 (seat 0)", "lab 2 (seat 1)"]
    assert os.path.samefile(cli["python"], sys.executable)
    assert _comparable(py) == _comparable(cli)


def test_the_cli_and_python_give_the_same_result_for_the_same_final(tmp_path):
    args = ["--size", "40", "--rounds", "20", "--time-limit", "off", "--no-replay"]
    cli = _cli_json("final", "expander-rs", "--fill", "template-rs", *args)
    r = gbely.final(["expander-rs"], fill="template-rs", size=40, rounds=20, time_limit=None)
    assert [s.name for s in r.sides] == [s["name"] for s in cli["sides"]]
    assert sorted(s["name"] for s in cli["sides"])[:2] == ["council", "expander-rs"]
    seated = [s["name"].split(" (seat ")[0] for s in cli["sides"]]
    assert seated.count("template-rs") == 7
    py = json.loads(gbely._gbely.play_match(seated,
                                            map=gbely.Map.generate_final("gbely-final", 40), rounds=20,
                                            time_limit=None))
    assert _comparable(py) == _comparable(cli)
    assert [row["name"] for row in py["table"]] == [row["name"] for row in cli["table"]]


def test_a_callables_notes_reach_the_replay(tmp_path):
    # The answer's `debug` key (ignored by the rules and the judge) is kept in the replay.
    def decide(stav):
        return {"prikazy": [], "debug": {"text": "round %d" % stav["kolo"],
                                         "cells": {stav["moja_zakladna"]: "home", "P99_99": "off the map"}}}

    gbely.play(decide, rounds=3, replay=tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    base = 57 * 60 + 2  # P57_02, seat 0's base on the 60-wide reference map
    assert [t["notes"] for t in doc["turns"]] == [
        [{"seat": 0, "text": "round %d" % r, "cells": [[base, "home"]]}] for r in range(3)
    ]


def test_a_callables_drawings_reach_the_replay(tmp_path):
    # The debug key's `draw` (issue 35): drawn on the map by the viewer, kept in the notes.
    def decide(stav):
        return {"prikazy": [], "debug": {"draw": [{"dot": stav["moja_zakladna"], "color": "#f0f"},
                                                  {"line": [stav["moja_zakladna"], "P56_02"]},
                                                  {"label": "P56_02", "text": "next"}, {"dot": "P99_99"}]}}

    gbely.play(decide, rounds=2, replay=tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    base, north = 57 * 60 + 2, 56 * 60 + 2  # P57_02 and P56_02 on the 60-wide reference map
    assert [t["notes"] for t in doc["turns"]] == [
        [{"seat": 0, "draw": [{"dot": base, "color": "#ff00ff"}, {"line": [base, north]},
                              {"label": north, "text": "next"}]}] for _ in range(2)
    ]
