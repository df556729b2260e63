"""The analyses a run asked for, from its alignment and its protocols' results.

Each reads what is already there and never rematches where a matcher did
the work: calibration takes the COCO protocol's true-positive flags at
``--iou-thr``; slices re-accumulate the protocols' matches with weight 1 on
their images; TIDE and the confusion matrix have matching rules of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from iou_eval.analysis.calibration import (
    CalibrationResult,
    calibration,
    coco_true_positives_from_datasets,
)
from iou_eval.analysis.confusion import confusion_matrix_from_datasets
from iou_eval.analysis.records import Analysis, SliceSummary
from iou_eval.analysis.tide import tide_from_datasets


def run_analyses(alignment, results: Sequence, options) -> tuple[Analysis, list[str]]:
    """The :class:`Analysis` that ``options.analysis`` asks for, and warnings.

    Args:
        alignment: the (selected) :class:`~iou_eval.data.reconcile.Alignment` the
            protocols scored.
        results: their :class:`~iou_eval.results.ProtocolResult`, in order.
        options: the run's :class:`~iou_eval.options.EvalOptions`.
    """
    a = options.analysis
    gt, pred = alignment.gt, alignment.pred
    iou_thr = options.point.iou_thr
    warnings: list[str] = []
    out = Analysis()
    if a.tide:
        # tidecv visits images in the ground-truth file's order.
        out = replace(out, tide=tide_from_datasets(gt, pred, image_order=alignment.image_rank))
    if a.confusion:
        confusion = confusion_matrix_from_datasets(
            gt, pred, iou_threshold=iou_thr, score_threshold=a.confusion_score_thr
        )
        out = replace(out, confusion=confusion)
    if a.calibration:
        cal, source = calibrate(
            alignment, results, iou_thr, options.point.score_thr, options.protocol.zero_id_quirk
        )
        out = replace(out, calibration=cal, calibration_source=source)
    if a.slices is not None:
        slices, notes = slice_summaries(alignment, results, a.slices)
        out = replace(out, slices=slices)
        warnings += notes
    asked = [f for f, on in (("--tide", a.tide), ("--confusion", a.confusion),
                             ("--calibration", a.calibration)) if on]  # fmt: skip
    if asked and any(r.protocol.iou_type == "keypoints" for r in results):
        warnings.append(
            f"{', '.join(asked)}: analyse the boxes by IoU (their own matching rules), not the "
            "keypoints by OKS"
        )
    return out, warnings


def _matches_at(results: Sequence, iou_thr: float):
    """The first COCO evaluation whose operating point is COCO matching at ``iou_thr``,
    maxDets 100, per class; None if the run has none."""
    for r in results:
        p = r.protocol
        ev = r.evaluation
        if not r.record.coco_matching or p.class_agnostic or max(p.max_dets, default=0) != 100:
            continue
        if ev is not None and ev.point.iou_thr == iou_thr:
            return r
    return None


def calibrate(
    alignment, results: Sequence, iou_thr: float, score_thr: float, zero_id_quirk: bool
) -> tuple[CalibrationResult, str]:
    """Calibration of the predictions of the ground truth's categories, and whose matches it read.

    The true positives are the COCO protocol's matches at ``iou_thr`` (area
    all, maxDets 100): its operating point, when the run has one; else COCO
    matching of the boxes here.  Predictions matched to a crowd region, and
    those scored below ``score_thr``, are left out.
    """
    pred = alignment.pred
    k = alignment.n_categories
    r = _matches_at(results, iou_thr)
    if r is not None:
        point = r.evaluation.point
        # In file order, as the predictions came: the sums then run in the
        # order they run in for the same flags computed apart.
        o = np.argsort(point.dt_rows, kind="stable")
        rows, is_tp, counted = point.dt_rows[o], point.tp[o], (point.tp | point.fp)[o]
        source = f"{r.protocol.label} matches at IoU {iou_thr:g}"
    else:
        is_tp, counted = coco_true_positives_from_datasets(
            alignment.gt, pred, iou_threshold=iou_thr, gt_categories=k, zero_id_quirk=zero_id_quirk
        )
        rows = np.arange(len(pred))
        source = f"COCO box matching at IoU {iou_thr:g}, maxDets 100"
    score = pred.scores[rows]
    counted = counted & (score >= score_thr)
    result = calibration(
        score,
        pred.category_idx[rows],
        is_tp,
        counted,
        alignment.gt.categories.names[:k],
        iou_threshold=iou_thr,
    )
    return result, source


def slice_summaries(
    alignment, results: Sequence, slices
) -> tuple[dict[str, tuple[SliceSummary, ...]], list[str]]:
    """Every protocol's summary on each slice's images alone, and warnings.

    A slice's summary is the protocol's matches re-accumulated with weight 1
    on its images and 0 elsewhere: pycocotools' numbers with
    ``params.imgIds`` set to them (matches never cross images).
    """
    from iou_eval.data.subsets import slice_weights

    weights, warnings = slice_weights(alignment, slices)
    out: dict[str, tuple[SliceSummary, ...]] = {}
    for r in results:
        rows = []
        for name, w in zip(slices.names, weights, strict=True):
            summary, _ = r.evaluation.replicate(w)
            rows.append(SliceSummary(name, int(w.sum()), dict(summary)))
        out[r.protocol.label] = tuple(rows)
    return out, warnings
