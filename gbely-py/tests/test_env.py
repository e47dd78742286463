"""The learning environments (gbely.env): the ecosystem's checkers, observations derived from the
rules' §5 observation alone, the action encoding, rewards, copies and pickles, the VectorEnv."""
import copy
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import gbely
from gbely.env import KINDS, GbelyEnv, VectorEnv, parallel_env

# Rules §2, §4: the reference map, the agent's base P57_02 with 10 + 3 + 5 = 18 units in round 0.
BASE = (57, 2)
SMALL_FINAL = gbely.Map.generate_final("env-test", size=30)


# --- the observation as the rules' §5 dict says it, written independently of the engine ---

TERRAIN = {"luka": 0, "vrch": 1, "rieka": 2}


def owner_code(label):
    if label == "hbp":
        return 0
    if label == "zastupitelstvo":
        return 2
    if label == "armada":
        return 3
    return int(label.split("_")[1]) + 2


def rc(cell_id):
    r, c = cell_id[1:].split("_")
    return int(r), int(c)


def arrays_from_dict(stav, height, width, finalist):
    """What the arrays must be, from the §5 dict alone (and the grid's size)."""
    grid = (height, width)
    terrain = np.full(grid, -1, np.int8)
    owner = np.full(grid, -1, np.int8)
    units = np.zeros(grid, np.float32)
    fort = np.zeros(grid, np.float32)
    visible = np.zeros(grid, np.int8)
    base = np.zeros(grid, np.int8)
    base[rc(stav["moja_zakladna"])] = 1
    for p in stav["moje_pola"]:
        at = rc(p["id"])
        terrain[at], owner[at], units[at], fort[at], visible[at] = TERRAIN[p["typ"]], 1, p["jednotky"], p["opevnenie"], 1
    for p in stav["viditelne_susedne_pola"]:
        at = rc(p["id"])
        terrain[at], owner[at], visible[at] = TERRAIN[p["typ"]], owner_code(p["vlastnik"]), 1
        units[at], fort[at] = p["posadka"], p["opevnenie"]
    mask = np.zeros(grid + (KINDS,), np.int8)
    mask[..., 0] = 1
    for p in stav["moje_pola"]:
        r, c = rc(p["id"])
        if p["jednotky"] <= 0:
            continue
        mask[r, c, 9] = 1
        for d, (dr, dc) in enumerate([(-1, 0), (1, 0), (0, -1), (0, 1)]):
            nr, nc = r + dr, c + dc
            if not (0 <= nr < height and 0 <= nc < width):
                continue
            o = owner[nr, nc]
            if o == 1:
                mask[r, c, 1 + d] = 1
            elif not finalist or o in (0, 2):
                mask[r, c, 5 + d] = 1
    obs = {"terrain": terrain, "owner": owner, "units": units, "fortification": fort, "visible": visible,
           "base": base, "round": np.array([stav["kolo"]], np.int32)}
    return obs, mask


def assert_same(obs, mask, expected, expected_mask):
    assert sorted(obs) == sorted(expected)
    for k in expected:
        assert obs[k].dtype == expected[k].dtype, k
        np.testing.assert_array_equal(obs[k], expected[k], err_msg=k)
    np.testing.assert_array_equal(mask, expected_mask)


def random_legal(rng, mask):
    """A legal kind per cell (from the mask) and a random fraction."""
    h, w, _ = mask.shape
    weights = mask * rng.random(mask.shape)
    kind = weights.argmax(axis=2).astype(np.int8)
    return {"kind": kind, "fraction": rng.random((h, w)).astype(np.float32)}


