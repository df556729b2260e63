"""The optional compiled parts, when they were built, and whether a run uses them.

Each C extension is optional: an install without a C compiler has none, and
the same numbers come from numpy, pycocotools and msgspec.  Setting
``IOU_EVAL_NO_KERNEL=1`` makes a run use those even where an extension
exists (to compare the two paths, or to rule the compiled code out).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

# What each compiled part is, by the module it is built as.  The wings that
# use a part name it here only to say which parts an install carries.
PARTS = {
    "mask kernel": "iou_eval.geometry._rlekernel",
    "COCO JSON reader": "iou_eval.io._cocojson",
    "CSV and text column reader": "iou_eval.io._csvscan",
    "DOTA polygon IoU kernel": "iou_eval.geometry._polykernel",
    "box overlaps": "iou_eval.geometry._boxkernel",
    "keypoint overlaps": "iou_eval.geometry._kptkernel",
    "COCO core": "iou_eval.protocols._cococore",
}


def switched_off() -> bool:
    """Whether ``IOU_EVAL_NO_KERNEL`` asks for the numpy paths."""
    return os.environ.get("IOU_EVAL_NO_KERNEL", "") not in ("", "0")


def _import(dotted: str) -> ModuleType | None:
    try:
        return importlib.import_module(dotted)
    except ImportError:
        return None


def load(dotted: str) -> ModuleType | None:
    """The extension module ``dotted``, or None (not built, or switched off)."""
    return None if switched_off() else _import(dotted)


def unavailable(dotted: str) -> str | None:
    """Why :func:`load` gives None for ``dotted`` (for messages and skip reasons); None if it loads.

    ``"not built in this install"``, or, where it is built,
    ``"built but switched off by IOU_EVAL_NO_KERNEL=1 (the numpy path)"``.
    """
    if _import(dotted) is None:
        return "not built in this install"
    if switched_off():
        value = os.environ.get("IOU_EVAL_NO_KERNEL", "")
        return f"built but switched off by IOU_EVAL_NO_KERNEL={value} (the numpy path)"
    return None


def built() -> list[str]:
    """The names of the compiled parts this install carries (switched off or not)."""
    return [name for name, dotted in PARTS.items() if _import(dotted) is not None]


def describe() -> str:
    """One line per compiled part for ``--version``: built and used, switched off, or absent."""
    lines = []
    for name, dotted in PARTS.items():
        if _import(dotted) is None:
            state = "not built in this install (numpy, pycocotools and msgspec instead)"
        elif switched_off():
            state = "installed, switched off by IOU_EVAL_NO_KERNEL"
        else:
            state = "compiled, in use"
        lines.append(f"{name}: {state}")
    return "\n".join(lines)
