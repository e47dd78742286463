"""Replays from Python: load one (plain or ``.json.gz``) and read its figures."""
from __future__ import annotations

import gzip
import json
import os
from typing import Any, Dict, List, Union

from ._errors import ReplayError


class Replay:
    """A replay document (format ``gbely-replay``, versions 1 and 2, see docs/replay-format.md).

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
        if doc.get("version") not in (1, 2):
            raise ReplayError(f"replay version {doc.get('version')!r} is not supported (this package reads 1 and 2)")
        self.doc = doc

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
        return Replay(doc)

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

    def to_html(self, path: Union[str, "os.PathLike[str]"]) -> str:
        """Writes the viewer: one self-contained HTML file (no network). Returns its path."""
        from ._gbely import replay_html

        html = replay_html(json.dumps(self.doc))
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

    def __repr__(self) -> str:
        names = " vs ".join(s["name"] for s in self.seats)
        return f"<gbely.Replay {names} on {self.map_name}, {self.rounds_played} rounds>"
