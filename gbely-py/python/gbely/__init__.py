"""gbely — the Gbely oil battle, locally: the exact engine, the Council, maps and replays.

>>> import gbely
>>> def decide(stav):
...     return {"prikazy": []}
>>> result = gbely.play(decide, rounds=5)
>>> result.cells
[1, 20]

Agents are a path to an agent file (run in its own process, like the judge), or a callable
``decide(stav)`` / an object with a ``decide`` method (run in-process, fast; see :func:`play` for
how that differs from the judge). ``stav`` is exactly the dict of rules §5 (typed as
:class:`gbely.types.Stav`); the answer is ``{"prikazy": [...]}`` or a bare list.

The rules' constants are the top-level module ``pravidla``, installed with this package: an agent
file's ``import pravidla`` works in tests, type checkers and editors as it does in a match.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Union

import pravidla

from ._errors import AgentError, Error, MapError, ReplayError, TimeLimitWarning
from ._gbely import DEFAULT_ROUNDS, DEFAULT_TIME_LIMIT, Map, Match, __version__
from . import _registration
from ._play import Agent, Result, SideResult, final, play
from ._round import Capture, Discard, RoundReport
from .replay import Replay, ReplayData, replay_dataset
from .types import Answer, Command, Decide, HasDecide, Stav

# `from gbely import pravidla` and `import gbely.pravidla` name the one top-level module.
sys.modules.setdefault("gbely.pravidla", pravidla)
# `gymnasium.make("gbely/Duel-v0")`: the ids are registered once gymnasium is imported.
_registration.install()

__all__ = [
    "Map", "Match", "Replay", "ReplayData", "replay_dataset", "Result", "SideResult", "RoundReport", "Capture", "Discard",
    "play", "final", "league", "ab", "pravidla", "__version__",
    "Error", "MapError", "AgentError", "ReplayError", "TimeLimitWarning",
    "Stav", "Answer", "Command", "Decide", "HasDecide", "Agent",
]


def _run_json(args: List[str]) -> Dict[str, Any]:
    """Runs a `gbely` command with ``--json`` in-process and returns its document."""
    from ._gbely import cli_json

    code, text = cli_json(["gbely", *args, "--json"])
    doc: Dict[str, Any] = json.loads(text)
    if code == 130:
        raise KeyboardInterrupt("stopped; run the same call again to go on (results are kept)")
    return doc


def _run_options(rounds: int, time_limit: Optional[float], python: Optional[str]) -> List[str]:
    return [
        "--rounds", str(rounds),
        "--time-limit", "off" if time_limit is None else repr(float(time_limit)),
        "--python", python or os.environ.get("GBELY_PYTHON") or sys.executable,
    ]


def league(
    agents: Sequence[Union[str, "os.PathLike[str]"]],
    maps: Union[str, int] = "gbely",
    council: bool = False,
    games: int = 1,
    rounds: int = DEFAULT_ROUNDS,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    jobs: Optional[int] = None,
    db: Union[str, "os.PathLike[str]"] = "gbely-league/league.sqlite",
    seed: str = "league",
    python: Optional[str] = None,
    backend: str = "local",
    address: Optional[str] = None,
    replays: bool = False,
    thinking: Optional[int] = None,
    gauntlet: bool = False,
) -> Dict[str, Any]:
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
            --gauntlet``); the document then has ``gauntlet``: the first agent's Elo against the
            field, each opponent and each map.

    Returns the document of ``gbely league --json``: ``standings`` (rank, name, wins, draws,
    losses, mean share, ``rating`` in Elo from a fit over all results and its standard deviation
    ``uncertainty``), ``matrix``, ``los`` (the probability that each entry is stronger than each
    other), ``per_map`` standings, ``matches``, ``entries``, ``run``.

    Example:
        >>> import tempfile, os
        >>> db = os.path.join(tempfile.mkdtemp(), "l.sqlite")
        >>> doc = league(["template", "council"], maps="seed:doc", rounds=5, db=db)
        >>> doc["run"]["total"], [s["name"] for s in doc["standings"]][:1] in (["template"], ["council"])
        (2, True)
    """
    args = ["league", *[os.fspath(a) for a in agents], "--maps", str(maps), "--games", str(games),
            "--db", os.fspath(db), "--seed", seed, *_run_options(rounds, time_limit, python)]
    if council:
        args.append("--council")
    if gauntlet:
        args.append("--gauntlet")
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    if replays:
        args.append("--replays")
    if thinking is not None:
        args += ["--thinking", str(thinking)]
    if backend == "ray":
        args += ["--ray", address or "auto"]
    elif backend != "local":
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    elif address is not None:
        raise ValueError("address is for backend='ray'")
    return _run_json(args)


def ab(
    a: Union[str, "os.PathLike[str]"],
    b: Union[str, "os.PathLike[str]"],
    against: Optional[str] = None,
    elo0: float = 0.0,
    elo1: float = 40.0,
    elo_model: str = "logistic",
    share0: float = 0.0,
    share1: float = 1.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_pairs: int = 2000,
    rounds: int = DEFAULT_ROUNDS,
    time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
    jobs: Optional[int] = None,
    db: Union[str, "os.PathLike[str]"] = "gbely-ab/ab.sqlite",
    seed: str = "ab",
    python: Optional[str] = None,
) -> Dict[str, Any]:
    """Is B better than A? (``gbely ab``, docs/ab.md): pairs of matches with the seats swapped
    (or each against ``against``) and a sequential test that stops when the evidence is enough.

    ``elo_model`` is ``"logistic"`` or ``"normalized"`` (how ``elo0`` and ``elo1`` are measured).
    Returns the document of ``gbely ab --json``: ``verdict`` (``better``, ``no_better``,
    ``undecided``), ``interrupted``, ``pairs``, ``hypotheses``, ``alpha``, ``beta``, ``llr`` and
    ``bounds``, ``estimate`` (corrected for the early stop, with its 95 % interval and ``los``),
    ``expected_pairs``, ``pentanomial`` counts and every pair's outcome and map.
    """
    args = ["ab", os.fspath(a), os.fspath(b), "--elo0", repr(float(elo0)), "--elo1", repr(float(elo1)),
            "--elo-model", elo_model,
            "--share0", repr(float(share0)), "--share1", repr(float(share1)), "--alpha", repr(float(alpha)),
            "--beta", repr(float(beta)), "--max-pairs", str(max_pairs), "--db", os.fspath(db), "--seed", seed,
            *_run_options(rounds, time_limit, python)]
    if against is not None:
        args += ["--against", against]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    return _run_json(args)
