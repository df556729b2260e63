"""The ``iou-eval iou`` calculator: boxes from the command line or from files, and its output."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from iou_eval.errors import InputError, UsageError
from iou_eval.numbers import is_number_token, quote_token

DECIMALS = 6


def parse_box(text: str) -> list[float]:
    """``"10,10,50,50"`` -> four floats."""
    if text.startswith("--") or (
        text.startswith("-") and not text[1:2].isdigit() and text[1:2] != "."
    ):
        # Unknown options reach here as boxes (negative boxes must get through).
        raise UsageError(f"no such option: {text}", hint="iou-eval iou --help lists the options")
    parts = [p for p in text.replace(" ", "").split(",") if p != ""]
    # ASCII numbers only: float() would also read '١٠' and '1_0'.
    values = [float(p) for p in parts] if all(map(is_number_token, parts)) else []
    if len(values) != 4:
        raise UsageError(
            f"box {quote_token(text)}: expected 4 comma-separated numbers like 10,10,50,50",
            hint="negative numbers are fine (-5,0,10,10); options go before or after the boxes",
        )
    return values


def _json_boxes(path: str, text: str) -> np.ndarray:
    from iou_eval.io.loaders.common import decode_json

    doc = decode_json(text.encode("utf-8"), path)
    if isinstance(doc, list) and len(doc) == 4 and all(map(_finite_number, doc)):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(
            path,
            f"expected a JSON array of boxes [[x1, y1, x2, y2], ...], got {type(doc).__name__}",
        )
    for i, box in enumerate(doc):
        ok = isinstance(box, list) and len(box) == 4
        if not ok or not all(map(_finite_number, box)):
            raise InputError(
                path, f"a box is 4 numbers, got {json.dumps(box)[:60]}", where=f"[{i}]"
            )
    return np.asarray(doc, dtype=np.float64).reshape(-1, 4)


def _finite_number(v: object) -> bool:
    # An integer beyond float's range (JSON allows any) is not a coordinate either.
    return isinstance(v, (int, float)) and not isinstance(v, bool) and -1e308 <= v <= 1e308


def _csv_boxes(path: str, text: str) -> np.ndarray:
    rows: list[list[float]] = []
    reader = csv.reader(io.StringIO(text))
    try:
        lines = list(reader)
    except csv.Error as exc:  # a cell beyond the csv module's field limit
        raise InputError(path, f"cannot read as CSV: {exc}", where=reader.line_num) from None
    for line_no, row in enumerate(lines, start=1):
        cells = [c.strip() for c in row if c.strip() != ""]
        if not cells:
            continue
        if not all(map(is_number_token, cells)):
            if not rows and line_no == 1:  # a header line
                continue
            raise InputError(
                path, f"expected 4 numbers, got {quote_token(','.join(cells))}", where=line_no
            )
        values = [float(c) for c in cells]
        if len(values) != 4:
            raise InputError(path, f"a box is 4 numbers, got {len(values)}", where=line_no)
        rows.append(values)
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


def read_boxes(path: str) -> np.ndarray:
    """Boxes ``[N, 4]`` from a JSON array of 4-number arrays or a CSV of 4 columns (header optional)."""
    from iou_eval.io.loaders.common import read_bytes
    from iou_eval.io.source import decode_text

    text = decode_text(read_bytes(path), path)
    if text.lstrip().startswith(("[", "{")):
        return _json_boxes(path, text)
    return _csv_boxes(path, text)
