"""The compiled box core gives numpy's numbers and records, bit for bit.

``iou_eval/geometry/_boxkernel.c`` finds the same-group box pairs that can
match; ``iou_eval/protocols/_cococore.c`` matches greedily over every lane
and accumulates pycocotools' arrays.  numpy is the reference
(``IOU_EVAL_NO_KERNEL=1``).  Here both run on seeded random inputs full of
ties (integer boxes whose overlaps land on thresholds, equal IoUs, equal
scores), crowd regions, ignored ground truths, empty groups and every
maxDets, and their outputs are compared whole: dtypes, order and bits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from iou_eval.geometry.boxes import BoxGeometry
from iou_eval.geometry.kernel import box_kernel
from iou_eval.geometry.pairs import SubsetGeometry
from iou_eval.protocols import accumulate, matching
from iou_eval.protocols.core import coco_core

from ..skip_reasons import compiled_missing

needs_core = pytest.mark.skipif(
    coco_core() is None or box_kernel() is None,
    reason=compiled_missing("the compiled COCO core", "iou_eval.protocols._cococore")
    or compiled_missing("the box kernel", "iou_eval.geometry._boxkernel"),
)


def _both(monkeypatch, fn):
    """``fn()`` with the compiled core, then with numpy alone."""
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


def _boxes(rng, n: int) -> np.ndarray:
    """xywh boxes: half on an integer grid (overlaps exactly on thresholds), some empty."""
    xy = np.where(rng.random((n, 2)) < 0.5, rng.integers(0, 60, (n, 2)), rng.uniform(0, 60, (n, 2)))
    wh = np.where(rng.random((n, 2)) < 0.5, rng.integers(0, 40, (n, 2)), rng.uniform(0, 40, (n, 2)))
    wh[rng.random(n) < 0.05] = 0.0
    return np.hstack([xy, wh]).astype(np.float64)


def _scene(seed: int, n_groups: int = 40):
    """A box geometry and groups: (geometry, d_groups, dt_rows, gt_sorted, g_starts)."""
    rng = np.random.default_rng(seed)
    n_gt = int(rng.integers(0, 8 * n_groups))
    n_dt = int(rng.integers(0, 30 * n_groups))
    gt_group = np.sort(rng.integers(0, n_groups, n_gt))
    dt_group = np.sort(rng.integers(0, n_groups, n_dt))
    gxywh, dxywh = _boxes(rng, n_gt), _boxes(rng, n_dt)
    geometry = BoxGeometry(
        dt_xyxy=np.hstack([dxywh[:, :2], dxywh[:, :2] + dxywh[:, 2:]]),
        dt_box_area=dxywh[:, 2] * dxywh[:, 3],
        gt_xyxy=np.hstack([gxywh[:, :2], gxywh[:, :2] + gxywh[:, 2:]]),
        gt_box_area=gxywh[:, 2] * gxywh[:, 3],
        gt_crowd=rng.random(n_gt) < 0.1,
    )
    gt_sorted = rng.permutation(n_gt)  # rows by group: any rows will do
    g_starts = np.searchsorted(gt_group, np.arange(n_groups + 1))
    dt_rows = rng.permutation(n_dt).astype(rng.choice([np.int32, np.int64]))
    return geometry, dt_group, dt_rows, gt_sorted, g_starts


@needs_core
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("floor", [0.5, 0.1, 0.0])
def test_box_pairs_are_numpys(seed, floor, monkeypatch):
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(seed)
    got, want = _both(
        monkeypatch, lambda: geometry.pairs(d_groups, gt_sorted, g_starts, dt_rows, floor)
    )
    for name, a, b in zip(("dt_pos", "gt_row", "iou"), got, want, strict=True):
        _same(a, b, name)


@needs_core
def test_box_pairs_of_overflowing_boxes(monkeypatch):
    """Corners at infinity (x + w past the largest double): numpy's minimum, NaN included."""
    big = 1.7e308
    geometry = BoxGeometry(
        dt_xyxy=np.array([[0.0, 0.0, np.inf, np.inf], [big, big, np.inf, np.inf]]),
        dt_box_area=np.array([np.inf, np.inf]),
        gt_xyxy=np.array([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, np.inf, 5.0]]),
        gt_box_area=np.array([100.0, np.inf]),
        gt_crowd=np.array([False, True]),
    )
    args = (np.array([0, 0]), np.array([0, 1]), np.array([0, 2]), np.array([0, 1]), 0.0)
    with np.errstate(all="ignore"):  # inf - inf on the numpy path
        got, want = _both(monkeypatch, lambda: geometry.pairs(*args))
    for name, a, b in zip(("dt_pos", "gt_row", "iou"), got, want, strict=True):
        _same(a, b, name)


