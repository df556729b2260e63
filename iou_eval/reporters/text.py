"""Human reports: an aligned terminal table, or Markdown for CI summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.data.reconcile import unpredicted_text
from iou_eval.escape import for_terminal, markdown_cell
from iou_eval.reporters.analysis import analysis_sections, slice_sections
from iou_eval.reporters.cells import TEXT_COLUMNS, cell, grid, md_table
from iou_eval.reporters.view import View, order_images
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult, ProtocolResult

CLASS_HEADERS = {
    "class": "class", "AP": "AP", "AP50": "AP50", "AP75": "AP75", "AR100": "AR100",
    "AR300": "AR300", "AR": "AR", "gt": "gt", "predictions": "pred", "TP": "TP", "FP": "FP",
    "FN": "FN",
    "precision": "prec", "recall": "rec", "F1": "F1", "best_F1": "best F1",
    "best_F1_score": "@score", "note": "note",
}  # fmt: skip
IMAGE_HEADERS = {
    "image_id": "image", "file_name": "file", "gt": "gt", "predictions": "pred",
    "TP": "TP", "FP": "FP", "FN": "FN", "ignored": "ign", "precision": "prec",
    "recall": "rec", "F1": "F1", "mean_IoU": "mean IoU",
    "mean_OKS": "mean OKS",
}  # fmt: skip


def _frame_rows(
    table: Columns, headers: dict[str, str]
) -> tuple[list[str], list[list[str]], list[bool]]:
    cols = [c for c in headers if c in table]
    if "note" in cols and not any(table["note"]):
        cols.remove("note")
    if "file_name" in cols and all(f is None for f in table["file_name"]):
        cols.remove("file_name")
    rows = [[cell(v, c) for v, c in zip(rec, cols, strict=True)] for rec in table.rows(cols)]
    return [headers[c] for c in cols], rows, [c not in TEXT_COLUMNS for c in cols]


def _describe_protocol(r: ProtocolResult) -> str:
    return r.record.describe(r.protocol)


def _header(result: EvaluationResult) -> list[str]:
    g = result.inputs["ground_truth"]
    p = result.inputs["predictions"]
    lines = [f"iou-eval {__version__}"]
    lines.append(
        f"ground truth  {g['path']} [{g['format']}]: {g['images']} images, {g['boxes']} boxes"
        f" ({g['crowd']} {g.get('crowd_word', 'crowd')}), {g['categories']} categories"
        + (f"; {g['shapes']}" if g.get("shapes") else "")
    )
    pred = f"predictions   {p['path']} [{p['format']}]: {p['boxes']} boxes"
    if p.get("shapes"):
        pred += f"; {p['shapes']}"
    if p["unknown_image_boxes"]:
        pred += f" ({p['unknown_image_boxes']} on unknown images, not scored)"
    if p.get("images_without_predictions"):
        pred += "; " + unpredicted_text(p["images_without_predictions"], p["images_with_objects"])
    lines.append(pred)
    lines.append(
        f"matched       images by {result.inputs['image_match']}, categories by "
        f"{result.inputs['category_match']}"
    )
    for key, what in (
        ("categories_only_in_predictions", "only in predictions"),
        ("categories_without_predictions", "never predicted"),
    ):
        names = result.inputs.get(key) or []
        if names:
            shown = ", ".join(map(str, names[:8])) + (", ..." if len(names) > 8 else "")
            lines.append(f"categories    {len(names)} {what}: {shown}")
    return lines


def _summary_rows(r: ProtocolResult) -> tuple[list[str], list[list[str]], list[bool]]:
    rows = []
    for k, v in r.summary.items():
        # The caps each statistic is read at, as pycocotools prints them.
        label = r.record.summary_labels(r.protocol).get(k, "")
        rows.append([k, cell(v, k) or "n/a", label])
    return ["metric", "value", ""], rows, [False, True, False]


def _side_by_side(result: EvaluationResult) -> tuple[list[str], list[list[str]], list[bool]]:
    """Each protocol's per-class headline columns in one table, the headline numbers on top."""
    headers = ["class"]
    columns: list[list[str]] = []
    total: list[str] = ["(mean)"]
    for r in result.results:
        name = r.protocol.label
        for key in r.record.headline:
            metric = r.record.metric(r.protocol, key)
            col = metric.per_class if metric is not None else None
            if col is None or col not in r.classes:
                continue
            headers.append(f"{name} {col}")
            total.append(cell(r.summary.get(key)) or "n/a")
            columns.append([cell(v) for v in r.classes[col]])
    names = list(result.primary.classes["class"])
    rows = [total] + [[n, *(c[i] for c in columns)] for i, n in enumerate(names)]
    return headers, rows, [False] + [True] * (len(headers) - 1)


