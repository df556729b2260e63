"""Calibration of detection scores: reliability bins and expected calibration error.

A prediction is a true positive when COCO matching at one IoU threshold
(area range all, at most 100 predictions per image and class) matches it;
predictions matched to a crowd region are left out (``counted`` False).
:func:`coco_true_positives` computes both flags with iou-eval's COCO matcher.

Bins: by default 10 equal-width bins of the score, ``[0, 0.1), ...,
[0.9, 1.0]`` (the last one closed).  In each bin: the count, the mean score
and the accuracy (fraction of true positives).  ECE is a fraction,
``sum over bins of count / N * |accuracy - mean score|``, overall and per class;
MCE (maximum calibration error) is ``max over non-empty bins of |accuracy -
mean score|``.  Both are None without counted predictions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iou_eval.analysis.common import (
    Columns,
    Overlaps,
    box_area,
    box_overlaps,
    checked_columns,
    dataset_columns,
)
from iou_eval.errors import UsageError
from iou_eval.protocols.matching import Matches, match_coco

COCO_AREA_ALL = (0.0**2, 1e5**2)
"""pycocotools' ``all`` area range, inclusive."""


@dataclass(frozen=True)
class CalibrationBin:
    """One score bin: ``[lower, upper)`` (the last one closed); means None when empty."""

    lower: float
    upper: float
    count: int
    mean_score: float | None
    accuracy: float | None


@dataclass(frozen=True)
class ClassCalibration:
    """One class's ECE and MCE (None without counted predictions) and its counted predictions."""

    ece: float | None
    count: int
    mce: float | None = None


@dataclass(frozen=True)
class CalibrationResult:
    """Reliability bins and ECE, shaped as the JSON ``calibration`` object.

    Attributes:
        iou_threshold: the threshold the true-positive flags were computed at.
        bins: ``[B]`` :class:`CalibrationBin` over every counted prediction.
        ece: the expected calibration error (a fraction), None without predictions.
        mce: the maximum calibration error (the largest gap of a non-empty bin).
        per_class: ``{name: ClassCalibration}`` for every category, in index order.
    """

    iou_threshold: float
    bins: tuple[CalibrationBin, ...]
    ece: float | None
    per_class: dict[str, ClassCalibration]
    mce: float | None = None

    def to_dict(self) -> dict:
        """``{"iou_threshold", "bins": [{lower, upper, count, mean_score, accuracy}],
        "ece", "mce", "per_class": {name: {ece, mce, count}}}``, None for undefined numbers."""
        return {
            "iou_threshold": self.iou_threshold,
            "bins": [
                {
                    "lower": b.lower,
                    "upper": b.upper,
                    "count": b.count,
                    "mean_score": b.mean_score,
                    "accuracy": b.accuracy,
                }
                for b in self.bins
            ],
            "ece": self.ece,
            "mce": self.mce,
            "per_class": {
                name: {"ece": c.ece, "mce": c.mce, "count": c.count}
                for name, c in self.per_class.items()
            },
        }


def bin_edges(bins: int | Sequence[float] = 10) -> np.ndarray:
    """``[B + 1]`` edges: ``i / B`` for an integer ``B`` (so 0.3 is the double
    a file's ``0.3`` reads as), else the given increasing edges."""
    if isinstance(bins, (int, np.integer)):
        if bins < 1:
            raise UsageError(f"calibration needs at least 1 bin, got {bins}")
        return np.arange(int(bins) + 1) / float(bins)
    edges = np.asarray(bins, dtype=np.float64).reshape(-1)
    if len(edges) < 2 or not np.all(np.diff(edges) > 0) or not np.isfinite(edges).all():
        raise UsageError(
            f"calibration bin edges must be at least two increasing numbers, got {edges.tolist()}"
        )
    return edges


