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

from iou_eval.data.ordering import narrow_index
from iou_eval.geometry.pairs import box_columns
from iou_eval.geometry.seam import Geometry
from iou_eval.protocols.core import coco_core, score_order


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
            prediction's position in ``dt_rows`` and the ground-truth row
            (records are a set: their order is not part of the result).
        tp: ``[P]`` bool, the match counts as a true positive.
        counted: ``[P]`` bool, the prediction is scored (true or false
            positive) rather than ignored.
        gt_ignore: ``[A, G]`` bool per ground-truth row (crowd, flagged, or
            outside the range).
        kept_lane, kept_iou: the overlap of each record of lane
            ``kept_lane``, in record order (``[P_lane]`` float64), when the
            matcher was asked to keep them; else None.
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
    kept_lane: int | None = None
    kept_iou: np.ndarray | None = None

    def overlaps_at(self, area: int, thr: int) -> np.ndarray | None:
        """``[D]`` the overlap of each prediction's match in one lane (0: none), if kept."""
        lane = area * self.n_thresholds + thr
        if self.kept_iou is None or self.kept_lane != lane:
            return None
        out = np.zeros(len(self.dt_rows), dtype=np.float64)
        out[self.dt[self.lane == lane]] = self.kept_iou
        return out

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


@dataclass(frozen=True)
class Ranked:
    """Predictions kept for matching: by group, best score first, at most ``max_det`` a group.

    Attributes:
        rows: ``[D']`` prediction rows; groups: ``[D']`` their groups; rank: ``[D']``
            their rank inside the group (0 = best).
    """

    rows: np.ndarray
    groups: np.ndarray
    rank: np.ndarray


def rank_predictions(
    dt_group: np.ndarray,
    dt_score: np.ndarray,
    dt_order_key: np.ndarray,
    n_groups: int,
    max_det: int,
    score_rank: tuple[np.ndarray, int] | None = None,
) -> Ranked:
    """Predictions by group, best score first (ties in ``dt_order_key`` order), top ``max_det``."""
    if np.all(dt_order_key[1:] >= dt_order_key[:-1]):
        # Already in tie order (file order): a stable two-key sort suffices.
        dt_sorted = score_order(dt_group, dt_score, n_groups, score_rank)
    else:
        dt_sorted = np.lexsort((dt_order_key, -dt_score, dt_group))
    d_groups = dt_group[dt_sorted]
    d_starts = _group_starts(d_groups, n_groups)
    rank = np.arange(len(dt_sorted)) - d_starts[d_groups]
    keep = rank < max_det
    # Rows and ranks are kept for the whole evaluation: int32 where they fit.
    return Ranked(
        rows=narrow_index(dt_sorted[keep]), groups=d_groups[keep], rank=narrow_index(rank[keep])
    )


@dataclass(frozen=True)
class GroundTruthOrder:
    """Ground truths by group in file order.

    Attributes:
        sorted_rows: ``[G]`` rows by group; starts: ``[groups + 1]`` offsets;
        position: ``[G]`` each row's position inside its group.
    """

    sorted_rows: np.ndarray
    starts: np.ndarray
    position: np.ndarray


def order_ground_truths(
    gt_group: np.ndarray, gt_order_key: np.ndarray, n_groups: int
) -> GroundTruthOrder:
    """Ground truths by group, in ``gt_order_key`` order inside one."""
    n_gt = len(gt_group)
    gt_sorted = np.lexsort((gt_order_key, gt_group))
    g_starts = _group_starts(gt_group[gt_sorted], n_groups)
    position = np.empty(n_gt, dtype=np.int64)
    position[gt_sorted] = np.arange(n_gt) - g_starts[gt_group[gt_sorted]]
    return GroundTruthOrder(gt_sorted, g_starts, position)


