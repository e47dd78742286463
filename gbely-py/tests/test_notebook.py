"""gbely-py/examples/notebook.ipynb, executed as Jupyter runs it (nbclient, an ipykernel of this
Python): it plays a match and shows it inline, runs a small league with its replays, trains the
behaviour clone on them and plays it. An error in any cell fails the test; the outputs are checked
for what the notebook says it shows."""
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "notebook.ipynb"


def outputs(cell, kind):
    return [o for o in cell.outputs if o.output_type == kind]


def test_the_notebook_runs_and_shows_what_it_says(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    html = lambda c: "".join(o["data"].get("text/html", "") for o in outputs(c, "execute_result"))
    text = lambda c: "".join(o["text"] for o in outputs(c, "stream"))
    # The match's result and the replay, inline: a table of the two sides, then the viewer.
    assert html(code[0]).startswith('<table class="gbely">') and "<td>expander-rs</td>" in html(code[0])
    assert html(code[1]).startswith("<iframe ") and "srcdoc=" in html(code[1])
    # The last round's figures: one row per seat, round 59 of 60.
    assert html(code[2]).count("<td>59</td>") == 2
    # The league: 3 agents × 2 maps × both seat orders = 12 matches, with a progress bar in the notebook.
    assert "12/12" in text(code[3]) and html(code[3]).count("<tr>") == 1 + 3  # the bar: tqdm's or the package's
    # The clone: trained on the expander's labelled cells, then playing 60 rounds.
    m = re.search(r"(\d+) labelled cells, accuracy (0\.\d+)", text(code[5]))
    assert m and int(m.group(1)) > 1000 and 0.0 < float(m.group(2)) <= 1.0
    m = re.search(r"the clone holds (\d+) cells", text(code[6]))
    assert m and int(m.group(1)) >= 1
