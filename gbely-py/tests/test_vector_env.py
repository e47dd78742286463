"""Size-free training and the VectorEnv as a gymnasium.vector.VectorEnv: padding to a grid, maps
drawn per reset, the size-free reward and info, and the VectorEnv against the published
reference, gymnasium.vector.SyncVectorEnv of GbelyEnvs."""
import pickle
import warnings

import numpy as np
import pytest
import gymnasium
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import gbely
from gbely.env import KINDS, GbelyEnv, MapSampler, VectorEnv, parallel_env

OBS_KEYS = ("terrain", "owner", "units", "fortification", "visible", "base", "round")
M40 = gbely.Map.generate("pad-40", 40)
M60 = gbely.Map.reference()


def random_legal(rng, mask):
    """A legal kind per cell (from the mask: works batched) and a random fraction."""
    kind = (mask * rng.random(mask.shape)).argmax(axis=-1).astype(np.int8)
    return {"kind": kind, "fraction": rng.random(mask.shape[:-1]).astype(np.float32)}


def rc(cell_id):
    r, c = cell_id[1:].split("_")
    return int(r), int(c)


def greedy(stav):
    """A deterministic Python opponent: each own cell with 4 units or more attacks its weakest
    visible neutral neighbour with all of them."""
    foreign = {rc(p["id"]): p for p in stav["viditelne_susedne_pola"] if p["vlastnik"] == "hbp"}
    prikazy = []
    for p in stav["moje_pola"]:
        if p["jednotky"] < 4:
            continue
        r, c = rc(p["id"])
        near = [foreign[x] for x in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)) if x in foreign]
        if near:
            target = min(near, key=lambda q: (q["posadka"], q["id"]))
            prikazy.append({"typ": "ATTACK", "z": p["id"], "na": target["id"], "pocet": p["jednotky"]})
    return {"prikazy": prikazy}


def assert_padded(obs, mask, lone_obs, lone_mask, h, w):
    """The arrays over a larger grid: the lone environment's at the top-left, unseen beyond."""
    for k in OBS_KEYS:
        if k == "round":
            np.testing.assert_array_equal(obs[k], lone_obs[k])
            continue
        np.testing.assert_array_equal(obs[k][:h, :w], lone_obs[k], err_msg=k)
        pad = np.ones(obs[k].shape, bool)
        pad[:h, :w] = False
        unseen = -1 if k in ("terrain", "owner") else 0
        assert (obs[k][pad] == unseen).all(), k
    np.testing.assert_array_equal(mask[:h, :w], lone_mask)
    pad = np.ones(mask.shape[:2], bool)
    pad[:h, :w] = False
    assert (mask[pad][:, 0] == 1).all() and (mask[pad][:, 1:] == 0).all()


def test_a_padded_gbely_env_is_the_lone_one_at_the_top_left():
    rng = np.random.default_rng(3)
    lone, padded = GbelyEnv(map=M40, rounds=12), GbelyEnv(map=M40, rounds=12, grid=(64, 70))
    assert padded.observation_space["units"].shape == (64, 70) and padded.action_space["kind"].shape == (64, 70)
    (o1, i1), (o2, i2) = lone.reset(), padded.reset()
    for _ in range(12):
        assert_padded(o2, i2["action_mask"], o1, i1["action_mask"], 40, 40)
        assert i1["cells"] == i2["cells"] and i1["share"] == i2["share"]
        a = random_legal(rng, i1["action_mask"])
        big = {"kind": rng.integers(0, KINDS, (64, 70)).astype(np.int8), "fraction": np.ones((64, 70), np.float32)}
        big["kind"][:40, :40], big["fraction"][:40, :40] = a["kind"], a["fraction"]  # padding: ignored
        o1, r1, t1, _, i1 = lone.step(a)
        o2, r2, t2, _, i2 = padded.step(big)
        assert (r1, t1) == (r2, t2)
    assert t1 and i1["result"] == i2["result"]
    with pytest.raises(ValueError, match="larger than the grid"):
        GbelyEnv(map=M60, grid=(50, 50))
    with pytest.raises(ValueError, match="larger than the grid"):
        padded.reset(options={"map": gbely.Map.generate("big", 80)})
    with pytest.raises(ValueError, match="seats"):
        padded.reset(options={"map": gbely.Map.generate_final("f", size=30)})
    # Any map that fits: smaller, other shapes.
    obs, info = padded.reset(options={"map": gbely.Map.generate("wide", 70, 30)})
    assert padded.map.width == 70 and obs["terrain"][30:].max() == -1
    bad = np.zeros((64, 70), np.int8)
    bad[63, 69] = 12
    with pytest.raises(ValueError, match="kinds are 0 to 9"):
        padded.step({"kind": bad, "fraction": np.ones((64, 70), np.float32)})