def _sections(result: EvaluationResult, view: View, terminal: bool) -> list[tuple[str, tuple]]:
    s = result.settings
    out: list[tuple[str, tuple]] = []
    if len(result.results) > 1:
        out.append(("Side by side (AP per class)", _side_by_side(result)))
    for r in result.results:
        out.append((f"Protocol {_describe_protocol(r)}", ()))
        out.append(("Summary", _summary_rows(r)))
        out += slice_sections(result, r)
        point = f"{'OKS' if r.protocol.iou_type == 'keypoints' else 'IoU'} {s['iou_thr']:g}, score >= {s['score_thr']:g}"
        out.append((f"Per class ({point})", _frame_rows(r.classes, CLASS_HEADERS)))
        images = order_images(r.images, view)
        shown = images
        note = ""
        if view.worst is None and terminal and len(images) > view.max_terminal_images:
            shown = images.take(np.arange(view.max_terminal_images))
            note = f"; first {len(shown)} of {len(images)}, --worst N or --format csv/json for more"
        order = "most errors first" if view.sort == "errors" else f"by {view.sort}"
        out.append((f"Per image ({point}; {order}{note})", _frame_rows(shown, IMAGE_HEADERS)))
    return out + analysis_sections(result)


def check_rows(checks) -> tuple[list[str], list[list[str]], list[bool]]:
    """The verdict table of gates and baseline comparisons."""
    rows = []
    with_interval = any(c.interval for c in checks)
    for c in checks:
        row = [
            c.name,
            cell(c.threshold),
            cell(c.value) or "undefined",
            "" if c.margin is None else f"{c.margin:+.4f}",
            "" if c.tolerance is None else f"{c.tolerance:.4f}",
        ]
        if with_interval:
            row.append(f"[{c.interval[0]:.4f}, {c.interval[1]:.4f}]" if c.interval else "")
        row.append("pass" if c.passed else "FAIL")
        row.append(c.reason)
        rows.append(row)
    headers = ["check", "threshold / baseline", "value", "margin / delta", "max drop"]
    numeric = [False, True, True, True, True]
    if with_interval:
        headers.append("interval")
        numeric.append(False)
    headers += ["verdict", "reason"]
    numeric += [False, False]
    return headers, rows, numeric


def checks_verdict(checks) -> str:
    failed = sum(not c.passed for c in checks)
    return (
        f"{failed} of {len(checks)} checks failed" if failed else f"all {len(checks)} checks passed"
    )


def render_table(result: EvaluationResult, view: View) -> str:
    lines = [for_terminal(ln) for ln in _header(result)]
    for title, table in _sections(result, view, terminal=True):
        lines.append("")
        lines.append(title)
        if table:
            lines += ["  " + ln for ln in grid(*table)]
    if result.checks:
        lines += ["", f"Checks: {checks_verdict(result.checks)}"]
        lines += ["  " + ln for ln in grid(*check_rows(result.checks))]
    return "\n".join(lines) + "\n"


def render_markdown(result: EvaluationResult, view: View) -> str:
    lines = ["## iou-eval report", ""]
    lines += [f"- {markdown_cell(ln)}" for ln in _header(result)[1:]]
    if result.checks:
        failed = any(not c.passed for c in result.checks)
        lines += ["", f"### {'❌' if failed else '✅'} Checks: {checks_verdict(result.checks)}", ""]
        lines += md_table(*check_rows(result.checks))
    for title, table in _sections(result, view, terminal=True):
        lines.append("")
        lines.append(f"### {title}")
        if table:
            lines.append("")
            lines += md_table(*table)
    if result.warnings:
        lines.append("")
        lines += [f"> warning: {markdown_cell(w)}" for w in result.warnings]
    return "\n".join(lines) + "\n"
