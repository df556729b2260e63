"""The optional compiled geometry kernels, when they were built.

The mask kernel (``iou_eval/geometry/_rlekernel.c``) checks compressed RLE
strings and computes mask overlaps several times faster than numpy and
pycocotools' Python wrapper; the box kernel (``iou_eval/geometry/_boxkernel.c``)
finds the same-group box pairs that can match, with the GIL released.  The
numbers are the same.  Without them (no C compiler at install, or
``IOU_EVAL_NO_KERNEL=1``) :mod:`iou_eval.geometry.rle`,
:mod:`iou_eval.geometry.masks` and :mod:`iou_eval.geometry.boxes` use numpy
and pycocotools instead.
"""

from __future__ import annotations

from types import ModuleType

from iou_eval.engine.compiled import load


def compiled() -> ModuleType | None:
    """The mask kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.geometry._rlekernel")


def box_kernel() -> ModuleType | None:
    """The box kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.geometry._boxkernel")


def keypoint_kernel() -> ModuleType | None:
    """The keypoint (OKS) kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.geometry._kptkernel")