def _greedy_inputs(seed: int, n_area: int = 4, n_thr: int = 11):
    rng = np.random.default_rng(seed)
    n_dt, n_gt = int(rng.integers(0, 600)), int(rng.integers(1, 200))
    # Predictions by group, then rank; pairs sorted by prediction.
    group = np.sort(rng.integers(0, 30, n_dt))
    starts = np.searchsorted(group, np.arange(31))
    rank = np.arange(n_dt) - starts[group]
    # Ground truths belong to groups too; a prediction's candidates are its group's.
    gt_group = rng.integers(0, 30, n_gt)
    members = [np.flatnonzero(gt_group == g) for g in range(30)]
    n_pairs = int(rng.integers(0, 3 * n_dt + 1))
    pd = np.sort(rng.integers(0, max(n_dt, 1), n_pairs)) if n_dt else np.zeros(0, np.int64)
    pd = np.array([d for d in pd if len(members[group[d]])], dtype=np.int64)
    n_pairs = len(pd)
    pg = np.array([rng.choice(members[group[d]]) for d in pd], dtype=np.int64)
    # Equal IoUs and IoUs exactly on thresholds are common.
    levels = np.array([0.5, 0.55, 0.7, 0.75, 0.95, 1 - 1e-10, 1.0, 0.6000000000000001])
    iou = np.where(
        rng.random(n_pairs) < 0.5, rng.choice(levels, n_pairs), rng.uniform(0.5, 1, n_pairs)
    )
    # One pair per (prediction, ground truth), as geometries give them.
    _, first = np.unique(pd * n_gt + pg, return_index=True)
    pd, pg, iou = pd[first], pg[first], iou[first]
    thr = np.minimum(np.linspace(0.5, 0.95, n_thr), 1 - 1e-10)
    return dict(
        pd=pd,
        pg=pg,
        iou=iou,
        rank=rank.astype(np.int32),
        gt_position=rng.permutation(n_gt),
        gt_crowd=rng.random(n_gt) < 0.15,
        gt_ignore=rng.random((n_area, n_gt)) < 0.3,
        eff_thr=thr,
        keep_lane=int(rng.integers(0, n_area * n_thr)),
    )


def _same_records(got, want, keep_lane: int) -> None:
    """The same set of records (the core finds them prediction by prediction, numpy rank
    by rank), and each record of the kept lane with its overlap."""
    for name, a, b in zip(("lane", "dt", "gt", "kept_iou"), got, want, strict=True):
        assert a.dtype == b.dtype, name
    order = [np.lexsort((r[1], r[0])) for r in (got, want)]
    for i, name in enumerate(("lane", "dt", "gt")):
        _same(got[i][order[0]], want[i][order[1]], name)
    kept = [np.argsort(r[1][r[0] == keep_lane], kind="stable") for r in (got, want)]
    _same(got[3][kept[0]], want[3][kept[1]], "kept_iou")


@needs_core
@pytest.mark.parametrize("seed", range(16))
def test_greedy_records_are_numpys(seed, monkeypatch):
    x = _greedy_inputs(seed)
    got, want = _both(monkeypatch, lambda: matching.greedy_rounds(**x))
    _same_records(got, want, x["keep_lane"])


@needs_core
def test_greedy_past_64_lanes_is_numpys(monkeypatch):
    """More lanes than the core's 64-bit masks hold: numpy matches (the same records)."""
    x = _greedy_inputs(3, n_area=5, n_thr=13)
    got, want = _both(monkeypatch, lambda: matching.greedy_rounds(**x))
    _same_records(got, want, x["keep_lane"])


