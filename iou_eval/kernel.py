"""The optional compiled mask kernel (``iou_eval/_rlekernel.c``), when it was built.

It checks compressed RLE strings and computes mask overlaps several times
faster than numpy and pycocotools' Python wrapper, with the same numbers.
An install without a C compiler has no kernel, and :mod:`iou_eval.rle` and
:mod:`iou_eval.masks` use numpy and pycocotools instead.  Setting
``IOU_EVAL_NO_KERNEL=1`` makes a run use those even where the kernel exists
(to compare the two, or to rule the kernel out).
"""

from __future__ import annotations

import os
from types import ModuleType


def compiled() -> ModuleType | None:
    """The kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    if os.environ.get("IOU_EVAL_NO_KERNEL", "") not in ("", "0"):
        return None
    try:
        from . import _rlekernel
    except ImportError:
        return None
    return _rlekernel


def describe() -> str:
    """One line for ``--version``: which mask kernel a run uses."""
    if compiled() is not None:
        return "mask kernel: compiled"
    return "mask kernel: numpy and pycocotools (no compiled kernel in this install)"
