"""Box conventions and overlap kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_eval.data.box_format import BoxFormat, to_xyxy
from iou_eval.geometry.boxes import iou_matrix, pair_iou, pair_iou_plus_one

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


def test_conventions_convert_to_the_same_box():
    """One 20x10 box at (10, 20) written three ways."""
    xyxy, area = to_xyxy(np.array([[10.0, 20.0, 30.0, 30.0]]), BoxFormat.XYXY)
    xywh, area2 = to_xyxy(np.array([[10.0, 20.0, 20.0, 10.0]]), BoxFormat.XYWH)
    cxcy, area3 = to_xyxy(np.array([[20.0, 25.0, 20.0, 10.0]]), BoxFormat.CXCYWH)
    assert xyxy.tolist() == xywh.tolist() == cxcy.tolist() == [[10.0, 20.0, 30.0, 30.0]]
    assert area.tolist() == area2.tolist() == area3.tolist() == [200.0]


def test_normalized_boxes_scale_by_image_size():
    out, area = to_xyxy(
        np.array([[0.5, 0.5, 0.2, 0.1]]), BoxFormat.CXCYWH, np.array([[200.0, 100.0]])
    )
    assert out.tolist() == [[80.0, 45.0, 120.0, 55.0]]
    assert area.tolist() == [400.0]


def test_xywh_area_is_the_product_of_the_given_numbers():
    """(x + w) - x is not w in floating point; the area must be w * h as given."""
    xyxy, area = to_xyxy(np.array([[0.1, 0.0, 0.3, 1.0]]), BoxFormat.XYWH)
    assert area[0] == 0.3
    assert xyxy[0, 2] - xyxy[0, 0] != 0.3  # 0.30000000000000004


def test_crowd_overlap_is_intersection_over_prediction():
    """Prediction [0,0,10,10] inside crowd [0,0,100,100]: IoF 1.0, IoU 0.01."""
    dt = np.array([[0.0, 0.0, 10.0, 10.0]])
    gt = np.array([[0.0, 0.0, 100.0, 100.0]])
    a = np.array([100.0])
    g = np.array([10000.0])
    assert pair_iou(dt, a, gt, g, np.array([True]))[0] == 1.0
    assert pair_iou(dt, a, gt, g, np.array([False]))[0] == 0.01


def test_touching_boxes_do_not_overlap():
    dt = np.array([[0.0, 0.0, 10.0, 10.0]])
    gt = np.array([[10.0, 0.0, 20.0, 10.0]])
    assert pair_iou(dt, np.array([100.0]), gt, np.array([100.0]), np.array([False]))[0] == 0.0
    # With +1-pixel extents they share a one-pixel column: 11 / (121 + 121 - 11).
    assert pair_iou_plus_one(dt, gt)[0] == pytest.approx(11 / 231)


def test_zero_area_box_has_zero_overlap():
    dt = np.array([[5.0, 5.0, 5.0, 9.0]])
    gt = np.array([[0.0, 0.0, 10.0, 10.0]])
    assert pair_iou(dt, np.array([0.0]), gt, np.array([100.0]), np.array([False]))[0] == 0.0


boxes = st.tuples(
    st.floats(0, 500), st.floats(0, 500), st.floats(0.5, 200), st.floats(0.5, 200)
).map(lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[3]])


@settings(derandomize=True, max_examples=200)
@given(a=boxes, b=boxes, dx=st.integers(-50, 50), dy=st.integers(-50, 50))
def test_iou_properties(a, b, dx, dy):
    A = np.array([a])
    B = np.array([b])
    ab = iou_matrix(A, B)[0, 0]
    assert 0.0 <= ab <= 1.0
    assert ab == pytest.approx(iou_matrix(B, A)[0, 0], abs=1e-12)
    assert iou_matrix(A, A)[0, 0] == pytest.approx(1.0)
    shift = np.array([[dx, dy, dx, dy]], dtype=float)
    assert iou_matrix(A + shift, B + shift)[0, 0] == pytest.approx(ab, abs=1e-9)


def test_to_xyxy_and_from_xyxy_are_the_reference_sums_bit_for_bit():
    """x + w, y + h (and x2 - x1, y2 - y1 back) exactly as pycocotools' columns give them,
    for boxes read from a strided (non-contiguous) block too."""
    from iou_eval.data.plausibility import from_xyxy

    rng = np.random.default_rng(7)
    block = rng.uniform(-50, 5000, size=(1000, 8)) * rng.uniform(0, 1, size=(1000, 8))
    xywh = block[:, ::2]  # every other column: a view that is not contiguous
    x, y, w, h = (xywh[:, i].copy() for i in range(4))
    xyxy, area = to_xyxy(xywh, BoxFormat.XYWH)
    assert np.array_equal(xyxy, np.stack([x, y, x + w, y + h], axis=1))
    assert np.array_equal(area, w * h)
    assert np.array_equal(xywh, block[:, ::2])  # the input is left as it was
    x1, y1, x2, y2 = (xyxy[:, i].copy() for i in range(4))
    back = from_xyxy(xyxy, BoxFormat.XYWH)
    assert np.array_equal(back, np.stack([x1, y1, x2 - x1, y2 - y1], axis=1))
    assert back is not xyxy and np.array_equal(xyxy[:, 2], x2)


@pytest.mark.parametrize("fmt", [BoxFormat.XYWH, BoxFormat.CXCYWH, BoxFormat.XYXY])
def test_negative_extent_is_refused_where_other_numbers_are_negative_too(fmt):
    """The first row with a negative width is cited, whatever else is negative."""
    from iou_eval.data.dataset import _check_boxes

    boxes = np.array([[-5.0, -2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, -1.0, 4.0]])
    if fmt is BoxFormat.XYXY:
        boxes = np.array([[-5.0, -2.0, 3.0, 4.0], [1.0, 2.0, 0.0, 4.0]])

    def fail(row, message, hint=None):
        return ValueError(row, message)

    with pytest.raises(ValueError) as err:
        _check_boxes(boxes, fmt, fail)
    assert err.value.args[0] == (1 if fmt is BoxFormat.XYXY else 2)
    _check_boxes(np.array([[-5.0, -2.0, 3.0, 4.0]]), fmt, fail)  # negative corner only: fine
    _check_boxes(np.zeros((0, 4)), fmt, fail)
