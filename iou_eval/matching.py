"""Greedy matching of predictions to ground truths under COCO's rules.

All (image, category) groups are matched at once.  The only Python loop is
over a prediction's rank inside its group (at most ``max(maxDets)`` steps):
at each step every group's prediction of that rank picks its ground truth,
for every IoU threshold and area range together, with numpy.

The rules mirror pycocotools' ``COCOeval.evaluateImg``:

* predictions of a group in descending score (stable: file order on ties),
  only the first ``max(maxDets)`` are kept;
* ground truths ignored in an area range (crowd, or area outside the range)
  are tried only when no regular ground truth is available and overlapping
  enough; a crowd region can absorb any number of predictions;
* among candidates with IoU >= threshold the highest IoU wins, and on equal
  IoU the later ground truth in file order wins (pycocotools keeps the last
  candidate that is not worse);
* an unmatched prediction whose own area (``w * h``) lies outside the area
  range is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .boxes import pair_iou_columns
from .ordering import group_score_order


@dataclass(frozen=True)
class Matches:
    """The outcome of matching, kept sparse: only matched predictions carry records.

    Lanes are (area range, threshold) pairs, ``lane = area * T + threshold``.
    An unmatched prediction is a false positive in a lane unless its own
    area lies outside the lane's range (then it is ignored).

    Attributes:
        dt_rows: ``[D]`` rows of the prediction dataset that were kept
            (at most ``max_det`` per group), ordered by group then rank.
        dt_rank: ``[D]`` rank of each prediction inside its group (0 = best score).
        n_thresholds: ``T``.
        outside: ``[A, D]`` bool, the prediction's area is outside the range.
        lane, dt, gt: ``[P]`` one record per (lane, matched prediction): the
            prediction's position in ``dt_rows`` and the ground-truth row.
        tp: ``[P]`` bool, the match counts as a true positive.
        counted: ``[P]`` bool, the prediction is scored (true or false
            positive) rather than ignored.
        gt_ignore: ``[A, G]`` bool per ground-truth row (crowd, flagged, or
            outside the range).
    """

    dt_rows: np.ndarray
    dt_rank: np.ndarray
    n_thresholds: int
    outside: np.ndarray
    lane: np.ndarray
    dt: np.ndarray
    gt: np.ndarray
    tp: np.ndarray
    counted: np.ndarray
    gt_ignore: np.ndarray

    def at(self, area: int, thr: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Dense outcome of one lane: ``tp[D]``, ``fp[D]``, ``match_gt[D]`` (-1: none)."""
        n = len(self.dt_rows)
        mine = self.lane == area * self.n_thresholds + thr
        d = self.dt[mine]
        counted = ~self.outside[area].copy()
        counted[d] = self.counted[mine]
        tp = np.zeros(n, dtype=bool)
        tp[d] = self.tp[mine]
        match_gt = np.full(n, -1, dtype=np.int64)
        match_gt[d] = self.gt[mine]
        return tp, counted & ~tp, match_gt

    def in_rows(self, gt_rows: np.ndarray, dt_rows: np.ndarray, gt_ignore: np.ndarray) -> Matches:
        """These matches of a subset renumbered to the full datasets' rows.

        ``gt_rows[G']`` and ``dt_rows[D']`` are the subset's rows in the full
        datasets; ``gt_ignore[A, G]`` is the full ground truth's.
        """
        return replace(
            self,
            dt_rows=dt_rows[self.dt_rows],
            gt=gt_rows[self.gt].astype(np.int32),
            gt_ignore=gt_ignore,
        )


def ignored_per_range(
    ignore_flag: np.ndarray, area: np.ndarray, area_ranges: np.ndarray
) -> np.ndarray:
    """``[A, G]`` ground truths ignored per area range: flagged, or ``area`` outside it."""
    lo = area_ranges[:, 0:1]
    hi = area_ranges[:, 1:2]
    return ignore_flag[None, :] | (area[None, :] < lo) | (area[None, :] > hi)


