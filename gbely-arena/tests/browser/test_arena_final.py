"""The arena's live final on a hall's screen (issue 42 item 12): `/final/live/` opens in the
projection layout without a hash; a viewer who is not an organiser sees no start or pause
control; a pause shows a large mark on every viewer's screen and goes at the resume; the
podium shows within a second of the last round's arrival (it waited for the agents to stop and
the replay to be written); at 1024×768 a long name takes at most two lines and carries no
version, and the key moments are not cut."""

from __future__ import annotations

import re
import time


from arena_kit import AFTER_DEADLINE, Arena, good_agent, run_final, sign_in

LONG = "The Very Long Named Expeditionary Expander of the Oil Fields"


# Records when the podium first becomes visible and when the page learns that the replay is
# written (performance.now(), the clock of `arrivals`): before, the podium waited for the latter.
WATCH_PODIUM = """() => {
    window.__podium = null; window.__written = null;
    const tick = () => {
        const p = document.getElementById('podium');
        if (window.__podium === null && !p.hidden && p.offsetHeight > 0) window.__podium = performance.now();
        if (/replay: /.test(document.getElementById('status').textContent)) window.__written = performance.now();
        else requestAnimationFrame(tick);
    };
    tick();
}"""


def projected(page) -> bool:
    return page.evaluate("document.body.classList.contains('proj')")


def lines_of(page, selector: str) -> list:
    """Each element's text, its height in lines of its own line height, and its title."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map((e) => {
        const s = getComputedStyle(e), lh = parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.2;
        return [e.textContent, e.getBoundingClientRect().height / lh, e.title];
    })""", selector)


def test_the_live_final_on_the_projection(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=20, rate=5.0, final_rounds=15)
    arena.start()
    try:
        ana, org, hall = pages(1024, 768), pages(1024, 768), pages(1024, 768)
        long_agent = tmp_path / "long.py"
        long_agent.write_text(good_agent(LONG).replace("import math\n", "import math\nAGENT_VERSION = 1\n", 1))
        sign_in(ana.page, arena, sink, "ana@mail.example")
        ana.page.set_input_files("#upload input[type=file]", str(long_agent))
        ana.page.click("#upload button")
        ana.page.wait_for_url(re.compile(r"/me/\d+$"))
        ana.page.wait_for_function("() => document.getElementById('state')?.textContent === 'scored'", timeout=120_000)
        # The board shows its version (in a column of its own); the final will not.
        ana.page.goto(arena.url + "/board")
        assert ana.page.locator("#board td.agent").inner_text() == LONG
        assert ana.page.locator("#board tr").nth(1).locator("td").nth(2).inner_text() == "1"

        arena.set_clock(AFTER_DEADLINE)
        sign_in(org.page, arena, sink, "org@mail.example")
        # `/final/live/` without a hash: the projection layout, and no layout written to the address.
        run_final(org.page)
        assert projected(org.page) and "layout=" not in org.page.evaluate("location.hash")
        assert org.page.locator("#startbtn").is_visible()

        # A viewer who is not signed in: the projection, the intro card, and no controls.
        hall.page.goto(arena.url + "/final/live/")
        hall.page.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=60_000)
        assert projected(hall.page)
        assert hall.page.locator("#startbtn").is_hidden() and hall.page.locator("#pausebtn").is_hidden()
        assert "organisers start" in hall.page.locator("#startkey").inner_text()
        hall.page.keyboard.press("s")   # no start from here (and no error)
        hall.page.wait_for_timeout(1000)
        assert hall.page.evaluate("window.gbely.frames()") == 1
        # The desk layout chosen by hand is kept in the address.
        ana.page.goto(arena.url + "/final/live/#layout=desk")
        ana.page.wait_for_function("() => !document.getElementById('startcard').hidden", timeout=60_000)
        assert not projected(ana.page)

        for p in (org, hall):
            p.page.evaluate(WATCH_PODIUM)
        org.page.keyboard.press("s")
        org.page.wait_for_function("() => window.gbely.arrivals().length >= 3", timeout=60_000)
        org.page.wait_for_function("() => !document.getElementById('pausebtn').hidden")
        assert hall.page.locator("#pausebtn").is_hidden()

        # Paused by the organiser: a large mark on the hall's screen, no round arrives.
        org.page.click("#pausebtn")
        hall.page.wait_for_selector("#paused", state="visible", timeout=5000)
        time.sleep(0.6)   # the round being resolved at the pause still comes
        n = hall.page.evaluate("window.gbely.arrivals().length")
        box = hall.page.locator("#paused").bounding_box()
        assert box["height"] >= 0.12 * 768 and box["width"] >= 0.3 * 1024, box
        assert hall.page.locator("#paused").inner_text().lower() == "paused"
        colors = hall.page.evaluate("""() => { const s = getComputedStyle(document.getElementById('paused'));
            return [s.color, s.backgroundColor]; }""")
        assert colors[0] == "rgb(255, 255, 255)" and colors[1].startswith("rgba(0, 0, 0"), colors
        time.sleep(1.2)
        assert hall.page.locator("#paused").is_visible()
        assert hall.page.evaluate("window.gbely.arrivals().length") == n, "paused"
        assert org.page.locator("#paused").is_visible()
        # A non-organiser's pause is refused by the server too.
        assert hall.context.request.post(arena.url + "/final/live/api/resume").status == 403
        org.page.click("#pausebtn")
        hall.page.wait_for_selector("#paused", state="hidden", timeout=5000)
        hall.page.wait_for_function(f"() => window.gbely.arrivals().length > {n}", timeout=10_000)

        # At 1024×768: the long name on at most two lines, whole in its title, no version.
        rows = lines_of(hall.page, "#board .row .who")
        assert len(rows) == 9, rows
        assert all(h <= 2.05 for _, h, _ in rows), rows
        long_row = [r for r in rows if r[2] == LONG]
        assert long_row, rows
        assert not any(re.search(r" 1$", t) for t, _, _ in rows), rows

        # The end: the podium within a second of the last round's arrival, on both screens.
        for p in (org, hall):
            p.page.wait_for_function("() => window.__podium !== null", timeout=60_000)
        for p in (org, hall):
            last = p.page.evaluate("window.gbely.arrivals()")[-1]
            late = p.page.evaluate("window.__podium") - last
            print(f"podium {late:.0f} ms after the last round")
            assert late < 1000, late
            assert p.page.evaluate("window.gbely.frames()") == 16
            assert p.page.locator("#paused").is_hidden()
        # The podium's names at most two lines, whole in their titles.
        assert all(h <= 2.05 for _, h, _ in lines_of(hall.page, "#podium .who"))
        # The key moments shown whole inside the panel.
        cut = hall.page.evaluate("""() => { const a = document.querySelector('aside').getBoundingClientRect();
            return [...document.querySelectorAll('#feed div')].filter((d) => d.getBoundingClientRect().bottom > a.bottom + 0.5)
                .map((d) => d.textContent); }""")
        assert cut == [], cut
        assert hall.page.locator("#feed div").count() >= 1
        # Once the replay is written the page is the replay's, the podium still up.
        hall.page.wait_for_function("() => window.__written !== null", timeout=60_000)
        assert hall.page.locator("#podium").is_visible()
        written = hall.page.evaluate("window.__written - window.gbely.arrivals().at(-1)")
        print(f"the replay's data {written:.0f} ms after the last round (when the podium used to show)")
        # The podium did not wait for the match to be finished (agents stopped, replay written).
        assert hall.page.evaluate("window.__podium < window.__written")
        hall.page.screenshot(path=str(tmp_path / "final-1024x768.png"))
    finally:
        arena.stop()