def match_coco(
    *,
    geometry: Geometry,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
    gt_ignore_flag: np.ndarray,
    gt_zero_id: np.ndarray,
    gt_group: np.ndarray,
    gt_order_key: np.ndarray,
    dt_score: np.ndarray,
    dt_group: np.ndarray,
    dt_order_key: np.ndarray,
    n_groups: int,
    iou_thresholds: np.ndarray,
    area_ranges: np.ndarray,
    max_det: int,
    dt_score_rank: tuple[np.ndarray, int] | None = None,
    keep_lane: int | None = None,
    dt_unmatched_ignored: np.ndarray | None = None,
) -> Matches:
    """Match predictions to ground truths in every group, threshold and area range.

    Args:
        geometry: overlaps of the predictions ``[D]`` and ground truths ``[G]``
            (boxes or masks), and each prediction's area for the area ranges.
        gt_area: ``[G]`` the ``area`` field the area ranges test.
        gt_crowd: ``[G]`` bool, matched by IoF and reusable.
        gt_ignore_flag: ``[G]`` bool, ignored in every area range.
        gt_zero_id: ``[G]`` bool, a match to it is not counted (pycocotools'
            annotation-id-0 defect), all False to do the right thing.
        gt_group, dt_group: ``[G]``, ``[D]`` int64 group (image x category) ids
            in ``[0, n_groups)``.
        gt_order_key: ``[G]`` order of ground truths inside a group (file order).
        dt_score: ``[D]``; dt_order_key: ``[D]`` tie order among equal scores in a group.
        iou_thresholds: ``[T]``.
        area_ranges: ``[A, 2]`` inclusive ``(lo, hi)`` bounds.
        max_det: predictions kept per group, best first.
        dt_score_rank: :func:`~iou_eval.data.ordering.score_rank` of ``dt_score``
            when the caller has it (else computed).
        keep_lane: keep the overlaps of this lane's matches (the operating
            point's), which would otherwise have to be computed again.
        dt_unmatched_ignored: ``[D]`` bool, the prediction is ignored in every
            area range when unmatched, as if its area were outside them
            (lvis-api: its category is not exhaustively labelled on its image).

    Returns:
        :class:`Matches`; ``match_gt`` holds ground-truth row numbers.
    """
    ranked = rank_predictions(dt_group, dt_score, dt_order_key, n_groups, max_det, dt_score_rank)
    gts = order_ground_truths(gt_group, gt_order_key, n_groups)
    # Ignored per area range: crowd/flagged, or the area field outside the bounds.
    gt_ignore = ignored_per_range(gt_ignore_flag, gt_area, area_ranges)
    # pycocotools' effective threshold is min(t, 1 - 1e-10); pairs below the
    # lowest can never match.
    eff_thr = np.minimum(np.asarray(iou_thresholds, dtype=np.float64), 1 - 1e-10)
    floor = float(eff_thr.min()) if len(eff_thr) else 0.0
    d_area = geometry.dt_area[ranked.rows]
    # Unmatched predictions outside an area range are ignored in it: [A, D].
    outside = (d_area[None, :] < area_ranges[:, 0:1]) | (d_area[None, :] > area_ranges[:, 1:2])
    if dt_unmatched_ignored is not None:
        # lvis-api ORs this into the same mask as the area test (dt_ig_mask).
        outside |= dt_unmatched_ignored[ranked.rows][None, :]
    fused = _fused_boxes(geometry, ranked, gts, gt_crowd, gt_ignore, eff_thr, floor, keep_lane)
    if fused is not None:
        lane, dt, gt, kept_iou = fused
    else:
        pd, pg, iou = geometry.pairs(ranked.groups, gts.sorted_rows, gts.starts, ranked.rows, floor)
        lane, dt, gt, kept_iou = greedy_rounds(
            pd, pg, iou, ranked.rank, gts.position, gt_crowd, gt_ignore, eff_thr, keep_lane
        )
        del pd, pg, iou
    m = _records(ranked, len(eff_thr), outside, lane, dt, gt, gt_ignore, gt_zero_id)
    if keep_lane is None:
        return m
    return replace(m, kept_lane=keep_lane, kept_iou=kept_iou)


