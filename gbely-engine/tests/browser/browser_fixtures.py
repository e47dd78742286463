"""What the browser tests share (the engine's and the arena's, each conftest importing it): one Chromium for the session (Debian's, driven by Playwright),
and pages that record console errors and uncaught exceptions (a page closed with any fails its
test)."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import sync_playwright


@pytest.fixture(scope="session")
def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "the browser tests need Debian's chromium (./run-tests installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()


class Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser, width: int, height: int, scale: float = 1):
        self.context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def open(self, url: str):
        self.page.goto(url)
        return self

    def wait_ready(self):
        self.page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=30000)
        return self

    def state(self) -> dict:
        return self.page.evaluate("window.gbely.state()")

    def close(self):
        self.context.close()
        assert not self.errors, self.errors


@pytest.fixture
def pages(browser):
    made: list[Page] = []

    def make(width=1366, height=768, scale=1):
        p = Page(browser, width, height, scale)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()
