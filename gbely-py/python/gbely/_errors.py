"""The exceptions and warnings of gbely.

Problems with what comes from outside — a map file, an agent, a replay — raise a subclass of
:class:`Error`. Each is also a :class:`ValueError`, so code written before these classes existed
still catches them. Misused arguments raise the usual Python exceptions (``TypeError``,
``ValueError``), and files that cannot be read or written raise ``OSError``.
"""


class Error(Exception):
    """The base of every error gbely raises about a map, an agent or a replay."""


class MapError(Error, ValueError):
    """A map that cannot be used: a map file that does not parse, a spec that names no map, a size
    out of range, or a map of the wrong kind (not a final map for :func:`gbely.final`)."""


class AgentError(Error, ValueError):
    """An agent that cannot play: a missing agent file, one that does not parse or defines no
    ``decide``, a class given instead of an instance, or a callable that ``isolate=True`` cannot
    run as a file."""


class ReplayError(Error, ValueError):
    """A replay that cannot be read (not JSON, not a gbely replay, an unsupported version, a broken
    structure) or that does not match its re-simulation."""


class TimeLimitWarning(RuntimeWarning):
    """An in-process callable answered after the round's time limit (issued once per match)."""
