"""iou.boxes / iou.iof against an independent reference of torchvision's formulas and pycocotools."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

from iou_eval import iou

from ..conftest import ACCEPTANCE

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

EPS = 1e-7  # torchvision's default eps of distance_box_iou / complete_box_iou


def ref_pair(a, b, kind: str, one: float = 0.0) -> float:
    """One pair, written from torchvision.ops' formulas with plain floats.

    torchvision divides 0 by 0 for pairs with an empty union (IoU), an empty
    enclosing box (GIoU) or a point box (CIoU's atan(0/0)); iou-eval defines
    those as 0 (IoU), no penalty (GIoU) and no aspect term (CIoU).
    """
    ax1, ay1, ax2, ay2 = a
    bx1, by1, bx2, by2 = b
    area_a = (ax2 - ax1 + one) * (ay2 - ay1 + one)
    area_b = (bx2 - bx1 + one) * (by2 - by1 + one)
    iw = max(min(ax2, bx2) - max(ax1, bx1) + one, 0.0)
    ih = max(min(ay2, by2) - max(ay1, by1) + one, 0.0)
    inter = iw * ih
    union = area_a + area_b - inter
    iou_v = inter / union if union > 0 else 0.0
    if kind == "iou":
        return iou_v
    cw = max(ax2, bx2) - min(ax1, bx1) + one
    ch = max(ay2, by2) - min(ay1, by1) + one
    if kind == "giou":
        c = cw * ch
        return iou_v - ((c - union) / c if c > 0 else 0.0)
    centre = ((ax1 + ax2) / 2 - (bx1 + bx2) / 2) ** 2 + ((ay1 + ay2) / 2 - (by1 + by2) / 2) ** 2
    diou = iou_v - centre / (cw**2 + ch**2 + EPS)
    if kind == "diou":
        return diou

    def angle(w, h):
        if w == 0 and h == 0:
            return None
        return math.pi / 2 if h == 0 else math.atan(w / h)

    ta = angle(ax2 - ax1 + one, ay2 - ay1 + one)
    tb = angle(bx2 - bx1 + one, by2 - by1 + one)
    if ta is None or tb is None:
        return diou
    v = 4 / math.pi**2 * (ta - tb) ** 2
    return diou - v / (1 - iou_v + v + EPS) * v


def ref_matrix(a, b, kind: str, one: float = 0.0) -> np.ndarray:
    return np.array([[ref_pair(x, y, kind, one) for y in b] for x in a]).reshape(len(a), len(b))


def random_xyxy(rng: np.random.Generator, n: int, scale: float = 100.0) -> np.ndarray:
    xy = rng.uniform(0, scale, (n, 2))
    wh = rng.uniform(0, scale / 3, (n, 2))
    wh[rng.random((n, 2)) < 0.1] = 0.0  # some zero-width / zero-height boxes
    boxes = np.concatenate([xy, xy + wh], axis=1)
    # Integer corners make touching, identical and nested pairs common.
    boxes[: n // 3] = np.round(boxes[: n // 3] / 10) * 10
    return boxes


def compare(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"\n{got}\n{want}")


@pytest.mark.parametrize("kind", iou.KINDS)
@pytest.mark.parametrize("seed", range(5))
def test_every_kind_matches_the_torchvision_formulas_on_random_boxes(kind, seed):
    rng = np.random.default_rng(seed)
    a, b = random_xyxy(rng, 40), random_xyxy(rng, 30)
    got = iou.boxes(a, b, kind=kind)
    assert got.shape == (40, 30) and got.dtype == np.float64
    assert np.isfinite(got).all()
    compare(got, ref_matrix(a, b, kind))


@pytest.mark.parametrize("kind", iou.KINDS)
def test_plus_one_matches_the_formulas_with_inclusive_pixels(kind):
    rng = np.random.default_rng(7)
    a, b = np.round(random_xyxy(rng, 25)), np.round(random_xyxy(rng, 20))
    compare(iou.boxes(a, b, kind=kind, plus_one=True), ref_matrix(a, b, kind, one=1.0))


def test_iou_of_xywh_boxes_equals_pycocotools_bit_for_bit():
    rng = np.random.default_rng(3)
    a = rng.uniform(0, 50, (60, 4))
    b = rng.uniform(0, 50, (50, 4))
    want = mask_utils.iou(a, b, [0] * len(b))
    np.testing.assert_array_equal(iou.boxes(a, b, box_format="xywh"), want)


def test_iof_equals_pycocotools_crowd_overlap_bit_for_bit():
    rng = np.random.default_rng(4)
    a = rng.uniform(0, 50, (60, 4))
    b = rng.uniform(0, 50, (50, 4))
    want = mask_utils.iou(a, b, [1] * len(b))
    np.testing.assert_array_equal(iou.iof(a, b, box_format="xywh"), want)


def test_blocks_of_rows_give_the_same_matrix(monkeypatch):
    """A [N, M] result is filled a few rows at a time; the seams must not show."""
    rng = np.random.default_rng(5)
    a, b = random_xyxy(rng, 37), random_xyxy(rng, 11)
    whole = iou.boxes(a, b, kind="ciou")
    monkeypatch.setattr(iou, "BLOCK_ELEMENTS", 25)  # 2 rows per block
    np.testing.assert_array_equal(iou.boxes(a, b, kind="ciou"), whole)


def test_hand_computed_values_of_each_kind():
    """[10,10,50,50] vs [20,20,60,60]: inter 30x30, union 2300, enclosing 50x50,
    centres (30,30) and (40,40), same aspect ratio."""
    a, b = [10, 10, 50, 50], [20, 20, 60, 60]
    assert iou.boxes(a, b) == 900 / 2300
    assert iou.boxes(a, b, kind="giou") == pytest.approx(900 / 2300 - 200 / 2500, abs=1e-15)
    diou = 900 / 2300 - 200 / (5000 + EPS)
    assert iou.boxes(a, b, kind="diou") == pytest.approx(diou, abs=1e-15)
    assert iou.boxes(a, b, kind="ciou") == pytest.approx(diou, abs=1e-15)  # v = 0


def test_ciou_aspect_term_by_hand():
    """[0,0,4,2] vs [0,0,2,4]: IoU 4/12, enclosing 4x4, centres (2,1)/(1,2)."""
    iou_v = 4 / 12
    diou = iou_v - 2 / (32 + EPS)
    v = 4 / math.pi**2 * (math.atan(2) - math.atan(0.5)) ** 2
    want = diou - v / (1 - iou_v + v + EPS) * v
    assert iou.boxes([0, 0, 4, 2], [0, 0, 2, 4], kind="ciou") == pytest.approx(want, abs=1e-15)


def test_plus_one_rule_on_continuous_coordinates():
    """GT [0,0,1,1], prediction [0.5,0.5,1,1]: 0.25 continuous, 2.25 / 4 with +1 pixels."""
    assert iou.boxes([0, 0, 1, 1], [0.5, 0.5, 1, 1]) == 0.25
    assert iou.boxes([0, 0, 1, 1], [0.5, 0.5, 1, 1], plus_one=True) == 2.25 / 4


def test_plus_one_touching_boxes_share_a_pixel_column():
    """[0,0,10,10] and [10,0,20,10] touch: 0 continuous, 11 / (121 + 121 - 11) with +1."""
    assert iou.boxes([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0
    assert iou.boxes([0, 0, 10, 10], [10, 0, 20, 10], plus_one=True) == 11 / 231


@pytest.mark.parametrize("kind", ["iou", "giou", "diou", "ciou"])
def test_two_negative_extents_are_not_an_overlap(kind):
    """[0,0,10,10] and [20,20,30,30]: (10-20) * (10-20) = +100 must not count.

    +--+
    |a |
    +--+
         +--+
         |b |
         +--+
    """
    a, b = [0, 0, 10, 10], [20, 20, 30, 30]
    assert iou.boxes(a, b) == 0.0
    assert iou.iof(a, b) == 0.0
    assert iou.boxes(a, b, kind=kind) == pytest.approx(ref_pair(a, b, kind), abs=1e-15)
    assert iou.boxes(a, b, kind=kind) <= 0.0


def test_xywh_is_the_top_left_corner_and_cxcywh_the_centre():
    """The same numbers [10,10,20,20] vs [20,20,10,10] under the two readings."""
    a, b = [10, 10, 20, 20], [20, 20, 10, 10]
    # xywh: a = 10..30, b = 20..30: inter 100, union 400.
    assert iou.boxes(a, b, box_format="xywh") == 0.25
    # cxcywh: a = 0..20, b = 15..25: inter 25, union 400 + 100 - 25.
    assert iou.boxes(a, b, box_format="cxcywh") == 25 / 475
    # Read as corners, b would be inverted.
    with pytest.raises(iou.ArgumentError, match=r"b\[0\]: inverted box"):
        iou.boxes(a, b)


def test_the_torchmetrics_box_format_case_reads_as_published():
    """[0,0,1,1] vs [0.5,0.5,1,1]: 0.25 as xyxy, 0.143 if read as xywh (torchmetrics #1908)."""
    assert iou.boxes([0, 0, 1, 1], [0.5, 0.5, 1, 1], box_format="xywh") == pytest.approx(1 / 7)


def test_acceptance_case_10f_per_image_iou():
    path = ACCEPTANCE / "cases" / "10_tiny_edge_cases" / "EXPECTED.json"
    if not path.exists():
        pytest.skip("acceptance cases not available")
    case = json.loads(path.read_text())["subcases"]["f_tm_box_format_subpixel"]
    gt = json.loads((path.parent / "f_tm_box_format_subpixel" / "gt.json").read_text())
    dt = json.loads((path.parent / "f_tm_box_format_subpixel" / "detections.json").read_text())
    got = iou.boxes([d["bbox"] for d in dt], [g["bbox"] for g in gt["annotations"]], "xywh")
    np.testing.assert_allclose(got, case["per_image_iou"]["1|0"], rtol=0, atol=1e-12)
    assert case["published"]["iou_xyxy"] == got[0, 0]


@pytest.mark.parametrize("kind", iou.KINDS)
def test_identical_boxes_score_one(kind):
    assert iou.boxes([3, 4, 20, 9], [3, 4, 20, 9], kind=kind) == 1.0


@pytest.mark.parametrize("kind", iou.KINDS)
def test_zero_area_pairs_are_zero_never_nan(kind):
    """Two points at one place, two points apart, a line and a box: defined values."""
    point, line, box = [5, 5, 5, 5], [0, 5, 10, 5], [0, 0, 10, 10]
    m = iou.boxes([point, line, [7, 7, 7, 7]], [point, line, box], kind=kind)
    assert np.isfinite(m).all(), m
    assert m[0, 0] == 0.0  # the same point: union 0
    assert iou.boxes(point, point) == 0.0
    assert iou.boxes(line, box) == 0.0
    assert iou.iof(point, box) == 0.0


def test_touching_boxes_have_zero_iou_and_zero_giou():
    a, b = [0, 0, 10, 10], [10, 0, 20, 10]
    assert iou.boxes(a, b) == 0.0
    assert iou.boxes(a, b, kind="giou") == 0.0  # the enclosing box is the union


def test_iof_is_intersection_over_the_first_box():
    """A 10x10 prediction inside a 100x100 crowd region: IoF 1, IoU 0.01."""
    assert iou.iof([0, 0, 10, 10], [0, 0, 100, 100]) == 1.0
    assert iou.iof([0, 0, 100, 100], [0, 0, 10, 10]) == 0.01
    assert iou.boxes([0, 0, 10, 10], [0, 0, 100, 100]) == 0.01


def test_shapes_single_stack_and_empty():
    one, many = [0, 0, 2, 2], [[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]]
    assert isinstance(iou.boxes(one, one), float)
    assert iou.boxes(one, many).shape == (1, 3)
    assert iou.boxes(many, one).shape == (3, 1)
    assert iou.boxes(np.zeros((0, 4)), many).shape == (0, 3)
    assert iou.boxes([], many).shape == (0, 3)
    assert iou.boxes(many, np.zeros((0, 4)), kind="ciou").shape == (3, 0)


@pytest.mark.parametrize(
    ("a", "b", "fmt", "match"),
    [
        ([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 1, 1], [5, 0, 4, 1]], "xyxy", r"b\[2\]: inverted box"),
        ([[0, 0, -1, 1]], [0, 0, 1, 1], "xywh", r"a\[0\]: inverted box .*width >= 0"),
        ([0, 0, 1, -1], [0, 0, 1, 1], "cxcywh", r"a\[0\]: inverted box"),
        (
            [0, 0, 1],
            [0, 0, 1, 1],
            "xyxy",
            r"a: expected a box of shape \[4\] or \[N, 4\], got \[3\]",
        ),
        ([0, 0, 1, float("nan")], [0, 0, 1, 1], "xyxy", r"a\[0\]: a box needs finite numbers"),
        ([[0, 0, 1, 1], [0, 1]], [0, 0, 1, 1], "xyxy", r"a: expected a box"),
        ([0, 0, 1, 1], [0, 0, 1, 1], "xyxyxy", r"box_format: expected one of xyxy, xywh, cxcywh"),
    ],
)
def test_bad_boxes_raise_a_located_value_error(a, b, fmt, match):
    with pytest.raises(ValueError, match=match) as info:
        iou.boxes(a, b, box_format=fmt)
    assert isinstance(info.value, iou.InputError)


def test_unknown_kind_is_refused():
    with pytest.raises(iou.ArgumentError, match="kind: expected one of iou, giou, diou, ciou"):
        iou.boxes([0, 0, 1, 1], [0, 0, 1, 1], kind="eiou")


def test_inputs_are_not_modified():
    a = np.array([[10.0, 10.0, 20.0, 20.0]])
    b = np.array([[12.0, 12.0, 5.0, 5.0]])
    iou.boxes(a, b, box_format="cxcywh", kind="ciou", plus_one=True)
    assert a.tolist() == [[10.0, 10.0, 20.0, 20.0]] and b.tolist() == [[12.0, 12.0, 5.0, 5.0]]


# Multiples of 1/8: sums and products stay exact, so the properties hold exactly
# (with arbitrary floats x + w - x is not w, and pycocotools' IoU, like ours, can
# then exceed 1 by a rounding error).
coord = st.integers(-8000, 8000).map(lambda v: v / 8)
size = st.integers(0, 8000).map(lambda v: v / 8)
box = st.tuples(coord, coord, size, size)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=box, b=box, dx=coord, dy=coord)
def test_iou_is_symmetric_bounded_and_shift_invariant(a, b, dx, dy):
    u = iou.boxes(a, b, box_format="xywh")
    assert 0.0 <= u <= 1.0
    assert u == iou.boxes(b, a, box_format="xywh")
    shifted = iou.boxes(
        (a[0] + dx, a[1] + dy, a[2], a[3]), (b[0] + dx, b[1] + dy, b[2], b[3]), box_format="xywh"
    )
    assert shifted == u
    g = iou.boxes(a, b, box_format="xywh", kind="giou")
    assert -1.0 <= g <= u + 1e-12


@settings(max_examples=100, deadline=None, derandomize=True)
@given(a=box)
def test_a_box_with_area_has_self_iou_one(a):
    if a[2] * a[3] > 0:
        for kind in iou.KINDS:
            assert iou.boxes(a, a, box_format="xywh", kind=kind) == pytest.approx(1.0, abs=1e-12)


def test_an_integer_beyond_any_float_is_an_argument_error():
    from iou_eval import iou
    from iou_eval.errors import ArgumentError

    with pytest.raises(ArgumentError, match="numbers"):
        iou.boxes([[10**400, 0, 1, 1]], [[0, 0, 1, 1]])
    with pytest.raises(ArgumentError, match="polygon"):
        iou.polygons([[0, 0, 10**400, 0, 1, 1]], [[0, 0, 1, 0, 1, 1]])
