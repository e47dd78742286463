"""Replays as data (gbely.Replay.observation/commands/state/dataset, gbely.replay_dataset): the
decoded commands of every seat, built-in players' included, re-simulate to the replay; labels as
the rules and the action coding say; observation arrays as the environment writes them."""
import gzip
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

import gbely
from gbely.env import KINDS, GbelyEnv

FIXTURE_V1 = Path(__file__).resolve().parents[2] / "gbely-engine" / "tests" / "fixtures" / "replay-v1.json"
BASE = (57, 2)  # rules §2: the agent's base on the reference map
DIRS = [(-1, 0), (1, 0), (0, -1), (0, 1)]  # N, S, W, E: kinds 1–4 MOVE, 5–8 ATTACK


def rc(cell_id):
    r, c = cell_id[1:].split("_")
    return int(r), int(c)


def cid(r, c):
    return f"P{r:02}_{c:02}"


def greedy(stav):
    """Attacks from every own cell the first visible foreign neighbour with all its units, and
    fortifies the base with a little: captures, failed attacks and discards (an ATTACK on an own
    cell captured earlier in the list)."""
    foreign = {p["id"] for p in stav["viditelne_susedne_pola"]}
    out = []
    for p in stav["moje_pola"]:
        targets = [n for n in p["susedia"] if n in foreign]
        if targets and p["jednotky"] > 0:
            out.append({"typ": "ATTACK", "z": p["id"], "na": targets[0], "pocet": p["jednotky"]})
    out.append({"typ": "FORTIFY", "pole": stav["moja_zakladna"], "investicia": 0.5})
    return out


def replay_again(rp, tmp_path):
    """Submits every seat's decoded commands (or its violation) through the step API with no
    built-in seat, records, and returns the new replay."""
    rp.verify()  # the engine's own re-simulation agrees with the file
    map_ = gbely.Map.from_text(rp.doc["map"]["file"])
    names = [s["name"] for s in rp.seats]
    m = gbely.Match(map_, rounds=rp.doc["rounds"], council=[], names=names, record=True)
    figures = rp.figures()
    for r in range(rp.rounds_played):
        for s in range(len(rp.seats)):
            if not m.is_active(s):
                assert rp.commands(r, s) is None and rp.observation(r, s) is None
                continue
            v = rp.violation(r, s)
            if v is not None:
                m.violation(s, v["kind"], v["detail"])
            else:
                m.submit(s, rp.commands(r, s))
        m.advance()
        f = m.figures()
        assert f["cells"] == figures[r]["cells"], r
        assert f["units"] == figures[r]["units"], r  # floats compared exactly
    assert m.is_over or rp.result["ended_by"] == "interrupted"
    path = tmp_path / "again.json"
    m.save_replay(path)
    return gbely.Replay.load(path)


def assert_same_final(rp, again):
    assert again.final_state["owner"] == rp.final_state["owner"]
    assert again.final_state["units"] == rp.final_state["units"]
    assert again.final_state["fortification"] == rp.final_state["fortification"]
    h, w = rp.doc["map"]["height"], rp.doc["map"]["width"]
    last = rp.state(rp.rounds_played - 1)
    assert last["owner"].tolist() == np.array(rp.final_state["owner"], np.int8).reshape(h, w).tolist()
    assert last["units"].ravel().tolist() == rp.final_state["units"]
    assert last["fortification"].ravel().tolist() == rp.final_state["fortification"]


# --- round trips: decoded commands re-simulate to the replay ---

def test_round_trip_a_python_callable_against_the_council(tmp_path):
    path = tmp_path / "duel.json.gz"
    gbely.play(greedy, "council", rounds=40, replay=path)
    rp = gbely.Replay.load(path)
    assert rp.seats[1].get("builtin") == "council"
    assert all(t["answers"][1] == "regen" for t in rp.doc["turns"])  # not in the file
    assert rp.commands(0, 1)  # decided again
    again = replay_again(rp, tmp_path)
    assert_same_final(rp, again)
    assert again.result["sides"] == rp.result["sides"]
    assert sum(f["discarded"] for f in rp.figures()) > 0  # the commands exercised discards too
    assert [f["discarded"] for f in again.figures()] == [f["discarded"] for f in rp.figures()]


