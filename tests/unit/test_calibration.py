"""Calibration bins and ECE: literal numbers on a tiny scene, and a naive implementation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval.analysis import calibration, coco_true_positives
from iou_eval.errors import UsageError

# Seven predictions; the last is matched to a crowd region (not counted).
#   score  class  true positive   bin
#   1.00   cat    yes             [0.9, 1.0]  (the last bin is closed)
#   0.95   cat    yes             [0.9, 1.0]
#   0.85   cat    yes             [0.8, 0.9)
#   0.82   dog    no              [0.8, 0.9)
#   0.30   dog    no              [0.3, 0.4)  (0.3 is the lower edge)
#   0.05   cat    no              [0.0, 0.1)
#   0.50   dog    yes, crowd      left out
SCORES = [1.0, 0.95, 0.85, 0.82, 0.3, 0.05, 0.5]
CATS = [0, 0, 0, 1, 1, 0, 1]
TP = [True, True, True, False, False, False, True]
COUNTED = [True, True, True, True, True, True, False]
NAMES = ("cat", "dog", "bird")


def test_tiny_scene_literals():
    r = calibration(SCORES, CATS, TP, COUNTED, NAMES, iou_threshold=0.5)
    assert [b.count for b in r.bins] == [1, 0, 0, 1, 0, 0, 0, 0, 2, 2]
    assert [(b.lower, b.upper) for b in r.bins][:4] == [
        (0.0, 0.1),
        (0.1, 0.2),
        (0.2, 0.3),
        (0.3, 0.4),
    ]
    assert r.bins[8].mean_score == pytest.approx(0.835)
    assert r.bins[8].accuracy == 0.5
    assert r.bins[9].mean_score == pytest.approx(0.975) and r.bins[9].accuracy == 1.0
    assert r.bins[1].mean_score is None and r.bins[1].accuracy is None
    # (2 * 0.025 + 2 * 0.335 + 0.3 + 0.05) / 6
    assert r.ece == pytest.approx(1.07 / 6)
    assert r.per_class["cat"].ece == pytest.approx((2 * 0.025 + 0.15 + 0.05) / 4)
    assert r.per_class["cat"].count == 4
    assert r.per_class["dog"].ece == pytest.approx((0.82 + 0.3) / 2)
    assert r.per_class["bird"].ece is None and r.per_class["bird"].count == 0


def test_tiny_scene_mce_is_the_largest_gap_of_a_non_empty_bin():
    r = calibration(SCORES, CATS, TP, COUNTED, NAMES, iou_threshold=0.5)
    # Gaps 0.05, 0.3, |0.5 - 0.835|, |1 - 0.975|; the seven empty bins do not count.
    assert r.mce == pytest.approx(0.335)
    assert r.per_class["cat"].mce == pytest.approx(0.15)  # 0.85, a true positive
    assert r.per_class["dog"].mce == pytest.approx(0.82)  # 0.82, a false positive
    assert r.per_class["bird"].mce is None


def test_json_shape():
    d = calibration(SCORES, CATS, TP, COUNTED, NAMES, iou_threshold=0.75).to_dict()
    assert list(d) == ["iou_threshold", "bins", "ece", "mce", "per_class"]
    assert d["iou_threshold"] == 0.75
    assert set(d["bins"][0]) == {"lower", "upper", "count", "mean_score", "accuracy"}
    assert d["per_class"]["bird"] == {"ece": None, "mce": None, "count": 0}
    assert d["mce"] == pytest.approx(0.335)
    assert list(d["per_class"]["dog"]) == ["ece", "mce", "count"]
    assert "null" in json.dumps(d)


def test_no_counted_prediction():
    r = calibration(SCORES, CATS, TP, [False] * 7, NAMES, iou_threshold=0.5)
    assert r.ece is None and r.mce is None and sum(b.count for b in r.bins) == 0
    assert all(c.ece is None and c.mce is None for c in r.per_class.values())


def test_scores_outside_the_bins_are_refused():
    with pytest.raises(UsageError, match=r"scores in \[0, 1\]; found 1.5"):
        calibration([1.5], [0], [True], [True], NAMES, iou_threshold=0.5)
    # ... unless not counted, or the bins say otherwise.
    calibration([1.5], [0], [True], [False], NAMES, iou_threshold=0.5)
    r = calibration([1.5], [0], [True], [True], NAMES, iou_threshold=0.5, bins=[0, 1, 2])
    assert [b.count for b in r.bins] == [0, 1] and r.ece == pytest.approx(0.5)
    with pytest.raises(UsageError, match="increasing"):
        calibration(SCORES, CATS, TP, COUNTED, NAMES, iou_threshold=0.5, bins=[0, 0.5, 0.5])


def test_repeated_names_stay_apart():
    r = calibration(SCORES, CATS, TP, COUNTED, ("a", "a", "b"), iou_threshold=0.5)
    assert list(r.per_class) == ["a", "a [1]", "b"]


def naive_calibration(score, cat, tp, counted, k, n_bins):
    """Bins as written in the conventions, one prediction at a time."""
    bins = [[] for _ in range(n_bins)]
    per = [[[] for _ in range(n_bins)] for _ in range(k)]
    for s, c, t, u in zip(score, cat, tp, counted, strict=True):
        if not u:
            continue
        for i in range(n_bins):
            lo, hi = i / n_bins, (i + 1) / n_bins
            if lo <= s < hi or (i == n_bins - 1 and s == hi):
                bins[i].append((s, t))
                per[c][i].append((s, t))
                break

    def gap(b):
        return abs(sum(t for _, t in b) / len(b) - sum(s for s, _ in b) / len(b))

    def ece(bs):
        n = sum(len(b) for b in bs)
        return None if n == 0 else sum(len(b) / n * gap(b) for b in bs if b)

    def mce(bs):
        return max((gap(b) for b in bs if b), default=None)

    return [len(b) for b in bins], (ece(bins), mce(bins)), [(ece(p), mce(p)) for p in per]


@pytest.mark.parametrize("seed", range(6))
def test_random_against_naive(seed):
    rng = np.random.default_rng(seed)
    d, k = 400, 5
    # Rounded scores: many on the bin edges, and 0.0 / 1.0 themselves.
    score = np.round(rng.random(d), int(rng.integers(1, 3)))
    cat = rng.integers(0, k - 1, d)  # the last class has no predictions
    tp = rng.random(d) < score
    counted = rng.random(d) < 0.9
    n_bins = int(rng.choice([10, 7, 20]))
    r = calibration(score, cat, tp, counted, [f"c{i}" for i in range(k)],
                    iou_threshold=0.5, bins=n_bins)  # fmt: skip
    counts, (ece, mce), per = naive_calibration(score, cat, tp, counted, k, n_bins)
    assert [b.count for b in r.bins] == counts
    assert r.ece == pytest.approx(ece, rel=1e-12)
    assert r.mce == pytest.approx(mce, rel=1e-12)
    got = [(r.per_class[f"c{i}"].ece, r.per_class[f"c{i}"].mce) for i in range(k)]
    assert got[-1] == (None, None) and per[-1] == (None, None)
    for (g_ece, g_mce), (p_ece, p_mce) in zip(got[:-1], per[:-1], strict=True):
        assert g_ece == pytest.approx(p_ece, rel=1e-12)
        assert g_mce == pytest.approx(p_mce, rel=1e-12)


def test_true_positive_flags_on_a_tiny_scene():
    """Image 0: gt A cat, crowd cat.  p0 on A, p1 on A again, p2 inside the crowd, p3 of dog on A."""
    flags = coco_true_positives(
        gt_image=[0, 0],
        gt_category=[0, 0],
        gt_xyxy=np.array([[0, 0, 10, 10], [50, 0, 100, 50]], dtype=np.float64),
        gt_crowd=[False, True],
        pred_image=[0, 0, 0, 0],
        pred_category=[0, 0, 0, 1],
        pred_xyxy=np.array(
            [[0, 0, 10, 10], [0, 0, 10, 9], [60, 0, 70, 10], [0, 0, 10, 10]], dtype=np.float64
        ),  # fmt: skip
        pred_score=[0.9, 0.8, 0.7, 0.6],
        num_images=1,
        num_categories=2,
    )
    is_tp, counted = flags
    assert is_tp.tolist() == [True, False, False, False]
    assert counted.tolist() == [True, True, False, True]
    # dog is a category the ground truth lacks: left out, as pycocotools drops it.
    _, counted = coco_true_positives(
        [0], [0], np.array([[0.0, 0, 10, 10]]), [False],
        [0], [1], np.array([[0.0, 0, 10, 10]]), [0.5], 1, 2, gt_categories=1,
    )  # fmt: skip
    assert counted.tolist() == [False]
