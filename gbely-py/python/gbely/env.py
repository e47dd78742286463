"""Learning environments: Gymnasium, PettingZoo and a batched engine (``pip install gbely[env]``).

>>> from gbely.env import GbelyEnv
>>> env = GbelyEnv(rounds=3)
>>> obs, info = env.reset(seed=0)
>>> sorted(obs)
['base', 'fortification', 'owner', 'round', 'terrain', 'units', 'visible']
>>> obs["units"][57, 2], obs["owner"][57, 2], int(obs["visible"].sum())
(np.float32(18.0), np.int8(1), 5)
>>> action = {"kind": env.action_space["kind"].sample() * 0, "fraction": env.action_space["fraction"].sample()}
>>> obs, reward, terminated, truncated, info = env.step(action)
>>> reward, terminated, truncated
(0.0, False, False)

**Observations** are arrays over the map's grid (``height × width``, row-major like cell ids),
made from the seat's observation of the rules §5 and nothing else:

============== ======= =====================================================================
key            dtype   meaning
============== ======= =====================================================================
``terrain``    int8    -1 unseen, 0 ``luka``, 1 ``vrch``, 2 ``rieka``
``owner``      int8    -1 unseen, 0 ``hbp``, 1 own, 2 ``zastupitelstvo``, ``k + 2`` for
                       ``armada_k`` (``armada_2`` … ``armada_8``; 3 = ``armada`` in the Council's
                       view of a final)
``units``      float32 own ``jednotky`` and visible ``posadka``, rounded as in §5; 0 unseen
``fortification`` float32 ``opevnenie``, rounded as in §5; 0 unseen
``visible``    int8    1 for own and visible cells
``base``       int8    1 on ``moja_zakladna`` (other bases are not in §5, so not here)
``round``      int32   ``kolo``, shape ``(1,)``
============== ======= =====================================================================

Cells neither owned nor seen are "unseen": the arrays give no more than the dict does, except
the map's size (their shape) when the grid is the map's. ``grid=(H, W)`` makes the arrays
``H × W`` for any map that fits: the map sits at the top-left (its row r, column c is the arrays'
row r, column c) and every padded cell looks exactly like an unseen cell (terrain and owner -1,
the rest 0, mask "stay" only), so nothing a policy reads tells the map's size.
``info["action_mask"]`` (int8, ``height × width × 10``) says which
actions are legal from what the seat sees; ``info["observation"]`` is the §5 dict itself when the
environment is made with ``observation_dict=True``.

**Actions** are per cell: ``{"kind": int array height × width, "fraction": float array}`` with
kinds 0 stay, 1–4 MOVE north/south/west/east, 5–8 ATTACK north/south/west/east, 9 FORTIFY; each
own cell with a kind above 0 and a fraction above 0 sends ``fraction × units`` (its units as
observed, ``jednotky``; a fraction of 1 or more sends ``jednotky`` itself, as a submission would).
One command per cell, in row-major order: :mod:`gbely.codec` makes the same commands from the §5
dict with the standard library only, for a submission. An illegal action is what the rules make
of it: a discarded command (or nothing, for a direction off the map). A command list (``{"prikazy": [...]}`` or a list, as ``decide`` returns) is
accepted as an action too.

**Reward**, by default ``reward="share"``: the change of the seat's share of the map (in % points,
rules §10) over the round, so an episode's rewards add up to the final share minus the starting
one. ``reward="cells"``: the change of the seat's owned cells, which does not tell the map's size.
``reward="final"``: 0 until the end, then the final share. Or a function
``reward(share_before, share_after, over) -> float``. ``info["cells"]`` is the seat's owned cells,
``info["share"]`` its share (left out with ``info_share=False``, as it tells the map's size).

**Maps of every size**: ``reset(options={"map": m})`` plays any map that fits the grid (with the
same seats: duel or final). ``maps=`` draws a map at every ``reset`` with the environment's
``np_random`` (so ``reset(seed=s)`` gives the same maps): ``maps=(40, 90)`` a generated duel map
of a size drawn from 40 to 90 (square; the grid defaults to the largest), ``maps=[m1, m2, ...]``
one of these, or a function ``maps(rng) -> Map``. Without ``maps`` a reset keeps the map. Size-free
training: ``GbelyEnv(maps=(40, 90), reward="cells", info_share=False)``. ``env.unwrapped.map`` is
the referee's view of the map (its size, every cell), as is the last step's ``info["result"]``
(its scores are shares): nothing in the environments needs them, and a policy meant to play
finals, whose size §5 hides, must not read them.

An episode is one match; it *terminates* when the match is over (after the last round, or when
the seat or the match ends earlier); ``truncated`` is always ``False``.
"""
from __future__ import annotations