def _fused_boxes(
    geometry: Geometry,
    ranked: Ranked,
    gts: GroundTruthOrder,
    gt_crowd: np.ndarray,
    gt_ignore: np.ndarray,
    eff_thr: np.ndarray,
    floor: float,
    keep_lane: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`greedy_rounds` of boxes in the compiled core's one pass, or None where it does not apply.

    The core finds each prediction's candidates (the pairs
    ``geometry.pairs`` would list) as it matches it: the same records, in
    the same order, without the pair arrays.  None: not boxes, no compiled
    core, or more than 64 lanes.
    """
    core = coco_core()
    if core is None or len(eff_thr) * len(gt_ignore) > 64:
        return None
    cols = box_columns(geometry)
    if cols is None:
        return None
    c = np.ascontiguousarray
    dt_rows = ranked.rows if cols.dt_rows is None else cols.dt_rows[ranked.rows]
    n_gt = len(gts.position)
    gt_rows = np.arange(n_gt, dtype=np.int64) if cols.gt_rows is None else cols.gt_rows
    lane, dt, gt, kept = core.match_boxes(
        c(ranked.groups), c(dt_rows), c(gts.sorted_rows), c(gts.starts), c(gt_rows),
        c(cols.dt_xyxy, dtype=np.float64), c(cols.dt_area, dtype=np.float64),
        c(cols.gt_xyxy, dtype=np.float64), c(cols.gt_area, dtype=np.float64), c(cols.gt_crowd),
        c(gts.position), c(gt_crowd), c(gt_ignore), c(eff_thr, dtype=np.float64), float(floor),
        -1 if keep_lane is None else keep_lane,
    )  # fmt: skip
    return (
        np.frombuffer(lane, dtype=np.int32),
        np.frombuffer(dt, dtype=np.int32),
        np.frombuffer(gt, dtype=np.int32),
        np.frombuffer(kept, dtype=np.float64),
    )


def greedy_rounds(
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    rank: np.ndarray,
    gt_position: np.ndarray,
    gt_crowd: np.ndarray,
    gt_ignore: np.ndarray,
    eff_thr: np.ndarray,
    keep_lane: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The greedy assignment, one round per rank inside a group, every lane at once.

    The compiled COCO core (:mod:`iou_eval.protocols.core`) gives the same
    records, prediction by prediction instead of rank by rank: records are a
    set, every reader sorts or filters them; this numpy code is the reference.

    Args:
        pd, pg, iou: ``[P]`` candidate pairs (prediction position, ground-truth
            row, overlap), sorted by prediction.
        rank: ``[D']`` each prediction's rank in its group.
        gt_position: ``[G]`` each ground truth's position in its group (file order).
        gt_crowd: ``[G]``; gt_ignore: ``[A, G]``; eff_thr: ``[T]``.

    Returns:
        ``(lane[P'], dt[P'], gt[P'])`` int32, one record per (lane, matched
        prediction), and the overlaps of lane ``keep_lane``'s records in
        their order (``[P_lane]`` float64; empty when None).
    """
    core = coco_core()
    if core is not None and len(eff_thr) * len(gt_ignore) <= 64:
        return _compiled_greedy(
            core, pd, pg, iou, gt_position, gt_crowd, gt_ignore, eff_thr, keep_lane
        )
    return _numpy_rounds(pd, pg, iou, rank, gt_position, gt_crowd, gt_ignore, eff_thr, keep_lane)


