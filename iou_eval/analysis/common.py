"""What the analyses share: checked input columns, overlaps of pairs, greedy matching.

Every analysis reads a ground truth and a predictions table as numpy columns
in one vocabulary (dense image and category indices):

* ground truth ``[G]``: ``gt_image`` int64, ``gt_category`` int64,
  ``gt_xyxy[G, 4]`` float64, ``gt_crowd`` bool;
* predictions ``[D]``: ``pred_image``, ``pred_category``, ``pred_xyxy[D, 4]``,
  ``pred_score`` float64, in file order (equal scores keep that order).

Overlaps come through one parameter, an :data:`Overlaps` callable with the
signature of :meth:`iou_eval.geometry.seam.Geometry.pair`, so that mask overlaps
can replace the default box overlaps of :func:`box_overlaps`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iou_eval.geometry.boxes import pair_iou

Overlaps = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``overlaps(pred_rows[P], gt_rows[P]) -> [P]`` float64: IoU of each pair, or
IoF (intersection over the prediction's area) where the ground truth is a
crowd region, as pycocotools' ``iou(..., iscrowd)`` computes both."""


@dataclass(frozen=True)
class Columns:
    """The checked input columns of one analysis (see the module docstring).

    Attributes:
        gt_image, gt_category: ``[G]`` int64; gt_xyxy: ``[G, 4]``; gt_crowd: ``[G]`` bool.
        pred_image, pred_category: ``[D]`` int64; pred_xyxy: ``[D, 4]``; pred_score: ``[D]``.
        num_images: ``I``; num_categories: ``K``.
    """

    gt_image: np.ndarray
    gt_category: np.ndarray
    gt_xyxy: np.ndarray
    gt_crowd: np.ndarray
    pred_image: np.ndarray
    pred_category: np.ndarray
    pred_xyxy: np.ndarray
    pred_score: np.ndarray
    num_images: int
    num_categories: int


def _column(name: str, value, dtype, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(value)
    if arr.size == 0 and arr.shape != shape:
        arr = arr.reshape(shape)
    if arr.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, found {arr.shape}")
    if np.dtype(dtype).kind in "iu" and arr.dtype.kind not in "iu" and arr.size:
        raise ValueError(f"{name}: expected integers, found {arr.dtype}")
    return arr.astype(dtype, copy=False)


def _indices(name: str, arr: np.ndarray, bound: int, bound_name: str) -> None:
    if len(arr) and (int(arr.min()) < 0 or int(arr.max()) >= bound):
        bad = int(np.flatnonzero((arr < 0) | (arr >= bound))[0])
        raise ValueError(
            f"{name}[{bad}] = {int(arr[bad])} is outside [0, {bound_name}={bound}); "
            "align the ground truth and the predictions first (iou_eval.data.reconcile.align)"
        )


def check_columns(
    gt_image,
    gt_category,
    gt_xyxy,
    gt_crowd,
    pred_image,
    pred_category,
    pred_xyxy,
    pred_score,
    num_images: int,
    num_categories: int,
) -> Columns:
    """The columns as :class:`Columns`, with shapes, dtypes and index ranges checked.

    Raises ``ValueError`` naming the column, what was expected and what was found.
    """
    n_gt = len(np.asarray(gt_image).reshape(-1))
    n_pred = len(np.asarray(pred_image).reshape(-1))
    cols = Columns(
        gt_image=_column("gt_image", gt_image, np.int64, (n_gt,)),
        gt_category=_column("gt_category", gt_category, np.int64, (n_gt,)),
        gt_xyxy=_column("gt_xyxy", gt_xyxy, np.float64, (n_gt, 4)),
        gt_crowd=_column("gt_crowd", gt_crowd, np.bool_, (n_gt,)),
        pred_image=_column("pred_image", pred_image, np.int64, (n_pred,)),
        pred_category=_column("pred_category", pred_category, np.int64, (n_pred,)),
        pred_xyxy=_column("pred_xyxy", pred_xyxy, np.float64, (n_pred, 4)),
        pred_score=_column("pred_score", pred_score, np.float64, (n_pred,)),
        num_images=int(num_images),
        num_categories=int(num_categories),
    )
    _indices("gt_image", cols.gt_image, cols.num_images, "num_images")
    _indices("pred_image", cols.pred_image, cols.num_images, "num_images")
    _indices("gt_category", cols.gt_category, cols.num_categories, "num_categories")
    _indices("pred_category", cols.pred_category, cols.num_categories, "num_categories")
    if not np.isfinite(cols.pred_score).all():
        bad = int(np.flatnonzero(~np.isfinite(cols.pred_score))[0])
        raise ValueError(f"pred_score[{bad}] = {cols.pred_score[bad]} is not a finite number")
    return cols


def checked_columns(
    columns: tuple, overlaps: Overlaps | None, pred_area=None, gt_area=None
) -> tuple[Columns, Overlaps]:
    """:func:`check_columns` of the ten positional columns, and the overlaps of their pairs.

    ``overlaps``: the caller's, or (None) the boxes' IoU, IoF for crowd
    regions (:func:`box_overlaps`, with the areas given, else the boxes').
    """
    cols = check_columns(*columns)
    if overlaps is None:
        overlaps = box_overlaps(cols.pred_xyxy, cols.gt_xyxy, cols.gt_crowd, pred_area, gt_area)
    return cols, overlaps


def dataset_columns(gt, pred) -> tuple:
    """The positional column arguments of an analysis from two aligned :class:`~iou_eval.data.dataset.Dataset`.

    Returns ``(gt_image, gt_category, gt_xyxy, gt_crowd, pred_image,
    pred_category, pred_xyxy, pred_score, num_images, num_categories)``.
    """
    if len(gt.images) != len(pred.images) or len(gt.categories) != len(pred.categories):
        raise ValueError(
            "the ground truth and the predictions do not share one vocabulary "
            f"({len(gt.images)} vs {len(pred.images)} images, {len(gt.categories)} vs "
            f"{len(pred.categories)} categories); align them first (iou_eval.data.reconcile.align)"
        )
    return (
        gt.image_idx,
        gt.category_idx,
        gt.xyxy,
        gt.is_crowd,
        pred.image_idx,
        pred.category_idx,
        pred.xyxy,
        pred.scores,
        len(gt.images),
        len(gt.categories),
    )


def box_area(xyxy: np.ndarray) -> np.ndarray:
    """``[N]`` continuous area ``(x2 - x1) * (y2 - y1)`` of boxes ``[N, 4]``."""
    b = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])


