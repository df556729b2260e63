"""The shortcuts of mask matching give what computing every overlap gives.

- :func:`iou_eval.geometry.rle.foreground_boxes` and :func:`~iou_eval.geometry.rle.column_boxes`
  hold every foreground pixel (the first exactly, columns exact in the second),
  also for strings pycocotools never writes (empty runs at either end);
- :meth:`MaskGeometry.pairs`, which hands pycocotools only the pairs whose
  bound reaches the floor, keeps exactly the pairs whose overlap reaches it,
  with pycocotools' values, on seeded scenes with crowd regions, empty masks,
  identical masks and masks of another size;
- the overlaps the matcher keeps for the operating point equal those computed
  again, for boxes and masks.
"""

from __future__ import annotations

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval.geometry.boxes import BoxGeometry
from iou_eval.geometry.masks import MaskColumn, MaskGeometry, column_from_rles, mask_overlaps
from iou_eval.geometry.pairs import candidate_pairs
from iou_eval.geometry.rle import check_compressed, check_joined

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


def _random_masks(rng, n, h, w):
    masks = []
    for _ in range(n):
        m = np.zeros((h, w), dtype=np.uint8, order="F")
        for _ in range(int(rng.integers(0, 4))):
            y, x = rng.integers(0, h), rng.integers(0, w)
            m[y : y + rng.integers(1, h + 1), x : x + rng.integers(1, w + 1)] = 1
        if rng.random() < 0.1:
            m[:] = rng.random((h, w)) < 0.3
        masks.append(m)
    return masks


def _rle(m):
    return mask_utils.encode(np.asfortranarray(m, dtype=np.uint8))["counts"]


def mask_boxes_of(strings, h, w):
    """Exact boxes of compressed strings."""
    box = np.zeros((len(strings), 4), dtype=np.int64)
    check_compressed(strings, h, w, box)
    return box


def _pixels(m):
    ys, xs = np.nonzero(m)
    return xs, ys


def _encode_counts(counts):
    """pycocotools' compressed string of any counts (zeros included)."""
    out = []
    for i, x in enumerate(counts):
        if i > 2:
            x -= counts[i - 2]
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return "".join(out).encode()


def test_boxes_hold_every_pixel_of_random_masks(monkeypatch):
    # The numpy reader's boxes (the compiled kernel gives the tight ones everywhere).
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    rng = np.random.default_rng(7)
    h_all, w_all, strings, masks = [], [], [], []
    for _ in range(400):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        m = _random_masks(rng, 1, h, w)[0]
        strings.append(_rle(m))
        masks.append(m)
        h_all.append(h)
        w_all.append(w)
    h_arr, w_arr = np.array(h_all), np.array(w_all)
    tight = mask_boxes_of(np.array(strings, dtype=object), h_arr, w_arr)
    loose = np.zeros((len(strings), 4), dtype=np.int64)
    buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
    area = check_joined(buf, np.array([len(s) for s in strings]), h_arr, w_arr, loose)
    for i, m in enumerate(masks):
        xs, ys = _pixels(m)
        assert area[i] == m.sum()
        if not len(xs):
            assert tight[i, 2] < tight[i, 0] and loose[i, 2] < loose[i, 0]
            continue
        assert tuple(tight[i]) == (xs.min(), ys.min(), xs.max(), ys.max())
        assert tuple(loose[i]) == (xs.min(), 0, xs.max(), h_arr[i] - 1)


@pytest.mark.parametrize(
    "counts",
    [[3, 0, 2, 4, 3], [0, 0, 5, 4, 3], [2, 3, 7, 0], [12, 0], [0, 12], [5, 2, 5, 0, 0]],
)
def test_boxes_of_strings_with_empty_runs(counts):
    """Counts pycocotools never writes but reads: empty runs first or last (4 x 3 image)."""
    s = _encode_counts(counts)
    h, w = np.array([4]), np.array([3])
    loose = np.zeros((1, 4), dtype=np.int64)
    check_joined(np.frombuffer(s, dtype=np.uint8), np.array([len(s)]), h, w, loose)
    tight = mask_boxes_of(np.array([s], dtype=object), h, w)
    flat = np.zeros(12, dtype=np.uint8)
    pos = 0
    for j, c in enumerate(counts):
        flat[pos : pos + c] = j % 2
        pos += c
    xs, ys = _pixels(flat.reshape(3, 4).T)
    if not len(xs):
        assert loose[0, 2] < loose[0, 0] and tight[0, 2] < tight[0, 0]
        return
    assert tuple(tight[0]) == (xs.min(), ys.min(), xs.max(), ys.max())
    assert (loose[0, 0], loose[0, 2]) == (xs.min(), xs.max())
    assert loose[0, 1] <= ys.min() and loose[0, 3] >= ys.max()