import copy
import os
from typing import Any, Dict, List, Optional, Tuple

# First: it says what to install when numpy or gymnasium is missing.
from ._common import (BUILTIN, KINDS, RENDER_MODES, CellActions, Map, MapSampler, Maps, Opponent, Reward,
                      _grid_of, _map, _render, _render_mode, _spaces, cell_arrays, check_reward, opponents, reward_of)
import numpy as np
import gymnasium
from gymnasium import spaces

from ._gbely import DEFAULT_ROUNDS, EnvCore, seating
# The batched environment and the wrappers have modules of their own (gbely.vector,
# gbely.wrappers); importable from here too, as they were.
from .vector import VectorEnv
from .wrappers import CHANNELS, MaskedCells, MaskedCellsVector, channels

__all__ = ["GbelyEnv", "GbelyParallelEnv", "parallel_env", "VectorEnv", "CellActions", "MapSampler", "KINDS",
           "BUILTIN", "MaskedCells", "MaskedCellsVector", "CHANNELS", "channels"]


def _is_commands(action: Any) -> bool:
    return isinstance(action, (list, tuple)) or (isinstance(action, dict) and "prikazy" in action)


def _act(core: EnvCore, seat: int, action: Any, grid: Tuple[int, int]) -> None:
    if _is_commands(action):
        core.submit(seat, action)
        return
    try:
        kind, fraction = action["kind"], action["fraction"]
    except (KeyError, TypeError, IndexError):
        raise ValueError("an action is {'kind': array, 'fraction': array} or a command list") from None
    core.act(seat, *cell_arrays(kind, fraction, grid, "an action"))


def _fork(core: EnvCore, options: Optional[dict]) -> bool:
    """``reset(options={"replay": r, "round": n})``: the episode continues the match of a replay
    (a :class:`gbely.Replay` or a file's path) from the start of round ``n``, its rounds before
    played again from its answers (a fork, as ``gbely play --from``); False when not asked."""
    replay = (options or {}).get("replay")
    if replay is None:
        return False
    if "round" not in options:
        raise ValueError("reset(options={'replay': ..., 'round': N}): give the round the episode starts at")
    if options.get("map") is not None:
        raise ValueError("reset(options=...): a fork plays the replay's own map; give 'replay' or 'map', not both")
    core.reset_from(replay, int(options["round"]))
    return True


def _observe(core: EnvCore, seat: int, with_dict: bool, share: bool = True) -> Tuple[dict, dict]:
    arrays = core.observe(seat)
    info: Dict[str, Any] = {"action_mask": arrays.pop("action_mask")}
    if share:
        info["share"] = core.share(seat)
    info["cells"] = core.cells(seat)
    if with_dict:
        info["observation"] = core.observation_dict(seat)
    return arrays, info


