"""Custom area ranges in the summary: ``AP[label]`` / ``AR[label]`` equal pycocotools'.

pycocotools computes every range of ``params.areaRng`` into its arrays but its
``summarize`` prints only small, medium and large.  The summary statistic of a
custom range is read as ``summarize`` reads APs and ARs: IoU .50:.95, the third
maxDets, the mean of the entries > -1 of that range's slice.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.options import AreaRange

from .synth import make_scene, run_pycocotools

# Mixed: two custom ranges below COCO's own three (which keep their names).
RANGES = [
    AreaRange("nano", 0.0, 64.0),
    AreaRange("micro", 64.0, 256.0),
    AreaRange("small", 256.0, 32.0**2),
    AreaRange("medium", 32.0**2, 96.0**2),
    AreaRange("large", 96.0**2, 1e5**2),
]
KEYS = {"nano": "[nano]", "micro": "[micro]", "small": "s", "medium": "m", "large": "l"}


def _reference_mean(values: np.ndarray) -> float | None:
    """pycocotools' ``_summarize``: the mean of the entries > -1, -1 (here None) when none."""
    kept = values[values > -1]
    return float(np.mean(kept)) if kept.size else None


@pytest.mark.parametrize("seed", range(700, 703))
def test_custom_area_ranges_are_summarized_by_label_as_pycocotools_arrays(seed, write_json):
    gt, preds = make_scene(seed)
    ours = evaluate(write_json("gt.json", gt), write_json("preds.json", preds), area_ranges=RANGES)
    ref = run_pycocotools(
        gt,
        preds,
        areaRng=[[0, 1e5**2]] + [[r.lo, r.hi] for r in RANGES],
        areaRngLbl=["all"] + [r.label for r in RANGES],
    )
    assert np.array_equal(ours.primary.arrays.precision, ref["precision"])
    m = 2  # summarize reads its area statistics at maxDets[2] (100)
    for a, r in enumerate(RANGES, start=1):
        for head, expected in (
            ("AP", _reference_mean(ref["precision"][:, :, :, a, m])),
            ("AR", _reference_mean(ref["recall"][:, :, a, m])),
        ):
            key = head + KEYS[r.label]
            assert key in ours.summary, f"{key} missing from {list(ours.summary)}"
            assert ours.summary[key] == expected, (
                f"seed {seed} {key}: iou-eval {ours.summary[key]!r}, pycocotools {expected!r}"
            )
    # The micro range holds ground truth in these scenes: a number, not n/a.
    assert ours.summary["AP[micro]"] is not None


def test_custom_area_ranges_replace_the_coco_rows_not_leave_them_undefined(write_json):
    """``tiny`` and ``big`` only: no APs ... ARl rows left over as undefined."""
    gt, preds = make_scene(703)
    ranges = [AreaRange("tiny", 0.0, 32.0**2), AreaRange("big", 32.0**2, 1e5**2)]
    ours = evaluate(write_json("gt.json", gt), write_json("preds.json", preds), area_ranges=ranges)
    assert list(ours.summary) == [
        "AP", "AP50", "AP75", "AP[tiny]", "AP[big]",
        "AR1", "AR10", "AR100", "AR[tiny]", "AR[big]",
    ]  # fmt: skip
    # COCO's small range under another name gives COCO's APs.
    coco = evaluate(write_json("gt.json", gt), write_json("preds.json", preds))
    assert ours.summary["AP[tiny]"] == coco.summary["APs"]
    assert ours.summary["AR[big]"] is not None


@pytest.mark.parametrize("seed", range(2))
def test_keypoint_custom_area_ranges_read_at_maxdets_20_as_pycocotools_arrays(seed, tmp_path):
    """Keypoints: pycocotools' summarize reads APm/APl at maxDets 20; a custom range the same."""
    from .test_keypoints_parity import _evaluate, make_keypoint_scene, pycocotools_keypoints

    gt, results = make_keypoint_scene(seed)
    ranges = [AreaRange("tiny", 0.0, 48.0**2), AreaRange("large", 48.0**2, 1e5**2)]
    ours = _evaluate(tmp_path, gt, results, area_ranges=ranges)
    ref = pycocotools_keypoints(
        gt, results, areaRng=[[0, 1e5**2]] + [[r.lo, r.hi] for r in ranges],
        areaRngLbl=["all", "tiny", "large"],
    )  # fmt: skip
    assert np.array_equal(ours.primary.arrays.precision, ref["precision"])
    expected = {
        "AP[tiny]": _reference_mean(ref["precision"][:, :, :, 1, 0]),
        "APl": _reference_mean(ref["precision"][:, :, :, 2, 0]),
        "AR[tiny]": _reference_mean(ref["recall"][:, :, 1, 0]),
        "ARl": _reference_mean(ref["recall"][:, :, 2, 0]),
    }
    assert {k: ours.summary[k] for k in expected} == expected
    assert "APm" not in ours.summary and ours.summary["AP[tiny]"] is not None
