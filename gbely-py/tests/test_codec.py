"""gbely.codec against the learning environments, cell for cell: the arrays and mask of the §5
dict, and the commands of per-cell actions (the environment's own list, and the state it leads
to); `gbely pack` inlines the codec; a packed policy plays exactly as it plays in GbelyEnv."""
import ast
import json
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gbely
from gbely import codec
from gbely.env import KINDS, GbelyEnv, parallel_env
from gbely.pack import PackError, pack

SMALL_FINAL = gbely.Map.generate_final("env-test", size=30)
ARRAYS = {"terrain": np.int8, "owner": np.int8, "units": np.float32, "fortification": np.float32,
          "visible": np.int8, "base": np.int8}


def assert_observation(lists, obs, mask):
    """The codec's lists hold exactly the environment's arrays (values, not just float32 casts)."""
    for key, dtype in ARRAYS.items():
        assert obs[key].dtype == dtype, key
        assert lists[key] == obs[key].ravel().tolist(), key
    assert [lists["round"]] == obs["round"].tolist()
    assert lists["action_mask"] == mask.ravel().tolist()


def random_action(rng, shape):
    """Any kind (legal or not) and fractions that probe the amount rule: 0, 1, above 1, below 0,
    NaN, tiny, values that round to 1 in float32, and uniform ones — as float64, so the
    environment's float32 rounding is part of what is compared."""
    kind = rng.integers(0, KINDS, shape)
    pick = rng.integers(0, 9, shape)
    special = np.array([0.0, 1.0, 1.7, -0.3, np.nan, 1e-46, 1 - 1e-9, 0.5, 0.0])
    fraction = np.where(pick < 8, special[pick], rng.random(shape))
    fraction = np.where(rng.random(shape) < 0.5, rng.random(shape), fraction)
    return kind, fraction


def commands_of_env(core, seat, kind, fraction):
    return core.commands(seat, kind.astype(np.int8), fraction.astype(np.float32))


def check_seat(core, seat, obs, info, h, w, finalist, rng):
    stav = info["observation"]
    assert_observation(codec.observe(stav, h, w, final=finalist), obs, info["action_mask"])
    kind, fraction = random_action(rng, (h, w))
    expected = commands_of_env(core, seat, kind, fraction)
    got = codec.commands(stav, kind.ravel().tolist(), fraction.ravel().tolist(), w)
    assert got == expected
    # cell by cell, from numpy scalars as well
    per_cell = []
    for p in stav["moje_pola"]:
        r, c = codec.parse_id(p["id"])
        per_cell.append(codec.command(p, kind[r, c], fraction[r, c]))
    assert [c for c in per_cell if c is not None] == expected
    return len(expected)


def legal_action(rng, mask):
    weights = mask * rng.random(mask.shape)
    kind = weights.argmax(axis=2).astype(np.int8)
    return {"kind": kind, "fraction": rng.random(kind.shape).astype(np.float32)}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("seat", [0, 1])
def test_duel_against_the_council_cell_for_cell(seed, seat):
    env = GbelyEnv(seat=seat, rounds=40, observation_dict=True)
    h, w = env.map.height, env.map.width
    rng = np.random.default_rng(seed)
    obs, info = env.reset()
    sent = 0
    done = False
    while not done:
        sent += check_seat(env._core, seat, obs, info, h, w, False, rng)
        obs, _, done, _, info = env.step(legal_action(rng, info["action_mask"]))
    assert sent > 200


