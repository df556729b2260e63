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
