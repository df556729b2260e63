"""Bootstrap replicates of a COCO evaluation as weighted sums over fixed matches.

Resampling images changes how many times each image counts, never which
prediction matches which ground truth.  So everything that does not depend
on the weights is computed once (:class:`CocoResampler`): the accumulation
order, the match records of each (area range, maxDets) slice the summary
reads, the positions every running count is asked at.  A replicate is then
a few weighted prefix sums and gathers:

* ``npig``: the weighted count of ground truths per category and range;
* at each true positive of a (threshold, category) curve: its weighted
  true-positive count, and the weighted count of scored predictions up to
  it (a prefix sum over the predictions inside the range, plus sparse
  corrections where a match differs from that default), hence its precision;
* at each recall point: the first true positive reaching it, and the largest
  precision from there on (block maxima, then a running maximum from the
  right).

The arrays are those :func:`~iou_eval.protocols.accumulate.accumulate_coco` fills with
``image_weight`` (same integer counts, same float operations), bit for bit,
in the slices the summary and the per-class AP read.  An image of weight 0
stays in the sequences: it adds 0 to every count, and the curve points it
leaves never decide a maximum nor a recall point (see the tests).

Where the compiled COCO core is built, a replicate runs there on the same
weight-free arrays (``resample`` in ``_cococore.c``), with the GIL released
so replicates run in threads; numpy here is the reference
(``IOU_EVAL_NO_KERNEL=1``), and both give the same bits.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from iou_eval.protocols.accumulate import (
    COCO_STATS,
    AccumulationInputs,
    CocoArrays,
    Stats,
    sort_records,
    stat_max_det,
    stats_for_ranges,
)
from iou_eval.protocols.core import coco_core

# pycocotools divides by (fp + tp + eps), as accumulate.py does.
_EPS = np.spacing(1)


def needed_slices(
    area_labels: tuple[str, ...], max_dets: tuple[int, ...], stats: Stats | None = None
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """``(precision, recall)``: the ``(area, maxDets)`` index pairs the summary reads
    (``stats``; None: COCO's, with ``AP[label]`` / ``AR[label]`` for custom ranges).

    The per-class AP reads precision at area 0, the last maxDets, too.
    """
    if stats is None:
        stats = stats_for_ranges(COCO_STATS, area_labels)
    precision = {(0, len(max_dets) - 1)} if area_labels and max_dets else set()
    recall: set[tuple[int, int]] = set()
    for key, (is_ap, _iou, area, _) in stats.items():
        md = stat_max_det(key, max_dets, stats)
        if md is None or area not in area_labels:
            continue
        (precision if is_ap else recall).add((area_labels.index(area), max_dets.index(md)))
    # A precision slice's curve gives its recall for free.
    return precision, recall - precision


def recall_counts(npig: np.ndarray, rec_thr: np.ndarray) -> np.ndarray:
    """``[..., R]`` the least true-positive count ``c`` with ``c / npig >= r``; 0 where ``npig = 0``.

    :func:`~iou_eval.protocols.accumulate.first_counts` without its loop: ``ceil(r * p)``
    stepped to the exact least ``c`` by the same division pycocotools' recall
    curve holds (``c / p``, correctly rounded).
    """
    p = npig[..., None].astype(np.float64)
    r = np.asarray(rec_thr, dtype=np.float64)
    c = np.ceil(r * p)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where((c - 1) / p >= r, c - 1, c)
        c = np.where(c / p < r, c + 1, c)
    return np.where(p > 0, c, 0).astype(np.int64)


@dataclass(frozen=True)
class _Curves:
    """One (area range, maxDets) slice's true positives and the positions its counts are read at.

    Records are sorted by (threshold, kept position); groups are
    ``threshold * K + category``.

    Attributes:
        area, m: the slice's indices.
        tp_image: ``[P]`` image of each true-positive record; tp_group: ``[P]``.
        g_first: ``[T * K + 1]`` where each group's true positives start.
        base_image: ``[B]`` images of the kept predictions inside the range.
        corr_image, corr_delta: ``[C]`` records whose scoring differs from
            "inside the range": +1 (outside, matched) or -1 (matched to an
            ignored ground truth).
        q_base, q_hi: ``[P + T * K]`` per query (each true positive, then
            each group's "just before the category starts"): how many base
            positions, and how many corrections of this or an earlier
            threshold, lie up to it.
        has_precision: whether the summary reads this slice's precision.
    """

    area: int
    m: int
    tp_image: np.ndarray
    tp_group: np.ndarray
    g_first: np.ndarray
    base_image: np.ndarray
    corr_image: np.ndarray
    corr_delta: np.ndarray
    q_base: np.ndarray
    q_hi: np.ndarray
    has_precision: bool


class CocoResampler:
    """Summary arrays of a COCO evaluation under image weights, from matches fixed once.

    ``CocoResampler(x)(image_weight[I])`` returns :class:`CocoArrays` whose
    ``precision`` and ``recall`` equal ``accumulate_coco(x, image_weight)`` in
    the slices ``area_labels`` / ``max_dets`` make the summary read (and
    precision at area 0, last maxDets); the other entries stay -1 and
    ``scores`` is empty.
    """

    def __init__(
        self,
        x: AccumulationInputs,
        area_labels: tuple[str, ...],
        max_dets: tuple[int, ...],
        slices: tuple[set[tuple[int, int]], set[tuple[int, int]]] | None = None,
    ) -> None:
        self.x = x
        self.shape = (x.n_thresholds, len(x.recall_thresholds), x.n_categories, len(x.outside))
        # ``slices``: the (area, maxDets) slices of precision and of recall to
        # fill, when a summary other than COCO's reads them (LVIS).
        precision, recall = needed_slices(area_labels, max_dets) if slices is None else slices
        self.zero = np.asarray(x.recall_thresholds) <= 0
        # Ground truths that count, per range: one weighted bincount per replicate.
        area, row = np.nonzero(~x.gt_ignore)
        self.gt_key = area * x.n_categories + x.gt_category[row]
        self.gt_image = x.gt_image[row]
        records = sort_records(x)
        order = x.order
        rank_o = x.dt_rank[order]
        self.curves: list[_Curves] = []
        for m in sorted({m for _, m in precision | recall}):
            kept = rank_o < x.max_dets[m]
            sel = order[kept]
            new_pos = np.cumsum(kept) - 1
            for a in sorted(a for a, mm in precision | recall if mm == m):
                self.curves.append(
                    _build_curves(x, records, a, m, kept, sel, new_pos, (a, m) in precision)
                )

        # The compiled core's copy of the curves (made on first use), and
        # each thread's arrays when a replicate reuses them.
        self._lock = threading.Lock()
        self._prepared: tuple[int, Any] | None = None
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        # The compiled copy, the lock and the threads' arrays stay here.
        state = dict(self.__dict__)
        for name in ("_lock", "_prepared", "_local"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._prepared = None
        self._local = threading.local()

    def __call__(self, image_weight: np.ndarray, reuse: bool = False) -> CocoArrays:
        """The arrays under ``image_weight[I]``, by the compiled core where it runs.

        ``reuse``: fill this thread's arrays of the previous call again rather
        than new ones (for a replicate that reads them before its next call).
        """
        core = coco_core()
        if core is None:
            return self.weighted_sums(image_weight)
        w = np.ascontiguousarray(image_weight, dtype=np.int64)
        prec_am, rec_am = self._thread_arrays() if reuse else self._blank_arrays()
        core.resample(self._prepared_for(core, len(w)), w, prec_am, rec_am)
        return CocoArrays(
            precision=prec_am.transpose(2, 3, 4, 0, 1),
            recall=rec_am.transpose(2, 3, 0, 1),
            scores=np.empty(0),
        )

    def _blank_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``precision[A, M, T, R, K]`` and ``recall[A, M, T, K]``, all -1."""
        n_thr, n_rec, k_n, n_area = self.shape
        n_max = len(self.x.max_dets)
        return (
            np.full((n_area, n_max, n_thr, n_rec, k_n), -1.0),
            np.full((n_area, n_max, n_thr, k_n), -1.0),
        )

    def _thread_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        # Slices the core does not fill stay -1; those it fills, it fills whole.
        arrays = getattr(self._local, "arrays", None)
        if arrays is None:
            arrays = self._local.arrays = self._blank_arrays()
        return arrays

    def _prepared_for(self, core: ModuleType, n_images: int) -> Any:
        """The core's checked copy of the curves for ``n_images`` images (made once)."""
        with self._lock:
            if self._prepared is None or self._prepared[0] != n_images:
                self._prepared = (n_images, _prepare(core, self, n_images))
            return self._prepared[1]

    def weighted_sums(self, image_weight: np.ndarray) -> CocoArrays:
        """The arrays under ``image_weight[I]`` by numpy (the reference)."""
        x = self.x
        n_thr, n_rec, k_n, n_area = self.shape
        n_max = len(x.max_dets)
        # Stored [A, M, ...] and viewed as pycocotools' [T, R, K, A, M]: each
        # slice the summary reads is one contiguous block (same values, same
        # logical order, so the same means).
        prec_am = np.full((n_area, n_max, n_thr, n_rec, k_n), -1.0)
        rec_am = np.full((n_area, n_max, n_thr, k_n), -1.0)
        w = np.asarray(image_weight, dtype=np.int64)
        npig = self.ground_truths(w)  # [K, A]
        need = recall_counts(npig, x.recall_thresholds)  # [K, A, R]
        for c in self.curves:
            npig_a = npig[:, c.area]
            ks = np.flatnonzero(npig_a > 0)
            if c.has_precision:
                need_a = np.tile(need[:, c.area, :], (n_thr, 1))
                q, total = _precision_at_recall(c, w, need_a, self.zero)
                q = q.reshape(n_thr, k_n, n_rec).transpose(0, 2, 1)
                prec_am[c.area, c.m][:, :, ks] = q[:, :, ks]
            else:
                total = np.bincount(c.tp_group, weights=w[c.tp_image], minlength=n_thr * k_n)
            with np.errstate(invalid="ignore", divide="ignore"):
                rc = total.reshape(n_thr, k_n) / npig_a[None, :]
            rec_am[c.area, c.m][:, ks] = rc[:, ks]
        return CocoArrays(
            precision=prec_am.transpose(2, 3, 4, 0, 1),
            recall=rec_am.transpose(2, 3, 0, 1),
            scores=np.empty(0),
        )

    def ground_truths(self, w: np.ndarray) -> np.ndarray:
        """``npig[K, A]``: weighted ground truths that count (as ``count_ground_truths``)."""
        k_n, n_area = self.shape[2], self.shape[3]
        sums = np.bincount(self.gt_key, weights=np.take(w, self.gt_image), minlength=n_area * k_n)
        return np.round(sums).astype(np.int64).reshape(n_area, k_n).T


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    """The parts end to end, as one contiguous index column (int64 where empty)."""
    return np.ascontiguousarray(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _offsets(parts: list[np.ndarray]) -> np.ndarray:
    """``[S + 1]`` where each part starts in :func:`_concat` of them, and the end."""
    return np.concatenate(([0], np.cumsum([len(p) for p in parts], dtype=np.int64)))


def _prepare(core: ModuleType, r: CocoResampler, n_images: int) -> Any:
    """The compiled core's copy of ``r``'s curves (``resample_prepare``), slices end to end."""
    x, curves = r.x, r.curves
    n_thr, _, k_n, n_area = r.shape
    c = np.ascontiguousarray
    return core.resample_prepare(
        c(x.recall_thresholds, dtype=np.float64), c(r.gt_key), c(r.gt_image),
        n_images, k_n, n_thr, n_area, len(x.max_dets),
        np.array([v.area for v in curves], dtype=np.int64),
        np.array([v.m for v in curves], dtype=np.int64),
        np.array([v.has_precision for v in curves], dtype=bool),
        _offsets([v.tp_image for v in curves]), _concat([v.tp_image for v in curves]),
        _concat([v.g_first for v in curves]),
        _offsets([v.base_image for v in curves]), _concat([v.base_image for v in curves]),
        _offsets([v.corr_image for v in curves]), _concat([v.corr_image for v in curves]),
        _concat([v.corr_delta for v in curves]),
        _concat([v.q_base for v in curves]), _concat([v.q_hi for v in curves]),
    )  # fmt: skip


def _build_curves(
    x: AccumulationInputs,
    records,
    a: int,
    m: int,
    kept: np.ndarray,
    sel: np.ndarray,
    new_pos: np.ndarray,
    has_precision: bool,
) -> _Curves:
    """The weight-free part of one slice (see :class:`_Curves`)."""
    n_thr, k_n = x.n_thresholds, x.n_categories
    n = len(sel)
    image = x.dt_image[sel]
    cat = x.dt_category[sel]
    base = ~x.outside[a, sel]
    lo, hi = records.area_first[a], records.area_first[a + 1]
    ok = kept[records.pos[lo:hi]]
    r_thr = (records.lane[lo:hi] - a * n_thr)[ok]
    r_pos = new_pos[records.pos[lo:hi][ok]]
    r_tp = records.tp[lo:hi][ok]
    r_cnt = records.counted[lo:hi][ok]
    tp_thr, tp_pos = r_thr[r_tp], r_pos[r_tp]
    tp_group = tp_thr * k_n + cat[tp_pos]
    groups = n_thr * k_n
    g_first = np.searchsorted(tp_group, np.arange(groups + 1))
    # Only records scored otherwise than their position's default need a correction.
    delta = r_cnt.astype(np.int64) - base[r_pos]
    fix = np.flatnonzero(delta)
    c_thr, c_pos = r_thr[fix], r_pos[fix]
    # Queries: each true positive, then each group's last position before its category.
    starts = np.searchsorted(cat, np.arange(k_n + 1))
    g_thr = np.arange(groups) // k_n
    q_thr = np.r_[tp_thr, g_thr].astype(np.int64)
    q_pos = np.r_[tp_pos, starts[np.arange(groups) % k_n] - 1].astype(np.int64)
    base_pos = np.flatnonzero(base)
    stride = n + 2
    c_key = c_thr.astype(np.int64) * stride + c_pos + 1
    return _Curves(
        area=a,
        m=m,
        tp_image=image[tp_pos],
        tp_group=tp_group,
        g_first=g_first,
        base_image=image[base_pos],
        corr_image=image[c_pos],
        corr_delta=delta[fix],
        q_base=np.searchsorted(base_pos, q_pos, side="right"),
        q_hi=np.searchsorted(c_key, q_thr * stride + q_pos + 1, side="right"),
        has_precision=has_precision,
    )


def _precision_at_recall(
    c: _Curves, w: np.ndarray, need: np.ndarray, zero: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(q[T * K, R], total_tp[T * K])``: interpolated precision at the recall points.

    ``need[T * K, R]``: the true-positive count each recall point needs;
    ``zero[R]``: the recall points at 0, which need none.
    """
    groups, n_rec = need.shape
    n_tp = len(c.tp_group)
    # Scored predictions up to each query: base prefix sum + corrections (the
    # corrections of earlier thresholds cancel between a true positive and
    # its group's start, so they are not subtracted).
    base_cum = _prefix_sum(np.take(w, c.base_image))
    corr_cum = _prefix_sum(c.corr_delta * np.take(w, c.corr_image))
    scored = np.take(base_cum, c.q_base) + np.take(corr_cum, c.q_hi)
    w_tp = np.take(w, c.tp_image)
    run = _prefix_sum(w_tp)
    run0 = run[c.g_first[:-1]]
    tp_cum = run[1:] - np.take(run0, c.tp_group)
    # tp + fp is the group's scored count, an exact integer: the same float
    # as pycocotools' fp + tp.
    seen = scored[:n_tp] - np.take(scored[n_tp:], c.tp_group)
    pr = np.empty(n_tp + 1)
    np.divide(tp_cum.astype(np.float64), seen.astype(np.float64) + _EPS, out=pr[:n_tp])
    pr[n_tp] = -np.inf
    total = run[c.g_first[1:]] - run0
    # The true positive that reaches count k >= 1 of a group: unit
    # run0[g] + k - 1 of the true positives repeated by their weights.
    k = np.maximum(need, 1)
    found = k <= total[:, None]
    first, end = c.g_first[:-1, None], c.g_first[1:, None]
    if n_tp:
        unit = np.repeat(np.arange(n_tp), w_tp)
        u = np.minimum(run0[:, None] + (k - 1), max(len(unit) - 1, 0))
        hit = np.where(found, unit[u] if len(unit) else 0, end)
    else:
        hit = np.broadcast_to(end, found.shape)
    # Suffix maxima at the hits: block maxima between consecutive hits, then a
    # running maximum from the right.  Block 0 is the group's head, so
    # column 0 is the group's maximum.
    bounds = np.concatenate([first, hit], axis=1).ravel()
    nxt = np.concatenate([hit, end], axis=1).ravel()
    block = np.maximum.reduceat(pr, bounds)
    block[bounds >= nxt] = -np.inf
    env = np.maximum.accumulate(block.reshape(groups, n_rec + 1)[:, ::-1], axis=1)[:, ::-1]
    q = np.where(found, env[:, 1:], 0.0)
    # A recall point that needs no true positive (recall 0) reads the
    # group's maximum: pycocotools' first prediction of the category.
    q[:, zero] = np.where(total > 0, env[:, 0], 0.0)[:, None]
    return q, total


def _prefix_sum(values: np.ndarray) -> np.ndarray:
    """``[N + 1]`` int64: 0, then the running sum of ``values[N]``."""
    out = np.empty(len(values) + 1, dtype=np.int64)
    out[0] = 0
    np.cumsum(values, out=out[1:])
    return out
