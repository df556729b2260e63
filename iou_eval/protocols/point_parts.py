"""A COCO evaluation in bounded category parts, keeping only what the reports read.

:func:`iou_eval.protocols.partition.match_in_parts` merges every part's match records
back into one :class:`~iou_eval.protocols.matching.Matches` (what bootstrap replicates
re-accumulate).  A run without replicates needs less: each part's
precision/recall arrays (its categories' slices) and, per kept prediction,
its outcome at the operating point.  Here each part drops its records as
soon as it has those, so memory is bounded by the largest part plus the
small per-prediction outcome, not by every record of the run:

- parts own disjoint sets of categories of about :data:`PART_PREDICTIONS`
  predictions each; when parts run side by side, ``workers`` times as many
  parts: the parts alive at once hold about what one part holds alone, and
  they come in rounds of ``workers`` parts;
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
    n_parts = -(-d // size)
    if parallel:
        # Rounds of ``workers`` parts that together hold about what one
        # part holds alone: the peak does not grow with the workers, and
        # no part is left to run alone at the end while the others wait.
        n_parts *= workers
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
    merged = merge_points(results, s.dt_group, s.pred.category_idx, workers)
    return arrays, _point(s, iou_thr, merged)


def merge_points(
    parts: list[PartPoint],
    dt_group: np.ndarray,
    dt_category: np.ndarray,
    workers: int = 1,
) -> PartPoint:
    """One outcome in the one-process order (by group, then rank), as merge_parts orders it.

    Groups never span parts (a group is one image's one category), and each
    part lists its groups' runs in group order, each run by rank: a
    prediction's place in the whole is its group's start there (the groups
    of every part counted in group order) plus its place in its run.  Each
    part's columns are then written to their places, and its score order
    (category by category) renumbered, in up to ``workers`` threads (numpy
    releases the GIL as it copies); the score orders' category blocks are
    dealt out in category order, which gives the order of the whole.
    """
    runs = run_thread_pool(partial(_group_runs, dt_group), [p.rows for p in parts], workers)
    starts = _run_starts([g for g, _ in runs], [n for _, n in runs])
    total = sum(len(p.rows) for p in parts)
    # The dtypes the joined columns would have; positions as narrow_index gives them.
    cols = {name: np.empty(total, dtype=_joined_dtype(parts, name)) for name in _COLUMNS}
    pos_dtype = np.int32 if total < 2**31 else np.int64
    blocks: dict[int, np.ndarray] = {}

    def place(i: int) -> None:
        p, (_, counts) = parts[i], runs[i]
        # Run start in the whole - run start in the part, plus the place in the part.
        pos = np.repeat(starts[i] - (np.cumsum(counts) - counts), counts)
        pos += np.arange(len(pos))
        pos = pos.astype(pos_dtype)
        for name, col in cols.items():
            col[pos] = getattr(p, name)
        if len(p.order):
            cats = dt_category[p.rows[p.order]]
            bounds = run_bounds(cats)
            renumbered = pos[p.order]
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
                blocks[int(cats[lo])] = renumbered[lo:hi]

    run_thread_pool(place, range(len(parts)), workers)
    order = np.concatenate([blocks[c] for c in sorted(blocks)] or [np.zeros(0, pos_dtype)])
    return PartPoint(**cols, order=order, arrays=parts[0].arrays)


# The columns of a part's outcome that follow its predictions.
_COLUMNS = ("rows", "rank", "tp", "fp", "match_gt", "match_iou")


def _joined_dtype(parts: list[PartPoint], name: str) -> np.dtype:
    return np.result_type(*(getattr(p, name) for p in parts))


def _group_runs(dt_group: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The groups of ``rows`` (sorted by group) as runs: ``(group[R], count[R])``."""
    groups = dt_group[rows]
    if not len(groups):
        return groups, np.zeros(0, dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1], True])
    return groups[bounds[:-1]], np.diff(bounds)


def _run_starts(groups: list[np.ndarray], counts: list[np.ndarray]) -> list[np.ndarray]:
    """Each part's runs' starts in the whole, the runs of every part placed in group order."""
    g = np.concatenate(groups)
    by_group = np.argsort(g, kind="stable")
    n = np.concatenate(counts)[by_group]
    start = np.empty(len(g), dtype=np.int64)
    start[by_group] = np.cumsum(n) - n
    cuts = np.cumsum([len(x) for x in groups])[:-1]
    return np.split(start, cuts)


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
