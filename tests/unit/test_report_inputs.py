"""The plots' inputs of a run: taken from the result's public records, a confusion matrix when present."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iou_eval.analysis import ConfusionResult
from iou_eval.api import evaluate
from iou_eval.reporters.report import confusion_of, plot_inputs

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "coco"


def test_plot_inputs_are_the_results_arrays_and_sweeps():
    result = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))
    r = result.primary
    kw = plot_inputs(result)
    assert kw["precision"] is r.arrays.precision
    assert kw["class_names"] == ["bicycle", "car", "dog", "person", "traffic light"]
    np.testing.assert_array_equal(kw["class_gt"], [3, 7, 3, 11, 5])
    assert (kw["max_dets_index"], kw["pr_subtitle"]) == (2, "area all, maxDets 100")
    assert kw["sweeps"] is r.score_sweeps and kw["overall_sweep"] is r.pooled_sweep
    assert kw["class_ap"] == {
        n: ap for n, ap in zip(r.classes["class"], r.classes["AP"], strict=True)
    }
    assert "confusion" not in kw and confusion_of(result) is None


def test_a_confusion_matrix_on_the_result_is_drawn():
    result = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))
    matrix = np.arange(36).reshape(6, 6)
    # However a run comes to carry one (--confusion), the plots find it.
    object.__setattr__(
        result, "confusion", ConfusionResult(matrix, 0.5, 0.25, ("a", "b", "c", "d", "e"))
    )
    kw = plot_inputs(result)
    assert kw["confusion"] is not None and kw["confusion_names"] == ["a", "b", "c", "d", "e"]
    np.testing.assert_array_equal(kw["confusion"], matrix)
    object.__setattr__(result, "confusion", matrix)  # a bare matrix: the classes' names
    assert confusion_of(result)[1] == ["bicycle", "car", "dog", "person", "traffic light"]


def test_class_agnostic_runs_plot_one_curve_for_all_classes():
    result = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"), class_agnostic=True)
    kw = plot_inputs(result)
    assert kw["class_names"] == ["all classes"] and kw["precision"].shape[2] == 1
    assert list(kw["sweeps"]) == ["all classes"]