class GbelyEnv(gymnasium.Env):
    """One seat of a match against an opponent, as a Gymnasium environment (see the module).

    ``map``: a :class:`gbely.Map`, ``gbely``, ``seed:TEXT``, ``final`` (the 90×90 final of
    ``gbely/Final-v0``, ``final:gbely``), ``final:SEED`` or a map file. ``opponent`` plays
    every other seat: a built-in agent (``council``, the default, its levels ``council:easy`` and
    ``council:strong``, ``template``, ``expander``: in Rust), an agent file (imported and run in this process) or a callable ``decide(stav)``; on a
    final map the Council's seat is always the Council. ``seat``: the learner's seat.
    ``observation_dict``: put the §5 dict in ``info["observation"]``. ``grid=(height, width)``:
    the arrays' shape (the map's by default; padding as the module says). ``maps``: a map drawn
    at every reset (:class:`MapSampler`; the first map is drawn from seed 0 unless ``map`` is
    given). ``reset(options={"map": ...})`` changes the map (any that fits the grid, with the
    same seats); ``reset(options={"replay": r, "round": n})`` starts the episode at round ``n`` of
    a replay's match (a fork: learning from hard positions). ``info_share=False`` leaves ``info["share"]`` out. ``record``: keep each
    episode's replay for :meth:`save_replay` (seat names ``seat K`` and the built-in opponents'
    names). ``render_mode``: ``"rgb_array"`` or ``"html"`` (see :meth:`render`).

    Copies with ``copy.deepcopy`` and pickles (the match's state; the opponent must pickle too),
    unless it records."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, map: Any = None, opponent: Opponent = "council", seat: int = 0,
                 rounds: int = DEFAULT_ROUNDS, reward: Reward = "share", observation_dict: bool = False,
                 grid: Optional[Tuple[int, int]] = None, maps: Optional[Maps] = None, info_share: bool = True,
                 record: bool = False, render_mode: Optional[str] = None, render_scale: int = 8):
        self.render_mode = _render_mode(render_mode)
        self.render_scale = render_scale
        record = record or self.render_mode == "html"  # the viewer shows a recording
        self._sampler = MapSampler(maps) if maps is not None else None
        self._map = self._sampler(np.random.default_rng(0)) if map is None and self._sampler else _map(map)
        self.grid = _grid_of(grid, self._map, self._sampler)
        self.info_share = info_share
        self.seat = seat
        self.rounds = rounds
        self.observation_dict = observation_dict
        self._reward_spec = check_reward(reward)
        self._opponent = opponent
        self._bots, self._python = opponents(self._map, seat, opponent)
        self._core = EnvCore(self._map, rounds, self._bots, self.grid, record)
        self.observation_space, self.action_space = _spaces(*self.grid, rounds)

    @property
    def map(self) -> Map:
        """The map being played: the referee's view (its size, every cell). Nothing in the
        environment needs it; a policy that should carry over to maps of unknown size must not
        read it."""
        return self._core.map

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        if _fork(self._core, options):
            self._map = self._core.map
            return _observe(self._core, self.seat, self.observation_dict, self.info_share)
        new_map = (options or {}).get("map")
        if new_map is not None:
            m = _map(new_map)
        elif self._sampler is not None:
            m = self._sampler(self.np_random)
        else:
            m = None
        self._core.reset(m)  # refuses a map larger than the grid, or of other seats
        if m is not None:
            self._map = m
        return _observe(self._core, self.seat, self.observation_dict, self.info_share)

    def step(self, action: Any):
        core = self._core
        if core.is_over:
            raise RuntimeError("the match is over: call reset()")
        _act(core, self.seat, action, self.grid)
        for k, decide in self._python.items():
            if core.is_active(k):
                core.submit(k, decide(core.observation_dict(k)))
        core.advance()
        over = core.is_over or not core.is_active(self.seat)
        reward = reward_of(self._reward_spec, core, self.seat, over)
        obs, info = _observe(core, self.seat, self.observation_dict, self.info_share)
        if over:
            info["result"] = core.result()
        return obs, reward, over, False, info

    def render(self) -> Any:
        """The match now as ``render_mode`` says: ``"rgb_array"``, an RGB picture (``uint8``,
        ``height·render_scale × width·render_scale × 3``) of every cell in the viewer's colours
        (the referee's view, not the seat's observation: for watching, not for the policy);
        ``"html"``, the viewer's page (one self-contained HTML text) of the episode so far."""
        return _render(self._core, self.render_mode, self.render_scale)

    def save_replay(self, path: "os.PathLike[str] | str") -> None:
        """Writes the replay of this episode so far (the environment made with ``record=True``),
        a file ``gbely replay`` and the viewer read like any match's."""
        self._core.save_replay(os.fspath(path))

    def clone(self) -> "GbelyEnv":
        """A copy to explore from: stepping it leaves this one as it is."""
        return copy.deepcopy(self)


