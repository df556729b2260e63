"""The optional compiled results reader (``iou_eval/io/_rleresults.c``), when it was built.

It reads a COCO results list whose masks are compressed RLEs straight into
columns, several times faster than msgspec's records; without it (no C
compiler at install, or ``IOU_EVAL_NO_KERNEL=1``) msgspec reads such lists.
"""

from __future__ import annotations

from types import ModuleType

from iou_eval.engine.compiled import load


def results_reader() -> ModuleType | None:
    """The compiled results reader, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.io._rleresults")
