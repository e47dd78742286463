"""Playing matches from Python: :func:`gbely.play` (a duel) and :func:`gbely.final` (the
final's rehearsal), their :class:`Result`, and how agents given as callables or files are
checked. Re-exported by :mod:`gbely`."""
from __future__ import annotations

import inspect
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from ._errors import AgentError, MapError
from ._gbely import DEFAULT_MEMORY_LIMIT, DEFAULT_ROUNDS, DEFAULT_SANDBOX, DEFAULT_TIME_LIMIT, Map
from ._gbely import final_seating as _final_seating
from ._gbely import play_match as _play_match
from .types import Decide, HasDecide

__all__ = ["Agent", "Result", "SideResult", "play", "final"]

#: Who plays a seat: an agent file (or ``council``, ``template``, ``expander``, ``cmd:COMMAND``),
#: a function ``decide(stav)``, or an object with a ``decide`` method.
Agent = Union[str, "os.PathLike[str]", Decide, HasDecide]


@dataclass(frozen=True)
class SideResult:
    """One seat's standing at the end of a match (SPEC §10)."""

    seat: int
    name: str
    cells: int
    #: Share of the map in %, ``None`` when disqualified.
    share: Optional[float]
    #: First round at whose end the side owned at least its final number of cells.
    tiebreak_round: Optional[int]
    disqualified: bool
    #: ``[{"round": 3, "kind": "timeout", "detail": "..."}]``
    violations: List[Dict[str, Any]] = field(default_factory=list)
    #: Discarded commands by reason code: ``{"no_ready_units": 30, "not_adjacent": 7}``.
    discarded: Dict[str, int] = field(default_factory=dict)
    #: The agent process's log file, for file agents.
    log: Optional[str] = None


@dataclass(frozen=True)
class Result:
    """What :func:`play` returns."""

    map: str
    fingerprint: str
    last_round: int
    #: ``rounds``, ``elimination``, ``disqualification`` or ``council_fell``.
    ended_by: str
    #: Round in which the Council's seat lost its last cell, if it did.
    council_fell: Optional[int]
    sides: List[SideResult]
    replay: Optional[str]
    #: How agent processes were isolated, one line (``"sandboxed (bubblewrap …)"`` or
    #: ``"not sandboxed: why"``); ``None`` when no agent process played.
    isolation: Optional[str] = None

    @property
    def shares(self) -> List[Optional[float]]:
        """Share of the map per seat, in %."""
        return [s.share for s in self.sides]

    @property
    def cells(self) -> List[int]:
        """Cells owned at the end, per seat."""
        return [s.cells for s in self.sides]

    @property
    def tiebreak_rounds(self) -> List[Optional[int]]:
        """Tie-break round per seat: the first round whose end saw the side's final cell count."""
        return [s.tiebreak_round for s in self.sides]

    @property
    def violations(self) -> List[int]:
        """Number of violations per seat."""
        return [len(s.violations) for s in self.sides]

    @property
    def discarded(self) -> List[Dict[str, int]]:
        """Discarded commands per seat, by reason code."""
        return [s.discarded for s in self.sides]

    _COLUMNS = ("seat", "name", "share", "cells", "tiebreak_round", "disqualified", "violations", "discarded")

    def _rows(self) -> List[tuple]:
        return [(s.seat, s.name, s.share, s.cells, s.tiebreak_round, s.disqualified, len(s.violations),
                 sum(s.discarded.values())) for s in self.sides]

    def _repr_html_(self) -> str:
        """In a notebook: the sides as a table (share in %, cells, tie-break round, violations,
        discarded commands)."""
        from ._tables import table

        return table(self._COLUMNS, self._rows(), f"{self.map}: {self.ended_by} after round {self.last_round}")

    def to_pandas(self) -> Any:
        """The sides as a ``pandas.DataFrame`` (needs pandas), one row per seat: ``seat``,
        ``name``, ``share`` (%, ``None`` when disqualified), ``cells``, ``tiebreak_round``,
        ``disqualified``, ``violations`` and ``discarded`` (counts)."""
        from ._tables import pandas

        return pandas().DataFrame(self._rows(), columns=list(self._COLUMNS))

    def __str__(self) -> str:
        lines = [f"{self.map}: {self.ended_by} after round {self.last_round}"]
        for s in self.sides:
            share = "disqualified" if s.share is None else f"{s.share:.2f} %"
            lines.append(f"  {s.name:<20} {share:>12} {s.cells:>6} cells, tie-break {s.tiebreak_round}, "
                         f"{len(s.violations)} violations, {sum(s.discarded.values())} discarded")
        return "\n".join(lines)

    @staticmethod
    def _from_json(text: str) -> "Result":
        d = json.loads(text)
        sides = [
            SideResult(
                seat=s["seat"], name=s["name"], cells=s["cells"], share=s["score"],
                tiebreak_round=s["tiebreak_round"], disqualified=s["disqualified"],
                violations=s["details"]["violations"], discarded=s["details"]["discarded"],
                log=s["details"]["log"],
            )
            for s in d["sides"]
        ]
        iso = d.get("isolation")
        isolation = None if iso is None else (iso["detail"] if iso["sandboxed"] else f"not sandboxed: {iso['detail']}")
        return Result(d["map"], d["fingerprint"], d["last_round"], d["ended_by"], d["council_fell"], sides, d["replay"],
                      isolation)


