"""Error analysis: why a detector misses, as pure functions over numpy columns.

* :func:`tide` — TIDE's six error types as the AP gained by fixing each
  (tidecv 1.0.1's numbers);
* :func:`confusion_matrix` — which class each ground truth was detected as;
* :func:`calibration` — reliability bins and expected calibration error of
  the scores, from true-positive flags (:func:`coco_true_positives`).

Each takes ground truth and predictions as columns in one vocabulary (see
:mod:`iou_eval.analysis.common`), or two aligned datasets (``*_from_datasets``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.analysis.calibration import (
        CalibrationBin,
        CalibrationResult,
        ClassCalibration,
        calibration,
        coco_true_positives,
        coco_true_positives_from_datasets,
    )
    from iou_eval.analysis.common import Overlaps, box_overlaps
    from iou_eval.analysis.confusion import (
        ConfusedPair,
        ConfusionResult,
        confusion_matrix,
        confusion_matrix_from_datasets,
        most_confused,
    )
    from iou_eval.analysis.tide import TideErrors, TideResult, tide, tide_from_datasets

# Each public name -> the module that defines it, read on first use: a run that
# asks for no analysis reads none of them (the result records live in ``records``).
_HOME = {
    **dict.fromkeys(
        ("CalibrationBin", "CalibrationResult", "ClassCalibration", "calibration",
         "coco_true_positives", "coco_true_positives_from_datasets"),
        "calibration",
    ),
    **dict.fromkeys(("Overlaps", "box_overlaps"), "common"),
    **dict.fromkeys(
        ("ConfusedPair", "ConfusionResult", "confusion_matrix", "confusion_matrix_from_datasets",
         "most_confused"),
        "confusion",
    ),
    **dict.fromkeys(("TideErrors", "TideResult", "tide", "tide_from_datasets"), "tide"),
}  # fmt: skip


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


class _Wing(types.ModuleType):
    """This package: ``tide`` and ``calibration`` name functions here, as they always did,
    although modules below have the same names (reading a module would otherwise make
    the package's attribute that module)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _HOME:
            return  # the function of that name (:func:`__getattr__`) keeps it
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Wing

__all__ = [
    "CalibrationBin",
    "CalibrationResult",
    "ClassCalibration",
    "ConfusedPair",
    "ConfusionResult",
    "Overlaps",
    "TideErrors",
    "TideResult",
    "box_overlaps",
    "calibration",
    "coco_true_positives",
    "coco_true_positives_from_datasets",
    "confusion_matrix",
    "confusion_matrix_from_datasets",
    "most_confused",
    "tide",
    "tide_from_datasets",
]