def _scene(seed):
    """Groups of one image each: predictions near ground truths, crowd, empty, identical,
    and a prediction of another image size (pycocotools gives -1)."""
    rng = np.random.default_rng(seed)
    h, w = 24, 20
    gt_masks = _random_masks(rng, 12, h, w)
    dt_masks = []
    for _ in range(40):
        if rng.random() < 0.3:
            dt_masks.append(gt_masks[int(rng.integers(0, 12))].copy())  # identical
        else:
            dt_masks.extend(_random_masks(rng, 1, h, w))
    dt_masks[3][:] = 0  # an empty prediction
    gt_masks[5][:] = 0  # an empty ground truth
    gt = column_from_rles([_rle(m) for m in gt_masks], np.full(12, h), np.full(12, w))
    dt_h = np.full(41, h)
    dt_w = np.full(41, w)
    odd = np.asfortranarray(np.ones((h + 1, w), dtype=np.uint8))
    dt_masks.append(odd)  # another image size
    dt_h[-1] = h + 1
    dt = column_from_rles([_rle(m) for m in dt_masks], dt_h, dt_w)
    crowd = np.zeros(12, dtype=bool)
    crowd[[2, 7]] = True
    d_groups = np.sort(rng.integers(0, 3, 41))
    gt_sorted = np.arange(12)
    g_starts = np.array([0, 4, 9, 12])
    return dt, gt, crowd, d_groups, gt_sorted, g_starts


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("floor", [0.0, 0.1, 0.5, 0.75, 1.0 - 1e-10])
def test_pairs_keep_exactly_the_pairs_that_reach_the_floor(seed, floor):
    dt, gt, crowd, d_groups, gt_sorted, g_starts = _scene(seed)
    geo = MaskGeometry(dt, gt, crowd, dt.area)
    rows = np.arange(len(dt))
    pd, pg, iou = geo.pairs(d_groups, gt_sorted, g_starts, rows, floor)
    full = mask_overlaps(dt, gt, crowd)  # every pair, pycocotools
    ed, eg = candidate_pairs(d_groups, g_starts)
    eg = gt_sorted[eg]
    values = full[ed, eg]
    keep = values >= floor
    np.testing.assert_array_equal(pd, ed[keep])
    np.testing.assert_array_equal(pg, eg[keep])
    np.testing.assert_array_equal(iou, values[keep])


def test_pairs_of_masks_with_boxes_given_by_a_loader_are_the_same():
    dt, gt, crowd, d_groups, gt_sorted, g_starts = _scene(11)
    given = MaskColumn(dt.strings, dt.height, dt.width, dt.area, dt.boxes.copy())
    a = MaskGeometry(dt, gt, crowd, dt.area).pairs(
        d_groups, gt_sorted, g_starts, np.arange(41), 0.5
    )
    b = MaskGeometry(given, gt, crowd, dt.area).pairs(
        d_groups, gt_sorted, g_starts, np.arange(41), 0.5
    )
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def _box_geometry(rng, n_dt, n_gt):
    def boxes(n):
        xy = rng.uniform(0, 50, (n, 2))
        wh = rng.uniform(1, 30, (n, 2))
        return np.hstack([xy, xy + wh]), wh.prod(axis=1)

    dt_xyxy, dt_area = boxes(n_dt)
    gt_xyxy, gt_area = boxes(n_gt)
    crowd = rng.random(n_gt) < 0.2
    return BoxGeometry(dt_xyxy, dt_area, gt_xyxy, gt_area, crowd)


