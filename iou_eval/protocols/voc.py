"""Pascal VOC protocols, as the devkit's ``voc_eval`` computes them (pure numpy).

Per class, predictions in descending score (stable: file order on ties).
Each takes the ground truth of its image and class it overlaps most (the
first of equal maxima), whether or not that one is already taken.  A hit
needs IoU strictly above the threshold; a hit on a difficult ground truth is
ignored; a second hit on a taken ground truth is a false positive.  AP is
VOC2007's 11-point interpolation or VOC2010's area under the precision
envelope, summed in the devkit's order so the last bits agree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.reconcile import Alignment
from iou_eval.geometry.boxes import PixelConvention, pair_iou, pair_iou_plus_one
from iou_eval.geometry.pairs import candidate_pairs
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.params import Protocol

_FLOAT_EPS = np.finfo(np.float64).eps


@dataclass(frozen=True)
class VocEvaluation:
    """The outcome of ``voc07``/``voc12`` on one alignment.

    Attributes:
        ap: ``[K]`` AP per ground-truth category, NaN without (non-difficult) ground truth.
        summary: ``{"mAP": mean of the defined APs}``.
        point: the matches at the protocol's threshold.
    """

    protocol: Protocol
    ap: np.ndarray
    summary: dict[str, float | None]
    point: OperatingPoint
    curve_inputs: dict
    class_order: tuple[int, ...] = ()

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]:
        """The summary and ``[K]`` per-class AP (NaN: undefined) on a resampled image set.

        ``image_weight[I]``: each image's multiplicity.
        """
        ap = class_aps(**self.curve_inputs, image_weight=image_weight)
        return {"mAP": mean_ap(ap, self.class_order)}, ap


def mean_ap(ap: np.ndarray, class_order: tuple[int, ...] = ()) -> float | None:
    """mAP: the mean of the defined entries of ``ap[K]``, summed in the class list's order.

    The devkit appends each class's AP to a list as it walks its class
    list and takes ``np.mean`` of that list; float addition is not
    associative, so the order decides the last bits.  ``class_order[K]``:
    positions in ``ap`` in that order (empty: ``ap``'s own order).
    """
    if len(class_order):
        ap = ap[np.asarray(class_order, dtype=np.int64)]
    defined = ap[~np.isnan(ap)]
    return float(np.mean(defined)) if defined.size else None


def class_aps(
    *,
    tp: np.ndarray,
    fp: np.ndarray,
    dt_image: np.ndarray,
    starts: np.ndarray,
    gt_class: np.ndarray,
    gt_image: np.ndarray,
    gt_counts: np.ndarray,
    eleven_point: bool,
    image_weight: np.ndarray | None = None,
) -> np.ndarray:
    """AP per class ``[K]`` from outcomes in class-then-score order.

    Args:
        tp, fp, dt_image: ``[D]`` in that order; starts: ``[K + 1]`` class offsets.
        gt_class, gt_image: ``[G]``; gt_counts: ``[G]`` bool (not difficult).
        image_weight: ``[I]`` multiplicities for bootstrap replicates, or None.
    """
    n_k = len(starts) - 1
    w_gt = None if image_weight is None else image_weight[gt_image[gt_counts]]
    npos = np.round(np.bincount(gt_class[gt_counts], weights=w_gt, minlength=n_k)[:n_k])
    ap = np.full(n_k, np.nan)
    for c in range(n_k):
        if npos[c] == 0:
            continue
        sl = slice(starts[c], starts[c + 1])
        t = tp[sl].astype(np.float64)
        f = fp[sl].astype(np.float64)
        if image_weight is not None:
            w = image_weight[dt_image[sl]]
            t, f = (t * w)[w > 0], (f * w)[w > 0]
        tp_c = np.cumsum(t)
        fp_c = np.cumsum(f)
        rec = tp_c / float(npos[c])
        prec = tp_c / np.maximum(tp_c + fp_c, _FLOAT_EPS)
        ap[c] = voc_ap(rec, prec, eleven_point)
    return ap


def voc_ap(rec: np.ndarray, prec: np.ndarray, eleven_point: bool) -> float:
    """AP from a precision/recall curve ``[D]`` exactly as the devkit's ``voc_ap``."""
    if eleven_point:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            above = rec >= t
            p = float(np.max(prec[above])) if above.any() else 0.0
            ap = ap + p / 11.0
        return float(ap)
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    i = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def match_voc(
    *,
    gt_xyxy: np.ndarray,
    gt_difficult: np.ndarray,
    gt_group: np.ndarray,
    dt_xyxy: np.ndarray,
    dt_score: np.ndarray,
    dt_group: np.ndarray,
    dt_class: np.ndarray,
    n_groups: int,
    iou_thr: float,
    plus_one: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Devkit matching of every class at once.

    Args:
        gt_xyxy: ``[G, 4]``; gt_difficult: ``[G]`` bool; gt_group: ``[G]`` (image x class).
        dt_xyxy: ``[D, 4]``; dt_score, dt_group, dt_class: ``[D]``.
        iou_thr: a hit needs overlap strictly greater.
        plus_one: +1-pixel extents (the devkit) or continuous ones.

    Returns:
        ``order[D]`` (predictions by class, then score descending, ties in
        input order) and, aligned with it, ``tp[D]``, ``fp[D]`` bool,
        ``best_gt[D]`` (-1 without any ground truth), ``best_iou[D]``,
        ``hit[D]`` bool.
    """
    n_dt = len(dt_score)
    order = np.lexsort((np.arange(n_dt), -dt_score, dt_class))
    groups = dt_group[order]
    gt_sorted = np.argsort(gt_group, kind="stable")
    g_starts = np.searchsorted(gt_group[gt_sorted], np.arange(n_groups + 1))
    pd, pg = candidate_pairs(groups, g_starts)
    pg = gt_sorted[pg]
    dxy = np.take(dt_xyxy, order[pd], axis=0)
    if plus_one:
        ov = pair_iou_plus_one(dxy, np.take(gt_xyxy, pg, axis=0))
    else:
        d_area = (dxy[:, 2] - dxy[:, 0]) * (dxy[:, 3] - dxy[:, 1])
        gxy = np.take(gt_xyxy, pg, axis=0)
        g_area = (gxy[:, 2] - gxy[:, 0]) * (gxy[:, 3] - gxy[:, 1])
        ov = pair_iou(dxy, d_area, gxy, g_area, np.zeros(len(pg), dtype=bool))

    return (order, *devkit_claims(pd, pg, ov, n_dt, gt_difficult, iou_thr))


def devkit_claims(
    pd: np.ndarray,
    pg: np.ndarray,
    ov: np.ndarray,
    n_dt: int,
    gt_difficult: np.ndarray,
    iou_thr: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The devkits' claims: each prediction takes the ground truth it overlaps most.

    Args:
        pd: ``[P]`` positions of predictions in their ranked order (ascending),
            gt rows ``pg[P]`` in the devkit's order within each prediction;
            ov: ``[P]`` the overlaps.
        n_dt: predictions; gt_difficult: ``[G]`` bool.
        iou_thr: a hit needs overlap strictly greater.

    Returns:
        ``tp[D]``, ``fp[D]`` bool, ``best_gt[D]`` (-1 without any pair),
        ``best_iou[D]`` (0 without any pair), ``hit[D]`` bool; the first of
        equal maxima is the one taken, and the first claim (in rank order) on
        a ground truth is its true positive, whether or not it was taken.
    """
    best_gt = np.full(n_dt, -1, dtype=np.int64)
    best_iou = np.full(n_dt, -np.inf)
    if len(pd):
        seg = np.flatnonzero(np.r_[True, pd[1:] != pd[:-1]])
        owner = pd[seg]
        mx = np.maximum.reduceat(ov, seg)
        # np.argmax picks the first maximum: the earliest pair of each run.
        is_max = np.flatnonzero(ov == np.repeat(mx, np.diff(np.r_[seg, len(pd)])))
        _, f = np.unique(pd[is_max], return_index=True)
        first = is_max[f]
        best_gt[pd[first]] = pg[first]
        best_iou[owner] = mx
    hit = best_iou > iou_thr
    on_difficult = hit & gt_difficult[np.maximum(best_gt, 0)] if len(gt_difficult) else hit & False
    claim = hit & ~on_difficult
    # The first claim (in this order) on a ground truth is the true positive.
    claimed = np.flatnonzero(claim)
    _, first_claim = np.unique(best_gt[claimed], return_index=True)
    tp = np.zeros(n_dt, dtype=bool)
    tp[claimed[first_claim]] = True
    fp = ~tp & ~on_difficult
    return tp, fp, best_gt, np.where(np.isfinite(best_iou), best_iou, 0.0), hit


def run_voc(
    alignment: Alignment, protocol: Protocol, iou_thr: float | None = None
) -> VocEvaluation:
    """Evaluate under ``voc07`` or ``voc12``; ``iou_thr`` overrides the protocol's 0.5."""
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    thr = protocol.iou_thresholds[0] if iou_thr is None else float(iou_thr)
    # The parameters reported (and compared with a baseline's) are those used.
    protocol = replace(protocol, iou_thresholds=(thr,))
    scored = np.flatnonzero(pred.category_idx < k)
    dt_class = pred.category_idx[scored]
    n_img = len(gt.images)
    if protocol.class_agnostic:
        gt_group = gt.image_idx
        dt_group = pred.image_idx[scored]
        dt_class_key = np.zeros(len(scored), dtype=np.int64)
        gt_class_key = np.zeros(len(gt), dtype=np.int64)
        n_groups, n_k = n_img, 1
    else:
        # int64: image and category indices may be int32, I * K not.
        gt_group = gt.image_idx.astype(np.int64) * k + gt.category_idx
        dt_group = pred.image_idx[scored].astype(np.int64) * k + dt_class
        dt_class_key = dt_class
        gt_class_key = gt.category_idx
        n_groups, n_k = n_img * k, k
    # VOC has no crowd regions: a crowd box is treated like a difficult one.
    difficult = gt.ignore | gt.is_crowd
    order, tp, fp, best_gt, best_iou, _ = match_voc(
        gt_xyxy=gt.xyxy,
        gt_difficult=difficult,
        gt_group=gt_group,
        dt_xyxy=np.take(pred.xyxy, scored, axis=0),
        dt_score=pred.scores[scored],
        dt_group=dt_group,
        dt_class=dt_class_key,
        n_groups=n_groups,
        iou_thr=thr,
        plus_one=protocol.pixel_convention is PixelConvention.PLUS_ONE,
    )
    cls_sorted = dt_class_key[order]
    curve_inputs = dict(
        tp=tp,
        fp=fp,
        dt_image=pred.image_idx[scored][order],
        starts=np.searchsorted(cls_sorted, np.arange(n_k + 1)),
        gt_class=gt_class_key,
        gt_image=gt.image_idx,
        gt_counts=~difficult,
        eleven_point=protocol.name == "voc07",
    )
    ap = class_aps(**curve_inputs)
    # Class-agnostic, the one AP needs no order.
    class_order = () if protocol.class_agnostic else alignment.class_order
    summary: dict[str, float | None] = {"mAP": mean_ap(ap, class_order)}
    point = OperatingPoint(
        iou_thr=thr,
        dt_rows=scored[order],
        tp=tp,
        fp=fp,
        match_gt=np.where(tp, best_gt, -1),
        match_iou=np.where(tp, best_iou, 0.0),
        gt_counts=~difficult,
    )
    return VocEvaluation(
        protocol=protocol,
        ap=ap,
        summary=summary,
        point=point,
        curve_inputs=curve_inputs,
        class_order=class_order,
    )
