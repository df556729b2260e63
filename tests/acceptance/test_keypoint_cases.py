"""The keypoint case of the shared acceptance set (``12_fce_keypoints``) reproduces its numbers.

Read from ../shared/acceptance at test time; skipped when it is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.api import load
from iou_eval.geometry.keypoints import KeypointGeometry, with_keypoints

from .helpers import case_dir, expected

# Every test on the compiled parts and on numpy alone.
pytestmark = pytest.mark.usefixtures("kernel_path")

# EXPECTED.json spells pycocotools' keypoint stats[0..9] so.
KEYPOINT_NAMES = {
    "AP": "AP", "AP50": "AP50", "AP75": "AP75", "AP_medium": "APm", "AP_large": "APl",
    "AR": "AR", "AR50": "AR50", "AR75": "AR75", "AR_medium": "ARm", "AR_large": "ARl",
}  # fmt: skip
CASE = "12_fce_keypoints"


def _assert_keypoint_stats(summary: dict, stats: dict, tol: float, label: str) -> None:
    problems = [
        f"{theirs}: expected {stats[theirs]}, got {summary[ours]}"
        for theirs, ours in KEYPOINT_NAMES.items()
        if summary[ours] is None or abs(summary[ours] - stats[theirs]) > tol
    ]
    assert not problems, f"{label}:\n  " + "\n  ".join(problems)


def _run(gt, dt, **kw):
    return evaluate(str(gt), str(dt), iou_type="keypoints", **kw)


def test_12_published_keypoint_stats():
    d = case_dir(CASE)
    exp = expected(CASE)["expected"][0]
    r = _run(d / "gt_dataset.json", d / "dt_dataset.json")
    _assert_keypoint_stats(r.summary, exp["stats"], exp["tolerance"], CASE)
    # Published "exact" (assertListEqual): the same floats, not merely close.
    _assert_keypoint_stats(r.summary, exp["stats"], 0.0, CASE + " (bit for bit)")


def _pycocotools_oks(d) -> tuple[np.ndarray, list[int]]:
    """pycocotools' OKS matrix of the case's one image, ``[20, G]``, and its ground truths' ids."""
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(d / "gt_dataset.json"))
        ev = COCOeval(gt, gt.loadRes(str(d / "dt_dataset.json")), "keypoints")
        ev.evaluate()
    (key,) = [k for k, v in ev.ious.items() if len(v)]
    return np.asarray(ev.ious[key]), [g["id"] for g in ev._gts[key]]


def test_12_oks_matrix_and_ignored_ground_truths():
    """The top-20 detections' OKS against the 14 ground truths, and the three ignored ones.

    Bit for bit against pycocotools run here; within 4 ulp of the published matrix.
    """
    d = case_dir(CASE)
    ref = expected(CASE)["computed_reference"]
    gt = load(str(d / "gt_dataset.json"), "gt", keypoints=True)
    dt = load(str(d / "dt_dataset.json"), "pred", keypoints=True)
    from iou_eval.data.reconcile import align

    a = with_keypoints(align(gt, dt))
    order = np.argsort(-a.pred.scores, kind="stable")[:20]
    geometry = KeypointGeometry.of(a.gt, a.pred)
    g, p = np.meshgrid(np.arange(len(a.gt)), order)
    got = geometry.pair(p.ravel(), g.ravel()).reshape(20, len(a.gt))
    want = np.asarray(ref["oks_matrix"]["values"])
    assert list(a.gt.ann_id) == ref["oks_matrix"]["gt_ids_columns"]
    # Bit for bit against pycocotools on this machine (the same exp from the same libm) ...
    here, here_ids = _pycocotools_oks(d)
    np.testing.assert_array_equal(got[:, [list(a.gt.ann_id).index(i) for i in here_ids]], here)
    # ... and within a few ulp of the published matrix, which another machine's libm
    # computed (exp may differ in the last bit between libms).
    np.testing.assert_array_max_ulp(got, want, maxulp=4)
    ignored = a.gt.ann_id[geometry.gt_ignored | a.gt.is_crowd].tolist()
    assert sorted(ignored) == sorted(ref["gt_counts"]["ignored"])


def test_12_detections_without_bbox_take_the_keypoint_branch(tmp_path):
    d = case_dir(CASE)
    sens = expected(CASE)["computed_reference"]["sensitivity"]["detection_bbox_removed"]
    dts = json.loads((d / "dt_dataset.json").read_text())
    for x in dts:
        x.pop("bbox")
    (tmp_path / "dt.json").write_text(json.dumps(dts))
    r = _run(d / "gt_dataset.json", tmp_path / "dt.json")
    _assert_keypoint_stats(r.summary, sens["stats"], 1e-12, "bbox removed")


def test_12_per_class_and_per_image_mean_oks():
    """The per-image mean OKS is that of pycocotools' matches at OKS 0.5 (its greedy_matches)."""
    d = case_dir(CASE)
    ref = expected(CASE)["computed_reference"]
    r = _run(d / "gt_dataset.json", d / "dt_dataset.json", iou_thr=0.5)
    assert r.per_class["AR"].tolist() == pytest.approx([r.summary["AR"]], abs=1e-15)
    columns = ref["oks_matrix"]["gt_ids_columns"]
    ignored = set(ref["gt_counts"]["ignored"])
    matched = [
        ref["oks_matrix"]["values"][i][columns.index(g)]
        for i, g in enumerate(ref["greedy_matches"]["oks_0.50"])
        if g not in ignored
    ]
    assert r.per_image["TP"].tolist() == [len(matched)] == [8]
    assert r.per_image["mean_OKS"].tolist()[0] == pytest.approx(np.mean(matched), rel=1e-12)
