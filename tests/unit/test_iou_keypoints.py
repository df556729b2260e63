"""``iou_eval.iou.oks``: pycocotools' ``computeOks``, one row per ground truth."""

from __future__ import annotations

import numpy as np
import pytest
from pycocotools.cocoeval import COCOeval

from iou_eval import iou
from iou_eval.errors import ArgumentError
from iou_eval.geometry.keypoints import COCO_SIGMAS

# Every test on the compiled parts and on numpy alone.
pytestmark = pytest.mark.usefixtures("kernel_path")


def _compute_oks(gt_kp, gt_boxes, areas, dt_kp, sigmas) -> np.ndarray:
    """pycocotools' computeOks on one image and category, ``[D, G]``."""

    class Params:
        maxDets = [10_000]
        kpt_oks_sigmas = np.asarray(sigmas)

    ev = COCOeval.__new__(COCOeval)
    ev.params = Params()
    ev._gts = {(1, 1): [{"keypoints": g.ravel().tolist(), "bbox": b.tolist(), "area": float(a)}
                        for g, b, a in zip(gt_kp, gt_boxes, areas, strict=True)]}  # fmt: skip
    ev._dts = {(1, 1): [{"keypoints": d.ravel().tolist(), "score": 1.0} for d in dt_kp]}
    return np.asarray(ev.computeOks(1, 1))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [17, 5, 12])
def test_equals_compute_oks_bit_for_bit(seed, k):
    rng = np.random.default_rng(seed * 31 + k)
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 12))
    gt = np.concatenate(
        [rng.uniform(0, 300, (n, k, 2)).round(int(rng.integers(0, 3))),
         rng.choice([0.0, 1.0, 2.0], (n, k, 1))], axis=2,
    )  # fmt: skip
    gt[rng.random(n) < 0.3, :, 2] = 0  # some with nothing labelled: the enlarged box
    dt = gt[rng.integers(0, n, m)] + rng.normal(0, rng.choice([1, 10, 50]), (m, k, 3))
    boxes = np.column_stack([rng.uniform(0, 200, (n, 2)), rng.uniform(1, 90, (n, 2))])
    areas = rng.uniform(0, 8000, n)
    sigmas = COCO_SIGMAS if k == 17 else rng.uniform(0.01, 0.2, k)
    got = iou.oks(gt, dt, areas, None if k == 17 else sigmas, gt_boxes=boxes)
    np.testing.assert_array_equal(got, _compute_oks(gt, boxes, areas, dt, sigmas).T)


def test_one_pair_is_a_float_and_identical_keypoints_score_one():
    """Two labelled keypoints, the prediction on them: exp(0) each, OKS 1."""
    gt = [[10.0, 10.0, 2.0], [20.0, 20.0, 1.0], [0.0, 0.0, 0.0]]
    dt = [[10.0, 10.0], [20.0, 20.0], [99.0, 99.0]]
    assert iou.oks(gt, dt, 100.0, sigmas=[0.1, 0.1, 0.1]) == 1.0


def test_a_keypoint_one_sigma_scale_away():
    """d^2 = 2 * area * (2 sigma)^2 gives exp(-1) (eps aside)."""
    area, sigma = 50.0, 0.25
    d = np.sqrt(2 * area * (2 * sigma) ** 2)
    got = iou.oks([[0.0, 0.0, 2.0]], [[d, 0.0, 0.0]], area, sigmas=[sigma])
    assert got == pytest.approx(np.exp(-1.0), rel=1e-12)


def test_shapes_and_errors_name_the_argument():
    gt = np.zeros((2, 4, 3))
    gt[:, :, 2] = 1
    assert iou.oks(gt, np.zeros((3, 4, 2)), [1.0, 2.0], sigmas=[0.1] * 4).shape == (2, 3)
    with pytest.raises(ArgumentError, match="sigmas: needed for 4 keypoints"):
        iou.oks(gt, np.zeros((3, 4, 2)), [1.0, 2.0])
    with pytest.raises(ArgumentError, match="dt_keypoints: 5 keypoints"):
        iou.oks(gt, np.zeros((3, 5, 2)), [1.0, 2.0], sigmas=[0.1] * 4)
    with pytest.raises(ArgumentError, match=r"areas: expected 2"):
        iou.oks(gt, np.zeros((3, 4, 2)), [1.0], sigmas=[0.1] * 4)
    gt[1, :, 2] = 0
    with pytest.raises(ArgumentError, match=r"gt_keypoints\[1\]: no labelled keypoint"):
        iou.oks(gt, np.zeros((3, 4, 2)), [1.0, 2.0], sigmas=[0.1] * 4)
