"""TIDE parity with the ``tidecv`` package (1.0.1), run as its README shows.

``TIDE().evaluate(datasets.COCO(gt), datasets.COCOResult(dt), mode=TIDE.BOX)``
on the acceptance cases with boxes and on seeded scenes holding every error
type; base AP, the six main dAPs, the FP/FN dAPs (1e-6) and the error counts
(exactly) must agree.  tidecv 1.0.1 runs on numpy 2 as it is (no ``np.float``
on the paths used), so no shim is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iou_eval.analysis import tide_from_datasets
from iou_eval.api import load
from iou_eval.data.reconcile import align

from ..conftest import ACCEPTANCE
from .error_scenes import make_error_scene

tidecv = pytest.importorskip("tidecv", reason="tidecv is a dev extra (pip install -e '.[dev]')")

NAMES = ("cls", "loc", "both", "dupe", "bkg", "miss")
SHORT = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")


def run_tidecv(gt_path: str, dt_path: str) -> dict:
    """tidecv's numbers for two COCO files."""
    from tidecv import TIDE, datasets

    t = TIDE()
    run = t.evaluate(datasets.COCO(gt_path), datasets.COCOResult(dt_path), mode=TIDE.BOX)
    main = next(iter(t.get_main_errors().values()))
    special = next(iter(t.get_special_errors().values()))
    counts = {e.short_name: n for e, n in run.count_errors().items()}
    return {
        "ap": run.ap,
        "dap": [main[s] for s in SHORT],
        "fp": special["FalsePos"],
        "fn": special["FalseNeg"],
        "counts": [counts[s] for s in SHORT],
    }


def run_ours(gt_path: str, dt_path: str):
    gt = load(gt_path, "gt")
    al = align(gt, load(dt_path, "pred"))
    # tidecv visits images in the file's order; iou-eval's vocabulary is by id.
    file_pos = {im["id"]: i for i, im in enumerate(json.loads(Path(gt_path).read_text())["images"])}
    order = np.array([file_pos[k] for k in al.gt.images.ids], dtype=np.int64)
    return tide_from_datasets(al.gt, al.pred, image_order=order)


def assert_same_as_tidecv(gt_path: str, dt_path: str, label: str):
    ref = run_tidecv(gt_path, dt_path)
    r = run_ours(gt_path, dt_path)
    ours = {
        "ap": r.ap,
        "dap": [getattr(r.dap, n) for n in NAMES],
        "fp": r.fp_dap,
        "fn": r.fn_dap,
        "counts": [getattr(r.counts, n) for n in NAMES],
    }
    diffs = [abs(ours["ap"] - ref["ap"]), abs(ours["fp"] - ref["fp"]), abs(ours["fn"] - ref["fn"])]
    diffs += [abs(a - b) for a, b in zip(ours["dap"], ref["dap"], strict=True)]
    assert max(diffs) < 1e-6 and ours["counts"] == ref["counts"], (
        f"{label}\n iou-eval {ours}\n tidecv   {ref}"
    )
    return r


CASE04 = ACCEPTANCE / "cases" / "04_cocoapi_val2014_100_bbox_segm"
CASE06 = ACCEPTANCE / "cases" / "06_detectron2_coco_val_snippet"


@pytest.mark.skipif(not CASE04.is_dir(), reason="acceptance cases not present")
def test_case04_matches_tidecv_and_its_published_figures():
    r = assert_same_as_tidecv(
        str(CASE04 / "instances_val2014_100.json"),
        str(CASE04 / "instances_val2014_fakebbox100_results.json"),
        "case 04",
    )
    got = [r.ap, r.dap.cls, r.dap.loc, r.dap.both, r.dap.dupe, r.dap.bkg, r.dap.miss]
    want = [64.205, 22.2460, 0.2279, 0.0, 0.0190, 0.0, 8.5236]
    assert np.allclose(got, want, atol=5e-4), got
    assert abs(r.fp_dap - 6.8216) < 5e-5 and abs(r.fn_dap - 17.6850) < 5e-5
    assert r.unit == "AP points (0-100) at IoU 0.5, tidecv rules"


@pytest.mark.skipif(not CASE06.is_dir(), reason="acceptance cases not present")
def test_case06_matches_tidecv():
    assert_same_as_tidecv(str(CASE06 / "gt.json"), str(CASE06 / "detections.json"), "case 06")


@pytest.mark.parametrize("seed", range(12))
def test_random_error_scenes_match_tidecv(seed, write_json):
    gt, preds = make_error_scene(seed)
    r = assert_same_as_tidecv(
        write_json("gt.json", gt), write_json("dt.json", preds), f"seed {seed}"
    )
    # The scenes are built to hold every error type; most seeds show all six.
    if seed < 4:
        assert min(getattr(r.counts, n) for n in NAMES) > 0, r.counts


def test_image_order_decides_ties_across_images(write_json):
    """Equal scores of one class in two images: tidecv ranks them in the file's image order."""
    gt = {
        "images": [
            {"id": 2, "width": 100, "height": 100, "file_name": "2.jpg"},
            {"id": 1, "width": 100, "height": 100, "file_name": "1.jpg"},
        ],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0, "segmentation": [[0, 0, 10, 0, 10, 10, 0, 10]]},
            {"id": 2, "image_id": 2, "category_id": 1, "bbox": [50, 50, 10, 10], "area": 100,
             "iscrowd": 0, "segmentation": [[50, 50, 60, 50, 60, 60, 50, 60]]},
        ],
        "categories": [{"id": 1, "name": "a"}],
    }  # fmt: skip
    preds = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},  # TP
        {"image_id": 2, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},  # FP
    ]
    r = assert_same_as_tidecv(write_json("gt.json", gt), write_json("dt.json", preds), "ties")
    # Image 2 comes first in the file: its false positive ranks before the
    # true positive, so precision at recall 0.5 is 1/2.
    assert r.ap == pytest.approx(50.0 * 51 / 101)


def test_a_fix_that_leaves_no_class_is_undefined_where_tidecv_divides_by_zero(write_json):
    """One cat and one prediction inside a cat crowd region (ignored): fixing the miss
    leaves no ground truth and no prediction; tidecv's mean over no class raises."""
    square = [[0, 0, 10, 0, 10, 10, 0, 10]]
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100, "file_name": "a.jpg"}],
        "categories": [{"id": 1, "name": "cat"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0, "segmentation": square},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [50, 50, 40, 40], "area": 1600,
             "iscrowd": 1, "segmentation": [[50, 50, 90, 50, 90, 90, 50, 90]]},
        ],
    }  # fmt: skip
    dt = [{"image_id": 1, "category_id": 1, "bbox": [55, 55, 30, 30], "score": 0.9}]
    gt_path, dt_path = write_json("gt.json", gt), write_json("dt.json", dt)
    with pytest.raises(ZeroDivisionError):
        run_tidecv(gt_path, dt_path)
    r = run_ours(gt_path, dt_path)
    assert r.ap == 0.0 and r.counts.miss == 1
    assert r.dap.miss is None and r.fn_dap is None
    assert [getattr(r.dap, n) for n in NAMES[:5]] == [0.0] * 5 and r.fp_dap == 0.0
