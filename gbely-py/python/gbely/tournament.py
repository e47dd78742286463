"""Leagues and A/B tests from Python: :func:`league` and :func:`ab`, the engine's typed entry
points (the ``LeagueRequest`` and ``AbRequest`` that ``gbely league`` and ``gbely ab`` build from
their flags) called directly — no command line in between. They raise the typed exceptions of
:mod:`gbely` (:class:`gbely.AgentError` for an agent that cannot play, :class:`gbely.MapError` for
a map that cannot be used) and return typed results, :class:`Standings` and :class:`Verdict`,
which are also read-only mappings: ``res["standings"]`` is the ``--json`` document's.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from ._gbely import AB_DEFAULTS as _AB
from ._gbely import DEFAULT_MEMORY_LIMIT, DEFAULT_ROUNDS, DEFAULT_SANDBOX, DEFAULT_TIME_LIMIT
from ._gbely import LEAGUE_DEFAULTS as _LEAGUE
from ._gbely import ab as _ab
from ._gbely import league as _league
from ._progress import Bar, ProgressArg

__all__ = ["league", "ab", "Standings", "Standing", "Verdict"]

PathLike = Union[str, "os.PathLike[str]"]


class _Document(Mapping[str, Any]):
    """A result that is also the read-only mapping of its ``--json`` document."""

    def __init__(self, doc: Dict[str, Any]) -> None:
        self._doc = doc

    def __getitem__(self, key: str) -> Any:
        return self._doc[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._doc)

    def __len__(self) -> int:
        return len(self._doc)

    def to_dict(self) -> Dict[str, Any]:
        """The ``--json`` document (a fresh copy of its top level)."""
        return dict(self._doc)


@dataclass(frozen=True)
class Standing:
    """An entry's line in a league's standings."""

    rank: int
    id: str
    name: str
    played: int
    wins: int
    draws: int
    losses: int
    #: Mean share of the map over its matches, in percent (a disqualified match counts 0).
    mean_share: float
    #: Elo from the maximum-likelihood fit over all results; ``rating ± 1.96 · uncertainty`` is
    #: its 95 % interval.
    rating: float
    uncertainty: float
    violations: int
    disqualified: int

    @staticmethod
    def _of(d: Dict[str, Any]) -> "Standing":
        return Standing(**{k: d[k] for k in Standing.__dataclass_fields__})


class Standings(_Document):
    """What :func:`league` leaves: the standings (ranked by the Elo fit, then wins, then mean
    share — as ``gbely league``), the pair matrix, the rank confidence, per-map tables and every
    match. As a mapping it is the document of ``gbely league --json``."""

    @property
    def standings(self) -> List[Standing]:
        """The entries, first to last."""
        return [Standing._of(s) for s in self._doc["standings"]]

    @property
    def winner(self) -> str:
        """The first entry's name."""
        return str(self._doc["standings"][0]["name"])

    @property
    def los(self) -> List[List[float]]:
        """``los[i][j]``: the probability that entry ``i`` (standings order) is stronger than ``j``."""
        return [list(row) for row in self._doc["los"]]

    @property
    def matrix(self) -> List[List[List[int]]]:
        """``matrix[i][j]``: wins, draws and losses of entry ``i`` (standings order) against ``j``."""
        return [[list(c) for c in row] for row in self._doc["matrix"]]

    @property
    def per_map(self) -> Dict[str, List[Standing]]:
        """Each map's standings alone, maps by name."""
        return {m["map"]: [Standing._of(s) for s in m["standings"]] for m in self._doc["per_map"]}

    @property
    def matches(self) -> List[Dict[str, Any]]:
        """Every stored match of the league's entries and maps."""
        return list(self._doc["matches"])

    @property
    def run(self) -> Dict[str, Any]:
        """What this run did: ``total``, ``played``, ``already_played``, ``seconds``, ``notes``, …"""
        return dict(self._doc["run"])

    @property
    def report(self) -> str:
        """The HTML report's path."""
        return str(self._doc["report"])

    def _repr_html_(self) -> str:
        """In a notebook: the standings as a table."""
        from ._tables import table

        cols = list(Standing.__dataclass_fields__)
        rows = [[s[c] for c in cols] for s in self._doc["standings"]]
        run = self._doc.get("run", {})
        caption = f"{len(rows)} entries, {run.get('total', '?')} matches" if isinstance(run, dict) else ""
        return table(cols, rows, caption)

    def to_pandas(self) -> Any:
        """The standings as a ``pandas.DataFrame`` (needs pandas), one row per entry in rank order,
        the columns of :class:`Standing` (``rank``, ``id``, ``name``, ``played``, ``wins``,
        ``draws``, ``losses``, ``mean_share``, ``rating``, ``uncertainty``, ``violations``,
        ``disqualified``)."""
        from ._tables import pandas

        cols = list(Standing.__dataclass_fields__)
        return pandas().DataFrame([[s[c] for c in cols] for s in self._doc["standings"]], columns=cols)

    def __repr__(self) -> str:
        names = ", ".join(f"{s['rank']}. {s['name']} ({s['rating']:+.0f})" for s in self._doc["standings"])
        return f"Standings({names})"


