"""gbely.wrappers.MaskedCells: the per-cell interface for masked policy gradients (sb3-contrib's
MaskablePPO convention), checked without any learning library: gymnasium's check_env, the
channels of round 0 by hand (rules §2, §4, §5, §6.4), the mask, and an action of the wrapper
against the same kinds sent through GbelyEnv."""
import math
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gbely
import pravidla
from gbely.env import CHANNELS, KINDS, GbelyEnv, MaskedCells, channels

SMALL_FINAL = gbely.Map.generate_final("wrappers-test", size=30)


def ch(obs, name):
    return obs[CHANNELS.index(name)]


def masked_random(mask, rng):
    """A uniformly random legal kind per cell, flattened as the wrapper's action."""
    draws = rng.random(mask.shape) * (mask != 0)
    return draws.argmax(-1).reshape(-1)


@pytest.mark.parametrize("make", [
    lambda: MaskedCells(gymnasium.make("gbely/Duel-v0", rounds=6)),
    lambda: MaskedCells(GbelyEnv(rounds=6)),
    lambda: MaskedCells(gymnasium.make("gbely/Final-v0", map=SMALL_FINAL, rounds=6)),
    lambda: MaskedCells(GbelyEnv(gbely.Map.generate("wrappers-test", 23, 17), rounds=6)),
], ids=["duel-id", "duel-class", "final-id", "23x17"])
def test_check_env(make):
    env = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning of the checker fails the test (units have real bounds now)
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version")  # we test the wrapper
        check_env(env, skip_render_check=True)
    height, width = env.unwrapped.map.height, env.unwrapped.map.width
    assert env.observation_space.shape == (len(CHANNELS), height, width)
    assert env.observation_space.dtype == np.float32
    assert env.action_space == gymnasium.spaces.MultiDiscrete([KINDS] * (height * width))


def test_channels_of_round_0_by_hand():
    env = MaskedCells(gymnasium.make("gbely/Duel-v0", rounds=3))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (14, 60, 60) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    game_map = env.unwrapped.map
    expected = np.zeros((14, 60, 60), np.float32)
    # Rules §2, §4: the army owns its base P57_02 (luka) with 10 + 3 + 5 = 18 units after production.
    base = (57, 2)
    for name, value in [("own", 1), ("visible", 1), ("luka", 1), ("units", 1.8), ("log_units", math.log1p(18)),
                        ("base", 1)]:
        expected[CHANNELS.index(name)][base] = value
    # §5: its four neighbours are visible, neutral (hbp), with their garrison; defence per §6.4.
    terrains = ("luka", "vrch", "rieka")
    for dr, dc in [(-1, 0), (1, 0), (0, -1), (0, 1)]:
        r, c = 57 + dr, 2 + dc
        cell = f"P{r:02}_{c:02}"
        terrain, garrison = game_map.terrain(cell), game_map.garrison(cell)
        assert 1 <= garrison <= 8
        expected[CHANNELS.index("neutral")][r, c] = 1
        expected[CHANNELS.index("visible")][r, c] = 1
        expected[CHANNELS.index(terrain)][r, c] = 1
        expected[CHANNELS.index("units")][r, c] = garrison / 10
        expected[CHANNELS.index("log_units")][r, c] = math.log1p(garrison)
        expected[CHANNELS.index("defence")][r, c] = garrison * pravidla.TERENNY_BONUS[terrain] / 10
        assert terrain in terrains
    # Everything else is unseen: every channel 0, round 0 too (kolo 0).
    np.testing.assert_allclose(obs, expected, rtol=1e-6, atol=1e-6)
    assert int((obs[:13] != 0).any(axis=0).sum()) == 5


def test_round_and_unseen_cells_later():
    env = MaskedCells(GbelyEnv(rounds=10))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for kolo in range(1, 6):
        obs, *_ = env.step(masked_random(env.action_masks().reshape(60, 60, KINDS), rng))
        assert np.all(ch(obs, "round") == np.float32(kolo / pravidla.POCET_KOL))
        unseen = ch(obs, "visible") == 0
        assert np.all(obs[:13][:, unseen] == 0)
        # the channels are the observation arrays' own function
        np.testing.assert_array_equal(obs, channels(env.unwrapped._core.observe(0)))


def test_the_mask_is_the_environment_s_flattened():
    env = MaskedCells(GbelyEnv(rounds=4))
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(3):
        mask = env.action_masks()
        assert mask.dtype == np.bool_ and mask.shape == (60 * 60 * KINDS,)
        np.testing.assert_array_equal(mask, info["action_mask"].reshape(-1) != 0)
        np.testing.assert_array_equal(mask.reshape(60, 60, KINDS), info["action_mask"] == 1)
        # stay is always legal; a cell not own allows nothing else
        grid = mask.reshape(60, 60, KINDS)
        assert grid[..., 0].all()
        assert not grid[ch(obs, "own") == 0][:, 1:].any()
        obs, _, _, _, info = env.step(masked_random(grid, rng))


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_an_action_is_the_same_kinds_through_gbely_env(fraction):
    wrapped = MaskedCells(GbelyEnv(rounds=40, observation_dict=True), fraction=fraction)
    plain = GbelyEnv(rounds=40, observation_dict=True)
    obs, info = wrapped.reset(seed=0)
    plain_obs, plain_info = plain.reset(seed=0)
    rng = np.random.default_rng(2)
    for _ in range(40):
        action = masked_random(info["action_mask"], rng)
        obs, reward, terminated, _, info = wrapped.step(action)
        plain_obs, plain_reward, plain_terminated, _, plain_info = plain.step(
            {"kind": action.reshape(60, 60).astype(np.int8), "fraction": np.full((60, 60), fraction, np.float32)})
        assert info["observation"] == plain_info["observation"]
        np.testing.assert_array_equal(obs, channels(plain_obs))
        assert (reward, terminated) == (plain_reward, plain_terminated)
        if terminated:
            break
    assert info["cells"] > 1  # random legal play captured something: the actions did act


def test_any_size_and_padding_free_of_size():
    """The wrapper takes its spaces from the environment, whatever the map's size."""
    for width, height in [(20, 20), (41, 13)]:
        env = MaskedCells(GbelyEnv(gbely.Map.generate("wrappers-size", width, height), rounds=3))
        obs, _ = env.reset(seed=0)
        assert obs.shape == (len(CHANNELS), height, width)
        assert env.action_masks().shape == (height * width * KINDS,)
        env.step(np.zeros(height * width, np.int64))
