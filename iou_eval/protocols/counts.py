"""The count-based tables every protocol shares, at its operating point.

A protocol's matches at one IoU threshold (an
:class:`~iou_eval.protocols.coco.OperatingPoint`) become the per-class
counts (``gt``, ``TP``, ``FP``, ``FN``, precision, recall, F1, best F1),
the per-image table and the :class:`PredictionColumns` that plots and
drawings read.  Each protocol's tables builder adds its own metric columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.tables import PointCounts, count_point


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    return _ratio(2 * tp, 2 * tp + fp + fn)


def _mean_valid(a: np.ndarray) -> float:
    v = a[a > -1]
    return float(np.mean(v)) if v.size else float("nan")


def row_means(rows: np.ndarray) -> np.ndarray:
    """``[K]`` :func:`_mean_valid` of each row of ``rows[K, N]``, bit for bit, at once.

    ``np.mean`` of a row's entries above -1 is numpy's pairwise sum of them
    divided by their count; the sum along the last axis of a C-contiguous
    block runs that same sum on each row.  Rows of equal count are gathered
    into one such block (their valid entries in order): usually every row
    of a category with ground truth is whole, and the others are empty.
    """
    rows = np.asarray(rows, dtype=np.float64)
    valid = rows > -1
    count = np.count_nonzero(valid, axis=1)
    out = np.full(len(rows), np.nan)
    # The counts that occur (a bincount: np.unique would import numpy.ma).
    for n in (np.flatnonzero(np.bincount(count, minlength=1)[1:]) + 1).tolist():
        sel = np.flatnonzero(count == n)
        if n == rows.shape[1]:
            block = np.ascontiguousarray(rows[sel])
        else:
            block = rows[sel][valid[sel]].reshape(len(sel), n)
        out[sel] = np.sum(block, axis=1) / n
    return out


# The one row of the per-class table when categories are ignored.
ALL_CLASSES = "all classes"


def _extra_rows(alignment: Alignment, count_extra: bool = True) -> np.ndarray:
    """Rows of the predictions of categories only they have (false positives), if counted."""
    if not count_extra:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(alignment.pred.category_idx >= alignment.n_categories)


def point_counts(
    alignment: Alignment,
    point: OperatingPoint,
    score_thr: float,
    class_agnostic: bool = False,
    count_extra: bool = True,
    columns: PredictionColumns | None = None,
) -> PointCounts:
    """:class:`PointCounts` for scored rows plus the unscored prediction-only ones.

    ``class_agnostic``: matches pair boxes of any categories, so every box
    counts in one class (``C = 1``); counting a prediction's hit in its own
    class and the object it hit in another would give impossible rows.
    ``count_extra``: count prediction-only categories' boxes as false
    positives (LVIS drops them instead).  ``columns``: the point's
    :func:`prediction_columns` (same ``count_extra``), whose gathered
    columns are then read rather than gathered again.
    """
    gt = alignment.gt
    if columns is None:
        columns = prediction_columns(alignment, point, count_extra)
    n = columns.n_scored

    def cls(col: np.ndarray) -> np.ndarray:
        return np.zeros(len(col), dtype=np.int64) if class_agnostic else col

    return count_point(
        n_images=len(gt.images),
        n_classes=1 if class_agnostic else len(gt.categories),
        gt_image=gt.image_idx,
        gt_class=cls(gt.category_idx),
        gt_counts=point.gt_counts,
        dt_image=columns.image_idx[:n],
        dt_class=cls(columns.category_idx[:n]),
        dt_score=columns.score[:n],
        dt_tp=point.tp,
        dt_fp=point.fp,
        dt_iou=point.match_iou,
        extra_image=columns.image_idx[n:],
        extra_class=cls(columns.category_idx[n:]),
        extra_score=columns.score[n:],
        score_thr=score_thr,
        dt_order=None if class_agnostic else point.order,
    )


def class_keys(alignment: Alignment, class_agnostic: bool) -> dict[str, list]:
    """The ``class`` and ``category_id`` columns: one row per category, or one for all."""
    if class_agnostic:
        return {"class": [ALL_CLASSES], "category_id": [None]}
    cats = alignment.gt.categories
    return {"class": list(cats.names), "category_id": list(cats.ids)}


def per_image_table(alignment: Alignment, c: PointCounts, overlap: str = "IoU") -> Columns:
    """One row per image; ``overlap`` names the mean overlap of its matches (``IoU``, ``OKS``)."""
    images = alignment.gt.images
    fn = c.image_gt - c.image_tp
    precision = _ratio(c.image_tp, c.image_tp + c.image_fp)
    recall = _ratio(c.image_tp, c.image_gt)
    return Columns(
        {
            "image_id": list(images.ids),
            "file_name": list(images.file_names),
            "gt": c.image_gt,
            "predictions": c.image_pred,
            "TP": c.image_tp,
            "FP": c.image_fp,
            "FN": fn,
            # On crowd regions or difficult objects: neither true nor false.
            "ignored": c.image_pred - c.image_tp - c.image_fp,
            "precision": precision,
            "recall": recall,
            "F1": _f1(c.image_tp, c.image_fp, fn),
            f"mean_{overlap}": _ratio(c.image_iou_sum, c.image_tp),
        }
    )


# The per-class note of a category only the predictions have, by protocol.
EXTRA_NOTE = "only in predictions: every box is a false positive"
EXTRA_NOTE_LVIS = "only in predictions: not scored (LVIS)"


def class_counts(
    alignment: Alignment, c: PointCounts, class_agnostic: bool = False, extra_note: str = EXTRA_NOTE
) -> dict[str, np.ndarray]:
    """The count-based per-class columns, shared by every protocol."""
    k = alignment.n_categories
    n_all = len(c.class_gt)
    fn = c.class_gt - c.class_tp
    precision = _ratio(c.class_tp, c.class_tp + c.class_fp)
    recall = _ratio(c.class_tp, c.class_gt)
    if class_agnostic:
        note = np.array(["class-agnostic: every category counts as one class"])
    else:
        note = np.where(
            np.arange(n_all) >= k,
            extra_note,
            np.where(c.class_gt == 0, "no ground truth: AP undefined", ""),
        )
    return {
        "gt": c.class_gt,
        "predictions": c.class_pred,
        "TP": c.class_tp,
        "FP": c.class_fp,
        "FN": fn,
        "precision": precision,
        "recall": recall,
        "F1": _f1(c.class_tp, c.class_fp, fn),
        "best_F1": c.class_best_f1,
        "best_F1_score": c.class_best_score,
        "note": note,
    }


@dataclass(frozen=True)
class PredictionColumns:
    """The predictions the per-class and per-image tables count, with their outcome.

    ``[D]`` rows: first the protocol's scored predictions (after maxDets) in
    the order of its :class:`~iou_eval.protocols.coco.OperatingPoint`, then the
    ``D - n_scored`` predictions of categories only the predictions have
    (never matched: false positives).  No score threshold is applied:
    ``score >= score_thr`` selects what the tables count.  A row that is
    neither ``tp`` nor ``fp`` is ignored (on a crowd region or a difficult
    object).

    Attributes:
        iou_thr: the operating point's IoU threshold.
        rows: ``[D]`` int64 rows of the aligned predictions (``Alignment.pred``).
        image_idx, category_idx: ``[D]`` int64 (the prediction's own
            category, class-agnostic runs too).
        score: ``[D]`` float64.
        tp, fp: ``[D]`` bool.
        match_gt: ``[D]`` int64 the matched row of the aligned ground truth, -1: none.
        match_iou: ``[D]`` float64 the overlap with it (IoF on a crowd region), 0: none.
        n_scored: how many leading rows the protocol scored.
    """

    iou_thr: float
    rows: np.ndarray
    image_idx: np.ndarray
    category_idx: np.ndarray
    score: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    n_scored: int

    def __len__(self) -> int:
        return len(self.rows)


def prediction_columns(
    alignment: Alignment, point: OperatingPoint, count_extra: bool = True
) -> PredictionColumns:
    """:class:`PredictionColumns` of an operating point on its alignment.

    The point's own arrays are shared (not copied) when no prediction-only
    category adds rows (``count_extra`` False: none does).
    """
    pred = alignment.pred
    extra = _extra_rows(alignment, count_extra)
    n = len(point.dt_rows)

    def tail(head: np.ndarray, value: Any) -> np.ndarray:
        # Prediction-only categories: unmatched false positives (count_point's ``extra``).
        return head if not len(extra) else np.r_[head, np.full(len(extra), value, head.dtype)]

    rows = np.r_[point.dt_rows, extra].astype(np.int64) if len(extra) else point.dt_rows
    return PredictionColumns(
        iou_thr=point.iou_thr,
        rows=rows,
        image_idx=pred.image_idx[rows],
        category_idx=pred.category_idx[rows],
        score=pred.scores[rows],
        tp=tail(point.tp, False),
        fp=tail(point.fp, True),
        match_gt=tail(point.match_gt, -1),
        match_iou=tail(point.match_iou, 0.0),
        n_scored=n,
    )
