"""The optional compiled mask kernel (``iou_eval/geometry/_rlekernel.c``), when it was built.

It checks compressed RLE strings and computes mask overlaps several times
faster than numpy and pycocotools' Python wrapper, with the same numbers.
Without it (no C compiler at install, or ``IOU_EVAL_NO_KERNEL=1``)
:mod:`iou_eval.geometry.rle` and :mod:`iou_eval.geometry.masks` use numpy and
pycocotools instead.
"""

from __future__ import annotations

from types import ModuleType

from iou_eval.engine.compiled import load


def compiled() -> ModuleType | None:
    """The mask kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.geometry._rlekernel")
