"""iou.masks against pycocotools' maskUtils.iou; the RLE decoder against maskUtils.decode."""

from __future__ import annotations

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval import iou
from iou_eval.toolkit.mask_rows import decode_counts, mask_rows

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


def blobs(rng: np.random.Generator, n: int, h: int, w: int) -> np.ndarray:
    """``[N, H, W]`` bool: random rectangles and discs, some empty, some full."""
    yy, xx = np.mgrid[:h, :w]
    out = np.zeros((n, h, w), dtype=bool)
    for i in range(n):
        kind = i % 5
        if kind == 0:
            continue  # empty
        if kind == 1:
            out[i] = rng.random((h, w)) < 0.3  # speckle: many short runs
            continue
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        r = rng.uniform(1, max(h, w) / 2)
        if kind == 2:
            out[i] = (yy - cy) ** 2 + (xx - cx) ** 2 < r**2
        else:
            out[i] = (abs(yy - cy) < r) & (abs(xx - cx) < r / 2)
    out[-1] = True  # one full mask
    return out


def encode(masks: np.ndarray) -> list[dict]:
    return mask_utils.encode(np.asfortranarray(masks.transpose(1, 2, 0).astype(np.uint8)))


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(mask_utils.iou(encode(a), encode(b), [0] * len(b)))


@pytest.mark.parametrize("seed", range(4))
def test_compressed_rles_match_pycocotools_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(5, 60)), int(rng.integers(5, 60))
    a, b = blobs(rng, 12, h, w), blobs(rng, 9, h, w)
    want = reference(a, b)
    np.testing.assert_array_equal(iou.masks(encode(a), encode(b)), want)
    # str counts (as in a COCO JSON file) as well as bytes (as pycocotools returns them)
    as_text = [{"size": r["size"], "counts": r["counts"].decode()} for r in encode(b)]
    np.testing.assert_array_equal(iou.masks(encode(a), as_text), want)


def test_binary_masks_match_pycocotools_bit_for_bit():
    rng = np.random.default_rng(11)
    a, b = blobs(rng, 10, 33, 47), blobs(rng, 7, 33, 47)
    want = reference(a, b)
    np.testing.assert_array_equal(iou.masks(a, b), want)
    np.testing.assert_array_equal(iou.masks(a.astype(np.uint8), b.astype(float)), want)
    np.testing.assert_array_equal(iou.masks(a, encode(b)), want)  # the two kinds mixed


def test_uncompressed_rles_match_pycocotools():
    """Uncompressed counts (COCO crowd annotations) as frPyObjects reads them."""
    rng = np.random.default_rng(12)
    a, b = blobs(rng, 6, 20, 30), blobs(rng, 5, 20, 30)
    unc = []
    for m in b:
        flat = m.T.ravel()  # column-major
        edges = np.flatnonzero(np.diff(flat.astype(np.int8))) + 1
        bounds = np.concatenate(([0], edges, [flat.size]))
        counts = np.diff(bounds).tolist()
        if flat[0]:
            counts = [0, *counts]
        unc.append({"size": [20, 30], "counts": counts})
    want = mask_utils.iou(encode(a), mask_utils.frPyObjects(unc, 20, 30), [0] * len(b))
    np.testing.assert_array_equal(iou.masks(encode(a), unc), want)


# pycocotools' decode warns about numpy 2's copy keyword; the reference, not iou-eval.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_decoder_reads_what_pycocotools_writes_including_negative_deltas():
    """Counts from the third on are deltas to the count two before; large runs
    followed by short ones give negative deltas (the sign bit of the last group)."""
    rng = np.random.default_rng(13)
    h, w = 300, 400
    m = np.zeros((h, w), dtype=bool)
    m[:, 5:7] = True  # long run of 0s, then short runs
    m[rng.random((h, w)) < 0.01] = True
    m[10:290, 100:300] = True  # very long runs of 1s
    rle = encode(m[None])[0]
    runs = decode_counts(rle["counts"], "t")
    rows, size, single = mask_rows(rle, "t")
    assert size == (h, w) and single
    np.testing.assert_array_equal(rows[0], mask_utils.decode(rle).T.ravel().astype(bool))
    assert runs.sum() == h * w
    assert (runs >= 0).all()


def test_hand_computed_mask_iou():
    """Two 4x4 squares in a 10x10 image offset by 2 columns: 8 / (16 + 16 - 8)."""
    a = np.zeros((10, 10), dtype=bool)
    b = np.zeros((10, 10), dtype=bool)
    a[2:6, 2:6] = True
    b[2:6, 4:8] = True
    assert iou.masks(a, b) == 8 / 24
    assert iou.masks(a, a) == 1.0


def test_empty_masks_give_zero_not_nan():
    empty = np.zeros((2, 8, 8), dtype=bool)
    assert iou.masks(empty[0], empty[1]) == 0.0
    m = iou.masks(empty, np.ones((3, 8, 8), dtype=bool))
    assert m.shape == (2, 3) and (m == 0).all()


def test_shapes_single_stack_and_empty_sides():
    rng = np.random.default_rng(2)
    a = blobs(rng, 4, 6, 7)
    assert isinstance(iou.masks(a[1], a[2]), float)
    assert iou.masks(a[1], a).shape == (1, 4)
    assert iou.masks(encode(a)[0], encode(a)).shape == (1, 4)
    assert iou.masks([], encode(a)).shape == (0, 4)
    assert iou.masks(a, np.zeros((0, 6, 7), dtype=bool)).shape == (4, 0)


def test_masks_of_different_sizes_are_refused():
    with pytest.raises(iou.ArgumentError, match=r"b: masks are 5x6 .* a's are 5x7"):
        iou.masks(np.zeros((5, 7)), np.zeros((5, 6)))
    rles = encode(np.zeros((1, 4, 4), dtype=bool)) + encode(np.zeros((1, 4, 5), dtype=bool))
    with pytest.raises(iou.ArgumentError, match=r"a\[1\]: size 4x5, the first is 4x4"):
        iou.masks(rles, rles)


@pytest.mark.parametrize(
    ("a", "match"),
    [
        (np.full((3, 3), 2), r"a\[0\]: a binary mask holds only 0 and 1"),
        (np.zeros((2, 2, 3, 3)), r"a: expected a mask \[H, W\]"),
        ({"size": [2, 2], "counts": [1, 2]}, r"a\[0\]: RLE counts cover 3 pixels, size 2x2 has 4"),
        ({"size": [2, 2], "counts": "0!"}, r"a\[0\]: counts is not a COCO compressed RLE"),
        ({"size": [2, 2], "counts": "0o"}, r"a\[0\]: counts ends in the middle of a number"),
        ({"counts": "04"}, r"a\[0\]: an RLE is"),
        ([{"size": [1, 1], "counts": [0, 1]}, np.ones((1, 1))], r"a\[1\]: expected an RLE dict"),
    ],
)
def test_malformed_masks_raise_a_located_error(a, match):
    with pytest.raises(ValueError, match=match):
        iou.masks(a, np.zeros((2, 2)))


def test_pixel_counts_are_exact_across_chunks(monkeypatch):
    """The pairwise counts run over blocks of pixels; the seams must not change them."""
    from iou_eval.toolkit import mask_rows as rle

    rng = np.random.default_rng(21)
    a, b = blobs(rng, 6, 40, 50), blobs(rng, 5, 40, 50)
    whole = iou.masks(a, b)
    monkeypatch.setattr(rle, "PAIR_BUDGET", 1)  # the 1024-pixel minimum chunk
    np.testing.assert_array_equal(iou.masks(a, b), whole)
    np.testing.assert_array_equal(whole, reference(a, b))
