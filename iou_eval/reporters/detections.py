"""Each image's boxes with their outcome at the operating point, for drawings.

:func:`image_detections` reads an :class:`~iou_eval.results.EvaluationResult`
(its aligned datasets and its :class:`~iou_eval.results.PredictionColumns`)
and returns, per image, the ground truths and the predictions the per-image
table counts, with what happened to each: the pair's IoU, false positives,
misses, crowd regions.  It never matches again: the outcome is the one the
numbers come from.  numpy only (masks stay compressed RLE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.errors import UsageError
from iou_eval.geometry.pairs import candidate_pairs

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.data.reconcile import Alignment
    from iou_eval.results import EvaluationResult, PredictionColumns, ProtocolResult


@dataclass(frozen=True)
class ImageDetections:
    """One image's ground truths ``[G]`` and counted predictions ``[D]`` at the operating point.

    Attributes:
        index: the image's position in the ground truth (the per-image table's row).
        image_id, file_name: as the ground truth names the image (file_name may be None).
        width, height: pixels (NaN: unknown).
        gt_xyxy: ``[G, 4]`` float64 pixels; gt_labels: ``[G]`` class names.
        gt_crowd: ``[G]`` bool crowd regions; gt_counted: ``[G]`` bool (neither
            crowd nor ignored: the ones a miss counts for).
        gt_matched: ``[G]`` bool matched by a true positive.
        pred_xyxy: ``[D, 4]``; pred_labels: ``[D]``; pred_scores: ``[D]``.
        pred_iou: ``[D]`` the overlap with the matched ground truth; for a
            false positive, its largest IoU with a ground truth it could
            have matched (same class unless class-agnostic, not crowd), 0
            when none.
        pred_is_fp, pred_ignored: ``[D]`` bool (ignored: on a crowd region or
            a difficult object, neither true nor false).
        pred_gt: ``[D]`` the matched ground truth's position in this image's
            ``gt_*`` arrays (true positives and ignored ones), -1: none.
        gt_masks, pred_masks: the rows' :class:`~iou_eval.geometry.masks.MaskColumn`
            when masks were scored, else None.
        gt_corners, pred_corners: ``[G, 4, 2]``, ``[D, 4, 2]`` the oriented boxes'
            corners when the result scored oriented boxes, else None.
        gt_rows, pred_rows: ``[G]``, ``[D]`` rows of the aligned datasets.
    """

    index: int
    image_id: Any
    file_name: str | None
    width: float
    height: float
    gt_xyxy: np.ndarray
    gt_labels: tuple[str, ...]
    gt_crowd: np.ndarray
    gt_counted: np.ndarray
    gt_matched: np.ndarray
    pred_xyxy: np.ndarray
    pred_labels: tuple[str, ...]
    pred_scores: np.ndarray
    pred_iou: np.ndarray
    pred_is_fp: np.ndarray
    pred_ignored: np.ndarray
    pred_gt: np.ndarray
    gt_rows: np.ndarray
    pred_rows: np.ndarray
    gt_masks: Any = None
    pred_masks: Any = None
    gt_corners: np.ndarray | None = None
    pred_corners: np.ndarray | None = None

    @property
    def gt_missed(self) -> np.ndarray:
        """``[G]`` bool: ground truths that count and no prediction found (false negatives)."""
        return self.gt_counted & ~self.gt_matched


def _by_image(image_idx: np.ndarray, n_images: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by image: ``(order[N], starts[I + 1])``."""
    order = np.argsort(image_idx, kind="stable")
    return order, np.searchsorted(image_idx[order], np.arange(n_images + 1))


def fp_overlaps(alignment: Alignment, r: ProtocolResult, fp: np.ndarray) -> np.ndarray:
    """``[F]`` the largest overlap of the false positives ``fp`` (positions in the
    result's :class:`PredictionColumns`) with a ground truth they could have matched.

    Candidates share the image and (unless class-agnostic) the category, and
    are not crowd regions; the overlap is the protocol's (boxes, +1-pixel
    boxes for the VOC devkit, or masks).
    """
    cols: PredictionColumns = r.predictions  # type: ignore[assignment]
    gt, pred = alignment.gt, alignment.pred
    k = max(len(gt.categories), 1)
    cand = np.flatnonzero(~gt.is_crowd)
    agnostic = r.protocol.class_agnostic
    g_group = gt.image_idx[cand] * (1 if agnostic else k) + (
        0 if agnostic else gt.category_idx[cand]
    )
    d_rows = cols.rows[fp]
    d_group = pred.image_idx[d_rows] * (1 if agnostic else k) + (
        0 if agnostic else pred.category_idx[d_rows]
    )
    n_groups = len(gt.images) * (1 if agnostic else k)
    g_order = np.argsort(g_group, kind="stable")
    g_starts = np.searchsorted(g_group[g_order], np.arange(n_groups + 1))
    pd, pg = candidate_pairs(d_group, g_starts)
    g_rows = cand[g_order[pg]]
    best = np.zeros(len(d_rows), dtype=np.float64)
    if len(pd):
        np.maximum.at(best, pd, _pair_overlaps(alignment, r, d_rows[pd], g_rows))
    return best


def _pair_overlaps(
    alignment: Alignment, r: ProtocolResult, d_rows: np.ndarray, g_rows: np.ndarray
) -> np.ndarray:
    from iou_eval.geometry.boxes import PixelConvention, pair_iou_plus_one
    from iou_eval.geometry.seam import geometry_for

    gt, pred = alignment.gt, alignment.pred
    if r.record.pixel_convention and r.protocol.pixel_convention is PixelConvention.PLUS_ONE:
        return pair_iou_plus_one(pred.xyxy[d_rows], gt.xyxy[g_rows])
    geometry = geometry_for(gt, pred, r.protocol.iou_type, **r.protocol.geometry_params())
    return geometry.pair(d_rows, g_rows)


