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

import sys

import pravidla

from ._errors import AgentError, Error, MapError, ReplayError, TimeLimitWarning
from ._gbely import DEFAULT_MEMORY_LIMIT, DEFAULT_ROUNDS, DEFAULT_TIME_LIMIT, Map, Match, __version__
from . import _registration
from ._play import Agent, Result, SideResult, final, play
from ._round import Capture, Discard, RoundReport
from .replay import Replay, ReplayData, replay_dataset
from .tournament import Standings, Verdict, ab, league
from .types import Answer, Command, Decide, HasDecide, Stav

# `from gbely import pravidla` and `import gbely.pravidla` name the one top-level module.
sys.modules.setdefault("gbely.pravidla", pravidla)
# `gymnasium.make("gbely/Duel-v0")`: the ids are registered once gymnasium is imported.
_registration.install()

__all__ = [
    "Map", "Match", "Replay", "ReplayData", "replay_dataset", "Result", "SideResult", "RoundReport", "Capture", "Discard",
    "play", "final", "league", "ab", "Standings", "Verdict",
    "pravidla", "__version__",
    "Error", "MapError", "AgentError", "ReplayError", "TimeLimitWarning",
    "Stav", "Answer", "Command", "Decide", "HasDecide", "Agent",
]

