"""TIDE on a hand-built scene: one error of each kind, literal numbers."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.analysis import box_overlaps, tide
from iou_eval.analysis.tide import BKG, BOTH, CLS, DUPE, LOC, NO_ERROR

# One image, classes 0 = cat, 1 = dog (x from 0 to 120, boxes 10 high):
#
#   g0 cat [0,10]    g1 cat [20,30]   g2 dog [40,50]   g3 cat [60,70]   crowd cat [100,200]
#   p0 cat [0,10]    p2 cat [25,35]   p3 cat [40,50]   p5 dog [65,75]   p6 cat [110,120]
#   p1 cat [0,10]                                       p4 dog far away (300, 300)
#
#   p0 .9 true positive on g0     p1 .8 duplicate of g0       p2 .7 localisation (IoU 1/3 on g1)
#   p3 .6 classification on g2    p4 .5 background            p5 .4 both (IoU 1/3 on cat g3)
#   p6 .3 inside the cat crowd: ignored, and a background error
#   g3 missed; g1, g2 are not (an error points at each).
GT = {
    "gt_image": [0, 0, 0, 0, 0],
    "gt_category": [0, 0, 1, 0, 0],
    "gt_xyxy": [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10],
                [100, 0, 200, 100]],
    "gt_crowd": [False, False, False, False, True],
}  # fmt: skip
PRED = {
    "pred_image": [0] * 7,
    "pred_category": [0, 0, 0, 0, 1, 1, 0],
    "pred_xyxy": [[0, 0, 10, 10], [0, 0, 10, 10], [25, 0, 35, 10], [40, 0, 50, 10],
                  [300, 300, 310, 310], [65, 0, 75, 10], [110, 10, 120, 20]],
    "pred_score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],
}  # fmt: skip


def columns(**changes):
    cols = {k: np.asarray(v) for k, v in {**GT, **PRED}.items()}
    cols["gt_xyxy"] = cols["gt_xyxy"].astype(np.float64)
    cols["pred_xyxy"] = cols["pred_xyxy"].astype(np.float64)
    cols.update(num_images=1, num_categories=2)
    cols.update(changes)
    return cols


def test_hand_scene_classifies_every_error_type():
    r = tide(**columns())
    assert r.pred_error.tolist() == [NO_ERROR, DUPE, LOC, CLS, BKG, BOTH, BKG]
    assert r.gt_missed.tolist() == [False, False, False, True, False]
    assert r.counts.as_dict() == {"cls": 1, "loc": 1, "both": 1, "dupe": 1, "bkg": 2, "miss": 1}


def test_hand_scene_dap_literals():
    """Worked by hand: cat AP = 34/101 (precision 1 up to recall 1/3), dog AP = 0."""
    r = tide(**columns())
    assert r.ap == pytest.approx(34 / 101 * 50)
    # Cls: p3 becomes dog's only point, a true positive: dog AP 100.
    assert r.dap.cls == pytest.approx(50.0)
    # Loc: p2 a true positive: 33 more recall points (0.34..0.66) at precision 2/3.
    assert r.dap.loc == pytest.approx(33 * (2 / 3) / 101 * 50)
    # Miss: cat counts 2 ground truths; recall 1/2 at precision 1.
    assert r.dap.miss == pytest.approx((51 - 34) / 101 * 50)
    assert (r.dap.both, r.dap.dupe, r.dap.bkg) == (0.0, 0.0, 0.0)
    # FP: the only true positive already ranks first.  FN: cat counts 1 ground truth.
    assert r.fp_dap == pytest.approx(0.0, abs=1e-12)
    assert r.fn_dap == pytest.approx(50.0 - 34 / 101 * 50)


def test_hand_scene_matches_tidecv():
    pytest.importorskip("tidecv")
    from tidecv import TIDE, Data

    gt, dt = Data("gt"), Data("dt")
    for c in (0, 1):
        gt.add_class(c, f"c{c}")
    gt.add_image(0, "0.jpg")
    for cat, (x1, y1, x2, y2), crowd in zip(
        GT["gt_category"], GT["gt_xyxy"], GT["gt_crowd"], strict=True
    ):
        box = [x1, y1, x2 - x1, y2 - y1]
        if crowd:
            gt.add_ignore_region(0, cat, box)
        else:
            gt.add_ground_truth(0, cat, box)
    for cat, (x1, y1, x2, y2), s in zip(
        PRED["pred_category"], PRED["pred_xyxy"], PRED["pred_score"], strict=True
    ):
        dt.add_detection(0, cat, s, [x1, y1, x2 - x1, y2 - y1])
    t = TIDE()
    run = t.evaluate(gt, dt, mode=TIDE.BOX)
    main = t.get_main_errors()["dt"]
    r = tide(**columns())
    assert r.ap == pytest.approx(run.ap, abs=1e-9)
    ours = r.dap.as_dict()
    for short, name in zip(("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss"), ours, strict=True):
        assert ours[name] == pytest.approx(main[short], abs=1e-9), name


def test_overlaps_come_through_the_parameter():
    """A geometry that scales every overlap by 0.4 turns the true positive into a near miss."""
    cols = columns()
    boxes = box_overlaps(cols["pred_xyxy"], cols["gt_xyxy"], cols["gt_crowd"])
    seen = []

    def shrunk(pred_rows, gt_rows):
        seen.append(len(pred_rows))
        return boxes(pred_rows, gt_rows) * 0.4

    r = tide(**cols, overlaps=shrunk)
    assert seen and r.pred_error[0] == LOC
    assert tide(**cols, overlaps=boxes).pred_error.tolist() == tide(**cols).pred_error.tolist()


def test_more_than_max_dets_predictions_in_an_image_are_not_scored():
    r = tide(**columns(), max_dets=3)
    assert r.pred_error.tolist() == [NO_ERROR, DUPE, LOC, NO_ERROR, NO_ERROR, NO_ERROR, NO_ERROR]
    # Only cat's points remain; dog keeps its ground truth: AP (34/101*100 + 0) / 2 again.
    assert r.ap == pytest.approx(34 / 101 * 50)


def test_no_predictions_every_ground_truth_is_missed():
    empty = {
        "pred_image": np.zeros(0, np.int64),
        "pred_category": np.zeros(0, np.int64),
        "pred_xyxy": np.zeros((0, 4)),
        "pred_score": np.zeros(0),
    }
    r = tide(**columns(**empty))
    assert r.ap == 0.0 and r.counts.miss == 4
    # Fixing every miss leaves no ground truth and no prediction: tidecv's mean
    # over no class divides by zero, so that dAP (and the FN one) is undefined.
    assert r.dap.miss is None and r.fn_dap is None
    assert (r.dap.cls, r.dap.loc, r.dap.both, r.dap.dupe, r.dap.bkg) == (0.0,) * 5
    assert r.fp_dap == 0.0
    assert r.to_dict()["dap"]["miss"] is None


def test_no_ground_truth_and_no_predictions_every_number_is_undefined():
    empty = {
        "gt_image": np.zeros(0, np.int64),
        "gt_category": np.zeros(0, np.int64),
        "gt_xyxy": np.zeros((0, 4)),
        "gt_crowd": np.zeros(0, bool),
        "pred_image": np.zeros(0, np.int64),
        "pred_category": np.zeros(0, np.int64),
        "pred_xyxy": np.zeros((0, 4)),
        "pred_score": np.zeros(0),
    }
    r = tide(**columns(**empty))
    assert r.ap is None and r.fp_dap is None and r.fn_dap is None
    assert set(r.dap.as_dict().values()) == {None}


def test_no_ground_truth_every_prediction_is_background():
    empty = {
        "gt_image": np.zeros(0, np.int64),
        "gt_category": np.zeros(0, np.int64),
        "gt_xyxy": np.zeros((0, 4)),
        "gt_crowd": np.zeros(0, bool),
    }
    r = tide(**columns(**empty))
    assert r.counts.bkg == 7 and r.ap == 0.0


def test_columns_are_checked():
    with pytest.raises(
        ValueError, match=r"gt_category\[2\] = 1 is outside \[0, num_categories=1\)"
    ):
        tide(**columns(num_categories=1))
    with pytest.raises(ValueError, match=r"gt_xyxy: expected shape \(5, 4\)"):
        tide(**columns(gt_xyxy=np.zeros((5, 3))))
    with pytest.raises(ValueError, match="image_order: expected a permutation"):
        tide(**columns(), image_order=[1])
