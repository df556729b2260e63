"""The optional compiled mask kernel, when it was built.

``iou_eval/_rlekernel.c`` checks compressed RLE strings and computes mask
overlaps several times faster than numpy and pycocotools' Python wrapper,
with the same numbers; ``iou_eval/_rleresults.c`` reads a results list
whose masks are compressed RLEs into columns, several times faster than
msgspec's records.  An install without a C compiler has neither, and
:mod:`iou_eval.rle`, :mod:`iou_eval.masks` and :mod:`iou_eval.loaders.coco`
use numpy, pycocotools and msgspec instead.  Setting ``IOU_EVAL_NO_KERNEL=1``
makes a run use those even where the kernel exists (to compare the two, or
to rule the kernel out).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def _built(name: str) -> ModuleType | None:
    if os.environ.get("IOU_EVAL_NO_KERNEL", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None


def compiled() -> ModuleType | None:
    """The mask kernel module, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return _built("_rlekernel")


def results_reader() -> ModuleType | None:
    """The compiled results reader, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return _built("_rleresults")


def describe() -> str:
    """One line for ``--version``: which mask kernel a run uses."""
    kernel, reader = compiled() is not None, results_reader() is not None
    if kernel and reader:
        return "mask kernel: compiled (masks and the RLE results reader)"
    if kernel:
        return "mask kernel: compiled (masks; RLE results read by msgspec)"
    return "mask kernel: numpy and pycocotools (no compiled kernel in this install)"
