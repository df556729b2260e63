"""The compiled mask kernel gives exactly what numpy and pycocotools give.

- it is built wherever a C compiler is at hand (so that the suite's own
  install proves the build), and ``IOU_EVAL_NO_KERNEL=1`` turns it off;
- ``check``: areas, boxes and refusals equal the numpy reader's, on seeded
  random masks and on every kind of malformed string;
- ``ious``: whole overlap matrices equal ``pycocotools.mask.iou``'s, bit for
  bit, on seeded groups with crowd regions, empty and full masks, identical
  masks, masks of another size and strings with empty runs;
- ``bboxes``: equal ``pycocotools.mask.toBbox``, degenerate masks included;
- ``polygons``: the strings of pycocotools' ``frPoly``, byte for byte.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from pycocotools import _mask
from pycocotools import mask as mask_utils

from iou_eval.engine import compiled as parts
from iou_eval.geometry import kernel
from iou_eval.geometry.masks import (
    MaskColumn,
    mask_boxes,
    mask_overlaps_batched,
    mask_pair_overlaps,
)
from iou_eval.geometry.rle import BadRle, check_joined
from iou_eval.io.compiled import json_reader

from ..skip_reasons import compiled_missing
from .test_mask_bounds import _encode_counts, _random_masks, _rle

KERNEL = kernel.compiled()
needs_kernel = pytest.mark.skipif(
    KERNEL is None, reason=compiled_missing("the mask kernel", "iou_eval.geometry._rlekernel")
)


def test_kernel_is_built_where_a_compiler_is(monkeypatch):
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler on this machine")
    assert KERNEL is not None, "a C compiler is here but iou_eval.geometry._rlekernel was not built"
    assert json_reader() is not None, "iou_eval.io._cocojson was not built"
    # --version names every compiled part, and says it runs.
    assert parts.describe() == "\n".join(f"{name}: compiled, in use" for name in parts.PARTS)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert kernel.compiled() is None
    assert json_reader() is None
    # Switched off is not absent: --version says the parts are installed.
    assert parts.describe() == "\n".join(
        f"{name}: installed, switched off by IOU_EVAL_NO_KERNEL" for name in parts.PARTS
    )


def _scene(seed: int, n: int = 300):
    """``(strings, h, w)``: seeded random masks of random sizes, with degenerate counts."""
    rng = np.random.default_rng(seed)
    strings, hs, ws = [], [], []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        if i % 10 == 0:
            # Counts pycocotools never writes but reads: empty runs anywhere.
            total, counts = h * w, []
            while total > 0:
                c = int(min(total, rng.integers(0, 6)))
                counts.append(c)
                total -= c
            s = _encode_counts(counts)
        else:
            s = _rle(_random_masks(rng, 1, h, w)[0])
        strings.append(s)
        hs.append(h)
        ws.append(w)
    return strings, np.array(hs, dtype=np.int64), np.array(ws, dtype=np.int64)


def _check(strings, h, w):
    buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
    lengths = np.array([len(s) for s in strings], dtype=np.int64)
    box = np.zeros((len(strings), 4), dtype=np.int64)
    area = check_joined(buf, lengths, h, w, box, tight=True)
    return area, box


@needs_kernel
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_equals_the_numpy_reader(seed, monkeypatch):
    strings, h, w = _scene(seed)
    area, box = _check(strings, h, w)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    area_np, box_np = _check(strings, h, w)
    np.testing.assert_array_equal(area, area_np)
    np.testing.assert_array_equal(box, box_np)
    expected = np.array(
        [
            mask_utils.area({"size": [a, b], "counts": s})
            for s, a, b in zip(strings, h.tolist(), w.tolist(), strict=True)
        ]
    )
    np.testing.assert_array_equal(area, expected)


BAD = [
    (b"0p", "outside"),  # a character past 'o'
    (b"3", "add up"),  # 3 pixels of 12
    (b"\x2f", "outside"),  # below '0'
    (b"h", "ends in the middle"),  # continuation bit on the last character
    (b"hhhhhhh0", "longer than"),  # seven characters
    (b"", "add up"),  # no counts at all
    (_encode_counts([5, -2, 9]), "negative"),
    (_encode_counts([5, 4, 9]), "add up"),  # 18 of 12
]


@needs_kernel
@pytest.mark.parametrize("bad,words", BAD)
def test_check_refuses_what_the_numpy_reader_refuses(bad, words, monkeypatch):
    good = _encode_counts([4, 4, 4])
    strings = [good, good, bad, good]
    h, w = np.full(4, 4, dtype=np.int64), np.full(4, 3, dtype=np.int64)
    with pytest.raises(BadRle) as kernel_error:
        _check(strings, h, w)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    with pytest.raises(BadRle) as numpy_error:
        _check(strings, h, w)
    assert kernel_error.value.row == numpy_error.value.row == 2
    assert kernel_error.value.reason == numpy_error.value.reason
    assert words in kernel_error.value.reason


@needs_kernel
def test_check_reports_the_first_bad_row_in_file_order():
    good = _encode_counts([4, 4, 4])
    strings = [good, _encode_counts([4, 4, 5]), good, b"0p"]
    h, w = np.full(4, 4, dtype=np.int64), np.full(4, 3, dtype=np.int64)
    with pytest.raises(BadRle) as info:
        _check(strings, h, w)
    assert info.value.row == 1 and "add up to 13" in info.value.reason


def _column(strings, h, w):
    area = np.array([0.0] * len(strings))
    return MaskColumn.of(strings, h, w, area)


@needs_kernel
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ious_equal_pycocotools_bit_for_bit(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    dts, gts, dh, dw, gh, gw = [], [], [], [], [], []
    groups = []
    for _ in range(25):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        nd, ng = (int(v) for v in rng.integers(0, 7, 2))
        masks = _random_masks(rng, nd + ng, h, w)
        if nd and ng and rng.random() < 0.5:
            masks[0] = masks[nd].copy()  # an identical pair
        if nd and ng and rng.random() < 0.3:
            masks[nd - 1][:] = 0  # an empty prediction
            masks[-1][:] = 1  # a full ground truth
        d_rows = list(range(len(dts), len(dts) + nd))
        g_rows = list(range(len(gts), len(gts) + ng))
        for m in masks[:nd]:
            dts.append(_rle(m))
            # Now and then a prediction of another size: -1 where boxes meet.
            other = rng.random() < 0.1
            dh.append(h + 1 if other else h)
            dw.append(w)
        for m in masks[nd:]:
            gts.append(_rle(m))
            gh.append(h)
            gw.append(w)
        groups.append((d_rows, g_rows))
    # A few strings with empty runs in the middle.
    gts.append(_encode_counts([3, 0, 2, 0, 5, 2]))
    gh.append(4)
    gw.append(3)
    dts.append(_encode_counts([1, 4, 0, 3, 4]))
    dh.append(4)
    dw.append(3)
    groups.append(([len(dts) - 1], [len(gts) - 1]))
    crowd = rng.random(len(gts)) < 0.3
    dcol = _column(dts, np.array(dh), np.array(dw))
    gcol = _column(gts, np.array(gh), np.array(gw))
    d_rows = np.array([r for d, _ in groups for r in d], dtype=np.int64)
    g_rows = np.array([r for _, g in groups for r in g], dtype=np.int64)
    d_starts = np.cumsum([0] + [len(d) for d, _ in groups])
    g_starts = np.cumsum([0] + [len(g) for _, g in groups])
    values, offsets = mask_overlaps_batched(dcol, gcol, crowd, d_rows, d_starts, g_rows, g_starts)
    for k, (d, g) in enumerate(groups):
        expected = np.zeros((len(d), len(g)))
        if d and g:
            expected = _mask.iou(
                [{"size": [dh[r], dw[r]], "counts": dts[r]} for r in d],
                [{"size": [gh[r], gw[r]], "counts": gts[r]} for r in g],
                crowd[g].astype(np.uint8),
            )
        got = values[offsets[k] : offsets[k + 1]].reshape(len(d), len(g))
        assert got.tobytes() == np.asarray(expected, dtype=np.float64).tobytes(), k
    assert (values == -1).any() and (values == 1).any() and (values == 0).any()
    # The same pairs listed one by one, in shuffled order, blocks by group.
    pair_d = np.concatenate([np.repeat(d, len(g)) for d, g in groups if d and g])
    pair_g = np.concatenate([np.tile(g, len(d)) for d, g in groups if d and g])
    pair_k = np.concatenate(
        [np.full(len(d) * len(g), k) for k, (d, g) in enumerate(groups) if d and g]
    )
    shuffle = rng.permutation(len(pair_d))
    pairs = (pair_d[shuffle], pair_g[shuffle])
    listed = mask_pair_overlaps(dcol, gcol, crowd, *pairs, pair_k[shuffle])
    one_by_one = mask_pair_overlaps(dcol, gcol, crowd, *pairs)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    values_np, _ = mask_overlaps_batched(dcol, gcol, crowd, d_rows, d_starts, g_rows, g_starts)
    assert values.tobytes() == values_np.tobytes()
    listed_np = mask_pair_overlaps(dcol, gcol, crowd, *pairs, pair_k[shuffle])
    assert listed.tobytes() == listed_np.tobytes() == one_by_one.tobytes()
    assert (listed == -1).any() and (listed > 0).any()


@needs_kernel
def test_ious_refuse_rows_outside_the_column():
    col = _column([_encode_counts([4, 4, 4])], np.array([4]), np.array([3]))
    with pytest.raises(IndexError):
        mask_overlaps_batched(
            col, col, np.zeros(1, bool), np.array([1]), [0, 1], np.array([0]), [0, 1]
        )


@needs_kernel
@pytest.mark.parametrize("seed", [0, 1])
def test_bboxes_equal_pycocotools(seed, monkeypatch):
    strings, h, w = _scene(seed)
    extra = [[3, 0, 9], [3, 0, 2, 0, 7], [12], [0, 12], [12, 0]]
    strings += [_encode_counts(c) for c in extra]
    h = np.concatenate([h, np.full(len(extra), 4)])
    w = np.concatenate([w, np.full(len(extra), 3)])
    col = _column(strings, h, w)
    got = mask_boxes(col)
    expected = _mask.toBbox(
        [
            {"size": [a, b], "counts": s}
            for s, a, b in zip(strings, h.tolist(), w.tolist(), strict=True)
        ]
    )
    assert got.tobytes() == np.asarray(expected, dtype=np.float64).tobytes()
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert mask_boxes(col).tobytes() == got.tobytes()


def _flat(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Polygon parts as ``_rasterise`` takes them: numbers back to back, offsets."""
    off = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=off[1:])
    return np.concatenate(parts), off


