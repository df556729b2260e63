"""Localisation-Recall-Precision (LRP): the optimal LRP error of each class, and its means.

The rules of the authors' official implementation (Oksuz et al., "One Metric
to Measure them All: Localisation Recall Precision (LRP) for Evaluating
Visual Detection Tasks", TPAMI; their ``LRP-Error`` repository's
``cocoeval.py``), on COCO's matching:

* matches as pycocotools makes them at IoU (OKS) 0.5 only, area ``all``,
  at most 100 results per image and class (keypoints: 20); crowd regions
  and ``num_keypoints == 0`` ground truths are ignored, and the annotation
  id 0 defect is kept, as in COCO;
* per class, every kept result in one list, in pycocotools' accumulation
  order (images by id, each image's results by score, then a stable sort of
  the whole list by score), and the LRP error at *every position* of that
  list, so a cut may fall inside a run of equal scores::

      LRP = (sum over TP of (1 - IoU) / (1 - 0.5) + FP + FN) / (TP + FP + FN)

* oLRP is the first minimum over the positions; at it ``oLRP_Loc`` =
  sum(1 - IoU) / TP (not divided by 1 - 0.5), ``oLRP_FP`` = FP / (TP + FP),
  ``oLRP_FN`` = FN / G, and the optimal threshold is that result's score;
* a class with ground truth and no true positive has oLRP 1, FN 1, and no
  Loc, FP or threshold (undefined); a class without counted ground truth
  (none, or crowd only) is left out of every mean;
* moLRP is the mean oLRP over classes with ground truth, moLRP_Loc and
  moLRP_FP the means of their defined values, moLRP_FN over classes with
  ground truth.

Lower is better for every one of these numbers.  The float operations are
the official ones in the same order (a running sum of the matched IoUs from
each class's first result, integer counts), so the numbers are the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols import params
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.coco_run import run_coco
from iou_eval.protocols.counts import (
    class_counts,
    class_keys,
    per_image_table,
    point_counts,
    prediction_columns,
)
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.partition import PartExecutor
from iou_eval.protocols.records import Metric, ProtocolRecord, RunContext, Tables

# The true-positive threshold; LRP's localisation term is normalised by 1 - it.
LRP_IOU = 0.5

SUMMARY_KEYS = ("moLRP", "moLRP_Loc", "moLRP_FP", "moLRP_FN")
CLASS_KEYS = ("oLRP", "oLRP_Loc", "oLRP_FP", "oLRP_FN", "oLRP_threshold")


@dataclass(frozen=True)
class LrpTable:
    """Each class's optimal LRP and its parts.

    Attributes:
        olrp, loc, fp, fn, threshold: ``[K]`` float64; NaN where undefined
            (every one of them for a class without counted ground truth).
        n_gt: ``[K]`` counted ground truths of each class.
    """

    olrp: np.ndarray
    loc: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    threshold: np.ndarray
    n_gt: np.ndarray

    def columns(self) -> dict[str, np.ndarray]:
        """The per-class columns, named as the official summary names them."""
        return dict(
            zip(CLASS_KEYS, (self.olrp, self.loc, self.fp, self.fn, self.threshold), strict=True)
        )


def optimal_lrp(
    point: OperatingPoint,
    dt_category: np.ndarray,
    dt_score: np.ndarray,
    gt_category: np.ndarray,
    n_categories: int,
) -> LrpTable:
    """:class:`LrpTable` of the matches at ``point`` (which must be at IoU 0.5, area all).

    ``dt_category``, ``dt_score``: ``[D]`` of the point's predictions
    (``point.dt_rows``' rows); ``gt_category``: ``[G]`` of the ground truths
    ``point.gt_counts`` flags.  ``point.order`` (by category, then the
    accumulation's score order) is each class's list.
    """
    k = n_categories
    order = point.order if point.order is not None else _score_order(dt_category, dt_score)
    cat = dt_category[order]
    bounds = np.searchsorted(cat, np.arange(k + 1))
    n_gt = np.bincount(gt_category[point.gt_counts], minlength=k)[:k]
    tp = point.tp[order]
    fp = point.fp[order]
    # np.multiply(dtIoU, tps): the overlap of a true positive, 0 elsewhere.
    iou = np.multiply(point.match_iou[order].astype(np.float64), tp)
    score = dt_score[order].astype(np.float64)
    out = np.full((5, k), np.nan)
    for j in np.flatnonzero(n_gt > 0).tolist():
        lo, hi = int(bounds[j]), int(bounds[j + 1])
        out[:, j] = _class_optimum(tp[lo:hi], fp[lo:hi], iou[lo:hi], score[lo:hi], int(n_gt[j]))
    return LrpTable(out[0], out[1], out[2], out[3], out[4], n_gt=n_gt)


def _class_optimum(
    tp: np.ndarray, fp: np.ndarray, iou: np.ndarray, score: np.ndarray, n_gt: int
) -> tuple[float, float, float, float, float]:
    """(oLRP, Loc, FP, FN, threshold) of one class's ranked list ``[D_k]``."""
    tp_num = np.cumsum(tp)
    if not len(tp_num) or tp_num[-1] == 0:
        return 1.0, np.nan, np.nan, 1.0, np.nan
    fp_num = np.cumsum(fp)
    fn_num = n_gt - tp_num
    total_loc = tp_num - np.cumsum(iou)
    lrps = (total_loc / (1 - LRP_IOU) + fp_num + fn_num) / (tp_num + fp_num + fn_num)
    at = int(np.argmin(lrps))
    with np.errstate(invalid="ignore", divide="ignore"):
        # At a position before the first true positive (possible only when
        # every true positive's IoU is exactly 0.5) Loc and FP are 0 / 0.
        loc = np.float64(total_loc[at]) / np.float64(tp_num[at])
        fp_share = np.float64(fp_num[at]) / np.float64(tp_num[at] + fp_num[at])
    return (
        float(lrps[at]),
        float(loc),
        float(fp_share),
        float(np.float64(fn_num[at]) / np.float64(n_gt)),
        float(score[at]),
    )


def _score_order(category: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Positions by category, then descending score, ties in input order."""
    return np.lexsort((-score, category))


def summarize_lrp(table: LrpTable) -> dict[str, float | None]:
    """moLRP and its parts over the classes with counted ground truth (None: no such class).

    As the official summary: the classes' values in class order, undefined
    ones (NaN) left out, then ``np.mean``.
    """
    has_gt = table.n_gt > 0
    out: dict[str, float | None] = {}
    for key, values in zip(SUMMARY_KEYS, (table.olrp, table.loc, table.fp, table.fn), strict=True):
        v = values[has_gt]
        v = v[~np.isnan(v)]
        out[key] = float(np.mean(v)) if v.size else None
    return out


@dataclass(frozen=True)
class LrpEvaluation:
    """The outcome of the ``lrp`` protocol on one alignment.

    Attributes:
        protocol: the parameters (IoU 0.5, area all, one maxDets).
        table: each class's optimal LRP.
        summary: :func:`summarize_lrp` of it.
        point: the matches at IoU 0.5 (the count tables read them).
    """

    protocol: Protocol
    table: LrpTable
    summary: dict[str, float | None]
    point: OperatingPoint

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]:
        """Not defined: LRP's optimum over every position of a resampled list is not computed."""
        raise ValueError("bootstrap replicates of LRP are not computed")


def run_lrp(
    alignment: Alignment,
    protocol: Protocol,
    workers: int = 1,
    executor: PartExecutor | None = None,
) -> LrpEvaluation:
    """LRP under ``protocol`` (:func:`iou_eval.protocols.params.lrp`): COCO's matching at
    IoU 0.5 in category parts, then each class's optimum."""
    ev = run_coco(alignment, protocol, LRP_IOU, workers, executor, keep_accumulation=False)
    point = ev.point
    pred, gt = alignment.pred, alignment.gt
    table = optimal_lrp(
        point,
        pred.category_idx[point.dt_rows],
        pred.scores[point.dt_rows],
        gt.category_idx,
        alignment.n_categories,
    )
    return LrpEvaluation(protocol, table, summarize_lrp(table), point)


def lrp_tables(alignment: Alignment, ev: LrpEvaluation, score_thr: float) -> Tables:
    """Summary (moLRP and its parts), per-class (oLRP, its parts, the optimal threshold and
    the counts at IoU 0.5) and per-image tables."""
    c = point_counts(alignment, ev.point, score_thr)
    n_rows = len(c.class_gt)
    k = alignment.n_categories
    columns = {}
    for key, values in ev.table.columns().items():
        full = np.full(n_rows, np.nan)
        full[:k] = values
        columns[key] = full
    counts = class_counts(alignment, c)
    counts["note"] = np.char.replace(counts["note"].astype(str), "AP undefined", "oLRP undefined")
    classes = Columns({**class_keys(alignment, False), **columns, **counts})
    return Tables(
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(
            alignment, c, "OKS" if ev.protocol.iou_type == "keypoints" else "IoU"
        ),
        predictions=prediction_columns(alignment, ev.point),
    )


def _score(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    ev = run_lrp(alignment, protocol, ctx.workers, ctx.executor)
    return ev, lrp_tables(alignment, ev, ctx.score_thr)


def _describe(p: Protocol) -> str:
    overlap = "OKS" if p.iou_type == "keypoints" else "IoU"
    return (
        f"{p.name} (optimal LRP, Oksuz et al.: COCOeval {p.iou_type} matching at {overlap} "
        f"{LRP_IOU:g}, area all, maxDets {max(p.max_dets)}; lower is better)"
    )


def _metrics(p: Protocol) -> tuple[Metric, ...]:
    per_class = dict(zip(SUMMARY_KEYS, CLASS_KEYS[:4], strict=True))
    return tuple(Metric(k, higher_is_better=False, per_class=per_class[k]) for k in SUMMARY_KEYS)


RECORD = ProtocolRecord(
    name="lrp",
    title="optimal LRP (Oksuz et al., TPAMI): the official LRP-Error implementation's rules",
    factory=params.lrp,
    score=_score,
    describe=_describe,
    metrics=_metrics,
    headline=("moLRP",),
    plot_title=lambda p: f"oLRP per class: IoU {LRP_IOU:g}, area all, maxDets {max(p.max_dets)}",
    coco_matching=True,
    stream_cap=lambda p: (max(p.max_dets), True),
    bootstrap=False,
)