def test_a_padded_final_and_parallel_env():
    final = gbely.Map.generate_final("pad-final", size=30)
    env = parallel_env(final, rounds=3, grid=(36, 36), info_share=False)
    lone = parallel_env(final, rounds=3)
    obs, infos = env.reset()
    lone_obs, lone_infos = lone.reset()
    assert len(env.agents) == 8 and "share" not in infos["seat_0"] and "cells" in infos["seat_0"]
    for a in env.agents:
        assert_padded(obs[a], infos[a]["action_mask"], lone_obs[a], lone_infos[a]["action_mask"], 30, 30)


def test_maps_drawn_per_reset_are_those_of_the_seed():
    env = GbelyEnv(maps=(20, 40), rounds=3)
    assert env.grid == (40, 40) and env.observation_space["owner"].shape == (40, 40)
    prints = []
    for seed in (1, 1, 2):
        env.reset(seed=seed)
        first = env.map.fingerprint
        env.reset()
        prints.append((first, env.map.fingerprint, env.map.width))
    assert prints[0] == prints[1] and prints[0][:2] != prints[2][:2]
    sizes = set()
    for s in range(12):
        env.reset(seed=s)
        assert 20 <= env.map.width <= 40 and env.map.width == env.map.height
        sizes.add(env.map.width)
    assert len(sizes) > 3
    # Without maps a seed keeps the map; a list and a function draw from theirs.
    plain = GbelyEnv(rounds=3)
    plain.reset(seed=4)
    assert plain.map.name == "gbely"
    listed = GbelyEnv(maps=[M40, "gbely"], rounds=3)
    assert listed.grid == (60, 60)
    assert {listed.reset(seed=s) and listed.map.width for s in range(10)} == {40, 60}
    drawn = GbelyEnv(maps=lambda rng: gbely.Map.generate(str(rng.integers(9)), 30), grid=(32, 32), rounds=3)
    drawn.reset(seed=0)
    assert drawn.map.width == 30 and drawn.grid == (32, 32)
    with pytest.raises(ValueError, match="grid"):
        GbelyEnv(maps=lambda rng: M40)
    # Copies and pickles keep the sampler and the grid.
    thawed = pickle.loads(pickle.dumps(env))
    assert thawed.grid == env.grid and thawed.map == env.map and thawed._core.grid == env._core.grid == (40, 40)
    assert MapSampler((12, 12))(np.random.default_rng(0)).width == 12


@pytest.mark.parametrize("kwargs", [dict(maps=(20, 30), reward="cells", info_share=False),
                                    dict(grid=(64, 64)),
                                    dict(map=gbely.Map.generate_final("chk", size=30), grid=(32, 32))])
