"""The COCO protocol's driver: overlaps -> matching -> accumulation -> summary.

``run_coco`` computes everything the COCO reports need from one matching
pass: pycocotools' arrays, the summary statistics, and the raw counts the
per-class and per-image tables are built from.  Splitting the work into
parts (worker processes today, a cluster tomorrow) is :mod:`iou_eval.protocols.partition`'s
job; this module says what one part does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from iou_eval.data.dataset import Dataset
from iou_eval.data.ordering import distinct, narrow_index, score_rank
from iou_eval.data.reconcile import Alignment
from iou_eval.geometry.pairs import Geometry, SubsetGeometry
from iou_eval.geometry.seam import IouType, geometry_for
from iou_eval.protocols.accumulate import (
    AccumulationInputs,
    CocoArrays,
    accumulate_coco,
    summarize_coco,
    unfilled_arrays,
)
from iou_eval.protocols.core import coco_core, score_order
from iou_eval.protocols.matching import Matches, ignored_per_range, match_coco
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.resample import CocoResampler, needed_slices


@dataclass(frozen=True)
class OperatingPoint:
    """Matches at one IoU threshold (area ``all``), for the count-based tables.

    Attributes:
        iou_thr: the threshold.
        dt_rows: ``[D]`` prediction rows that were scored (after maxDets).
        tp, fp: ``[D]`` bool; a prediction that is neither was ignored.
        match_gt: ``[D]`` matched ground-truth row or -1.
        match_iou: ``[D]`` overlap of the match (0 when none).
        gt_counts: ``[G]`` bool, ground truths that count (not crowd, not ignored).
        order: ``[D]`` positions by category, then descending score (ties in
            ``dt_rows`` order), when the evaluation has it at hand; else None.
    """

    iou_thr: float
    dt_rows: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    gt_counts: np.ndarray
    order: np.ndarray | None = None


@dataclass(frozen=True)
class CocoSetup:
    """What every part of one COCO evaluation shares (read-only).

    Attributes:
        protocol: the parameters.
        gt: the ground truth ``[G]``; pred: the predictions scored ``[D]``
            (those whose category the ground truth has).
        scored_rows: ``[D]`` their rows in the aligned predictions.
        geometry: the overlaps of ``pred`` and ``gt`` (boxes or masks).
        n_categories: ``K``.
        gt_group, dt_group: ``[G]``, ``[D]`` matching groups (image x
            category, or image when class-agnostic); n_groups: their count.
        gt_order, dt_order: ``[G]``, ``[D]`` tie order inside a group.
        thresholds: the protocol's IoU thresholds, then the operating point's
            when it is not among them; point_thr: the operating point's index
            in them (its matches keep their overlaps).
        ignore_flag, zero_id: ``[G]`` bool.
        area_bounds: ``[A, 2]``; gt_ignore: ``[A, G]`` per area range.
        unmatched_ignored: ``[D]`` bool, a prediction left unmatched is
            ignored in every area range rather than a false positive (LVIS:
            its category is not labelled exhaustively on its image); None: none is.
    """

    protocol: Protocol
    gt: Dataset
    pred: Dataset
    scored_rows: np.ndarray
    geometry: Geometry
    n_categories: int
    gt_group: np.ndarray
    dt_group: np.ndarray
    gt_order: np.ndarray
    dt_order: np.ndarray
    n_groups: int
    thresholds: tuple[float, ...]
    point_thr: int
    ignore_flag: np.ndarray
    zero_id: np.ndarray
    area_bounds: np.ndarray
    gt_ignore: np.ndarray
    unmatched_ignored: np.ndarray | None = None

    @property
    def max_det(self) -> int:
        return max(self.protocol.max_dets)


def shared_arrays(s: CocoSetup) -> CocoArrays:
    """pycocotools' arrays over every category, all -1: the ones parts in threads fill."""
    return unfilled_arrays(
        len(s.protocol.iou_thresholds),
        len(s.protocol.recall_thresholds),
        s.n_categories,
        len(s.area_bounds),
        len(s.protocol.max_dets),
    )


