"""Boundary IoU's pieces: the erosion depth, boundaries of tiny masks, RLE columns, the geometry.

Hand-built masks with literal expected boundaries; the compiled kernel and
the numpy path give the same strings, areas and boxes on seeded masks
(empty runs and masks cut by the border included), both equal to the
reference of boundary-iou-api's rule in :mod:`tests.parity.boundary_scenes`.
"""

from __future__ import annotations

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval import iou
from iou_eval.errors import ArgumentError, UsageError
from iou_eval.geometry import boundary as B
from iou_eval.geometry import kernel
from iou_eval.geometry.masks import MaskColumn
from iou_eval.geometry.rle import decode_joined, encode_counts

from ..parity.boundary_scenes import api_boundary, decode
from ..skip_reasons import compiled_missing

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

KERNEL = kernel.compiled()
needs_kernel = pytest.mark.skipif(
    KERNEL is None, reason=compiled_missing("the mask kernel", "iou_eval.geometry._rlekernel")
)


def _m(rows: str) -> np.ndarray:
    """A mask from lines of '#' (set) and '.' (not)."""
    return np.array([[c == "#" for c in line] for line in rows.split()], dtype=bool)


# ---------------------------------------------------------------- the depth


@pytest.mark.parametrize(
    ("h", "w", "ratio", "d"),
    [
        (256, 256, 0.02, 7),  # 7.24
        (45, 60, 0.02, 2),  # 1.5: halves to even
        (75, 100, 0.02, 2),  # 2.5
        (105, 140, 0.02, 4),  # 3.5
        (5, 5, 0.02, 1),  # 0.14: at least 1
        (480, 640, 0.02, 16),  # 16.0
        (100, 100, 0.0, 1),
    ],
)
def test_depth_rounds_as_python_and_is_at_least_one(h, w, ratio, d):
    assert int(B.dilation_pixels(h, w, ratio)) == d
    assert d == max(1, round(ratio * float(np.sqrt(h * h + w * w))))


def test_depth_of_many_sizes_at_once():
    assert B.dilation_pixels([45, 256], [60, 256], 0.02).tolist() == [2, 7]


# ------------------------------------------------------------ dense masks


def test_a_square_keeps_its_outer_ring():
    mask = _m(""".......
                 .#####.
                 .#####.
                 .#####.
                 .#####.
                 .#####.
                 .......""")
    want = _m(""".......
                 .#####.
                 .#...#.
                 .#...#.
                 .#...#.
                 .#####.
                 .......""")
    assert np.array_equal(B.boundary_masks(mask, 1), want)
    centre = mask.copy()
    centre[3, 3] = False  # d = 2: a 5 x 5 window fits at the centre only
    assert np.array_equal(B.boundary_masks(mask, 2), centre)
    assert np.array_equal(B.boundary_masks(mask, 3), mask)


def test_the_image_border_is_background():
    """A mask filling the image's left columns has boundary along the border too."""
    mask = _m("""###..
                 ###..
                 ###..
                 ###..""")
    want = _m("""###..
                 #.#..
                 #.#..
                 ###..""")
    assert np.array_equal(B.boundary_masks(mask, 1), want)


def test_a_thin_strip_is_all_boundary_and_a_hole_has_an_inner_edge():
    strip = np.zeros((9, 12), dtype=bool)
    strip[4:6, 1:11] = True  # two pixels high: nothing survives d = 1
    assert np.array_equal(B.boundary_masks(strip, 1), strip)
    ring = np.zeros((11, 11), dtype=bool)
    ring[1:10, 1:10] = True
    ring[4:7, 4:7] = False
    edge = B.boundary_masks(ring, 1)
    assert edge[3, 3:8].all() and edge[7, 3:8].all()  # around the hole
    assert not edge[2, 2] and edge[1, 1]
    assert int(edge.sum()) == 32 + 16


def test_erosion_equals_d_three_by_three_erosions():
    rng = np.random.default_rng(0)
    for _ in range(20):
        h, w = (int(v) for v in rng.integers(3, 40, 2))
        mask = rng.random((h, w)) < 0.8
        d = B.dilation_pixels(h, w, 0.1)
        assert np.array_equal(B.boundary_masks(mask, int(d)), api_boundary(mask, 0.1))


# ------------------------------------------------------------ RLE columns


def _column(masks: list[np.ndarray]) -> MaskColumn:
    rles = [mask_utils.encode(np.asfortranarray(m.astype(np.uint8))) for m in masks]
    return MaskColumn.of(
        [r["counts"] for r in rles], np.array([m.shape[0] for m in masks]),
        np.array([m.shape[1] for m in masks]), np.array([float(m.sum()) for m in masks]),
    )  # fmt: skip