def _fused_inputs(seed: int, subset: bool = False):
    """A scene as the matcher hands it to the one-pass box matcher (and to pairs + greedy).

    ``subset``: a category part's view (:class:`SubsetGeometry`) of a larger geometry.
    """
    geometry, d_groups, dt_rows, gt_sorted, g_starts = _scene(seed)
    rng = np.random.default_rng(1000 + seed)
    n_gt, n_dt = len(geometry.gt_crowd), len(dt_rows)
    if subset:
        # The scene's rows are a part's: spread them among as many others.
        gt_rows = np.sort(rng.choice(2 * n_gt + 1, n_gt, replace=False))
        dt_take = np.sort(rng.choice(2 * n_dt + 1, n_dt, replace=False))
        wide = BoxGeometry(
            dt_xyxy=np.zeros((2 * n_dt + 1, 4)), dt_box_area=np.zeros(2 * n_dt + 1),
            gt_xyxy=np.zeros((2 * n_gt + 1, 4)), gt_box_area=np.zeros(2 * n_gt + 1),
            gt_crowd=np.zeros(2 * n_gt + 1, dtype=bool),
        )  # fmt: skip
        for name in ("dt_xyxy", "dt_box_area"):
            getattr(wide, name)[dt_take] = getattr(geometry, name)
        for name in ("gt_xyxy", "gt_box_area", "gt_crowd"):
            getattr(wide, name)[gt_rows] = getattr(geometry, name)
        geometry = SubsetGeometry.of(wide, gt_rows, dt_take)
    starts = np.searchsorted(d_groups, np.arange(int(g_starts.size)))
    ranked = matching.Ranked(dt_rows, d_groups, np.arange(n_dt) - starts[d_groups])
    gts = matching.GroundTruthOrder(gt_sorted, g_starts, rng.permutation(n_gt))
    n_area, n_thr = 4, 11
    thr = np.minimum(np.linspace(0.5, 0.95, n_thr), 1 - 1e-10)
    return dict(
        geometry=geometry,
        ranked=ranked,
        gts=gts,
        gt_crowd=rng.random(n_gt) < 0.15,
        gt_ignore=rng.random((n_area, n_gt)) < 0.3,
        eff_thr=thr,
        floor=float(thr.min()),
        keep_lane=int(rng.integers(0, n_area * n_thr)),
    )


def _pairs_then_greedy(x: dict):
    """The records of the box kernel's pairs matched by greedy() (numpy's when no core)."""
    r, g = x["ranked"], x["gts"]
    pd, pg, iou = x["geometry"].pairs(r.groups, g.sorted_rows, g.starts, r.rows, x["floor"])
    return matching.greedy_rounds(
        pd, pg, iou, r.rank, g.position, x["gt_crowd"], x["gt_ignore"], x["eff_thr"],
        x["keep_lane"],
    )  # fmt: skip


@needs_core
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("subset", [False, True])
def test_one_pass_box_matching_is_pairs_then_greedy(seed, subset, monkeypatch):
    """Candidates found as each prediction is matched: greedy()'s records on the box
    kernel's pairs, in the same order, and numpy's as a set."""
    x = _fused_inputs(seed, subset)
    fused = matching._fused_boxes(**x)
    assert fused is not None
    two_steps, reference = _both(monkeypatch, lambda: _pairs_then_greedy(x))
    for name, a, b in zip(("lane", "dt", "gt", "kept_iou"), fused, two_steps, strict=True):
        _same(a, b, name)
    _same_records(fused, reference, x["keep_lane"])


@needs_core
def test_one_pass_box_matching_of_overflowing_boxes(monkeypatch):
    """Corners at infinity and a NaN overlap (inf / inf): the box kernel's candidates."""
    big = 1.7e308
    geometry = BoxGeometry(
        dt_xyxy=np.array([[0.0, 0.0, np.inf, np.inf], [big, big, np.inf, np.inf], [0, 0, 10, 10]]),
        dt_box_area=np.array([np.inf, np.inf, 100.0]),
        gt_xyxy=np.array([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, np.inf, 5.0]]),
        gt_box_area=np.array([100.0, np.inf]),
        gt_crowd=np.array([False, True]),
    )
    x = dict(
        geometry=geometry,
        ranked=matching.Ranked(np.array([0, 1, 2]), np.array([0, 0, 0]), np.array([0, 1, 2])),
        gts=matching.GroundTruthOrder(np.array([0, 1]), np.array([0, 2]), np.array([0, 1])),
        gt_crowd=np.array([False, True]),
        gt_ignore=np.zeros((1, 2), dtype=bool),
        eff_thr=np.array([0.0, 0.5]),
        floor=0.0,
        keep_lane=1,
    )
    with np.errstate(all="ignore"):
        fused = matching._fused_boxes(**x)
        two_steps = _pairs_then_greedy(x)
    assert fused is not None
    for name, a, b in zip(("lane", "dt", "gt", "kept_iou"), fused, two_steps, strict=True):
        _same(a, b, name)