@dataclass(frozen=True)
class CocoEvaluation:
    """The outcome of the ``coco`` protocol on one alignment."""

    protocol: Protocol
    arrays: CocoArrays
    summary: dict[str, float | None]
    point: OperatingPoint
    accumulation: AccumulationInputs | None

    @cached_property
    def resampler(self) -> CocoResampler:
        """The weight-free part of every replicate, computed on first use."""
        if self.accumulation is None:
            raise ValueError("this evaluation did not keep its accumulation inputs")
        labels = tuple(a.label for a in self.protocol.area_ranges)
        return CocoResampler(self.accumulation, labels, self.protocol.max_dets, self.read_slices())

    @property
    def replicates_in_threads(self) -> bool:
        """Whether :meth:`replicate` releases the GIL (the compiled core), so threads share them."""
        return self.accumulation is not None and coco_core() is not None

    def read_slices(self) -> tuple[set[tuple[int, int]], set[tuple[int, int]]] | None:
        """The ``(area, maxDets)`` slices the summary reads (precision, recall); None: COCO's."""
        if self.protocol.iou_type != "keypoints":
            return None
        labels = tuple(a.label for a in self.protocol.area_ranges)
        return needed_slices(labels, self.protocol.max_dets, self.protocol.stats)

    def summarize(self, arrays: CocoArrays) -> dict[str, float | None]:
        """The summary statistics of ``arrays`` under this evaluation's protocol."""
        return summarize(arrays, self.protocol)

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]:
        """The summary and per-class AP on a resampled image set.

        ``image_weight[I]`` is each image's multiplicity.  Per-class AP as the
        per-class table defines it: IoU .50:.95, area all, last maxDets;
        ``[K]`` with NaN where undefined.  The numbers of
        ``accumulate_coco(self.accumulation, image_weight)``, bit for bit, as
        weighted sums over the matches (:mod:`iou_eval.protocols.resample`).  Needs the
        accumulation's inputs (``run_coco(..., keep_accumulation=True)``).
        """
        if self.accumulation is None:
            raise ValueError("this evaluation did not keep its accumulation inputs")
        # Read at once: the arrays are this thread's, filled again by its next replicate.
        arrays = self.resampler(image_weight, reuse=True)
        return self.summarize(arrays), class_ap(arrays)


def class_ap(arrays: CocoArrays) -> np.ndarray:
    """``[K]`` AP over IoU thresholds and recall points (area all, last maxDets); NaN if undefined."""
    prec = arrays.precision[:, :, :, 0, -1]
    n_t, n_r, n_k = prec.shape
    # One contiguous row per class, in pycocotools' memory order (T, R): a
    # row's mean has the bits of np.mean over the class's own selection.
    rows = np.ascontiguousarray(prec.reshape(n_t * n_r, n_k).T)
    valid = rows > -1
    counts = valid.sum(axis=1)
    out = np.full(n_k, np.nan)
    whole = counts == n_t * n_r
    if whole.any():
        # Reduced along contiguous rows, numpy sums each row pairwise as it
        # sums a 1-D array: the same bits as the loop below.
        out[whole] = rows[whole].mean(axis=1)
    for k in np.flatnonzero((counts > 0) & ~whole).tolist():
        out[k] = float(np.mean(rows[k][valid[k]]))
    return out


def summarize(arrays: CocoArrays, protocol: Protocol) -> dict[str, float | None]:
    """The summary statistics (``protocol.stats``) under its thresholds, ranges and maxDets."""
    return summarize_coco(
        arrays,
        protocol.iou_thresholds,
        tuple(a.label for a in protocol.area_ranges),
        protocol.max_dets,
        protocol.stats,
    )


def _groups(gt: Dataset, pred: Dataset, k: int, class_agnostic: bool):
    """Group ids ``[G]``, ``[D]``, in-group order keys, and the number of groups."""
    n_img = len(gt.images)
    if class_agnostic:
        # pycocotools' useCats=0 lists boxes category by category (sorted
        # ids), then in file order: that is their order inside an image.
        gt_order = gt.category_idx * max(len(gt), 1) + np.arange(len(gt))
        dt_order = pred.category_idx * max(len(pred), 1) + np.arange(len(pred))
        return gt.image_idx, pred.image_idx, gt_order, dt_order, n_img
    # int64 while computing (I * K may pass 2**31), int32 kept where it fits.
    gt_group = gt.image_idx.astype(np.int64) * k + gt.category_idx
    dt_group = narrow_index(pred.image_idx.astype(np.int64) * k + pred.category_idx)
    # Tie order is file order: row numbers, int32 where they fit.
    rows = narrow_index(np.arange(max(len(gt), len(pred)), dtype=np.int64))
    return gt_group, dt_group, rows[: len(gt)], rows[: len(pred)], n_img * k