def _random_masks(seed: int, n: int = 120) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(1, 90, 2))
        m = np.zeros((h, w), dtype=bool)
        for _ in range(int(rng.integers(0, 4))):
            y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
            m[y : y + int(rng.integers(1, h + 1)), x : x + int(rng.integers(1, w + 1))] = True
        if i % 5 == 0:
            m ^= rng.random((h, w)) < 0.2
        if i % 13 == 0:
            m[:] = True
        out.append(m)
    return out


def test_encoded_counts_are_pycocotools_strings():
    masks = [*_random_masks(1, 60), np.ones((1000, 1000), bool), np.zeros((3, 7), bool)]
    masks[0][0, 0] = True
    column = _column(masks)
    buf, lengths = column.strings.joined()
    cnts, offsets = decode_joined(buf, lengths, column.height, column.width)
    again, again_len = encode_counts(cnts, offsets)
    assert again.tobytes() == buf.tobytes()
    assert np.array_equal(again_len, lengths)


def _strings(column: MaskColumn) -> list[bytes]:
    return column.strings.values()


@pytest.mark.parametrize("ratio", [0.02, 0.07, 0.3])
def test_boundary_columns_equal_the_reference(ratio, monkeypatch):
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    masks = _random_masks(2)
    edges = B.boundary_column(_column(masks), ratio)
    for i, m in enumerate(masks):
        want = api_boundary(m, ratio)
        assert np.array_equal(decode(edges.rle_dicts([i])[0]), want), i
        assert edges.area[i] == want.sum()
        if want.any():
            ys, xs = np.nonzero(m)
            assert edges.box[i].tolist() == [xs.min(), ys.min(), xs.max(), ys.max()]


@needs_kernel
@pytest.mark.parametrize("seed", [3, 4])
def test_kernel_and_numpy_give_the_same_strings_areas_and_boxes(seed):
    column = _column(_random_masks(seed))
    d = B.dilation_pixels(column.height, column.width, 0.05)
    ours = B._numpy_boundaries(column, d)
    theirs = B._compiled_boundaries(KERNEL, column, d)
    for a, b in zip(ours, theirs, strict=True):
        assert np.array_equal(a, b)


def _with_empty_runs(seed: int) -> MaskColumn:
    """Masks whose strings hold empty runs (``... 3, 0, 4 ...``): not as pycocotools writes them."""
    rng = np.random.default_rng(seed)
    cnts, per, hs, ws = [], [], [], []
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(2, 30, 2))
        left, row = h * w, []
        while left > 0:
            run = int(min(left, rng.integers(0, 2 * h)))
            row.append(run)
            left -= run
            if rng.random() < 0.3:
                row += [0, 0]  # an empty run of the other colour, then this colour goes on
        cnts += row
        per.append(len(row))
        hs.append(h)
        ws.append(w)
    offsets = np.r_[0, np.cumsum(per)]
    buf, lengths = encode_counts(np.array(cnts, dtype=np.int64), offsets)
    from iou_eval.geometry.masks import Strings

    strings = Strings(buf, _starts(lengths), lengths)
    h, w = np.array(hs, dtype=np.int64), np.array(ws, dtype=np.int64)
    return MaskColumn(strings, h, w, np.zeros(len(hs)))


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)


@pytest.mark.parametrize("path", ["numpy", "compiled"])
def test_strings_with_empty_runs_are_read_by_their_pixels(path, monkeypatch):
    if path == "compiled" and KERNEL is None:
        pytest.skip(compiled_missing("the mask kernel", "iou_eval.geometry._rlekernel"))
    if path == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    column = _with_empty_runs(5)
    edges = B.boundary_column(column, 0.1)
    for i, rle in enumerate(column.rle_dicts()):
        want = api_boundary(decode(rle), 0.1)
        assert np.array_equal(decode(edges.rle_dicts([i])[0]), want), i


@needs_kernel
def test_the_kernel_refuses_a_string_that_is_not_a_mask_of_its_size():
    column = _column([np.ones((4, 4), bool)])
    bad = np.array([4], dtype=np.int64)  # 16 pixels said to be 4 x 5
    with pytest.raises(ValueError, match="not a mask of its size"):
        B._compiled_boundaries(
            KERNEL, MaskColumn(column.strings, column.height, bad + 1, column.area), bad
        )


# ------------------------------------------------------------------ geometry


