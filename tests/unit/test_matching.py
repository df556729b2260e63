"""COCO matching rules on tiny hand-built scenes."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, ImageTable, assemble

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


def scene(gt_boxes, preds, *, crowd=None, ignore=None, ann_id=None, gt_cls=None, pred_cls=None,
          n_images=1, gt_img=None, pred_img=None):  # fmt: skip
    """Datasets from xyxy lists; predictions are (box, score)."""
    images = ImageTable.build([f"img{i}" for i in range(n_images)])
    cats = CategoryTable(("a", "b"), ("a", "b"))
    n, m = len(gt_boxes), len(preds)
    gt = assemble(
        source="gt", fmt="test", images=images, categories=cats,
        image_idx=np.array(gt_img or [0] * n, dtype=np.int64),
        category_idx=np.array(gt_cls or [0] * n, dtype=np.int64),
        boxes=np.array(gt_boxes, dtype=float).reshape(n, 4), box_format=BoxFormat.XYXY,
        is_crowd=None if crowd is None else np.array(crowd), ignore=None if ignore is None else np.array(ignore),
        ann_id=None if ann_id is None else np.array(ann_id, dtype=np.int64),
    )  # fmt: skip
    pred = assemble(
        source="pred", fmt="test", images=images, categories=cats,
        image_idx=np.array(pred_img or [0] * m, dtype=np.int64),
        category_idx=np.array(pred_cls or [0] * m, dtype=np.int64),
        boxes=np.array([p[0] for p in preds], dtype=float).reshape(m, 4), box_format=BoxFormat.XYXY,
        score=np.array([p[1] for p in preds], dtype=float),
    )  # fmt: skip
    return gt, pred


def counts(result):
    row = result.per_class.iloc[0]
    return int(row["TP"]), int(row["FP"]), int(row["FN"])


def test_perfect_prediction():
    gt, pred = scene([[0, 0, 10, 10]], [([0, 0, 10, 10], 0.9)])
    r = evaluate(gt, pred)
    # pycocotools divides by tp + fp + eps, so a perfect AP is 1 - 2e-16.
    assert r.summary["AP"] == pytest.approx(1.0, abs=1e-12) and counts(r) == (1, 0, 0)


def test_duplicate_is_false_positive():
    """Two predictions on one ground truth: the higher score wins."""
    gt, pred = scene([[0, 0, 10, 10]], [([0, 0, 10, 10], 0.9), ([0, 0, 10, 10], 0.8)])
    r = evaluate(gt, pred)
    assert counts(r) == (1, 1, 0)
    assert r.per_image.iloc[0]["mean_IoU"] == 1.0


def test_prediction_on_crowd_is_ignored_and_crowd_is_reusable():
    """crowd [0,0,100,100] swallows two boxes inside it; neither is TP nor FP."""
    gt, pred = scene(
        [[0, 0, 100, 100]], [([0, 0, 10, 10], 0.9), ([20, 20, 30, 30], 0.8)], crowd=[True]
    )
    r = evaluate(gt, pred)
    assert counts(r) == (0, 0, 0)
    assert r.per_class.iloc[0]["gt"] == 0
    assert r.summary["AP"] is None  # no ground truth that counts


def test_regular_ground_truth_is_preferred_over_crowd():
    """A box overlapping both a regular GT (IoU 0.68) and a crowd (IoF 1) matches the regular one."""
    gt, pred = scene(
        [[0, 0, 10, 10], [0, 0, 100, 100]], [([0, 0, 10, 8], 0.9)], crowd=[False, True]
    )
    assert counts(evaluate(gt, pred)) == (1, 0, 0)


def test_annotation_id_zero_quirk_and_its_switch():
    gt, pred = scene([[0, 0, 10, 10]], [([0, 0, 10, 10], 0.9)], ann_id=[0])
    quirky = evaluate(gt, pred)
    assert counts(quirky) == (0, 1, 1)
    assert any("annotation id 0" in w for w in quirky.warnings)
    fixed = evaluate(gt, pred, zero_id_quirk=False)
    assert counts(fixed) == (1, 0, 0) and fixed.summary["AP"] == pytest.approx(1.0)


def test_ignore_flag_is_overwritten_by_default_and_honoured_on_request():
    """GT 2 is flagged ignore (not crowd); nothing predicts it."""
    gt, pred = scene(
        [[0, 0, 10, 10], [50, 50, 60, 60]], [([0, 0, 10, 10], 0.9)], ignore=[False, True]
    )
    parity = evaluate(gt, pred)
    assert counts(parity) == (1, 0, 1)
    assert any("--honour-ignore" in w for w in parity.warnings)
    honoured = evaluate(gt, pred, honour_ignore=True)
    assert counts(honoured) == (1, 0, 0) and honoured.summary["AP"] == pytest.approx(1.0)


def test_tied_iou_goes_to_the_later_ground_truth():
    """Two identical GTs: pycocotools keeps the last candidate that is not worse."""
    gt, pred = scene([[0, 0, 10, 10], [0, 0, 10, 10]], [([0, 0, 10, 10], 0.9)])
    r = evaluate(gt, pred)
    # The per-image mean IoU is 1; both GTs exist, one is matched.
    assert counts(r) == (1, 0, 1)


def test_more_than_max_dets_predictions_are_dropped():
    boxes = [([i, 0, i + 10, 10], 1.0 - i / 1000) for i in range(150)]
    gt, pred = scene([[0, 0, 10, 10]], boxes)
    r = evaluate(gt, pred)
    assert r.per_image.iloc[0]["predictions"] == 100
    assert counts(r) == (1, 99, 0)


def test_class_only_in_predictions_is_listed_with_false_positives():
    gt, pred = scene(
        [[0, 0, 10, 10]], [([0, 0, 10, 10], 0.9), ([0, 0, 10, 10], 0.8)], pred_cls=[0, 1]
    )
    r = evaluate(gt, pred)
    b = r.per_class.set_index("class").loc["b"]
    assert b["FP"] == 1 and np.isnan(b["AP"]) and "no ground truth" in b["note"]
    assert r.inputs["categories_without_predictions"] == []


def test_categories_on_one_side_only_are_reported():
    """GT has a and b; predictions have only a (b is never predicted)."""
    gt, pred = scene([[0, 0, 10, 10], [20, 20, 30, 30]], [([0, 0, 10, 10], 0.9)], gt_cls=[0, 1])
    r = evaluate(gt, pred)
    assert r.inputs["categories_without_predictions"] == ["b"]
    assert r.inputs["categories_only_in_predictions"] == []


def test_best_f1_score_threshold():
    """GT x2; predictions 0.9 TP, 0.8 FP, 0.7 TP, 0.6 FP: best F1 (0.8) keeps score >= 0.7."""
    gt, pred = scene(
        [[0, 0, 10, 10], [50, 50, 60, 60]],
        [
            ([0, 0, 10, 10], 0.9),
            ([20, 20, 30, 30], 0.8),
            ([50, 50, 60, 60], 0.7),
            ([80, 80, 90, 90], 0.6),
        ],
    )
    row = evaluate(gt, pred).per_class.iloc[0]
    assert row["best_F1"] == pytest.approx(0.8)
    assert row["best_F1_score"] == 0.7


def test_ap_invariant_to_row_order_and_renaming(write_json):
    from ..parity.synth import make_scene

    gt, preds = make_scene(5)
    base = evaluate(write_json("g.json", gt), write_json("p.json", preds)).summary
    rng = np.random.default_rng(0)
    gt2 = dict(
        gt, annotations=[gt["annotations"][i] for i in rng.permutation(len(gt["annotations"]))]
    )
    # Rename categories (keeping their order) and shuffle images.
    for c in gt2["categories"]:
        c["name"] = "renamed-" + c["name"]
    shuffled = evaluate(write_json("g2.json", gt2), write_json("p2.json", preds)).summary
    # Annotation order only breaks ties between equal-IoU ground truths; the
    # synthetic scenes have none, so the numbers are the same.
    assert shuffled == base
