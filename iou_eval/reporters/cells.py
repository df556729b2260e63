"""Table cells and layouts every text report shares: aligned grids and Markdown tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from iou_eval.escape import for_terminal, markdown_cell

INT_COLUMNS = {"gt", "predictions", "TP", "FP", "FN", "ignored"}
TEXT_COLUMNS = {"class", "note", "image_id", "file_name", "category_id"}


def cell(value: Any, column: str = "") -> str:
    """One table cell: empty for undefined, 4 decimals for metrics."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if column in TEXT_COLUMNS:
        return str(value)
    if column in INT_COLUMNS:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def grid(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]
) -> list[str]:
    """Left-aligned text, right-aligned numbers, two spaces between columns.

    Cells are escaped for a terminal (data strings such as class names may
    hold control characters), then measured.
    """
    headers = [for_terminal(h) for h in headers]
    rows = [[for_terminal(c) for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, r, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *[line(r) for r in rows]]


def md_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]
) -> list[str]:
    """A GitHub Markdown table; every cell through :func:`escape.markdown_cell`."""
    esc = markdown_cell
    out = ["| " + " | ".join(esc(h) for h in headers) + " |"]
    out.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out
