"""Batch reports: a leaderboard, per-class AP side by side, and the files that failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from iou_eval.data.columns import frame_records
from iou_eval.document import envelope
from iou_eval.escape import for_terminal, markdown_cell
from iou_eval.reporters.cells import cell, grid, md_table
from iou_eval.reporters.csv import frame_csv
from iou_eval.reporters.json import dumps
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.ci.batch import BatchResult
    from iou_eval.reporters import OutputFormat

TEXT = {"file", "class"}


def _rows(df: pd.DataFrame) -> tuple[list[str], list[list[str]], list[bool]]:
    cols = list(df.columns)
    rows = []
    for rec in df.itertuples(index=False, name=None):
        row = []
        for c, v in zip(cols, rec, strict=True):
            if c == "passed":
                row.append("" if v is None else ("pass" if v else "FAIL"))
            elif c == "doubts":
                row.append(f"{v} DOUBT" if v else "")
            elif c in ("predictions", "TP", "FP", "FN"):
                row.append(cell(v, "gt"))
            else:
                row.append(cell(v, c if c in TEXT else ""))
        rows.append(row)
    numeric = [c not in TEXT and c != "passed" for c in cols]
    return [str(c) for c in cols], rows, numeric


def batch_document(batch: BatchResult) -> dict:
    """The JSON document of a batch (``"mode": "batch"``)."""
    return envelope(
        "batch",
        ground_truth=batch.gt_source,
        leaderboard=frame_records(batch.leaderboard()),
        results={p: r.to_dict() for p, r in batch.results.items()},
        errors=[{"file": f, "message": m} for f, m in batch.errors],
    )


def render_batch(
    batch: BatchResult, fmt: OutputFormat, plot_files: tuple[str, ...] | None = None
) -> str:
    """The batch report in ``fmt``; ``plot_files``: plots ``--plots`` wrote (HTML embeds them)."""
    from iou_eval.reporters import OutputFormat

    if fmt is OutputFormat.HTML:
        from iou_eval.reporters.report import render_batch_report

        return render_batch_report(batch, batch_document(batch), plot_files)
    if fmt is OutputFormat.JUNIT:
        from iou_eval.reporters.junit import render_batch_junit

        return render_batch_junit(batch)
    board = batch.leaderboard()
    classes = batch.per_class_ap()
    if fmt is OutputFormat.JSON:
        return dumps(batch_document(batch))
    if fmt is OutputFormat.CSV:
        return frame_csv(board)
    md = fmt is OutputFormat.MARKDOWN
    esc = markdown_cell if md else for_terminal
    table = md_table if md else grid
    head = "## iou-eval leaderboard" if md else f"iou-eval {__version__} · batch"
    lines = [head, "", f"ground truth: {esc(batch.gt_source)} · {len(batch.results)} file(s) scored"
             + (f", {len(batch.errors)} failed" if batch.errors else "")]  # fmt: skip
    lines += ["", "### Leaderboard" if md else "Leaderboard", ""]
    lines += [("" if md else "  ") + ln for ln in table(*_rows(board))]
    if not classes.empty:
        short = classes.rename(columns={c: _short(c) for c in classes.columns})
        lines += ["", "### AP per class" if md else "AP per class", ""]
        lines += [("" if md else "  ") + ln for ln in table(*_rows(short))]
    lines += _failed_checks(batch, md, table)
    lines += _doubted(batch, md, esc)
    if batch.errors:
        lines += [
            "",
            "### Files that could not be scored" if md else "Files that could not be scored",
            "",
        ]
        lines += [f"- {esc(m)}" if md else f"  {esc(m)}" for _, m in batch.errors]
    return "\n".join(lines) + "\n"


def _doubted(batch: BatchResult, md: bool, esc) -> list[str]:
    """Each file's doubts: its numbers may be wrong as the file was read."""
    from iou_eval.data.doubts import doubts_of

    lines = [f"- {esc(d)}" if md else f"  {esc(d)}"
             for r in batch.results.values() for d in dict.fromkeys(doubts_of(r.warnings))]  # fmt: skip
    if not lines:
        return []
    head = "Doubts (the numbers of these files may be wrong as read)"
    return ["", f"### {head}" if md else head, "", *lines]


def _failed_checks(batch: BatchResult, md: bool, table) -> list[str]:
    """Each file's failed gates and baseline checks: which one, its value, its threshold."""
    rows = []
    for path, result in batch.results.items():
        for c in result.failed_checks:
            rows.append([_short(path), c.name, cell(c.threshold), cell(c.value) or "undefined",
                         "" if c.margin is None else f"{c.margin:+.4f}", c.reason])  # fmt: skip
    if not rows:
        return []
    headers = ["file", "check", "threshold / baseline", "value", "margin / delta", "reason"]
    out = ["", "### Failed checks" if md else "Failed checks", ""]
    return out + [
        ("" if md else "  ") + ln
        for ln in table(headers, rows, [False, False, True, True, True, False])
    ]


def _short(path: str) -> str:
    import os

    return path if path == "class" else os.path.basename(path)