@needs_core
def test_one_pass_box_matching_leaves_other_geometries_and_wide_lanes(monkeypatch):
    """Not boxes, or more lanes than 64-bit masks hold: pairs and greedy() as before."""
    x = _fused_inputs(2)
    assert matching._fused_boxes(**{**x, "geometry": object()}) is None
    wide = {**x, "gt_ignore": np.zeros((7, len(x["gt_crowd"])), dtype=bool)}
    assert matching._fused_boxes(**{**wide, "eff_thr": np.linspace(0.5, 0.95, 10)}) is None
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert matching._fused_boxes(**x) is None


@needs_core
def test_one_pass_box_matching_refuses_inconsistent_inputs():
    core = coco_core()
    x = _fused_inputs(4)
    r, g, geo = x["ranked"], x["gts"], x["geometry"]
    n_gt = len(g.position)
    args = [
        r.groups, r.rows, g.sorted_rows, g.starts, np.arange(n_gt), geo.dt_xyxy,
        geo.dt_box_area, geo.gt_xyxy, geo.gt_box_area, geo.gt_crowd, g.position,
        x["gt_crowd"], x["gt_ignore"], x["eff_thr"], x["floor"], 0,
    ]  # fmt: skip
    core.match_boxes(*args)

    def refused(i, value, error=ValueError):
        with pytest.raises(error):
            core.match_boxes(*args[:i], value, *args[i + 1 :])

    refused(1, np.full(len(r.rows), len(geo.dt_box_area)))  # a prediction's box out of range
    refused(3, g.starts[::-1].copy())  # group offsets decreasing
    refused(4, np.full(n_gt, len(geo.gt_box_area)))  # a ground truth's box out of range
    refused(5, geo.dt_xyxy.ravel().copy())  # boxes not [N, 4]
    refused(7, geo.gt_xyxy.astype(np.float32), TypeError)
    refused(9, geo.gt_crowd.astype(np.int8), TypeError)
    refused(12, x["gt_ignore"][:, :-1].copy() if n_gt else np.zeros((4, 1), bool))


@needs_core
@pytest.mark.parametrize("seed", range(6))
def test_group_order_is_numpys(seed, monkeypatch):
    """By group, then descending score, ties in row order (pycocotools' mergesort)."""
    from iou_eval.protocols.core import score_order

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 5000))
    group = rng.integers(0, int(rng.integers(1, 50)), n).astype(rng.choice([np.int32, np.int64]))
    score = np.round(rng.random(n), int(rng.integers(1, 4)))  # many ties
    score[rng.random(n) < 0.05] = -0.0
    got, want = _both(monkeypatch, lambda: score_order(group, score))
    _same(got, want, "order")


def _accumulation(seed: int, max_dets=(1, 10, 100), extra_lane: bool = False):
    """Random matches of predictions in groups, as accumulation inputs."""
    rng = np.random.default_rng(seed)
    n_k, n_area, n_thr = int(rng.integers(1, 9)), 4, 10
    lane_thr = n_thr + int(extra_lane)
    n_dt, n_gt = int(rng.integers(0, 3000)), int(rng.integers(0, 800))
    dt_cat = rng.integers(0, n_k, n_dt)
    dt_image = rng.integers(0, 50, n_dt)
    # Scores with ties; rank inside the (image, category) group by score.
    dt_score = np.round(rng.random(n_dt), int(rng.integers(1, 4)))
    order_g = np.lexsort((-dt_score, dt_cat, dt_image))
    grp = (dt_image * n_k + dt_cat)[order_g]
    first = np.r_[0, np.flatnonzero(grp[1:] != grp[:-1]) + 1] if n_dt else np.zeros(0, int)
    rank = np.empty(n_dt, dtype=np.int64)
    rank[order_g] = np.arange(n_dt) - np.repeat(first, np.diff(np.r_[first, n_dt]))
    order = np.lexsort((-dt_score, dt_cat)) if n_dt else np.zeros(0, np.int64)
    n_rec = int(rng.integers(0, 4 * n_dt + 1))
    lane = rng.integers(0, n_area * lane_thr, n_rec)
    dt = rng.integers(0, max(n_dt, 1), n_rec) if n_dt else np.zeros(0, np.int64)
    _, keep = np.unique(lane * max(n_dt, 1) + dt, return_index=True)  # one record per (lane, dt)
    lane, dt = lane[keep], dt[keep]
    tp = rng.random(len(lane)) < 0.7
    counted = tp | (rng.random(len(lane)) < 0.5)
    gt_cat = rng.integers(0, n_k, n_gt)
    gt_ignore = rng.random((n_area, n_gt)) < 0.3
    if n_gt:
        gt_ignore[:, gt_cat == 0] = True  # a category without ground truth to count
    return accumulate.AccumulationInputs(
        outside=rng.random((n_area, n_dt)) < 0.3,
        rec_lane=lane.astype(np.int32),
        rec_dt=dt.astype(np.int32),
        rec_tp=tp,
        rec_counted=counted,
        lane_thresholds=lane_thr,
        n_thresholds=n_thr,
        dt_score=dt_score,
        dt_category=dt_cat.astype(np.int32),
        dt_image=dt_image.astype(np.int32),
        dt_rank=rank.astype(np.int32),
        gt_category=gt_cat,
        gt_ignore=gt_ignore,
        n_categories=n_k,
        max_dets=max_dets,
        recall_thresholds=np.linspace(0.0, 1.00, 101),
        gt_image=rng.integers(0, 50, n_gt),
        order=order.astype(np.int32),
    )