def test_round_trip_expander_against_the_council(tmp_path):
    path = tmp_path / "bots.json.gz"
    gbely.play("expander-rs", "council", rounds=60, replay=path)
    rp = gbely.Replay.load(path)
    assert [s.get("builtin") for s in rp.seats] == ["expander-rs", "council"]
    again = replay_again(rp, tmp_path)
    assert_same_final(rp, again)
    assert again.result["sides"] == rp.result["sides"]


def test_round_trip_a_final_with_built_ins(tmp_path):
    path = tmp_path / "final.json"
    final_map = gbely.Map.generate_final("dataset-final", 30)
    gbely.final([greedy, "expander-rs", "council:easy"], fill="template-rs", map=final_map, rounds=25,
                replay=path)
    rp = gbely.Replay.load(path)
    builtins = {s.get("builtin") for s in rp.seats}
    assert {"expander-rs", "template-rs", "council:easy", "council"} <= builtins
    again = replay_again(rp, tmp_path)
    assert_same_final(rp, again)
    assert again.result["sides"] == rp.result["sides"]
    rp.to_html(tmp_path / "final.html")  # the viewer regenerates the built-ins' commands too


def test_round_trip_a_version_1_replay(tmp_path):
    rp = gbely.Replay.load(FIXTURE_V1)
    assert rp.doc["version"] == 1
    again = replay_again(rp, tmp_path)
    assert_same_final(rp, again)


def test_a_disqualified_finalist_has_rows_only_for_the_rounds_it_played(tmp_path):
    """Rules §8: the fourth violation disqualifies; the round of it is still the seat's (it
    received the observation), the later ones are not. The violations round-trip too."""
    m = gbely.Match(gbely.Map.generate_final("dataset-dq", 30), rounds=8, record=True)
    for r in range(8):
        if r < 4:
            m.violation(2, "timeout", f"no answer in round {r}")
        for s in (0, 1):
            m.submit(s, greedy(m.observation(s)))
        m.advance()
    m.save_replay(tmp_path / "dq.json")
    rp = gbely.Replay.load(tmp_path / "dq.json")
    assert rp.violation(3, 2) == {"kind": "timeout", "detail": "no answer in round 3"}
    assert rp.commands(3, 2) is None and rp.violation(4, 2) is None
    assert rp.observation(3, 2)["kolo"] == 3 and rp.observation(4, 2) is None
    d = rp.dataset(2)
    assert d["round"][:, 0].tolist() == [0, 1, 2, 3] and not d["kind"].any()
    assert len(rp.dataset(0)["round"]) == 8
    again = replay_again(rp, tmp_path)
    assert_same_final(rp, again)
    assert again.result["sides"] == rp.result["sides"] and rp.result["sides"][2]["disqualified"]


# --- labels, from the rules and the action coding ---