def _agent(a: Agent, isolate: bool = False) -> Any:
    """A spec string or a callable, as the native ``play_match`` takes them."""
    if isinstance(a, (str, os.PathLike)):
        return os.fspath(a)
    if isinstance(a, type):
        hint = f"{a.__name__}()" if callable(getattr(a, "decide", None)) else f"an instance of {a.__name__}"
        raise AgentError(f"the class {a.__name__} was given as an agent: pass {hint}, an object whose "
                         f"decide method plays")
    decide = getattr(a, "decide", None)
    if callable(decide):
        return _isolated(decide) if isolate else decide
    if callable(a):
        return _isolated(a) if isolate else a
    raise TypeError(f"an agent is a file path, 'council', 'template', 'expander', a callable decide(stav) "
                    f"or an object with a decide method, not {type(a).__name__}")


def _isolated(decide: Any) -> str:
    """The file that defines ``decide`` as its top-level function, to run as an agent process."""
    what = getattr(decide, "__qualname__", None) or type(decide).__name__
    why = None
    path = None
    if not inspect.isfunction(decide) or decide.__name__ != "decide" or decide.__qualname__ != "decide":
        why = f"{what} is not a top-level function named decide"
    else:
        module = sys.modules.get(decide.__module__)
        try:
            path = inspect.getfile(decide)
        except TypeError:
            path = None
        if path is None or not path.endswith(".py") or not os.path.isfile(path):
            why = f"decide of {decide.__module__} is not defined in a .py file"
        elif getattr(module, "decide", None) is not decide:
            why = f"the decide of {path} is not this function"
    if why is not None:
        raise AgentError(f"isolate=True runs the file that defines a top-level function decide(stav) as an "
                         f"agent process, as the judge does, but {why}; put it in a file (or give the file's "
                         f"path)")
    assert path is not None
    return path


def _map(map: Union[str, Map, None], size: Union[int, Sequence[int], None]) -> Union[str, Map, None]:
    if size is None or isinstance(map, Map):
        return map
    if isinstance(size, int):
        size_text = str(size)
    else:
        w, h = size
        size_text = f"{w}x{h}"
    return Map.named(map or "gbely", size_text)


def _check_agent_file(a: Any) -> None:
    """A file agent that cannot work raises here, before a match is started."""
    if not isinstance(a, str) or not a.endswith(".py"):
        return
    import ast

    try:
        with open(a, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=a)
    except FileNotFoundError:
        raise AgentError(f"agent file {a!r} not found") from None
    except SyntaxError as e:
        raise AgentError(f"agent file {a!r} does not parse: {e}") from None
    if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "decide" for n in tree.body) and \
            not any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "decide" for t in n.targets) for n in tree.body):
        raise AgentError(f"agent file {a!r} defines no top-level function decide(stav)")


def _played(agents: List[Any], map: Union[str, Map, None], rounds: int,
            replay: Union[str, "os.PathLike[str]", None], time_limit: Optional[float], python: Optional[str],
            run_dir: Union[str, "os.PathLike[str]", None], sandbox: str, memory_limit: Optional[int]) -> Result:
    """Plays a match of these agents, one a seat (the native ``play_match``), and reads its result."""
    return Result._from_json(_play_match(
        agents,
        map=map,
        rounds=rounds,
        replay=os.fspath(replay) if replay is not None else None,
        time_limit=time_limit,
        python=python or os.environ.get("GBELY_PYTHON") or sys.executable,
        run_dir=os.fspath(run_dir) if run_dir is not None else None,
        sandbox=sandbox,
        memory_limit=memory_limit,
    ))