def test_round_zero_on_the_reference_map_by_hand():
    env = GbelyEnv()
    obs, info = env.reset(seed=0)
    assert obs["units"][BASE] == 18.0 and obs["owner"][BASE] == 1 and obs["base"][BASE] == 1
    assert obs["base"].sum() == 1  # the Council's base is not in §5
    assert obs["visible"].sum() == 5  # the base and its four neighbours
    for r, c in [(56, 2), (58, 2), (57, 1), (57, 3)]:
        assert obs["owner"][r, c] == 0 and obs["visible"][r, c] == 1
        assert obs["units"][r, c] == env.map.garrison(f"P{r:02}_{c:02}")
    assert (obs["owner"] == -1).sum() == 3600 - 5 and (obs["terrain"] == -1).sum() == 3600 - 5
    assert obs["round"].tolist() == [0]
    m = info["action_mask"]
    assert m[BASE].tolist() == [1, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert m.sum() == 3600 + 5  # elsewhere only staying
    assert info["share"] == pytest.approx(100 / 3600) and info["cells"] == 1


def test_attack_fortify_and_fractions_as_the_rules_resolve_them():
    env = GbelyEnv(rounds=5, opponent="council")
    obs, _ = env.reset()
    east = "P57_03"
    g, t = env.map.garrison(east), env.map.terrain(east)
    defence = g * {"luka": 1.0, "vrch": 1.5, "rieka": 1.3}[t]
    assert 18 > defence  # the reference map's neighbour is weak enough
    kind = np.zeros((60, 60), np.int64)
    fraction = np.zeros((60, 60), np.float32)
    kind[BASE], fraction[BASE] = 8, 1.0  # ATTACK east with the observed units, 18.0 (all of them)
    obs, reward, term, trunc, info = env.step({"kind": kind, "fraction": fraction})
    prod = {"luka": 3, "vrch": 2, "rieka": 1}[t]
    # Round 1 after production: the base 0 + 3 + 5, the captured cell 18 − defence + production.
    assert obs["units"][BASE] == 8.0
    assert obs["units"][57, 3] == np.float32(round((18 - defence + prod) * 10) / 10)
    assert obs["owner"][57, 3] == 1
    assert reward == pytest.approx(100 / 3600) and not term and not trunc
    # FORTIFY half of the base's 8 units: 4 × 0.3 = 1.2 fortification, 4 + 8 units next round.
    kind[BASE], fraction[BASE] = 9, 0.5
    obs, reward, *_ = env.step({"kind": kind, "fraction": fraction})
    assert obs["fortification"][BASE] == np.float32(1.2) and obs["units"][BASE] == 12.0
    # A command list is an action too: FORTIFY 3 more.
    obs, *_ = env.step({"prikazy": [{"typ": "FORTIFY", "pole": "P57_02", "investicia": 3}]})
    assert obs["fortification"][BASE] == np.float32(round((1.2 + 0.9) * 10) / 10) and obs["units"][BASE] == 17.0


def test_rewards_add_up_to_the_share_gained():
    env = GbelyEnv(rounds=20)
    obs, info = env.reset()
    start = info["share"]
    rng = np.random.default_rng(3)
    total, done = 0.0, False
    while not done:
        obs, r, done, _, info = env.step(random_legal(rng, info["action_mask"]))
        total += r
    assert total == pytest.approx(info["share"] - start)
    assert info["result"]["sides"][0]["score"] == pytest.approx(info["share"])
    final = GbelyEnv(rounds=3, reward="final")
    final.reset()
    rewards = [final.step([])[1] for _ in range(3)]
    assert rewards == [0.0, 0.0, pytest.approx(100 / 3600)]
    with pytest.raises(ValueError, match="reward"):
        GbelyEnv(reward="win")


@pytest.mark.parametrize("map_", ["gbely", SMALL_FINAL], ids=["duel", "final"])
def test_observations_hold_nothing_the_dict_does_not(map_):
    env = parallel_env(map_, council=map_ is SMALL_FINAL, rounds=40, observation_dict=True)
    observations, infos = env.reset(seed=1)
    rng = np.random.default_rng(7)
    h, w = env.map.height, env.map.width
    finalist = map_ is SMALL_FINAL
    steps = 0
    while env.agents:
        for a in env.agents:
            expected, expected_mask = arrays_from_dict(infos[a]["observation"], h, w, finalist)
            assert_same(observations[a], infos[a]["action_mask"], expected, expected_mask)
        actions = {a: random_legal(rng, infos[a]["action_mask"]) for a in env.agents}
        observations, rewards, terms, truncs, infos = env.step(actions)
        steps += 1
    assert steps == 40


def test_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning of the checker fails the test (units have real bounds now)
        check_env(GbelyEnv(rounds=10), skip_render_check=True)


@pytest.mark.parametrize("map_,council", [("gbely", False), ("gbely", True), (SMALL_FINAL, True)],
                         ids=["duel", "duel-vs-council", "final"])
def test_pettingzoo_parallel_api_test(map_, council):
    from pettingzoo.test import parallel_api_test

    env = parallel_env(map_, council=council, rounds=8)
    parallel_api_test(env, num_cycles=20)
    assert env.possible_agents == ([f"seat_{k}" for k in range(8)] if map_ is SMALL_FINAL
                                   else ["seat_0", "seat_1"] if not council else ["seat_0"])


def test_python_opponents_a_callable_and_an_agent_file(tmp_path):
    seen = []

    def idle(stav):
        seen.append(stav["kolo"])
        return []

    env = GbelyEnv(opponent=idle, rounds=4)
    env.reset()
    for _ in range(4):
        env.step([])
    assert seen == [0, 1, 2, 3]
    agent = tmp_path / "agent.py"
    agent.write_text("def decide(stav):\n    return {'prikazy': []}\n")
    env = GbelyEnv(opponent=str(agent), rounds=2)
    obs, _ = env.reset()
    assert env.step([])[0]["units"][BASE] == 26.0  # 18 + 3 + 5
    with pytest.raises(ValueError, match="not a built-in agent"):
        GbelyEnv(opponent="nobody")


def test_the_councils_levels_are_opponents():
    """An idle learner keeps its base against council:easy (which never brings up the interior's
    units), and is wiped out before the end by council:strong (which carries its army forward)."""
    def idle_until_done(opponent):
        env = GbelyEnv(opponent=opponent)
        env.reset()
        for played in range(1, 151):
            _, _, done, _, info = env.step([])
            if done:
                return played, info["cells"]
        raise AssertionError("the match did not end")

    assert idle_until_done("council:easy") == (150, 1)
    rounds, cells = idle_until_done("council:strong")
    assert rounds < 150 and cells == 0


@pytest.mark.parametrize("example", ["template", "expander"])
def test_an_example_agent_by_name_plays_as_its_python_file(example):
    """``template`` and ``expander`` mean the same agents as on the command line: played by their
    Rust twins, they decide as the example files do (imported in this process as opponents)."""
    files = {"template": "my_agent.py", "expander": "expander.py"}
    source = Path(__file__).resolve().parents[2] / "agents" / files[example]
    assert gbely.env.BUILTIN[example] == f"{example}-rs"

    def shares(opponent):
        env = GbelyEnv("seed:twins", opponent=opponent, rounds=40)
        env.reset(seed=3)
        out = []
        for _ in range(40):
            obs, _, done, _, info = env.step([])
            out.append((info["cells"], obs["owner"].tobytes()))
            if done:
                break
        return out

    assert shares(example) == shares(str(source))


def play_out(env, actions):
    out = []
    for a in actions:
        obs, r, done, _, info = env.step(a)
        out.append((obs, r, done))
        if done:
            break
    return out


def test_an_environment_copies_and_pickles_mid_match():
    env = GbelyEnv(rounds=30)
    obs, info = env.reset()
    rng = np.random.default_rng(5)
    for _ in range(10):
        obs, r, done, _, info = env.step(random_legal(rng, info["action_mask"]))
    actions = []
    mask = info["action_mask"]
    for _ in range(25):
        actions.append(random_legal(rng, mask))
    pickled = pickle.loads(pickle.dumps(env))
    copied = copy.deepcopy(env)
    a, b, c = play_out(env, actions), play_out(pickled, actions), play_out(copied, actions)
    assert len(a) == len(b) == len(c) == 20
    for x, y, z in zip(a, b, c):
        for k in x[0]:
            np.testing.assert_array_equal(x[0][k], y[0][k])
            np.testing.assert_array_equal(x[0][k], z[0][k])
        assert x[1] == y[1] == z[1] and x[2] == y[2] == z[2]


def test_a_parallel_environment_pickles_mid_match():
    env = parallel_env(SMALL_FINAL, rounds=10)
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: [] for a in env.agents})
    thawed = pickle.loads(pickle.dumps(env))
    assert type(thawed).__name__ == "GbelyParallelEnv" and thawed.agents == env.agents
    a = env.step({"seat_0": [{"typ": "FORTIFY", "pole": env.map.seats[0][1], "investicia": 2}]})
    b = thawed.step({"seat_0": [{"typ": "FORTIFY", "pole": env.map.seats[0][1], "investicia": 2}]})
    for agent in env.possible_agents:
        for k in a[0][agent]:
            np.testing.assert_array_equal(a[0][agent][k], b[0][agent][k])
        assert a[1][agent] == b[1][agent]


