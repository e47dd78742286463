"""Masked sampling with what the environments give (``info["action_mask"]``, ``action_masks()``)
on GbelyEnv, VectorEnv, MaskedCells and the batched MaskedCellsVector, and the errors an action of
the wrong shape or dtype gets (what was expected and what came), a number as ``fraction``
broadcast.

At round 0 of the reference map the learner owns its base P57_02 only, with no own neighbour: its
legal kinds are stay, the four ATTACKs and FORTIFY (0, 5, 6, 7, 8, 9; rules §6: a MOVE goes to an
own cell), and every other cell may only stay."""
import gymnasium
import numpy as np
import pytest
from gymnasium.vector.utils import batch_space

from gbely.env import CHANNELS, KINDS, GbelyEnv, MaskedCells, MaskedCellsVector, channels
from gbely.vector import VectorEnv

BASE = (57, 2)
BASE_LEGAL = {0, 5, 6, 7, 8, 9}


def assert_masked_draws(kinds, n_draws):
    """``kinds``: draws × 60 × 60. Off the base only 0; on it every legal kind, nothing else."""
    kinds = np.asarray(kinds)
    assert kinds.shape == (n_draws, 60, 60)
    off = kinds.copy()
    off[:, BASE[0], BASE[1]] = 0
    assert not off.any()
    # 200 uniform draws over 6 kinds miss one with probability below 6 · (5/6)^200 ≈ 1e-15.
    assert set(kinds[:, BASE[0], BASE[1]].tolist()) == BASE_LEGAL


def test_vector_env_samples_with_action_masks_and_the_info_mask():
    venv = VectorEnv(3, rounds=3)
    _, infos = venv.reset(seed=0)
    assert venv.action_space == batch_space(venv.single_action_space, 3)  # still gymnasium's batched space
    masks = venv.action_masks()
    assert masks.shape == (3, 60, 60, KINDS) and masks.dtype == np.bool_
    assert set(np.flatnonzero(masks[1, BASE[0], BASE[1]]).tolist()) == BASE_LEGAL
    venv.action_space.seed(1)
    for mask in (masks, infos["action_mask"], masks.reshape(3, -1)):
        draws = [venv.action_space.sample(mask) for _ in range(200)]
        for i in range(3):
            assert_masked_draws([d["kind"][i] for d in draws], 200)
        assert draws[0]["kind"].shape == (3, 60, 60) and draws[0]["fraction"].shape == (3, 60, 60)
    obs, rewards, terminations, truncations, infos = venv.step(venv.action_space.sample(venv.action_masks()))
    assert not terminations.any()
    assert venv.action_space.sample()["kind"].shape == (3, 60, 60)  # unmasked, as before
    with pytest.raises(ValueError, match=r"a mask of 10800 cells × 10 kinds .* not an array of shape \(60, 60, 10\)"):
        venv.action_space.sample(masks[0])
    venv.close()


def test_gbely_env_samples_with_a_bool_or_flat_mask():
    env = GbelyEnv(rounds=3)
    _, info = env.reset(seed=0)
    env.action_space.seed(2)
    for mask in (info["action_mask"], info["action_mask"] != 0, info["action_mask"].reshape(-1)):
        assert_masked_draws([env.action_space.sample(mask)["kind"] for _ in range(200)], 200)


def test_masked_cells_samples_with_its_action_masks():
    env = MaskedCells(gymnasium.make("gbely/Duel-v0", rounds=3))
    env.reset(seed=0)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([KINDS] * 3600)
    env.action_space.seed(3)
    draws = [env.action_space.sample(env.action_masks()) for _ in range(200)]
    assert draws[0].shape == (3600,)
    assert_masked_draws([d.reshape(60, 60) for d in draws], 200)
    # Gymnasium's own form of a MultiDiscrete mask, a tuple of per-cell masks, still works.
    per_cell = tuple(np.asarray(m, np.int8) for m in env.action_masks().reshape(3600, KINDS))
    assert_masked_draws([env.action_space.sample(per_cell).reshape(60, 60) for _ in range(200)], 200)
    env.step(env.action_space.sample(env.action_masks()))