@needs_kernel
@pytest.mark.parametrize("seed", [0, 1])
def test_polygons_equal_pycocotools_frpoly_byte_for_byte(seed, monkeypatch):
    """Outlines inside, across and outside the image, on the half pixel, with
    repeated vertices, 1- and 2-point contours: the strings of ``frPoly``."""
    from iou_eval.geometry.masks import _rasterise

    rng = np.random.default_rng(seed)
    parts, hs, ws = [], [], []
    for i in range(3000):
        h, w = (int(v) for v in rng.integers(1, 60, 2))
        n = int(rng.integers(1, 10))
        side = max(h, w)
        p = [
            rng.uniform(-10, side + 10, 2 * n),
            np.round(rng.uniform(0, side, 2 * n)),
            np.round(rng.uniform(0, side, 2 * n) * 2) / 2,
            rng.uniform(0, side, 2 * n),
        ][i % 4]
        if i % 7 == 0 and n > 1:
            p[2:4] = p[0:2]  # a repeated vertex
        parts.append(p.astype(np.float64))
        hs.append(h)
        ws.append(w)
    h, w = np.array(hs, dtype=np.int64), np.array(ws, dtype=np.int64)
    got = _rasterise(*_flat(parts), h, w)
    expected = [_mask.frPoly([p], a, b)[0]["counts"] for p, a, b in zip(parts, hs, ws, strict=True)]
    assert got == expected
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert _rasterise(*_flat(parts), h, w) == expected