def calibration(
    pred_score: np.ndarray,
    pred_category: np.ndarray,
    is_tp: np.ndarray,
    counted: np.ndarray,
    category_names: Sequence[str],
    *,
    iou_threshold: float,
    bins: int | Sequence[float] = 10,
) -> CalibrationResult:
    """Reliability bins and ECE of the counted predictions.

    Args:
        pred_score: ``[D]`` float64; pred_category: ``[D]`` int64 in ``[0, K)``.
        is_tp: ``[D]`` bool, matched at ``iou_threshold``.
        counted: ``[D]`` bool, False for predictions left out (matched to a
            crowd region, or not scored at all).
        category_names: ``K`` names, the keys of ``per_class`` (a repeated
            name gets `` [index]`` appended).
        iou_threshold: the threshold of ``is_tp``, recorded in the result.
        bins: a bin count (equal width on [0, 1]) or ``[B + 1]`` edges.

    Raises:
        UsageError: a counted score outside the bins' range (e.g. not in [0, 1]).
    """
    score = np.asarray(pred_score, dtype=np.float64).reshape(-1)
    d = len(score)
    cat = np.asarray(pred_category, dtype=np.int64).reshape(-1)
    tp = np.asarray(is_tp, dtype=bool).reshape(-1)
    use = np.asarray(counted, dtype=bool).reshape(-1)
    names = _unique_names(category_names)
    k = len(names)
    for name, col in (("pred_category", cat), ("is_tp", tp), ("counted", use)):
        if len(col) != d:
            raise ValueError(f"{name}: expected {d} values (one per prediction), found {len(col)}")
    if d and use.any() and (cat[use].min() < 0 or cat[use].max() >= k):
        raise ValueError(f"pred_category: expected indices in [0, {k}) (one per category name)")
    edges = bin_edges(bins)
    score, cat, tp = score[use], cat[use], tp[use]
    outside = (score < edges[0]) | (score > edges[-1]) | ~np.isfinite(score)
    if outside.any():
        raise UsageError(
            f"calibration needs scores in [{edges[0]:g}, {edges[-1]:g}]; found "
            f"{float(score[outside][0])!r} ({int(outside.sum())} prediction(s) outside)",
            hint="calibration reads scores as probabilities: rescale them, or pass bin edges",
        )
    b = len(edges) - 1
    # [lower, upper): the last edge belongs to the last bin.
    which = np.searchsorted(edges[1:-1], score, side="right")
    count, total, hits = _bin_sums(which, score, tp, b)
    flat = cat * b + which
    c_count, c_total, c_hits = (x.reshape(k, b) for x in _bin_sums(flat, score, tp, k * b))
    per_class = [_errors(c_count[c], c_total[c], c_hits[c]) for c in range(k)]
    ece, mce = _errors(count, total, hits)
    return CalibrationResult(
        iou_threshold=float(iou_threshold),
        bins=tuple(
            CalibrationBin(
                lower=float(edges[i]),
                upper=float(edges[i + 1]),
                count=int(count[i]),
                mean_score=float(total[i] / count[i]) if count[i] else None,
                accuracy=float(hits[i] / count[i]) if count[i] else None,
            )
            for i in range(b)
        ),
        ece=ece,
        mce=mce,
        per_class={
            name: ClassCalibration(
                ece=per_class[c][0], mce=per_class[c][1], count=int(c_count[c].sum())
            )
            for c, name in enumerate(names)
        },
    )


