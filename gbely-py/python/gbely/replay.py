"""Replays from Python: load one (plain or ``.json.gz``), read its figures, and read it as data:
per round and seat the observation, the commands (built-in players' decided again), the state, and
datasets for behaviour cloning (:meth:`Replay.dataset`, :func:`replay_dataset`)."""
from __future__ import annotations

import gzip
import json
import os
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

from ._errors import ReplayError

if TYPE_CHECKING:
    from ._gbely import ReplayCore
    from ._progress import ProgressArg
    from .types import Stav

Seat = Union[int, str]


class Replay:
    """A replay document (format ``gbely-replay``, versions 1 to 4, see docs/replay-format.md).

    >>> import gbely, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "r.json")
    >>> _ = gbely.play(lambda s: [], rounds=4, replay=path)
    >>> rp = gbely.Replay.load(path)
    >>> len(rp.figures()), rp.figures()[-1]["cells"]
    (4, [1, 14])
    """

    def __init__(self, doc: Dict[str, Any]):
        """A replay from its parsed JSON document; :class:`gbely.ReplayError` if it is none."""
        if not isinstance(doc, dict) or doc.get("format") != "gbely-replay":
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ReplayError(f"not a gbely replay (format {found!r})")
        from ._gbely import REPLAY_VERSIONS

        if doc.get("version") not in REPLAY_VERSIONS:
            reads = ", ".join(map(str, REPLAY_VERSIONS))
            raise ReplayError(f"replay version {doc.get('version')!r} is not supported (this package reads {reads})")
        self.doc = doc
        self._path: Optional[str] = None
        self._native: Optional["ReplayCore"] = None

    @staticmethod
    def load(path: Union[str, "os.PathLike[str]"]) -> "Replay":
        """Reads a replay file; gzip-compressed files are read transparently.

        Raises ``OSError`` when the file cannot be read, :class:`gbely.ReplayError` when it is
        not a replay."""
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        try:
            doc = json.loads(data)
        except ValueError as e:
            raise ReplayError(f"{os.fspath(path)}: not a replay: {e}") from None
        rp = Replay(doc)
        rp._path = os.fspath(path)
        return rp

    @property
    def map_name(self) -> str:
        """The name of the map played."""
        return self.doc["map"]["name"]

    @property
    def seats(self) -> List[Dict[str, Any]]:
        """Per seat: ``seat``, ``name``, ``role`` (``army``/``council``) and ``base``."""
        return self.doc["seats"]

    @property
    def rounds_played(self) -> int:
        """The number of rounds in the replay (fewer than configured if the match ended early)."""
        return len(self.doc["turns"])

    @property
    def result(self) -> Dict[str, Any]:
        """The result as written in the replay: ``last_round``, ``ended_by``, ``sides``, …"""
        return self.doc["result"]

    @property
    def final_state(self) -> Dict[str, List[Any]]:
        """Per cell (row-major): ``owner`` (seat or -1), ``units``, ``fortification``."""
        return self.doc["final"]

    def figures(self) -> List[Dict[str, Any]]:
        """Per round: ``round``, ``cells`` and ``units`` per seat (at the end of the round), and
        ``discarded``, the number of commands discarded that round (all seats together)."""
        out = []
        for t in self.doc["turns"]:
            out.append({"round": t["round"], "cells": t["cells"], "units": t["units"],
                        "discarded": len(t.get("discarded", []))})
        return out

    def viewer_html(self) -> str:
        """The viewer's page of this replay: one self-contained HTML text (what :meth:`to_html`
        writes)."""
        from ._gbely import replay_html

        return str(replay_html(json.dumps(self.doc)))

    def _repr_html_(self) -> str:
        """In a notebook, the viewer itself, inline (an ``iframe`` whose ``srcdoc`` is the page:
        nothing is fetched)."""
        import html

        return (f'<iframe title="{html.escape(repr(self))}" srcdoc="{html.escape(self.viewer_html(), quote=True)}" '
                'style="width:100%;height:640px;border:1px solid #ccc"></iframe>')

    def to_pandas(self) -> Any:
        """:meth:`figures` as a ``pandas.DataFrame`` (needs pandas), one row per round and seat:
        ``round``, ``seat``, ``name``, ``cells``, ``units`` (at the end of the round) and
        ``discarded`` (the round's discarded commands, all seats together, on each of its rows)."""
        from ._tables import pandas

        pd = pandas()
        names = [s["name"] for s in self.seats]
        rows = [(f["round"], k, names[k], c, u, f["discarded"])
                for f in self.figures() for k, (c, u) in enumerate(zip(f["cells"], f["units"]))]
        return pd.DataFrame(rows, columns=["round", "seat", "name", "cells", "units", "discarded"])

    def to_html(self, path: Union[str, "os.PathLike[str]"]) -> str:
        """Writes the viewer: one self-contained HTML file (no network). Returns its path."""
        html = self.viewer_html()
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        return os.fspath(path)

    def verify(self) -> None:
        """Re-simulates the match; raises :class:`gbely.ReplayError` naming the first round and
        cell that differ."""
        from ._gbely import replay_verify

        problem = replay_verify(json.dumps(self.doc))
        if problem is not None:
            raise ReplayError(f"the replay does not match its re-simulation: {problem}")

    def __getstate__(self) -> Dict[str, Any]:
        # The native reader is made again on use; it does not pickle.
        return {**self.__dict__, "_native": None}

    # -- the replay as data -------------------------------------------------------------------

    def _core(self) -> "ReplayCore":
        """The native reader (made once): from the file when loaded from one, else from ``doc``."""
        if self._native is None:
            from ._gbely import ReplayCore

            self._native = ReplayCore.load(self._path) if self._path else ReplayCore.from_json(json.dumps(self.doc))
        return self._native

    def seat_of(self, seat: Seat) -> int:
        """A seat by its number or by its player's name (as in :attr:`seats`); ``ValueError`` if
        no seat, or more than one, has that name."""
        if isinstance(seat, str):
            found = [s["seat"] for s in self.seats if s["name"] == seat]
            if len(found) != 1:
                names = ", ".join(f"{s['seat']}: {s['name']}" for s in self.seats)
                how = "no seat" if not found else f"seats {found}"
                raise ValueError(f"{how} of this replay played as {seat!r} (seats {names}): give the seat number")
            return int(found[0])
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(self.seats):
            raise ValueError(f"seat {seat!r} does not exist: the match has {len(self.seats)} seats")
        return seat

    def observation(self, round: int, seat: Seat) -> Optional["Stav"]:
        """The observation (the SPEC §5 dict an agent gets) seat ``seat`` received in ``round``,
        re-simulated; ``None`` if the seat was out of the game then.

        >>> import gbely, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "r.json")
        >>> _ = gbely.play(lambda s: [], rounds=3, replay=path)
        >>> rp = gbely.Replay.load(path)
        >>> obs = rp.observation(2, 0)
        >>> obs["kolo"], obs["moja_zakladna"], obs["moje_pola"][0]["jednotky"]  # 18 + 2 × (3 + 5)
        (2, 'P57_02', 34.0)
        """
        return self._core().observation(round, self.seat_of(seat))

    def observation_arrays(self, round: int, seat: Seat,
                           grid: Optional[Tuple[int, int]] = None) -> Optional[Dict[str, Any]]:
        """That observation as the learning environments' numpy arrays (``gbely.env``: terrain,
        owner, units, fortification, visible, base, round, action_mask), padded to ``grid`` like
        :meth:`dataset`; ``None`` if the seat was out of the game."""
        return self._core().observation_arrays(round, self.seat_of(seat), _grid(grid))

    def commands(self, round: int, seat: Seat) -> Optional[List[Any]]:
        """The commands seat ``seat`` gave in ``round``, as SPEC §6 dicts (``{"typ": "MOVE", "z":
        …, "na": …, "pocet": …}``; items that were no commands as received). A built-in player's
        (``council``, ``expander-rs``, a level, …), which the file does not store, are decided
        again from the same observation. ``None`` for a violation (see :meth:`violation`) or a
        seat out of the game.

        >>> import gbely, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "r.json")
        >>> _ = gbely.play(lambda s: [{"typ": "FORTIFY", "pole": s["moja_zakladna"], "investicia": 2}],
        ...                rounds=2, replay=path)
        >>> rp = gbely.Replay.load(path)
        >>> rp.commands(1, 0)
        [{'typ': 'FORTIFY', 'pole': 'P57_02', 'investicia': 2}]
        >>> len(rp.commands(0, 1)) > 0   # the Council's, decided again
        True
        """
        text = self._core().commands_json(round, self.seat_of(seat))
        return None if text is None else list(json.loads(text))

    def violation(self, round: int, seat: Seat) -> Optional[Dict[str, str]]:
        """The violation (SPEC §8) seat ``seat`` committed in ``round`` as ``{"kind", "detail"}``,
        or ``None``."""
        kind, v = self._core().answer_kind(round, self.seat_of(seat))
        return {"kind": v[0], "detail": v[1]} if kind == "violation" and v is not None else None

    def state(self, round: int) -> Dict[str, Any]:
        """The state at the end of ``round`` (the referee's view, what :meth:`figures` counts):
        numpy arrays ``owner`` (int8: seat, or -1 neutral), ``units`` and ``fortification``
        (float64, unrounded), each height × width."""
        return self._core().state(round)

    def dataset(self, seat: Seat, grid: Optional[Tuple[int, int]] = None) -> Dict[str, Any]:
        """Seat ``seat``'s rounds as arrays for behaviour cloning, one row per round it was in
        the game (T rounds), re-simulated in Rust:

        * the observation arrays of ``gbely.env`` with a leading rounds axis: ``terrain``,
          ``owner``, ``units``, ``fortification``, ``visible``, ``base`` (T × H × W), ``round``
          (T × 1), ``action_mask`` (T × H × W × 10);
        * the labels in the environment's action coding: ``kind`` (int8 T × H × W: 0 stay, 1–4
          MOVE N/S/W/E, 5–8 ATTACK N/S/W/E, 9 FORTIFY), ``fraction`` (float32: amount / observed
          units, 1 when the amount is at least the observed units), ``inexpressible`` (bool: a
          cell that was the source of several commands, or of one the coding cannot express —
          a target that is no neighbour, a source the seat did not own, an item that is no
          command; its label is kind 0), ``unlocated`` (int32 T: items with no source cell on
          the map);
        * per round: ``cells`` (int32 T: the seat's cells at the end of the round), ``reward``
          (float32 T: the change of its share of the map in % points, ``GbelyEnv``'s default
          reward) and ``discarded`` (int32 T: its commands the engine discarded).

        The arrays need numpy (``pip install 'gbely[env]'``), as :meth:`observation_arrays` and
        :meth:`state` do. ``grid=(H, W)`` (at least the map's size) pads every array: the map at the top-left, the
        padding like an unseen cell (terrain and owner -1, the rest 0, the mask "stay" only, label
        kind 0), so datasets of maps of several sizes stack.

        >>> import gbely, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "r.json")
        >>> _ = gbely.play(lambda s: [], rounds=5, replay=path)
        >>> d = gbely.Replay.load(path).dataset("council", grid=(64, 64))
        >>> d["kind"].shape, d["action_mask"].shape, d["round"][:, 0].tolist()
        ((5, 64, 64), (5, 64, 64, 10), [0, 1, 2, 3, 4])
        """
        return self._core().dataset(self.seat_of(seat), _grid(grid))

    def __repr__(self) -> str:
        names = " vs ".join(s["name"] for s in self.seats)
        return f"<gbely.Replay {names} on {self.map_name}, {self.rounds_played} rounds>"


