"""Precision/recall arrays and AP, from matches (pure numpy).

``accumulate_coco`` fills the same ``precision[T, R, K, A, M]``,
``recall[T, K, A, M]`` and ``scores[T, R, K, A, M]`` arrays as pycocotools'
``COCOeval.accumulate``, operation for operation where rounding matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ordering import distinct, group_score_order, radix_argsort, run_bounds

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
    """
    out = np.zeros((*npig.shape, len(rec_thr)), dtype=np.int64)
    for p in distinct(npig).tolist():
        if p > 0:
            c = np.searchsorted(np.arange(p + 1, dtype=np.float64) / p, rec_thr, side="left")
            out[npig == p] = c
    return out


def accumulate_coco(
    *,
    outside: np.ndarray,
    rec_lane: np.ndarray,
    rec_dt: np.ndarray,
    rec_tp: np.ndarray,
    rec_counted: np.ndarray,
    lane_thresholds: int,
    n_thresholds: int,
    dt_score: np.ndarray,
    dt_category: np.ndarray,
    dt_image: np.ndarray,
    dt_rank: np.ndarray,
    gt_category: np.ndarray,
    gt_ignore: np.ndarray,
    n_categories: int,
    max_dets: tuple[int, ...],
    recall_thresholds: np.ndarray,
    gt_image: np.ndarray | None = None,
    image_weight: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> CocoArrays:
    """Accumulate per-category precision/recall curves from sparse matches.

    Args:
        outside: ``[A, D]`` bool, a prediction's area is outside the range
            (an unmatched one is then ignored, else it is a false positive).
        rec_lane, rec_dt, rec_tp, rec_counted: ``[P]`` match records
            (see :class:`~iou_eval.matching.Matches`); lanes are
            ``area * lane_thresholds + threshold``.
        n_thresholds: ``T``, the thresholds to accumulate (the first ones).
        dt_score, dt_category, dt_image, dt_rank: ``[D]`` score, category
            index, image position (in sorted image-id order) and rank inside
            its (image, category) group.
        gt_category: ``[G]``; gt_ignore: ``[A, G]`` bool.
        n_categories: ``K``.
        max_dets: ``[M]`` per-image caps.
        recall_thresholds: ``[R]``.
        gt_image, image_weight: ``[G]`` image of each ground truth and ``[I]``
            integer multiplicity of each image, for bootstrap replicates: an
            image drawn twice counts twice.  None for the plain evaluation.
        order: ``[D]`` the predictions by category, then descending score,
            ties in input order (:func:`~iou_eval.ordering.group_score_order`
            of ``dt_category`` and ``dt_score``); computed when None.

    The ordering reproduces pycocotools: within a category, predictions are
    ranked by score, ties by image (sorted ids) then by rank in the image —
    the order the predictions must arrive in.  Only true positives are visited: between two of them precision only
    falls, so the interpolated precision at a recall point is the largest
    precision among the true positives from the one that reaches it on,
    computed with the same float operations pycocotools performs there —
    hence the same bits.  The running count of scored predictions is a dense
    cumulative sum per area range plus sparse corrections from the matches.
    """
    n_area, n_dt = outside.shape
    n_thr = n_thresholds
    rec_thr = np.asarray(recall_thresholds, dtype=np.float64)
    n_rec, n_max, k_n = len(rec_thr), len(max_dets), n_categories
    precision = -np.ones((n_thr, n_rec, k_n, n_area, n_max))
    recall = -np.ones((n_thr, k_n, n_area, n_max))
    scores = -np.ones((n_thr, n_rec, k_n, n_area, n_max))

    # Ground truths that count, per category and area range: npig[K, A].
    npig = np.zeros((k_n, n_area), dtype=np.int64)
    for a in range(n_area):
        counted = ~gt_ignore[a]
        w = None
        if image_weight is not None and gt_image is not None:
            w = image_weight[gt_image[counted]]
        npig[:, a] = np.round(
            np.bincount(gt_category[counted], weights=w, minlength=k_n)[:k_n]
        ).astype(np.int64)
    need = first_counts(npig, rec_thr)  # [K, A, R]

    # Records of the accumulated thresholds, renumbered to lanes of T.
    # Lanes widen to int64: they are multiplied into sort keys below.
    rec_lane = rec_lane.astype(np.int64)
    if lane_thresholds == n_thr:
        r_lane_all, r_dt_all, r_tp_all, r_cnt_all = rec_lane, rec_dt, rec_tp, rec_counted
    else:
        r_thr = rec_lane % lane_thresholds
        mine = r_thr < n_thr
        r_lane_all = (rec_lane[mine] // lane_thresholds) * n_thr + r_thr[mine]
        r_dt_all, r_tp_all, r_cnt_all = rec_dt[mine], rec_tp[mine], rec_counted[mine]
        del r_thr, mine

    # Predictions arrive in the matcher's order (by image, then rank inside
    # the image's group), so a stable sort by (category, score) leaves ties
    # ordered by image and rank, as pycocotools orders them.
    if order is None:
        order = group_score_order(dt_category, dt_score)
    weight_all = None if image_weight is None else image_weight[dt_image]
    # Records sorted once by (lane, position in accumulation order); each
    # maxDets keeps a subset of positions, which keeps them sorted.
    full_pos = np.empty(n_dt, dtype=np.int64)
    full_pos[order] = np.arange(n_dt)
    rp_full = full_pos[r_dt_all]
    o = radix_argsort(r_lane_all * (n_dt + 1) + rp_full)
    r_lane_all, rp_full = r_lane_all[o], rp_full[o]
    r_tp_all, r_cnt_all = r_tp_all[o], r_cnt_all[o]

    # Records of one area range are a contiguous slice (sorted by lane).
    area_first = np.searchsorted(r_lane_all, np.arange(n_area + 1) * n_thr)
    groups = n_thr * k_n  # (threshold, category) groups of one area range
    group_cat = np.arange(groups) % k_n

    # Inside each area range, in accumulation order: [A, D].
    inside_all = ~np.take(outside, order, axis=1)

    def area_pass(m: int, a: int, keep: np.ndarray | None, new_pos: np.ndarray | None,
                  sel: np.ndarray, cat: np.ndarray, starts: np.ndarray, base: np.ndarray,
                  w: np.ndarray | None) -> None:  # fmt: skip
        """Fill ``[:, :, :, a, m]`` from the predictions ``keep`` selects (in ``order``).

        ``keep`` is None when every prediction is kept; ``new_pos`` maps a
        full position to its position among the kept; ``base[n]`` says which
        kept prediction lies inside the area range.  A function of its own so
        that its temporaries (record-sized) are freed before the next area
        range's are allocated.
        """
        n = len(sel)
        size = np.diff(starts)
        lo, hi = area_first[a], area_first[a + 1]
        if keep is None or new_pos is None:
            r_thr = r_lane_all[lo:hi] - a * n_thr
            r_pos = rp_full[lo:hi]
            r_tp, r_cnt = r_tp_all[lo:hi], r_cnt_all[lo:hi]
        else:
            ok = keep[rp_full[lo:hi]]
            r_thr = r_lane_all[lo:hi][ok] - a * n_thr
            r_pos = new_pos[rp_full[lo:hi][ok]]
            r_tp, r_cnt = r_tp_all[lo:hi][ok], r_cnt_all[lo:hi][ok]
            del ok

        # Scored predictions so far, per threshold = base (inside the area
        # range) + corrections from the matched predictions.
        base_cum = np.cumsum(base if w is None else base * w, dtype=np.int64)
        r_w = None if w is None else w[r_pos]
        delta = r_cnt.astype(np.int64) - base[r_pos]
        if r_w is not None:
            delta *= r_w
        corr = np.cumsum(delta)
        del delta, base
        thr_first = np.searchsorted(r_thr, np.arange(n_thr + 1))
        corr -= np.concatenate(([0], corr))[thr_first[:-1]][r_thr]
        running = _Running(base_cum, r_thr, r_thr * (n + 1) + r_pos, corr, n + 1)

        # Scored predictions before each category's first position: [T * K].
        g_thr = np.arange(groups) // k_n
        g_start = starts[group_cat]
        before = np.zeros(groups, dtype=np.int64)
        has_before = g_start > 0
        before[has_before] = running.upto(g_thr[has_before], g_start[has_before] - 1)

        t_idx, pos = r_thr[r_tp], r_pos[r_tp]
        w_tp = np.ones(len(pos), dtype=np.int64) if r_w is None else r_w[r_tp]
        group = t_idx * k_n + cat[pos]
        run = np.cumsum(w_tp)
        g_first = np.searchsorted(group, np.arange(groups + 1))
        tp_cum = run - np.concatenate(([0], run))[g_first[:-1]][group]
        # A true positive is itself a record: its running correction is at
        # hand, no search needed.
        fp_cum = base_cum[pos] + corr[r_tp] - before[group] - tp_cum
        tp_f = tp_cum.astype(np.float64)
        fp_f = fp_cum.astype(np.float64)
        pr = tp_f / (fp_f + tp_f + _EPS)
        env = suffix_max(pr, group)
        n_tp = np.diff(g_first)
        has = n_tp > 0
        total_tp = np.zeros(groups, dtype=np.int64)
        total_tp[has] = tp_cum[g_first[1:][has] - 1]

        # For each (threshold, category, recall point): the true positive that
        # reaches it, found among integer keys (group, cumulative count).
        need_a = np.tile(need[:, a, :], (n_thr, 1))  # [T * K, R]
        span = int(run[-1]) + 2 if len(run) else 2
        key = group.astype(np.int64) * span + tp_cum
        query = np.arange(groups, dtype=np.int64)[:, None] * span + np.maximum(need_a, 1)
        hit = np.searchsorted(key, query.ravel(), side="left").reshape(query.shape)
        found = hit < g_first[1:, None]
        safe = np.minimum(hit, max(len(env) - 1, 0))
        if len(env):
            q = np.where(found, env[safe], 0.0)
            ss = np.where(found, dt_score[sel[pos[safe]]], 0.0)
        else:
            q = np.zeros(query.shape)
            ss = np.zeros(query.shape)
        # Recall point 0 (c = 0) is position 0 of the category, TP or not:
        # its precision is the envelope's maximum, its score the top score.
        first_env = np.zeros(groups)
        first_env[has] = env[g_first[:-1][has]]
        first_score = np.zeros(groups)
        occupied = size[group_cat] > 0
        first_score[occupied] = dt_score[sel[starts[group_cat[occupied]]]]
        zero = need_a == 0
        q = np.where(zero, first_env[:, None], q).reshape(n_thr, k_n, n_rec)
        ss = np.where(zero, first_score[:, None], ss).reshape(n_thr, k_n, n_rec)

        # Back to pycocotools' layout [T, R, K, A, M]; categories without
        # ground truth in this range stay -1.
        with np.errstate(invalid="ignore", divide="ignore"):
            rc = total_tp.reshape(n_thr, k_n) / npig[:, a][None, :]
        rc = np.where(size[None, :] > 0, rc, 0.0)
        ks = np.flatnonzero(npig[:, a] > 0)
        precision[:, :, ks, a, m] = q[:, ks, :].transpose(0, 2, 1)
        scores[:, :, ks, a, m] = ss[:, ks, :].transpose(0, 2, 1)
        recall[:, ks, a, m] = rc[:, ks]

    rank_o = dt_rank[order]
    for m, max_det in enumerate(max_dets):
        kept = rank_o < max_det
        if weight_all is not None:
            kept &= weight_all[order] > 0
        keep: np.ndarray | None = None
        new_pos = None
        if kept.all():
            sel, inside = order, inside_all
        else:
            keep, sel, inside = kept, order[kept], np.compress(kept, inside_all, axis=1)
            new_pos = np.cumsum(kept) - 1  # full position -> position among the kept
        cat = dt_category[sel]
        starts = np.searchsorted(cat, np.arange(k_n + 1))
        w = None if weight_all is None else weight_all[sel]
        for a in range(n_area):
            area_pass(m, a, keep, new_pos, sel, cat, starts, inside[a], w)
        del inside, new_pos, kept, keep

    return CocoArrays(precision=precision, recall=recall, scores=scores)


def summarize_coco(
    arrays: CocoArrays,
    iou_thresholds: tuple[float, ...],
    area_labels: tuple[str, ...],
    max_dets: tuple[int, ...],
) -> dict[str, float | None]:
    """The 12 summary statistics of ``COCOeval.summarize``; None where undefined.

    Means are taken over the entries > -1 of the same slices, in the same
    memory order, as pycocotools takes them.
    """

    def stat(ap: bool, iou: float | None = None, area: str = "all", max_det: int | None = None):
        if max_det is None or area not in area_labels or max_det not in max_dets:
            return None
        a = area_labels.index(area)
        m = max_dets.index(max_det)
        s = arrays.precision[:, :, :, a, m] if ap else arrays.recall[:, :, a, m]
        if iou is not None:
            t = np.where(iou == np.asarray(iou_thresholds))[0]
            s = s[t]
        s = s[s > -1]
        return float(np.mean(s)) if s.size else None

    md = max_dets
    last = md[-1] if md else None
    return {
        "AP": stat(True, max_det=last),
        "AP50": stat(True, 0.5, max_det=md[2] if len(md) > 2 else None),
        "AP75": stat(True, 0.75, max_det=md[2] if len(md) > 2 else None),
        "APs": stat(True, area="small", max_det=md[2] if len(md) > 2 else None),
        "APm": stat(True, area="medium", max_det=md[2] if len(md) > 2 else None),
        "APl": stat(True, area="large", max_det=md[2] if len(md) > 2 else None),
        "AR1": stat(False, max_det=md[0] if md else None),
        "AR10": stat(False, max_det=md[1] if len(md) > 1 else None),
        "AR100": stat(False, max_det=md[2] if len(md) > 2 else None),
        "ARs": stat(False, area="small", max_det=md[2] if len(md) > 2 else None),
        "ARm": stat(False, area="medium", max_det=md[2] if len(md) > 2 else None),
        "ARl": stat(False, area="large", max_det=md[2] if len(md) > 2 else None),
    }