def _group_starts(sorted_groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``[n_groups + 1]`` offsets of each group in an array sorted by group."""
    return np.searchsorted(sorted_groups, np.arange(n_groups + 1), side="left")


def candidate_pairs(dt_group: np.ndarray, gt_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (prediction, ground truth) pair that shares a group.

    Args:
        dt_group: ``[D]`` group of each prediction.
        gt_starts: ``[n_groups + 1]`` offsets of each group among the
            ground truths sorted by group.

    Returns:
        ``(dt_pos[P], gt_pos[P])``: positions into the two arrays, grouped by
        prediction in input order and, within one, by ground-truth position.
    """
    counts = gt_starts[dt_group + 1] - gt_starts[dt_group]
    total = int(counts.sum())
    dt_pos = np.repeat(np.arange(len(dt_group)), counts)
    # gt position = group start + (pair index - index of the prediction's first pair).
    shift = gt_starts[dt_group] - (np.cumsum(counts) - counts)
    gt_pos = np.repeat(shift, counts) + np.arange(total)
    return dt_pos, gt_pos


_PAIR_CHUNK = 1 << 16


def usable_pairs(
    d_groups: np.ndarray,
    gt_sorted: np.ndarray,
    g_starts: np.ndarray,
    dt_rows: np.ndarray,
    dt_xyxy: np.ndarray,
    dt_area: np.ndarray,
    gt_xyxy: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
    floor: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (prediction, ground truth) pairs of a group whose overlap reaches ``floor``.

    Args:
        d_groups: ``[D]`` group of each prediction (sorted).
        gt_sorted: ``[G]`` ground-truth rows by group; g_starts: ``[groups + 1]``.
        dt_rows: ``[D]`` the predictions' rows in ``dt_xyxy`` and ``dt_area``
            (``[N, 4]``, ``[N]``), aligned with d_groups.
        gt_xyxy, gt_area, gt_crowd: ``[G, 4]``, ``[G]``, ``[G]`` by ground-truth row.
        floor: the lowest matching threshold; pairs below it never match.

    Returns:
        ``(dt_pos[P], gt_row[P], iou[P])`` ordered by prediction, then ground
        truth.  Predictions are taken a chunk at a time so that the all-pairs
        arrays stay small.
    """
    # Column-wise gathers: much faster than gathering rows of [N, 4] arrays.
    # The predictions' columns are built a chunk at a time (small, reused
    # memory), the ground truths' once.
    gt_cols = np.vstack([gt_xyxy.T, gt_area])
    parts_d, parts_g, parts_iou = [], [], []
    for lo in range(0, len(d_groups), _PAIR_CHUNK):
        rows = dt_rows[lo : lo + _PAIR_CHUNK]
        dt_cols = np.empty((5, len(rows)))
        dt_cols[:4] = np.take(dt_xyxy, rows, axis=0).T
        dt_cols[4] = dt_area[rows]
        pd, pg = candidate_pairs(d_groups[lo : lo + _PAIR_CHUNK], g_starts)
        pg = gt_sorted[pg]
        # Most pairs of a group do not even overlap horizontally: drop them
        # before gathering the rest (their IoU is 0, below any usable floor).
        if floor > 0:
            iw = np.minimum(dt_cols[2, pd], gt_cols[2, pg]) - np.maximum(
                dt_cols[0, pd], gt_cols[0, pg]
            )
            near = iw > 0
            pd, pg = pd[near], pg[near]
        dt_p = dt_cols[:, pd]
        gt_p = gt_cols[:, pg]
        iou = pair_iou_columns(dt_p[:4], dt_p[4], gt_p[:4], gt_p[4], gt_crowd[pg])
        keep = iou >= floor
        pd += lo
        parts_d.append(pd[keep])
        parts_g.append(pg[keep])
        parts_iou.append(iou[keep])
    if not parts_d:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), np.zeros(0, dtype=np.float64)
    return np.concatenate(parts_d), np.concatenate(parts_g), np.concatenate(parts_iou)


def match_coco(
    *,
    gt_xyxy: np.ndarray,
    gt_bbox_area: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
    gt_ignore_flag: np.ndarray,
    gt_zero_id: np.ndarray,
    gt_group: np.ndarray,
    gt_order_key: np.ndarray,
    dt_xyxy: np.ndarray,
    dt_bbox_area: np.ndarray,
    dt_score: np.ndarray,
    dt_group: np.ndarray,
    dt_order_key: np.ndarray,
    n_groups: int,
    iou_thresholds: np.ndarray,
    area_ranges: np.ndarray,
    max_det: int,
    dt_score_rank: tuple[np.ndarray, int] | None = None,
) -> Matches:
    """Match predictions to ground truths in every group, threshold and area range.

    Args:
        gt_xyxy: ``[G, 4]``; gt_bbox_area, gt_area: ``[G]`` (box ``w * h``, and
            the ``area`` field the area ranges test).
        gt_crowd: ``[G]`` bool, matched by IoF and reusable.
        gt_ignore_flag: ``[G]`` bool, ignored in every area range.
        gt_zero_id: ``[G]`` bool, a match to it is not counted (pycocotools'
            annotation-id-0 defect), all False to do the right thing.
        gt_group, dt_group: ``[G]``, ``[D]`` int64 group (image x category) ids
            in ``[0, n_groups)``.
        gt_order_key: ``[G]`` order of ground truths inside a group (file order).
        dt_xyxy: ``[D, 4]``; dt_bbox_area, dt_score: ``[D]``.
        dt_order_key: ``[D]`` tie order among equal scores in a group.
        iou_thresholds: ``[T]``.
        area_ranges: ``[A, 2]`` inclusive ``(lo, hi)`` bounds.
        max_det: predictions kept per group, best first.
        dt_score_rank: :func:`~iou_eval.ordering.score_rank` of ``dt_score``
            when the caller has it (else computed).

    Returns:
        :class:`Matches`; ``match_gt`` holds ground-truth row numbers.
    """
    n_thr = len(iou_thresholds)
    n_area = len(area_ranges)
    n_lanes = n_area * n_thr
    n_gt = len(gt_group)

    # Predictions: by group, best score first, ties in the given order.
    if np.all(dt_order_key[1:] >= dt_order_key[:-1]):
        # Already in tie order (file order): a stable two-key sort suffices.
        dt_sorted = group_score_order(dt_group, dt_score, dt_score_rank)
    else:
        dt_sorted = np.lexsort((dt_order_key, -dt_score, dt_group))
    d_groups = dt_group[dt_sorted]
    d_starts = _group_starts(d_groups, n_groups)
    rank = np.arange(len(dt_sorted)) - d_starts[d_groups]
    keep = rank < max_det
    dt_rows = dt_sorted[keep]
    rank = rank[keep]
    d_groups = d_groups[keep]

    # Ground truths: by group, in file order.
    gt_sorted = np.lexsort((gt_order_key, gt_group))
    g_starts = _group_starts(gt_group[gt_sorted], n_groups)
    gt_pos_in_group = np.empty(n_gt, dtype=np.int64)
    gt_pos_in_group[gt_sorted] = np.arange(n_gt) - g_starts[gt_group[gt_sorted]]

    # Ignored per area range: crowd/flagged, or the area field outside the bounds.
    gt_ignore = ignored_per_range(gt_ignore_flag, gt_area, area_ranges)
    lo = area_ranges[:, 0:1]
    hi = area_ranges[:, 1:2]

    # Candidate pairs, and their overlaps.  pycocotools' effective threshold
    # is min(t, 1 - 1e-10); pairs below the lowest can never match.
    eff_thr = np.minimum(np.asarray(iou_thresholds, dtype=np.float64), 1 - 1e-10)
    floor = float(eff_thr.min()) if n_thr else 0.0
    pd, pg, iou = usable_pairs(
        d_groups, gt_sorted, g_starts, dt_rows, dt_xyxy, dt_bbox_area,
        gt_xyxy, gt_bbox_area, gt_crowd, floor,
    )  # fmt: skip

    d_area = dt_bbox_area[dt_rows]
    # Unmatched predictions outside an area range are ignored in it: [A, D].
    outside = (d_area[None, :] < lo) | (d_area[None, :] > hi)
    rec_lane: list[np.ndarray] = []
    rec_dt: list[np.ndarray] = []
    rec_gt: list[np.ndarray] = []
    if len(pd):
        # The winner of a prediction is the lexicographic maximum of
        # (regular before ignored, IoU, later in file order).  One integer key
        # orders all three: IoUs replaced by their dense rank keep exact ties.
        iou_levels, iou_rank = np.unique(iou, return_inverse=True)
        g_span = int(gt_pos_in_group.max()) + 1
        static_key = iou_rank.astype(np.int64) * g_span + gt_pos_in_group[pg]
        tier_weight = np.int64(len(iou_levels) * g_span)
        lane_area = np.repeat(np.arange(n_area), n_thr)
        lane_thr = np.tile(eff_thr, n_area)[:, None]
        regular_all = ~gt_ignore[lane_area]  # [L, G]

        taken = np.zeros((n_lanes, n_gt), dtype=bool)
        pair_rank = rank[pd]
        by_rank = np.argsort(pair_rank, kind="stable")
        r_starts = np.searchsorted(pair_rank[by_rank], np.arange(int(pair_rank.max()) + 2))
        for r in range(len(r_starts) - 1):
            sel = by_rank[r_starts[r] : r_starts[r + 1]]
            if len(sel) == 0:
                continue
            sd, sg, siou = pd[sel], pg[sel], iou[sel]
            eligible = (~taken[:, sg] | gt_crowd[sg]) & (siou[None, :] >= lane_thr)
            # Pairs of one prediction are contiguous (pd is sorted).  A
            # prediction with one candidate wins it wherever it is eligible;
            # only the others need the ordering key.
            first = np.r_[True, sd[1:] != sd[:-1]]
            last = np.r_[sd[1:] != sd[:-1], True]
            alone = first & last
            win = eligible & alone
            if not alone.all():
                shared = np.flatnonzero(~alone)
                ssd = sd[shared]
                e = eligible[:, shared]
                key = np.where(
                    e, static_key[sel[shared]] + regular_all[:, sg[shared]] * tier_weight, -1
                )
                seg_start = np.flatnonzero(np.r_[True, ssd[1:] != ssd[:-1]])
                best = np.maximum.reduceat(key, seg_start, axis=1)
                seg_len = np.diff(np.r_[seg_start, len(ssd)])
                win[:, shared] = e & (key == np.repeat(best, seg_len, axis=1))
            lane, col = np.nonzero(win)
            won = sg[col]
            rec_lane.append(lane)
            rec_dt.append(sd[col])
            rec_gt.append(won)
            reusable = gt_crowd[won]
            taken[lane[~reusable], won[~reusable]] = True

    def cat(parts: list[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    # int32 records: a few million of them in a COCO-sized run.
    m_lane = cat(rec_lane, np.int32)
    m_dt = cat(rec_dt, np.int32)
    m_gt = cat(rec_gt, np.int32)
    m_area = m_lane // max(n_thr, 1)
    on_ignored = gt_ignore[m_area, m_gt]
    # pycocotools records the ground truth's id as the match, so id 0 reads
    # as "no match": not a true positive, and ignored only as an unmatched
    # prediction would be (or when its ground truth is ignored).
    zero = gt_zero_id[m_gt]
    m_tp = ~zero & ~on_ignored
    m_counted = m_tp | (zero & ~on_ignored & ~outside[m_area, m_dt])
    return Matches(
        dt_rows=dt_rows,
        dt_rank=rank,
        n_thresholds=n_thr,
        outside=outside,
        lane=m_lane,
        dt=m_dt,
        gt=m_gt,
        tp=m_tp,
        counted=m_counted,
        gt_ignore=gt_ignore,
    )
