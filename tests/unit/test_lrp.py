"""LRP's rules on tiny hand-built scenes (``iou_eval.protocols.lrp``)."""

from __future__ import annotations

import math

import pytest

from iou_eval import evaluate
from iou_eval.errors import UsageError

# LRP's rules on both paths: the compiled core and the numpy reference.
pytestmark = pytest.mark.usefixtures("kernel_path")


def _scene(write_json, anns, preds, cats=("a", "b")):
    images = [{"id": i, "width": 100, "height": 100, "file_name": f"{i}.jpg"} for i in (1, 2)]
    categories = [{"id": k + 1, "name": n} for k, n in enumerate(cats)]
    gt = {"images": images, "annotations": anns, "categories": categories}
    return write_json("gt.json", gt), write_json("preds.json", preds)


def _gt(i, img, cat, box, crowd=0):
    return {"id": i, "image_id": img, "category_id": cat, "bbox": box, "area": box[2] * box[3],
            "iscrowd": crowd}  # fmt: skip


def _dt(img, cat, box, score):
    return {"image_id": img, "category_id": cat, "bbox": box, "score": score}


def test_perfect_detections_give_olrp_zero(write_json):
    """Two objects of class a, each found exactly: no localisation, FP or FN error."""
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10]), _gt(2, 2, 1, [5, 5, 20, 20])],
                    [_dt(1, 1, [0, 0, 10, 10], 0.9), _dt(2, 1, [5, 5, 20, 20], 0.8)])  # fmt: skip
    r = evaluate(gt, pr, protocol="lrp")
    row = r.per_class.set_index("class").loc["a"]
    assert row["oLRP"] == 0.0 and row["oLRP_FP"] == 0.0 and row["oLRP_FN"] == 0.0
    assert row["oLRP_threshold"] == 0.8
    # Class b has no ground truth: left out of every mean.
    assert math.isnan(r.per_class.set_index("class").loc["b"]["oLRP"])
    assert r.summary["moLRP"] == 0.0


def test_a_class_without_true_positive_has_olrp_one_and_undefined_parts(write_json):
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10]), _gt(2, 1, 2, [50, 50, 10, 10])],
                    [_dt(1, 1, [0, 0, 10, 10], 0.9), _dt(1, 2, [0, 0, 10, 10], 0.7)])  # fmt: skip
    r = evaluate(gt, pr, protocol="lrp")
    b = r.per_class.set_index("class").loc["b"]
    assert b["oLRP"] == 1.0 and b["oLRP_FN"] == 1.0
    assert math.isnan(b["oLRP_Loc"]) and math.isnan(b["oLRP_FP"])
    assert math.isnan(b["oLRP_threshold"])
    # moLRP counts b (1.0) beside a (0.0); Loc and FP average a's defined values only.
    assert r.summary["moLRP"] == 0.5
    assert r.summary["moLRP_Loc"] == 0.0 and r.summary["moLRP_FP"] == 0.0
    assert r.summary["moLRP_FN"] == 0.5


def test_a_crowd_only_class_is_left_out_of_the_means(write_json):
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10]), _gt(2, 1, 2, [0, 0, 50, 50], 1)],
                    [_dt(1, 1, [0, 0, 10, 10], 0.9), _dt(1, 2, [0, 0, 10, 10], 0.7)])  # fmt: skip
    r = evaluate(gt, pr, protocol="lrp")
    assert math.isnan(r.per_class.set_index("class").loc["b"]["oLRP"])
    assert r.summary["moLRP"] == 0.0


def test_the_optimum_may_fall_inside_a_run_of_equal_scores(write_json):
    """Image 1: a true positive (IoU 1) then a false positive, both scored 0.5.

    At the first position LRP is (0 + 0 + 0) / 1 = 0; after both, (0 + 1 + 0) / 2.
    Cutting only where the score changes would see the second position only.
    """
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10])],
                    [_dt(1, 1, [0, 0, 10, 10], 0.5), _dt(1, 1, [60, 60, 10, 10], 0.5)])  # fmt: skip
    r = evaluate(gt, pr, protocol="lrp")
    assert r.summary["moLRP"] == 0.0
    assert r.per_class.set_index("class").loc["a"]["oLRP_threshold"] == 0.5


def test_localisation_error_is_normalised_by_one_minus_the_threshold(write_json):
    """One match of IoU 0.75 (a 10x10 box against 10x7.5): LRP = (0.25 / 0.5) / 1 = 0.5,
    Loc = 0.25 (not divided by 0.5)."""
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10])], [_dt(1, 1, [0, 0, 10, 7.5], 0.9)])
    r = evaluate(gt, pr, protocol="lrp")
    a = r.per_class.set_index("class").loc["a"]
    assert a["oLRP"] == 0.5 and a["oLRP_Loc"] == 0.25


def test_lrp_refuses_the_coco_grid_options(write_json):
    gt, pr = _scene(write_json, [_gt(1, 1, 1, [0, 0, 10, 10])], [_dt(1, 1, [0, 0, 10, 10], 0.9)])
    with pytest.raises(UsageError, match="--protocol lrp: --iou-thrs"):
        evaluate(gt, pr, protocol="lrp", iou_thresholds=(0.5, 0.75))
    with pytest.raises(UsageError, match="--iou-type boundary"):
        evaluate(gt, pr, protocol="lrp", iou_type="boundary")
