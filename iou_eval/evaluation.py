"""Wire one protocol over an aligned pair of datasets (numpy only).

``run_coco`` computes everything the COCO reports need from one matching
pass: pycocotools' arrays, the summary statistics, and the raw counts the
per-class and per-image tables are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .accumulate import CocoArrays, accumulate_coco, summarize_coco
from .boxes import pair_iou
from .dataset import Dataset
from .matching import Matches, match_coco
from .protocols import Protocol
from .reconcile import Alignment


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
    """

    iou_thr: float
    dt_rows: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    gt_counts: np.ndarray


@dataclass(frozen=True)
class CocoEvaluation:
    """The outcome of the ``coco`` protocol on one alignment."""

    protocol: Protocol
    arrays: CocoArrays
    summary: dict[str, float | None]
    point: OperatingPoint
    accumulate_inputs: dict

    def replicate(self, image_weight: np.ndarray) -> dict[str, float | None]:
        """The summary on a resampled image set (``image_weight[I]`` multiplicities)."""
        arrays = accumulate_coco(**self.accumulate_inputs, image_weight=image_weight)
        p = self.protocol
        out = summarize_coco(
            arrays, p.iou_thresholds, tuple(a.label for a in p.area_ranges), p.max_dets
        )
        # Per-class AP as the per-class table defines it: IoU .50:.95, area all, last maxDets.
        prec = arrays.precision[:, :, :, 0, -1]
        for k in range(prec.shape[2]):
            v = prec[:, :, k]
            v = v[v > -1]
            out[f"AP[{k}]"] = float(np.mean(v)) if v.size else None
        return out


def _groups(gt: Dataset, pred: Dataset, k: int, class_agnostic: bool):
    """Group ids ``[G]``, ``[D]``, in-group order keys, and the number of groups."""
    n_img = len(gt.images)
    if class_agnostic:
        # pycocotools' useCats=0 lists boxes category by category (sorted
        # ids), then in file order: that is their order inside an image.
        gt_order = gt.category_idx * max(len(gt), 1) + np.arange(len(gt))
        dt_order = pred.category_idx * max(len(pred), 1) + np.arange(len(pred))
        return gt.image_idx, pred.image_idx, gt_order, dt_order, n_img
    gt_group = gt.image_idx * k + gt.category_idx
    dt_group = pred.image_idx * k + pred.category_idx
    return gt_group, dt_group, np.arange(len(gt)), np.arange(len(pred)), n_img * k


def run_coco(alignment: Alignment, protocol: Protocol, iou_thr: float = 0.5) -> CocoEvaluation:
    """Evaluate under COCO rules; ``iou_thr`` picks the operating point of the count tables."""
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    # pycocotools drops predictions whose category the ground truth lacks.
    in_vocab = pred.category_idx < k
    scored_rows = np.flatnonzero(in_vocab)
    pred_eval = pred if len(scored_rows) == len(pred) else pred.take(scored_rows)
    gt_group, dt_group, gt_order, dt_order, n_groups = _groups(
        gt, pred_eval, k, protocol.class_agnostic
    )

    thresholds = list(protocol.iou_thresholds)
    if iou_thr not in thresholds:
        thresholds.append(iou_thr)
    ignore_flag = gt.is_crowd | gt.ignore if protocol.honour_ignore else gt.is_crowd.copy()
    zero_id = (gt.ann_id == 0) if protocol.zero_id_quirk else np.zeros(len(gt), dtype=bool)
    area_bounds = np.array([[a.lo, a.hi] for a in protocol.area_ranges], dtype=np.float64)
    max_det = max(protocol.max_dets)

    m: Matches = match_coco(
        gt_xyxy=gt.xyxy,
        gt_bbox_area=gt.bbox_area,
        gt_area=gt.area,
        gt_crowd=gt.is_crowd,
        gt_ignore_flag=ignore_flag,
        gt_zero_id=zero_id,
        gt_group=gt_group,
        gt_order_key=gt_order,
        dt_xyxy=pred_eval.xyxy,
        dt_bbox_area=pred_eval.bbox_area,
        dt_score=pred_eval.scores,
        dt_group=dt_group,
        dt_order_key=dt_order,
        n_groups=n_groups,
        iou_thresholds=np.asarray(thresholds, dtype=np.float64),
        area_ranges=area_bounds,
        max_det=max_det,
    )

    n_t = len(protocol.iou_thresholds)
    if protocol.class_agnostic:
        dt_cat = np.zeros(len(m.dt_rows), dtype=np.int64)
        gt_cat = np.zeros(len(gt), dtype=np.int64)
        n_k = 1
    else:
        dt_cat = pred_eval.category_idx[m.dt_rows]
        gt_cat = gt.category_idx
        n_k = k
    acc_inputs = dict(
        outside=m.outside,
        rec_lane=m.lane,
        rec_dt=m.dt,
        rec_tp=m.tp,
        rec_counted=m.counted,
        lane_thresholds=len(thresholds),
        n_thresholds=n_t,
        dt_score=pred_eval.scores[m.dt_rows],
        dt_category=dt_cat,
        dt_image=pred_eval.image_idx[m.dt_rows],
        dt_rank=m.dt_rank,
        gt_category=gt_cat,
        gt_ignore=m.gt_ignore,
        n_categories=n_k,
        max_dets=protocol.max_dets,
        recall_thresholds=np.asarray(protocol.recall_thresholds, dtype=np.float64),
        gt_image=gt.image_idx,
    )
    arrays = accumulate_coco(**acc_inputs)
    summary = summarize_coco(
        arrays,
        protocol.iou_thresholds,
        tuple(a.label for a in protocol.area_ranges),
        protocol.max_dets,
    )
    t = thresholds.index(iou_thr)
    tp, fp, match_gt = m.at(0, t)
    # The overlaps of the operating point's matches (the records keep none).
    hit = np.flatnonzero(match_gt >= 0)
    rows, g = m.dt_rows[hit], match_gt[hit]
    match_iou = np.zeros(len(match_gt), dtype=np.float64)
    match_iou[hit] = pair_iou(
        pred_eval.xyxy[rows], pred_eval.bbox_area[rows], gt.xyxy[g], gt.bbox_area[g], gt.is_crowd[g]
    )
    point = OperatingPoint(
        iou_thr=iou_thr,
        dt_rows=scored_rows[m.dt_rows],
        tp=tp,
        fp=fp,
        match_gt=match_gt,
        match_iou=match_iou,
        gt_counts=~m.gt_ignore[0],
    )
    return CocoEvaluation(
        protocol=protocol,
        arrays=arrays,
        summary=summary,
        point=point,
        accumulate_inputs=acc_inputs,
    )
