"""``gbely.vector.VectorEnv`` (also ``gbely.env.VectorEnv``): n matches stepped in Rust, as a
``gymnasium.vector.VectorEnv``."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

# First: it says what to install when numpy or gymnasium is missing.
from ._common import OBS_KEYS, MapSampler, _grid_of, _map, _spaces, batch_cell_actions, cell_arrays, opponents
import numpy as np
import gymnasium
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ._gbely import DEFAULT_ROUNDS, VectorCore

__all__ = ["VectorEnv"]


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view of `a` that cannot be written through (`a` itself stays writable)."""
    v = a.view()
    v.flags.writeable = False
    return v


class VectorEnv(gymnasium.vector.VectorEnv):
    """``n`` matches of one learning seat against an opponent, as a Gymnasium vector environment
    (``gymnasium.vector.VectorEnv``; ``num_envs`` = ``n``), stepped together in Rust on
    ``threads`` threads with the GIL released: each match is what a :class:`GbelyEnv` made with
    the same arguments plays, and a ``gymnasium.vector.SyncVectorEnv`` of those gives the same
    observations, rewards, ends and infos (tested).

    ``reset(seed=None, options=None) -> (observations, infos)``; ``step(actions) ->
    (observations, rewards, terminations, truncations, infos)`` with ``actions`` a dict
    ``{"kind": n × H × W ints, "fraction": n × H × W floats}`` (a member of ``action_space``).
    Autoreset is Gymnasium's ``AutoresetMode.SAME_STEP``: a match that ends starts again within
    the step, its new first observation is in ``observations``, and ``infos["final_obs"]`` /
    ``infos["final_info"]`` (masks ``infos["_final_obs"]`` / ``infos["_final_info"]``) hold the
    ended match's last observation and info (``action_mask``, ``share``, ``cells``, ``result``).
    ``infos["action_mask"]`` (int8, n × H × W × 10), ``infos["share"]`` (left out with
    ``info_share=False``) and ``infos["cells"]``, each with its all-true ``_`` mask.
    ``reset(options={"map": m})`` plays ``m`` in every match, ``{"map": [m0, m1, ...]}`` one map
    per match (any that fit the grid).

    ``opponent``: any a :class:`GbelyEnv` takes; a built-in one decides in Rust on the threads,
    a Python callable or agent file is called from Python for every match and step (at its
    cost). ``grid``, ``maps``, ``reward`` (``share``, ``cells`` or ``final``) and ``info_share``
    as for :class:`GbelyEnv`: with ``maps`` every match draws its own map at every reset and
    autoreset, from its own generator (``reset(seed=s)`` seeds match i with ``s + i``, as
    ``SyncVectorEnv`` seeds its environments; a list of n seeds seeds each).

    **Buffers**: the arrays of ``observations``, ``rewards``, ``terminations``, ``truncations``
    and ``infos["action_mask"]``, ``infos["share"]``, ``infos["cells"]`` (and their masks) are
    made once and overwritten by every ``reset`` and ``step``, and
    ``infos["final_info"]["action_mask"]`` by the next step in which a match ends (copy what
    you keep); the rest of ``final_obs`` and ``final_info`` is new every time. The observation
    arrays and ``infos["action_mask"]`` are read-only (``np.copy`` one to change it): a step
    rewrites only the cells the seat saw in the step before and sees now, so that it costs what
    the seat sees rather than the whole grid.
    ``final_info["result"]`` is the referee's result of the match (its ``score`` is the share).

    >>> venv = VectorEnv(4, rounds=3)
    >>> obs, infos = venv.reset(seed=0)
    >>> obs["units"].shape, float(obs["units"][0, 57, 2]), infos["action_mask"].shape
    ((4, 60, 60), 18.0, (4, 60, 60, 10))
    >>> import numpy as np
    >>> actions = {"kind": np.zeros((4, 60, 60), np.int8), "fraction": np.ones((4, 60, 60), np.float32)}
    >>> for _ in range(3):
    ...     obs, rewards, terminations, truncations, infos = venv.step(actions)
    >>> terminations.tolist(), float(obs["units"][0, 57, 2]), infos["final_info"]["cells"].tolist()
    ([True, True, True, True], 18.0, [1, 1, 1, 1])
    >>> venv.close()
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, map: Any = None, opponent: Any = "council", seat: int = 0,
                 rounds: int = DEFAULT_ROUNDS, threads: Optional[int] = None,
                 grid: Optional[Tuple[int, int]] = None, maps: Any = None, reward: str = "share",
                 info_share: bool = True):
        n = num_envs
        if reward not in ("share", "cells", "final"):
            raise ValueError(f"a VectorEnv's reward is 'share', 'cells' or 'final', not {reward!r}")
        self._sampler = MapSampler(maps) if maps is not None else None
        first = self._sampler(np.random.default_rng(0)) if map is None and self._sampler else _map(map)
        self.grid = _grid_of(grid, first, self._sampler)
        bots, self._python = opponents(first, seat, opponent)
        self.num_envs = n
        self.seat = seat
        self.rounds = rounds
        self.info_share = info_share
        self._core = VectorCore([first] * n, rounds, bots, seat, threads or min(n, os.cpu_count() or 1),
                                self.grid, reward)
        self._rngs: List[Optional[np.random.Generator]] = [None] * n
        b = self._bufs = self._core.buffers()
        # Read-only views of the arrays the core writes: it clears only the cells it wrote the
        # step before, so a change made to them here would outlive the step.
        self._obs = {k: _read_only(b[k]) for k in OBS_KEYS}
        self._truncations = np.zeros(n, dtype=np.bool_)
        every = np.ones(n, dtype=np.bool_)
        self._infos: Dict[str, Any] = {"action_mask": _read_only(b["action_mask"]), "_action_mask": every}
        if info_share:
            self._infos.update(share=b["share"], _share=every)
        self._infos.update(cells=b["cells"], _cells=every)
        self._final_mask = np.zeros(b["action_mask"].shape, dtype=np.int8)
        self._masked: Sequence[int] = ()
        self.single_observation_space, self.single_action_space = _spaces(*self.grid, rounds)
        self.observation_space = batch_space(self.single_observation_space, n)
        # Gymnasium's batch_space, as a CellActions: its sample takes action_masks().
        self.action_space = batch_cell_actions(self.single_action_space, n)

    @property
    def threads(self) -> int:
        return self._core.threads

    @threads.setter
    def threads(self, n: int) -> None:
        self._core.threads = n

    def map(self, i: int):
        """The map match ``i`` plays: the referee's view, which nothing needs."""
        return self._core.map(i)

    def _draw(self, i: int):
        rng = self._rngs[i]
        if rng is None:
            rng = self._rngs[i] = seeding.np_random()[0]
        assert self._sampler is not None
        return self._sampler(rng)

    def reset(self, *, seed: Union[int, Sequence[Optional[int]], None] = None, options: Optional[dict] = None):
        n = self.num_envs
        if isinstance(seed, (int, np.integer)):
            super().reset(seed=int(seed))
            seeds: Sequence[Optional[int]] = [int(seed) + i for i in range(n)]
        elif seed is None:
            seeds = [None] * n
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"{len(seeds)} seeds for {n} matches")
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i] = seeding.np_random(s)[0]
        new_map = (options or {}).get("map")
        if new_map is not None:
            if isinstance(new_map, (list, tuple)):
                if len(new_map) != n:
                    raise ValueError(f"options['map']: {len(new_map)} maps for {n} matches")
                maps: Optional[List[Any]] = [_map(m) for m in new_map]
            else:
                maps = [_map(new_map)] * n
        elif self._sampler is not None:
            maps = [self._draw(i) for i in range(n)]
        else:
            maps = None
        self._core.reset(maps)
        if self._sampler is not None:
            for i in range(n):
                self._core.set_next(i, self._draw(i))
        return self._obs, dict(self._infos)

    def step(self, actions: Dict[str, Any]):
        try:
            kind, fraction = actions["kind"], actions["fraction"]
        except (KeyError, TypeError, IndexError):
            raise ValueError("actions are {'kind': n × H × W array, 'fraction': n × H × W array}") from None
        core = self._core
        for k, decide in self._python.items():
            for i in range(self.num_envs):
                if core.is_active(i, k):
                    core.submit(i, k, decide(core.observation_dict(i, k)))
        core.step(*cell_arrays(kind, fraction, (self.num_envs,) + self.grid, "actions"))
        b = self._bufs
        terminations = b["terminated"]
        infos = dict(self._infos)  # a new dict (wrappers add keys), of the same arrays
        if terminations.any():
            ended = np.flatnonzero(terminations)
            infos["final_obs"], infos["final_info"] = self._final(ended)
            infos["_final_obs"], infos["_final_info"] = terminations.copy(), terminations.copy()
            if self._sampler is not None:
                for i in ended:
                    core.set_next(int(i), self._draw(int(i)))
        return self._obs, b["reward"], terminations, self._truncations, infos

    def _final(self, ended: np.ndarray) -> Tuple[np.ndarray, Dict[str, Any]]:
        """``final_obs`` and ``final_info`` of the ended matches, batched as Gymnasium batches
        infos (``_add_info``: an array per key with its mask, a dict such as ``result`` key by
        key)."""
        n = self.num_envs
        obs = np.full(n, None, dtype=object)
        mask = np.zeros(n, dtype=np.bool_)
        mask[ended] = True
        # Made once (it is large): rows of matches that ended before are zeroed again.
        action_mask = self._final_mask
        for i in self._masked:
            action_mask[i] = 0
        info: Dict[str, Any] = {"action_mask": action_mask, "_action_mask": mask}
        last = self._core.last([int(i) for i in ended])  # one array per key, a row per ended match
        for j, i in enumerate(ended):
            i = int(i)
            obs[i] = {k: last[k][j] for k in OBS_KEYS}
            action_mask[i] = last["action_mask"][j]
            rest: Dict[str, Any] = {"share": float(last["share"][j])} if self.info_share else {}
            rest["cells"] = int(last["cells"][j])
            rest["result"] = self._core.result(i)
            info = self._add_info(info, rest, i)
        self._masked = ended
        return obs, info

    def action_masks(self) -> np.ndarray:
        """The legal kinds of every cell of every match now, ``n × height × width × 10`` bools
        (``infos["action_mask"]`` of the last ``reset`` or ``step`` as ``bool``, a new array):
        ``action_space.sample(venv.action_masks())`` is masked random play."""
        return self._bufs["action_mask"] != 0

    def close_extras(self, **kwargs: Any) -> None:
        self._core.threads = 1  # the worker threads end
