"""What :meth:`gbely.Match.advance` returns: the events of one resolved round."""
import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, Tuple


@dataclass(frozen=True)
class Capture:
    """``seat`` took ``cell`` from ``previous_owner`` (a seat, or -1 for a neutral cell).

    For a failed attack, ``seat`` attacked ``cell`` (owned by ``previous_owner``) and lost the
    units it sent.
    """

    seat: int
    cell: str
    previous_owner: int


@dataclass(frozen=True)
class Discard:
    """A command of ``seat`` that was discarded: its position ``index`` in the answer and the
    reason code (``not_adjacent``, ``no_ready_units``, … as in :attr:`gbely.SideResult.discarded`)."""

    seat: int
    index: int
    reason: str


@dataclass(frozen=True)
class RoundReport:
    """The events of one round, as :meth:`gbely.Match.advance` returns them.

    >>> import gbely, json
    >>> m = gbely.Match(map="seed:report", rounds=3)
    >>> report = m.advance()
    >>> report.round, report.violations, report.over
    (0, (), False)
    >>> json.loads(json.dumps(report.to_dict()))["round"]
    0
    """

    #: The round that was resolved (0-based).
    round: int
    #: Cells that changed owner.
    captures: Tuple[Capture, ...]
    #: Attacks that failed: the attacker lost the units it sent.
    failed_attacks: Tuple[Capture, ...]
    #: Commands that were discarded (malformed or impossible).
    discarded: Tuple[Discard, ...]
    #: Seats with a violation this round (timeout, crash, unreadable answer).
    violations: Tuple[int, ...]
    #: Seats disqualified this round (their fourth violation).
    disqualified: Tuple[int, ...]
    #: Seats that lost their last cell this round.
    eliminated: Tuple[int, ...]
    #: Whether the match is over after this round.
    over: bool

    def to_dict(self) -> Dict[str, Any]:
        """The report as plain dicts and lists, ready for ``json.dumps``."""
        return dataclasses.asdict(self)
