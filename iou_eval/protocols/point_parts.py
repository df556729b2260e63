"""A COCO evaluation in bounded category parts, keeping only what the reports read.

:func:`iou_eval.protocols.partition.match_in_parts` merges every part's match records
back into one :class:`~iou_eval.protocols.matching.Matches` (what bootstrap replicates
re-accumulate).  A run without replicates needs less: each part's
precision/recall arrays (its categories' slices) and, per kept prediction,
its outcome at the operating point.  Here each part drops its records as
soon as it has those, so memory is bounded by the largest part plus the
small per-prediction outcome, not by every record of the run:

- parts own disjoint sets of categories of about :data:`PART_PREDICTIONS`
  predictions each (at least ``workers`` parts when parallel pays off);
- at most ``workers`` parts run at a time, the heaviest first: in threads
  beside the compiled core, else each in a forked child started as soon as
  another ends (one worker: one after the other, here);
- the outcomes are merged into the order one process gives (by matching
  group, then rank), and the score order of the count tables likewise, so
  every later sum runs in the same order: the reports are bit for bit those
  of one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from iou_eval.data.ordering import narrow_index, run_bounds
from iou_eval.engine.parallel import run_pool, run_thread_pool
from iou_eval.protocols import partition
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.coco import (
    CocoSetup,
    OperatingPoint,
    match_and_accumulate,
    shared_arrays,
)
from iou_eval.protocols.core import coco_core
from iou_eval.protocols.partition import category_parts, join_arrays

# A part's matching and accumulation take a few hundred bytes per prediction
# while they run: parts of this size keep that to a few hundred megabytes.
PART_PREDICTIONS = 1_000_000
# With the compiled core a part takes less memory, and each part costs a
# merge: parts this many times as large.
COMPILED_PART_SCALE = 4


@dataclass(frozen=True)
class PartPoint:
    """One part's outcome at the operating point, for its kept predictions.

    Attributes:
        rows: ``[D']`` prediction rows (of the setup's predictions), by group then rank.
        rank: ``[D']`` rank inside the group.
        tp, fp: ``[D']`` bool; match_gt: ``[D']`` ground-truth row or -1;
        match_iou: ``[D']`` float64 the match's overlap (0: none).
        order: ``[D']`` positions by category, then descending score.
        arrays: the part's categories' slices of pycocotools' arrays.
    """

    rows: np.ndarray
    rank: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    order: np.ndarray
    arrays: CocoArrays


def part_point(
    s: CocoSetup, thr_index: int, cats: np.ndarray | None, out: CocoArrays | None = None
) -> PartPoint:
    """Match and accumulate categories ``cats`` (all when None); keep the operating point only.

    ``out``: arrays over every category that parts in threads fill together.
    """
    m, arrays, order = match_and_accumulate(s, cats, out)
    tp, fp, match_gt = m.at(0, thr_index)
    match_iou = m.overlaps_at(0, thr_index)
    if match_iou is None:  # never: the matcher was asked to keep them
        raise RuntimeError("the matcher kept no overlaps of the operating point")
    return PartPoint(
        rows=narrow_index(m.dt_rows),
        rank=narrow_index(m.dt_rank),
        tp=tp,
        fp=fp,
        match_gt=narrow_index(match_gt),
        match_iou=match_iou,
        order=narrow_index(order),
        arrays=arrays,
    )


def plan(s: CocoSetup, workers: int) -> list[np.ndarray] | None:
    """Category sets, heaviest first, or None when one pass over everything is best."""
    d = len(s.pred)
    parallel = workers > 1 and d >= partition.parallel_min_predictions()
    size = PART_PREDICTIONS * (COMPILED_PART_SCALE if coco_core() is not None else 1)
    if s.protocol.class_agnostic or (not parallel and d <= size):
        return None
    n_parts = max(workers if parallel else 1, -(-d // size))
    parts = category_parts(s.pred.category_idx, s.n_categories, n_parts)
    if len(parts) <= 1:
        return None
    weight = np.bincount(s.pred.category_idx, minlength=s.n_categories)
    return sorted(parts, key=lambda cats: -int(weight[cats].sum()))


def point_in_parts(s: CocoSetup, workers: int, iou_thr: float) -> tuple[CocoArrays, OperatingPoint]:
    """The arrays and the operating point of the whole, from bounded parts."""
    thr_index = s.thresholds.index(iou_thr)
    parts = plan(s, workers)
    if parts is None:
        whole = part_point(s, thr_index, None)
        return whole.arrays, _point(s, iou_thr, whole)
    if coco_core() is not None:
        # Threads beside the compiled core (its kernels release the GIL): each
        # part fills its categories of one set of arrays (no copies to join).
        arrays = shared_arrays(s)
        results = run_thread_pool(partial(part_point, s, thr_index, out=arrays), parts, workers)
    else:  # forks
        results = run_pool(partial(part_point, s, thr_index), parts, workers)
        arrays = join_arrays([r.arrays for r in results], parts)
    merged = merge_points(results, s.dt_group, s.pred.category_idx, s.max_det)
    return arrays, _point(s, iou_thr, merged)


def merge_points(
    parts: list[PartPoint], dt_group: np.ndarray, dt_category: np.ndarray, max_det: int
) -> PartPoint:
    """One outcome in the one-process order (by group, then rank), as merge_parts orders it.

    Each part's score order runs category by category: its blocks are
    renumbered and dealt out in category order, which gives the order of
    the whole.  Parts are released as they are read.
    """
    sizes = [len(p.rows) for p in parts]
    offsets = np.cumsum([0, *sizes])[:-1].tolist()
    rows = np.concatenate([p.rows for p in parts])
    rank = np.concatenate([p.rank for p in parts])
    key = dt_group[rows].astype(np.int64) * max_det  # int64: the product may pass 2**31
    key += rank
    # Each part is sorted by this key already: the stable sort merges runs.
    by_key = np.argsort(key, kind="stable")
    del key
    new_pos = np.empty(len(by_key), dtype=np.int64)
    new_pos[by_key] = np.arange(len(by_key))
    new_pos = narrow_index(new_pos)
    blocks: dict[int, np.ndarray] = {}
    for p, off in zip(parts, offsets, strict=True):
        if not len(p.order):
            continue
        cats = dt_category[p.rows[p.order]]
        bounds = run_bounds(cats)
        renumbered = new_pos[p.order + off]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            blocks[int(cats[lo])] = renumbered[lo:hi]
    order = np.concatenate([blocks[c] for c in sorted(blocks)] or [np.zeros(0, np.int32)])
    del blocks, new_pos

    def gather(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])[by_key]

    return PartPoint(
        rows=rows[by_key],
        rank=rank[by_key],
        tp=gather("tp"),
        fp=gather("fp"),
        match_gt=gather("match_gt"),
        match_iou=gather("match_iou"),
        order=order,
        arrays=parts[0].arrays,
    )


def _point(s: CocoSetup, iou_thr: float, p: PartPoint) -> OperatingPoint:
    """:class:`OperatingPoint` of the merged outcome."""
    return OperatingPoint(
        iou_thr=iou_thr,
        dt_rows=narrow_index(s.scored_rows[p.rows]),
        tp=p.tp,
        fp=p.fp,
        match_gt=p.match_gt,
        match_iou=p.match_iou,
        gt_counts=~s.gt_ignore[0],
        order=None if s.protocol.class_agnostic else p.order,
    )
