"""The browser tests' fixtures (browser_fixtures.py, which the arena's browser tests share)."""

from browser_fixtures import browser, pages  # noqa: F401
