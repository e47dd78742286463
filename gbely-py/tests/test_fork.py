"""Forks from Python: ``gbely.Match.from_replay`` and the environments' ``reset(options={"replay":
…, "round": …})`` continue a replay's match from any round, as ``gbely play --from`` does on the
command line: the same state, the same commands, the same end."""
import importlib.util
import json
import os
from pathlib import Path

import pytest

import gbely
from gbely._gbely import cli_main
from gbely.env import GbelyEnv

ROOT = Path(__file__).resolve().parents[2]
EXPANDER = ROOT / "agents" / "expander.py"


def load_decide(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.decide


def untimed(doc, notes_from=None):
    """A replay document without its answer times (measured, not played), and without the notes
    of rounds from `notes_from` on (an agent file writes notes; a decide called from Python
    hands in none)."""
    for t in doc["turns"]:
        t.pop("answer_ms", None)
        if notes_from is not None and t["round"] >= notes_from:
            t.pop("notes", None)
    return doc


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """An expander-vs-Council match of 40 rounds on the reference map, and its fork at round 25
    with the same (memoryless) expander, both played by the command line."""
    d = tmp_path_factory.mktemp("fork")
    old = os.getcwd()
    os.chdir(d)
    try:
        assert cli_main(["gbely", "play", str(EXPANDER), "--rounds", "40", "--replay", "src.json", "--sandbox", "off",
                         "-q"]) == 0
        assert cli_main(["gbely", "play", str(EXPANDER), "--from", "src.json", "--round", "25", "--replay",
                         "cli.json", "--sandbox", "off", "-q"]) == 0
    finally:
        os.chdir(old)
    return d


def test_match_from_replay_plays_on_as_the_command_lines_fork(source, tmp_path):
    decide = load_decide(EXPANDER)
    m = gbely.Match.from_replay(str(source / "src.json"), 25, record=True)
    assert m.round == 25 and m.seats == 2
    while not m.is_over:
        m.submit(0, decide(m.observation(0)))
        m.advance()
    m.save_replay(tmp_path / "py.json")
    mine = untimed(json.loads((tmp_path / "py.json").read_text()), notes_from=25)
    cli = untimed(json.loads((source / "cli.json").read_text()), notes_from=25)
    assert any("notes" in t for t in mine["turns"][:25]), "the rounds replayed keep their notes"
    assert mine["fork"] == cli["fork"] and mine["fork"]["round"] == 25
    assert mine["turns"] == cli["turns"]
    assert mine["final"] == cli["final"]
    assert [s["cells"] for s in mine["result"]["sides"]] == [s["cells"] for s in cli["result"]["sides"]]
    # A gbely.Replay names the same source as its file.
    m2 = gbely.Match.from_replay(gbely.Replay.load(source / "src.json"), 25, record=True)
    m2.save_replay(tmp_path / "obj.json")
    assert json.loads((tmp_path / "obj.json").read_text())["fork"] == cli["fork"]


def test_a_fork_at_a_round_not_played_says_why(source):
    with pytest.raises(ValueError, match="past the match's last round"):
        gbely.Match.from_replay(str(source / "src.json"), 40)
    with pytest.raises(OSError):
        gbely.Match.from_replay(str(source / "missing.json"), 3)


def test_the_environment_starts_its_episode_at_the_replays_round(source):
    env = GbelyEnv(observation_dict=True, rounds=40)
    obs, info = env.reset(options={"replay": str(source / "src.json"), "round": 25})
    m = gbely.Match.from_replay(str(source / "src.json"), 25)
    assert info["observation"] == m.observation(0)
    assert info["observation"]["kolo"] == 25
    # Playing the expander's commands on from there ends as the command line's fork.
    decide = load_decide(EXPANDER)
    over = False
    while not over:
        obs, reward, over, truncated, info = env.step(decide(info["observation"]))
    cli = json.loads((source / "cli.json").read_text())
    assert info["result"]["sides"][0]["cells"] == cli["result"]["sides"][0]["cells"]
    with pytest.raises(ValueError, match="give the round"):
        env.reset(options={"replay": str(source / "src.json")})