def _numpy_rounds(
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    rank: np.ndarray,
    gt_position: np.ndarray,
    gt_crowd: np.ndarray,
    gt_ignore: np.ndarray,
    eff_thr: np.ndarray,
    keep_lane: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`greedy_rounds` in numpy, round by round (the reference)."""
    n_thr, n_area, n_gt = len(eff_thr), len(gt_ignore), len(gt_position)
    rec_lane: list[np.ndarray] = []
    rec_dt: list[np.ndarray] = []
    rec_gt: list[np.ndarray] = []
    rec_iou: list[np.ndarray] = []
    if len(pd):
        # The winner of a prediction is the lexicographic maximum of
        # (regular before ignored, IoU, later in file order): pycocotools keeps
        # the last candidate that is not worse.  One integer key orders all
        # three: IoUs replaced by their dense rank keep exact ties.
        iou_levels, iou_rank = np.unique(iou, return_inverse=True)
        g_span = int(gt_position.max()) + 1
        static_key = iou_rank.astype(np.int64) * g_span + gt_position[pg]
        tier_weight = np.int64(len(iou_levels) * g_span)
        lane_thr = np.tile(eff_thr, n_area)[:, None]
        regular_all = ~gt_ignore[np.repeat(np.arange(n_area), n_thr)]  # [L, G]
        taken = np.zeros((n_area * n_thr, n_gt), dtype=bool)
        pair_rank = rank[pd]
        by_rank = np.argsort(pair_rank, kind="stable")
        r_starts = np.searchsorted(pair_rank[by_rank], np.arange(int(pair_rank.max()) + 2))
        for r in range(len(r_starts) - 1):
            sel = by_rank[r_starts[r] : r_starts[r + 1]]
            if len(sel) == 0:
                continue
            win = _round_winners(
                pd[sel], pg[sel], iou[sel], static_key[sel], taken, gt_crowd, regular_all,
                lane_thr, tier_weight,
            )  # fmt: skip
            lane, col = np.nonzero(win)
            won = pg[sel][col]
            reusable = gt_crowd[won]
            taken[lane[~reusable], won[~reusable]] = True
            # int32 records, narrowed round by round: tens of millions of
            # them at scale, never all held as int64.
            rec_lane.append(lane.astype(np.int32))
            rec_dt.append(pd[sel][col].astype(np.int32))
            rec_gt.append(won.astype(np.int32))
            if keep_lane is not None:
                rec_iou.append(iou[sel][col[lane == keep_lane]])
            del lane, col, won, win

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        parts.clear()
        return out

    kept = np.concatenate(rec_iou) if rec_iou else np.zeros(0, dtype=np.float64)
    return cat(rec_lane), cat(rec_dt), cat(rec_gt), kept


def _compiled_greedy(
    core,
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    gt_position: np.ndarray,
    gt_crowd: np.ndarray,
    gt_ignore: np.ndarray,
    eff_thr: np.ndarray,
    keep_lane: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`greedy_rounds` by the compiled core, prediction by prediction.

    Pairs are sorted by group, then rank: the same matches as round by
    round, found in another order (records are a set).
    """
    c = np.ascontiguousarray
    lane, dt, gt, kept = core.greedy(
        c(pd), c(pg), c(iou, dtype=np.float64), c(gt_position), c(gt_crowd), c(gt_ignore),
        c(eff_thr, dtype=np.float64), -1 if keep_lane is None else keep_lane,
    )  # fmt: skip
    return (
        np.frombuffer(lane, dtype=np.int32),
        np.frombuffer(dt, dtype=np.int32),
        np.frombuffer(gt, dtype=np.int32),
        np.frombuffer(kept, dtype=np.float64),
    )


def _round_winners(
    sd: np.ndarray,
    sg: np.ndarray,
    siou: np.ndarray,
    skey: np.ndarray,
    taken: np.ndarray,
    gt_crowd: np.ndarray,
    regular_all: np.ndarray,
    lane_thr: np.ndarray,
    tier_weight: np.int64,
) -> np.ndarray:
    """``[L, P_r]`` bool: the pair each prediction of one round takes in each lane."""
    eligible = (~taken[:, sg] | gt_crowd[sg]) & (siou[None, :] >= lane_thr)
    # Pairs of one prediction are contiguous (pd is sorted).  A prediction
    # with one candidate wins it wherever it is eligible; only the others
    # need the ordering key.
    first = np.r_[True, sd[1:] != sd[:-1]]
    last = np.r_[sd[1:] != sd[:-1], True]
    alone = first & last
    win = eligible & alone
    if not alone.all():
        shared = np.flatnonzero(~alone)
        ssd = sd[shared]
        e = eligible[:, shared]
        key = np.where(e, skey[shared] + regular_all[:, sg[shared]] * tier_weight, -1)
        seg_start = np.flatnonzero(np.r_[True, ssd[1:] != ssd[:-1]])
        best = np.maximum.reduceat(key, seg_start, axis=1)
        seg_len = np.diff(np.r_[seg_start, len(ssd)])
        win[:, shared] = e & (key == np.repeat(best, seg_len, axis=1))
    return win


def _records(
    ranked: Ranked,
    n_thr: int,
    outside: np.ndarray,
    m_lane: np.ndarray,
    m_dt: np.ndarray,
    m_gt: np.ndarray,
    gt_ignore: np.ndarray,
    gt_zero_id: np.ndarray,
) -> Matches:
    """:class:`Matches` from the raw records, with what each record counts as."""
    m_tp, m_counted = _record_flags(n_thr, outside, m_lane, m_dt, m_gt, gt_ignore, gt_zero_id)
    return Matches(
        dt_rows=ranked.rows,
        dt_rank=ranked.rank,
        n_thresholds=n_thr,
        outside=outside,
        lane=m_lane,
        dt=m_dt,
        gt=m_gt,
        tp=m_tp,
        counted=m_counted,
        gt_ignore=gt_ignore,
    )


def _record_flags(
    n_thr: int,
    outside: np.ndarray,
    m_lane: np.ndarray,
    m_dt: np.ndarray,
    m_gt: np.ndarray,
    gt_ignore: np.ndarray,
    gt_zero_id: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(tp[P], counted[P])`` of the records (the compiled core's one pass where built)."""
    core = coco_core()
    if core is not None and n_thr > 0:
        c = np.ascontiguousarray
        tp, counted = core.record_flags(
            c(m_lane),
            c(m_dt),
            c(m_gt),
            c(gt_ignore),
            c(gt_zero_id),
            c(outside),
            n_thr,
            len(outside),
        )
        return np.frombuffer(tp, dtype=bool), np.frombuffer(counted, dtype=bool)
    m_area = m_lane // max(n_thr, 1)
    on_ignored = gt_ignore[m_area, m_gt]
    # pycocotools records the ground truth's id as the match, so id 0 reads
    # as "no match": not a true positive, and ignored only as an unmatched
    # prediction would be (or when its ground truth is ignored).
    zero = gt_zero_id[m_gt]
    m_tp = ~zero & ~on_ignored
    return m_tp, m_tp | (zero & ~on_ignored & ~outside[m_area, m_dt])
