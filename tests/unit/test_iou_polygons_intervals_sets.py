"""iou.polygons against shapely overlays, iou.intervals against a per-pair count,
iou.label_sets against scikit-learn's jaccard_score."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import shapely
from sklearn.metrics import jaccard_score
from sklearn.preprocessing import MultiLabelBinarizer

from iou_eval import iou
from iou_eval.errors import UsageError

# ------------------------------------------------------------------ polygons


def star_polygon(rng: np.random.Generator) -> np.ndarray:
    """A simple polygon: points sorted by angle around a centre, random radii
    (drawn again when an angular gap over pi lets an edge cross another)."""
    while True:
        k = int(rng.integers(3, 12))
        angles = np.sort(rng.uniform(0, 2 * np.pi, k))
        radii = rng.uniform(1, 20, k)
        centre = rng.uniform(0, 40, 2)
        pts = centre + np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)
        if shapely.Polygon(pts).is_valid:
            return pts


def shapely_reference(a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
    """Per pair, with shapely's own union (not the area arithmetic iou-eval uses)."""
    out = np.zeros((len(a), len(b)))
    for i, pa in enumerate(a):
        for j, pb in enumerate(b):
            ga, gb = shapely.Polygon(pa), shapely.Polygon(pb)
            out[i, j] = ga.intersection(gb).area / ga.union(gb).area
    return out


@pytest.mark.parametrize("seed", range(4))
def test_polygons_match_shapely_overlays_on_random_simple_polygons(seed):
    rng = np.random.default_rng(seed)
    a = [star_polygon(rng) for _ in range(15)]
    b = [star_polygon(rng) for _ in range(12)]
    assert all(shapely.Polygon(p).is_valid for p in a + b)
    want = shapely_reference(a, b)
    assert (want > 0).sum() > 10  # the scene has overlaps
    flat_a = [p.ravel().tolist() for p in a]  # [x1, y1, x2, y2, ...]
    points_b = [p.tolist() for p in b]  # [[x, y], ...]
    got = iou.polygons(flat_a, points_b)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_hand_computed_polygon_iou():
    """Two 2x2 squares overlapping in a 1x1 corner: 1 / 7; a triangle in its square: 1/2."""
    sq = [0, 0, 2, 0, 2, 2, 0, 2]
    assert iou.polygons(sq, [[1, 1], [3, 1], [3, 3], [1, 3]]) == pytest.approx(1 / 7, abs=1e-15)
    assert iou.polygons(sq, [0, 0, 2, 0, 0, 2]) == pytest.approx(0.5, abs=1e-15)
    assert iou.polygons(sq, sq) == 1.0


def test_polygon_shapes_and_ndarray_inputs():
    sq = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    stack = np.stack([sq, sq + 1, sq + 5])  # [N, K, 2]
    assert isinstance(iou.polygons(sq, sq.ravel()), float)
    m = iou.polygons(stack, sq)
    assert m.shape == (3, 1)
    np.testing.assert_allclose(m[:, 0], [1.0, 1 / 7, 0.0])
    assert iou.polygons([], stack).shape == (0, 3)


def test_degenerate_polygons_have_zero_iou():
    """Fewer than 3 points, or collinear points, enclose nothing."""
    sq = [0, 0, 2, 0, 2, 2, 0, 2]
    got = iou.polygons([[0, 0, 1, 1], [0, 0, 1, 1, 2, 2], [[5, 5]]], [sq, [0, 0, 1, 1, 2, 2]])
    assert (got == 0).all() and got.shape == (3, 2)


@pytest.mark.parametrize(
    ("a", "match"),
    [
        ([[0, 0, 2, 2, 2, 0, 0, 2]], r"a\[0\]: the polygon is not simple"),  # a bow tie
        ([0, 0, 1, 0, 1], r"a\[0\]: a flat polygon needs an even count of numbers, got 5"),
        ([[0, 0, 1, 0, 1, float("inf")]], r"a\[0\]: a polygon needs finite coordinates"),
        ([[[0, 0, 0], [1, 0, 0], [1, 1, 0]]], r"a\[0\]: expected points \[K, 2\]"),
    ],
)
def test_bad_polygons_raise_a_located_error(a, match):
    with pytest.raises(ValueError, match=match):
        iou.polygons(a, [0, 0, 1, 0, 1, 1])


def test_missing_shapely_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "shapely", None)
    with pytest.raises(UsageError, match="shapely") as info:
        iou.polygons([0, 0, 1, 0, 1, 1], [0, 0, 1, 0, 1, 1])
    assert "iou-eval[polygons]" in info.value.format()


# ------------------------------------------------------------------ intervals


