"""The optional compiled readers, when they were built: the COCO JSON reader
(``iou_eval/io/_cocojson.c``) and the CSV and text column reader
(``iou_eval/io/_csvscan.c``).

It reads a COCO results list (boxes, scores, compressed RLE masks,
keypoints) and a ground-truth dataset with boxes (keypoints, and LVIS's
per-image category lists and category frequencies) straight into columns,
several times faster than msgspec's records, with the GIL released; without
it (no C compiler at install, or ``IOU_EVAL_NO_KERNEL=1``) msgspec reads
them.  The column reader reads Open Images CSV and DOTA text into numpy
columns; without it the Python readers (the reference) read them.  Both
convert numbers with one header, ``iou_eval/io/_numparse.h``.
"""

from __future__ import annotations

from types import ModuleType

from iou_eval.engine.compiled import load


def json_reader() -> ModuleType | None:
    """The compiled COCO JSON reader, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.io._cocojson")


def csv_reader() -> ModuleType | None:
    """The compiled CSV and text column reader, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.io._csvscan")
