"""Wrappers of :class:`gbely.env.GbelyEnv` for standard learning libraries.

:class:`MaskedCells` is the interface for masked policy gradients with a per-cell action, as
sb3-contrib's ``MaskablePPO`` wants it: a flat ``MultiDiscrete`` action (one kind per cell), an
``action_masks()`` method, and the observation as image-like channels (``C × height × width``
float32) for a convolutional policy.

>>> import gymnasium
>>> from gbely.wrappers import MaskedCells
>>> env = MaskedCells(gymnasium.make("gbely/Duel-v0", rounds=3))
>>> obs, info = env.reset(seed=0)
>>> obs.shape, env.action_space.shape, env.action_masks().shape
((14, 60, 60), (3600,), (36000,))
>>> round(float(obs[CHANNELS.index("units"), 57, 2]), 3), int(env.action_masks().reshape(60, 60, 10)[57, 2].sum())
(1.8, 6)
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

# First: it says what to install when numpy or gymnasium is missing.
from ._common import KINDS, OWNER, TERRAIN, CellKinds, cell_arrays
import numpy as np
import gymnasium
from gymnasium import spaces

import pravidla

__all__ = ["MaskedCells", "MaskedCellsVector", "CHANNELS", "channels", "front_distance"]

#: The channels of :class:`MaskedCells`' observation, in order (docs/learning.md has the table).
CHANNELS = (
    "own",            # owner == 1
    "neutral",        # owner == 0 (hbp)
    "council",        # owner == 2 (zastupitelstvo: the Council, or the other agent of a duel)
    "armies",         # owner >= 3 (another finalist, armada_k)
    "visible",        # own or visible foreign cell (0: unseen, or padding)
    "luka",           # terrain one-hot (all three 0 where unseen)
    "vrch",
    "rieka",
    "units",          # units / 10: own jednotky, visible posadka (as §5 rounds them)
    "log_units",      # log(1 + units)
    "fortification",  # opevnenie / 10
    "defence",        # foreign visible cells: (posadka × terrain bonus + opevnenie) / 10, rules §6.4
    "base",           # moja_zakladna
    "round",          # kolo / POCET_KOL, on every cell
)

# Channels bounded by 1 (the others by what bounds units and fortification).
_BOUNDED = {"own", "neutral", "council", "armies", "visible", "luka", "vrch", "rieka", "base", "round"}
# The terrain bonus (rules §2) by terrain code (luka, vrch, rieka; the last entry, index -1, is
# an unseen cell's: 0).
_BONUS = np.zeros(len(TERRAIN) + 1, np.float32)
for _name, _code in TERRAIN.items():
    _BONUS[_code] = pravidla.TERENNY_BONUS[_name]
# The owner codes (gbely._gbely.OBS_SCHEMA): an army armada_k is any code above the Council's.
_OWN, _NEUTRAL, _COUNCIL = OWNER["own"], OWNER["hbp"], OWNER["zastupitelstvo"]


def _channel_highs(units: float) -> np.ndarray:
    """Each channel's upper bound (float32, rounded up) when units and fortification are at most
    ``units`` (the observation space's bound)."""
    top = {"units": units * 0.1, "log_units": float(np.log1p(units)), "fortification": units * 0.1,
           "defence": (units * max(_BONUS) + units) * 0.1}
    high = np.array([1.0 if name in _BOUNDED else top[name] for name in CHANNELS], np.float64)
    h32 = high.astype(np.float32)
    return np.where(h32 < high, np.nextafter(h32, np.float32(np.inf)), h32)


def channels(obs: Dict[str, np.ndarray], out: Optional[np.ndarray] = None) -> np.ndarray:
    """:class:`MaskedCells`' channels (``len(CHANNELS) × height × width`` float32) from
    :class:`~gbely.env.GbelyEnv`'s observation arrays, and from nothing else: an unseen (or
    padded) cell has every channel 0 but ``round``."""
    owner = obs["owner"]
    terrain = obs["terrain"]
    units = obs["units"].astype(np.float32, copy=False)
    fort = obs["fortification"].astype(np.float32, copy=False)
    if out is None:
        out = np.empty((len(CHANNELS),) + owner.shape, np.float32)
    out[0] = owner == _OWN
    out[1] = owner == _NEUTRAL
    out[2] = owner == _COUNCIL
    out[3] = owner > _COUNCIL
    out[4] = obs["visible"]
    out[5] = terrain == TERRAIN["luka"]
    out[6] = terrain == TERRAIN["vrch"]
    out[7] = terrain == TERRAIN["rieka"]
    np.multiply(units, 0.1, out=out[8])
    np.log1p(units, out=out[9])
    np.multiply(fort, 0.1, out=out[10])
    foreign = (owner != _OWN) & (owner != OWNER["unseen"])
    out[11] = np.where(foreign, (units * _BONUS[terrain] + fort) * np.float32(0.1), np.float32(0))
    out[12] = obs["base"]
    out[13] = np.float32(int(obs["round"][0]) / pravidla.POCET_KOL)
    return out


def _near(a: np.ndarray) -> np.ndarray:
    """Per cell, whether a 4-neighbour (north, south, west, east; none off the grid) is true."""
    out = np.zeros_like(a)
    out[1:] |= a[:-1]
    out[:-1] |= a[1:]
    out[:, 1:] |= a[:, :-1]
    out[:, :-1] |= a[:, 1:]
    return out


def front_distance(obs: Dict[str, np.ndarray]) -> np.ndarray:
    """Per cell (int32, ``height × width``), the steps through own cells to the front: 0 for an
    own cell with a visible foreign 4-neighbour, ``k + 1`` next to one at ``k``, -1 for a cell
    not own or own with no path to the front; from the observation arrays only.
    :func:`gbely.codec.front_distance` is the standard-library twin (tested equal)."""
    owner = obs["owner"]
    own = owner == _OWN
    dist = np.full(owner.shape, -1, np.int32)
    frontier = own & _near((owner != _OWN) & (owner != OWNER["unseen"]))
    reached = frontier.copy()
    d = 0
    while frontier.any():
        dist[frontier] = d
        frontier = own & ~reached & _near(frontier)
        reached |= frontier
        d += 1
    return dist


class MaskedCells(gymnasium.Wrapper, gymnasium.utils.RecordConstructorArgs):
    """A :class:`~gbely.env.GbelyEnv` (or ``gymnasium.make("gbely/Duel-v0")``) with one
    discrete action per cell and the action mask as a method, for masked policy gradients
    (sb3-contrib's ``MaskablePPO``, which calls ``action_masks()``).

    - **Action:** ``MultiDiscrete([10] * height·width)``, the kind of each cell in row-major order
      (0 stay, 1–4 MOVE, 5–8 ATTACK north/south/west/east, 9 FORTIFY), each sent with the same
      ``fraction`` (1.0 by default: every unit the cell has, as observed), i.e. the environment's
      ``{"kind": action.reshape(height, width), "fraction": fraction everywhere}``.
    - **Mask:** ``action_masks()`` is ``info["action_mask"]`` of the last observation, flattened
      (cell-major, then kind) as ``bool``: ``height·width·10``; ``action_space.sample(
      env.action_masks())`` draws each cell's kind uniformly among its legal ones.
    - **Observation:** ``Box(len(CHANNELS), height, width)`` float32 made by :func:`channels` from
      the observation arrays only. ``info`` is the wrapped environment's (mask, share, cells, …).

    Nothing depends on the map's size but the spaces: a fully convolutional policy plays any size.
    """

    def __init__(self, env: gymnasium.Env, fraction: float = 1.0):
        if isinstance(env, gymnasium.vector.VectorEnv):
            raise TypeError("MaskedCells wraps one environment: MaskedCellsVector(VectorEnv(n, ...)) wraps n")
        gymnasium.utils.RecordConstructorArgs.__init__(self, fraction=fraction)
        gymnasium.Wrapper.__init__(self, env)
        height, width = env.observation_space["units"].shape
        self.grid = (height, width)
        self.fraction = float(fraction)
        self._fraction = np.full(self.grid, self.fraction, np.float32)
        high = _channel_highs(float(np.max(env.observation_space["units"].high)))  # type: ignore[index]
        self.observation_space = spaces.Box(np.zeros((len(CHANNELS), height, width), np.float32),
                                            np.broadcast_to(high[:, None, None], (len(CHANNELS), height, width)).copy(),
                                            dtype=np.float32)
        # A MultiDiscrete whose sample also takes action_masks().
        self.action_space = CellKinds(np.full(height * width, KINDS, dtype=np.int64))
        self._mask = np.zeros((height, width, KINDS), np.int8)
        self._mask[..., 0] = 1

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._mask = info["action_mask"]
        return channels(obs), info

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        kind = _kinds(action, self.grid, "MaskedCells.step")
        obs, reward, terminated, truncated, info = self.env.step({"kind": kind, "fraction": self._fraction})
        self._mask = info["action_mask"]
        return channels(obs), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal kinds of every cell now, ``height·width·10`` bools (sb3-contrib's convention)."""
        return self._mask.reshape(-1) != 0


def _kinds(action: Any, grid: Tuple[int, ...], what: str) -> np.ndarray:
    """The flat per-cell kinds of a MaskedCells action as the environment's ``kind`` array."""
    a = np.asarray(action)
    cells = int(np.prod(grid))
    if a.size != cells or a.dtype.kind not in "biuf":
        raise ValueError(f"{what}: an int array of {cells} kinds (shape ({cells},), one per cell in row-major "
                         f"order) expected, not an array of shape {a.shape} and dtype {a.dtype}")
    return a.reshape(grid).astype(np.int8)


class MaskedCellsVector(gymnasium.vector.VectorWrapper):
    """:class:`MaskedCells` for a :class:`gbely.vector.VectorEnv`, batched: ``n`` matches with one
    discrete action per cell, the channels as observation and the masks as a method, for a
    vectorised masked policy gradient (CleanRL-style loops, sb3-contrib's vectorised
    ``action_masks``).

    - **Action:** ``MultiDiscrete`` of shape ``n × height·width`` (10 kinds each), row ``i`` match
      ``i``'s kinds in row-major order, each sent with ``fraction`` (1.0 by default).
    - **Mask:** ``action_masks()`` is ``n × height·width·10`` bools, row ``i`` what
      ``MaskedCells.action_masks()`` gives for match ``i``; ``action_space.sample(
      venv.action_masks())`` is masked random play.
    - **Observation:** ``n × 14 × height × width`` float32, :func:`channels` of each match; the
      ended matches' ``infos["final_obs"]`` are channels too. The observation array is made once
      and overwritten by every ``reset`` and ``step``, as :class:`~gbely.vector.VectorEnv`'s.

    >>> from gbely.vector import VectorEnv
    >>> venv = MaskedCellsVector(VectorEnv(2, rounds=3))
    >>> obs, infos = venv.reset(seed=0)
    >>> obs.shape, venv.action_space.shape, venv.action_masks().shape
    ((2, 14, 60, 60), (2, 3600), (2, 36000))
    >>> obs, rewards, terminations, truncations, infos = venv.step(venv.action_space.sample(venv.action_masks()))
    >>> rewards.shape, terminations.tolist()
    ((2,), [False, False])
    >>> venv.close()
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, fraction: float = 1.0):
        super().__init__(env)
        n = env.num_envs
        units: Any = env.single_observation_space["units"]  # type: ignore[index]
        height, width = units.shape
        self.grid = (height, width)
        self.fraction = float(fraction)
        self._fraction = np.full((n, height, width), self.fraction, np.float32)
        high = _channel_highs(float(np.max(units.high)))
        shape = (len(CHANNELS), height, width)
        self.single_observation_space = spaces.Box(np.zeros(shape, np.float32),
                                                   np.broadcast_to(high[:, None, None], shape).copy(), dtype=np.float32)
        self.single_action_space = CellKinds(np.full(height * width, KINDS, dtype=np.int64))
        from gymnasium.vector.utils import batch_space

        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = CellKinds(np.full((n, height * width), KINDS, dtype=np.int64))
        self._obs = np.zeros((n,) + shape, np.float32)
        self._masks = np.zeros((n, height, width, KINDS), np.int8)
        self._masks[..., 0] = 1

    def _channels(self, obs: Dict[str, np.ndarray]) -> np.ndarray:
        for i in range(self.num_envs):
            channels({k: v[i] for k, v in obs.items()}, out=self._obs[i])
        return self._obs

    def _finals(self, infos: dict) -> dict:
        if "final_obs" in infos:
            final = np.full(self.num_envs, None, dtype=object)
            for i, o in enumerate(infos["final_obs"]):
                if o is not None:
                    final[i] = channels(o)
            infos["final_obs"] = final
        return infos

    def reset(self, *, seed: Any = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._masks = infos["action_mask"]
        return self._channels(obs), infos

    def step(self, actions: Any):
        n, cells = self.num_envs, self.grid[0] * self.grid[1]
        a = np.asarray(actions)
        if a.size != n * cells or a.dtype.kind not in "biuf":
            raise ValueError(f"MaskedCellsVector.step: an int array of shape ({n}, {cells}) (each match's kind per "
                             f"cell) expected, not an array of shape {a.shape} and dtype {a.dtype}")
        kind, fraction = cell_arrays(a.reshape((n,) + self.grid), self._fraction, (n,) + self.grid, "actions")
        obs, rewards, terminations, truncations, infos = self.env.step({"kind": kind, "fraction": fraction})
        self._masks = infos["action_mask"]
        return self._channels(obs), rewards, terminations, truncations, self._finals(infos)

    def action_masks(self) -> np.ndarray:
        """The legal kinds of every cell of every match now: ``n × height·width·10`` bools."""
        return self._masks.reshape(self.num_envs, -1) != 0
