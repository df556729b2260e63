"""Mask outlines: filling the traced loops gives the mask back, pixel for pixel."""

from __future__ import annotations

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval.reporters.outlines import decode_rle, mask_outlines, rle_outlines


def even_odd_fill(loops: list[np.ndarray], h: int, w: int) -> np.ndarray:
    """``[h, w]`` bool: pixel centres inside the loops by the even-odd rule (a crossing count)."""
    yy, xx = np.mgrid[0:h, 0:w] + 0.5
    inside = np.zeros((h, w), dtype=bool)
    for pts in loops:
        nxt = np.roll(pts, -1, axis=0)
        for (x0, y0), (x1, y1) in zip(pts, nxt, strict=True):
            if y0 == y1:
                continue
            crosses = (y0 > yy) != (y1 > yy)
            inside ^= crosses & (xx < x0 + (yy - y0) * (x1 - x0) / (y1 - y0))
    return inside


def signed_area(pts: np.ndarray) -> float:
    """Shoelace area; positive for clockwise loops on screen (y down)."""
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


@pytest.mark.parametrize("seed", range(6))
def test_filling_the_outlines_gives_the_mask_back(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(1, 14, 2))
        m = rng.uniform(size=(h, w)) < rng.uniform(0.1, 0.9)
        loops = mask_outlines(m)
        np.testing.assert_array_equal(even_odd_fill(loops, h, w), m)
        for pts in loops:  # corners on the pixel grid, no straight-through points
            assert pts.shape[1] == 2 and len(pts) >= 4 and len(pts) % 2 == 0
            np.testing.assert_array_equal(pts, np.round(pts))
            steps = np.diff(np.vstack([pts, pts[:1]]), axis=0)
            assert ((steps[:, 0] == 0) != (steps[:, 1] == 0)).all()  # axis-parallel edges
            turns = np.sign(steps)
            assert not (turns[1:] == turns[:-1]).all(axis=1).any()
        # Outer loops are clockwise, holes counter-clockwise: the areas add up to the pixels.
        assert sum(signed_area(p) for p in loops) == pytest.approx(float(m.sum()))


def test_a_rectangle_is_its_four_corners_clockwise_and_a_hole_runs_the_other_way():
    m = np.zeros((6, 7), dtype=bool)
    m[1:5, 2:6] = True
    m[2:4, 3:5] = False
    outer, hole = mask_outlines(m)
    np.testing.assert_array_equal(outer, [[2, 1], [6, 1], [6, 5], [2, 5]])
    np.testing.assert_array_equal(hole, [[3, 4], [5, 4], [5, 2], [3, 2]])
    assert signed_area(outer) == 16 and signed_area(hole) == -4


def test_pixels_touching_at_a_corner_get_loops_of_their_own():
    m = np.array([[1, 0], [0, 1]], dtype=bool)
    loops = mask_outlines(m)
    assert len(loops) == 2
    assert sorted(signed_area(p) for p in loops) == [1.0, 1.0]


def test_empty_and_full_masks():
    assert mask_outlines(np.zeros((4, 5), dtype=bool)) == []
    (full,) = mask_outlines(np.ones((4, 5), dtype=bool))
    np.testing.assert_array_equal(full, [[0, 0], [5, 0], [5, 4], [0, 4]])
    with pytest.raises(ValueError, match=r"\[H, W\]"):
        mask_outlines(np.zeros(5, dtype=bool))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pycocotools under numpy 2
def test_rle_is_decoded_as_pycocotools_decodes_it():
    rng = np.random.default_rng(7)
    for _ in range(30):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        m = rng.uniform(size=(h, w)) < rng.uniform()
        rle = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
        np.testing.assert_array_equal(decode_rle(rle["counts"], h, w), mask_utils.decode(rle) > 0)
        np.testing.assert_array_equal(
            even_odd_fill(rle_outlines(rle["counts"], h, w), h, w), mask_utils.decode(rle) > 0
        )
