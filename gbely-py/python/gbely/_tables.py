"""Results in notebooks (private): HTML tables for ``_repr_html_`` and the pandas import for
``to_pandas()``, with the message that says what to install when pandas is missing."""
from __future__ import annotations

import html
from typing import Any, Sequence


def pandas() -> Any:
    """The ``pandas`` module; ``ImportError`` saying how to install it when it is missing."""
    import importlib

    try:
        return importlib.import_module("pandas")
    except ImportError as e:
        raise ImportError("to_pandas() needs pandas, which is not installed: pip install pandas") from e


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return html.escape("" if v is None else str(v))


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    """One HTML table (numbers right-aligned, floats to 2 places, text escaped)."""
    out = ['<table class="gbely">']
    if caption:
        out.append(f"<caption style=\"text-align:left\">{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for r in rows:
        tds = []
        for v in r:
            align = ' style="text-align:right"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            tds.append(f"<td{align}>{_cell(v)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)