def _wanted_images(images: Sequence[int] | np.ndarray | None, n_img: int) -> np.ndarray:
    """``[n]`` positions of the images asked for (default: all), checked against ``n_img``."""
    wanted = np.arange(n_img) if images is None else np.asarray(images, dtype=np.int64)
    if len(wanted) and (wanted.min() < 0 or wanted.max() >= n_img):
        raise UsageError(f"image positions must lie in 0..{n_img - 1}")
    return wanted


def image_detections(
    result: EvaluationResult,
    images: Sequence[int] | np.ndarray | None = None,
    *,
    score_thr: float | None = None,
    protocol: int = 0,
) -> list[ImageDetections]:
    """Per image, its ground truths and counted predictions with their outcome.

    Args:
        result: an evaluation that kept its alignment (:func:`iou_eval.evaluate` does).
        images: positions of the images in the ground truth, i.e. rows of
            the per-image table (default: all), in the order wanted.
        score_thr: predictions below it are left out (default: the run's
            ``--score-thr``, as the per-image table counts them).
        protocol: which of the run's protocols decides the outcome (0: the first).

    Returns:
        One :class:`ImageDetections` per image asked for, in that order.
    """
    alignment = result.alignment
    if alignment is None:
        raise UsageError("this result keeps no boxes to draw (evaluate with iou_eval.evaluate)")
    r = result.results[protocol]
    cols = r.predictions
    if cols is None:
        raise UsageError(f"the {r.protocol.name} result holds no per-prediction outcome")
    gt, pred, n_img = alignment.gt, alignment.pred, len(alignment.gt.images)
    wanted = _wanted_images(images, n_img)
    thr = float(result.settings.get("score_thr", 0.0) if score_thr is None else score_thr)
    keep = np.flatnonzero((cols.score >= thr) & np.isin(cols.image_idx, wanted))
    gt_matched = np.zeros(len(gt), dtype=bool)
    gt_matched[cols.match_gt[keep[cols.tp[keep]]]] = True
    iou = cols.match_iou[keep].copy()
    is_fp = cols.fp[keep]
    iou[is_fp] = fp_overlaps(alignment, r, keep[is_fp])
    ignored = ~cols.tp[keep] & ~is_fp
    gt_counted = _gt_counted(r, gt)
    names = tuple(str(n) for n in gt.categories.names)
    g_order, g_starts = _by_image(gt.image_idx, n_img)
    d_order, d_starts = _by_image(cols.image_idx[keep], n_img)
    # Each ground truth's position among its image's: where a match points in gt_*.
    in_image = np.empty(len(gt), dtype=np.int64)
    in_image[g_order] = np.arange(len(gt)) - np.repeat(g_starts[:-1], np.diff(g_starts))
    match = cols.match_gt[keep]
    pred_gt = np.where(match >= 0, in_image[np.maximum(match, 0)], -1) if len(gt) else match
    out = []
    for i in wanted.tolist():
        g = g_order[g_starts[i] : g_starts[i + 1]]
        j = d_order[d_starts[i] : d_starts[i + 1]]
        d = cols.rows[keep[j]]
        out.append(
            ImageDetections(
                index=i,
                image_id=gt.images.ids[i],
                file_name=gt.images.file_names[i],
                width=float(gt.images.width[i]),
                height=float(gt.images.height[i]),
                gt_xyxy=gt.xyxy[g],
                gt_labels=tuple(names[c] for c in gt.category_idx[g].tolist()),
                gt_crowd=gt.is_crowd[g],
                gt_counted=gt_counted[g],
                gt_matched=gt_matched[g],
                pred_xyxy=pred.xyxy[d],
                pred_labels=tuple(names[c] for c in pred.category_idx[d].tolist()),
                pred_scores=cols.score[keep[j]],
                pred_iou=iou[j],
                pred_is_fp=is_fp[j],
                pred_ignored=ignored[j],
                pred_gt=pred_gt[j],
                gt_rows=g,
                pred_rows=d,
                gt_masks=_masks(gt, g),
                pred_masks=_masks(pred, d),
                gt_corners=_corners(r, gt, g),
                pred_corners=_corners(r, pred, d),
            )
        )
    return out


def _gt_counted(r: ProtocolResult, gt: Any) -> np.ndarray:
    """``[G]`` ground truths a miss counts for: the operating point's own flags."""
    point = getattr(r.evaluation, "point", None)
    if point is not None and len(point.gt_counts) == len(gt):
        return np.asarray(point.gt_counts, dtype=bool)
    return ~(gt.is_crowd | gt.ignore)


def _corners(r: ProtocolResult, ds: Any, rows: np.ndarray) -> np.ndarray | None:
    """``[N, 4, 2]`` the corners of ``rows`` when ``r`` scored oriented boxes, else None."""
    if r.protocol.iou_type != "obb":
        return None
    from iou_eval.data.oriented import corners_of_xyxy

    if ds.oriented is not None:
        return ds.oriented.corners[rows]
    return corners_of_xyxy(ds.xyxy[rows])


def _masks(ds: Any, rows: np.ndarray) -> Any:
    # Encoded masks (a MaskColumn) only; loaders' pending segmentations are not drawn.
    return ds.masks.take(rows) if hasattr(ds.masks, "rle") else None
