"""Split one evaluation into parts and merge them back bit for bit.

COCO matching and accumulation are independent per category: parts own
disjoint sets of categories, run anywhere (an executor: threads beside the
compiled core or forked worker processes here, a Dask cluster in
:mod:`iou_eval.engine.cluster`), and are merged
into exactly the arrays and the prediction order one process gives, so
every later sum runs in the same order and gives the same bits.

Why categories and not image shards: a category's accumulation needs every
image's matches of that category at once (one score sort, one cumulative
sum), so category parts need no second pass, and COCO-sized sets have
dozens to hundreds of categories to deal out (80 for COCO, 365 for
Objects365).  Image shards would split matching finer but leave a merge of
every category's score-sorted runs to one place (docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

import numpy as np

from iou_eval.data.ordering import run_bounds
from iou_eval.engine.parallel import run_parts, run_thread_pool
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.coco import CocoSetup, match_and_accumulate, shared_arrays
from iou_eval.protocols.core import coco_core
from iou_eval.protocols.matching import Matches

# Below this many predictions one process is quicker than forking.
PARALLEL_MIN_PREDICTIONS = 200_000
# Beside the compiled core a part is fast and its threads share the GIL for
# their numpy steps: parts run side by side only for this many times as many
# (on two busy cores, side by side was slower at 1.7 million predictions).
THREADED_PARALLEL_SCALE = 10


def parallel_min_predictions() -> int:
    """The predictions from which category parts run side by side."""
    scale = THREADED_PARALLEL_SCALE if coco_core() is not None else 1
    return PARALLEL_MIN_PREDICTIONS * scale


PartResult = tuple[Matches, CocoArrays, np.ndarray]


def category_parts(dt_category: np.ndarray, n_categories: int, n_parts: int) -> list[np.ndarray]:
    """Categories dealt into at most ``n_parts`` sets of about equal prediction counts.

    Largest first, each to the lightest set so far (the cost of matching and
    accumulating a category grows with its predictions).  Empty sets are
    dropped; each set is sorted.
    """
    weight = np.bincount(dt_category, minlength=n_categories)[:n_categories]
    load = np.zeros(max(1, n_parts), dtype=np.int64)
    owner = np.zeros(n_categories, dtype=np.int64)
    for c in np.argsort(-weight, kind="stable").tolist():
        j = int(np.argmin(load))
        owner[c] = j
        load[j] += weight[c] + 1
    parts = [np.flatnonzero(owner == j) for j in range(len(load))]
    return [p for p in parts if len(p)]


def plan_parts(s: CocoSetup, workers: int) -> list[np.ndarray] | None:
    """The category sets to run apart, or None when one part is best."""
    if workers <= 1 or s.protocol.class_agnostic or len(s.pred) < parallel_min_predictions():
        return None
    parts = category_parts(s.pred.category_idx, s.n_categories, workers)
    return parts if len(parts) > 1 else None


class PartExecutor(Protocol):
    """Where the parts of one job run: ``[fn(shared, p) for p in parts]``, in the parts' order.

    ``shared`` is read-only and reaches each place that runs parts once (a
    fork's shared pages, a cluster worker's scattered copy), never once per
    part.  ``slots``: how many parts are worth planning.  ``progress(i)`` is
    called as part ``i`` is done, in the order they finish.  An error raised
    by a part is raised by :meth:`run`.
    """

    slots: int

    def run(
        self,
        fn: Callable[[Any, Any], Any],
        shared: Any,
        parts: Sequence[Any],
        progress: Callable[[int], None] | None = None,
    ) -> list[Any]: ...


@dataclass(frozen=True)
class ForkedParts:
    """Parts in forked worker processes, the first one here (:func:`~iou_eval.engine.parallel.run_parts`).

    A child sees ``shared`` in the pages it shares with this process: nothing is copied.
    """

    slots: int

    def run(
        self,
        fn: Callable[[Any, Any], Any],
        shared: Any,
        parts: Sequence[Any],
        progress: Callable[[int], None] | None = None,
    ) -> list[Any]:
        out = run_parts(partial(fn, shared), parts)
        if progress is not None:
            for i in range(len(out)):
                progress(i)
        return out


@dataclass(frozen=True)
class ThreadedParts:
    """Parts in ``slots`` threads of this process (:func:`~iou_eval.engine.parallel.run_thread_pool`).

    Where the compiled COCO core runs: its kernels release the GIL, and a
    thread sees ``shared`` and hands its result back without a copy.
    """

    slots: int

    def run(
        self,
        fn: Callable[[Any, Any], Any],
        shared: Any,
        parts: Sequence[Any],
        progress: Callable[[int], None] | None = None,
    ) -> list[Any]:
        out = run_thread_pool(partial(fn, shared), parts, self.slots)
        if progress is not None:
            for i in range(len(out)):
                progress(i)
        return out


def local_parts(workers: int) -> ThreadedParts | ForkedParts:
    """Where this process runs category parts: threads beside the compiled core, else forks."""
    return ThreadedParts(workers) if coco_core() is not None else ForkedParts(workers)


def match_in_parts(s: CocoSetup, workers: int, executor: PartExecutor | None = None) -> PartResult:
    """Matches, arrays and score order of the whole, from parts run by ``executor``.

    Without one, parts run in ``workers`` threads (the compiled core) or
    forked processes (numpy).  Every executor runs the same part function
    and the same merge: the same bits.
    """
    runner = executor if executor is not None else local_parts(workers)
    parts = plan_parts(s, runner.slots)
    if parts is None:
        return match_and_accumulate(s, None)
    if isinstance(runner, ThreadedParts):
        # Threads fill their categories of one set of arrays: nothing to join.
        arrays = shared_arrays(s)
        results = runner.run(partial(match_and_accumulate, out=arrays), s, parts)
        return merge_parts(results, parts, s.dt_group, s.pred.category_idx, s.max_det, arrays)
    results = runner.run(match_and_accumulate, s, parts)
    return merge_parts(results, parts, s.dt_group, s.pred.category_idx, s.max_det)


def merge_matches(
    ms: list[Matches], dt_group: np.ndarray, max_det: int
) -> tuple[Matches, np.ndarray]:
    """One :class:`Matches` in the one-process order (by group, then rank).

    Returns the merged matches and ``new_pos``: a part-concatenated position
    -> its merged position.
    """
    rows = np.concatenate([m.dt_rows for m in ms])
    ranks = np.concatenate([m.dt_rank for m in ms])
    # Each part is sorted by this key already: the stable sort merges runs.
    # int64 key: groups and ranks may be int32, their product not.
    order = np.argsort(dt_group[rows].astype(np.int64) * max_det + ranks, kind="stable")
    new_pos = np.empty(len(order), dtype=np.int64)
    new_pos[order] = np.arange(len(order))
    offsets = np.cumsum([0] + [len(m.dt_rows) for m in ms])[:-1].tolist()
    merged = Matches(
        dt_rows=rows[order],
        dt_rank=ranks[order],
        n_thresholds=ms[0].n_thresholds,
        outside=np.take(np.concatenate([m.outside for m in ms], axis=1), order, axis=1),
        lane=np.concatenate([m.lane for m in ms]),
        dt=np.concatenate(
            [new_pos[m.dt.astype(np.int64) + off] for m, off in zip(ms, offsets, strict=True)]
        ).astype(np.int32),
        gt=np.concatenate([m.gt for m in ms]),
        tp=np.concatenate([m.tp for m in ms]),
        counted=np.concatenate([m.counted for m in ms]),
        gt_ignore=ms[0].gt_ignore,
    )
    lanes = {m.kept_lane for m in ms}
    if len(lanes) == 1 and None not in lanes and all(m.kept_iou is not None for m in ms):
        # Each part's kept overlaps follow its records of that lane, and the
        # records are joined in part order: so are the overlaps.
        kept = np.concatenate([m.kept_iou for m in ms if m.kept_iou is not None])
        merged = replace(merged, kept_lane=ms[0].kept_lane, kept_iou=kept)
    return merged, new_pos


def merge_parts(
    parts: list[PartResult],
    owned: list[np.ndarray],
    dt_group: np.ndarray,
    dt_category: np.ndarray,
    max_det: int,
    arrays: CocoArrays | None = None,
) -> PartResult:
    """One :class:`Matches`, one set of arrays and one score order from category-disjoint parts.

    ``arrays``: the arrays the parts filled together (threads), else joined here.

    Records follow their predictions; each category's arrays come from the
    part that owns it.  Each part's order (by category, then descending
    score) is renumbered and the parts' categories interleaved, which gives
    the order of the whole.
    """
    ms = [m for m, _, _ in parts]
    merged, new_pos = merge_matches(ms, dt_group, max_det)
    offsets = np.cumsum([0] + [len(m.dt_rows) for m in ms])[:-1].tolist()
    # Each part's order runs category by category: deal its blocks out, in
    # category order, to where the whole order has them.
    blocks: dict[int, np.ndarray] = {}
    for (m, _, o), off in zip(parts, offsets, strict=True):
        if not len(o):
            continue
        cats = dt_category[m.dt_rows[o]]
        bounds = run_bounds(cats)
        renumbered = new_pos[o + off]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            blocks[int(cats[lo])] = renumbered[lo:hi]
    by_score = np.concatenate([blocks[c] for c in sorted(blocks)] or [np.zeros(0, np.int64)])
    if arrays is None:
        arrays = join_arrays([part_arrays for _, part_arrays, _ in parts], owned)
    return merged, arrays, by_score


def join_arrays(parts: list[CocoArrays], owned: list[np.ndarray]) -> CocoArrays:
    """Arrays over every category from parts that hold their own categories' slices.

    ``parts[i]`` holds ``[T, R, len(owned[i]), A, M]`` (and the like) for the
    categories ``owned[i]``.
    """
    k = sum(len(c) for c in owned)
    first = parts[0]
    precision = np.empty((*first.precision.shape[:2], k, *first.precision.shape[3:]))
    scores = np.empty_like(precision)
    recall = np.empty((first.recall.shape[0], k, *first.recall.shape[2:]))
    for arrays, cats in zip(parts, owned, strict=True):
        precision[:, :, cats] = arrays.precision
        scores[:, :, cats] = arrays.scores
        recall[:, cats] = arrays.recall
    return CocoArrays(precision=precision, recall=recall, scores=scores)