def test_masked_cells_vector_is_masked_cells_batched():
    n = 2
    venv = MaskedCellsVector(VectorEnv(n, rounds=2, reward="cells"))
    lone = [MaskedCells(GbelyEnv(rounds=2, reward="cells")) for _ in range(n)]
    obs, infos = venv.reset(seed=0)
    assert obs.shape == (n, len(CHANNELS), 60, 60) and venv.observation_space.contains(obs)
    assert venv.action_space.shape == (n, 3600) and venv.action_masks().shape == (n, 36000)
    for i, env in enumerate(lone):
        o, _ = env.reset(seed=i)
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(venv.action_masks()[i], env.action_masks())
    venv.action_space.seed(4)
    for step in range(2):
        actions = venv.action_space.sample(venv.action_masks())
        assert all(set(a.reshape(60, 60)[BASE].reshape(-1).tolist()) <= set(range(KINDS)) for a in actions)
        obs, rewards, terminations, truncations, infos = venv.step(actions)
        for i, env in enumerate(lone):
            o, r, t, _, _ = env.step(actions[i])
            assert rewards[i] == r and terminations[i] == t
            if not t:
                np.testing.assert_array_equal(obs[i], o)
            else:
                np.testing.assert_array_equal(infos["final_obs"][i], o)  # the ended match's, as channels
    assert terminations.all()  # 2 rounds
    with pytest.raises(ValueError, match=r"shape \(2, 3600\).*not an array of shape \(3600,\)"):
        venv.step(np.zeros(3600, np.int64))
    with pytest.raises(TypeError, match="MaskedCellsVector"):
        MaskedCells(VectorEnv(1, rounds=2))
    venv.close()


def test_a_number_as_fraction_is_broadcast():
    a, b = GbelyEnv(rounds=3), GbelyEnv(rounds=3)
    a.reset(seed=0)
    b.reset(seed=0)
    kind = np.zeros((60, 60), np.int8)
    kind[BASE] = 9  # FORTIFY the base: 18 units × 0.5 = 9 invested, 2.7 fortification (rules §6.3)
    oa, *_ = a.step({"kind": kind, "fraction": 0.5})
    ob, *_ = b.step({"kind": kind, "fraction": np.full((60, 60), 0.5, np.float32)})
    assert oa["fortification"][BASE] == ob["fortification"][BASE] == pytest.approx(2.7)
    venv = VectorEnv(2, rounds=3)
    venv.reset(seed=0)
    kinds = np.zeros((2, 60, 60), np.int8)
    kinds[:, BASE[0], BASE[1]] = 9
    obs, *_ = venv.step({"kind": kinds, "fraction": 0.5})
    assert obs["fortification"][:, BASE[0], BASE[1]].tolist() == pytest.approx([2.7, 2.7])
    obs, *_ = venv.step({"kind": kinds, "fraction": np.full((60, 60), 0.0)})  # one grid for every match
    assert obs["fortification"][:, BASE[0], BASE[1]].tolist() == pytest.approx([2.7, 2.7])
    venv.close()


def test_actions_of_the_wrong_shape_or_dtype_say_what_was_expected():
    env = GbelyEnv(rounds=3)
    env.reset(seed=0)
    flat = np.zeros(3600, np.int8)
    with pytest.raises(ValueError, match=r"'kind' is an int array of shape \(60, 60\) \(60 × 60\), not an array of "
                                         r"shape \(3600,\) and dtype int8 \(reshape it: \.reshape\(60, 60\)\)"):
        env.step({"kind": flat, "fraction": 1.0})
    with pytest.raises(ValueError, match=r"'fraction' is a float array of shape \(60, 60\) \(60 × 60\) or a number, "
                                         r"not an array of shape \(3600,\) \(reshape it"):
        env.step({"kind": np.zeros((60, 60), np.int8), "fraction": np.ones(3600, np.float32)})
    with pytest.raises(ValueError, match=r"'kind' is an int array .* dtype <U1"):
        env.step({"kind": np.full((60, 60), "a"), "fraction": 1.0})
    with pytest.raises(ValueError, match=r"'fraction' .* not an array of dtype object"):
        env.step({"kind": np.zeros((60, 60), np.int8), "fraction": np.full((60, 60), None)})
    wide = np.zeros((60, 60), np.int64)
    wide[3, 4] = 261  # an int8 cast makes it 5 (261 mod 256), an ATTACK north, which it was before this check
    with pytest.raises(ValueError, match=r"action kind 261 at index \(3, 4\): kinds are 0 to 9"):
        env.step({"kind": wide, "fraction": 1.0})
    venv = VectorEnv(2, rounds=3)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"'fraction' is a float array of shape \(2, 60, 60\) .* not an array of "
                                         r"shape \(3, 60, 60\)"):
        venv.step({"kind": np.zeros((2, 60, 60), np.int8), "fraction": np.ones((3, 60, 60))})
    venv.close()
