"""Replays from Python: load one (plain or ``.json.gz``) and read its figures."""
from __future__ import annotations

import gzip
import json
import os
from typing import Any, Dict, List, Union


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
        if doc.get("format") != "gbely-replay":
            raise ValueError(f"not a gbely replay (format {doc.get('format')!r})")
        if doc.get("version") not in (1, 2):
            raise ValueError(f"replay version {doc.get('version')!r} is not supported (this package reads 1 and 2)")
        self.doc = doc

    @staticmethod
    def load(path: Union[str, "os.PathLike[str]"]) -> "Replay":
        """Reads a replay file; gzip-compressed files are read transparently."""
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        try:
            doc = json.loads(data)
        except ValueError as e:
            raise ValueError(f"{os.fspath(path)}: not a replay: {e}") from None
        return Replay(doc)

    @property
    def map_name(self) -> str:
        return self.doc["map"]["name"]

    @property
    def seats(self) -> List[Dict[str, Any]]:
        return self.doc["seats"]

    @property
    def rounds_played(self) -> int:
        return len(self.doc["turns"])

    @property
    def result(self) -> Dict[str, Any]:
        return self.doc["result"]

    @property
    def final_state(self) -> Dict[str, List[Any]]:
        """Per cell (row-major): ``owner`` (seat or -1), ``units``, ``fortification``."""
        return self.doc["final"]

    def figures(self) -> List[Dict[str, Any]]:
        """Per round: ``round``, ``cells`` and ``units`` per seat, ``captures`` made."""
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
        """Re-simulates the match; raises ValueError at the first round and cell that differ."""
        from ._gbely import replay_verify

        problem = replay_verify(json.dumps(self.doc))
        if problem is not None:
            raise ValueError(f"the replay does not match its re-simulation: {problem}")

    def __repr__(self) -> str:
        names = " vs ".join(s["name"] for s in self.seats)
        return f"<gbely.Replay {names} on {self.map_name}, {self.rounds_played} rounds>"