def _parallel_class():
    from pettingzoo import ParallelEnv

    class GbelyParallelEnv(ParallelEnv):
        """Every non-Council seat of a match as a PettingZoo Parallel environment (a simultaneous
        game): duels (two agents, or one against the Council with ``council=True``) and the
        9-seat final (eight finalists, the Council in Rust). Agents are ``seat_K``. Observations,
        actions, ``info`` and rewards are those of :class:`GbelyEnv`, per agent. An agent leaves
        ``agents`` when it is eliminated or the match is over."""

        metadata = {"name": "gbely_v0", "render_modes": list(RENDER_MODES), "render_fps": 4,
                    "is_parallelizable": True}

        def __init__(self, map: Any = "gbely", council: Optional[bool] = None, rounds: int = DEFAULT_ROUNDS,
                     reward: Reward = "share", observation_dict: bool = False,
                     grid: Optional[Tuple[int, int]] = None, info_share: bool = True,
                     render_mode: Optional[str] = None, render_scale: int = 8):
            self.render_mode = _render_mode(render_mode)
            self.render_scale = render_scale
            self._map = _map(map)
            self.grid = _grid_of(grid, self._map, None)
            self.info_share = info_share
            seats = self._map.seats
            final = len(seats) > 2
            if council is None:
                council = final
            # Every seat is an agent's, but the Council's with council=True (the Council plays it).
            learners = [k for k, (role, _) in enumerate(seats) if not (council and role == "council")]
            bots = seating(self._map, learners, "council")
            self._seats = [k for k, b in enumerate(bots) if b is None]
            self.possible_agents = [f"seat_{k}" for k in self._seats]
            self.agents: List[str] = []
            self.rounds = rounds
            self.observation_dict = observation_dict
            self._reward_spec = check_reward(reward)
            self._bots = bots
            self._core = EnvCore(self._map, rounds, bots, self.grid, self.render_mode == "html")
            obs, act = _spaces(*self.grid, rounds)
            self._obs_spaces = {a: obs for a in self.possible_agents}
            self._act_spaces = {a: act for a in self.possible_agents}

        def observation_space(self, agent: str) -> spaces.Dict:
            return self._obs_spaces[agent]

        def action_space(self, agent: str) -> spaces.Dict:
            return self._act_spaces[agent]

        @property
        def map(self) -> Map:
            return self._core.map

        def _seat(self, agent: str) -> int:
            return int(agent.split("_")[1])

        def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
            if seed is not None:
                for k, a in enumerate(self.possible_agents):
                    self._act_spaces[a].seed(seed + k)
            if not _fork(self._core, options):
                new_map = (options or {}).get("map")
                self._core.reset(_map(new_map) if new_map is not None else None)
            self.agents = list(self.possible_agents)
            observations, infos = {}, {}
            for a in self.agents:
                observations[a], infos[a] = _observe(self._core, self._seat(a), self.observation_dict,
                                                     self.info_share)
            return observations, infos

        def step(self, actions: Dict[str, Any]):
            core = self._core
            if core.is_over:
                raise RuntimeError("the match is over: call reset()")
            for a, action in actions.items():
                if a in self.agents:
                    _act(core, self._seat(a), action, self.grid)
            core.advance()
            observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
            for a in self.agents:
                seat = self._seat(a)
                over = core.is_over or not core.is_active(seat)
                observations[a], infos[a] = _observe(core, seat, self.observation_dict, self.info_share)
                rewards[a] = reward_of(self._reward_spec, core, seat, over)
                terminations[a] = over
                truncations[a] = False
            self.agents = [a for a in self.agents if not terminations[a]]
            return observations, rewards, terminations, truncations, infos

        def render(self) -> Any:
            """As :meth:`GbelyEnv.render`."""
            return _render(self._core, self.render_mode, self.render_scale)

        def state(self) -> Any:
            raise NotImplementedError("the whole state is hidden from the agents (fog of war)")

    # Pickled by name as gbely.env.GbelyParallelEnv (the module's __getattr__ makes it once).
    GbelyParallelEnv.__qualname__ = "GbelyParallelEnv"
    GbelyParallelEnv.__module__ = __name__
    return GbelyParallelEnv


def __getattr__(name: str) -> Any:
    # pettingzoo is imported only when the parallel environment is wanted.
    if name == "GbelyParallelEnv":
        cls = _parallel_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)


def parallel_env(map: Any = "gbely", council: Optional[bool] = None, rounds: int = DEFAULT_ROUNDS,
                 reward: Reward = "share", observation_dict: bool = False,
                 grid: Optional[Tuple[int, int]] = None, info_share: bool = True,
                 render_mode: Optional[str] = None, render_scale: int = 8):
    """The PettingZoo Parallel environment (needs ``pettingzoo``): every seat but the Council's
    (``council=True``, the default on a final map) is an agent ``seat_K``; ``map="final"`` plays
    the final of ``gbely/Final-v0`` (eight agents). ``grid``, ``reward``
    and ``info_share`` as for :class:`GbelyEnv`.

    >>> env = parallel_env("gbely", council=False, rounds=2)
    >>> observations, infos = env.reset(seed=1)
    >>> env.agents
    ['seat_0', 'seat_1']
    """
    return __getattr__("GbelyParallelEnv")(map, council=council, rounds=rounds, reward=reward,
                                           observation_dict=observation_dict, grid=grid, info_share=info_share,
                                           render_mode=render_mode, render_scale=render_scale)
