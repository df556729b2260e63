"""LRP (``--protocol lrp``) against the official rules recomputed on pycocotools.

Seeded box scenes (crowd, score ties, empty images, classes without ground
truth or predictions, annotation id 0), mask scenes and keypoint scenes:
each class's oLRP, its three parts and its threshold must be the same bits
as :mod:`.lrp_reference` gives, and so must the four means.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from iou_eval import evaluate

from .lrp_reference import official_lrp, run_cocoeval
from .synth import make_scene
from .test_keypoints_parity import make_keypoint_scene
from .test_segm_parity import H, W, make_segm_scene

COLUMNS = {
    "olrp": "oLRP",
    "loc": "oLRP_Loc",
    "fp": "oLRP_FP",
    "fn": "oLRP_FN",
    "thr": "oLRP_threshold",
}


def assert_same_lrp(result, ref: dict, label: str) -> None:
    """Per-class columns and the summary, bit for bit (NaN where both are undefined)."""
    r = next(p for p in result.results if p.protocol.name == "lrp")
    k = len(ref["olrp"])
    for name, column in COLUMNS.items():
        ours = np.asarray(r.classes[column][:k], dtype=np.float64)
        theirs = np.where(ref[name] == -1, np.nan, ref[name])  # -1: no ground truth
        if not np.array_equal(ours, theirs, equal_nan=True):
            pytest.fail(
                f"{label}: {column}\n iou-eval  {ours.tolist()}\n reference {theirs.tolist()}"
            )
    for key in ("moLRP", "moLRP_Loc", "moLRP_FP", "moLRP_FN"):
        assert r.summary[key] == ref[key], f"{label}: {key} {r.summary[key]!r} != {ref[key]!r}"


@pytest.mark.parametrize("seed", range(6))
def test_seeded_box_scenes_equal_the_official_rules(seed, write_json):
    gt, preds = make_scene(seed, zero_id=seed == 3)
    for a in gt["annotations"]:
        a["image_id"] = int(a["image_id"])
    ours = evaluate(write_json("gt.json", gt), write_json("preds.json", preds), protocol="lrp")
    assert_same_lrp(ours, official_lrp(run_cocoeval(gt, preds, "bbox")), f"seed {seed}")


def test_scores_tied_on_three_decimals_cut_inside_a_run(write_json):
    """Scores rounded to one decimal: long runs of equal scores, every position evaluated."""
    gt, preds = make_scene(11, tie_decimals=1)
    for a in gt["annotations"]:
        a["image_id"] = int(a["image_id"])
    ours = evaluate(write_json("gt.json", gt), write_json("preds.json", preds), protocol="lrp")
    assert_same_lrp(ours, official_lrp(run_cocoeval(gt, preds, "bbox")), "ties")


@pytest.mark.parametrize("seed", range(3))
def test_seeded_mask_scenes_equal_the_official_rules(seed, write_json):
    gt, results = make_segm_scene(seed)
    # pycocotools cannot read an empty polygon list: give it the empty mask iou-eval reads.
    ref_gt = copy.deepcopy(gt)
    for a in ref_gt["annotations"]:
        if a["segmentation"] == []:
            a["segmentation"] = {"size": [H, W], "counts": [H * W]}
    ours = evaluate(
        write_json("gt.json", gt), write_json("preds.json", results), protocol="lrp",
        iou_type="segm",
    )  # fmt: skip
    ref = official_lrp(run_cocoeval(ref_gt, results, "segm"))
    assert_same_lrp(ours, ref, f"segm seed {seed}")


@pytest.mark.parametrize("seed", range(3))
def test_seeded_keypoint_scenes_equal_the_official_rules(seed, write_json):
    gt, results = make_keypoint_scene(seed)
    ours = evaluate(
        write_json("gt.json", gt), write_json("preds.json", results), protocol="lrp",
        iou_type="keypoints",
    )  # fmt: skip
    ref = official_lrp(run_cocoeval(gt, results, "keypoints"))
    assert_same_lrp(ours, ref, f"keypoints seed {seed}")