def test_labels_of_hand_made_commands(tmp_path):
    m = gbely.Match("gbely", rounds=6, record=True)
    base, north, east = cid(*BASE), cid(56, 2), cid(57, 3)
    plan = [
        # Round 0: the base holds 10 + 3 + 5 = 18 (rules §4). MOVE north with more than that
        # (discarded: the target is not own) is still MOVE north with all units.
        [{"typ": "MOVE", "z": base, "na": north, "pocet": 100}],
        # Round 1: 18 + 3 + 5 = 26 units. ATTACK east with 4.5 of them.
        [{"typ": "ATTACK", "z": base, "na": east, "pocet": 4.5}],
        # Round 2: two commands from the base.
        [{"typ": "FORTIFY", "pole": base, "investicia": 1}, {"typ": "FORTIFY", "pole": base, "investicia": 2}],
        # Round 3: an ATTACK on a cell that is not a neighbour.
        [{"typ": "ATTACK", "z": base, "na": cid(55, 2), "pocet": 3}],
        # Round 4: an unknown type from the base, and an item that is no command at all.
        [{"typ": "JUMP", "z": base, "na": north, "pocet": 1}, 7],
        # Round 5: FORTIFY on a cell not owned, and FORTIFY the base with exactly its units.
        [{"typ": "FORTIFY", "pole": cid(10, 10), "investicia": 1}, {"typ": "FORTIFY", "pole": base, "investicia": "x"}],
    ]
    for cmds in plan:
        m.submit(0, cmds)
        m.advance()
    m.save_replay(tmp_path / "hand.json")
    rp = gbely.Replay.load(tmp_path / "hand.json")
    d = rp.dataset(0)
    assert d["kind"].shape == (6, 60, 60) and d["kind"].dtype == np.int8
    assert d["fraction"].dtype == np.float32 and d["inexpressible"].dtype == np.bool_
    units = [rp.observation(r, 0)["moje_pola"][0]["jednotky"] for r in range(2)]
    assert units == [18.0, 26.0]
    # Round 0: kind 1 (MOVE north), fraction 1; nothing else labelled.
    assert d["kind"][0][BASE] == 1 and d["fraction"][0][BASE] == 1.0
    assert np.count_nonzero(d["kind"][0]) == 1 and not d["inexpressible"][0].any()
    # Round 1: kind 8 (ATTACK east), fraction 4.5 / 26 in float32.
    assert d["kind"][1][BASE] == 8 and d["fraction"][1][BASE] == np.float32(4.5 / 26)
    # Round 2: two commands from one cell: inexpressible, label kind 0.
    assert d["inexpressible"][2][BASE] and d["kind"][2][BASE] == 0 and d["fraction"][2][BASE] == 0
    # Round 3: a target that is not a neighbour.
    assert d["inexpressible"][3][BASE] and d["kind"][3][BASE] == 0
    # Round 4: an unknown type from the base; the item 7 has no cell.
    assert d["inexpressible"][4][BASE] and d["unlocated"].tolist() == [0, 0, 0, 0, 1, 0]
    # Round 5: a source not owned (flagged where it is); a malformed amount from the base.
    assert d["inexpressible"][5][10, 10] and d["inexpressible"][5][BASE]
    assert d["inexpressible"].sum(axis=(1, 2)).tolist() == [0, 0, 1, 1, 1, 2]
    # The commands as given, and the rounds' discards (rules §6.2): all but round 1's ATTACK and
    # round 5's first FORTIFY (the second: not own) — MOVE to a foreign cell, FORTIFY twice (both
    # valid), non-neighbour, unknown type + not an object, not own + bad amount.
    assert rp.commands(1, 0) == plan[1] and rp.commands(4, 0) == plan[4]
    assert d["discarded"].tolist() == [1, 0, 0, 1, 2, 2]


def test_labels_of_the_version_1_fixture():
    rp = gbely.Replay.load(FIXTURE_V1)
    d = rp.dataset("v1agent.py")
    first = rp.doc["turns"][0]["answers"][0]["commands"]
    # Two ATTACKs from P09_02 (inexpressible), JUMP without a source, 7, and a MOVE from an unknown
    # cell: three items with no cell on the map.
    assert [c if not isinstance(c, dict) else c["typ"] for c in first] == ["ATTACK", "ATTACK", "JUMP", 7, "MOVE"]
    assert d["inexpressible"][0][rc("P09_02")] and d["inexpressible"][0].sum() == 1
    assert d["unlocated"][0] == 3
    assert rp.commands(0, 0) == first


def test_labels_follow_the_action_coding_of_a_policy(tmp_path):
    """Commands made from per-cell kinds and fractions are labelled with those kinds and
    fractions (the amount rule of the shared contract: fraction × observed units)."""
    rng = np.random.default_rng(11)
    m = gbely.Match("gbely", rounds=30, record=True)
    chosen = []
    for r in range(30):
        stav = m.observation(0)
        kind = np.zeros((60, 60), np.int8)
        frac = np.zeros((60, 60), np.float32)
        cmds = []
        for p in stav["moje_pola"]:
            (row, col), u = rc(p["id"]), p["jednotky"]
            k = int(rng.integers(0, KINDS))
            f = np.float32(rng.choice([0.25, 0.5, 1.0]))
            if k == 0 or u <= 0:
                continue
            if k == 9:
                cmds.append({"typ": "FORTIFY", "pole": p["id"], "investicia": float(f) * u})
            else:
                dr, dc = DIRS[(k - 1) % 4]
                if not (0 <= row + dr < 60 and 0 <= col + dc < 60):
                    continue
                typ = "MOVE" if k <= 4 else "ATTACK"
                cmds.append({"typ": typ, "z": p["id"], "na": cid(row + dr, col + dc), "pocet": float(f) * u})
            kind[row, col], frac[row, col] = k, f
        chosen.append((kind, frac))
        m.submit(0, cmds)
        m.advance()
    m.save_replay(tmp_path / "coded.json")
    d = gbely.Replay.load(tmp_path / "coded.json").dataset(0)
    assert not d["inexpressible"].any()
    for r, (kind, frac) in enumerate(chosen):
        np.testing.assert_array_equal(d["kind"][r], kind)
        np.testing.assert_allclose(d["fraction"][r], frac, rtol=1e-6)