@pytest.mark.parametrize("seed", [4, 5])
def test_two_agents_and_a_final_cell_for_cell(seed):
    rng = np.random.default_rng(seed)
    for map_, council, rounds in (("gbely", False, 25), (SMALL_FINAL, None, 60)):
        env = parallel_env(map_, council=council, rounds=rounds, observation_dict=True)
        h, w = env.map.height, env.map.width
        finalist = map_ is SMALL_FINAL
        observations, infos = env.reset()
        neighbours = 0  # observations where a finalist may not attack a neighbour of another finalist
        while env.agents:
            for a in env.agents:
                check_seat(env._core, int(a.split("_")[1]), observations[a], infos[a], h, w, finalist, rng)
                stav = infos[a]["observation"]
                neighbours += finalist and codec.observe(stav, h, w, True) != codec.observe(stav, h, w, False)
            actions = {a: legal_action(rng, infos[a]["action_mask"]) for a in env.agents}
            observations, _, _, _, infos = env.step(actions)
        assert neighbours > 0 or not finalist


def test_the_councils_view_of_a_final():
    # The Council's seat of a final sees the finalists as armada (seat 0), armada_2, …
    seats = SMALL_FINAL.seats
    council = next(k for k, (role, _) in enumerate(seats) if role == "council")
    env = GbelyEnv(SMALL_FINAL, opponent="expander", seat=council, rounds=30, observation_dict=True)
    rng = np.random.default_rng(6)
    obs, info = env.reset()
    done = False
    owners = set()
    while not done:
        check_seat(env._core, council, obs, info, env.map.height, env.map.width, False, rng)
        owners |= set(obs["owner"].ravel().tolist())
        obs, _, done, _, info = env.step(legal_action(rng, info["action_mask"]))
    assert owners & {3, 4}  # finalists in the Council's sight


def test_the_codecs_commands_lead_to_the_same_state_bit_for_bit():
    env = GbelyEnv(rounds=40, observation_dict=True)
    rng = np.random.default_rng(7)
    obs, info = env.reset()
    for _ in range(40):
        kind, fraction = random_action(rng, obs["terrain"].shape)
        kind = np.where(rng.random(kind.shape) < 0.5, legal_action(rng, info["action_mask"])["kind"], kind)
        twin = env.clone()
        listed = codec.commands(info["observation"], kind.ravel().tolist(), fraction.ravel().tolist(),
                                obs["terrain"].shape[1])
        obs, _, done, _, info = env.step({"kind": kind, "fraction": fraction})
        twin.step(listed)
        assert pickle.dumps(twin._core) == pickle.dumps(env._core)
        if done:
            break


def test_hand_made_cases_of_the_amount_rule():
    cell = {"id": "P00_00", "typ": "luka", "jednotky": 45.4, "opevnenie": 0.0, "susedia": ["P01_00", "P00_01"]}
    # a fraction of 1 (or more) sends the observed units themselves, as a submission would
    assert codec.command(cell, 6, 1.0) == {"typ": "ATTACK", "z": "P00_00", "na": "P01_00", "pocet": 45.4}
    assert codec.command(cell, 9, 3.0)["investicia"] == 45.4
    assert codec.command(dict(cell, jednotky=3.0), 2, 0.5)["pocet"] == 1.5
    # directions off the map (north, west of P00_00) give no command
    assert codec.command(cell, 1, 1.0) is None and codec.command(cell, 7, 1.0) is None
    assert codec.command(cell, 0, 1.0) is None and codec.command(cell, 4, 0.0) is None
    assert codec.command(cell, 4, float("nan")) is None
    with pytest.raises(ValueError):
        codec.command(cell, 10, 1.0)
    # the environment: on the base P57_02 (18.0 units in round 0) a fraction of 1 sends 18.0
    env = GbelyEnv(rounds=3, observation_dict=True)
    stav = env.reset()[1]["observation"]
    kind = np.zeros((60, 60), np.int8)
    fraction = np.zeros((60, 60), np.float32)
    kind[57, 2], fraction[57, 2] = 8, 1.0
    assert env._core.commands(0, kind, fraction) == [{"typ": "ATTACK", "z": "P57_02", "na": "P57_03", "pocet": 18.0}]
    fraction[57, 2] = 0.5
    assert env._core.commands(0, kind, fraction)[0]["pocet"] == 9.0
    kind[57, 2] = 10
    with pytest.raises(ValueError):
        env._core.commands(0, kind, fraction)
    with pytest.raises(ValueError):
        codec.commands(stav, kind.ravel().tolist(), fraction.ravel().tolist(), 60)


