"""The compiled Open Images matcher against numpy's, array for array.

``match_compiled`` (``oi_match`` of the compiled core) must give the very
matches, group-of hits and entries that ``match_challenge`` and
``_entries`` give (numpy, the reference): on crowded scenes with ties,
group-of boxes holding many predictions, a small cap per image and class,
and group-of weights of 1, 0.5 and 0.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.protocols import openimages as oi

from ..parity.openimages_files import write_scene
from ..skip_reasons import compiled_missing

CLASSES = ["/m/dog", "/m/cat", "/m/bird", "/m/fish"]


def _core():
    try:
        return importlib.import_module("iou_eval.protocols._cococore")
    except ImportError:
        pytest.skip(compiled_missing("the COCO core", "iou_eval.protocols._cococore"))


def _box(rng, near=None, spread=0.3):
    if near is None:
        x0, y0 = rng.uniform(0, 0.7, 2).tolist()
        return x0, x0 + float(rng.uniform(0.05, 0.3)), y0, y0 + float(rng.uniform(0.05, 0.3))
    x0, x1, y0, y1 = (min(max(v + float(rng.normal(0, spread * 0.1)), 0.0), 0.99) for v in near)
    return min(x0, x1), max(x0, x1) + 0.01, min(y0, y1), max(y0, y1) + 0.01


def crowded_scene(seed: int):
    """Images with plain and group-of boxes, predictions near them and inside the
    group-of ones, scores drawn from a few values (many ties)."""
    rng = np.random.default_rng(seed)
    boxes, preds, labels = [], [], []
    for i in range(8):
        image = f"im{i:02d}"
        for c in rng.choice(CLASSES, 3, replace=False):
            labels.append((image, str(c), 1))
            own = [_box(rng) for _ in range(rng.integers(0, 4))]
            boxes += [(image, str(c), *b, 0) for b in own]
            group = [(0.0, 0.6, 0.0, 0.6), (0.3, 1.0, 0.2, 1.0)][: rng.integers(0, 3)]
            boxes += [(image, str(c), *b, 1) for b in group]
            for _ in range(rng.integers(0, 14)):
                pick = rng.integers(0, 3)
                if pick == 0 and own:
                    b = _box(rng, own[rng.integers(len(own))])
                elif pick == 1 and group:
                    g = group[rng.integers(len(group))]
                    x0 = float(rng.uniform(g[0], g[1] - 0.05))
                    y0 = float(rng.uniform(g[2], g[3] - 0.05))
                    b = (x0, x0 + 0.04, y0, y0 + 0.04)
                else:
                    b = _box(rng)
                preds.append((image, str(c), float(rng.choice([0.0, 0.2, 0.5, 0.7, 0.9])), *b))
    return boxes, labels, preds


def _both(alignment, thr: float, weight: float):
    gt = alignment.gt
    rank = oi.challenge_image_rank(gt.images.ids)
    rows, group, _ = oi._scored_rows(alignment, alignment.verified, rank)
    gt_group = oi.group_keys(gt.category_idx, gt.image_idx, rank, len(gt.categories))
    m = oi.match_challenge(alignment, rows, group, gt_group, thr)
    want = oi._entries(alignment, m, rank, weight)
    c, entries, class_end = oi.match_compiled(
        _core(), alignment, rows, group, gt_group, thr, weight
    )
    got = oi._entries_of(alignment, c, entries, class_end, weight)
    return m, want, c, got


@pytest.mark.parametrize("cap", [oi.MAX_PER_GROUP, 3])
@pytest.mark.parametrize("weight", [1.0, 0.5, 0.0])
@pytest.mark.parametrize("seed", range(6))
def test_compiled_matcher_equals_numpy_on_crowded_scenes(tmp_path, monkeypatch, seed, weight, cap):
    boxes, labels, preds = crowded_scene(seed)
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, CLASSES)
    alignment = evaluate(gt, pred, **options).alignment
    monkeypatch.setattr(oi, "MAX_PER_GROUP", cap)
    m, want, c, got = _both(alignment, 0.5, weight)
    for name in ("rows", "tp", "absorbed", "match_gt", "match_ov"):
        a, b = getattr(m, name), getattr(c, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    # The same hits, each stood for by the same prediction (numpy lists them by box).
    assert np.array_equal(np.sort(m.representative), np.sort(c.representative))
    by_box = np.argsort(c.hit_rows, kind="stable")
    assert np.array_equal(m.hit_rows, c.hit_rows[by_box])
    assert np.array_equal(m.hit_score, c.hit_score[by_box])
    assert len(m.hit_rows), "the scene hits no group-of box"
    for a, b, name in zip(want, got, ("class", "image", "score", "label"), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_compiled_matcher_keeps_only_the_cap_of_one_image_and_class(tmp_path, monkeypatch):
    """Five predictions of one class on one image, a cap of two: the two highest are
    matched, the other three are not scored at all."""
    boxes = [("a", "/m/dog", 0.0, 0.5, 0.0, 0.5, 0)]
    preds = [("a", "/m/dog", s, 0.0, 0.5, 0.0, 0.5) for s in (0.1, 0.9, 0.3, 0.8, 0.2)]
    gt, pred, options = write_scene(tmp_path, boxes, [], preds, CLASSES)
    alignment = evaluate(gt, pred, **options).alignment
    monkeypatch.setattr(oi, "MAX_PER_GROUP", 2)
    _, _, c, (cls, _, score, label) = _both(alignment, 0.5, 1.0)
    assert c.rows.tolist() == [1, 3]
    assert c.tp.tolist() == [True, False]
    assert score.tolist() == [0.9, 0.8] and label.tolist() == [1.0, 0.0]


def test_group_numbers_of_a_wide_key_range_come_from_a_sort():
    """Keys spread over far more values than rows are numbered by a sort, not by the
    compiled bit table (``n_total / 64`` words: 128 GiB here): each key's rank among
    the keys that occur."""
    gt_group = np.array([5, 2**38, 7, 5], dtype=np.int64)
    group = np.array([7, 2**39 + 1, 2**38, 0], dtype=np.int64)
    g, d, n = oi._dense_groups(_core(), gt_group, group, 2**40)
    assert n == 5
    assert g.tolist() == [1, 3, 2, 1]
    assert d.tolist() == [2, 4, 3, 0]


def test_image_ids_that_int_cannot_read_are_ordered_as_text():
    """An id "+-1" is no integer (pandas keeps such a column as text): ordered as text."""
    assert oi.challenge_image_rank(("+-1", "10", "9")).tolist() == [0, 1, 2]
    assert oi.challenge_image_rank(("+1", "10", "-9")).tolist() == [1, 2, 0]
