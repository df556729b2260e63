"""Oriented boxes: corners, their checks, the exact overlap, and ``iou.oriented_boxes``.

The overlap is held to shapely's overlay (whole arrays on seeded scenes, to
1e-12) and, at coordinates where shapely itself rounds, to exact rational
arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_eval import iou
from iou_eval.data.oriented import (
    checked_corners,
    convex_order,
    corners_from_xywhr,
    enclosing_xyxy,
    hull_corners,
    polygon_area,
)
from iou_eval.errors import ArgumentError, InputError
from iou_eval.geometry.obb import intersection_area, iou_matrix, pair_iou, quad_area

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

SQUARE = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])


def _scene(rng, n, span, size):
    """``n`` pairs of turned rectangles ``[n, 5]`` near each other (cx, cy, w, h, angle)."""
    a = np.column_stack([
        rng.uniform(0, span, n), rng.uniform(0, span, n), rng.uniform(*size, n),
        rng.uniform(*size, n), rng.uniform(-np.pi, np.pi, n),
    ])  # fmt: skip
    b = a.copy()
    b[:, :2] += rng.normal(0, size[1] / 4, (n, 2))
    b[:, 2:4] *= rng.uniform(0.6, 1.4, (n, 2))
    b[:, 4] += rng.normal(0, 0.4, n)
    return a, b


def _shapely_iou(ca, cb):
    ga, gb = shapely.polygons(ca), shapely.polygons(cb)
    inter = shapely.area(shapely.intersection(ga, gb))
    return inter, inter / (shapely.area(ga) + shapely.area(gb) - inter)


def _exact_intersection(a, b) -> Fraction:
    """The intersection area of two convex quadrilaterals in rational arithmetic."""

    def ccw(p):
        twice = sum(p[i][0] * p[(i + 1) % 4][1] - p[(i + 1) % 4][0] * p[i][1] for i in range(4))
        return p if twice > 0 else p[::-1]

    poly = ccw([tuple(map(Fraction, q)) for q in a])
    clip = ccw([tuple(map(Fraction, q)) for q in b])
    for k in range(4):
        e0, e1 = clip[k], clip[(k + 1) % 4]

        def side(p, e0=e0, e1=e1):
            return (e1[0] - e0[0]) * (p[1] - e0[1]) - (e1[1] - e0[1]) * (p[0] - e0[0])

        out = []
        for i, p in enumerate(poly):
            q = poly[(i + 1) % len(poly)]
            if side(p) >= 0:
                out.append(p)
            if (side(p) >= 0) != (side(q) >= 0):
                t = side(p) / (side(p) - side(q))
                out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
        poly = out
        if not poly:
            return Fraction(0)
    m = len(poly)
    return abs(sum(poly[i][0] * poly[(i + 1) % m][1] - poly[(i + 1) % m][0] * poly[i][1]
                   for i in range(m))) / 2  # fmt: skip


# --------------------------------------------------------------------------- the overlap


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_overlap_equals_shapely_on_dota_sized_scenes(seed):
    """4000 x 4000 images, boxes of 2 to 300 pixels turned every way: IoU to 1e-12."""
    rng = np.random.default_rng(seed)
    a, b = _scene(rng, 4000, 4000, (2, 300))
    ca, cb = corners_from_xywhr(a), corners_from_xywhr(b)
    ref_inter, ref_iou = _shapely_iou(ca, cb)
    inter = intersection_area(ca, cb)
    got = pair_iou(ca, quad_area(ca), cb, quad_area(cb), np.zeros(len(a), bool))
    scale = np.minimum(quad_area(ca), quad_area(cb))
    assert np.abs(inter - ref_inter).max() <= 1e-12 * scale.max(), np.abs(inter - ref_inter).max()
    assert np.abs(got - ref_iou).max() <= 1e-12, np.abs(got - ref_iou).max()
    assert (ref_iou > 0).mean() > 0.5  # the scene overlaps: the comparison means something


def test_overlap_is_exact_where_shapely_rounds():
    """Small boxes at x ~ 20000 (DOTA's largest images): exact to rational arithmetic."""
    rng = np.random.default_rng(7)
    a, b = _scene(rng, 300, 20000, (1, 20))
    a[:, :2] += 10000
    b[:, :2] = a[:, :2] + rng.normal(0, 3, (300, 2))
    ca, cb = corners_from_xywhr(a), corners_from_xywhr(b)
    inter = intersection_area(ca, cb)
    exact = np.array([float(_exact_intersection(p, q)) for p, q in zip(ca, cb, strict=True)])
    assert np.abs(inter - exact).max() <= 1e-13 * quad_area(ca).max()


@pytest.mark.parametrize(
    ("b", "expected"),
    [
        (SQUARE, 100.0),  # identical
        (SQUARE + [10, 0], 0.0),  # sharing an edge
        (SQUARE + [10, 10], 0.0),  # sharing a corner
        (SQUARE + [5, 0], 50.0),  # half over
        (SQUARE[::-1] + [5, 5], 25.0),  # the other winding
        (np.roll(SQUARE, 1, axis=0) + [2.5, 0], 75.0),  # from another corner
        (SQUARE * 0.5 + [2, 2], 25.0),  # inside
    ],
)
def test_overlap_of_hand_built_pairs(b, expected):
    """A 10 x 10 square against squares placed by hand (areas known exactly)."""
    assert intersection_area(SQUARE[None], np.asarray(b, float)[None])[0] == expected


def test_square_turned_by_45_degrees():
    """A square and the same square turned by 45 degrees about its centre.

    The overlap is a regular octagon of area 2 (sqrt 2 - 1) s^2 for a side s.
    """
    turned = corners_from_xywhr(np.array([[5.0, 5.0, 10.0, 10.0, math.pi / 4]]))
    inter = intersection_area(SQUARE[None], turned)[0]
    assert inter == pytest.approx(200 * (math.sqrt(2) - 1), abs=1e-12)
    got = iou.oriented_boxes(SQUARE, [5, 5, 10, 10, 45], angle_unit="deg")
    assert got == pytest.approx(inter / (200 - inter), abs=1e-15)


def test_overlap_does_not_depend_on_its_neighbours():
    """A pair's overlap is the same bits alone and among 5000 others (sums in fixed order)."""
    rng = np.random.default_rng(3)
    a, b = _scene(rng, 5000, 1000, (2, 100))
    ca, cb = corners_from_xywhr(a), corners_from_xywhr(b)
    together = intersection_area(ca, cb)
    alone = np.array(
        [intersection_area(ca[i : i + 1], cb[i : i + 1])[0] for i in range(0, 5000, 97)]
    )
    assert np.array_equal(together[::97], alone)


def test_crowd_ground_truth_is_matched_by_intersection_over_the_prediction():
    """IoF: a prediction inside a crowd region overlaps it fully."""
    small = SQUARE * 0.5
    got = pair_iou(small[None], np.array([25.0]), SQUARE[None], np.array([100.0]), np.array([True]))
    assert got[0] == 1.0


box = st.tuples(
    st.floats(0, 500), st.floats(0, 500), st.floats(1, 200), st.floats(1, 200),
    st.floats(-math.pi, math.pi),
)  # fmt: skip


@settings(derandomize=True, max_examples=200, deadline=None)
@given(box, box, st.floats(-1000, 1000), st.floats(-1000, 1000))
def test_iou_properties(p, q, dx, dy):
    """Symmetric, within [0, 1], 1 with itself, the same under a common shift (to rounding)."""
    a, b = corners_from_xywhr(np.array([p])), corners_from_xywhr(np.array([q]))
    ab = iou_matrix(a, b, quad_area(a), quad_area(b))[0, 0]
    ba = iou_matrix(b, a, quad_area(b), quad_area(a))[0, 0]
    assert 0.0 <= ab <= 1.0
    assert ab == pytest.approx(ba, abs=1e-12)
    assert iou_matrix(a, a, quad_area(a), quad_area(a))[0, 0] == pytest.approx(1.0, abs=1e-12)
    shift = np.array([dx, dy])
    moved = iou_matrix(a + shift, b + shift, quad_area(a), quad_area(b))[0, 0]
    assert moved == pytest.approx(ab, abs=1e-9)


# --------------------------------------------------------------------------- corners


def test_corners_from_xywhr_follow_ultralytics():
    """``xywhr2xyxyxyxy``: c + v1 + v2, c + v1 - v2, c - v1 - v2, c - v1 + v2."""
    got = corners_from_xywhr(np.array([[10.0, 20.0, 4.0, 2.0, math.pi / 2]]))[0]
    # v1 = (w/2)(cos, sin) = (0, 2); v2 = (h/2)(-sin, cos) = (-1, 0)
    expected = np.array([[9.0, 22.0], [11.0, 22.0], [11.0, 18.0], [9.0, 18.0]])
    assert np.allclose(got, expected, atol=1e-15)
    deg = corners_from_xywhr(np.array([[10.0, 20.0, 4.0, 2.0, 90.0]]), "deg")[0]
    assert np.array_equal(deg, got)


def test_convex_order_keeps_a_round_order_and_fixes_a_crossing_one():
    crossing = SQUARE[[0, 2, 1, 3]]
    ordered, reordered, bad = convex_order(np.stack([SQUARE, SQUARE[::-1], crossing]))
    assert reordered.tolist() == [False, False, True] and not bad.any()
    assert np.array_equal(ordered[0], SQUARE) and np.array_equal(ordered[1], SQUARE[::-1])
    assert polygon_area(ordered).tolist() == [100.0, 100.0, 100.0]


@pytest.mark.parametrize(
    "corners",
    [
        [[0, 0], [10, 0], [3, 3], [0, 10]],  # a corner inside the triangle of the others
        [[0, 0], [5, 0], [10, 0], [0, 10]],  # three on a line
        [[0, 0], [0, 0], [0, 0], [0, 0]],  # a point
        [[0, 0], [10, 0], [10, 0], [0, 10]],  # a corner twice
    ],
)
def test_corners_that_make_no_convex_quadrilateral_are_refused(corners):
    def fail(row: int, message: str) -> InputError:
        return InputError("gt.txt", message, where=row + 3)

    with pytest.raises(InputError) as err:
        checked_corners(np.array([SQUARE, corners], dtype=float), fail)
    assert err.value.format().startswith("gt.txt:4: corners ")
    assert "convex quadrilateral" in err.value.message


def test_enclosing_box_and_area_of_a_turned_square():
    turned = corners_from_xywhr(np.array([[0.0, 0.0, 2.0, 2.0, math.pi / 4]]))
    assert np.allclose(
        enclosing_xyxy(turned), [[-math.sqrt(2), -math.sqrt(2)] + [math.sqrt(2)] * 2]
    )
    assert polygon_area(turned)[0] == pytest.approx(4.0, abs=1e-14)


# --------------------------------------------------------------------------- the toolkit


def test_toolkit_shapes_and_single_values():
    a = corners_from_xywhr(np.array([[5, 5, 10, 10, 0], [50, 50, 10, 10, 0.3]], float))
    b = np.array([[5, 5, 10, 10, math.pi / 4], [7, 5, 10, 10, 0], [200, 200, 5, 5, 0]])
    m = iou.oriented_boxes(a, b)
    assert isinstance(m, np.ndarray) and m.shape == (2, 3)
    assert m[0, 1] == pytest.approx(80 / 120, abs=1e-15)
    assert m[1].tolist() == [0.0, 0.0, 0.0]
    assert iou.oriented_boxes(a[0].ravel(), b[1]) == m[0, 1]  # [8] and [5]: one box each
    _, ref = _shapely_iou(np.repeat(a, 3, axis=0), corners_from_xywhr(np.tile(b, (2, 1))))
    assert np.abs(m.ravel() - ref).max() <= 1e-12


@pytest.mark.parametrize(
    ("a", "message"),
    [
        ([[1, 2, 3]], "a: expected corners [N, 4, 2]"),
        ([[5, 5, 0, 10, 0]], "a[0]: an oriented box needs a positive width"),
        ([[5, 5, np.nan, 10, 0]], "a[0]: cx, cy, w, h, angle must be finite"),
        ([[[0, 0], [10, 0], [3, 3], [0, 10]]], "a[0]: corners 0 0 10 0 3 3 0 10 do not make"),
    ],
)
def test_toolkit_names_the_bad_box(a, message):
    with pytest.raises(ArgumentError) as err:
        iou.oriented_boxes(a, [[5, 5, 10, 10, 0]])
    assert message in str(err.value)


def test_hull_of_corners_that_make_no_convex_quadrilateral_equals_shapelys():
    """Noisy thin boxes of which no order of the corners goes round a convex quadrilateral: the
    hull (a triangle, one corner repeated) has shapely's area and overlaps as shapely's hull."""
    rng = np.random.default_rng(2)
    b = np.column_stack([
        rng.uniform(0, 900, 4000), rng.uniform(0, 900, 4000), rng.uniform(3, 40, 4000),
        rng.uniform(3, 12, 4000), rng.uniform(0, np.pi, 4000),
    ])  # fmt: skip
    noisy = corners_from_xywhr(b) + rng.normal(0, 3, (4000, 4, 2))
    loose = convex_order(noisy)[2]
    assert loose.sum() > 50
    hull = hull_corners(noisy[loose])
    shapes = shapely.convex_hull(shapely.multipoints(noisy[loose]))
    assert np.allclose(quad_area(hull), shapely.area(shapes), rtol=1e-12, atol=1e-9)
    boxes = corners_from_xywhr(b[loose])
    got = pair_iou(hull, quad_area(hull), boxes, quad_area(boxes), np.zeros(len(hull), bool))
    inter = shapely.area(shapely.intersection(shapes, shapely.polygons(boxes)))
    want = inter / (shapely.area(shapes) + quad_area(boxes) - inter)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)


def test_hull_of_a_dart_three_points_on_a_line_and_a_point():
    dart = np.array([[0.0, 0.0], [10.0, 0.0], [3.0, 3.0], [0.0, 10.0]])
    on_edge = np.array([[0.0, 0.0], [5.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    hull = hull_corners(np.stack([dart, on_edge, np.zeros((4, 2))]))
    assert hull[0].tolist() == [[0, 0], [10, 0], [10, 0], [0, 10]]
    assert hull[1].tolist() == [[0, 0], [0, 0], [10, 0], [0, 10]]
    assert quad_area(hull).tolist() == [50.0, 50.0, 0.0]
