"""The protocol's types: what ``decide(stav)`` receives and what it returns (rules §5 and §6).

These are :class:`typing.TypedDict`\\ s: at run time ``stav`` is a plain ``dict``, exactly what an
agent file gets from the judge, and these classes only tell a type checker (mypy, pyright, an
editor) its keys. An agent file must not need gbely when it is judged, so import them for the
type checker only::

    from __future__ import annotations

    from typing import TYPE_CHECKING, List

    if TYPE_CHECKING:
        from gbely.types import Answer, Command, Stav


    def decide(stav: Stav) -> Answer:
        prikazy: List[Command] = []
        return {"prikazy": prikazy}
"""
from typing import Callable, List, Literal, Protocol, TypedDict, Union

__all__ = [
    "Terrain", "Stav", "OwnCell", "VisibleCell", "Move", "Attack", "Fortify", "Command", "Answer",
    "Decide", "HasDecide",
]

#: A cell's terrain: meadow, hill or river.
Terrain = Literal["luka", "vrch", "rieka"]


class OwnCell(TypedDict):
    """An entry of ``stav["moje_pola"]``: a cell you own."""

    id: str
    typ: Terrain
    #: Units on the cell (rounded to 0.1).
    jednotky: float
    #: Fortification (rounded to 0.1).
    opevnenie: float
    #: All four (or fewer, at the edge) neighbours: north, south, west, east.
    susedia: List[str]


class VisibleCell(TypedDict):
    """An entry of ``stav["viditelne_susedne_pola"]``: a foreign cell next to one of yours."""

    id: str
    #: The owner's label: ``hbp`` (neutral), ``zastupitelstvo`` (the Council), ``armada_2`` … in
    #: the final.
    vlastnik: str
    #: Raw units (rounded), not the defence: apply the terrain bonus yourself.
    posadka: float
    opevnenie: float
    typ: Terrain


class Stav(TypedDict):
    """The observation of one round (rules §5), the argument of ``decide(stav)``."""

    #: The round, 0 … 149.
    kolo: int
    #: Your home base (even after you lost it).
    moja_zakladna: str
    #: Every cell you own, row-major.
    moje_pola: List[OwnCell]
    #: Every foreign cell touching one of yours, row-major.
    viditelne_susedne_pola: List[VisibleCell]


class Move(TypedDict):
    """Move ``pocet`` units from your cell ``z`` to your neighbouring cell ``na``."""

    typ: Literal["MOVE"]
    z: str
    na: str
    pocet: float


class Attack(TypedDict):
    """Attack the foreign neighbouring cell ``na`` from your cell ``z`` with ``pocet`` units."""

    typ: Literal["ATTACK"]
    z: str
    na: str
    pocet: float


class Fortify(TypedDict):
    """Spend ``investicia`` units of your cell ``pole`` on its fortification."""

    typ: Literal["FORTIFY"]
    pole: str
    investicia: float


#: One command of an answer (rules §6).
Command = Union[Move, Attack, Fortify]


class Answer(TypedDict):
    """The answer of ``decide``: ``{"prikazy": [...]}`` (a bare list of commands means the same)."""

    prikazy: List[Command]


#: The signature of an agent's ``decide``.
Decide = Callable[[Stav], Union[Answer, List[Command]]]


class HasDecide(Protocol):
    """An object that plays through its ``decide`` method."""

    def decide(self, stav: Stav) -> Union[Answer, List[Command]]: ...