def _unique_names(names: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for i, name in enumerate(names):
        key = str(name) if str(name) not in seen else f"{name} [{i}]"
        seen.add(key)
        out.append(key)
    return out


def _bin_sums(which: np.ndarray, score: np.ndarray, tp: np.ndarray, n: int):
    """Per bin ``[n]``: count, sum of scores, number of true positives."""
    count = np.bincount(which, minlength=n)
    total = np.bincount(which, weights=score, minlength=n)
    hits = np.bincount(which, weights=tp.astype(np.float64), minlength=n)
    return count, total, hits


def _errors(
    count: np.ndarray, total: np.ndarray, hits: np.ndarray
) -> tuple[float | None, float | None]:
    """``(ECE, MCE)``: ``sum count / N * |accuracy - mean score|`` and ``max |accuracy -
    mean score|`` over the non-empty bins; None, None when N = 0."""
    n = int(count.sum())
    if n == 0:
        return None, None
    full = count > 0
    c = count[full].astype(np.float64)
    gap = np.abs(hits[full] / c - total[full] / c)
    return float(np.sum(c / n * gap)), float(np.max(gap))


class _PairGeometry:
    """:class:`iou_eval.geometry.seam.Geometry` over an :data:`Overlaps` callable (for ``match_coco``).

    Attributes:
        overlaps: the pairs' overlaps; dt_area: ``[D]`` the predictions' areas.
    """

    name = "pairs"

    def __init__(self, overlaps: Overlaps, dt_area: np.ndarray) -> None:
        self.overlaps = overlaps
        self.dt_area = dt_area

    def pairs(self, d_groups, gt_sorted, g_starts, dt_rows, floor):
        counts = g_starts[d_groups + 1] - g_starts[d_groups]
        total = int(counts.sum())
        pd = np.repeat(np.arange(len(d_groups)), counts)
        shift = g_starts[d_groups] - (np.cumsum(counts) - counts)
        pg = gt_sorted[np.repeat(shift, counts) + np.arange(total)]
        iou = self.overlaps(dt_rows[pd], pg) if total else np.zeros(0)
        keep = iou >= floor
        return pd[keep], pg[keep], iou[keep]

    def pair(self, dt_rows, gt_rows):
        return self.overlaps(dt_rows, gt_rows)

    def take(self, gt_rows, dt_rows):
        base = self.overlaps
        return _PairGeometry(lambda d, g: base(dt_rows[d], gt_rows[g]), self.dt_area[dt_rows])


def _match_one_threshold(
    cols: Columns,
    scored: np.ndarray,
    geometry: _PairGeometry,
    g_area: np.ndarray,
    ignore: np.ndarray,
    zero_id: np.ndarray,
    iou_threshold: float,
    max_dets: int,
) -> Matches:
    """pycocotools' matching of the ``scored[D']`` predictions at one threshold, area all.

    Groups are image x category; ties keep row order on both sides.
    """
    k = cols.num_categories
    return match_coco(
        geometry=geometry,
        gt_area=g_area,
        gt_crowd=cols.gt_crowd,
        gt_ignore_flag=ignore,
        gt_zero_id=zero_id,
        gt_group=cols.gt_image * k + cols.gt_category,
        gt_order_key=np.arange(len(cols.gt_image)),
        dt_score=cols.pred_score[scored],
        dt_group=cols.pred_image[scored] * k + cols.pred_category[scored],
        dt_order_key=np.arange(len(scored)),
        n_groups=cols.num_images * k,
        iou_thresholds=np.array([iou_threshold], dtype=np.float64),
        area_ranges=np.array([COCO_AREA_ALL], dtype=np.float64),
        max_det=max_dets,
    )


def coco_true_positives(
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
    overlaps: Overlaps | None = None,
    gt_area: np.ndarray | None = None,
    pred_area: np.ndarray | None = None,
    gt_ignore: np.ndarray | None = None,
    gt_zero_id: np.ndarray | None = None,
    gt_categories: int | None = None,
    max_dets: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """``is_tp[D]`` and ``counted[D]`` from pycocotools' matching at one threshold, area all.

    Calls :func:`iou_eval.protocols.matching.match_coco`: per image and class,
    predictions by descending score (stable), the first ``max_dets``, each
    taking the best unmatched non-ignored ground truth with IoU >= the
    threshold, crowd regions reusable and tried after real ground truths.

    Args:
        gt_*, pred_*, num_images, num_categories: the columns (see
            :mod:`iou_eval.analysis.common`).
        iou_threshold: the match threshold (pycocotools' ``min(t, 1 - 1e-10)``).
        overlaps: ``overlaps(pred_rows[P], gt_rows[P])``, IoU or IoF for
            crowd regions; default the boxes'.
        gt_area: ``[G]`` the ``area`` field the area range tests; pred_area:
            ``[D]`` the predictions' (pycocotools' ``dt['area']``); both
            default to the boxes' areas.
        gt_ignore: ``[G]`` bool, ground truths ignored besides crowd regions.
        gt_zero_id: ``[G]`` bool, ground truths whose annotation id is 0: a
            match to one counts as a false positive (pycocotools' defect).
        gt_categories: categories ``[0, gt_categories)`` are the ground
            truth's; predictions of later ones are left out, as pycocotools
            drops them.  Default: every category.
        max_dets: predictions scored per image and class.

    Returns:
        ``(is_tp[D], counted[D])`` bool.  ``counted`` is False for predictions
        matched to a crowd or ignored ground truth and for those not scored
        (beyond ``max_dets`` in their group, or of a left-out category).
    """
    cols, overlaps = checked_columns(
        (gt_image, gt_category, gt_xyxy, gt_crowd, pred_image, pred_category, pred_xyxy,
         pred_score, num_images, num_categories),
        overlaps, pred_area, gt_area,
    )  # fmt: skip
    n_gt, n_pred, k = len(cols.gt_image), len(cols.pred_image), cols.num_categories
    p_area = box_area(cols.pred_xyxy) if pred_area is None else np.asarray(pred_area, np.float64)
    g_area = box_area(cols.gt_xyxy) if gt_area is None else np.asarray(gt_area, np.float64)
    scored = np.flatnonzero(cols.pred_category < (k if gt_categories is None else gt_categories))

    def flags(col) -> np.ndarray:
        return np.zeros(n_gt, dtype=bool) if col is None else np.asarray(col, dtype=bool)

    # pycocotools ignores crowd regions (and, on request, flagged ones).
    ignore = cols.gt_crowd | flags(gt_ignore)
    geometry = _PairGeometry(lambda d, g: overlaps(scored[d], g), p_area[scored])
    m = _match_one_threshold(
        cols, scored, geometry, g_area, ignore, flags(gt_zero_id), iou_threshold, max_dets
    )
    tp, fp, _ = m.at(0, 0)
    is_tp = np.zeros(n_pred, dtype=bool)
    counted = np.zeros(n_pred, dtype=bool)
    rows = scored[m.dt_rows]
    is_tp[rows] = tp
    counted[rows] = tp | fp
    return is_tp, counted


def coco_true_positives_from_datasets(
    gt,
    pred,
    *,
    iou_threshold: float = 0.5,
    gt_categories: int | None = None,
    overlaps: Overlaps | None = None,
    zero_id_quirk: bool = True,
    max_dets: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`coco_true_positives` of two aligned :class:`~iou_eval.data.dataset.Dataset`.

    Uses the ground truth's ``area`` field and the boxes' ``bbox_area`` as
    pycocotools does; ``gt_categories``: the alignment's ``n_categories``
    (prediction-only categories after it are left out); ``zero_id_quirk``:
    reproduce pycocotools' annotation-id-0 defect, as the ``coco`` protocol does.
    """
    if overlaps is None:
        overlaps = box_overlaps(pred.xyxy, gt.xyxy, gt.is_crowd, pred.bbox_area, gt.bbox_area)
    return coco_true_positives(
        *dataset_columns(gt, pred),
        iou_threshold=iou_threshold,
        overlaps=overlaps,
        gt_area=gt.area,
        pred_area=pred.bbox_area,
        gt_zero_id=(gt.ann_id == 0) if zero_id_quirk else None,
        gt_categories=gt_categories,
        max_dets=max_dets,
    )