@needs_core
@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize(
    ("max_dets", "extra_lane"), [((1, 10, 100), False), ((1, 10, 100), True), ((0, 3, 5000), False)]
)
def test_accumulated_arrays_are_numpys(seed, max_dets, extra_lane, monkeypatch):
    x = _accumulation(seed, max_dets, extra_lane)
    got, want = _both(monkeypatch, lambda: accumulate.accumulate_coco(x))
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), name)
    # A part's categories only, in the order asked for.
    cats = np.random.default_rng(seed).permutation(x.n_categories)[: max(1, x.n_categories // 2)]
    got, want = _both(monkeypatch, lambda: accumulate.accumulate_coco(x, categories=cats))
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), f"{name} of categories {cats}")
    # Into arrays over every category that parts share (their own slices only).
    got, want = _both(
        monkeypatch,
        lambda: accumulate.accumulate_coco(
            x, categories=cats, out=accumulate.empty_arrays(x, x.n_categories)
        ),
    )
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), f"{name} into shared arrays")


@needs_core
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("extra_lane", [False, True])
@pytest.mark.parametrize("wide", [False, True])
def test_accumulated_arrays_are_numpys_with_records_listed_by_prediction(
    seed, extra_lane, wide, monkeypatch
):
    """Records that come by prediction (as the matcher lists them) are read where they
    are, those of a threshold not accumulated skipped; ties of a prediction in any order."""
    x = _accumulation(seed, (1, 10, 100), extra_lane)
    by_dt = np.argsort(x.rec_dt, kind="stable")
    index = np.int64 if wide else np.int32
    x = replace(
        x,
        rec_lane=x.rec_lane[by_dt].astype(index),
        rec_dt=x.rec_dt[by_dt].astype(index),
        rec_tp=x.rec_tp[by_dt],
        rec_counted=x.rec_counted[by_dt],
    )
    got, want = _both(monkeypatch, lambda: accumulate.accumulate_coco(x))
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), name)


@needs_core
@pytest.mark.parametrize("seed", range(6))
def test_accumulated_arrays_are_numpys_with_recall_points_and_caps_out_of_order(seed, monkeypatch):
    """One sweep serves every (area range, maxDets, threshold) lane: recall points are
    visited by the count that reaches them, whatever their order (repeats, 0 and
    points past 1 included), and maxDets in any order."""
    x = _accumulation(seed, (100, 1, 10))
    rng = np.random.default_rng(seed)
    points = np.r_[np.linspace(0.0, 1.0, 11), 0.0, 0.5, 1.5, 1e-9]
    x = replace(x, recall_thresholds=rng.permutation(points))
    got, want = _both(monkeypatch, lambda: accumulate.accumulate_coco(x))
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), name)