def test_intervals_match_a_per_pair_count():
    rng = np.random.default_rng(3)
    a = np.sort(np.round(rng.uniform(0, 50, (30, 2))), axis=1)
    b = np.sort(np.round(rng.uniform(0, 50, (20, 2))), axis=1)
    want = np.zeros((30, 20))
    for i, (s1, e1) in enumerate(a):
        for j, (s2, e2) in enumerate(b):
            inter = max(0.0, min(e1, e2) - max(s1, s2))
            union = (e1 - s1) + (e2 - s2) - inter
            want[i, j] = inter / union if union > 0 else 0.0
    np.testing.assert_allclose(iou.intervals(a, b), want, rtol=1e-14, atol=0)


def test_interval_edge_cases():
    assert iou.intervals([0, 10], [5, 15]) == 5 / 15
    assert iou.intervals([0, 10], [10, 20]) == 0.0  # touching
    assert iou.intervals([3, 3], [3, 3]) == 0.0  # two instants
    assert iou.intervals([0, 10], [0, 10]) == 1.0
    assert iou.intervals([0, 10], [[2, 4], [20, 30]]).tolist() == [[0.2, 0.0]]
    with pytest.raises(ValueError, match=r"b\[1\]: inverted segment \[9.0, 4.0\]"):
        iou.intervals([0, 1], [[0, 1], [9, 4]])
    with pytest.raises(ValueError, match=r"a: expected a segment of shape \[2\] or \[N, 2\]"):
        iou.intervals([0, 1, 2], [0, 1])


# ------------------------------------------------------------------ label sets


def random_sets(rng: np.random.Generator, n: int, labels: list[str]) -> list[set[str]]:
    return [{lab for lab in labels if rng.random() < 0.3} for _ in range(n)]


def sklearn_reference(gt, pred, labels, average, zero_division=0.0):
    mlb = MultiLabelBinarizer(classes=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown-label and ill-defined warnings
        g = mlb.fit_transform(gt)
        p = mlb.transform(pred)
        return jaccard_score(g, p, average=average, zero_division=zero_division)


@pytest.mark.parametrize("average", ["macro", "micro", "samples", None])
@pytest.mark.parametrize("zero_division", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_label_sets_match_scikit_learn(average, zero_division, seed):
    rng = np.random.default_rng(seed)
    names = ["cat", "dog", "car", "tree", "sky", "unused"]
    gt = random_sets(rng, 40, names[:5])  # "unused" in neither: a zero division
    pred = random_sets(rng, 40, names[:5])
    gt[0], pred[0] = set(), set()  # a sample with an empty union
    want = sklearn_reference(gt, pred, names, average, zero_division)
    got = iou.label_sets(gt, pred, labels=names, average=average, zero_division=zero_division)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_label_sets_default_labels_are_the_sorted_labels_seen():
    gt = [{2, 5}, {1}, {5}]
    pred = [{2}, {1, 9}, set()]
    want = sklearn_reference(gt, pred, [1, 2, 5, 9], None)
    got = iou.label_sets(gt, pred, average=None)
    np.testing.assert_array_equal(got, want)
    assert got.tolist() == [1.0, 1.0, 0.0, 0.0]  # labels 1, 2, 5, 9


def test_label_sets_from_indicator_matrices():
    rng = np.random.default_rng(8)
    g = rng.random((30, 4)) < 0.4
    p = rng.random((30, 4)) < 0.4
    for average in ("macro", "micro", "samples"):
        want = jaccard_score(g, p, average=average, zero_division=0)
        assert iou.label_sets(g, p, average=average) == pytest.approx(want, abs=1e-15)
    cols = [3, 1]
    want = jaccard_score(g, p, average=None, labels=cols, zero_division=0)
    np.testing.assert_array_equal(iou.label_sets(g.astype(int), p, labels=cols, average=None), want)


def test_label_sets_hand_computed():
    """cat: gt in 1, 2, pred in 1 -> 1/2; dog: gt in 2, pred in 2 -> 1."""
    gt = [{"cat"}, {"cat", "dog"}]
    pred = [{"cat"}, {"dog"}]
    assert iou.label_sets(gt, pred, average=None).tolist() == [0.5, 1.0]
    assert iou.label_sets(gt, pred) == 0.75
    assert iou.label_sets(gt, pred, average="micro") == 2 / 3
    assert iou.label_sets(gt, pred, average="samples") == 0.75


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"average": "weighted"}, "average: expected macro, micro, samples or None"),
        ({"zero_division": float("nan")}, "zero_division: expected 0.0 or 1.0"),
        ({"pred": [{1}]}, "pred: 1 samples, gt has 2"),
        ({"gt": [{1, "a"}, {2}]}, "labels: the labels mix types"),
        ({"gt": np.array([[1, 0], [0, 1]])}, "an indicator matrix .* on one side needs one"),
        (
            {"gt": np.array([[2, 0], [0, 1]]), "pred": np.eye(2)},
            "gt: an indicator matrix holds only 0",
        ),
    ],
)
def test_bad_label_sets_are_refused(kwargs, match):
    args = {"gt": [{1}, {2}], "pred": [{1}, {3}], **kwargs}
    with pytest.raises(ValueError, match=match):
        iou.label_sets(**args)
