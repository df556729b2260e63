"""LRP (``--protocol lrp``) on the acceptance cases 04 (bbox, segm) and 12 (keypoints).

The expected moLRP are those of the official LRP-Error implementation.  Case
04's masks have a class whose optimum falls inside a run of equal scores:
cutting only where the score changes would give 0.66733.
"""

from __future__ import annotations

import pytest

from iou_eval import evaluate

from .helpers import case_dir

CASES = [
    ("04_cocoapi_val2014_100_bbox_segm", "instances_val2014_100.json",
     "instances_val2014_fakebbox100_results.json", "bbox", 0.501486957395),
    ("04_cocoapi_val2014_100_bbox_segm", "instances_val2014_100.json",
     "instances_val2014_fakesegm100_results.json", "segm", 0.667270390267),
    ("12_fce_keypoints", "gt_dataset.json", "dt_dataset.json", "keypoints", 0.536195420796),
]  # fmt: skip


@pytest.mark.parametrize(
    "case, gt, dt, iou_type, molrp", CASES, ids=["04-bbox", "04-segm", "12-kpt"]
)
def test_molrp_of_the_official_implementation(case, gt, dt, iou_type, molrp):
    d = case_dir(case)
    r = evaluate(str(d / gt), str(d / dt), protocol="lrp", iou_type=iou_type)
    assert r.summary["moLRP"] == pytest.approx(molrp, abs=5e-13)
    # Lower is better, and every part is a fraction.
    for key in ("moLRP", "moLRP_Loc", "moLRP_FP", "moLRP_FN"):
        assert 0.0 <= r.summary[key] <= 1.0


def test_04_segm_optimum_inside_a_run_of_equal_scores():
    """Cutting only where the score changes would miss the optimum (0.66733 instead)."""
    d = case_dir("04_cocoapi_val2014_100_bbox_segm")
    r = evaluate(
        str(d / "instances_val2014_100.json"),
        str(d / "instances_val2014_fakesegm100_results.json"),
        protocol="lrp",
        iou_type="segm",
    )
    assert r.summary["moLRP"] < 0.66733 - 5e-5
