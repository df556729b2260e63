"""The confusion matrix of a detector: which class each ground truth was detected as.

Rules (class-agnostic matching, as Ultralytics' detection confusion matrix
reads, with COCO's crowd regions):

* per image, predictions with ``score >= score_threshold`` in descending
  score (equal scores in file order) each take the still-unmatched non-crowd
  ground truth of highest IoU >= ``iou_threshold``, whatever its class (the
  earlier ground truth on equal IoU);
* a matched pair counts at ``[true class, predicted class]``;
* an unmatched prediction whose IoF with a crowd region of its own class is
  >= ``iou_threshold`` counts nowhere; any other counts at
  ``[background, predicted class]``;
* an unmatched ground truth counts at ``[true class, background]``; crowd
  regions never count.

Rows are ground truth, columns predictions, index ``K`` is background.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iou_eval.analysis.common import (
    Overlaps,
    box_overlaps,
    checked_columns,
    dataset_columns,
    greedy_first_wins,
    rank_in_group,
    same_group_pairs,
    score_order,
)

BACKGROUND = "background"


@dataclass(frozen=True)
class ConfusionResult:
    """A detection confusion matrix.

    Attributes:
        matrix: ``[K + 1, K + 1]`` int64 counts; rows the ground truth's class,
            columns the prediction's, the last index background.
        iou_threshold, score_threshold: the thresholds it was counted at.
        names: ``K`` category names when known (else None).
    """

    matrix: np.ndarray = field(repr=False)
    iou_threshold: float
    score_threshold: float
    names: tuple[str, ...] | None = None

    def label(self, index: int) -> str:
        """The name of row/column ``index`` (``"background"`` for the last)."""
        k = len(self.matrix) - 1
        if index == k:
            return BACKGROUND
        return self.names[index] if self.names is not None else str(index)

    def to_dict(self) -> dict:
        """JSON-ready: the thresholds, the labels in index order and the matrix as lists."""
        return {
            "iou_threshold": self.iou_threshold,
            "score_threshold": self.score_threshold,
            "labels": [self.label(i) for i in range(len(self.matrix))],
            "matrix": self.matrix.tolist(),
        }


@dataclass(frozen=True)
class ConfusedPair:
    """One off-diagonal cell: ``count`` ground truths of ``true`` detected as ``predicted``."""

    true_index: int
    predicted_index: int
    true: str
    predicted: str
    count: int


def confusion_matrix(
    gt_image: np.ndarray,
    gt_category: np.ndarray,
    gt_xyxy: np.ndarray,
    gt_crowd: np.ndarray,
    pred_image: np.ndarray,
    pred_category: np.ndarray,
    pred_xyxy: np.ndarray,
    pred_score: np.ndarray,
    num_images: int,
    num_categories: int,
    *,
    iou_threshold: float = 0.5,
    score_threshold: float = 0.25,
    overlaps: Overlaps | None = None,
    names: tuple[str, ...] | None = None,
) -> ConfusionResult:
    """The ``[K + 1, K + 1]`` confusion matrix under the module's rules.

    Args:
        gt_image, gt_category: ``[G]`` int64; gt_xyxy: ``[G, 4]``; gt_crowd: ``[G]`` bool.
        pred_image, pred_category: ``[D]`` int64; pred_xyxy: ``[D, 4]``;
            pred_score: ``[D]`` float64, in file order.
        num_images: ``I``; num_categories: ``K`` (prediction-only categories included).
        iou_threshold: the IoU a match needs (inclusive), and the IoF that
            puts a prediction inside a crowd region.
        score_threshold: predictions scored below it are left out (0.25 as in Ultralytics).
        overlaps: ``overlaps(pred_rows[P], gt_rows[P]) -> [P]``, IoU or IoF
            for crowd regions; default the boxes'.
        names: ``K`` category names, kept for labels.
    """
    cols, overlaps = checked_columns(
        (gt_image, gt_category, gt_xyxy, gt_crowd, pred_image, pred_category, pred_xyxy,
         pred_score, num_images, num_categories),
        overlaps,
    )  # fmt: skip
    k = cols.num_categories
    if names is not None and len(names) != k:
        raise ValueError(f"names: expected {k} category names, found {len(names)}")

    # Predictions over the score threshold, by image and descending score.
    kept = np.flatnonzero(cols.pred_score >= score_threshold)
    kept = kept[score_order(cols.pred_image[kept], cols.pred_score[kept])]
    rank = rank_in_group(cols.pred_image[kept])
    real = np.flatnonzero(~cols.gt_crowd)
    kp, gi = same_group_pairs(cols.pred_image[kept], cols.gt_image[real], cols.num_images)
    g = real[gi]
    iou = overlaps(kept[kp], g) if len(kp) else np.zeros(0)
    ok = iou >= iou_threshold
    match = greedy_first_wins(kp[ok], g[ok], iou[ok], rank, len(kept), len(cols.gt_image))

    matrix = np.zeros((k + 1, k + 1), dtype=np.int64)
    hit = match >= 0
    p_cat = cols.pred_category[kept]
    np.add.at(matrix, (cols.gt_category[match[hit]], p_cat[hit]), 1)
    loose = ~hit & ~_in_crowd(cols, overlaps, kept, ~hit, iou_threshold)
    np.add.at(matrix[k], p_cat[loose], 1)
    gt_used = np.zeros(len(cols.gt_image), dtype=bool)
    gt_used[match[hit]] = True
    np.add.at(matrix[:, k], cols.gt_category[~cols.gt_crowd & ~gt_used], 1)
    return ConfusionResult(
        matrix=matrix,
        iou_threshold=float(iou_threshold),
        score_threshold=float(score_threshold),
        names=tuple(names) if names is not None else None,
    )


def _in_crowd(cols, overlaps: Overlaps, kept: np.ndarray, unmatched: np.ndarray, thr: float):
    """``[len(kept)]`` bool: unmatched predictions with IoF >= ``thr`` on a crowd region of their class."""
    inside = np.zeros(len(kept), dtype=bool)
    crowd = np.flatnonzero(cols.gt_crowd)
    cand = kept[unmatched]
    if len(crowd) == 0 or len(cand) == 0:
        return inside
    a, b = same_group_pairs(cols.pred_image[cand], cols.gt_image[crowd], cols.num_images)
    mine = cols.pred_category[cand[a]] == cols.gt_category[crowd[b]]
    a, b = a[mine], b[mine]
    if len(a):
        iof = overlaps(cand[a], crowd[b])
        inside[np.flatnonzero(unmatched)[a[iof >= thr]]] = True
    return inside


def confusion_matrix_from_datasets(gt, pred, *, overlaps: Overlaps | None = None, **options):
    """:func:`confusion_matrix` of two aligned :class:`~iou_eval.data.dataset.Dataset`, with their names.

    The default overlaps use the datasets' ``bbox_area`` (the files' ``w * h``).
    ``options``: ``iou_threshold``, ``score_threshold``.
    """
    if overlaps is None:
        overlaps = box_overlaps(pred.xyxy, gt.xyxy, gt.is_crowd, pred.bbox_area, gt.bbox_area)
    return confusion_matrix(
        *dataset_columns(gt, pred),
        overlaps=overlaps,
        names=tuple(gt.categories.names),
        **options,
    )


def most_confused(
    result: ConfusionResult, top: int = 10, include_background: bool = False
) -> tuple[ConfusedPair, ...]:
    """The ``top`` largest off-diagonal cells, largest first (ties: by true, then predicted index).

    Only cells with a count above zero; with ``include_background`` the
    background row (false detections) and column (missed ground truths) too.
    """
    m = result.matrix
    k = len(m) - 1
    counts = m.copy()
    np.fill_diagonal(counts, 0)
    if not include_background:
        counts[k, :] = 0
        counts[:, k] = 0
    true_idx, pred_idx = np.nonzero(counts)
    values = counts[true_idx, pred_idx]
    # Row-major nonzero order is (true, predicted) ascending: a stable sort keeps it on ties.
    order = np.argsort(-values, kind="stable")[: max(top, 0)]
    return tuple(
        ConfusedPair(
            true_index=int(true_idx[i]),
            predicted_index=int(pred_idx[i]),
            true=result.label(int(true_idx[i])),
            predicted=result.label(int(pred_idx[i])),
            count=int(values[i]),
        )
        for i in order
    )