def _geometry(ratio: float = 0.02):
    """Three ground truths (the last a crowd region) and four predictions of one 40 x 50 image."""
    g = [np.zeros((40, 50), bool) for _ in range(3)]
    g[0][5:25, 5:30] = True
    g[1][20:38, 28:48] = True
    g[2][0:40, 0:12] = True
    p = [np.zeros((40, 50), bool) for _ in range(4)]
    p[0][6:26, 6:31] = True  # g0 shifted by one pixel
    p[1][20:38, 28:46] = True  # g1 less two columns
    p[2][10:20, 2:8] = True  # inside the crowd region
    p[3][5:25, 5:30] = True  # g0 itself
    gt = _column(g)
    dt = _column(p)
    crowd = np.array([False, False, True])
    masks = B.MaskGeometry(dt, gt, crowd, dt.area, dt_image=np.zeros(4, dtype=np.int64))
    return B.BoundaryGeometry(masks, ratio), g, p


def test_pair_overlaps_are_the_minimum_of_mask_and_boundary_iou_and_iof_on_crowds():
    geo, g, p = _geometry()
    d_rows = np.repeat(np.arange(4), 3)
    g_rows = np.tile(np.arange(3), 4)
    got = geo.pair(d_rows, g_rows).reshape(4, 3)
    mask = iou.masks(list(p), list(g))
    edge = iou.boundary(list(p), list(g))
    want = np.minimum(mask, edge)
    # The crowd column keeps the mask's IoF (over the prediction's area).
    inter = np.array([(pm & g[2]).sum() for pm in p], dtype=np.float64)
    want[:, 2] = inter / np.array([pm.sum() for pm in p])
    assert np.array_equal(got, want)
    assert got[2, 2] == 1.0 and got[3, 0] == 1.0
    assert 0 < got[0, 0] < mask[0, 0]  # the boundary decides


def test_pairs_keep_exactly_the_pairs_that_reach_the_floor():
    geo, _, _ = _geometry()
    every = geo.pair(np.repeat(np.arange(4), 3), np.tile(np.arange(3), 4)).reshape(4, 3)
    for floor in (0.0, 0.3, 0.5, 0.9):
        pd, pg, vals = geo.pairs(
            np.zeros(4, dtype=np.int64), np.arange(3), np.array([0, 3]), np.arange(4), floor
        )
        got = {(int(a), int(b)): v for a, b, v in zip(pd, pg, vals, strict=True)}
        want = {(a, b): every[a, b] for a in range(4) for b in range(3) if every[a, b] >= floor}
        assert got == want, floor


def test_take_renumbers_the_rows():
    geo, _, _ = _geometry()
    sub = geo.take(np.array([1, 0]), np.array([3, 0]))
    assert np.array_equal(
        sub.pair(np.array([0, 1]), np.array([1, 1])), geo.pair(np.array([3, 0]), np.array([0, 0]))
    )
    assert sub.pair(np.array([0]), np.array([1]))[0] == 1.0
    assert sub.dt_area.tolist() == [geo.dt_area[3], geo.dt_area[0]]
    assert sub.dilation_ratio == geo.dilation_ratio


# ------------------------------------------------------------------ toolkit


def test_toolkit_boundary_takes_binary_masks_and_rles_alike():
    a = np.zeros((30, 40), bool)
    a[5:20, 5:25] = True
    b = np.roll(a, 2, axis=1)
    rle_b = mask_utils.encode(np.asfortranarray(b.astype(np.uint8)))
    one = iou.boundary(a, b)
    assert isinstance(one, float) and 0 < one < iou.masks(a, b)
    assert iou.boundary(a, rle_b) == one
    many = iou.boundary(np.stack([a, b]), [rle_b, rle_b, rle_b])
    assert many.shape == (2, 3) and many[1, 0] == 1.0 and many[0, 2] == one
    assert iou.boundary(np.zeros((0, 30, 40)), b).shape == (0, 1)
    assert iou.masks(np.zeros((0, 30, 40)), b).shape == (0, 1)
    empty = np.zeros((30, 40), bool)
    assert iou.boundary(empty, empty) == 0.0


def test_toolkit_boundary_refuses_bad_arguments():
    a = np.ones((10, 10), bool)
    with pytest.raises(ArgumentError, match="dt_masks: masks are 10x12"):
        iou.boundary(a, np.ones((10, 12), bool))
    for ratio in (-0.1, 1.5, True, "0.02", float("nan")):
        with pytest.raises(ArgumentError, match="dilation_ratio"):
            iou.boundary(a, a, dilation_ratio=ratio)


def test_the_dilation_option_needs_the_boundary_iou_type():
    from iou_eval.options import ProtocolOptions

    with pytest.raises(UsageError, match="applies to --iou-type boundary"):
        ProtocolOptions(boundary_dilation=0.05)
    with pytest.raises(UsageError, match=r"--boundary-dilation: expected"):
        ProtocolOptions(iou_type=("boundary",), boundary_dilation=1.5)
    assert ProtocolOptions(iou_type=("boundary",), boundary_dilation=0.05).masks