# --- observation arrays: the environment's ---

def test_dataset_observations_are_the_environments(tmp_path):
    """A seeded match in GbelyEnv with a fixed sequence of command-list actions, played again
    through a recorded gbely.Match: the dataset's arrays are the environment's, round by round."""
    rounds = 25
    env = GbelyEnv(rounds=rounds, opponent="council")
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    m = gbely.Match("gbely", rounds=rounds, record=True)
    seen = []
    for r in range(rounds):
        seen.append((obs, info["action_mask"]))
        stav = m.observation(0)
        cmds = []
        for p in stav["moje_pola"]:
            foreign = [n for n in p["susedia"] if obs["owner"][rc(n)] != 1]
            if foreign and p["jednotky"] > 0 and rng.random() < 0.7:
                cmds.append({"typ": "ATTACK", "z": p["id"], "na": foreign[rng.integers(len(foreign))],
                             "pocet": p["jednotky"] * float(rng.choice([0.5, 1.0]))})
        m.submit(0, cmds)
        m.advance()
        obs, reward, term, trunc, info = env.step({"prikazy": cmds})
        if term or trunc:
            break
    m.save_replay(tmp_path / "env.json")
    rp = gbely.Replay.load(tmp_path / "env.json")
    d = rp.dataset(0)
    assert len(d["kind"]) == len(seen)
    for r, (o, mask) in enumerate(seen):
        for k in ("terrain", "owner", "units", "fortification", "visible", "base", "round"):
            assert d[k][r].dtype == o[k].dtype, k
            np.testing.assert_array_equal(d[k][r], o[k], err_msg=f"round {r}: {k}")
        np.testing.assert_array_equal(d["action_mask"][r], mask, err_msg=f"round {r}")
        one = rp.observation_arrays(r, 0)
        for k in o:
            np.testing.assert_array_equal(one[k], o[k])
    # Per-round figures: cells at the end of each round, and GbelyEnv's default reward.
    assert d["cells"].tolist() == [f["cells"][0] for f in rp.figures()]
    before = np.concatenate([[1], d["cells"][:-1]])
    np.testing.assert_allclose(d["reward"], (d["cells"] - before) * 100 / 3600, rtol=1e-6)


def test_padding_looks_unseen(tmp_path):
    path = tmp_path / "small.json"
    gbely.play(greedy, "council", map=gbely.Map.generate("pad", 20), rounds=8, replay=path)
    rp = gbely.Replay.load(path)
    plain, padded = rp.dataset(0), rp.dataset(0, grid=(24, 30))
    h, w = plain["kind"].shape[1:]
    assert padded["kind"].shape == (8, 24, 30) and padded["action_mask"].shape == (8, 24, 30, KINDS)
    for k, v in plain.items():
        if v.ndim >= 3:
            np.testing.assert_array_equal(padded[k][:, :h, :w], v, err_msg=k)
    pad = np.ones((8, 24, 30), bool)
    pad[:, :h, :w] = False
    assert (padded["terrain"][pad] == -1).all() and (padded["owner"][pad] == -1).all()
    for k in ("units", "fortification", "visible", "base", "kind", "fraction", "inexpressible"):
        assert not padded[k][pad].any(), k
    assert (padded["action_mask"][pad] == [1] + [0] * 9).all()
    one = rp.observation_arrays(3, 0, grid=(24, 30))
    for k in ("terrain", "owner", "units", "fortification", "visible", "base", "action_mask"):
        np.testing.assert_array_equal(one[k], padded[k][3], err_msg=k)
    with pytest.raises(ValueError, match="smaller than the map"):
        rp.dataset(0, grid=(10, 10))