@needs_kernel
def test_polygons_equal_frpoly_on_large_thin_and_huge_images(monkeypatch):
    """Outlines of many vertices at photo sizes, round ones, slivers one pixel
    wide or tall (edges that step in x and in y), far outside the image, and
    images of more than 2**32 pixels (where pycocotools' positions wrap)."""
    from iou_eval.geometry.masks import _rasterise

    rng = np.random.default_rng(7)
    parts, hs, ws = [], [], []
    for i in range(1500):
        kind = i % 6
        low, high = (60_000, 90_000) if kind == 5 else (1, 700)
        h, w = (int(v) for v in rng.integers(low, high, 2))
        n = int(rng.integers(3, 60))
        side = max(h, w)
        if kind == 0:
            p = rng.uniform(-50, side + 50, 2 * n)
        elif kind == 1:
            cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(1, side / 2)
            a = np.sort(rng.uniform(0, 2 * np.pi, n))
            p = np.empty(2 * n)
            p[0::2], p[1::2] = cx + r * np.cos(a), cy + r * np.sin(a)
        elif kind == 2:
            p = np.round(rng.uniform(-2000, 2000, 2 * n), 1)
        elif kind == 3:
            p = rng.uniform(0, side, 2 * n)
            p[0::2] = p[0] + rng.uniform(-1, 1, n)
        elif kind == 4:
            p = rng.uniform(0, side, 2 * n)
            p[1::2] = p[1] + rng.uniform(-1, 1, n)
        else:
            p = rng.uniform(0, 2000, 2 * n) + rng.uniform(0, 60_000)
        parts.append(p.astype(np.float64))
        hs.append(h)
        ws.append(w)
    h, w = np.array(hs, dtype=np.int64), np.array(ws, dtype=np.int64)
    expected = [_mask.frPoly([p], a, b)[0]["counts"] for p, a, b in zip(parts, hs, ws, strict=True)]
    assert _rasterise(*_flat(parts), h, w) == expected
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert _rasterise(*_flat(parts), h, w) == expected


