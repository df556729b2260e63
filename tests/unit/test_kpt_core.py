"""The compiled keypoint kernel gives numpy's OKS, bit for bit.

``iou_eval/geometry/_kptkernel.c`` computes pycocotools' ``computeOks`` of
same-group pairs; numpy is the reference (``IOU_EVAL_NO_KERNEL=1``).  Here
both run on seeded scenes -- labelled keypoints and ground truths with none
labelled (the enlarged-box branch), categories of different K with their
own sigmas, zero areas, keypoints on the ground truth, groups with no
ground truth -- and whole OKS matrices and pair lists are compared: dtypes,
order and bits.  numpy's pairwise sum (eight running sums past 8 terms,
halves past 128) is checked on its own for every length up to 300.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.errors import UsageError
from iou_eval.geometry.kernel import keypoint_kernel
from iou_eval.geometry.keypoints import KeypointColumn, KeypointGeometry

from ..skip_reasons import compiled_missing

needs_kernel = pytest.mark.skipif(
    keypoint_kernel() is None,
    reason=compiled_missing("the keypoint kernel", "iou_eval.geometry._kptkernel"),
)


def _both(monkeypatch, fn):
    """``fn()`` with the compiled kernel, then with numpy alone."""
    compiled = fn()
    with monkeypatch.context() as m:
        m.setenv("IOU_EVAL_NO_KERNEL", "1")
        reference = fn()
    return compiled, reference


def _same(a, b, label: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), (
        f"{label}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
    )
    if a.tobytes() != b.tobytes():
        where = np.flatnonzero(a.ravel() != b.ravel())[:5]
        pytest.fail(
            f"{label}: differ at {where.tolist()}: {a.ravel()[where]} vs {b.ravel()[where]}"
        )


def _column(rng, n: int, ks: np.ndarray, gt: bool) -> KeypointColumn:
    """``n`` rows of ``ks[row]`` keypoints, coordinates on a grid half the time (ties)."""
    width = int(ks.max()) if n else 0
    x = np.full((n, width), np.nan)
    y = np.full((n, width), np.nan)
    visible = np.zeros((n, width), dtype=bool)
    for r, k in enumerate(ks.tolist()):
        grid = rng.random() < 0.5
        x[r, :k] = rng.integers(0, 80, k) if grid else rng.uniform(0, 80, k)
        y[r, :k] = rng.integers(0, 80, k) if grid else rng.uniform(0, 80, k)
        visible[r, :k] = rng.random(k) < rng.choice([0.0, 0.3, 0.9, 1.0])
    if not gt:
        return KeypointColumn(x, y, ks.astype(np.int64))
    box = np.column_stack([rng.uniform(0, 60, (n, 2)), rng.uniform(0, 30, (n, 2))])
    box[rng.random(n) < 0.1, 2:] = 0.0
    return KeypointColumn(x, y, ks.astype(np.int64), visible, visible.sum(axis=1), box)


def _scene(seed: int, n_groups: int = 30):
    """A keypoint geometry and its groups: (geometry, d_groups, dt_rows, gt_sorted, g_starts).

    Categories 0 (17 keypoints, COCO's sigmas), 1 (5) and 2 (130: the
    recursive halves of numpy's sum); a group is one category's.
    """
    rng = np.random.default_rng(seed)
    cat_k = np.array([17, 5, 130])
    sigmas = np.full((3, 130), np.nan)
    for c, k in enumerate(cat_k.tolist()):
        sigmas[c, :k] = rng.uniform(0.01, 0.2, k)
    group_cat = rng.integers(0, 3, n_groups)
    gt_group = np.sort(rng.integers(0, n_groups, int(rng.integers(0, 4 * n_groups))))
    dt_group = np.sort(rng.integers(0, n_groups, int(rng.integers(0, 8 * n_groups))))
    gt_cat, dt_cat = group_cat[gt_group], group_cat[dt_group]
    gt = _column(rng, len(gt_group), cat_k[gt_cat], gt=True)
    dt = _column(rng, len(dt_group), cat_k[dt_cat], gt=False)
    from dataclasses import replace

    area = rng.uniform(0, 3000, len(gt_group))
    area[rng.random(len(area)) < 0.05] = 0.0
    geometry = KeypointGeometry(
        replace(gt, sigmas=sigmas), area, gt_cat, dt, rng.uniform(0, 3000, len(dt_group))
    )
    gt_sorted = np.arange(len(gt_group))
    g_starts = np.searchsorted(gt_group, np.arange(n_groups + 1))
    order = rng.permutation(len(dt_group))
    dt_rows = order.astype(rng.choice([np.int32, np.int64]))
    return geometry, dt_group[order], dt_rows, gt_sorted, g_starts


@needs_kernel
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("floor", [0.0, 0.5])
def test_pairs_equal_numpy_bit_for_bit(monkeypatch, seed, floor):
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(seed)
    # Groups sorted for the pairs (the matcher's order).
    order = np.argsort(d_groups, kind="stable")
    args = (d_groups[order], gt_sorted, g_starts, dt_rows[order], floor)

    def run():
        fresh = KeypointGeometry(
            *(getattr(geometry, f) for f in ("gt", "gt_area", "gt_category", "dt", "dt_range_area"))
        )
        return fresh.pairs(*args)

    got, want = _both(monkeypatch, run)
    if floor == 0.0:  # every same-group pair reaches 0
        assert len(want[0]) == int((g_starts[args[0] + 1] - g_starts[args[0]]).sum())
    for name, a, b in zip(("dt_pos", "gt_row", "oks"), got, want, strict=True):
        _same(a, b, name)


@needs_kernel
@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_pairs_in_threads_cut_anywhere_equal_numpy_bit_for_bit(monkeypatch, seed, threads):
    """Runs of predictions in threads, cut even inside a group, groups unsorted: the
    pairs, their order and OKS of one numpy pass."""
    import iou_eval.geometry.keypoints as keypoints

    monkeypatch.setattr(keypoints, "_THREAD_MIN_PAIRS", 0)
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(seed)
    args = (d_groups, gt_sorted, g_starts, dt_rows, 0.3)

    def run(n):
        fresh = KeypointGeometry(
            *(getattr(geometry, f) for f in ("gt", "gt_area", "gt_category", "dt", "dt_range_area"))
        )
        return fresh.with_threads(n).pairs(*args)

    got, want = _both(monkeypatch, lambda: run(threads))
    for name, a, b in zip(("dt_pos", "gt_row", "oks"), got, want, strict=True):
        _same(a, b, name)
    for name, a, b in zip(("dt_pos", "gt_row", "oks"), got, run(1), strict=True):
        _same(a, b, name)


@needs_kernel
@pytest.mark.parametrize("seed", range(6))
def test_pairs_at_a_floor_equal_to_some_oks_keep_exactly_those_reaching_it(monkeypatch, seed):
    """The kernel skips the exps of pairs whose terms prove them below the floor: with
    the floor at a pair's own OKS (and a hair above), the pairs kept are those of
    numpy, the pair at the floor kept, with the same bits."""
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(seed)
    all_pairs = geometry.pairs(d_groups, gt_sorted, g_starts, dt_rows, 0.0)
    values = np.sort(all_pairs[2][np.isfinite(all_pairs[2])])
    if not len(values):
        pytest.skip("no finite OKS in this scene")
    own = {float(v) for v in values[[0, len(values) // 2, -1]]}
    for floor in own | {1e-12, 0.9}:
        for at in (floor, np.nextafter(floor, 2.0)):

            def run(at=at):
                fresh = KeypointGeometry(
                    *(
                        getattr(geometry, f)
                        for f in ("gt", "gt_area", "gt_category", "dt", "dt_range_area")
                    )
                )
                return fresh.pairs(d_groups, gt_sorted, g_starts, dt_rows, at)

            got, want = _both(monkeypatch, run)
            for name, a, b in zip(("dt_pos", "gt_row", "oks"), got, want, strict=True):
                _same(a, b, f"{name} at {at!r}")
            assert at != floor or floor not in own or floor in got[2].tolist()


def test_keypoint_geometry_keeps_its_threads_through_take():
    geometry, *_ = _scene(1, n_groups=8)
    two = geometry.with_threads(2)
    assert (geometry.threads, two.threads) == (1, 2)
    assert two.take(np.arange(1), np.arange(1)).threads == 2
    assert geometry.with_threads(0).threads == 1


@needs_kernel
@pytest.mark.parametrize("seed", range(12))
def test_whole_oks_matrix_of_every_same_category_pair_equals_numpy(monkeypatch, seed):
    geometry, _, _, _, _ = _scene(seed, n_groups=8)
    gk, dk = geometry.gt.count, geometry.dt.count
    g, d = np.nonzero(gk[:, None] == dk[None, :])  # every pair of equal K, in matrix order

    def run():
        fresh = KeypointGeometry(
            *(getattr(geometry, f) for f in ("gt", "gt_area", "gt_category", "dt", "dt_range_area"))
        )
        return fresh.pair(d, g)

    got, want = _both(monkeypatch, run)
    _same(got, want, "oks")


@needs_kernel
@pytest.mark.parametrize("kernel_path", ["compiled", "numpy"], indirect=True)
def test_a_prediction_of_another_k_is_refused_on_both_paths(kernel_path):
    geometry, *_ = _scene(3, n_groups=8)
    gk, dk = geometry.gt.count, geometry.dt.count
    g, d = np.nonzero(gk[:, None] != dk[None, :])
    assert len(g)
    with pytest.raises(UsageError, match="keypoints meets a ground truth of"):
        geometry.pair(d[:1], g[:1])


@needs_kernel
def test_pairwise_sum_is_numpys_for_every_length():
    kernel = keypoint_kernel()
    rng = np.random.default_rng(0)
    for n in range(300):
        values = np.exp(-rng.exponential(3.0, n) * rng.uniform(0.1, 10))
        assert kernel.pairwise_sum(values) == values.sum(), n
        rows = np.tile(values, (2, 1))  # the numpy path sums rows of a matrix
        assert n == 0 or (rows.sum(axis=1) == kernel.pairwise_sum(values)).all(), n


@needs_kernel
def test_hostile_columns_are_refused():
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(1)
    cols = list(geometry._kernel_columns)
    kernel = keypoint_kernel()
    bad = list(cols)
    bad[0] = cols[0][:, :3].copy()  # dt_x narrower than dt_y
    with pytest.raises(ValueError, match="inconsistent"):
        kernel.pair(np.zeros(0, np.int64), np.zeros(0, np.int64), *bad)
    bad = list(cols)
    bad[5] = cols[5].astype(np.int8)  # gt_visible of int8
    with pytest.raises(TypeError, match="gt_visible"):
        kernel.pair(np.zeros(0, np.int64), np.zeros(0, np.int64), *bad)
    with pytest.raises(ValueError, match="out of range"):
        kernel.pair(np.array([len(geometry.dt)]), np.array([0]), *cols)