def test_an_edge_of_the_map_in_the_environment():
    # A small generated map whose corner base touches the edges: north/west of the base are off it.
    m = gbely.Map.generate("codec-edge", 12)
    env = GbelyEnv(m, rounds=3, observation_dict=True)
    obs, info = env.reset()
    stav = info["observation"]
    base = next(p for p in stav["moje_pola"] if p["id"] == stav["moja_zakladna"])
    (r, c), (h, w) = codec.parse_id(base["id"]), (m.height, m.width)
    off = [d for d, (dr, dc) in enumerate(codec.DIRECTIONS) if not (0 <= r + dr < h and 0 <= c + dc < w)]
    for d in off:
        kind = np.zeros((h, w), np.int8)
        kind[r, c] = 1 + d
        assert env._core.commands(0, kind, np.ones((h, w), np.float32)) == []
        assert codec.command(base, 1 + d, 1.0) is None
    assert off or len(base["susedia"]) == 4


def test_observe_pads_and_refuses_a_grid_too_small():
    env = GbelyEnv(rounds=3, observation_dict=True)
    obs, info = env.reset()
    stav = info["observation"]
    padded = codec.observe(stav, 64, 70)
    n = 64 * 70
    assert len(padded["terrain"]) == n and len(padded["action_mask"]) == n * KINDS
    assert all(padded["terrain"][r * 70 + c] == -1 for r in range(60, 64) for c in range(70))
    assert sum(padded["action_mask"]) == n + 5  # stay everywhere, the base's five
    for key in ARRAYS:  # the map's part is the environment's
        grid = np.asarray(padded[key]).reshape(64, 70)[:60, :60]
        assert grid.tolist() == obs[key].tolist()
    # …and the whole padded grid is the padded environment's, mask included, round after round.
    wide = GbelyEnv(rounds=6, observation_dict=True, grid=(64, 70))
    wide.action_space.seed(1)
    obs, info = wide.reset(seed=1)
    for _ in range(5):
        mine = codec.observe(info["observation"], 64, 70)
        for key in ARRAYS:
            assert np.asarray(mine[key]).reshape(64, 70).tolist() == obs[key].tolist(), key
        assert np.asarray(mine["action_mask"]).reshape(64, 70, KINDS).tolist() == info["action_mask"].tolist()
        obs, _, _, _, info = wide.step(wide.action_space.sample(info["action_mask"]))
    with pytest.raises(ValueError):
        codec.observe(stav, 40, 40)


# --- gbely pack inlines the codec ---

def packs(tmp_path, source, name="a.py"):
    (tmp_path / "w.json").write_text(json.dumps({"b": 1.0}))
    (tmp_path / name).write_text(textwrap.dedent(source))
    out = tmp_path / ("packed_" + name)
    pack(tmp_path / "w.json", tmp_path / name, out, timing=False)
    return out


