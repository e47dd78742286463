"""What gbely's learning environments share (private): the observation schema as Python sees
it, the spaces built from it, the maps drawn, the opponents, the rewards, rendering.

:mod:`gbely.env`, :mod:`gbely.vector` and :mod:`gbely.wrappers` import this module and nothing of
each other's, so no two modules of the package need each other. The arrays, their dtypes, shapes,
bounds and codes are the native module's one table (``gbely._gbely.OBS_SCHEMA``, from the Rust
``schema.rs``): nothing here restates them.
"""
from __future__ import annotations

import importlib.util
import os
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

try:
    import numpy as np
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        "gbely.env needs numpy and gymnasium: pip install 'gbely[env]' (and pettingzoo for parallel_env)"
    ) from e

from ._gbely import BUILTIN_OPPONENTS, OBS_SCHEMA, EnvCore, Map, seating

#: The observation arrays, in order: ``name``, ``dtype``, ``shape`` (``grid``: height × width,
#: ``grid_kinds``: height × width × KINDS, ``one``: ``(1,)``), ``low``, ``high`` (a number,
#: ``"all_units"``: see :func:`all_units`, or ``"last_round"``), ``unseen`` (the value of an unseen or padded cell), ``observation``
#: (in the observation space; ``action_mask`` is in ``info``), ``doc``.
FIELDS: Tuple[Dict[str, Any], ...] = OBS_SCHEMA["fields"]
#: The keys of an observation (the fields in the observation space).
OBS_KEYS: Tuple[str, ...] = tuple(f["name"] for f in FIELDS if f["observation"])
#: The action kinds by code (``stay``, ``move_north`` … ``attack_east``, ``fortify``).
KIND_NAMES: Tuple[str, ...] = OBS_SCHEMA["kinds"]
#: Actions per cell.
KINDS = len(KIND_NAMES)
#: Terrain codes of the ``terrain`` array by §5 name; owner codes of ``owner`` (``unseen``,
#: ``hbp``, ``own``, ``zastupitelstvo``; ``armada_k`` is ``ARMADA_OFFSET + k``).
TERRAIN: Dict[str, int] = OBS_SCHEMA["terrain"]
OWNER: Dict[str, int] = OBS_SCHEMA["owner"]
ARMADA_OFFSET: int = OBS_SCHEMA["armada_offset"]

#: Opponents that play in Rust (fast; in a VectorEnv they decide on its threads), by name, as the
#: engine declares them: every built-in agent (the Council's levels, docs/league.md), and
#: ``template`` and ``expander``, the example agents, played by their Rust twins (the same
#: decisions as the Python files, in-process).
BUILTIN: Dict[str, str] = dict(BUILTIN_OPPONENTS)

Opponent = Union[str, "os.PathLike[str]", Callable[[dict], Any], Any]
Reward = Union[str, Callable[[float, float, bool], float]]
Maps = Union[Tuple[int, int], Sequence[Any], Callable[["np.random.Generator"], Any]]


#: What ``map="final"`` plays: the final map of ``gbely/Final-v0`` (a generated 90×90 final).
FINAL_MAP = "final:gbely"


def _map(spec: Any) -> Map:
    if spec is None:
        return Map.reference()
    if isinstance(spec, Map):
        return spec
    spec = os.fspath(spec)
    return Map.named(FINAL_MAP if spec == "final" else spec)


