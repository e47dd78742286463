"""The similarity review on /org (issue 45, item 5): three participants upload the example
expander, a disguised copy of it (its functions swapped, its imports reordered, its docstrings
and comments rewritten, every name of its own renamed) and the template. The organiser finds the
copy's pair first in both rankings and flagged, the template's pairs not flagged (the template is
the review's base file), and the two files side by side, escaped; a participant and a stranger are
refused that page."""

from __future__ import annotations

import re


from arena_kit import ROOT, Arena, agent_file, good_agent, sign_in


def upload(page, path) -> int:
    page.goto(page.url.split("/me")[0] + "/me")
    page.set_input_files("#upload input[type=file]", str(path))
    page.click("#upload button")
    page.wait_for_url(re.compile(r"/me/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def wait_judged(page, timeout: float = 180_000) -> str:
    """The submission's state once judged (pushed to the status page)."""
    page.wait_for_function("() => ['scored', 'disqualified', 'check failed'].includes("
                           "document.getElementById('state')?.textContent)", timeout=timeout)
    return page.locator("#state").inner_text()


def disguised(src: str) -> str:
    """The expander disguised as a plagiarist would: same play, other looks."""
    helper = src[src.index("def potrebna_sila"):src.index("def decide")]
    decide = src[src.index("def decide"):]
    body = f"{decide}\n\n{helper}"
    body = "\n".join(re.sub(r"\s+#.*$", "  # mine", line) if not line.lstrip().startswith("#") else "    # see below"
                     for line in body.splitlines())
    head = ('"""My very own agent <b>&amp; nobody else\'s</b>."""\n'
            'from collections import deque\nimport pravidla\nimport math\n\nAGENT_NAME = "Original <script>"\n\n\n')
    out = head + body + "\n"
    for old, new in [("potrebna_sila", "force_needed"), ("utocnici", "attackers"), ("cudzie", "foreign"),
                     ("spare", "reserve"), ("front", "edge"), ("ciele", "targets"), ("poznamky", "notes"),
                     ("prikazy", "orders"), ("priorita", "prio"), ("need", "req"), ("value", "worth"),
                     ("okolo", "around"), ("chyba", "missing"), ("posli", "send"), ("dist", "distance"),
                     ("fronta", "queue"), ("index", "where"), ("moje", "mine"), ("pole", "cell"), ("stav", "obs")]:
        # Whole names only, never a string: the protocol's keys ("prikazy") stay.
        out = re.sub(rf"(?<![\"'])\b{old}\b(?![\"'])", new, out)
    return out


# A long address: the review's tables and the side-by-side page still fit a phone.
ANA = "ana.with.a.rather.long.address.for.a.phone@mail.example"


def test_the_review_finds_the_disguised_copy_and_not_the_different_agent(sink, pages, tmp_path):
    arena = Arena(tmp_path, sink, rounds=30)
    # The template as the review's base file (MOSS's -b): what everyone was given is no evidence.
    template = (ROOT / "agents" / "my_agent.py").read_text()
    (tmp_path / "base.py").write_text(template)
    config = arena.config.read_text()
    arena.config.write_text(config.replace("\ndatabase = ", '\nreview_base = "base.py"\ndatabase = ', 1))
    arena.start()
    try:
        expander = (ROOT / "agents" / "expander.py").read_text()
        copy = disguised(expander)
        assert "utocnici" not in copy and copy.index("def decide") < copy.index("def force_needed")
        files = {
            ANA: agent_file(tmp_path, "ana.py", good_agent("Ana's expander")),
            "ben@mail.example": agent_file(tmp_path, "ben.py", copy),
            "cyd@mail.example": agent_file(tmp_path, "cyd.py", template),
        }
        ids = {}
        for address, path in files.items():
            p = pages()
            sign_in(p.page, arena, sink, address)
            ids[address] = upload(p.page, path)
            assert wait_judged(p.page) == "scored", (address, p.page.locator("main").inner_text())
            if address == "ben@mail.example":
                ben = p
            else:
                p.close()
        ana, ben_id = ids[ANA], ids["ben@mail.example"]

        org = pages(390, 844, 3)
        sign_in(org.page, arena, sink, "org@mail.example")
        org.page.goto(arena.url + "/org")
        by_code = org.page.locator("#similar-code tbody tr")
        by_behaviour = org.page.locator("#similar-behaviour tbody tr")
        # Three uploads, three pairs, each in both rankings (all three played the same map).
        assert by_code.count() == 3 and by_behaviour.count() == 3
        for ranking in (by_code, by_behaviour):
            first = ranking.nth(0).inner_text()
            assert ANA in first and "ben@mail.example" in first, first
            assert "flagged" in first, first
            for k in (1, 2):
                row = ranking.nth(k).inner_text()
                assert "cyd@mail.example" in row and "flagged" not in row, row
        # The copy plays the expander's every move: the same commands in the same observations in
        # every round of their matches (the Council is deterministic).
        cells = by_behaviour.nth(0).locator("td")
        assert cells.nth(2).inner_text().startswith("100 %"), cells.nth(2).inner_text()
        # Its code keeps nearly every fingerprint (the unit tests' figure is 97 %).
        code = int(by_code.nth(0).locator("td").nth(1).inner_text().split(" %")[0])
        assert code >= 80, code
        # The template against either expander: nothing, since the template is the base file and
        # nothing of it is left to compare.
        for k in (1, 2):
            assert by_code.nth(k).locator("td").nth(1).inner_text() == "0 %"
        # The review section fits a phone's width (no sideways scrolling of its own).
        section_width = org.page.evaluate(
            "() => Math.max(...['similar-code', 'similar-behaviour'].map(i => document.getElementById(i).scrollWidth))")
        assert section_width <= 390, section_width

        # Side by side: both files, escaped, the shared lines marked; the page fits 390 px.
        org.page.click(f"#similar-code a[href='/org/similar/{min(ana, ben_id)}/{max(ana, ben_id)}']")
        org.page.wait_for_url(re.compile(r"/org/similar/\d+/\d+$"))
        text = org.page.locator("main").inner_text()
        assert "def potrebna_sila" in text and "def force_needed" in text
        assert 'AGENT_NAME = "Original <script>"' in text and "<b>&amp; nobody else's</b>" in text
        assert org.page.locator("main script, main b").count() == 0, "the files are text, not HTML"
        assert org.page.locator("mark.shared").count() > 40
        assert org.page.evaluate("() => document.documentElement.scrollWidth") <= 390
        # The organiser's look is in the audit log.
        org.page.goto(arena.url + "/org")
        assert "compare" in org.page.locator("#audit").inner_text()

        # Nobody else sees it: a participant is refused, a stranger sent to sign in.
        path = f"/org/similar/{ana}/{ben_id}"
        r = ben.context.request.get(arena.url + path, max_redirects=0)
        assert r.status == 403 and "potrebna_sila" not in r.text(), r.status
        stranger = pages()
        r = stranger.context.request.get(arena.url + path, max_redirects=0)
        assert r.status == 303 and r.headers["location"] == "/signin", r.status
        for p in (ben, org, stranger):
            p.close()
    finally:
        arena.stop()