def _grid(grid: Optional[Tuple[int, int]]) -> Optional[Tuple[int, int]]:
    if grid is None:
        return None
    try:
        h, w = grid
        return int(h), int(w)
    except (TypeError, ValueError):
        raise ValueError(f"grid={grid!r}: (height, width) expected") from None


class ReplayData(NamedTuple):
    """One seat of one replay as :func:`replay_dataset` yields it."""

    path: str
    """The replay file."""
    seat: int
    """The seat."""
    name: str
    """The seat's player, as the replay names it."""
    data: Dict[str, Any]
    """The arrays of :meth:`Replay.dataset`."""

    def to_pandas(self, cells: str = "own") -> Any:
        """The dataset as a ``pandas.DataFrame`` (needs pandas), one row per round and cell:
        ``round``, ``row``, ``col``, the observation arrays (``terrain``, ``owner``, ``units``,
        ``fortification``, ``visible``, ``base``), the labels (``kind``, ``fraction``,
        ``inexpressible``) and the mask as ``legal_0`` … ``legal_9`` (bool). ``cells="own"`` keeps
        the seat's own cells (the ones a command can come from), ``"visible"`` own and visible
        ones, ``"all"`` every cell of the grid."""
        from ._tables import pandas

        pd = pandas()
        d = self.data
        if cells == "own":
            keep = d["owner"] == 1
        elif cells == "visible":
            keep = d["visible"] == 1
        elif cells == "all":
            keep = d["owner"] == d["owner"]
        else:
            raise ValueError(f"cells={cells!r}: 'own', 'visible' or 'all'")
        t, r, c = keep.nonzero()
        cols: Dict[str, Any] = {"round": d["round"][t, 0], "row": r, "col": c}
        for k in ("terrain", "owner", "units", "fortification", "visible", "base", "kind", "fraction", "inexpressible"):
            cols[k] = d[k][keep]
        mask = d["action_mask"][keep] != 0
        for kind in range(mask.shape[1]):
            cols[f"legal_{kind}"] = mask[:, kind]
        return pd.DataFrame(cols)