def prepare(
    alignment: Alignment, protocol: Protocol, iou_thr: float, iou_type: str = IouType.BBOX
) -> CocoSetup:
    """The shared inputs of a COCO evaluation."""
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    # pycocotools drops predictions whose category the ground truth lacks.
    scored_rows = narrow_index(np.flatnonzero(pred.category_idx < k))
    if len(scored_rows) != len(pred):
        pred = pred.take(scored_rows)
    gt_group, dt_group, gt_order, dt_order, n_groups = _groups(gt, pred, k, protocol.class_agnostic)
    thresholds = tuple(protocol.iou_thresholds)
    if iou_thr not in thresholds:
        thresholds = (*thresholds, iou_thr)
    geometry = geometry_for(gt, pred, iou_type, **protocol.geometry_params())
    ignore_flag = gt.is_crowd | gt.ignore if protocol.honour_ignore else gt.is_crowd.copy()
    # A geometry may ignore ground truths of its own (keypoints: num_keypoints == 0).
    own = getattr(geometry, "gt_ignored", None)
    if own is not None:
        ignore_flag |= own
    zero_id = (gt.ann_id == 0) if protocol.zero_id_quirk else np.zeros(len(gt), dtype=bool)
    area_bounds = np.array([[a.lo, a.hi] for a in protocol.area_ranges], dtype=np.float64)
    return CocoSetup(
        protocol=protocol,
        gt=gt,
        pred=pred,
        scored_rows=scored_rows,
        geometry=geometry,
        n_categories=k,
        gt_group=gt_group,
        dt_group=dt_group,
        gt_order=gt_order,
        dt_order=dt_order,
        n_groups=n_groups,
        thresholds=thresholds,
        point_thr=thresholds.index(iou_thr),
        ignore_flag=ignore_flag,
        zero_id=zero_id,
        area_bounds=area_bounds,
        # Per area range, for the whole ground truth (parts see only theirs).
        gt_ignore=ignored_per_range(ignore_flag, gt.area, area_bounds),
    )


def accumulation_inputs(
    s: CocoSetup,
    m: Matches,
    order: np.ndarray | None = None,
    rank: tuple[np.ndarray, int] | None = None,
) -> AccumulationInputs:
    """What :func:`accumulate_coco` needs of these matches; ``order`` computed when None.

    ``rank``: the score rank of the predictions ``m.dt_rows``, if known.
    """
    if s.protocol.class_agnostic:
        dt_cat = np.zeros(len(m.dt_rows), dtype=np.int64)
        gt_cat = np.zeros(len(s.gt), dtype=np.int64)
        n_k = 1
    else:
        dt_cat = s.pred.category_idx[m.dt_rows]
        gt_cat = s.gt.category_idx
        n_k = s.n_categories
    dt_score = s.pred.scores[m.dt_rows]
    # Index columns as int32 where they fit: they live as long as the result.
    dt_cat, dt_image = narrow_index(dt_cat), narrow_index(s.pred.image_idx[m.dt_rows])
    return AccumulationInputs(
        outside=m.outside,
        rec_lane=m.lane,
        rec_dt=m.dt,
        rec_tp=m.tp,
        rec_counted=m.counted,
        lane_thresholds=len(s.thresholds),
        n_thresholds=len(s.protocol.iou_thresholds),
        dt_score=dt_score,
        dt_category=dt_cat,
        dt_image=dt_image,
        dt_rank=m.dt_rank,
        gt_category=gt_cat,
        gt_ignore=m.gt_ignore,
        n_categories=n_k,
        max_dets=s.protocol.max_dets,
        recall_thresholds=np.asarray(s.protocol.recall_thresholds, dtype=np.float64),
        gt_image=s.gt.image_idx,
        # Kept for bootstrap replicates, which then need not sort again.
        order=narrow_index(score_order(dt_cat, dt_score, n_k, rank) if order is None else order),
    )