class Verdict(_Document):
    """What :func:`ab` leaves: the verdict of the sequential test and its estimate. As a mapping
    it is the document of ``gbely ab --json``."""

    @property
    def verdict(self) -> str:
        """``better``, ``no_better`` or ``undecided``."""
        return str(self._doc["verdict"])

    @property
    def better(self) -> bool:
        """Whether B is better than A (H1 accepted)."""
        return bool(self._doc["verdict"] == "better")

    @property
    def text(self) -> str:
        """The verdict in words."""
        return str(self._doc["verdict_text"])

    @property
    def pairs(self) -> int:
        """Pairs the test read."""
        return int(self._doc["pairs"])

    @property
    def llr(self) -> float:
        """The log-likelihood ratio of H1 against H0."""
        return float(self._doc["llr"])

    @property
    def los(self) -> float:
        """The probability that B is better."""
        return float(self._doc["estimate"]["los"])

    @property
    def estimate(self) -> Dict[str, Any]:
        """The estimate corrected for the early stop, with its 95 % interval."""
        return dict(self._doc["estimate"])

    @property
    def outcomes(self) -> List[float]:
        """Every pair's outcome, in order."""
        return list(self._doc["outcomes"])

    def _repr_html_(self) -> str:
        """In a notebook: the verdict and its figures as a table."""
        from ._tables import table

        e = self.estimate
        rows = [("verdict", self.verdict), ("pairs", self.pairs), ("LLR", self.llr),
                ("bounds", " … ".join(f"{b:.2f}" for b in self._doc.get("bounds", []))), ("LOS", self.los)]
        rows += [(k, v) for k, v in e.items() if k != "los" and isinstance(v, (int, float, str))]
        return table(("", ""), rows, self.text)

    def to_pandas(self) -> Any:
        """Every pair's outcome as a ``pandas.DataFrame`` (needs pandas): ``pair`` (from 0),
        ``map`` and ``outcome`` (head to head: B's mean game score in the pair, 0…1; against an
        opponent: B's share minus A's)."""
        from ._tables import pandas

        outcomes = self.outcomes
        maps = {p["k"]: p["map"] for p in self._doc.get("pair_maps") or []}
        return pandas().DataFrame({"pair": range(len(outcomes)), "map": [maps.get(k) for k in range(len(outcomes))],
                                   "outcome": outcomes})

    def __repr__(self) -> str:
        return f"Verdict({self.text!r}, pairs={self.pairs})"


def _python(python: Optional[str]) -> str:
    return python or os.environ.get("GBELY_PYTHON") or sys.executable