def test_match_copies_and_pickles_and_a_recording_refuses():
    m = gbely.Match(rounds=20, record=False)
    for _ in range(5):
        m.submit(0, [{"typ": "ATTACK", "z": "P57_02", "na": "P57_03", "pocet": 18}])
        m.advance()
    twin, thawed = copy.copy(m), pickle.loads(pickle.dumps(m))
    for x in (m, twin, thawed):
        while not x.is_over:
            x.advance()
    assert m.result() == twin.result() == thawed.result()
    assert m.figures() == twin.figures() == thawed.figures()
    fresh = gbely.Match(rounds=20, record=False)
    fresh.advance()
    assert fresh.round == 1 and m.is_over  # a copy is its own match
    with pytest.raises(RuntimeError, match="recorded match"):
        copy.copy(gbely.Match(rounds=5, record=True))
    with pytest.raises(RuntimeError, match="recorded match"):
        pickle.dumps(gbely.Match(rounds=5, record=True))
    copy.copy(gbely.Match(rounds=5))  # not recording unless asked


def test_vector_env_matches_single_environments_on_threads():
    n, rounds = 3, 12
    rng = np.random.default_rng(11)
    venv = VectorEnv(n, rounds=rounds, threads=2)
    assert venv.threads == 2
    obs, infos = venv.reset()
    envs = [GbelyEnv(rounds=rounds) for _ in range(n)]
    singles = [e.reset() for e in envs]
    for step in range(rounds + 2):
        for k in range(n):
            for key in singles[k][0]:
                np.testing.assert_array_equal(obs[key][k], singles[k][0][key], err_msg=key)
            np.testing.assert_array_equal(infos["action_mask"][k], singles[k][1]["action_mask"])
        acts = [random_legal(rng, s[1]["action_mask"]) for s in singles]
        kind = np.stack([a["kind"] for a in acts])
        fraction = np.stack([a["fraction"] for a in acts])
        obs, rewards, terminated, truncated, infos = venv.step({"kind": kind, "fraction": fraction})
        for k in range(n):
            o, r, done, _, info = envs[k].step(acts[k])
            assert rewards[k] == r and terminated[k] == done and not truncated[k]
            assert (infos["final_info"]["share"] if done else infos["share"])[k] == info["share"]
            singles[k] = envs[k].reset() if done else (o, info)
    assert obs["round"].tolist() == [[2], [2], [2]]  # started again after round 11, then played rounds 0 and 1
    with pytest.raises(ValueError, match=r"shape \(3, 60, 60\) \(3 × 60 × 60\), not an array of shape \(2, 60, 60\)"):
        venv.step({"kind": kind[:2], "fraction": fraction[:2]})


