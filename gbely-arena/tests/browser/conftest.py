"""The arena's browser tests share the engine's browser fixtures (one Chromium for the session,
pages that fail their test on a console error) and its process kit (zombie children): the arena
is built on the engine, and so are its tests."""

import sys

import pytest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "gbely-engine" / "tests" / "browser"))

from browser_fixtures import browser, pages  # noqa: E402, F401
from arena_kit import Sink  # noqa: E402


@pytest.fixture
def sink():
    """An SMTP sink of the test's own (arena_kit.Sink), stopped after it."""
    s = Sink()
    yield s
    s.stop()
