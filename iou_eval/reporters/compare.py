"""Reports of ``iou-eval compare``."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

from iou_eval.data.columns import frame_records
from iou_eval.document import envelope
from iou_eval.escape import for_terminal, markdown_cell
from iou_eval.reporters.cells import cell, grid, md_table
from iou_eval.reporters.csv import frame_csv
from iou_eval.reporters.json import dumps
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.ci.compare import Comparison
    from iou_eval.reporters import OutputFormat


def render_compare(c: Comparison, fmt: OutputFormat, a_path: str, b_path: str) -> str:
    from iou_eval.data.doubts import doubts_of
    from iou_eval.reporters import OutputFormat

    t = c.table
    doubts = {k: list(dict.fromkeys(doubts_of(r.warnings))) for k, r in (("a", c.a), ("b", c.b))}
    if fmt is OutputFormat.JSON:
        return dumps(
            envelope("compare", protocol=c.a.protocol, a=a_path, b=b_path, rows=frame_records(t),
                     doubts=doubts)
        )  # fmt: skip
    if fmt is OutputFormat.CSV:
        return frame_csv(t)
    a_name, b_name = os.path.basename(a_path), os.path.basename(b_path)
    # A run whose inputs raised a doubt is marked in the headers; the doubts follow the tables.
    a_name += " (DOUBT)" if doubts["a"] else ""
    b_name += " (DOUBT)" if doubts["b"] else ""
    with_iv = not t["lo"].isna().all()
    headers = ["", a_name, b_name, "delta", "better"] + (["interval", ""] if with_iv else [])
    numeric = [False, True, True, True, False] + ([False, False] if with_iv else [])
    names = {"a": a_name, "b": b_name}

    def rows(scope: str) -> list[list[str]]:
        out = []
        for r in t[t["scope"] == scope].itertuples(index=False):
            row = [r.name, cell(r.a), cell(r.b), "" if math.isnan(r.delta) else f"{r.delta:+.4f}",
                   names.get(r.better, "")]  # fmt: skip
            if with_iv:
                row.append("" if math.isnan(r.lo) else f"[{r.lo:+.4f}, {r.hi:+.4f}]")
                row.append(r.significance)
            out.append(row)
        return out

    md = fmt is OutputFormat.MARKDOWN
    table = md_table if md else grid
    pad = "" if md else "  "
    esc = markdown_cell if md else for_terminal
    lines = ["## iou-eval compare" if md else f"iou-eval {__version__} · compare",
             "", f"a = {esc(a_path)}", f"b = {esc(b_path)}",
             f"delta = b - a ({c.a.protocol})"]  # fmt: skip
    lines += ["", "### Summary" if md else "Summary", ""]
    lines += [pad + ln for ln in table(headers, rows("summary"), numeric)]
    from iou_eval.ci.compare import class_column

    per_class = f"{class_column(c.a.primary)[0]} per class, largest changes first"
    lines += ["", f"### {per_class}" if md else per_class, ""]
    lines += [pad + ln for ln in table(["class", *headers[1:]], rows("class"), numeric)]
    marked = [(k, d) for k in ("a", "b") for d in doubts[k]]
    if marked:
        head = "Doubts (the numbers of a run may be wrong as its files were read)"
        lines += ["", f"### {head}" if md else head, ""]
        lines += [f"{'- ' if md else pad}{k}: {esc(d)}" for k, d in marked]
    return "\n".join(lines) + "\n"
