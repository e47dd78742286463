"""Processes as the browser tests see them (Linux /proc): shared by the stand's and the arena's
tests (gbely-arena/tests/browser)."""

from __future__ import annotations

import glob
import pathlib


def zombie_children(pid: int) -> list[str]:
    """The children of `pid` that ended and were never reaped (state Z), as `PID (name)`."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = pathlib.Path(stat).read_text()
        except OSError:
            continue
        name_end = text.rfind(")")
        fields = text[name_end + 2:].split()
        if fields[0] == "Z" and int(fields[1]) == pid:
            found.append(text[:name_end + 1])
    return found