@needs_kernel
def test_polygons_with_steep_edges_equal_frpoly(monkeypatch):
    """Edges that step in y (their crossings are found without walking every
    point): nearly upright, at every slope below one, long and short, about the
    image's left side (upsampled x near 0, where C's truncation is not a floor)
    and its right side, and wholly outside it: the strings of ``frPoly``."""
    from iou_eval.geometry.masks import _rasterise

    rng = np.random.default_rng(11)
    parts, hs, ws = [], [], []
    for i in range(3000):
        h, w = (int(v) for v in rng.integers(1, 400, 2))
        n = int(rng.integers(3, 12))
        y = rng.uniform(-20, h + 20, n)
        x0 = [
            rng.uniform(-2, 2),
            rng.uniform(w - 2, w + 2),
            rng.uniform(0, w),
            rng.uniform(-30, -5),
        ][i % 4]
        # |dx| below |dy| on most edges: x moves less than y between vertices.
        x = x0 + np.cumsum(
            rng.uniform(-1, 1, n) * np.abs(np.diff(y, prepend=y[-1])) * rng.uniform(0, 1)
        )
        p = np.empty(2 * n)
        p[0::2], p[1::2] = x, y
        if i % 5 == 0:
            p = np.round(p * 2) / 2  # on the half pixel
        parts.append(p.astype(np.float64))
        hs.append(h)
        ws.append(w)
    h, w = np.array(hs, dtype=np.int64), np.array(ws, dtype=np.int64)
    expected = [_mask.frPoly([p], a, b)[0]["counts"] for p, a, b in zip(parts, hs, ws, strict=True)]
    assert _rasterise(*_flat(parts), h, w) == expected
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert _rasterise(*_flat(parts), h, w) == expected


@needs_kernel
def test_flatten_reads_json_numbers_as_float_does_and_leaves_the_rest():
    """Floats and ints (big ones rounded as float() rounds them) in lists and tuples;
    a bool, a numpy scalar, a string, an int beyond a double or a part that is not a
    list or tuple is left to the caller, at the first part holding one."""
    rng = np.random.default_rng(4)
    parts = [
        [float(v) for v in rng.uniform(-1e6, 1e6, 8)],
        [int(v) for v in rng.integers(-(2**62), 2**62, 6)],
        (1, 2.5, -0.0, 3),
        [2**53 + 1, 2**60 + 123, -(2**70) - 1, 10**300],
        [],
    ]
    lens = np.array([len(p) for p in parts])
    out = np.empty(int(lens.sum()))
    assert KERNEL.flatten(parts, out) == -1
    expected = np.array([float(v) for p in parts for v in p])
    assert out.tobytes() == expected.tobytes()
    for odd in (True, np.float64(1.5), "1.5", 10**400, None):
        mixed = [[1.0, 2.0], [3.0, odd], [5.0, 6.0]]
        assert KERNEL.flatten(mixed, np.empty(6)) == 1, odd
    assert KERNEL.flatten([[1.0, 2.0], np.array([3.0, 4.0])], np.empty(4)) == 1
    with pytest.raises(ValueError):
        KERNEL.flatten([[1.0, 2.0, 3.0]], np.empty(2))
    with pytest.raises(ValueError):
        KERNEL.flatten([[1.0, 2.0]], np.empty(3))


def test_select_parts_keeps_the_numbers_of_the_chosen_parts():
    from iou_eval.geometry.masks import _select_parts

    parts = [np.arange(n, dtype=np.float64) + 100 * i for i, n in enumerate([6, 4, 0, 8, 2])]
    flat, off = _flat(parts)
    for keep in ([0, 1, 2, 3, 4], [0, 3], [1, 4], [2], []):
        got_flat, got_off = _select_parts(flat, off, np.array(keep, dtype=np.int64))
        want = [parts[i] for i in keep]
        assert got_off.tolist() == np.concatenate([[0], np.cumsum([len(p) for p in want])]).tolist()
        assert got_flat.tolist() == (np.concatenate(want).tolist() if want else [])