def _decide_of(opponent: Opponent) -> Callable[[dict], Any]:
    """A Python opponent's ``decide``: a callable, an object with ``decide``, or an agent file
    (imported in this process, unlike a judged match)."""
    if callable(opponent):
        return opponent
    if hasattr(opponent, "decide"):
        return opponent.decide
    path = os.fspath(opponent)
    if not os.path.isfile(path):
        raise ValueError(f"opponent {opponent!r}: not a built-in agent ({', '.join(BUILTIN)}) nor an agent file")
    spec = importlib.util.spec_from_file_location(f"gbely_opponent_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "decide", None)):
        raise ValueError(f"{path} defines no function decide(stav)")
    return module.decide


def opponents(map: Map, seat: int, opponent: Opponent) -> Tuple[List[Optional[str]], Dict[int, Callable[[dict], Any]]]:
    """Who plays the seats of ``map`` beside the learner's ``seat`` (the native ``seating``):
    per seat the built-in agent (or ``None``: the learner, or a Python opponent), and the Python
    opponents' ``decide`` by seat."""
    builtin = BUILTIN.get(opponent) if isinstance(opponent, str) else None
    bots = seating(map, [seat], builtin)
    decide = None if builtin else _decide_of(opponent)
    python = {k: decide for k, b in enumerate(bots) if b is None and k != seat and decide is not None}
    return bots, python


def check_reward(reward: Reward) -> Reward:
    if callable(reward) or reward in ("share", "cells", "final"):
        return reward
    raise ValueError(f"reward={reward!r}: 'share', 'cells', 'final' or a function (share_before, share_after, over)")


def reward_of(reward: Reward, core: EnvCore, seat: int, over: bool) -> float:
    """A step's reward (the native ``EnvCore.reward``; a function gets the shares before and after)."""
    if callable(reward):
        return float(reward(core.share_before(seat), core.share(seat), over))
    return core.reward(seat, reward)


class MapSampler:
    """The maps an environment draws at each reset (``maps=``), with a numpy Generator:
    ``(low, high)`` a generated duel map (:meth:`gbely.Map.generate`) of a size drawn from low to
    high (square), a sequence of maps (or names) to draw one from, or a function ``rng -> Map``.
    Pickles when its maps or function do."""

    def __init__(self, maps: Maps):
        self.sizes: Optional[Tuple[int, int]] = None
        self.maps: Optional[List[Map]] = None
        self.fn: Optional[Callable[[Any], Any]] = None
        if isinstance(maps, MapSampler):
            self.sizes, self.maps, self.fn = maps.sizes, maps.maps, maps.fn
        elif isinstance(maps, tuple) and len(maps) == 2 and all(isinstance(x, (int, np.integer)) for x in maps):
            low, high = int(maps[0]), int(maps[1])
            if not 0 < low <= high:
                raise ValueError(f"maps={maps!r}: a range of sizes (low, high) with 0 < low <= high")
            self.sizes = (low, high)
        elif callable(maps):
            self.fn = maps
        else:
            self.maps = [_map(m) for m in maps]
            if not self.maps:
                raise ValueError("maps=[]: no map to draw")

    def __call__(self, rng: "np.random.Generator") -> Map:
        if self.sizes is not None:
            size = int(rng.integers(self.sizes[0], self.sizes[1] + 1))
            return Map.generate(f"{int(rng.integers(2 ** 63)):016x}", size)
        if self.maps is not None:
            return self.maps[int(rng.integers(len(self.maps)))]
        assert self.fn is not None
        return _map(self.fn(rng))

    def grid(self) -> Optional[Tuple[int, int]]:
        """The smallest grid every map drawn fits in (``None`` for a function)."""
        if self.sizes is not None:
            return (self.sizes[1], self.sizes[1])
        if self.maps is not None:
            return (max(m.height for m in self.maps), max(m.width for m in self.maps))
        return None


def _grid_of(grid: Optional[Tuple[int, int]], first: Map, sampler: Optional[MapSampler]) -> Tuple[int, int]:
    if grid is not None:
        h, w = (int(x) for x in grid)
        return h, w
    if sampler is not None:
        g = sampler.grid()
        if g is None:
            raise ValueError("maps=FUNCTION: give the grid=(height, width) every map fits in")
        return g
    return first.height, first.width


def all_units(height: int, width: int, rounds: int) -> float:
    """What no cell's units (nor fortification) can exceed on a grid of ``height × width`` over
    ``rounds`` rounds: every unit there can be, ``cells × (per_cell + rounds × per_cell_round)``
    (``OBS_SCHEMA["all_units"]``: the largest starting garrison of a map file or a base's start,
    the best production and the base bonus a round), plus the §5 rounding, as the float32 at or
    above it.

    >>> all_units(60, 60, 150)  # 3600 × (1 000 010 + 150 × 8) + 1 = 3 604 356 001, up to a float32
    3604356096.0
    """
    per_cell, per_round = OBS_SCHEMA["all_units"]
    bound = height * width * (per_cell + rounds * per_round) + 1.0
    b = np.float32(bound)
    return float(b if float(b) >= bound else np.nextafter(b, np.float32(np.inf)))


def _high(field: Dict[str, Any], rounds: int, grid: Tuple[int, int] = (0, 0)) -> float:
    if field["high"] == "last_round":
        return rounds - 1
    if field["high"] == "all_units":
        return all_units(grid[0], grid[1], rounds)
    return field["high"]


def _spaces(height: int, width: int, rounds: int) -> Tuple[spaces.Dict, spaces.Dict]:
    """The observation space (a Box per field of :data:`FIELDS` in the observation, its bounds
    the table's) and the action space over a grid."""
    grid = (height, width)
    obs = spaces.Dict({
        f["name"]: spaces.Box(_cast(f["low"], f["dtype"]), _cast(_high(f, rounds, grid), f["dtype"]),
                              (1,) if f["shape"] == "one" else grid, np.dtype(f["dtype"]))
        for f in FIELDS if f["observation"]
    })
    act = CellActions({
        "kind": spaces.MultiDiscrete(np.full(grid, KINDS, dtype=np.int64)),
        "fraction": spaces.Box(0.0, 1.0, grid, np.float32),
    })
    return obs, act


def _cast(bound: float, dtype: str) -> Union[int, float]:
    """A bound as the Box of an integer dtype wants it (an int), or a float."""
    return int(bound) if np.issubdtype(np.dtype(dtype), np.integer) else float(bound)


def _masked_draw(rng: "np.random.Generator", mask: Any, shape: Tuple[int, ...], what: str) -> np.ndarray:
    """A kind per cell of ``shape``, uniform among the kinds ``mask`` allows: ``mask`` has
    ``KINDS`` entries per cell (bool or int, nonzero = allowed), shaped ``shape + (KINDS,)`` or
    flat in the same order (as ``MaskedCells.action_masks()`` gives it). A cell that allows
    nothing gets 0 (stay)."""
    m = np.asarray(mask)
    cells = int(np.prod(shape, dtype=np.int64))
    if m.dtype.kind not in "biu" or m.size != cells * KINDS:
        raise ValueError(f"{what}: a mask of {cells} cells × {KINDS} kinds (bool or int, shaped "
                         f"{shape + (KINDS,)} or flat ({cells * KINDS},)) expected, not an array of shape "
                         f"{m.shape} and dtype {m.dtype}")
    m = m.reshape(shape + (KINDS,))
    # The largest of independent uniform draws over the legal kinds is uniform among them.
    return (rng.random(m.shape) * (m != 0)).argmax(-1)


class CellActions(spaces.Dict):
    """The action space: ``{"kind": MultiDiscrete(height × width of 10), "fraction": Box(0, 1)}``,
    a plain :class:`gymnasium.spaces.Dict` whose ``sample`` also takes the environment's action
    mask (``info["action_mask"]``, ``height × width × 10``, int8 or bool): each cell's kind is then
    drawn uniformly among its legal kinds (what PettingZoo's ``api_test`` and masked random play
    do). :class:`gbely.vector.VectorEnv`'s ``action_space`` is one too, batched (``n × height ×
    width``), whose ``sample`` takes ``infos["action_mask"]`` or ``action_masks()`` (``n × height
    × width × 10``).

    >>> space = _spaces(2, 2, 150)[1]
    >>> mask = np.zeros((2, 2, KINDS), np.int8); mask[..., 0] = 1; mask[0, 1, 9] = 1
    >>> _ = space.seed(0)
    >>> sorted({int(space.sample(mask)["kind"][0, 1]) for _ in range(50)}), int(space.sample(mask)["kind"][1, 1])
    ([0, 9], 0)
    """

    def sample(self, mask: Any = None, probability: Any = None) -> Dict[str, Any]:
        if mask is not None and not isinstance(mask, dict):
            kind = self.spaces["kind"]
            draw = _masked_draw(kind.np_random, mask, tuple(kind.shape or ()), "CellActions.sample")
            return {"kind": draw.astype(kind.dtype), "fraction": self.spaces["fraction"].sample()}
        return super().sample(mask, probability)


def batch_cell_actions(single: CellActions, n: int) -> CellActions:
    """``n`` copies of ``single`` batched as Gymnasium's ``batch_space`` does (a ``kind``
    ``MultiDiscrete`` and a ``fraction`` ``Box`` with a leading ``n`` axis), as a
    :class:`CellActions` so that ``sample`` takes a batch of masks."""
    from gymnasium.vector.utils import batch_space

    batched = batch_space(spaces.Dict(single.spaces), n)
    assert isinstance(batched, spaces.Dict)
    return CellActions(dict(batched.spaces))


class CellKinds(spaces.MultiDiscrete):
    """:class:`~gbely.wrappers.MaskedCells`' action space: ``MultiDiscrete`` with ``KINDS`` per
    cell (equal to the plain one), whose ``sample`` also takes the mask as ``action_masks()``
    gives it (one flat bool array, cell-major then kind; a batch of them for the batched wrapper)
    as well as gymnasium's tuple of per-cell masks.

    >>> space = CellKinds(np.full(2, KINDS)); _ = space.seed(0)
    >>> mask = np.zeros(2 * KINDS, bool); mask[[0, 10, 19]] = True   # cell 0: stay; cell 1: stay, fortify
    >>> sorted({int(space.sample(mask)[1]) for _ in range(50)}), int(space.sample(mask)[0])
    ([0, 9], 0)
    """

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, np.ndarray):
            return _masked_draw(self.np_random, mask, self.shape, "CellKinds.sample").astype(self.dtype)
        return super().sample(mask, probability)