def test_pack_inlines_the_codec_for_every_import_form(tmp_path):
    out = packs(tmp_path, '''\
        """An agent."""
        from __future__ import annotations
        import math
        from gbely import codec
        from gbely.codec import (observe,
                                 commands as cmds)
        WEIGHTS = None

        def decide(stav):
            import gbely.codec as c2
            from gbely import codec as c3
            o = observe(stav, 60, 60)
            kind = [9 if x == 1 else 0 for x in o["owner"]]
            assert c2.commands is cmds is c3.commands is codec.commands
            return cmds(stav, kind, [0.5] * len(kind), 60)
        ''')
    text = out.read_text()
    tree = ast.parse(text)
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("gbely") for m in mods), mods
    assert text.index("_GBELY_CODEC_SOURCE") > text.index("from __future__")
    # At the judge: the standard library only (-S: no site-packages, -I: nothing from the cwd).
    match = gbely.Match(rounds=2)
    stav = match.observation(0)
    run = subprocess.run([sys.executable, "-S", "-I", "-c",
                          "import json, sys, runpy; d = runpy.run_path(sys.argv[1]);"
                          "print(json.dumps(d['decide'](json.loads(sys.stdin.read()))))", str(out)],
                         input=json.dumps(stav), capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == [{"typ": "FORTIFY", "pole": "P57_02", "investicia": 9.0}]


def test_pack_refuses_codec_imports_it_cannot_inline(tmp_path):
    for bad in ("import gbely.codec\n", "from gbely import codec, Map\n", "from gbely.codec import *\n",
                "x = 1; from gbely import codec\n"):
        with pytest.raises(PackError):
            packs(tmp_path, bad + "WEIGHTS = None\ndef decide(stav):\n    return []\n")
    with pytest.raises(PackError, match="standard library"):
        packs(tmp_path, "import gbely\nWEIGHTS = None\ndef decide(stav):\n    return []\n")


# --- a packed policy plays as the environment's, bit for bit ---

POLICY = '''\
"""A deterministic linear policy over gbely.codec's lists (for tests/test_codec.py)."""
from gbely import codec

GRID = 60  # the grid the policy sees (the reference map's)
WEIGHTS = None


def features(obs, i):
    """Of cell i and, per direction, the cell beyond (all zeros off the grid)."""
    x = [1.0, obs["units"][i] / 10.0, obs["fortification"][i], obs["round"] / 150.0,
         1.0 if obs["base"][i] else 0.0]
    r, c = divmod(i, GRID)
    for dr, dc in codec.DIRECTIONS:
        if 0 <= r + dr < GRID and 0 <= c + dc < GRID:
            j = i + dr * GRID + dc
            o = obs["owner"][j]
            x += [1.0 if o == 1 else 0.0, 1.0 if o == 0 else 0.0, 1.0 if o >= 2 else 0.0,
                  obs["units"][j] / 10.0, 1.0 if obs["terrain"][j] == 1 else 0.0]
        else:
            x += [0.0] * 5
    return x


def act(obs, w):
    """Per cell: the best legal kind by a linear score, and a fraction (may be ≤ 0 or ≥ 1)."""
    n = GRID * GRID
    kind, fraction = [0] * n, [0.0] * n
    for i in range(n):
        if obs["owner"][i] != 1:
            continue
        x = features(obs, i)
        mask = obs["action_mask"][i * 10:i * 10 + 10]
        best, best_k = None, 0
        for k in range(10):
            if mask[k]:
                s = sum(a * b for a, b in zip(w["score"][k], x))
                if best is None or s > best:
                    best, best_k = s, k
        kind[i] = best_k
        fraction[i] = sum(a * b for a, b in zip(w["fraction"], x))
    return kind, fraction


def decide(stav):
    obs = codec.observe(stav, GRID, GRID)
    kind, fraction = act(obs, WEIGHTS)
    return {"prikazy": codec.commands(stav, kind, fraction, GRID)}
'''


def score_weights(rng):
    """Small random scores plus a will to take weak neutral cells; multiples of 1/8 with the
    largest 127/8, so that int8 quantisation keeps them exactly."""
    q = rng.integers(-4, 5, (10, 25))
    q[0, 0] = 16  # staying: a bias of 2
    for d in range(4):
        f = 5 + 5 * d  # the neighbour toward d: own, neutral, foreign, units / 10, hill
        q[5 + d, f + 1], q[5 + d, f + 3], q[5 + d, 1] = 48, -64, 40
        q[1 + d, f], q[1 + d, 1] = 4, 4
    q[9, 2] = 127
    return (q / 8.0).tolist()


def comparable(doc):
    """A replay without what differs between the two ways of playing: names and timings (the
    agent process's answer times, which the environment's in-process seat has none of)."""
    doc = dict(doc)
    for key in ("seats", "engine"):
        doc.pop(key, None)
    doc["turns"] = [{k: v for k, v in t.items() if k != "answer_ms"} for t in doc["turns"]]
    result = dict(doc.pop("result"))
    result["sides"] = [{k: v for k, v in side.items() if k != "name"} for side in result["sides"]]
    return doc, result


def test_a_packed_policy_plays_exactly_as_in_the_environment(tmp_path):
    rng = np.random.default_rng(26)
    # the fraction: about half the units, more (≥ 1: all) on big cells, sometimes ≤ 0 (none);
    # multiples of 1/128, the largest 127/128, so quantisation keeps them exactly too
    q = rng.integers(-5, 6, 25)
    q[0], q[1] = 127, 16
    weights = {"score": score_weights(rng), "fraction": (q / 128).tolist()}
    (tmp_path / "policy.json").write_text(json.dumps(weights))
    (tmp_path / "agent.py").write_text(POLICY)
    out = tmp_path / "submission.py"
    pack(tmp_path / "policy.json", tmp_path / "agent.py", out, timing=False)
    ns = {}
    exec(compile(out.read_text(), str(out), "exec"), ns)
    assert ns["WEIGHTS"] == weights  # quantisation kept them exactly
    rounds = 150
    # (a) in the environment, on its numpy arrays (as lists), with the same function
    module = {}
    exec(compile(POLICY, "agent.py", "exec"), module)
    env = GbelyEnv(rounds=rounds, record=True)
    obs, info = env.reset()
    done = False
    while not done:
        lists = {k: v.ravel().tolist() for k, v in obs.items()}
        lists["round"] = int(obs["round"][0])
        lists["action_mask"] = info["action_mask"].ravel().tolist()
        kind, fraction = module["act"](lists, weights)
        action = {"kind": np.array(kind, np.int8).reshape(60, 60),
                  "fraction": np.array(fraction, np.float32).reshape(60, 60)}
        obs, _, done, _, info = env.step(action)
    env.save_replay(tmp_path / "env.json")
    # (b) packed, in its own process, as the judge plays it
    result = gbely.play(str(out), "council", map="gbely", rounds=rounds, replay=tmp_path / "packed.json",
                        time_limit=None, run_dir=tmp_path / "runs")
    assert result.violations[0] == 0
    a = json.loads((tmp_path / "env.json").read_text())
    b = json.loads((tmp_path / "packed.json").read_text())
    assert len(a["turns"]) == rounds
    assert comparable(a) == comparable(b)
    assert 1.0 < info["share"] < 100.0  # it played, not just stood still
    assert gbely.Replay.load(tmp_path / "env.json").figures()[-1]["cells"][0] == info["cells"]


def test_an_agent_using_the_codec_type_checks(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "agent.py").write_text(textwrap.dedent('''\
        from typing import Any, Dict, List
        from gbely import codec


        def decide(stav: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
            obs = codec.observe(stav, 60, 60)
            kind = [9 if o == 1 else 0 for o in obs["owner"]]
            return {"prikazy": codec.commands(stav, kind, [0.5] * len(kind), 60)}
        '''))
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "agent.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_commands_refuse_actions_over_a_smaller_grid():
    env = GbelyEnv(rounds=3, observation_dict=True)
    stav = env.reset()[1]["observation"]
    with pytest.raises(ValueError, match="beyond"):
        codec.commands(stav, [9] * 100, [1.0] * 100, 10)
    assert codec.commands(stav, [9] * 3600, [1.0] * 3600, 60) == [
        {"typ": "FORTIFY", "pole": "P57_02", "investicia": 18.0}]


# --- the training channels in the standard library: the same as the numpy ones ---

def assert_same_channels(stav, obs, h, w):
    from gbely.wrappers import channels, front_distance

    lists = codec.observe(stav, h, w)
    mine = codec.channels(lists, h, w)
    theirs = channels(obs)
    assert len(mine) == len(theirs) == len(codec.CHANNELS)
    for name, a, b in zip(codec.CHANNELS, mine, theirs):
        a = np.array(a, np.float64).reshape(h, w)
        b = b.astype(np.float64)
        assert np.float32(a).astype(np.float64).tolist() == a.tolist(), name  # float32 values
        if name == "log_units":  # math.log1p against numpy's float32 log1p: one float32 ulp at most
            assert np.all(np.abs(a - b) <= np.spacing(np.float32(b)).astype(np.float64)), name
        else:
            assert a.tolist() == b.tolist(), name
    dist = np.array(codec.front_distance(lists, h, w)).reshape(h, w)
    assert dist.tolist() == front_distance(obs).tolist()
    return dist


def test_the_codecs_channels_and_front_distance_are_the_numpy_ones():
    from gbely.wrappers import CHANNELS

    import pravidla

    assert codec.CHANNELS == CHANNELS
    assert codec.BONUS == tuple(pravidla.TERENNY_BONUS[t] for t in sorted(codec.TERRAIN, key=codec.TERRAIN.get))
    assert codec.ROUNDS == pravidla.POCET_KOL
    rng = np.random.default_rng(31)
    deepest = 0
    # A duel on a grid larger than the map (padding), seat 1; then every finalist of a small final.
    env = GbelyEnv(seat=1, rounds=40, observation_dict=True, grid=(64, 62))
    obs, info = env.reset()
    first = assert_same_channels(info["observation"], obs, 64, 62)
    # Round 0: the base P02_57 alone, next to neutral cells: 0 there, -1 everywhere else.
    base = codec.parse_id(info["observation"]["moja_zakladna"])
    assert first[base] == 0 and (first >= 0).sum() == 1
    done = False
    while not done:
        obs, _, done, _, info = env.step(legal_action(rng, info["action_mask"]))
        deepest = max(deepest, int(assert_same_channels(info["observation"], obs, 64, 62).max()))
    env = parallel_env(SMALL_FINAL, rounds=30, observation_dict=True)
    observations, infos = env.reset()
    armies = 0
    while env.agents:
        for a in env.agents:
            assert_same_channels(infos[a]["observation"], observations[a], env.map.height, env.map.width)
            armies += int((observations[a]["owner"] > 2).sum())
        observations, _, _, _, infos = env.step({a: legal_action(rng, infos[a]["action_mask"]) for a in env.agents})
    assert deepest >= 2 and armies > 0  # own cells behind the front, and other finalists seen


CHANNEL_POLICY = '''\
"""A linear policy over MaskedCells' channels and the distance to the front, trained with numpy on
gbely.wrappers.channels and played with gbely.codec's twins (for tests/test_codec.py)."""
from gbely import codec

GRID = 60
WEIGHTS = None
#: The channels it reads (log_units, the one channel equal only within an ulp, is left out).
USE = ("own", "neutral", "council", "visible", "luka", "vrch", "rieka", "units", "fortification", "defence",
       "base", "round")


def features(ch, dist, i):
    """Cell i's channels and front distance, then each neighbour's channels (zeros off the grid)."""
    x = [1.0] + [ch[k][i] for k in range(len(USE))] + [min(dist[i], 10) / 10.0 if dist[i] >= 0 else 1.0]
    r, c = divmod(i, GRID)
    for dr, dc in codec.DIRECTIONS:
        if 0 <= r + dr < GRID and 0 <= c + dc < GRID:
            j = i + dr * GRID + dc
            x += [ch[k][j] for k in range(len(USE))]
        else:
            x += [0.0] * len(USE)
    return x


def act(ch, dist, owner, mask, w):
    """The best legal kind of each own cell by a linear score (ch: the USE channels as lists)."""
    kind = [0] * (GRID * GRID)
    for i in range(GRID * GRID):
        if owner[i] != 1:
            continue
        x = features(ch, dist, i)
        best, best_k = None, 0
        for k in range(10):
            if mask[i * 10 + k]:
                s = sum(a * b for a, b in zip(w["theta"][k], x))
                if best is None or s > best:
                    best, best_k = s, k
        kind[i] = best_k
    return kind


def decide(stav):
    obs = codec.observe(stav, GRID, GRID)
    every = codec.channels(obs, GRID, GRID)
    ch = [every[codec.CHANNELS.index(name)] for name in USE]
    kind = act(ch, codec.front_distance(obs, GRID, GRID), obs["owner"], obs["action_mask"], WEIGHTS)
    return {"prikazy": codec.commands(stav, kind, [1.0] * (GRID * GRID), GRID)}
'''


def test_a_policy_trained_on_the_numpy_channels_plays_the_same_packed(tmp_path):
    from gbely.wrappers import CHANNELS, channels, front_distance

    module = {}
    exec(compile(CHANNEL_POLICY, "agent.py", "exec"), module)
    use = [CHANNELS.index(k) for k in module["USE"]]
    # (1) Train: softmax regression on the expander's own cells of one match, features from numpy.
    gbely.play("expander-rs", "council", rounds=40, replay=tmp_path / "teacher.json.gz")
    d = gbely.Replay.load(tmp_path / "teacher.json.gz").dataset("expander-rs")
    xs, ys, allowed = [], [], []
    for t in range(len(d["kind"])):
        obs = {k: d[k][t] for k in ("terrain", "owner", "units", "fortification", "visible", "base", "round")}
        ch = channels(obs)[use].reshape(len(use), -1).tolist()
        dist = front_distance(obs).ravel().tolist()
        for i in np.flatnonzero((d["owner"][t] == 1).ravel()):
            xs.append(module["features"](ch, dist, int(i)))
            ys.append(int(d["kind"][t].ravel()[i]))
            allowed.append(d["action_mask"][t].reshape(-1, KINDS)[i] == 1)
    x, y, allowed = np.array(xs), np.array(ys), np.array(allowed)
    allowed[np.arange(len(y)), y] = True
    theta = np.zeros((KINDS, x.shape[1]))
    for _ in range(60):
        logits = np.where(allowed, x @ theta.T, -np.inf)
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(len(y)), y] -= 1
        theta -= 1.0 * p.T @ x / len(y)
    accuracy = (np.where(allowed, x @ theta.T, -np.inf).argmax(1) == y).mean()
    assert accuracy > (y == 0).mean()  # it learned more than "stay"
    # (2) Pack it; the submission computes the channels with gbely.codec.
    (tmp_path / "policy.json").write_text(json.dumps({"theta": theta.tolist()}))
    (tmp_path / "agent.py").write_text(CHANNEL_POLICY)
    out = tmp_path / "submission.py"
    pack(tmp_path / "policy.json", tmp_path / "agent.py", out, timing=False)
    ns = {}
    exec(compile(out.read_text(), str(out), "exec"), ns)
    weights = ns["WEIGHTS"]
    # (3) The same weights in the environment, on the numpy channels, and packed as the judge
    # plays it, on the codec's: the two replays are identical.
    rounds = 40
    env = GbelyEnv(rounds=rounds, record=True)
    obs, info = env.reset()
    done = False
    while not done:
        ch = channels(obs)[use].reshape(len(use), -1).tolist()
        kind = module["act"](ch, front_distance(obs).ravel().tolist(), obs["owner"].ravel().tolist(),
                             info["action_mask"].ravel().tolist(), weights)
        obs, _, done, _, info = env.step({"kind": np.array(kind, np.int8).reshape(60, 60), "fraction": 1.0})
    env.save_replay(tmp_path / "env.json")
    result = gbely.play(str(out), "council", map="gbely", rounds=rounds, replay=tmp_path / "packed.json",
                        time_limit=None, run_dir=tmp_path / "runs")
    assert result.violations[0] == 0
    a = json.loads((tmp_path / "env.json").read_text())
    b = json.loads((tmp_path / "packed.json").read_text())
    assert len(a["turns"]) == rounds and comparable(a) == comparable(b)
    assert info["cells"] > 1  # it played, not just stood still
