"""The ``iou-eval iou`` calculator: boxes from the command line or from files, and its output."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InputError, UsageError

DECIMALS = 6


def parse_box(text: str) -> list[float]:
    """``"10,10,50,50"`` -> four floats."""
    if text.startswith("--") or (
        text.startswith("-") and not text[1:2].isdigit() and text[1:2] != "."
    ):
        # Unknown options reach here as boxes (negative boxes must get through).
        raise UsageError(f"no such option: {text}", hint="iou-eval iou --help lists the options")
    parts = [p for p in text.replace(" ", "").split(",") if p != ""]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 4:
        raise UsageError(
            f"box {text!r}: expected 4 comma-separated numbers like 10,10,50,50",
            hint="negative numbers are fine (-5,0,10,10); options go before or after the boxes",
        )
    return values


def _json_boxes(path: str, text: str) -> np.ndarray:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"malformed JSON: {exc.msg}", where=f"{exc.lineno}:{exc.colno}"
        ) from None
    if isinstance(doc, list) and len(doc) == 4 and all(isinstance(v, (int, float)) for v in doc):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(
            path,
            f"expected a JSON array of boxes [[x1, y1, x2, y2], ...], got {type(doc).__name__}",
        )
    for i, box in enumerate(doc):
        ok = isinstance(box, list) and len(box) == 4
        if not ok or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box):
            raise InputError(
                path, f"a box is 4 numbers, got {json.dumps(box)[:60]}", where=f"[{i}]"
            )
    return np.asarray(doc, dtype=np.float64).reshape(-1, 4)


def _csv_boxes(path: str, text: str) -> np.ndarray:
    rows: list[list[float]] = []
    for line_no, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in row if c.strip() != ""]
        if not cells:
            continue
        try:
            values = [float(c) for c in cells]
        except ValueError:
            if not rows and line_no == 1:  # a header line
                continue
            raise InputError(
                path, f"expected 4 numbers, got {','.join(cells)!r}", where=line_no
            ) from None
        if len(values) != 4:
            raise InputError(path, f"a box is 4 numbers, got {len(values)}", where=line_no)
        rows.append(values)
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


def read_boxes(path: str) -> np.ndarray:
    """Boxes ``[N, 4]`` from a JSON array of 4-number arrays or a CSV of 4 columns (header optional)."""
    from .loaders.common import read_bytes

    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    if text.lstrip().startswith(("[", "{")):
        return _json_boxes(path, text)
    return _csv_boxes(path, text)


def render_value(value: float, fmt: str, settings: dict[str, Any]) -> str:
    """One IoU: six decimals, or ``{"iou": value, ...}`` in JSON."""
    if fmt == "json":
        return json.dumps({"iou": value, **settings}, indent=2) + "\n"
    if fmt == "csv":
        return f"iou\n{value!r}\n"
    return f"{value:.{DECIMALS}f}\n"


def render_matrix(matrix: np.ndarray, fmt: str, settings: dict[str, Any]) -> str:
    """``[N, M]`` IoUs: rows ``a[i]``, columns ``b[j]``."""
    from .reporters.text import grid, md_table

    n, m = matrix.shape
    if fmt == "json":
        doc = {"iou": matrix.tolist(), "rows": n, "columns": m, **settings}
        return json.dumps(doc) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(["a", *range(m)])
        for i, row in enumerate(matrix.tolist()):
            out.writerow([i, *row])
        return buf.getvalue()
    headers: Sequence[str] = ["a / b", *(str(j) for j in range(m))]
    rows = [[str(i), *(f"{v:.{DECIMALS}f}" for v in row)] for i, row in enumerate(matrix.tolist())]
    numeric = [False] + [True] * m
    table = md_table(headers, rows, numeric) if fmt == "markdown" else grid(headers, rows, numeric)
    return "\n".join(table) + "\n"
