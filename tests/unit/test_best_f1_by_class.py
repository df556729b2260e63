"""Each class's best F1 and its score, computed for every class at once, equal the
per-class sweep (:func:`iou_eval.protocols.tables.best_f1`) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.protocols import tables


def _per_class(dt_class, dt_score, dt_tp, dt_fp, class_gt):
    """The reference: one stable (class, descending score) sort, one sweep per class."""
    used = np.flatnonzero(dt_tp | dt_fp)
    order = used[np.lexsort((-dt_score[used], dt_class[used]))]
    best = np.full(len(class_gt), np.nan)
    best_s = np.full(len(class_gt), np.nan)
    for c in range(len(class_gt)):
        rows = order[dt_class[order] == c]
        best[c], best_s[c] = tables.best_f1(
            dt_score[rows], dt_tp[rows], dt_fp[rows], int(class_gt[c])
        )
    return best, best_s


def _same(got, want):
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("given_order", [False, True])
def test_best_f1_of_every_class_at_once_equals_the_per_class_sweep(seed, given_order):
    """Ties of score (cuts only between scores), ignored rows (neither TP nor FP), classes
    without ground truth, without predictions, or with false positives only."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 400)), int(rng.integers(1, 9))
    dt_class = rng.integers(0, k, n)
    dt_score = np.round(rng.random(n), int(rng.integers(1, 3)))
    dt_tp = rng.random(n) < 0.4
    dt_fp = ~dt_tp & (rng.random(n) < 0.8)
    dt_tp[dt_class == 0] = False  # class 0: false positives only
    class_gt = rng.integers(0, 30, k)
    if k > 1:
        class_gt[k - 1] = 0  # a class without ground truth...
        dt_tp[dt_class == k - 1] = False  # ...has no true positive
    class_gt[np.bincount(dt_class[dt_tp], minlength=k) > 0] += 1
    class_gt = np.r_[class_gt, 5]  # a class with ground truth and no prediction
    order = np.lexsort((-dt_score, dt_class)) if given_order else None
    got = tables._best_f1_by_class(dt_class, dt_score, dt_tp, dt_fp, class_gt, order)
    want = _per_class(dt_class, dt_score, dt_tp, dt_fp, class_gt)
    _same(got[0], want[0])
    _same(got[1], want[1])


@pytest.mark.parametrize("seed", range(6))
def test_best_f1_of_many_classes_sharing_scores_across_their_boundaries(seed):
    """Hundreds of classes whose slices meet at equal scores (one decimal): a cut
    always falls at a class's end, never into the next class."""
    rng = np.random.default_rng(100 + seed)
    n, k = int(rng.integers(500, 3000)), int(rng.integers(50, 300))
    dt_class = rng.integers(0, k, n)
    dt_score = np.round(rng.random(n), 1)
    dt_tp = rng.random(n) < 0.3
    dt_fp = ~dt_tp & (rng.random(n) < 0.9)
    class_gt = np.bincount(dt_class[dt_tp], minlength=k) + rng.integers(0, 3, k)
    class_gt[rng.random(k) < 0.1] = 0
    dt_tp &= class_gt[dt_class] > 0
    order = np.lexsort((-dt_score, dt_class))
    got = tables._best_f1_by_class(dt_class, dt_score, dt_tp, dt_fp, class_gt, order)
    want = _per_class(dt_class, dt_score, dt_tp, dt_fp, class_gt)
    _same(got[0], want[0])
    _same(got[1], want[1])