def league(
    agents: Sequence[PathLike],
    maps: Union[str, int] = _LEAGUE["maps"],
    council: bool = False,
    games: int = _LEAGUE["games"],
    rounds: int = DEFAULT_ROUNDS,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    jobs: Optional[int] = None,
    db: PathLike = _LEAGUE["db"],
    seed: str = _LEAGUE["seed"],
    python: Optional[str] = None,
    backend: str = "local",
    address: Optional[str] = None,
    replays: bool = False,
    thinking: Optional[int] = None,
    gauntlet: bool = False,
    memory_limit: Optional[int] = DEFAULT_MEMORY_LIMIT,
    sandbox: str = DEFAULT_SANDBOX,
    progress: ProgressArg = None,
) -> Standings:
    """A league (``gbely league``): every agent against every other on every map, both seat
    orders, on all cores; resumable, as the results are kept in ``db`` (docs/league.md).

    Args:
        agents: agent files, ``template``, ``expander``, ``council`` (or its levels
            ``council:easy``, ``council:strong``), ``template-rs``, ``expander-rs`` or
            ``cmd:COMMAND``.
        maps: a comma-separated list of maps, or a number N of maps generated from ``seed``.
        council: add the Council as an entry.
        games: games per pairing and map (both seat orders each).
        jobs: matches at once (default: the cores, agent processes taking turns on them so that
            none thinks without a core; on Ray, the cluster's CPUs).
        backend: ``"local"`` (this machine) or ``"ray"``: each match a Ray task on the cluster
            at ``address`` (``auto`` by default, ``HOST:PORT``, ``ray://HOST:PORT``, or
            ``local`` for a Ray instance of its own); every worker needs gbely installed. The
            results are the same as the local backend's.
        replays: record every match's replay and viewer page next to ``db`` (about 1 MB a
            match), linked from the HTML report (local backend only).
        thinking: agent processes that may think at once (default: the cores). More keeps the
            cores busier with agents that answer in milliseconds, but agents then share a CPU
            while their clock runs (``run["notes"]`` says so). Local backend only.
        gauntlet: the first agent against each of the others only (``gbely league
            --gauntlet``); the result then has ``gauntlet``: the first agent's Elo against the
            field, each opponent and each map.
        progress: a bar of the matches played (tqdm's when installed): ``None`` shows it when
            stderr is a terminal or in a notebook (silent otherwise), ``True`` / ``False``
            always / never, or a function ``progress(done, total)`` called after each match.

    Returns :class:`Standings`; as a mapping, the document of ``gbely league --json``:
    ``standings`` (rank, name, wins, draws, losses, mean share, ``rating`` in Elo from a fit over
    all results and its standard deviation ``uncertainty``), ``matrix``, ``los`` (the probability
    that each entry is stronger than each other), ``per_map`` standings, ``matches``,
    ``entries``, ``run``.

    Raises :class:`gbely.AgentError` for an agent that cannot play (a missing file, say),
    :class:`gbely.MapError` for a map that cannot be used, ``KeyboardInterrupt`` when stopped
    (the matches played are kept: the same call goes on).

    Example:
        >>> import tempfile, os
        >>> db = os.path.join(tempfile.mkdtemp(), "l.sqlite")
        >>> res = league(["template", "council"], maps="seed:doc", rounds=5, db=db)
        >>> res["run"]["total"], res.winner in ("template", "council")
        (2, True)
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    if backend == "local" and address is not None:
        raise ValueError("address is for backend='ray'")
    bar = Bar(progress, "league", "matches")
    try:
        doc = _league(
            [os.fspath(a) for a in agents],
            maps=str(maps),
            council=council,
            games=games,
            rounds=rounds,
            time_limit=time_limit,
            jobs=jobs,
            db=os.fspath(db),
            seed=seed,
            python=_python(python),
            ray=(address or "auto") if backend == "ray" else None,
            replays=replays,
            thinking=thinking,
            gauntlet=gauntlet,
            memory_limit=memory_limit,
            sandbox=sandbox,
            progress=bar.update if bar.active else None,
        )
    finally:
        bar.close()
    return Standings(doc)


def ab(
    a: PathLike,
    b: PathLike,
    against: Optional[str] = None,
    elo0: float = _AB["elo0"],
    elo1: float = _AB["elo1"],
    elo_model: str = "logistic",
    share0: float = _AB["share0"],
    share1: float = _AB["share1"],
    alpha: float = _AB["alpha"],
    beta: float = _AB["beta"],
    max_pairs: int = _AB["max_pairs"],
    rounds: int = DEFAULT_ROUNDS,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    jobs: Optional[int] = None,
    db: PathLike = _AB["db"],
    seed: str = _AB["seed"],
    python: Optional[str] = None,
    maps: Optional[Sequence[str]] = None,
    memory_limit: Optional[int] = DEFAULT_MEMORY_LIMIT,
    sandbox: str = DEFAULT_SANDBOX,
    progress: ProgressArg = None,
    from_replays: Optional[PathLike] = None,
    at: Optional[Sequence[int]] = None,
    seat: Optional[int] = None,
) -> Union[Verdict, Dict[str, Verdict]]:
    """Is B better than A? (``gbely ab``, docs/ab.md): pairs of matches with the seats swapped
    (or each against ``against``) and a sequential test that stops when the evidence is enough.

    ``elo_model`` is ``"logistic"`` or ``"normalized"`` (how ``elo0`` and ``elo1`` are measured);
    ``maps`` the maps to cycle through (default: a fresh map per pair). Returns a
    :class:`Verdict`; as a mapping, the document of ``gbely ab --json``: ``verdict``
    (``better``, ``no_better``, ``undecided``), ``interrupted``, ``pairs``, ``hypotheses``,
    ``alpha``, ``beta``, ``llr`` and ``bounds``, ``estimate`` (corrected for the early stop,
    with its 95 % interval and ``los``), ``expected_pairs``, ``pentanomial`` counts and every
    pair's outcome and map. ``against="both"`` runs two tests (head to head, then each against
    the Council) and returns ``{"head_to_head": Verdict, "against_council": Verdict}``.

    ``from_replays`` (a folder) with ``at`` (rounds): paired forks, as ``gbely ab --from-replays
    DIR --at 30,60``: pair ``k`` is A, then B, taking over at the ``k``-th fork point (every
    replay of the folder by file name, then the rounds), in ``seat`` (default: the first army
    seat), the other seats kept by the replay's own agents; the outcome is B's share minus A's.

    ``progress``: a bar of the pairs read out of ``max_pairs`` with the LLR and its bounds, as
    :func:`league`'s (a function is called as ``progress(pairs, max_pairs)``).

    Raises as :func:`league` does; the pairs played are kept in ``db``'s journal.
    """
    bar = Bar(progress, "ab", "pairs")

    def tick(pairs: int, most: int, llr: float, lower: float, upper: float) -> None:
        bar.update(pairs, most, f"LLR {llr:+.2f} in [{lower:.2f}, {upper:.2f}]")

    try:
        doc = _ab(
            os.fspath(a),
            os.fspath(b),
            against=against,
            maps=list(maps or []),
            elo0=float(elo0),
            elo1=float(elo1),
            elo_model=elo_model,
            share0=float(share0),
            share1=float(share1),
            alpha=float(alpha),
            beta=float(beta),
            max_pairs=max_pairs,
            rounds=rounds,
            time_limit=time_limit,
            jobs=jobs,
            db=os.fspath(db),
            seed=seed,
            python=_python(python),
            memory_limit=memory_limit,
            sandbox=sandbox,
            fill=None,
            size=90,
            from_replays=None if from_replays is None else os.fspath(from_replays),
            at=[int(r) for r in at or []],
            seat=seat,
            progress=tick if bar.active else None,
        )
    finally:
        bar.close()
    if against == "both":
        return {k: Verdict(v) for k, v in doc.items()}
    return Verdict(doc)
