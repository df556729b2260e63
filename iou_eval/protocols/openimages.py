"""The Open Images detection challenge metric (numpy; the matching also in the compiled core).

As the TensorFlow Object Detection API's ``OpenImagesDetectionChallengeEvaluator``
computes it, step for step:

* An image is scored only on the classes verified there (a positive or a
  negative image-level label) or boxed there; predictions of other classes
  are left out.  Predictions with no width or height, or a score at or below
  -10, are left out too (the API's evaluator drops them).
* Per image and class, predictions in the API's order: ``np.argsort`` of the
  scores in file order, reversed (numpy's default sort, whose order of equal
  scores this module reproduces by making the very same call), at most
  10,000 of them.
* Each looks at the non-group-of box of its class it overlaps most (the
  first of equal maxima): IoU at or above the threshold and that box still
  free, a true positive; taken already (or too little overlap), a false
  positive.  A prediction left a false positive that lies inside a group-of
  box (intersection over the prediction's area at or above the threshold,
  the box of largest such overlap) is not a false positive: each group-of box
  counts once, a true positive scored by the highest prediction inside it
  (if above 0), or a miss.
* Per class, the images' entries joined in the order the challenge script
  adds the images (image ids sorted), sorted again by ``np.argsort`` and
  reversed; precision made monotone and summed over the recall steps (the
  VOC devkit's all-point AP).  No ground truth, no AP (NaN); ground truth
  but no entry, AP 0.  mAP: ``np.nanmean`` over the class list.

The matching runs in the compiled core (``oi_match``, one pass per image
and class) where it is built; numpy's :func:`match_challenge` is the
reference (``IOU_EVAL_NO_KERNEL=1``), and both give the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.ordering import radix_argsort
from iou_eval.data.reconcile import Alignment, VerifiedLabels
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.core import coco_core, score_order
from iou_eval.protocols.params import Protocol

# ObjectDetectionEvaluation's defaults for the challenge: NMS off
# (threshold 1.0) keeps at most 10,000 boxes per image and class, after
# filter_scores_greater_than(-10); the challenge weighs a group-of box 1.
MAX_PER_GROUP = 10000
SCORE_FLOOR = -10.0
GROUP_OF_WEIGHT = 1.0


@dataclass(frozen=True)
class ClassCurves:
    """Each class's entries as the API joins them, before its final sort.

    Attributes:
        starts: ``[C + 1]`` offsets of each class in the columns below.
        score: ``[E]`` float64 a prediction's score, or a group-of box's.
        label: ``[E]`` float64 1.0 (true positive or group-of box hit), 0.0
            (false positive).
        image: ``[E]`` int64 the image of each entry.
        n_gt: ``[C]`` float64 ground truths that count (a group-of box for the
            group-of weight).
        gt_image, gt_class: ``[G]`` the ground truth's images and classes.
        gt_weight: ``[G]`` what each counts (1, or the group-of weight); None: 1.
    """

    starts: np.ndarray
    score: np.ndarray
    label: np.ndarray
    image: np.ndarray
    n_gt: np.ndarray
    gt_image: np.ndarray
    gt_class: np.ndarray
    gt_weight: np.ndarray | None = None


@dataclass(frozen=True)
class OpenImagesEvaluation:
    """The outcome of ``openimages`` on one alignment.

    Attributes:
        protocol: the parameters used (the threshold in force).
        ap: ``[C]`` AP per category (all of the alignment's), NaN without ground truth.
        summary: ``{"mAP": ..., "AP[name]": ...}``: the mean, then each class's AP
            (None without ground truth) in the class list's order.
        point: the matches (a group-of box hit is the true positive of the
            highest prediction inside it; the other predictions inside are ignored).
        curves: what the AP integration read, for bootstrap replicates.
        class_positions, class_list_size: where each category sits in the
            class list ``np.nanmean`` runs over, and that list's length.
        left_out: predictions not scored: ``{"unverified": n, "no_area": n, "low_score": n}``.
    """

    protocol: Protocol
    ap: np.ndarray
    summary: dict[str, float | None]
    point: OperatingPoint
    curves: ClassCurves
    class_positions: np.ndarray
    class_list_size: int
    left_out: dict[str, int]
    class_names: tuple[str, ...] = ()

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]:
        """The summary and ``[C]`` per-class AP on a resampled image set (``image_weight[I]``)."""
        ap = class_aps(self.curves, image_weight)
        return summary_of(ap, self.class_positions, self.class_list_size, self.class_names), ap


def summary_of(
    ap: np.ndarray, positions: np.ndarray, size: int, names: tuple[str, ...]
) -> dict[str, float | None]:
    """``{"mAP", "AP[name]"...}``: the challenge's mean, then each class's AP in the class list's
    order (None for a class without ground truth), as the evaluator reports it per category."""
    out: dict[str, float | None] = {"mAP": mean_ap(ap, positions, size)}
    for k in np.argsort(positions, kind="stable").tolist():
        value = float(ap[k])
        out[f"AP[{names[k]}]"] = None if np.isnan(value) else value
    return out


def _integer_text(key: str) -> bool:
    """Whether ``int()`` reads ``key``: digits after one sign at most ("+-1" is text)."""
    t = key.strip()
    t = t[1:] if t[:1] in ("+", "-") else t
    return t.isascii() and t.isdigit()


def challenge_image_rank(ids: tuple) -> np.ndarray:
    """``[I]`` each image's place in the order the challenge script adds the images.

    The script groups its CSV rows by ``ImageID`` with pandas, which sorts
    the ids: as integers when every id is one (pandas reads such a column
    as numbers), else as text.
    """
    keys = [str(k) for k in ids]
    if keys and all(_integer_text(k) for k in keys):
        order = sorted(range(len(keys)), key=lambda i: int(keys[i]))
    else:
        order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(keys))
    return rank


def group_keys(
    category_idx: np.ndarray, image_idx: np.ndarray, image_rank: np.ndarray, n_cls: int
) -> np.ndarray:
    """``[N]`` int64 the (image, class) group of each row: the image's rank ``* C +`` the class.

    Groups ascend by image in the challenge's order (``image_rank[I]``),
    then by class: one image's groups lie side by side, as its rows
    usually do in the files.
    """
    return image_rank[image_idx].astype(np.int64, copy=False) * n_cls + category_idx


def api_order(group: np.ndarray, score: np.ndarray, n_groups: int | None = None) -> np.ndarray:
    """Positions ``[N]`` by ``group`` ascending, within a group as the API orders it.

    The API sorts one image's predictions of one class with
    ``np.argsort(scores)[::-1]``.  Where a group's scores are distinct any
    descending sort gives that order; a group with equal scores is handed to
    that very call (its order of ties is numpy's quicksort's, which depends
    on the numpy build and the CPU, as it does for the API).  ``group`` and
    ``score`` are in file order; ``n_groups``: groups lie in ``[0, n_groups)``
    (the compiled core's counting pass then sizes its table by it).
    """
    n = len(group)
    if not n:
        return np.zeros(0, dtype=np.int64)
    order = score_order(group, score, n_groups).astype(np.int64, copy=False)
    g, s = group[order], score[order]
    tied = np.flatnonzero((g[1:] == g[:-1]) & (s[1:] == s[:-1]))
    if len(tied):
        bounds = np.flatnonzero(np.r_[True, g[1:] != g[:-1], True])
        for lo, hi in _runs_holding(bounds, tied):
            rows = np.sort(order[lo:hi])  # the group in file order
            order[lo:hi] = rows[np.argsort(score[rows])[::-1]]
    return order


def _runs_holding(bounds: np.ndarray, positions: np.ndarray) -> list[tuple[int, int]]:
    """The runs ``[bounds[j], bounds[j + 1])`` that hold any of ``positions``."""
    j = np.unique(np.searchsorted(bounds, positions, side="right") - 1)
    return list(zip(bounds[j].tolist(), bounds[j + 1].tolist(), strict=True))


def _pairs_by_key(dt_key: np.ndarray, gt_key_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (prediction, ground truth) pair of equal keys: ``(dt_pos[P], gt_pos[P])``.

    Grouped by prediction in order, ground truths in their sorted order.
    """
    lo = np.searchsorted(gt_key_sorted, dt_key, side="left")
    hi = np.searchsorted(gt_key_sorted, dt_key, side="right")
    counts = hi - lo
    total = int(counts.sum())
    dt_pos = np.repeat(np.arange(len(dt_key)), counts)
    shift = lo - (np.cumsum(counts) - counts)
    return dt_pos, np.repeat(shift, counts) + np.arange(total)


def _overlaps(dxy: np.ndarray, gxy: np.ndarray, over_prediction: bool) -> np.ndarray:
    """IoU (or intersection over the prediction's area) of aligned pairs ``[P]``.

    As the API's ``np_box_ops``: intersection ``max(0, min - max)`` per
    axis, areas ``(x2 - x1) * (y2 - y1)``, union ``(a1 + a2) - inter``.
    """
    ih = np.maximum(0.0, np.minimum(dxy[:, 3], gxy[:, 3]) - np.maximum(dxy[:, 1], gxy[:, 1]))
    iw = np.maximum(0.0, np.minimum(dxy[:, 2], gxy[:, 2]) - np.maximum(dxy[:, 0], gxy[:, 0]))
    inter = ih * iw
    d_area = (dxy[:, 3] - dxy[:, 1]) * (dxy[:, 2] - dxy[:, 0])
    if over_prediction:
        return inter / d_area
    g_area = (gxy[:, 3] - gxy[:, 1]) * (gxy[:, 2] - gxy[:, 0])
    return inter / (d_area + g_area - inter)


def _best(dt_pos: np.ndarray, gt_pos: np.ndarray, ov: np.ndarray, n: int):
    """Per prediction ``[n]``: the first ground truth of largest overlap (-1: none) and that overlap."""
    best_gt = np.full(n, -1, dtype=np.int64)
    best_ov = np.full(n, -np.inf)
    if not len(dt_pos):
        return best_gt, best_ov
    seg = np.flatnonzero(np.r_[True, dt_pos[1:] != dt_pos[:-1]])
    mx = np.maximum.reduceat(ov, seg)
    # np.argmax's first maximum: the earliest pair of each run equal to its maximum.
    at_max = np.flatnonzero(ov == np.repeat(mx, np.diff(np.r_[seg, len(dt_pos)])))
    _, first = np.unique(dt_pos[at_max], return_index=True)
    best_gt[dt_pos[at_max[first]]] = gt_pos[at_max[first]]
    best_ov[dt_pos[seg]] = mx
    return best_gt, best_ov


@dataclass(frozen=True)
class _Matches:
    """Matches of the predictions in processing order ``[D]`` and the group-of hits ``[H]``."""

    rows: np.ndarray
    tp: np.ndarray
    absorbed: np.ndarray
    match_gt: np.ndarray
    match_ov: np.ndarray
    hit_rows: np.ndarray
    hit_score: np.ndarray
    representative: np.ndarray


def _member(key: np.ndarray, sets: list[np.ndarray], n_total: int) -> np.ndarray:
    """``[N]`` bool whether each of ``key[N]`` (in ``[0, n_total)``) is in any of ``sets``.

    A presence table where the keys' range is not much wider than the keys
    (no sort), else ``np.isin``.
    """
    if n_total <= 8 * (len(key) + sum(len(s) for s in sets)) + (1 << 20):
        table = np.zeros(n_total, dtype=bool)
        for s in sets:
            table[s] = True
        return table[key]
    return np.isin(key, np.concatenate(sets))


def _scored_rows(
    alignment: Alignment, labels: VerifiedLabels | None, image_rank: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Prediction rows the API scores (file order), their :func:`group_keys`, and how many
    were left out and why."""
    gt, pred = alignment.gt, alignment.pred
    n_cls = len(gt.categories)
    keys = [group_keys(gt.category_idx, gt.image_idx, image_rank, n_cls)]
    if labels is not None:
        keys.append(group_keys(labels.category_idx, labels.image_idx, image_rank, n_cls))
    dt_key = group_keys(pred.category_idx, pred.image_idx, image_rank, n_cls)
    verified = _member(dt_key, keys, n_cls * len(image_rank))
    x = pred.xyxy
    area = (x[:, 0] < x[:, 2]) & (x[:, 1] < x[:, 3])
    high = pred.scores > SCORE_FLOOR
    left_out = {
        "unverified": int((~verified).sum()),
        "no_area": int((verified & ~area).sum()),
        "low_score": int((verified & area & ~high).sum()),
    }
    rows = np.flatnonzero(verified & area & high)
    return rows, dt_key[rows], left_out


def match_challenge(
    alignment: Alignment, rows: np.ndarray, group: np.ndarray, gt_group: np.ndarray, thr: float
) -> _Matches:
    """The API's per-image matching of the prediction ``rows`` (file order) at ``thr`` (numpy).

    ``group[D]`` and ``gt_group[G]``: the predictions' and the ground
    truths' :func:`group_keys`; the predictions are processed by group.
    """
    gt, pred = alignment.gt, alignment.pred
    order = api_order(group, pred.scores[rows])
    group = group[order]
    run = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    place = np.arange(len(group)) - np.repeat(run, np.diff(np.r_[run, len(group)]))
    keep = place < MAX_PER_GROUP
    dts, group = rows[order][keep], group[keep]
    n = len(dts)
    # Ground truths by (image, class, group-of), each run in file order.
    gt_key = gt_group * 2 + gt.is_crowd
    gt_sorted = np.argsort(gt_key, kind="stable")
    sorted_key = gt_key[gt_sorted]
    dxy = pred.xyxy
    pd, pg = _pairs_by_key(group * 2, sorted_key)
    pg = gt_sorted[pg]
    iou = _overlaps(np.take(dxy, dts[pd], axis=0), np.take(gt.xyxy, pg, axis=0), False)
    best_gt, best_iou = _best(pd, pg, iou, n)
    claim = np.flatnonzero(best_iou >= thr)
    # A prediction claims only its best box; the first claim on a box wins it.
    _, first = np.unique(best_gt[claim], return_index=True)
    tp = np.zeros(n, dtype=bool)
    tp[claim[first]] = True
    # False positives so far, against the group-of boxes.
    left = np.flatnonzero(~tp)
    pd, pg = _pairs_by_key(group[left] * 2 + 1, sorted_key)
    pg = gt_sorted[pg]
    ioa = _overlaps(np.take(dxy, dts[left[pd]], axis=0), np.take(gt.xyxy, pg, axis=0), True)
    best_box, best_ioa = _best(pd, pg, ioa, len(left))
    inside = best_ioa >= thr
    absorbed = np.zeros(n, dtype=bool)
    absorbed[left[inside]] = True
    box_of = np.full(n, -1, dtype=np.int64)
    box_of[left[inside]] = best_box[inside]
    hit_rows, hit_score, representative = _group_hits(box_of, pred.scores[dts], len(gt))
    match_gt = np.where(tp, best_gt, -1)
    match_ov = np.where(tp, best_iou, 0.0)
    ioa_of = np.zeros(n)
    ioa_of[left[inside]] = best_ioa[inside]
    match_gt[representative] = hit_rows
    match_ov[representative] = ioa_of[representative]
    return _Matches(dts, tp, absorbed, match_gt, match_ov, hit_rows, hit_score, representative)


def _dense_groups(
    core, gt_group: np.ndarray, group: np.ndarray, n_total: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Both key columns (in ``[0, n_total)``) numbered by their rank among the keys that occur.

    The compiled core's bit table (``n_total / 64`` words) where the keys'
    range allows it, else a sort.
    """
    if n_total <= 64 * (len(gt_group) + len(group)) + (1 << 26):
        gt_code, dt_code, n = core.dense_groups(gt_group, group, n_total)
        return np.frombuffer(gt_code, dtype=np.int64), np.frombuffer(dt_code, dtype=np.int64), n
    levels, code = np.unique(np.r_[gt_group, group], return_inverse=True)
    return code[: len(gt_group)], code[len(gt_group) :], len(levels)


def match_compiled(
    core,
    alignment: Alignment,
    rows: np.ndarray,
    group: np.ndarray,
    gt_group: np.ndarray,
    thr: float,
    weight: float,
) -> tuple[_Matches, np.ndarray, np.ndarray]:
    """:func:`match_challenge` in the compiled core's one pass per group, and the entries.

    The entries ``[E]``, in :func:`_entries`' order, are positions of the
    matches: a prediction's ``k``, or ``~k`` for the group-of box that the
    prediction ``k`` stands for (none at a ``weight`` of 0 or less);
    ``class_end[C]`` where each class's entries end.
    """
    gt, pred = alignment.gt, alignment.pred
    gt_code, dt_code, n_groups = _dense_groups(
        core, gt_group, group, len(gt.categories) * len(gt.images)
    )
    order = api_order(dt_code, pred.scores[rows], n_groups)
    c = np.ascontiguousarray
    out = core.oi_match(
        rows[order], dt_code[order], c(pred.xyxy), c(pred.scores), c(pred.category_idx), gt_code,
        c(gt.is_crowd), c(gt.xyxy), n_groups, len(gt.categories), thr, MAX_PER_GROUP, weight > 0,
    )  # fmt: skip
    kept, flags, match_gt, match_ov, entries, class_end = (
        np.frombuffer(b, dtype=t)
        for b, t in zip(
            out, (np.int64, np.uint8, np.int64, np.float64, np.int64, np.int64), strict=True
        )
    )
    representative = np.flatnonzero(flags & 4)
    m = _Matches(
        rows=kept,
        tp=(flags & 1).view(bool),
        absorbed=(flags & 2) != 0,
        match_gt=match_gt,
        match_ov=match_ov,
        hit_rows=match_gt[representative],
        hit_score=pred.scores[kept[representative]],
        representative=representative,
    )
    return m, entries, class_end


def _group_hits(
    box_of: np.ndarray, score: np.ndarray, n_gt: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group-of boxes hit: their rows ``[H]`` (ascending), scores, and the prediction scoring each.

    A box's score is the highest of the predictions inside it, from 0 (the
    API's ``max(scores_group_of[gt_id], scores[i])`` from zeros); a box at 0
    is no hit.  The prediction that gives the score (the first of equals,
    in processing order) stands for the hit in the count tables.
    """
    inside = np.flatnonzero(box_of >= 0)
    best = np.zeros(n_gt)
    np.maximum.at(best, box_of[inside], score[inside])
    hit = np.flatnonzero(best > 0)
    if not len(hit):
        empty = np.zeros(0, dtype=np.int64)
        return empty, np.zeros(0), empty
    tops = inside[score[inside] == best[box_of[inside]]]
    tops = tops[np.isin(box_of[tops], hit)]
    boxes, first = np.unique(box_of[tops], return_index=True)
    return boxes, best[boxes], tops[first]


def _entries_of(
    alignment: Alignment, m: _Matches, entries: np.ndarray, class_end: np.ndarray, weight: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_entries` from the compiled matcher's ``entries`` (see :func:`match_compiled`)."""
    pred = alignment.pred
    at = np.where(entries < 0, ~entries, entries)
    rows = m.rows[at]
    label = m.tp[at].astype(np.float64)
    label[entries < 0] = weight
    cls = np.repeat(np.arange(len(class_end), dtype=np.int64), np.diff(np.r_[0, class_end]))
    return cls, pred.image_idx[rows].astype(np.int64), pred.scores[rows], label


def _entries(
    alignment: Alignment, m: _Matches, image_rank: np.ndarray, weight: float = GROUP_OF_WEIGHT
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every class's entries in the order the API joins them: ``(class, image, score, label)``.

    Per class, images in the challenge's order; within an image the
    predictions left (in processing order), then the group-of boxes hit (in
    file order), each labelled with the group-of ``weight`` (none at weight
    0: the API keeps only hits of a positive label).
    """
    gt, pred = alignment.gt, alignment.pred
    if weight <= 0:
        m = replace(m, hit_rows=m.hit_rows[:0], hit_score=m.hit_score[:0])
    keep = ~m.absorbed
    rows = m.rows[keep]
    cls = np.r_[pred.category_idx[rows], gt.category_idx[m.hit_rows]].astype(np.int64)
    img = np.r_[pred.image_idx[rows], gt.image_idx[m.hit_rows]].astype(np.int64)
    score = np.r_[pred.scores[rows], m.hit_score]
    label = np.r_[m.tp[keep].astype(np.float64), np.full(len(m.hit_rows), weight)]
    kind = np.r_[np.zeros(len(rows), np.int8), np.ones(len(m.hit_rows), np.int8)]
    seq = np.r_[np.flatnonzero(keep), m.hit_rows].astype(np.int64)
    order = np.lexsort((seq, kind, image_rank[img], cls))
    return cls[order], img[order], score[order], label[order]


def ground_truth_counts(
    gt_image: np.ndarray,
    gt_class: np.ndarray,
    group_of: np.ndarray,
    image_rank: np.ndarray,
    n_cls: int,
    weight: float = GROUP_OF_WEIGHT,
) -> np.ndarray:
    """``[C]`` float64 what each class's ground truth counts, summed as the API sums it.

    Per image, in the order the challenge adds the images, the API adds to
    each class its boxes that are not group-of plus ``weight`` times its
    group-of boxes (``n + w * g``, one float addition per image): with a
    weight of 1 the counts are whole, with another the sum's order decides
    the last bits.
    """
    if weight in (0.0, 1.0):  # whole numbers all along: any order of the additions gives them
        groups = np.bincount(gt_class[group_of], minlength=n_cls)[:n_cls]
        plain = np.bincount(gt_class, minlength=n_cls)[:n_cls] - groups
        return plain + weight * groups
    counts = np.zeros(n_cls)
    if not len(gt_class):
        return counts
    key = gt_class.astype(np.int64) * len(image_rank) + image_rank[gt_image]
    order = radix_argsort(key)
    key = key[order]
    # The (class, image) pairs with ground truth, by class, then image in the challenge's order.
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    groups = np.add.reduceat(group_of[order].astype(np.int64), starts)
    plain = np.diff(np.r_[starts, len(key)]) - groups
    terms = plain + weight * groups
    np.add.at(counts, key[starts] // len(image_rank), terms)  # one addition after another
    return counts


def average_precision(precision: np.ndarray, recall: np.ndarray) -> float:
    """The API's ``compute_average_precision``: 0 without entries, else the VOC area.

    Precision made non-increasing from the right, then the sum of
    ``(recall[i] - recall[i - 1]) * precision[i]`` where recall steps, as one
    ``np.sum`` of one array (its pairwise summation decides the last bits).
    """
    if not precision.size:
        return 0.0
    recall = np.concatenate([[0], recall, [1]])
    precision = np.concatenate([[0], precision, [0]])
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    indices = np.where(recall[1:] != recall[:-1])[0] + 1
    return float(np.sum((recall[indices] - recall[indices - 1]) * precision[indices]))


def class_aps(curves: ClassCurves, image_weight: np.ndarray | None = None) -> np.ndarray:
    """``[C]`` AP per class (NaN without ground truth) from :class:`ClassCurves`.

    Per class the joined entries are sorted by the very call the API makes
    (``np.argsort`` reversed).  ``image_weight[I]``: each image's
    multiplicity (bootstrap replicates); with weights 0 and 1 (a slice) the
    entries of the weighted images are sorted afresh, which is the API run
    on those images alone.
    """
    n_gt = curves.n_gt
    if image_weight is not None:
        w_gt = image_weight[curves.gt_image].astype(np.float64)
        if curves.gt_weight is not None:
            w_gt = w_gt * curves.gt_weight
        n_gt = np.bincount(curves.gt_class, weights=w_gt, minlength=len(n_gt))[: len(n_gt)]
    ap = np.full(len(n_gt), np.nan)
    for c in np.flatnonzero(n_gt > 0).tolist():
        sl = slice(int(curves.starts[c]), int(curves.starts[c + 1]))
        score, label = curves.score[sl], curves.label[sl]
        if image_weight is None:
            order = np.argsort(score)[::-1]
            tp = label[order]
            fp = (tp <= 0).astype(float)
        else:
            w = image_weight[curves.image[sl]].astype(np.float64)
            score, label, w = score[w > 0], label[w > 0], w[w > 0]
            order = np.argsort(score)[::-1]
            tp = label[order] * w[order]
            fp = (label[order] <= 0) * w[order]
        ctp = np.cumsum(tp)
        cfp = np.cumsum(fp)
        precision = ctp.astype(float) / (ctp + cfp)
        recall = ctp.astype(float) / n_gt[c]
        ap[c] = average_precision(precision, recall)
    return ap


def mean_ap(ap: np.ndarray, positions: np.ndarray, size: int) -> float | None:
    """``np.nanmean`` of the class list's APs, each category at its place in the list.

    Classes of the list without ground truth hold NaN as in the API, whose
    ``nanmean`` sums the list pairwise; the same array gives the same bits.
    """
    if not np.isfinite(ap).any():
        return None
    full = np.full(size, np.nan)
    full[positions] = ap
    return float(np.nanmean(full))


def class_list_positions(
    alignment: Alignment, labels: VerifiedLabels | None
) -> tuple[np.ndarray, int]:
    """``([C], L)``: each category's place in the class list ``np.nanmean`` runs over, its length.

    The class list is the class descriptions' order (the label map the
    challenge is scored with) when known, then the categories it lacks in
    the ground truth's own order, then those only in the predictions.
    """
    cats = alignment.gt.categories
    order = list(alignment.class_order) or list(range(alignment.n_categories))
    seen = set(order)
    order += [i for i in range(len(cats)) if i not in seen]
    listed = list(labels.class_list) if labels is not None else []
    place = {k: i for i, k in enumerate(listed)}
    positions = np.empty(len(cats), dtype=np.int64)
    size = len(listed)
    for i in order:
        key = cats.ids[i]
        if key in place:
            positions[i] = place[key]
        else:
            positions[i] = size
            size += 1
    return positions, size


def run_openimages(
    alignment: Alignment, protocol: Protocol, iou_thr: float | None = None
) -> OpenImagesEvaluation:
    """Evaluate under ``openimages``; ``iou_thr`` overrides the protocol's 0.5."""
    thr = protocol.iou_thresholds[0] if iou_thr is None else float(iou_thr)
    labels = alignment.verified
    # The parameters reported (and compared with a baseline's) are those used.
    source = None if labels is None else labels.source
    protocol = replace(
        protocol, iou_thresholds=(thr,), extra={**protocol.extra, "image_labels": source}
    )
    gt = alignment.gt
    n_cls = len(gt.categories)
    image_rank = challenge_image_rank(gt.images.ids)
    weight = float(protocol.extra.get("group_of_weight", GROUP_OF_WEIGHT))  # type: ignore[arg-type]
    rows, group, left_out = _scored_rows(alignment, labels, image_rank)
    gt_group = group_keys(gt.category_idx, gt.image_idx, image_rank, n_cls)
    core = coco_core()
    if core is None:
        m = match_challenge(alignment, rows, group, gt_group, thr)
        cls, img, score, label = _entries(alignment, m, image_rank, weight)
    else:
        m, entries, class_end = match_compiled(core, alignment, rows, group, gt_group, thr, weight)
        cls, img, score, label = _entries_of(alignment, m, entries, class_end, weight)
    n_gt = ground_truth_counts(
        gt.image_idx, gt.category_idx, gt.is_crowd, image_rank, n_cls, weight
    )
    starts = np.searchsorted(cls, np.arange(n_cls + 1))
    gt_weight = np.where(gt.is_crowd, weight, 1.0)
    curves = ClassCurves(starts, score, label, img, n_gt, gt.image_idx, gt.category_idx, gt_weight)
    ap = class_aps(curves)
    positions, size = class_list_positions(alignment, labels)
    names = tuple(str(n) for n in gt.categories.names)
    tp = m.tp.copy()
    tp[m.representative] = True
    point = OperatingPoint(
        iou_thr=thr,
        dt_rows=m.rows,
        tp=tp,
        fp=~m.tp & ~m.absorbed,
        match_gt=m.match_gt,
        match_iou=m.match_ov,
        gt_counts=np.ones(len(gt), dtype=bool),
        order=None,
    )
    return OpenImagesEvaluation(
        protocol=protocol,
        ap=ap,
        summary=summary_of(ap, positions, size, names),
        point=point,
        curves=curves,
        class_positions=positions,
        class_list_size=size,
        left_out=left_out,
        class_names=names,
    )