def test_gymnasium_check_env_with_grid_and_maps(kwargs):
    env = GbelyEnv(rounds=4, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning of the checker fails the test (units have real bounds now)
        check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    if kwargs.get("info_share") is False:
        assert "share" not in info and "cells" in info


def test_the_cells_reward_adds_up_to_the_cells_won():
    rng = np.random.default_rng(7)
    env = GbelyEnv(maps=(20, 30), reward="cells", info_share=False, rounds=25)
    obs, info = env.reset(seed=3)
    first, total, done = info["cells"], 0.0, False
    while not done:
        obs, r, done, _, info = env.step(random_legal(rng, info["action_mask"]))
        assert r == int(r)
        total += r
    assert total == info["cells"] - first and total > 0 and "share" not in info


def sync_reference(n, **kwargs):
    return SyncVectorEnv([lambda: GbelyEnv(**kwargs) for _ in range(n)], autoreset_mode=AutoresetMode.SAME_STEP)


def assert_same_infos(a, b, path="infos"):
    assert sorted(a) == sorted(b), path
    for k in a:
        if isinstance(a[k], dict):
            assert_same_infos(a[k], b[k], f"{path}[{k}]")
        elif k == "final_obs":
            for x, y in zip(a[k], b[k]):
                assert (x is None) == (y is None)
                if x is not None:
                    for key in OBS_KEYS:
                        np.testing.assert_array_equal(x[key], y[key], err_msg=f"{path} {key}")
        elif a[k].dtype == object:
            assert a[k].tolist() == b[k].tolist(), f"{path}[{k}]"
        else:
            assert a[k].dtype == b[k].dtype, f"{path}[{k}]"
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{path}[{k}]")


def run_against_reference(venv, ref, steps, seed, rng):
    assert venv.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == ref.single_observation_space
    assert venv.observation_space == ref.observation_space and venv.action_space == ref.action_space
    (o1, i1), (o2, i2) = venv.reset(seed=seed), ref.reset(seed=seed)
    ended = 0
    for _ in range(steps):
        for k in OBS_KEYS:
            np.testing.assert_array_equal(o1[k], o2[k], err_msg=k)
        assert venv.observation_space.contains(o1)
        assert_same_infos(i1, i2)
        actions = random_legal(rng, i1["action_mask"])
        o1, r1, t1, u1, i1 = venv.step(actions)
        o2, r2, t2, u2, i2 = ref.step(actions)
        assert r1.dtype == r2.dtype and r1.tolist() == r2.tolist()
        assert t1.tolist() == t2.tolist() and u1.tolist() == u2.tolist()
        ended += int(t1.sum())
    assert ended >= venv.num_envs  # every match started again at least once
    venv.close()
    ref.close()


@pytest.mark.parametrize("reward,info_share", [("share", True), ("cells", False), ("final", True)])
def test_vector_env_over_mixed_maps_is_sync_vector_env_of_gbely_envs(reward, info_share):
    n, rounds = 4, 5
    kwargs = dict(maps=(16, 30), rounds=rounds, reward=reward, info_share=info_share)
    venv = VectorEnv(n, threads=2, **kwargs)
    assert isinstance(venv, gymnasium.vector.VectorEnv) and venv.num_envs == n
    run_against_reference(venv, sync_reference(n, **kwargs), 3 * rounds + 1, 11, np.random.default_rng(1))


def test_vector_env_on_the_reference_map_against_the_reference_and_threads():
    n, rounds = 3, 6
    for threads in (1, 3):
        venv = VectorEnv(n, rounds=rounds, threads=threads)
        run_against_reference(venv, sync_reference(n, rounds=rounds), 2 * rounds + 1, 5, np.random.default_rng(2))


def test_vector_env_with_a_python_opponent_is_the_same_as_gbely_envs():
    n, rounds = 2, 8
    kwargs = dict(opponent=greedy, maps=[M40, gbely.Map.generate("py-30", 30)], rounds=rounds)
    venv = VectorEnv(n, **kwargs)
    run_against_reference(venv, sync_reference(n, **kwargs), 2 * rounds + 1, 0, np.random.default_rng(4))


def test_vector_env_pads_each_match_to_the_grid():
    """A 40×40 and a 60×60 match padded to 60×60: each match's arrays are a lone GbelyEnv's on
    its map at the top-left, unseen beyond; actions on padded cells are ignored."""
    rng = np.random.default_rng(9)
    rounds = 10
    venv = VectorEnv(2, rounds=rounds, grid=(60, 60))
    obs, infos = venv.reset(options={"map": [M40, M60]})
    assert [venv.map(i).width for i in range(2)] == [40, 60]
    lones = [GbelyEnv(map=M40, rounds=rounds), GbelyEnv(map=M60, rounds=rounds)]
    singles = [e.reset() for e in lones]
    for _ in range(rounds):
        for i, (h, (o, info)) in enumerate(zip((40, 60), singles)):
            assert_padded({k: obs[k][i] for k in OBS_KEYS}, infos["action_mask"][i], o, info["action_mask"], h, h)
            assert infos["cells"][i] == info["cells"] and infos["share"][i] == info["share"]
        actions = {"kind": rng.integers(0, KINDS, (2, 60, 60)).astype(np.int8),
                   "fraction": rng.random((2, 60, 60)).astype(np.float32)}
        for i, (h, (o, info)) in enumerate(zip((40, 60), singles)):
            a = random_legal(rng, info["action_mask"])
            actions["kind"][i, :h, :h], actions["fraction"][i, :h, :h] = a["kind"], a["fraction"]
        obs, rewards, terminations, _, infos = venv.step(actions)
        for i, (h, e) in enumerate(zip((40, 60), lones)):
            o, r, done, _, info = e.step({"kind": actions["kind"][i, :h, :h], "fraction": actions["fraction"][i, :h, :h]})
            assert (rewards[i], terminations[i]) == (r, done)
            if done:
                assert_padded(infos["final_obs"][i], infos["final_info"]["action_mask"][i], o, info["action_mask"], h, h)
                assert infos["final_info"]["cells"][i] == info["cells"] and infos["final_info"]["_result"][i]
                o, info = e.reset()
            singles[i] = (o, info)
    assert terminations.all()
    with pytest.raises(ValueError, match="larger than the grid"):
        venv.reset(options={"map": gbely.Map.generate("big", 70)})
    with pytest.raises(ValueError, match="larger than the grid"):
        VectorEnv(2, map=M60, grid=(40, 40))


def test_vector_env_reset_seed_draws_the_same_maps():
    def maps(venv):
        return [venv.map(i).fingerprint for i in range(venv.num_envs)]

    a, b = VectorEnv(3, maps=(16, 40), rounds=2), VectorEnv(3, maps=(16, 40), rounds=2)
    a.reset(seed=8)
    b.reset(seed=8)
    assert maps(a) == maps(b) and len(set(maps(a))) == 3
    first = maps(a)
    zeros = {"kind": np.zeros((3, 40, 40), np.int8), "fraction": np.zeros((3, 40, 40), np.float32)}
    for _ in range(2):
        a.step(zeros)
        b.step(zeros)
    assert maps(a) == maps(b) and maps(a) != first  # every match drew its next map
    a.reset(seed=8)
    assert maps(a) == first
    a.reset(seed=[8, 9, 10])
    assert maps(a)[0] == first[0]
    lone = GbelyEnv(maps=(16, 40), rounds=2)
    lone.reset(seed=9)
    assert lone.map.fingerprint == first[1]  # match i is seeded with seed + i


def test_vector_env_errors():
    venv = VectorEnv(2, rounds=3)
    venv.reset()
    with pytest.raises(ValueError, match=r"'kind' is an int array of shape \(2, 60, 60\).*not an array of shape \(1, 60, 60\)"):
        venv.step({"kind": np.zeros((1, 60, 60)), "fraction": np.zeros((1, 60, 60))})
    with pytest.raises(ValueError, match="kind"):
        venv.step((np.zeros((2, 60, 60)), np.zeros((2, 60, 60))))
    with pytest.raises(ValueError, match="reward"):
        VectorEnv(2, reward=lambda a, b, c: 0.0)
    with pytest.raises(ValueError, match="not a built-in agent"):
        VectorEnv(2, opponent="nobody")


def test_gymnasium_vector_wrappers_take_it():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    venv = RecordEpisodeStatistics(VectorEnv(2, rounds=3, reward="cells"))
    obs, infos = venv.reset(seed=0)
    venv.action_space.seed(0)
    for _ in range(3):
        obs, rewards, terminations, truncations, infos = venv.step(venv.action_space.sample())
    assert terminations.all() and infos["_episode"].all() and infos["episode"]["l"].tolist() == [3, 3]
    assert infos["episode"]["r"].tolist() == (infos["final_info"]["cells"] - 1).tolist()
    obs, rewards, terminations, truncations, infos = venv.step(venv.action_space.sample())
    assert "episode" not in infos and "final_obs" not in infos  # a new infos dict every step
    venv.close()


def test_vector_env_observations_are_read_only_views():
    venv = VectorEnv(2, rounds=5, threads=1)
    obs, infos = venv.reset(seed=0)
    for arrays in (obs, {"action_mask": infos["action_mask"]}):
        for k, a in arrays.items():
            with pytest.raises(ValueError, match="read-only"):
                a[(0,) * a.ndim] = 1
    mine = np.copy(obs["units"])  # a copy may be changed
    mine[0, 57, 2] += 1
    venv.close()


def test_vector_env_rewriting_only_the_cells_seen_equals_fresh_observations_as_cells_are_lost():
    """The core clears only the cells it wrote the step before: over matches in which the
    learner both wins and loses cells (and matches start again), every observation is still the
    one a fresh GbelyEnv writes whole."""
    n, rounds = 2, 40
    kwargs = dict(maps=(16, 16), rounds=rounds, opponent="expander-rs")
    venv, ref = VectorEnv(n, threads=1, **kwargs), sync_reference(n, **kwargs)
    (o1, i1), (o2, _) = venv.reset(seed=3), ref.reset(seed=3)
    rng = np.random.default_rng(7)
    own = gbely._gbely.OBS_SCHEMA["owner"]["own"]
    lost = won = 0
    for _ in range(2 * rounds + 5):
        before = o1["owner"] == own
        actions = random_legal(rng, i1["action_mask"])
        o1, _, t1, _, i1 = venv.step(actions)
        o2, _, _, _, _ = ref.step(actions)
        for k in OBS_KEYS:
            np.testing.assert_array_equal(o1[k], o2[k], err_msg=k)
        now = o1["owner"] == own
        going = ~t1
        lost += int((before & ~now)[going].sum())
        won += int((~before & now)[going].sum())
    assert lost > 0 and won > 0, (lost, won)