def play(
    agent: Agent,
    opponent: Agent = "council",
    map: Union[str, Map, None] = "gbely",
    rounds: int = DEFAULT_ROUNDS,
    replay: Union[str, "os.PathLike[str]", None] = None,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    python: Optional[str] = None,
    size: Union[int, Sequence[int], None] = None,
    run_dir: Union[str, "os.PathLike[str]", None] = None,
    isolate: bool = False,
    sandbox: str = DEFAULT_SANDBOX,
    memory_limit: Optional[int] = DEFAULT_MEMORY_LIMIT,
) -> Result:
    """Plays one match: ``agent`` in seat 0 against ``opponent`` in seat 1.

    Args:
        agent: an agent file path (own process), ``council``/``template``/``expander``, the
            Council's other levels ``council:easy``/``council:strong``,
            ``cmd:COMMAND``, or a callable ``decide(stav)`` / object with ``decide`` (in-process,
            see below).
        opponent: as ``agent``; default the Council.
        map: ``gbely`` (the reference map), ``seed:TEXT``, a map file path, or a :class:`Map`.
        rounds: rounds to play (150), 1 to 100 000.
        replay: where to write the replay JSON, or ``None`` for none.
        time_limit: seconds per round, ``None`` for no limit.
        python: interpreter for agent files (default: this one).
        size: size of a generated map: ``N`` or ``(W, H)``.
        run_dir: folder for agent logs (default ``gbely-runs/<time>-<agent>``).
        isolate: play callables as the judge plays files: the file that defines a top-level
            ``decide`` runs in its own process (:class:`AgentError` for a lambda, a method or a
            function that is not its file's ``decide``).
        sandbox: agent processes in the sandbox (Linux, bubblewrap: no network, no files but
            their own, one core each): ``"auto"`` where the machine allows it, ``"require"``
            (:class:`AgentError` without it), ``"off"`` (plain processes, e.g. to import modules
            beside the agent file). :attr:`Result.isolation` says which it was.
        memory_limit: MiB each agent process may use (64 to 1 048 576, as ``--memory-limit``),
            ``None`` for no limit.

    Callables and files are not judged the same way. A file agent runs in its own process, as in
    the competition: a round's answer must arrive within ``time_limit`` or the agent is stopped
    (a hung agent costs one round), and after a violation it is restarted, so its module state
    starts afresh. A callable runs in this process, much faster, but it is timed only after it
    returns: one that hangs hangs the match, one that is slow gets its timeout violation late
    (and a :class:`TimeLimitWarning` the first time), and it keeps its module state after a
    violation. An exception in a callable is a violation, as it is in a file. Tune with
    callables; check with ``isolate=True`` or the file before you submit.

    Raises:
        AgentError: an agent that cannot play (a missing file, no ``decide``, a class instead of
            an instance).
        MapError: a map that cannot be used.
        ValueError: an argument out of range (``rounds``, ``time_limit``, ``memory_limit``).
        KeyboardInterrupt: Ctrl-C; the replay of the rounds played is kept.

    Example:
        >>> r = play(lambda stav: [], rounds=3)
        >>> r.ended_by, r.last_round
        ('rounds', 2)
    """
    agents = [_agent(agent, isolate), _agent(opponent, isolate)]
    for a in agents:
        _check_agent_file(a)
    return _played(agents, _map(map, size), rounds, replay, time_limit, python, run_dir, sandbox, memory_limit)


def final(
    agents: Sequence[Agent],
    fill: Agent = "template",
    map: Union[str, Map, None] = None,
    size: int = 90,
    seats: Optional[Sequence[int]] = None,
    rounds: int = DEFAULT_ROUNDS,
    replay: Union[str, "os.PathLike[str]", None] = None,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    python: Optional[str] = None,
    run_dir: Union[str, "os.PathLike[str]", None] = None,
    isolate: bool = False,
    sandbox: str = DEFAULT_SANDBOX,
    memory_limit: Optional[int] = DEFAULT_MEMORY_LIMIT,
) -> Result:
    """Rehearses the final (SPEC §9): up to eight agents on a final map, the Council in the centre.

    Args:
        agents: up to eight agents (files, ``template``, ``expander``, callables, …).
        fill: who takes the empty seats: an agent, or ``"self"`` for copies of the first.
        map: ``seed:TEXT`` (a generated final map), a final map file, or a :class:`Map`;
            default the final map of seed ``gbely-final``.
        size: side of a generated final map.
        seats: the seat (0–7) of the first agents; the rest are seated by the map's seed.
        rounds, replay, time_limit, python, run_dir, isolate, sandbox, memory_limit: as for
            :func:`play`.

    The result has nine sides: the finalists in seat order and the Council last.

    Example:
        >>> r = final([lambda s: []], fill=lambda s: [], size=40, rounds=3)
        >>> len(r.sides), r.sides[8].name
        (9, 'council')
    """
    if not 1 <= len(agents) <= 8:
        raise ValueError(f"a final takes 1 to 8 agents, not {len(agents)}")
    if map is None or isinstance(map, str):
        spec = map or "seed:gbely-final"
        seed = spec.split(":", 1)[1] if spec.startswith(("seed:", "final:")) else None
        the_map = Map.generate_final(seed, size) if seed is not None else Map.named(spec)
    else:
        the_map = map
    if len(the_map.seats) < 3 or the_map.seats[-1][0] != "council":
        raise MapError(f"{the_map.name} is not a final map: give seed:TEXT, a final map file or "
                       f"Map.generate_final(...)")
    entries = [_agent(a, isolate) for a in agents]
    filler = entries[0] if fill == "self" else _agent(fill, isolate)
    while len(entries) < len(the_map.seats) - 1:
        entries.append(filler)
    for a in entries:
        _check_agent_file(a)
    order = _final_seating(the_map, list(seats or []))
    seat_agents = [entries[i] for i in order] + ["council"]
    return _played(seat_agents, the_map, rounds, replay, time_limit, python, run_dir, sandbox, memory_limit)