@needs_core
@pytest.mark.parametrize("seed", range(4))
def test_group_order_of_large_groups_of_spread_scores_is_numpys(seed, monkeypatch):
    """Groups of thousands of distinct scores of every magnitude and sign (the bucket
    passes of long groups), a few ties among them."""
    from iou_eval.protocols.core import score_order

    rng = np.random.default_rng(seed)
    n = 20000
    group = rng.integers(0, 3, n)
    score = rng.random(n) * 10.0 ** rng.integers(-300, 300, n) * rng.choice([-1.0, 1.0], n)
    score[rng.random(n) < 0.01] = np.inf
    score[rng.random(n) < 0.01] = 0.5
    score[rng.random(n) < 0.01] = -0.0
    got, want = _both(monkeypatch, lambda: score_order(group, score))
    _same(got, want, "order")


@needs_core
def test_bootstrap_weights_stay_with_numpy(monkeypatch):
    """Replicates (image weights) are accumulated by numpy on both paths."""
    x = _accumulation(5)
    weight = np.random.default_rng(0).integers(0, 3, 50)
    got, want = _both(monkeypatch, lambda: accumulate.accumulate_coco(x, weight))
    for name in ("precision", "recall", "scores"):
        _same(getattr(got, name), getattr(want, name), name)


@needs_core
def test_the_core_refuses_inconsistent_inputs():
    core = coco_core()
    x = _greedy_inputs(1)
    rest = (x["pg"], x["iou"], x["gt_position"], x["gt_crowd"], x["gt_ignore"], x["eff_thr"], 0)
    with pytest.raises(ValueError):
        core.greedy(x["pd"][::-1].copy(), *rest)
    with pytest.raises(TypeError):
        core.greedy(x["pd"].astype(np.float64), *rest)
    with pytest.raises(ValueError):
        core.group_order(np.array([0, 1]), np.array([0.5, np.nan]), 2)
    with pytest.raises(ValueError):
        core.group_order(np.array([0, 2]), np.array([0.5, 0.5]), 2)


def test_first_counts_are_pycocotools_searchsorted():
    """The least true-positive count reaching each recall point, without a loop: the index
    pycocotools' ``searchsorted(recall, r, "left")`` finds on ``arange(p + 1) / p``."""
    rec = np.linspace(0.0, 1.00, 101)
    odd = np.array([-0.5, 0.0, 1e-300, 1 / 3, 2 / 3, 0.7, 1.0, 1.0000000000000002, 1.5, 3.0])
    npig = np.arange(0, 3000).reshape(-1, 3)
    for r in (rec, odd, np.random.default_rng(0).random(200)):
        got = accumulate.first_counts(npig, r)
        want = np.zeros_like(got)
        for p in range(1, 3000):
            curve = np.arange(p + 1, dtype=np.float64) / p
            want[np.unravel_index(p, npig.shape)] = np.searchsorted(curve, r, side="left")
        _same(got, want, "first_counts")


@needs_core
@pytest.mark.parametrize("seed", range(6))
def test_record_flags_are_numpys(seed, monkeypatch):
    """What each match counts as, pycocotools' id-0 defect included; also without ground truth."""
    rng = np.random.default_rng(seed)
    n_area, n_thr = 4, 10
    n_gt, n_dt = int(rng.integers(0, 50)), int(rng.integers(1, 300))
    n = int(rng.integers(0, 500)) if n_gt else 0
    args = (
        n_thr,
        rng.random((n_area, n_dt)) < 0.3,
        rng.integers(0, n_area * n_thr, n).astype(np.int32),
        rng.integers(0, n_dt, n).astype(np.int32),
        rng.integers(0, max(n_gt, 1), n).astype(np.int32),
        rng.random((n_area, n_gt)) < 0.3,
        rng.random(n_gt) < 0.2,
    )
    got, want = _both(monkeypatch, lambda: matching._record_flags(*args))
    _same(got[0], want[0], "tp")
    _same(got[1], want[1], "counted")


@needs_core
@pytest.mark.parametrize("seed", range(4))
def test_dense_groups_are_numpys(seed, monkeypatch):
    """Groups numbered by their rank among those that occur (beyond 64 bits of a word too)."""
    from iou_eval.protocols.coco import _dense_groups

    rng = np.random.default_rng(seed)
    n_total = int(rng.integers(1, 10**6))
    gt = rng.integers(0, n_total, int(rng.integers(0, 3000)))
    dt = rng.integers(0, n_total, int(rng.integers(0, 3000))).astype(np.int32)
    got, want = _both(monkeypatch, lambda: _dense_groups(gt, dt, n_total))
    _same(got[0], want[0], "gt")
    _same(got[1], want[1], "dt")
    assert got[2] == want[2]