def _replay_files(source: Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]) -> Iterator[str]:
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isdir(path):
            yield path
            return
        # A folder (a league's replays/): its replay files, in order, the viewer pages left aside.
        found = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            found += [os.path.join(root, f) for f in files if f.endswith((".json", ".json.gz"))]
        yield from sorted(found)
        return
    for p in source:
        yield os.fspath(p)


def replay_dataset(
    source: Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]],
    seat: Optional[Seat] = None,
    grid: Optional[Tuple[int, int]] = None,
    skip_broken: bool = False,
    progress: "ProgressArg" = None,
) -> Iterator[ReplayData]:
    """Replays as one stream of datasets: for each replay of ``source`` (a folder, such as a
    league's ``replays/``, whose ``.json`` and ``.json.gz`` files are read in name order, or any
    iterable of paths), and each seat asked for, a :class:`ReplayData` with the arrays of
    :meth:`Replay.dataset`. One replay at a time is read and re-simulated (in Rust), so a folder of
    any size streams in little memory.

    ``seat``: ``None`` for every seat, a seat number, or a player's name (every seat it played; a
    replay where it did not play gives nothing). ``grid``: pad every dataset to ``(H, W)``.

    A file that cannot be read as a replay raises :class:`gbely.ReplayError` (``OSError`` when it
    cannot be read at all) naming it; with ``skip_broken=True`` it is left out with a warning.

    ``progress``: a bar of the replays read (of a folder or a sized list of paths): ``None``
    shows it when stderr is a terminal or in a notebook (silent otherwise), ``True`` / ``False``
    always / never, or a function ``progress(done, total)`` called after each replay.

    >>> import gbely, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> for k in range(2):
    ...     _ = gbely.play(lambda s: [], rounds=3, replay=os.path.join(folder, f"m{k}.json.gz"))
    >>> [(os.path.basename(d.path), d.seat, d.data["kind"].shape[0])
    ...  for d in gbely.replay_dataset(folder, seat="council")]
    [('m0.json.gz', 1, 3), ('m1.json.gz', 1, 3)]
    """
    from ._gbely import ReplayCore
    from ._progress import Bar

    g = _grid(grid)
    bar = Bar(progress, "replays", "replays")
    files: Iterable[str] = _replay_files(source)
    total: Optional[int] = None
    if bar.active and (isinstance(source, (str, os.PathLike)) or hasattr(source, "__len__")):
        files = list(files)
        total = len(files)
    try:
        for done, path in enumerate(files, 1):
            try:
                core = ReplayCore.load(path)
            except (OSError, ReplayError) as e:
                if not skip_broken:
                    raise
                warnings.warn(f"replay_dataset: left out {path}: {e}", stacklevel=2)
                if total is not None:
                    bar.update(done, total)
                continue
            names = core.names
            if seat is None:
                seats = list(range(core.seats))
            elif isinstance(seat, str):
                seats = [k for k, n in enumerate(names) if n == seat]
            else:
                seats = [seat]
            for k in seats:
                yield ReplayData(path, k, names[k], core.dataset(k, g))
            if total is not None:
                bar.update(done, total)
    finally:
        bar.close()
