"""The standard interfaces, checked by the ecosystem's own tools: gymnasium's registry and
``check_env``, PettingZoo's ``api_test`` on the AEC conversion, ``render()``."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gbely
from gbely.env import KINDS, GbelyEnv, parallel_env

SMALL_FINAL = gbely.Map.generate_final("standard-test", size=30)
# Rules §1, §2: on the reference map the army (seat 0) starts on P57_02, the Council (seat 1) on P02_57.
BASES = {0: (57, 2), 1: (2, 57)}
# The viewer's colours (gbely-engine/src/replays/terminal.rs): the first army, the Council.
SEAT_0, SEAT_1 = (0xD5, 0x5E, 0x00), (0x66, 0x77, 0xDD)


def run_python(code):
    """Runs code in a fresh interpreter (nothing imported yet), returning its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("order", ["import gbely\nimport gymnasium", "import gymnasium\nimport gbely"])
def test_env_ids_are_registered_whichever_is_imported_first(order):
    out = run_python(order + "\nenv = gymnasium.make('gbely/Duel-v0', rounds=3)\n"
                     "obs, info = env.reset(seed=0)\nprint(env.spec.id, obs['units'][57, 2])")
    assert out.split() == ["gbely/Duel-v0", "18.0"]


def test_an_env_id_with_its_module_needs_no_import():
    out = run_python("import gymnasium\nenv = gymnasium.make('gbely:gbely/Duel-v0', rounds=3)\nprint(type(env.unwrapped).__name__)")
    assert out.strip() == "GbelyEnv"


def test_check_env_on_the_registered_ids_with_rendering():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    for env_id, kwargs in [("gbely/Duel-v0", {}), ("gbely/Final-v0", {"map": SMALL_FINAL})]:
        env = gymnasium.make(env_id, rounds=6, render_mode="rgb_array", **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every warning of the checker fails the test (units have real bounds now)
            check_env(env.unwrapped)
        assert env.spec.id == env_id


@pytest.mark.parametrize("map_,council", [("gbely", False), ("gbely", True), (SMALL_FINAL, True)],
                         ids=["duel", "duel-vs-council", "final"])
def test_pettingzoo_api_test_on_the_aec_conversion(map_, council):
    from pettingzoo.test import api_test
    from pettingzoo.utils.conversions import parallel_to_aec

    env = parallel_to_aec(parallel_env(map_, council=council, rounds=6, render_mode="rgb_array"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice to use Box/Discrete spaces, not a failure
        api_test(env, num_cycles=12)


def test_a_masked_sample_takes_only_legal_kinds():
    env = GbelyEnv(rounds=5)
    env.action_space.seed(3)
    _, info = env.reset(seed=3)
    mask = info["action_mask"]
    # Round 0 (rules §3, §6.2): the base P57_02 is the seat's only cell, with 18 units; it may
    # stay, attack its four neighbours (all on the map) and fortify, and move nowhere.
    assert set(np.flatnonzero(mask[BASES[0]])) == {0, 5, 6, 7, 8, 9}
    at_base = set()
    for _ in range(100):
        kind = env.action_space.sample(mask)["kind"]
        assert kind.shape == mask.shape[:2]
        chosen = np.take_along_axis(mask, kind[..., None].astype(np.int64), -1)[..., 0]
        assert chosen.all(), "a sampled kind the mask forbids"
        at_base.add(int(kind[BASES[0]]))
    assert at_base == {0, 5, 6, 7, 8, 9}  # uniform among the legal ones: each shows in 100 draws


def test_render_rgb_array_is_the_match_in_the_viewers_colours():
    env = GbelyEnv(rounds=5, render_mode="rgb_array", render_scale=3)
    env.reset(seed=0)
    picture = env.render()
    assert picture.dtype == np.uint8 and picture.shape == (180, 180, 3)
    for seat, colour in [(0, SEAT_0), (1, SEAT_1)]:
        r, c = BASES[seat]
        assert tuple(picture[3 * r, 3 * c]) == colour  # a corner of the base cell: the seat's colour
        assert tuple(picture[3 * r + 1, 3 * c + 1]) != colour  # its middle: the base's mark
    owned = (picture[::3, ::3] == SEAT_0).all(-1)
    assert owned.sum() == 1  # round 0: seat 0 owns its base only (rules §3)
    with pytest.raises(ValueError, match="render_mode"):
        GbelyEnv(render_mode="human")


@pytest.mark.parametrize("make", [lambda: GbelyEnv(rounds=4, render_mode="html"),
                                  lambda: parallel_env(council=True, rounds=4, render_mode="html")],
                         ids=["gymnasium", "pettingzoo"])
def test_render_html_is_the_viewer_of_the_episode_so_far(make):
    env = make()
    env.reset(seed=0)
    for _ in range(2):
        if isinstance(env, GbelyEnv):
            env.step(env.action_space.sample() | {"kind": np.zeros((60, 60), np.int64)})
        else:
            env.step({a: {"kind": np.zeros((60, 60), np.int64), "fraction": np.zeros((60, 60), np.float32)}
                      for a in env.agents})
    page = env.render()
    assert isinstance(page, str) and page.lstrip().lower().startswith("<!doctype html")
    # The page is the viewer of this match: its seats' names in the title.
    assert "<title>gbely — seat 0 vs council</title>" in page


def test_make_vec_gives_the_batched_engine_or_gymnasiums_sync_vector():
    import gymnasium
    from gbely.env import VectorEnv

    fast = gymnasium.make_vec("gbely/Duel-v0", num_envs=3, vectorization_mode="vector_entry_point", rounds=3)
    sync = gymnasium.make_vec("gbely/Duel-v0", num_envs=3, vectorization_mode="sync", rounds=3)
    assert isinstance(fast, VectorEnv) and fast.num_envs == 3
    (a, _), (b, _) = fast.reset(seed=5), sync.reset(seed=5)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert a["units"][0, 57, 2] == 18.0  # round 0: the base's 10 + 3 + 5 units (rules §4)
    fast.close()
    sync.close()
