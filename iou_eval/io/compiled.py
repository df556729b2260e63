"""The optional compiled COCO JSON reader (``iou_eval/io/_cocojson.c``), when it was built.

It reads a COCO results list (boxes, scores, compressed RLE masks) and a
ground-truth dataset with boxes straight into columns, several times faster
than msgspec's records, with the GIL released; without it (no C compiler at
install, or ``IOU_EVAL_NO_KERNEL=1``) msgspec reads them.
"""

from __future__ import annotations

from types import ModuleType

from iou_eval.engine.compiled import load


def json_reader() -> ModuleType | None:
    """The compiled COCO JSON reader, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.io._cocojson")