def box_overlaps(
    pred_xyxy: np.ndarray,
    gt_xyxy: np.ndarray,
    gt_crowd: np.ndarray,
    pred_area: np.ndarray | None = None,
    gt_area: np.ndarray | None = None,
) -> Overlaps:
    """The default :data:`Overlaps`: pycocotools' box IoU, IoF for crowd regions.

    Args:
        pred_xyxy: ``[D, 4]``; gt_xyxy: ``[G, 4]``; gt_crowd: ``[G]`` bool.
        pred_area, gt_area: ``[D]``, ``[G]`` the boxes' ``w * h`` as the file
            gave them (a :class:`~iou_eval.data.dataset.Dataset`'s ``bbox_area``);
            computed from the corners when None.  pycocotools multiplies the
            file's ``w * h``, and ``(x + w) - x`` is not always ``w``: pass
            them for bit-exact overlaps on COCO files.
    """
    p_xyxy = np.asarray(pred_xyxy, dtype=np.float64).reshape(-1, 4)
    g_xyxy = np.asarray(gt_xyxy, dtype=np.float64).reshape(-1, 4)
    p_area = box_area(p_xyxy) if pred_area is None else np.asarray(pred_area, np.float64)
    g_area = box_area(g_xyxy) if gt_area is None else np.asarray(gt_area, np.float64)
    crowd = np.asarray(gt_crowd, dtype=bool)

    def overlaps(pred_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        return pair_iou(
            np.take(p_xyxy, pred_rows, axis=0),
            p_area[pred_rows],
            np.take(g_xyxy, gt_rows, axis=0),
            g_area[gt_rows],
            crowd[gt_rows],
        )

    return overlaps


def score_order(
    group: np.ndarray, score: np.ndarray, group_rank: np.ndarray | None = None
) -> np.ndarray:
    """Positions ``[N]`` by group, then descending score; equal scores keep input order.

    ``group_rank[n_groups]`` orders the groups (default: by group index).
    """
    key = group if group_rank is None else group_rank[group]
    return np.lexsort((np.arange(len(score)), -score, key))


def rank_in_group(sorted_group: np.ndarray) -> np.ndarray:
    """``[N]`` position of each element inside its run of equal values of ``sorted_group``."""
    n = len(sorted_group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    run = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, run)


def same_group_pairs(
    a_group: np.ndarray, b_group: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` with ``a_group[i] == b_group[j]``.

    Returns ``(a_pos[P], b_pos[P])`` ordered by ``i``, then ``j`` ascending.
    """
    b_sorted = np.argsort(b_group, kind="stable")
    starts = np.searchsorted(b_group[b_sorted], np.arange(n_groups + 1), side="left")
    counts = starts[a_group + 1] - starts[a_group]
    total = int(counts.sum())
    a_pos = np.repeat(np.arange(len(a_group)), counts)
    # b position = group start + (pair index - index of a's first pair).
    shift = starts[a_group] - (np.cumsum(counts) - counts)
    b_pos = b_sorted[np.repeat(shift, counts) + np.arange(total)]
    return a_pos, b_pos


def segment_max(
    seg: np.ndarray, values: np.ndarray, n_seg: int, empty: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum of ``values[P]`` per segment and the first position holding it.

    Args:
        seg: ``[P]`` segment of each value, sorted ascending.
        values: ``[P]``; use ``-inf`` for entries that must not count.
        n_seg: number of segments; empty: the maximum of an empty segment.

    Returns:
        ``best[n_seg]`` (``max(best, empty)``: a segment whose values are all
        below ``empty`` reads ``empty``, as a row of zeros would) and
        ``first[n_seg]``, the position of the first maximum, -1 where none
        exceeds ``empty`` or equals it.  As ``numpy.argmax``: the first of equals.
    """
    best = np.full(n_seg, -np.inf)
    first = np.full(n_seg, -1, dtype=np.int64)
    if len(seg):
        starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        best[seg[starts]] = np.maximum.reduceat(values, starts)
        hit = np.flatnonzero(values == best[seg])
        lead = hit[np.r_[True, seg[hit][1:] != seg[hit][:-1]]]
        first[seg[lead]] = lead
    first[best < empty] = -1
    return np.maximum(best, empty), first


def greedy_first_wins(
    pair_pred: np.ndarray,
    pair_gt: np.ndarray,
    pair_iou: np.ndarray,
    pred_round: np.ndarray,
    n_pred: int,
    n_gt: int,
) -> np.ndarray:
    """Greedy one-to-one matching where the earlier ground truth wins ties.

    Predictions take turns by ``pred_round`` (their rank inside a group whose
    members compete for the same ground truths); each takes the still-free
    ground truth of highest overlap among its candidate pairs, the lowest
    ground-truth row on equal overlap (``numpy.argmax`` on a row of the
    overlap matrix, as tidecv and Ultralytics pick).

    Args:
        pair_pred, pair_gt, pair_iou: ``[P]`` candidate pairs, already
            restricted to those that may match (same group, over the threshold).
        pred_round: ``[n_pred]`` turn of each prediction; two predictions of
            one group never share a turn.
        n_pred, n_gt: sizes of the prediction and ground-truth index spaces.

    Returns:
        ``[n_pred]`` int64 the matched ground-truth row, -1 if none.
    """
    match = np.full(n_pred, -1, dtype=np.int64)
    if len(pair_pred) == 0:
        return match
    rnd = pred_round[pair_pred]
    order = np.lexsort((pair_gt, -pair_iou, pair_pred, rnd))
    rnd, p, g = rnd[order], pair_pred[order], pair_gt[order]
    taken = np.zeros(n_gt, dtype=bool)
    bounds = np.flatnonzero(np.r_[True, rnd[1:] != rnd[:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        free = ~taken[g[lo:hi]]
        fp, fg = p[lo:hi][free], g[lo:hi][free]
        if len(fp) == 0:
            continue
        # Pairs of a prediction are contiguous and best first: take the first.
        lead = np.r_[True, fp[1:] != fp[:-1]]
        match[fp[lead]] = fg[lead]
        taken[fg[lead]] = True
    return match
