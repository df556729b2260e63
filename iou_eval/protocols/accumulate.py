"""Precision/recall arrays and AP, from matches (numpy; the compiled COCO core where built).

``accumulate_coco`` fills the same ``precision[T, R, K, A, M]``,
``recall[T, K, A, M]`` and ``scores[T, R, K, A, M]`` arrays as pycocotools'
``COCOeval.accumulate``, operation for operation where rounding matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.data.ordering import radix_argsort, run_bounds
from iou_eval.protocols.core import coco_core

# pycocotools divides by (fp + tp + eps) so an empty prefix gives 0, not NaN.
_EPS = np.spacing(1)


@dataclass(frozen=True)
class CocoArrays:
    """pycocotools' ``COCOeval.eval`` arrays; -1 where a slice has no ground truth.

    Attributes:
        precision: ``[T, R, K, A, M]`` interpolated precision at each recall point.
        recall: ``[T, K, A, M]`` final recall.
        scores: ``[T, R, K, A, M]`` score of the prediction at each recall point.
    """

    precision: np.ndarray
    recall: np.ndarray
    scores: np.ndarray

    def categories(self, cats: np.ndarray) -> CocoArrays:
        """The slices of categories ``cats`` (``[T, R, len(cats), A, M]`` and the like)."""
        return CocoArrays(
            precision=self.precision[:, :, cats],
            recall=self.recall[:, cats],
            scores=self.scores[:, :, cats],
        )


def suffix_max(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running maximum from the right within runs of equal ``group`` ``[N]``.

    One ``np.maximum.accumulate`` per run, over the reversed array (exact:
    only ``max``).  Runs are (threshold, category) groups: a few hundred or
    thousand calls, each over many elements.
    """
    env = np.empty_like(values)
    n = len(values)
    if not n:
        return env
    bounds = run_bounds(group)
    rev, out = values[::-1], env[::-1]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        np.maximum.accumulate(rev[n - hi : n - lo], out=out[n - hi : n - lo])
    return env


@dataclass(frozen=True)
class _Running:
    """Scored predictions per threshold up to a position: dense base + sparse corrections.

    Attributes:
        base_cum: ``[n]`` running count of predictions inside the area range.
        r_thr, r_key, corr: ``[P]`` match records sorted by ``r_key = threshold
            * stride + position``, and the running sum of their corrections
            within their threshold.
    """

    base_cum: np.ndarray
    r_thr: np.ndarray
    r_key: np.ndarray
    corr: np.ndarray
    stride: int

    def upto(self, q_thr: np.ndarray, q_pos: np.ndarray) -> np.ndarray:
        """Scored predictions at threshold ``q_thr`` and positions ``<= q_pos`` (``>= 0``)."""
        total = self.base_cum[q_pos]
        if not len(self.corr):
            return total
        i = np.searchsorted(self.r_key, q_thr * self.stride + q_pos, side="right") - 1
        valid = i >= 0
        valid[valid] = self.r_thr[i[valid]] == q_thr[valid]
        return total + np.where(valid, self.corr[np.maximum(i, 0)], 0)