def cell_arrays(kind: Any, fraction: Any, shape: Tuple[int, ...], what: str) -> Tuple[np.ndarray, np.ndarray]:
    """An action's arrays as the native core takes them (``kind`` int8, ``fraction`` float32, both
    of ``shape``, contiguous); a ``fraction`` that broadcasts to ``shape`` (a number, say) is
    broadcast. ``ValueError`` says what was expected and what came."""
    k = np.asarray(kind)
    dims = " × ".join(map(str, shape))
    if k.shape != shape or k.dtype.kind not in "biuf":
        hint = f" (reshape it: .reshape{shape})" if k.size == int(np.prod(shape)) and k.shape != shape else ""
        raise ValueError(f"{what}: 'kind' is an int array of shape {shape} ({dims}), not an array of shape "
                         f"{k.shape} and dtype {k.dtype}{hint}")
    if k.dtype != np.int8:  # an int8 cast would wrap 266 round into a kind: such a kind is refused here
        bad = np.argwhere((k < 0) | (k >= KINDS))
        if len(bad):
            at = tuple(int(x) for x in bad[0])
            raise ValueError(f"{what}: action kind {k[at]} at index {at}: kinds are 0 to {KINDS - 1}")
    f = np.asarray(fraction)
    if f.dtype.kind not in "biuf":
        raise ValueError(f"{what}: 'fraction' is a float array of shape {shape} ({dims}) or a number, not an "
                         f"array of dtype {f.dtype}")
    try:
        f = np.broadcast_to(f, shape)
    except ValueError:
        hint = f" (reshape it: .reshape{shape})" if f.size == int(np.prod(shape)) else ""
        raise ValueError(f"{what}: 'fraction' is a float array of shape {shape} ({dims}) or a number, not an "
                         f"array of shape {f.shape}{hint}") from None
    return np.ascontiguousarray(k, dtype=np.int8), np.ascontiguousarray(f, dtype=np.float32)


#: What ``render()`` can give: a picture, or the viewer's page (the environment then records).
RENDER_MODES = ("rgb_array", "html")


def _render_mode(mode: Optional[str]) -> Optional[str]:
    if mode is not None and mode not in RENDER_MODES:
        raise ValueError(f"render_mode={mode!r}: None or one of {', '.join(map(repr, RENDER_MODES))}")
    return mode


def _render(core: EnvCore, mode: Optional[str], scale: int) -> Any:
    if mode is None:
        gymnasium.logger.warn("render() without a render_mode: make the environment with render_mode='rgb_array'")
        return None
    if mode == "html":
        return core.viewer_html()
    return core.picture(scale)