def test_seats_by_name_states_and_errors(tmp_path):
    path = tmp_path / "r.json"
    gbely.play(greedy, "council", rounds=5, replay=path)
    rp = gbely.Replay.load(path)
    assert rp.seat_of("council") == 1
    with pytest.raises(ValueError, match="no seat"):
        rp.dataset("nobody")
    with pytest.raises(ValueError, match="does not exist"):
        rp.commands(0, 2)
    with pytest.raises(ValueError, match="not played"):
        rp.observation(5, 0)
    s0 = rp.state(0)
    assert s0["owner"].dtype == np.int8 and s0["units"].dtype == np.float64
    assert [(s0["owner"] == k).sum() for k in (0, 1)] == rp.figures()[0]["cells"]
    # Loaded from the document rather than a file, the same data; a replay still pickles.
    same = gbely.Replay(json.loads(path.read_text()))
    assert same.commands(3, 1) == rp.commands(3, 1)
    assert same.observation(3, 0) == rp.observation(3, 0)
    copy = pickle.loads(pickle.dumps(rp))
    assert copy.commands(3, 1) == rp.commands(3, 1)


# --- a folder of replays as one stream ---

def test_a_folder_streams_and_names_a_broken_file(tmp_path):
    folder = tmp_path / "replays"
    folder.mkdir()
    gbely.play(greedy, "council", rounds=6, replay=folder / "a.json.gz")
    gbely.play("expander-rs", "council", rounds=4, replay=folder / "b.json")
    shutil.copy(FIXTURE_V1, folder / "c.json")
    (folder / "b.html").write_text("<html>a viewer page, not a replay</html>")
    items = list(gbely.replay_dataset(folder))
    assert [(Path(i.path).name, i.seat, i.name) for i in items] == [
        ("a.json.gz", 0, "greedy"), ("a.json.gz", 1, "council"),
        ("b.json", 0, "expander-rs"), ("b.json", 1, "council"),
        ("c.json", 0, "v1agent.py"), ("c.json", 1, "council")]
    assert [len(i.data["kind"]) for i in items] == [6, 6, 4, 4, 12, 12]
    only = list(gbely.replay_dataset([folder / "b.json", folder / "c.json"], seat="council", grid=(60, 60)))
    assert [i.data["kind"].shape for i in only] == [(4, 60, 60), (12, 60, 60)]
    # A broken file: named in the error; left out with a warning on request.
    with gzip.open(folder / "b2.json.gz", "wb") as f:
        f.write(b'{"format": "gbely-replay", "version": 2, "engine": "x", "map": ')
    with pytest.raises(gbely.ReplayError, match="b2.json.gz"):
        list(gbely.replay_dataset(folder, seat=0))
    with pytest.warns(UserWarning, match="b2.json.gz"):
        kept = list(gbely.replay_dataset(folder, seat=0, skip_broken=True))
    assert [Path(i.path).name for i in kept] == ["a.json.gz", "b.json", "c.json"]
    with pytest.raises(OSError, match="missing.json"):
        list(gbely.replay_dataset([folder / "missing.json"]))


def test_the_imitation_snippet_of_docs_learning_md_runs(tmp_path, capsys):
    text = (Path(__file__).resolve().parents[2] / "docs" / "learning.md").read_text()
    snippet = text.split("## Replays as data", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    folder = tmp_path / "replays"
    folder.mkdir()
    for k, opponent in enumerate(["council", "council:easy"]):
        gbely.play("expander-rs", opponent, rounds=20, replay=folder / f"m{k}.json.gz")
    assert '"gbely-league/replays"' in snippet and "range(300)" in snippet
    names = {}
    exec(snippet.replace('"gbely-league/replays"', repr(str(folder))).replace("range(300)", "range(40)"), names)
    out = capsys.readouterr().out
    cells, accuracy = out.split(" cells, accuracy ")
    y = names["y"]
    assert int(cells) == len(y) > 1000
    assert float(accuracy) > np.bincount(y).max() / len(y)  # better than the most frequent label