def first_counts(npig: np.ndarray, rec_thr: np.ndarray) -> np.ndarray:
    """``[..., R]`` the smallest true-positive count whose recall reaches each point.

    Recall is ``tp / npig``, monotone in ``tp``, so "recall >= r" is exactly
    "tp >= c" for this ``c``: the first prediction pycocotools' searchsorted
    on the recall curve finds is the c-th true positive.

    Each ``c`` is pycocotools' ``searchsorted(arange(p + 1) / p, r, "left")``,
    computed without a loop: ``ceil(r * p)`` is within one of it, and one
    step each way against the same division (``c / p``, correctly rounded)
    settles it; ``p + 1`` where no count reaches ``r``, 0 where ``p = 0``.
    """
    p = npig[..., None].astype(np.float64)
    r = np.asarray(rec_thr, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.ceil(r * p)
        c = np.where((c - 1) / p >= r, c - 1, c)
        c = np.where(c / p < r, c + 1, c)
        c = np.clip(c, 0, p + 1)
    return np.where(p > 0, c, 0).astype(np.int64)


@dataclass(frozen=True)
class AccumulationInputs:
    """What the accumulation reads of one evaluation's matches.

    Attributes:
        outside: ``[A, D]`` bool, a prediction's area is outside the range
            (an unmatched one is then ignored, else it is a false positive).
        rec_lane, rec_dt, rec_tp, rec_counted: ``[P]`` match records
            (see :class:`~iou_eval.protocols.matching.Matches`); lanes are
            ``area * lane_thresholds + threshold``.
        lane_thresholds: thresholds the lanes were matched at.
        n_thresholds: ``T``, the thresholds to accumulate (the first ones).
        dt_score, dt_category, dt_image, dt_rank: ``[D]`` score, category
            index, image position (in pycocotools' image order) and rank
            inside its (image, category) group.
        gt_category: ``[G]``; gt_ignore: ``[A, G]`` bool; gt_image: ``[G]``.
        n_categories: ``K``.
        max_dets: ``[M]`` per-image caps.
        recall_thresholds: ``[R]``.
        order: ``[D]`` the predictions by category, then descending score,
            ties in input order (:func:`~iou_eval.data.ordering.group_score_order`
            of ``dt_category`` and ``dt_score``).
    """

    outside: np.ndarray
    rec_lane: np.ndarray
    rec_dt: np.ndarray
    rec_tp: np.ndarray
    rec_counted: np.ndarray
    lane_thresholds: int
    n_thresholds: int
    dt_score: np.ndarray
    dt_category: np.ndarray
    dt_image: np.ndarray
    dt_rank: np.ndarray
    gt_category: np.ndarray
    gt_ignore: np.ndarray
    n_categories: int
    max_dets: tuple[int, ...]
    recall_thresholds: np.ndarray
    gt_image: np.ndarray
    order: np.ndarray


def count_ground_truths(x: AccumulationInputs, image_weight: np.ndarray | None) -> np.ndarray:
    """``npig[K, A]``: ground truths that count per category and area range (weighted)."""
    n_area, k_n = len(x.gt_ignore), x.n_categories
    npig = np.zeros((k_n, n_area), dtype=np.int64)
    for a in range(n_area):
        counted = ~x.gt_ignore[a]
        w = None if image_weight is None else image_weight[x.gt_image[counted]]
        npig[:, a] = np.round(
            np.bincount(x.gt_category[counted], weights=w, minlength=k_n)[:k_n]
        ).astype(np.int64)
    return npig


@dataclass(frozen=True)
class _Records:
    """Match records of the accumulated thresholds, sorted by (lane, accumulation position).

    Attributes:
        lane, pos, tp, counted: ``[P]``; lanes are ``area * T + threshold``.
        area_first: ``[A + 1]`` where each area range's records start.
    """

    lane: np.ndarray
    pos: np.ndarray
    tp: np.ndarray
    counted: np.ndarray
    area_first: np.ndarray


def sort_records(x: AccumulationInputs) -> _Records:
    """The records of the first ``T`` thresholds, renumbered to lanes of ``T`` and sorted."""
    n_thr, lane_thr = x.n_thresholds, x.lane_thresholds
    rec_lane = x.rec_lane
    if lane_thr == n_thr:
        lane, dt, tp, cnt = rec_lane, x.rec_dt, x.rec_tp, x.rec_counted
    else:
        r_thr = rec_lane % lane_thr
        mine = r_thr < n_thr
        lane = (rec_lane[mine] // lane_thr) * n_thr + r_thr[mine]
        dt, tp, cnt = x.rec_dt[mine], x.rec_tp[mine], x.rec_counted[mine]
    n_dt = len(x.order)
    # Sorted once by (lane, position in accumulation order); each maxDets
    # keeps a subset of positions, which keeps them sorted.  Positions and
    # lanes are held as int32 where they fit (records run to tens of
    # millions); the sort key alone is int64, and only while sorting.
    small = n_dt < 2**31
    full_pos = np.empty(n_dt, dtype=np.int32 if small else np.int64)
    full_pos[x.order] = np.arange(n_dt, dtype=full_pos.dtype)
    pos = full_pos[dt]
    del full_pos
    # The one int64 array: lanes times positions may pass 2**31.
    key = lane.astype(np.int64)
    key *= n_dt + 1
    key += pos
    o = radix_argsort(key)
    del key
    lane = lane[o].astype(np.int32)
    area_first = np.searchsorted(lane, np.arange(len(x.outside) + 1) * n_thr)
    return _Records(lane, pos[o], tp[o], cnt[o], area_first)


def accumulate_coco(
    x: AccumulationInputs,
    image_weight: np.ndarray | None = None,
    categories: np.ndarray | None = None,
    out: CocoArrays | None = None,
) -> CocoArrays:
    """Accumulate per-category precision/recall curves from sparse matches.

    Args:
        x: the matches and their predictions' columns.
        image_weight: ``[I]`` integer multiplicity of each image, for
            bootstrap replicates: an image drawn twice counts twice.  None
            for the plain evaluation.
        categories: ``[K']`` the categories whose slices to return (a part's),
            in that order; None: all.  The compiled core accumulates only
            those; numpy accumulates all and slices.
        out: arrays over every category to fill in place (their
            ``categories`` slices; parts in threads share one): returned.

    The ordering reproduces pycocotools: within a category, predictions are
    ranked by score, ties by image then by rank in the image — the order the
    predictions arrive in.  Only true positives are visited: between two of
    them precision only falls, so the interpolated precision at a recall
    point is the largest precision among the true positives from the one
    that reaches it on, computed with the same float operations pycocotools
    performs there — hence the same bits.  The running count of scored
    predictions is a dense cumulative sum per area range plus sparse
    corrections from the matches.
    """
    core = coco_core() if image_weight is None else None
    npig = count_ground_truths(x, image_weight)
    need = first_counts(npig, np.asarray(x.recall_thresholds, dtype=np.float64))  # [K, A, R]
    if core is not None:
        return _compiled(core, x, npig, need, categories, out)
    whole = _numpy_passes(x, image_weight, npig, need)
    if out is not None:
        cats = np.arange(x.n_categories) if categories is None else categories
        out.precision[:, :, cats] = whole.precision[:, :, cats]
        out.scores[:, :, cats] = whole.scores[:, :, cats]
        out.recall[:, cats] = whole.recall[:, cats]
        return out
    return whole if categories is None else whole.categories(categories)


def empty_arrays(x: AccumulationInputs, k_n: int) -> CocoArrays:
    """pycocotools' arrays for ``k_n`` categories, all -1 (no ground truth)."""
    return unfilled_arrays(
        x.n_thresholds, len(x.recall_thresholds), k_n, len(x.outside), len(x.max_dets)
    )


def unfilled_arrays(n_thr: int, n_rec: int, k_n: int, n_area: int, n_max: int) -> CocoArrays:
    """``precision[T, R, K, A, M]``, ``recall[T, K, A, M]``, ``scores[T, R, K, A, M]``, all -1."""
    # One pass each (np.full), not ones and then a negated copy.
    return CocoArrays(
        precision=np.full((n_thr, n_rec, k_n, n_area, n_max), -1.0),
        recall=np.full((n_thr, k_n, n_area, n_max), -1.0),
        scores=np.full((n_thr, n_rec, k_n, n_area, n_max), -1.0),
    )


def _numpy_passes(
    x: AccumulationInputs, image_weight: np.ndarray | None, npig: np.ndarray, need: np.ndarray
) -> CocoArrays:
    """:func:`accumulate_coco` in numpy (the reference): every category."""
    out = empty_arrays(x, x.n_categories)
    n_area, k_n = len(x.outside), x.n_categories
    records = sort_records(x)
    order = x.order
    weight_all = None if image_weight is None else image_weight[x.dt_image]
    # Inside each area range, in accumulation order: [A, D].
    inside_all = ~np.take(x.outside, order, axis=1)
    rank_o = x.dt_rank[order]
    for m, max_det in enumerate(x.max_dets):
        kept = rank_o < max_det
        if weight_all is not None:
            kept &= weight_all[order] > 0
        if kept.all():
            keep, new_pos, sel, inside = None, None, order, inside_all
        else:
            keep, sel, inside = kept, order[kept], np.compress(kept, inside_all, axis=1)
            new_pos = np.cumsum(kept) - 1  # full position -> position among the kept
        cat = x.dt_category[sel]
        p = _Pass(
            x=x, records=records, keep=keep, new_pos=new_pos, sel=sel, cat=cat,
            starts=np.searchsorted(cat, np.arange(k_n + 1)),
            w=None if weight_all is None else weight_all[sel],
        )  # fmt: skip
        for a in range(n_area):
            _area_pass(p, a, m, inside[a], npig[:, a], need[:, a, :], out)
        del inside, new_pos, kept, keep
    return out


def _compiled(
    core,
    x: AccumulationInputs,
    npig: np.ndarray,
    need: np.ndarray,
    categories: np.ndarray | None,
    out: CocoArrays | None,
) -> CocoArrays:
    """The arrays of ``categories`` (all: None) by the compiled COCO core, in ``out`` if
    given: the numbers of the numpy passes, bit for bit."""
    k_n = x.n_categories
    cats = np.arange(k_n, dtype=np.int64) if categories is None else np.asarray(categories)
    # Where each category goes: its own column of full arrays, else the next one.
    slots = cats if out is not None else np.arange(len(cats), dtype=np.int64)
    if out is None:
        out = empty_arrays(x, len(cats))
    c = np.ascontiguousarray
    core.accumulate(
        c(x.order), c(x.dt_category), c(x.dt_score, dtype=np.float64), c(x.dt_rank),
        c(x.outside), c(x.rec_lane), c(x.rec_dt), c(x.rec_tp), c(x.rec_counted),
        x.lane_thresholds, x.n_thresholds, np.asarray(x.max_dets, dtype=np.int64),
        c(npig, dtype=np.int64), c(need, dtype=np.int64), k_n, len(x.outside), c(cats),
        c(slots), out.precision, out.recall, out.scores,
    )  # fmt: skip
    return out


@dataclass(frozen=True)
class _Pass:
    """One maxDets cap's kept predictions, in accumulation order.

    ``keep`` is None when every prediction is kept; ``new_pos`` maps a full
    position to its position among the kept; ``sel[n]`` the kept predictions,
    ``cat[n]`` their categories, ``starts[K + 1]`` each category's first
    position, ``w[n]`` their image weights (None: all 1).
    """

    x: AccumulationInputs
    records: _Records
    keep: np.ndarray | None
    new_pos: np.ndarray | None
    sel: np.ndarray
    cat: np.ndarray
    starts: np.ndarray
    w: np.ndarray | None


def _area_records(p: _Pass, a: int) -> tuple[np.ndarray, ...]:
    """``(threshold, position, tp, counted)`` of area range ``a``'s records among the kept."""
    r, n_thr = p.records, p.x.n_thresholds
    lo, hi = r.area_first[a], r.area_first[a + 1]
    if p.keep is None or p.new_pos is None:
        return r.lane[lo:hi] - a * n_thr, r.pos[lo:hi], r.tp[lo:hi], r.counted[lo:hi]
    ok = p.keep[r.pos[lo:hi]]
    return (
        r.lane[lo:hi][ok] - a * n_thr,
        p.new_pos[r.pos[lo:hi][ok]],
        r.tp[lo:hi][ok],
        r.counted[lo:hi][ok],
    )


def _area_pass(
    p: _Pass,
    a: int,
    m: int,
    base: np.ndarray,
    npig_a: np.ndarray,
    need_a: np.ndarray,
    out: CocoArrays,
) -> None:
    """Fill ``out[:, :, :, a, m]``; ``base[n]`` says which kept prediction lies inside the range.

    A function of its own so that its temporaries (record-sized) are freed
    before the next area range's are allocated.
    """
    n_thr, k_n = p.x.n_thresholds, p.x.n_categories
    groups = n_thr * k_n  # (threshold, category) groups of one area range
    r_thr, r_pos, r_tp, r_cnt = _area_records(p, a)
    running, r_w = _running(p, base, r_thr, r_pos, r_cnt)
    curve = _tp_curve(p, running, r_thr, r_pos, r_tp, r_w, groups)
    q, ss = _at_recall_points(p, curve, np.tile(need_a, (n_thr, 1)), groups)
    # Back to pycocotools' layout [T, R, K, A, M]; categories without
    # ground truth in this range stay -1.
    size = np.diff(p.starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        rc = curve.total_tp.reshape(n_thr, k_n) / npig_a[None, :]
    rc = np.where(size[None, :] > 0, rc, 0.0)
    ks = np.flatnonzero(npig_a > 0)
    out.precision[:, :, ks, a, m] = q[:, ks, :].transpose(0, 2, 1)
    out.scores[:, :, ks, a, m] = ss[:, ks, :].transpose(0, 2, 1)
    out.recall[:, ks, a, m] = rc[:, ks]


def _running(
    p: _Pass, base: np.ndarray, r_thr: np.ndarray, r_pos: np.ndarray, r_cnt: np.ndarray
) -> tuple[_Running, np.ndarray | None]:
    """Scored predictions so far, per threshold: base (inside the range) + record corrections."""
    n = len(p.sel)
    base_cum = np.cumsum(base if p.w is None else base * p.w, dtype=np.int64)
    r_w = None if p.w is None else p.w[r_pos]
    delta = r_cnt.astype(np.int64) - base[r_pos]
    if r_w is not None:
        delta *= r_w
    corr = np.cumsum(delta)
    del delta
    thr_first = np.searchsorted(r_thr, np.arange(p.x.n_thresholds + 1))
    corr -= np.concatenate(([0], corr))[thr_first[:-1]][r_thr]
    # int64 key: the records' thresholds and positions may be int32.
    return _Running(base_cum, r_thr, r_thr.astype(np.int64) * (n + 1) + r_pos, corr, n + 1), r_w


@dataclass(frozen=True)
class _Curve:
    """The true positives of one area range, by (threshold, category) group.

    Attributes:
        pos: ``[P_tp]`` kept positions; group: ``[P_tp]`` their group;
        tp_cum: ``[P_tp]`` cumulative true positives in the group;
        env: ``[P_tp]`` precision envelope (running max from the right);
        g_first: ``[groups + 1]`` where each group's true positives start;
        total_tp: ``[groups]``; has: ``[groups]`` bool, any true positive;
        span: key stride of ``(group, count)`` keys.
    """

    pos: np.ndarray
    group: np.ndarray
    tp_cum: np.ndarray
    env: np.ndarray
    g_first: np.ndarray
    total_tp: np.ndarray
    has: np.ndarray
    span: int


def _tp_curve(
    p: _Pass,
    running: _Running,
    r_thr: np.ndarray,
    r_pos: np.ndarray,
    r_tp: np.ndarray,
    r_w: np.ndarray | None,
    groups: int,
) -> _Curve:
    """Precision at each true positive, and its envelope, per (threshold, category)."""
    k_n = p.x.n_categories
    group_cat = np.arange(groups) % k_n
    # Scored predictions before each category's first position: [T * K].
    g_thr = np.arange(groups) // k_n
    g_start = p.starts[group_cat]
    before = np.zeros(groups, dtype=np.int64)
    has_before = g_start > 0
    before[has_before] = running.upto(g_thr[has_before], g_start[has_before] - 1)

    t_idx, pos = r_thr[r_tp], r_pos[r_tp]
    w_tp = np.ones(len(pos), dtype=np.int64) if r_w is None else r_w[r_tp]
    group = t_idx * k_n + p.cat[pos]
    run = np.cumsum(w_tp)
    g_first = np.searchsorted(group, np.arange(groups + 1))
    tp_cum = run - np.concatenate(([0], run))[g_first[:-1]][group]
    # A true positive is itself a record: its running correction is at
    # hand, no search needed.
    fp_cum = running.base_cum[pos] + running.corr[r_tp] - before[group] - tp_cum
    tp_f = tp_cum.astype(np.float64)
    fp_f = fp_cum.astype(np.float64)
    pr = tp_f / (fp_f + tp_f + _EPS)
    has = np.diff(g_first) > 0
    total_tp = np.zeros(groups, dtype=np.int64)
    total_tp[has] = tp_cum[g_first[1:][has] - 1]
    span = int(run[-1]) + 2 if len(run) else 2
    return _Curve(pos, group, tp_cum, suffix_max(pr, group), g_first, total_tp, has, span)


def _at_recall_points(
    p: _Pass, c: _Curve, need: np.ndarray, groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(precision[T, K, R], score[T, K, R])`` at the recall points.

    ``need[T * K, R]``: the true-positive count that reaches each point.
    For each (threshold, category, recall point) the true positive that
    reaches it is found among integer keys (group, cumulative count).
    """
    n_thr, k_n = p.x.n_thresholds, p.x.n_categories
    n_rec = need.shape[1]
    dt_score = p.x.dt_score
    key = c.group.astype(np.int64) * c.span + c.tp_cum
    query = np.arange(groups, dtype=np.int64)[:, None] * c.span + np.maximum(need, 1)
    hit = np.searchsorted(key, query.ravel(), side="left").reshape(query.shape)
    found = hit < c.g_first[1:, None]
    safe = np.minimum(hit, max(len(c.env) - 1, 0))
    if len(c.env):
        q = np.where(found, c.env[safe], 0.0)
        ss = np.where(found, dt_score[p.sel[c.pos[safe]]], 0.0)
    else:
        q = np.zeros(query.shape)
        ss = np.zeros(query.shape)
    # Recall point 0 (c = 0) is position 0 of the category, TP or not: its
    # precision is the envelope's maximum, its score the top score.
    group_cat = np.arange(groups) % k_n
    first_env = np.zeros(groups)
    first_env[c.has] = c.env[c.g_first[:-1][c.has]]
    first_score = np.zeros(groups)
    occupied = np.diff(p.starts)[group_cat] > 0
    first_score[occupied] = dt_score[p.sel[p.starts[group_cat[occupied]]]]
    zero = need == 0
    q = np.where(zero, first_env[:, None], q).reshape(n_thr, k_n, n_rec)
    ss = np.where(zero, first_score[:, None], ss).reshape(n_thr, k_n, n_rec)
    return q, ss


# pycocotools' ``_summarizeDets``: (AP?, IoU, area, maxDets) of each of the 12
# statistics.  The maxDets of the first is the *value* 100 (``_summarize``'s
# default); the others name a position in ``params.maxDets``.
COCO_STATS: dict[str, tuple[bool, float | None, str, tuple[str, int]]] = {
    "AP": (True, None, "all", ("value", 100)),
    "AP50": (True, 0.5, "all", ("index", 2)),
    "AP75": (True, 0.75, "all", ("index", 2)),
    "APs": (True, None, "small", ("index", 2)),
    "APm": (True, None, "medium", ("index", 2)),
    "APl": (True, None, "large", ("index", 2)),
    "AR1": (False, None, "all", ("index", 0)),
    "AR10": (False, None, "all", ("index", 1)),
    "AR100": (False, None, "all", ("index", 2)),
    "ARs": (False, None, "small", ("index", 2)),
    "ARm": (False, None, "medium", ("index", 2)),
    "ARl": (False, None, "large", ("index", 2)),
}


# pycocotools' ``_summarizeKps``: the 10 keypoint statistics, every one read
# at the *value* maxDets=20, over the area ranges all, medium and large.
KEYPOINT_STATS: dict[str, tuple[bool, float | None, str, tuple[str, int]]] = {
    "AP": (True, None, "all", ("value", 20)),
    "AP50": (True, 0.5, "all", ("value", 20)),
    "AP75": (True, 0.75, "all", ("value", 20)),
    "APm": (True, None, "medium", ("value", 20)),
    "APl": (True, None, "large", ("value", 20)),
    "AR": (False, None, "all", ("value", 20)),
    "AR50": (False, 0.5, "all", ("value", 20)),
    "AR75": (False, 0.75, "all", ("value", 20)),
    "ARm": (False, None, "medium", ("value", 20)),
    "ARl": (False, None, "large", ("value", 20)),
}

Stats = dict[str, tuple[bool, float | None, str, tuple[str, int]]]

# COCO's short names of its area ranges (APs, ARm); any other range is AP[label].
COCO_AREA_SUFFIX = {"small": "s", "medium": "m", "large": "l"}


def area_stat_key(ap: bool, label: str) -> str:
    """The summary key of an area range's AP or AR: ``APs`` for COCO's ``small``, else ``AP[label]``."""
    head = "AP" if ap else "AR"
    suffix = COCO_AREA_SUFFIX.get(label)
    return head + suffix if suffix else f"{head}[{label}]"


def stats_for_ranges(base: Stats, area_labels: tuple[str, ...]) -> Stats:
    """``base``'s statistics with its area-range ones replaced by one AP and one AR per
    range of ``area_labels`` (after the first, ``all``), in the order given; ``base``
    itself when ``area_labels`` holds ``all`` only (its area statistics then undefined).

    Each is read as ``base`` reads its area statistics (pycocotools' summarize
    reads APs to ARl at IoU .50:.95 and ``maxDets[2]``; keypoints at 20), on
    that range's slice of the arrays.  COCO's own ranges keep their names.
    """
    area_stats = {k: v for k, v in base.items() if v[2] != "all"}
    own = tuple(v[2] for v in area_stats.values() if v[0])
    if len(area_labels) < 2 or own == area_labels[1:]:
        # The reference's own ranges, or none (sizes unknown: its rows stay, undefined).
        return base
    ap_read = next(v[3] for v in area_stats.values() if v[0])
    ar_read = next(v[3] for v in area_stats.values() if not v[0])
    out: Stats = {}
    for ap, read in ((True, ap_read), (False, ar_read)):
        out.update({k: v for k, v in base.items() if v[0] is ap and v[2] == "all"})
        for label in area_labels[1:]:
            out[area_stat_key(ap, label)] = (ap, None, label, read)
    return out


def stat_max_det(key: str, max_dets: tuple[int, ...], stats: Stats = COCO_STATS) -> int | None:
    """The maxDets value statistic ``key`` of ``stats`` reads, or None where ``max_dets`` lacks it.

    A value pycocotools asks for but ``max_dets`` does not hold gives an
    empty selection (its -1); a position past the end makes its
    ``summarize`` raise.  Either way the statistic is undefined.
    """
    kind, v = stats[key][3]
    if kind == "value":
        return v if v in max_dets else None
    return max_dets[v] if v < len(max_dets) else None


def summarize_coco(
    arrays: CocoArrays,
    iou_thresholds: tuple[float, ...],
    area_labels: tuple[str, ...],
    max_dets: tuple[int, ...],
    stats: Stats = COCO_STATS,
) -> dict[str, float | None]:
    """The summary statistics of ``COCOeval.summarize`` (``stats``: the 12 of boxes and
    masks, or :data:`KEYPOINT_STATS`); None where undefined.

    ``max_dets[M]`` distinct and ascending (as pycocotools sorts them).
    Means are taken over the entries > -1 of the same slices, in the same
    memory order, as pycocotools takes them.
    """

    def stat(ap: bool, iou: float | None, area: str, max_det: int | None) -> float | None:
        if max_det is None or area not in area_labels:
            return None
        a = area_labels.index(area)
        m = max_dets.index(max_det)
        s = arrays.precision[:, :, :, a, m] if ap else arrays.recall[:, :, a, m]
        if iou is not None:
            t = np.where(iou == np.asarray(iou_thresholds))[0]
            s = s[t]
        s = s[s > -1]
        return float(np.mean(s)) if s.size else None

    return {
        key: stat(ap, iou, area, stat_max_det(key, max_dets, stats))
        for key, (ap, iou, area, _) in stats.items()
    }
