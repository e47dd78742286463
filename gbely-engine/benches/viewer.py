"""What a replay's viewer page weighs and how long it takes to open: a leaderboard match (the
example Python expander against the Council on the reference map, 150 rounds) and an 8-army
final, each written by `gbely play`/`gbely final`, its page made by `gbely replay view`; printed:
the replay's bytes, the page's (and gzipped, as a server would send it), the page's data
(decompressed JSON), the page's time to make, and in headless Chromium the time from navigation
to the first round drawn and to the last round shown, on a desktop window and on a phone (390 ×
844 with the CPU throttled 4×, Chromium's `Emulation.setCPUThrottlingRate`).

    python3 gbely-engine/benches/viewer.py [--rounds 150] [--loads 3] [--quick]

Needs the `gbely` binary (GBELY_BIN, else target/debug/gbely), Playwright (pip) and Debian's
`chromium`. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def gbely_bin() -> str:
    given = os.environ.get("GBELY_BIN")
    if given:
        return str(Path(given).resolve())
    return str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "gbely")


def gbely(*args: str, cwd: Path, ok=(0,)) -> float:
    t0 = time.monotonic()
    out = subprocess.run([gbely_bin(), *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode in ok, f"gbely {' '.join(args)}: exit {out.returncode}\n{out.stderr}"
    return time.monotonic() - t0


def data_bytes(page: str) -> int:
    """The decompressed size of the data the page carries (its `gbely-data` element)."""
    m = re.search(r'<script id="gbely-data" type="application/octet-stream">([^<]*)</script>', page)
    return len(gzip.decompress(base64.b64decode(m.group(1)))) if m and m.group(1).strip() else 0


def open_figures(browser, url: str, width: int, height: int, throttle: float) -> tuple[float, float, float]:
    """Milliseconds from navigation to the first round drawn (the page's `first_ms`: from the
    data's head, before the rounds are resolved; `ready_ms` on a page without it), to every
    round ready (`ready_ms`), and to show the last round (a jump from the first once ready,
    drawn: a pixel of the map read back)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        p = context.new_page()
        cdp = context.new_cdp_session(p)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
        p.goto(url)
        p.wait_for_function("() => document.body.dataset.ready === '1'", timeout=120_000)
        state = p.evaluate("() => JSON.parse(document.getElementById('state').textContent)")
        ready = state["ready_ms"]
        last = p.evaluate("""() => {
            const t = performance.now(), ctx = document.getElementById('map').getContext('2d');
            window.gbely.show(window.gbely.frames() - 1); ctx.getImageData(0, 0, 1, 1);
            return performance.now() - t;
        }""")
        return state.get("first_ms", ready), ready, ready + last
    finally:
        context.close()


def open_times(browser, url: str, width: int, height: int, throttle: float) -> tuple[float, float]:
    """Milliseconds from navigation to the first round drawn, and to the last round shown
    ([`open_figures`]). The arena's load run (gbely-arena/benches/arena.py) opens a leaderboard
    entry's replay with it too."""
    first, _, last = open_figures(browser, url, width, height, throttle)
    return first, last


# Where a page is opened: a desktop window, and a phone (its viewport, its CPU 4× slower).
SCREENS = {"desktop 1366x768": (1366, 768, 1), "phone 390x844, CPU 4x slower": (390, 844, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--loads", type=int, default=3, help="page loads per case (the median is printed)")
    ap.add_argument("--quick", action="store_true", help="30 rounds, one load, the duel only: that it runs")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.loads = 30, 1
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="gbely-viewer-bench-"))
    try:
        shutil.copy(ROOT / "agents" / "expander.py", work / "expander.py")
        gbely("play", "expander.py", "--opponent", "council", "--rounds", str(a.rounds), "--replay", "board.json.gz",
              "--run-dir", "board-run", "-q", cwd=work)
        cases = [("leaderboard match (expander.py vs the Council, reference map)", "board")]
        if not a.quick:
            gbely("final", "expander-rs", "--fill", "template-rs", "--rounds", str(a.rounds), "--replay", "final.json.gz",
                  "--run-dir", "final-run", "-q", cwd=work, ok=(0, 3))
            cases.append(("final (8 armies and the Council)", "final"))
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        print(f"gbely viewer bench: {gbely_bin()}; load average {os.getloadavg()[0]:.2f}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for title, stem in cases:
                replay, html = work / f"{stem}.json.gz", work / f"{stem}.html"
                made = gbely("replay", "view", replay.name, "-o", html.name, cwd=work)
                text = html.read_text()
                rb, pb, zb = replay.stat().st_size, html.stat().st_size, len(gzip.compress(text.encode(), 6))
                print(f"{title}:")
                print(f"  replay {rb:,} B; page {pb:,} B = {pb / rb:.1f}x the replay, gzipped {zb:,} B;"
                      f" its data {data_bytes(text):,} B decompressed; made in {made:.2f} s")
                for name, (w, h, rate) in SCREENS.items():
                    runs = [open_figures(browser, html.as_uri(), w, h, rate) for _ in range(a.loads)]
                    first, ready, last = (statistics.median(r[k] for r in runs) for k in range(3))
                    print(f"  {name}: first round drawn {first:.0f} ms, every round ready {ready:.0f} ms,"
                          f" last round shown {last:.0f} ms (median of {a.loads}; load average {os.getloadavg()[0]:.2f})")
            browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
