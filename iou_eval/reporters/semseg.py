"""Reports of ``iou-eval semseg``: the per-class IoU table and the mean, in every format."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from iou_eval.escape import csv_text, for_terminal, markdown_cell
from iou_eval.reporters.cells import cell, grid, md_table
from iou_eval.reporters.json import dumps
from iou_eval.reporters.text import check_rows, checks_verdict
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.reporters import OutputFormat
    from iou_eval.toolkit.semseg import SemsegResult

SUMMARY_LABELS = {
    "mIoU": "mean IoU over the classes present in ground truth or predictions",
    "mAcc": "mean per-class accuracy (recall) over the classes in the ground truth",
    "aAcc": "pixel accuracy: correct pixels / scored pixels",
}


def render_semseg(result: SemsegResult, fmt: OutputFormat) -> str:
    from iou_eval.reporters import OutputFormat
    from iou_eval.toolkit.semseg import to_dict

    if fmt is OutputFormat.JSON:
        return dumps(to_dict(result))
    if fmt is OutputFormat.CSV:
        return _csv(result)
    return _text(result, markdown=fmt is OutputFormat.MARKDOWN)


def _csv(result: SemsegResult) -> str:
    """One tidy table: ``scope, key, metric, value`` (scope summary, class or check)."""
    from iou_eval.toolkit.semseg import class_rows

    rows: list[list[object]] = [["scope", "key", "metric", "value"]]
    for k, v in result.summary.items():
        rows.append(["summary", "", k, "" if math.isnan(v) else v])
    for row in class_rows(result):
        for metric in ("IoU", "Acc", "gt_pixels", "pred_pixels"):
            value = row[metric]
            rows.append(["class", row["class"], metric, "" if value is None else value])
    for c in result.checks:
        for metric, item in (("threshold", c.threshold), ("value", c.value),
                             ("margin", c.margin), ("passed", c.passed)):  # fmt: skip
            rows.append(["checks", c.name, metric, "" if item is None else item])
    return csv_text(rows)


def _header(result: SemsegResult) -> list[str]:
    i, s = result.inputs, result.settings
    source = "from the data" if s["num_classes_from"] == "data" else "given"
    return [
        f"ground truth  {i['ground_truth']['path']}: {i['ground_truth']['maps']} label maps",
        f"predictions   {i['predictions']['path']}: {i['predictions']['maps']} label maps",
        f"scored        {i['images']} pairs (by file stem)",
        f"settings      {s['num_classes']} classes ({source}), ignore index {s['ignore_index']}, "
        f"reduce zero label {'on' if s['reduce_zero_label'] else 'off'}",
    ]


def _tables(result: SemsegResult) -> list[tuple[str, tuple]]:
    from iou_eval.toolkit.semseg import class_rows

    summary = [[k, cell(v) or "n/a", SUMMARY_LABELS[k]] for k, v in result.summary.items()]
    rows = [
        [r["class"], cell(r["IoU"]), cell(r["Acc"]), str(r["gt_pixels"]), str(r["pred_pixels"])]
        for r in class_rows(result)
    ]
    return [
        ("Summary", (["metric", "value", ""], summary, [False, True, False])),
        (
            "Per class (IoU empty: the class is in neither ground truth nor predictions)",
            (["class", "IoU", "Acc", "gt pixels", "pred pixels"], rows, [False] + [True] * 4),
        ),
    ]


def _text(result: SemsegResult, markdown: bool) -> str:
    if markdown:
        lines = ["## iou-eval semseg report", ""]
        lines += [f"- {markdown_cell(ln)}" for ln in _header(result)]
    else:
        lines = [f"iou-eval {__version__} · semseg", *map(for_terminal, _header(result))]
    if result.checks:
        verdict = checks_verdict(result.checks)
        if markdown:
            mark = "❌" if result.failed_checks else "✅"
            lines += [
                "",
                f"### {mark} Checks: {verdict}",
                "",
                *md_table(*check_rows(result.checks)),
            ]
    for title, table in _tables(result):
        if markdown:
            lines += ["", f"### {title}", "", *md_table(*table)]
        else:
            lines += ["", title, *("  " + ln for ln in grid(*table))]
    if result.checks and not markdown:
        lines += ["", f"Checks: {checks_verdict(result.checks)}"]
        lines += ["  " + ln for ln in grid(*check_rows(result.checks))]
    if markdown and result.warnings:
        lines += ["", *(f"> warning: {markdown_cell(w)}" for w in result.warnings)]
    return "\n".join(lines) + "\n"
