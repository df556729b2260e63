"""True-positive flags for calibration against pycocotools' ``evalImgs`` (area all, maxDets 100).

pycocotools' ``dtMatches`` holds the matched ground truth's id (0: none) and
``dtIgnore`` marks predictions matched to a crowd region; a prediction is a
true positive when it has a match and is not ignored, counted when not
ignored.  Predictions past the 100 best of their image and class are not in
``evalImgs`` at all: they are not counted.
"""

from __future__ import annotations

import contextlib
import copy
import io

import numpy as np
import pytest

from iou_eval.analysis import calibration, coco_true_positives_from_datasets
from iou_eval.api import load
from iou_eval.data.reconcile import align

from ..conftest import ACCEPTANCE
from .synth import make_scene


def pycocotools_flags(gt: dict, preds: list, thr: float) -> tuple[np.ndarray, np.ndarray]:
    """``(is_tp[D], counted[D])`` in results-file order from ``COCOeval.evaluate``."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    is_tp = np.zeros(len(preds), dtype=bool)
    counted = np.zeros(len(preds), dtype=bool)
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO()
        cg.dataset = copy.deepcopy(gt)
        cg.createIndex()
        cd = cg.loadRes(copy.deepcopy(preds))
        ev = COCOeval(cg, cd, "bbox")
        ev.params.iouThrs = np.array([thr])
        ev.evaluate()
    n_img = len(ev.params.imgIds)
    n_area = len(ev.params.areaRng)
    for k in range(len(ev.params.catIds)):
        for i in range(n_img):
            e = ev.evalImgs[k * n_area * n_img + i]  # area range 0: all
            if e is None:
                continue
            rows = np.asarray(e["dtIds"], dtype=np.int64) - 1  # loadRes numbers results from 1
            ignored = np.asarray(e["dtIgnore"][0], dtype=bool)
            is_tp[rows] = (np.asarray(e["dtMatches"][0]) > 0) & ~ignored
            counted[rows] = ~ignored
    return is_tp, counted


def ours(gt_path: str, dt_path: str, thr: float):
    g = load(gt_path, "gt")
    al = align(g, load(dt_path, "pred"))
    is_tp, counted = coco_true_positives_from_datasets(
        al.gt, al.pred, iou_threshold=thr, gt_categories=al.n_categories
    )
    # Aligned prediction rows are the results file's rows (no unknown images here).
    assert np.array_equal(al.pred.origin, np.arange(len(al.pred)))
    return is_tp, counted, al


def assert_same_flags(gt, preds, gt_path, dt_path, thr, label):
    want_tp, want_counted = pycocotools_flags(gt, preds, thr)
    got_tp, got_counted, _ = ours(gt_path, dt_path, thr)
    for name, got, want in (("is_tp", got_tp, want_tp), ("counted", got_counted, want_counted)):
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            pytest.fail(f"{label}: {name} differs at rows {bad[:10].tolist()} "
                        f"(iou-eval {got[bad[:10]].tolist()}, pycocotools {want[bad[:10]].tolist()})")  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("thr", [0.5, 0.75, 0.3])
def test_random_scenes(seed, thr, write_json):
    gt, preds = make_scene(seed, n_images=30, zero_id=seed % 4 == 3)
    for a in gt["annotations"]:
        a["image_id"] = int(a["image_id"])
    gp, dp = write_json("gt.json", gt), write_json("dt.json", preds)
    assert_same_flags(gt, preds, gp, dp, thr, f"seed {seed} thr {thr}")


CASE04 = ACCEPTANCE / "cases" / "04_cocoapi_val2014_100_bbox_segm"


@pytest.mark.skipif(not CASE04.is_dir(), reason="acceptance cases not present")
def test_case04_flags_and_calibration():
    import json

    gp = str(CASE04 / "instances_val2014_100.json")
    dp = str(CASE04 / "instances_val2014_fakebbox100_results.json")
    with open(gp) as f:
        gt = json.load(f)
    with open(dp) as f:
        preds = json.load(f)
    assert_same_flags(gt, preds, gp, dp, 0.5, "case 04")
    is_tp, counted, al = ours(gp, dp, 0.5)
    r = calibration(al.pred.scores, al.pred.category_idx, is_tp, counted,
                    al.gt.categories.names, iou_threshold=0.5)  # fmt: skip
    assert sum(b.count for b in r.bins) == int(counted.sum())
    assert 0.0 <= r.ece <= 1.0