@pytest.mark.parametrize("kind", ["bbox", "segm"])
def test_kept_overlaps_equal_those_computed_again(kind):
    from iou_eval.protocols.matching import match_coco

    rng = np.random.default_rng(3)
    if kind == "bbox":
        geo = _box_geometry(rng, 300, 60)
        n_dt, n_gt = 300, 60
        dt_group = rng.integers(0, 10, n_dt)
        gt_group = rng.integers(0, 10, n_gt)
    else:
        dt, gt, crowd, d_groups, _, _ = _scene(4)
        geo = MaskGeometry(dt, gt, crowd, dt.area)
        n_dt, n_gt = len(dt), len(gt)
        dt_group = rng.integers(0, 3, n_dt)
        gt_group = np.repeat([0, 1, 2], [4, 5, 3])
    thresholds = np.linspace(0.5, 0.95, 10)
    for lane in (0, 5, 9):
        m = match_coco(
            geometry=geo,
            gt_area=np.full(n_gt, 100.0),
            gt_crowd=np.asarray(geo.gt_crowd, dtype=bool),
            gt_ignore_flag=np.zeros(n_gt, dtype=bool),
            gt_zero_id=np.zeros(n_gt, dtype=bool),
            gt_group=gt_group,
            gt_order_key=np.arange(n_gt),
            dt_score=rng.random(n_dt),
            dt_group=dt_group,
            dt_order_key=np.arange(n_dt),
            n_groups=10,
            iou_thresholds=thresholds,
            area_ranges=np.array([[0.0, 1e10], [0.0, 50.0]]),
            max_det=100,
            keep_lane=lane,
        )
        kept = m.overlaps_at(0, lane)
        assert kept is not None
        _, _, match_gt = m.at(0, lane)
        hit = np.flatnonzero(match_gt >= 0)
        assert len(hit) > 0
        again = np.zeros(len(match_gt))
        again[hit] = geo.pair(m.dt_rows[hit], match_gt[hit])
        np.testing.assert_array_equal(kept, again)
        assert m.overlaps_at(1, lane) is None  # only the lane asked for


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_pairs_in_threads_over_unsorted_groups_and_narrow_indices(threads, monkeypatch):
    """Runs in threads (cut anywhere, even inside a group), groups that come back
    after another, int32 rows: the pairs, their order and values of one numpy pass."""
    import iou_eval.geometry.masks as masks

    monkeypatch.setattr(masks, "_THREAD_MIN_PAIRS", 0)
    dt, gt, crowd, _, gt_sorted, g_starts = _scene(5)
    rng = np.random.default_rng(9)
    d_groups = rng.integers(0, 3, 60).astype(np.int32)  # 60 positions, rows repeated
    rows = rng.integers(0, len(dt), 60).astype(np.int32)
    geo = MaskGeometry(dt, gt, crowd, dt.area, threads=threads)
    for floor in (0.0, 0.3):
        pd, pg, iou = geo.pairs(d_groups, gt_sorted, g_starts, rows, floor)
        full = mask_overlaps(dt, gt, crowd)
        ed, eg = candidate_pairs(d_groups.astype(np.int64), g_starts)
        values = full[rows[ed], gt_sorted[eg]]
        keep = values >= floor
        np.testing.assert_array_equal(pd, ed[keep])
        np.testing.assert_array_equal(pg, gt_sorted[eg][keep])
        np.testing.assert_array_equal(iou, values[keep])


def test_thread_cuts_share_the_candidate_pairs(monkeypatch):
    import iou_eval.geometry.masks as masks

    monkeypatch.setattr(masks, "_THREAD_MIN_PAIRS", 0)
    groups = np.array([0, 0, 1, 1, 1, 2])
    starts = np.array([0, 10, 11, 21])  # group sizes 10, 1, 10
    assert masks._thread_cuts(groups, starts, 1) == [0, 6]
    assert masks._thread_cuts(groups, starts, 2) == [0, 1, 6]
    monkeypatch.setattr(masks, "_THREAD_MIN_PAIRS", 1000)
    assert masks._thread_cuts(groups, starts, 2) == [0, 6]  # too few pairs for a thread