def match_and_accumulate(
    s: CocoSetup, cats: np.ndarray | None, out: CocoArrays | None = None
) -> tuple[Matches, CocoArrays, np.ndarray]:
    """Match and accumulate the categories ``cats`` (all when None): one part's work.

    Matches come back in the rows of ``s.gt`` and ``s.pred``, with the
    accumulation's order of their predictions; arrays hold only ``cats``,
    or, with ``out`` (arrays over every category that parts in threads
    share), ``cats``' slices of ``out`` are filled and ``out`` returned.
    The operating point's matches keep their overlaps (:meth:`Matches.overlaps_at`).
    """
    if cats is None:
        g_rows: slice | np.ndarray = slice(None)
        d_rows: slice | np.ndarray = slice(None)
        geometry = s.geometry
    else:
        g_rows = np.flatnonzero(np.isin(s.gt.category_idx, cats))
        d_rows = np.flatnonzero(np.isin(s.pred.category_idx, cats))
        # Indices into the whole run's coordinates, not a copy of them.
        geometry = SubsetGeometry.of(s.geometry, g_rows, d_rows)
    gt_group, dt_group, n_groups = _dense_groups(s.gt_group[g_rows], s.dt_group[d_rows], s.n_groups)
    # One score sort serves the matcher's order and the accumulation's (the
    # compiled core orders each group's scores itself: no sort of them all).
    score_ranks = score_rank(s.pred.scores[d_rows]) if coco_core() is None else None
    unmatched = s.unmatched_ignored
    m = match_coco(
        geometry=geometry,
        gt_area=s.gt.area[g_rows],
        gt_crowd=s.gt.is_crowd[g_rows],
        gt_ignore_flag=s.ignore_flag[g_rows],
        gt_zero_id=s.zero_id[g_rows],
        gt_group=gt_group,
        gt_order_key=s.gt_order[g_rows],
        dt_score=s.pred.scores[d_rows],
        dt_group=dt_group,
        dt_order_key=s.dt_order[d_rows],
        n_groups=n_groups,
        iou_thresholds=np.asarray(s.thresholds, dtype=np.float64),
        area_ranges=s.area_bounds,
        max_det=s.max_det,
        dt_score_rank=score_ranks,
        keep_lane=s.point_thr,  # area range 0 ("all"): lane = threshold
        dt_unmatched_ignored=None if unmatched is None else unmatched[d_rows],
    )
    kept_rank = None if score_ranks is None else (score_ranks[0][m.dt_rows], score_ranks[1])
    if isinstance(g_rows, np.ndarray) and isinstance(d_rows, np.ndarray):
        m = m.in_rows(g_rows, d_rows, s.gt_ignore)
    inputs = accumulation_inputs(s, m, rank=kept_rank)
    # Only this part's categories travel back (or land in the shared arrays).
    arrays = accumulate_coco(inputs, categories=cats, out=out)
    return m, arrays, inputs.order


def _dense_groups(
    gt_group: np.ndarray, dt_group: np.ndarray, n_total: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """The groups that occur (``[G']``, ``[D']``) numbered 0.. in the same order, and their count.

    Groups never meet, and every sort by group keeps its order: the matches
    are the same, while the matcher's per-group offsets scale with the
    groups that hold boxes, not with images x categories (7 million for
    20,000 images of 365 categories), nor, for a part, with the whole.
    """
    core = coco_core()
    if core is not None:  # one bit per group of the n_total, and their counts
        c = np.ascontiguousarray
        gt_code, dt_code, n_used = core.dense_groups(c(gt_group), c(dt_group), n_total)
        return np.frombuffer(gt_code, np.int64), np.frombuffer(dt_code, np.int64), n_used
    used = distinct(np.concatenate([gt_group, dt_group]))  # np.unique would import numpy.ma
    return np.searchsorted(used, gt_group), np.searchsorted(used, dt_group), len(used)


def operating_point(s: CocoSetup, m: Matches, order: np.ndarray, iou_thr: float) -> OperatingPoint:
    """The matches at ``iou_thr`` (area all, last maxDets) with their overlaps."""
    thr = s.thresholds.index(iou_thr)
    tp, fp, match_gt = m.at(0, thr)
    match_iou = m.overlaps_at(0, thr)
    if match_iou is None:  # the matcher kept none: computed again
        hit = np.flatnonzero(match_gt >= 0)
        match_iou = np.zeros(len(match_gt), dtype=np.float64)
        match_iou[hit] = s.geometry.pair(m.dt_rows[hit], match_gt[hit])
    return OperatingPoint(
        iou_thr=iou_thr,
        dt_rows=narrow_index(s.scored_rows[m.dt_rows]),
        tp=tp,
        fp=fp,
        match_gt=narrow_index(match_gt),
        match_iou=match_iou,
        gt_counts=~m.gt_ignore[0],
        # The count tables' classes are the categories unless class-agnostic.
        order=None if s.protocol.class_agnostic else order,
    )
