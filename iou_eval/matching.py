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

from dataclasses import dataclass

import numpy as np

from .boxes import pair_iou


@dataclass(frozen=True)
class Matches:
    """The outcome of matching, per area range ``A``, threshold ``T`` and kept prediction ``D``.

    Attributes:
        dt_rows: ``[D]`` rows of the prediction dataset that were kept
            (at most ``max_det`` per group), ordered by group then rank.
        dt_rank: ``[D]`` rank of each prediction inside its group (0 = best score).
        match_gt: ``[A, T, D]`` int64 row of the matched ground truth, -1 when none.
        match_iou: ``[A, T, D]`` float64 overlap with it (0 when none).
        dt_ignore: ``[A, T, D]`` bool, neither true nor false positive.
        tp, fp: ``[A, T, D]`` bool, as pycocotools' accumulate counts them.
        gt_ignore: ``[A, G]`` bool per ground-truth row (crowd, flagged, or outside the range).
    """

    dt_rows: np.ndarray
    dt_rank: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    dt_ignore: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    gt_ignore: np.ndarray


def _group_starts(sorted_groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``[n_groups + 1]`` offsets of each group in an array sorted by group."""
    return np.searchsorted(sorted_groups, np.arange(n_groups + 1), side="left")


def candidate_pairs(
    dt_group: np.ndarray,
    gt_group: np.ndarray,
    gt_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Every (prediction, ground truth) pair that shares a group.

    Args:
        dt_group: ``[D]`` group of each prediction.
        gt_group: ``[G]`` group of each ground truth, sorted.
        gt_starts: ``[n_groups + 1]`` offsets of each group in ``gt_group``.

    Returns:
        ``(dt_pos[P], gt_pos[P])``: positions into the two arrays, grouped by
        prediction in input order and, within one, by ground-truth position.
    """
    counts = gt_starts[dt_group + 1] - gt_starts[dt_group]
    total = int(counts.sum())
    dt_pos = np.repeat(np.arange(len(dt_group)), counts)
    # Position inside the run of pairs of one prediction: 0, 1, ..., count - 1.
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    gt_pos = np.repeat(gt_starts[dt_group], counts) + (np.arange(total) - run_start)
    return dt_pos, gt_pos


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

    Returns:
        :class:`Matches`; ``match_gt`` holds ground-truth row numbers.
    """
    n_thr = len(iou_thresholds)
    n_area = len(area_ranges)
    n_lanes = n_area * n_thr
    n_gt = len(gt_group)

    # Predictions: by group, best score first, ties in the given order.
    dt_sorted = np.lexsort((dt_order_key, -dt_score, dt_group))
    d_groups = dt_group[dt_sorted]
    d_starts = _group_starts(d_groups, n_groups)
    rank = np.arange(len(dt_sorted)) - d_starts[d_groups]
    keep = rank < max_det
    dt_rows = dt_sorted[keep]
    rank = rank[keep]
    d_groups = d_groups[keep]
    n_dt = len(dt_rows)

    # Ground truths: by group, in file order.
    gt_sorted = np.lexsort((gt_order_key, gt_group))
    g_starts = _group_starts(gt_group[gt_sorted], n_groups)
    gt_pos_in_group = np.empty(n_gt, dtype=np.int64)
    gt_pos_in_group[gt_sorted] = np.arange(n_gt) - g_starts[gt_group[gt_sorted]]

    # Ignored per area range: crowd/flagged, or the area field outside the bounds.
    lo = area_ranges[:, 0:1]
    hi = area_ranges[:, 1:2]
    gt_ignore = gt_ignore_flag[None, :] | (gt_area[None, :] < lo) | (gt_area[None, :] > hi)

    # Candidate pairs, and their overlaps.  pycocotools' effective threshold
    # is min(t, 1 - 1e-10); pairs below the lowest can never match.
    eff_thr = np.minimum(np.asarray(iou_thresholds, dtype=np.float64), 1 - 1e-10)
    pd, pg = candidate_pairs(d_groups, gt_group[gt_sorted], g_starts)
    pg = gt_sorted[pg]
    iou = pair_iou(
        dt_xyxy[dt_rows[pd]], dt_bbox_area[dt_rows[pd]], gt_xyxy[pg], gt_bbox_area[pg], gt_crowd[pg]
    )
    if n_thr:
        usable = iou >= eff_thr.min()
        pd, pg, iou = pd[usable], pg[usable], iou[usable]

    match_gt: np.ndarray = np.full((n_lanes, n_dt), -1, dtype=np.int64)
    match_iou: np.ndarray = np.zeros((n_lanes, n_dt), dtype=np.float64)
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
            regular = ~gt_ignore[lane_area][:, sg]
            key = np.where(eligible, static_key[sel] + regular * tier_weight, -1)
            # Pairs of one prediction are contiguous (pd is sorted).
            seg_start = np.flatnonzero(np.r_[True, sd[1:] != sd[:-1]])
            best = np.maximum.reduceat(key, seg_start, axis=1)
            seg_len = np.diff(np.r_[seg_start, len(sd)])
            win = eligible & (key == np.repeat(best, seg_len, axis=1))
            lane, col = np.nonzero(win)
            match_gt[lane, sd[col]] = sg[col]
            match_iou[lane, sd[col]] = siou[col]
            reusable = gt_crowd[sg[col]]
            taken[lane[~reusable], sg[col][~reusable]] = True

    match_gt = match_gt.reshape(n_area, n_thr, n_dt)
    match_iou = match_iou.reshape(n_area, n_thr, n_dt)
    matched = match_gt >= 0
    if n_gt:
        safe_gt = np.where(matched, match_gt, 0)
        # A prediction on an ignored ground truth is ignored itself.
        on_ignored = matched & gt_ignore[np.arange(n_area)[:, None, None], safe_gt]
        # pycocotools records the ground truth's id as the match, so id 0
        # reads as "no match".
        counted = matched & ~gt_zero_id[safe_gt]
    else:
        on_ignored = counted = np.zeros_like(matched)
    d_area = dt_bbox_area[dt_rows]
    outside = ((d_area[None, :] < lo) | (d_area[None, :] > hi))[:, None, :]
    dt_ignore = on_ignored | (~counted & outside)
    tp = counted & ~dt_ignore
    fp = ~counted & ~dt_ignore
    return Matches(
        dt_rows=dt_rows,
        dt_rank=rank,
        match_gt=match_gt,
        match_iou=match_iou,
        dt_ignore=dt_ignore,
        tp=tp,
        fp=fp,
        gt_ignore=gt_ignore,
    )