def test_vector_env_on_more_threads_than_cores_and_errors_from_any_thread():
    # Five matches on three threads (the caller and two workers take matches in turn): the same
    # arrays as one thread, and a bad action in any match is the step's error.
    n, rounds = 5, 6
    rng = np.random.default_rng(5)
    one, three = VectorEnv(n, rounds=rounds, threads=1), VectorEnv(n, rounds=rounds, threads=3)
    (obs1, info1), (obs3, info3) = one.reset(), three.reset()
    for _ in range(rounds + 1):
        for key in obs1:
            np.testing.assert_array_equal(obs1[key], obs3[key], err_msg=key)
        np.testing.assert_array_equal(info1["action_mask"], info3["action_mask"])
        kind = (info1["action_mask"] * rng.random(info1["action_mask"].shape)).argmax(axis=-1).astype(np.int8)
        fraction = rng.random(kind.shape, dtype=np.float32)
        obs1, r1, t1, _, info1 = one.step({"kind": kind, "fraction": fraction})
        obs3, r3, t3, _, info3 = three.step({"kind": kind, "fraction": fraction})
        assert r1.tolist() == r3.tolist() and t1.tolist() == t3.tolist()
        assert info1["share"].tolist() == info3["share"].tolist()
    for bad in (0, n - 1):
        kind = np.zeros((n, 60, 60), np.int8)
        kind[bad, 57, 2] = 12
        with pytest.raises(ValueError, match="kinds are 0 to 9"):
            three.step({"kind": kind, "fraction": np.ones((n, 60, 60), np.float32)})


def test_bad_actions_are_clear_errors():
    env = GbelyEnv(rounds=3)
    env.reset()
    kind = np.zeros((60, 60), np.int64)
    kind[0, 0] = 12
    with pytest.raises(ValueError, match="kinds are 0 to 9"):
        env.step({"kind": kind, "fraction": np.ones((60, 60), np.float32)})
    with pytest.raises(ValueError, match="60"):
        env.step({"kind": np.zeros((5, 5)), "fraction": np.zeros((5, 5))})
    with pytest.raises(ValueError, match="kind"):
        env.step({"move": 1})


def test_the_training_loop_of_docs_learning_md_runs(capsys):
    text = (Path(__file__).resolve().parents[2] / "docs" / "learning.md").read_text()
    loop = text.split("## A training loop in 20 lines", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    code = [line for line in loop.splitlines() if line.strip()]
    assert len(code) <= 22  # 20 lines and the two imports
    constants = "POP, ROUNDS, GENERATIONS, SIGMA, LR = 16, 150, 30, 0.5, 0.2"
    assert constants in loop
    exec(loop.replace(constants, "POP, ROUNDS, GENERATIONS, SIGMA, LR = 3, 6, 2, 0.5, 0.2"), {})
    out = capsys.readouterr().out
    assert out.count("generation ") == 2 and "share" in out
