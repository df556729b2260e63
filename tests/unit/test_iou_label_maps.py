"""iou.label_maps: a hand-checked scene, a brute-force pixel count, mmsegmentation's rules."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from iou_eval import iou
from iou_eval.toolkit.labelmaps import ConfusionAccumulator, scores_from_confusion

PKG = Path(__file__).resolve().parents[2] / "iou_eval"


def brute_force(gts, preds, c: int, ignore: int) -> dict:
    """Per class, count pixels with boolean masks: no confusion matrix, no bincount."""
    inter = np.zeros(c)
    union = np.zeros(c)
    correct = scored = 0
    for g, p in zip(gts, preds, strict=True):
        valid = g != ignore
        for k in range(c):
            inter[k] += np.sum((g == k) & (p == k) & valid)
            union[k] += np.sum(((g == k) | (p == k)) & valid)
        correct += np.sum((g == p) & valid)
        scored += np.sum(valid)
    per_class = np.array([inter[k] / union[k] if union[k] else np.nan for k in range(c)])
    present = ~np.isnan(per_class)
    return {
        "per_class": per_class,
        "mean": per_class[present].mean(),
        "pixel_accuracy": correct / scored,
    }


def random_maps(rng, n, h, w, c, ignore=255):
    gts = rng.integers(0, c, (n, h, w)).astype(np.uint8)
    gts[rng.random((n, h, w)) < 0.1] = ignore
    preds = gts.copy()
    flip = rng.random((n, h, w)) < 0.35
    preds[flip] = rng.integers(0, c, int(flip.sum()))
    preds[preds == ignore] = 0  # predictions hold classes only
    return gts, preds


@pytest.mark.parametrize("seed", range(4))
def test_label_maps_match_a_brute_force_pixel_count(seed):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 12))
    gts, preds = random_maps(rng, 5, int(rng.integers(3, 40)), int(rng.integers(3, 40)), c + 1)
    gts[gts == c] = 255  # class c: never in the ground truth...
    preds[:, 0, 0] = c - 1
    want = brute_force(gts, preds, c + 2, 255)  # ... and class c + 1 in neither
    got = iou.label_maps(gts, preds, num_classes=c + 2)
    np.testing.assert_allclose(got["per_class"], want["per_class"], rtol=1e-15, atol=0)
    assert np.isnan(got["per_class"][c + 1])
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-15)
    assert got["pixel_accuracy"] == pytest.approx(want["pixel_accuracy"], rel=1e-15)


def test_hand_checked_scene():
    """3 classes, ignore 255.

    gt    0 0 1      pred  0 1 1
          2 2 255          2 0 1

    class 0: gt {a,b}, pred {a, e}      -> inter 1, union 3 -> 1/3
    class 1: gt {c},   pred {b, c}      -> inter 1, union 2 -> 1/2
    class 2: gt {d, e}, pred {d}        -> inter 1, union 2 -> 1/2
    (the ignored pixel's prediction, 1, is not looked at)
    pixel accuracy: a, c, d correct of 5 scored -> 3/5
    """
    gt = np.array([[0, 0, 1], [2, 2, 255]])
    pred = np.array([[0, 1, 1], [2, 0, 1]])
    out = iou.label_maps(gt, pred, num_classes=3)
    assert out["per_class"].tolist() == [1 / 3, 1 / 2, 1 / 2]
    assert out["mean"] == pytest.approx(4 / 9, abs=1e-15)
    assert out["pixel_accuracy"] == 3 / 5


def test_a_class_in_neither_side_is_nan_and_left_out_of_the_mean():
    """mmsegmentation's nanmean: class 2 absent from both; class 1 only predicted scores 0."""
    gt = np.array([[0, 0], [0, 0]])
    pred = np.array([[0, 0], [0, 1]])
    out = iou.label_maps(gt, pred, num_classes=3)
    assert out["per_class"][:2].tolist() == [0.75, 0.0]
    assert np.isnan(out["per_class"][2])
    assert out["mean"] == 0.375


def test_stacks_iterables_and_generators_give_one_result():
    rng = np.random.default_rng(9)
    gts, preds = random_maps(rng, 6, 17, 23, 5)
    whole = iou.label_maps(gts, preds, 5)
    as_lists = iou.label_maps(list(gts), list(preds), 5)
    lazy = iou.label_maps((g for g in gts), (p for p in preds), 5)
    for other in (as_lists, lazy):
        np.testing.assert_array_equal(other["per_class"], whole["per_class"])
        assert other["mean"] == whole["mean"]
    # Images of different sizes, one at a time.
    mixed = iou.label_maps([gts[0], gts[1][:5]], [preds[0], preds[1][:5]], 5)
    want = brute_force([gts[0], gts[1][:5]], [preds[0], preds[1][:5]], 5, 255)
    np.testing.assert_allclose(mixed["per_class"], want["per_class"], rtol=1e-15)


def test_ignore_index_none_scores_every_pixel():
    gt = np.array([[0, 1]])
    pred = np.array([[0, 0]])
    assert iou.label_maps(gt, pred, 2, ignore_index=None)["per_class"].tolist() == [0.5, 0.0]


def test_accumulator_grows_to_the_largest_label_when_classes_are_not_given():
    acc = ConfusionAccumulator(None, 255)
    acc.add(np.array([[0, 1]]), np.array([[0, 1]]))
    acc.add(np.array([[4, 255]]), np.array([[2, 9]]))
    assert acc.num_classes == 5
    assert acc.confusion.sum() == 3 and acc.confusion[4, 2] == 1 and acc.images == 2


def test_scores_from_a_confusion_matrix():
    cm = np.array([[5, 1, 0], [2, 3, 0], [0, 0, 0]])
    s = scores_from_confusion(cm)
    assert s.iou[:2].tolist() == [5 / 8, 3 / 6] and np.isnan(s.iou[2])
    assert s.accuracy[:2].tolist() == [5 / 6, 3 / 5] and np.isnan(s.accuracy[2])
    assert s.pixel_accuracy == 8 / 11
    assert s.gt_pixels.tolist() == [6, 5, 0] and s.pred_pixels.tolist() == [7, 4, 0]


@pytest.mark.parametrize(
    ("gt", "pred", "match"),
    [
        (
            [[0, 3]],
            [[0, 1]],
            r"gt\[0\]: label 3 is outside the classes 0..2 or the ignore index 255",
        ),
        ([[0, 1]], [[0, 255]], r"pred\[0\]: label 255 is outside the classes 0..2"),
        ([[0, -1]], [[0, 1]], r"gt\[0\]: label -1 is outside"),
        (
            [[0, 1]],
            [[0, 1, 1]],
            r"pred\[0\]: size 1x3 \(H x W\) differs from the ground truth's 1x2",
        ),
        ([[0.0, 1.0]], [[0, 1]], r"gt\[0\]: label maps hold integers, got float64"),
    ],
)
def test_bad_label_maps_raise_a_located_error(gt, pred, match):
    with pytest.raises(ValueError, match=match):
        iou.label_maps(np.array(gt), np.array(pred), num_classes=3)


def test_uneven_iterables_are_refused():
    maps = [np.zeros((2, 2), dtype=int)] * 3
    with pytest.raises(ValueError, match=r"pred: more label maps than the other side \(2 paired\)"):
        iou.label_maps(maps[:2], maps, 2)


def test_the_iou_modules_import_numpy_only():
    """The layer rule: pure-numpy kernels; shapely, Pillow, click imported lazily or not at all."""
    allowed = {"numpy", "__future__", "dataclasses", "enum", "typing", "collections", "math"}
    for name in ("toolkit/iou.py", "toolkit/labelmaps.py", "toolkit/mask_rows.py"):
        tree = ast.parse((PKG / name).read_text())
        top = {
            (n.module if isinstance(n, ast.ImportFrom) else n.names[0].name).split(".")[0]
            for n in tree.body
            if isinstance(n, (ast.Import, ast.ImportFrom)) and getattr(n, "level", 0) == 0
        }
        top.discard("iou_eval")  # the package's own modules
        assert top <= allowed, f"{name} imports {top - allowed} at module level"
