"""Reports of ``iou-eval iou``: one IoU, or a matrix of them, in each output format."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from iou_eval.reporters.cells import grid, md_table
from iou_eval.toolkit.calculator import DECIMALS


def render_value(value: float, fmt: str, settings: dict[str, Any]) -> str:
    """One IoU: six decimals, or ``{"iou": value, ...}`` in JSON."""
    if fmt == "json":
        return json.dumps({"iou": value, **settings}, indent=2) + "\n"
    if fmt == "csv":
        return f"iou\n{value!r}\n"
    return f"{value:.{DECIMALS}f}\n"


def render_matrix(matrix: np.ndarray, fmt: str, settings: dict[str, Any]) -> str:
    """``[N, M]`` IoUs: rows ``a[i]``, columns ``b[j]``."""
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
