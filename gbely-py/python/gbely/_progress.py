"""Progress bars for long work in Python (:func:`gbely.league`, :func:`gbely.ab`,
:func:`gbely.replay_dataset` over a folder), as such libraries do: shown when stderr is a terminal
or the code runs in a notebook, silent otherwise (a script whose output goes to a file, CI, a test).

``progress`` arguments take ``None`` (that choice), ``True`` / ``False`` (always / never) or a
function ``progress(done, total)`` called instead of a bar. The bar is ``tqdm``'s (``tqdm.auto``:
a widget in a notebook) when tqdm is installed, else one line on stderr rewritten in place.
"""
from __future__ import annotations

import importlib
import sys
import time
from typing import Any, Callable, Optional, Union

ProgressArg = Union[None, bool, Callable[[int, int], Any]]


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - an IPython without get_ipython
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def wanted(progress: ProgressArg) -> bool:
    """Whether a bar is shown for ``progress`` (a function is always called)."""
    if progress is None:
        return _in_notebook() or bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


class Bar:
    """``update(done, total)`` as work goes on, ``close()`` at the end (also on an error)."""

    def __init__(self, progress: ProgressArg, desc: str, unit: str):
        self.desc, self.unit = desc, unit
        self.fn: Optional[Callable[[int, int], Any]] = progress if callable(progress) else None
        self.on = self.fn is None and wanted(progress)
        self.tqdm: Any = None
        self.last = 0.0
        self.shown = False
        self.pending = ""

    @property
    def active(self) -> bool:
        """Whether :meth:`update` does anything (else the caller need not call it)."""
        return self.fn is not None or self.on

    def update(self, done: int, total: int, note: str = "") -> None:
        if self.fn is not None:
            self.fn(done, total)
            return
        if not self.on:
            return
        if self.tqdm is None:
            try:
                auto: Any = importlib.import_module("tqdm.auto")
            except ImportError:
                self.tqdm = False
            else:
                self.tqdm = auto.tqdm(total=total, desc=self.desc, unit=f" {self.unit}")
        if self.tqdm:
            self.tqdm.total = total
            self.tqdm.n = done
            if note:
                self.tqdm.set_postfix_str(note, refresh=False)
            self.tqdm.refresh()
            return
        width = 30
        filled = min(width, width * done // total if total else width)
        self.pending = f"\r{self.desc}: [{'=' * filled}{' ' * (width - filled)}] {done}/{total} {self.unit}" + \
            (f", {note}" if note else "")
        now = time.monotonic()
        if done < total and now - self.last < 0.2:
            return  # at most 5 lines a second; close() writes the last
        self.last = now
        self._write()

    def _write(self) -> None:
        if self.pending:
            sys.stderr.write(self.pending)
            sys.stderr.flush()
            self.pending = ""
            self.shown = True

    def close(self) -> None:
        if self.tqdm:
            self.tqdm.close()
            return
        self._write()
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
