"""Count-based tables at one operating point (pure numpy).

From the matches at ``--iou-thr`` (area ``all``) and a score threshold:
per-class and per-image true/false positives, misses, precision, recall,
F1, mean IoU of matched pairs, and each class's F1-maximising score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.protocols.core import score_order


@dataclass(frozen=True)
class PointCounts:
    """Counts per class ``[C]`` (all categories, prediction-only ones last) and per image ``[I]``.

    Attributes:
        class_gt, class_pred, class_tp, class_fp: ``[C]`` int64.
        class_best_f1, class_best_score: ``[C]`` float64, NaN where undefined.
        image_gt, image_pred, image_tp, image_fp: ``[I]`` int64.
        image_iou_sum: ``[I]`` float64 sum of the IoUs of true positives.
    """

    class_gt: np.ndarray
    class_pred: np.ndarray
    class_tp: np.ndarray
    class_fp: np.ndarray
    class_best_f1: np.ndarray
    class_best_score: np.ndarray
    image_gt: np.ndarray
    image_pred: np.ndarray
    image_tp: np.ndarray
    image_fp: np.ndarray
    image_iou_sum: np.ndarray


@dataclass(frozen=True)
class ScoreSweep:
    """Counts and rates of one class at each score cut-off ``[S]`` (distinct scores, descending).

    Keeping "score >= scores[i]" keeps ``tp[i]`` true and ``fp[i]`` false positives.

    Attributes:
        scores: ``[S]`` float64 cut-offs.
        tp, fp: ``[S]`` int64 cumulative counts.
        n_gt: ground truths that count.
        precision, recall, f1: ``[S]`` float64.
    """

    scores: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_gt: int
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray


def f1_sweep(s: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_gt: int) -> ScoreSweep:
    """Precision, recall and F1 at every score cut-off of one class.

    Args:
        s, tp, fp: ``[D]`` scored predictions of one class (ignored ones
            removed) in descending score order.
        n_gt: ground truths that count (> 0).

    Cuts fall only between different scores: keeping "score >= s" keeps all
    ties of ``s``.
    """
    ctp = np.cumsum(tp, dtype=np.int64)
    cfp = np.cumsum(fp, dtype=np.int64)
    last_of_tie = np.r_[s[1:] != s[:-1], True] if len(s) else np.zeros(0, dtype=bool)
    ctp, cfp, s = ctp[last_of_tie], cfp[last_of_tie], np.asarray(s, np.float64)[last_of_tie]
    f1 = 2 * ctp / (2 * ctp + cfp + (n_gt - ctp))
    return ScoreSweep(s, ctp, cfp, n_gt, ctp / np.maximum(ctp + cfp, 1), ctp / n_gt, f1)


def best_f1(s: np.ndarray, tp: np.ndarray, fp: np.ndarray, n_gt: int) -> tuple[float, float]:
    """The highest F1 over score cut-offs (:func:`f1_sweep`), and the cut-off that gives it.

    Returns ``(nan, nan)`` when there is no ground truth, ``(0, nan)`` when
    there are no predictions.
    """
    if n_gt == 0:
        return float("nan"), float("nan")
    if len(s) == 0:
        return 0.0, float("nan")
    sweep = f1_sweep(s, tp, fp, n_gt)
    i = int(np.argmax(sweep.f1))
    return float(sweep.f1[i]), float(sweep.scores[i])


def _count(idx: np.ndarray, n: int) -> np.ndarray:
    """``[n]`` int64 occurrences of each value of ``idx``."""
    return np.bincount(idx, minlength=n)[:n].astype(np.int64)


def _tally(
    at: np.ndarray,
    extra_at: np.ndarray,
    tp: np.ndarray,
    fp: np.ndarray,
    keep: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``[n]`` true positives, false positives and predictions per value of ``at[D]``.

    ``extra_at[E]``: the kept predictions no ground truth could match, each a
    false positive.
    """
    extra = _count(extra_at, n)
    return _count(at[tp], n), _count(at[fp], n) + extra, _count(at[keep], n) + extra


def _best_f1_by_class(
    dt_class: np.ndarray,
    dt_score: np.ndarray,
    dt_tp: np.ndarray,
    dt_fp: np.ndarray,
    class_gt: np.ndarray,
    dt_order: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``([K], [K])`` each class's best F1 over score cut-offs and the score giving it."""
    n_classes = len(class_gt)
    used = dt_tp | dt_fp
    best = np.full(n_classes, np.nan)
    best_s = np.full(n_classes, np.nan)
    # By class, then descending score: each class's slice is ready for the sweep.
    if dt_order is None:
        order = np.flatnonzero(used)[score_order(dt_class[used], dt_score[used])]
    else:
        order = dt_order[used[dt_order]]
    # The order visits rows far apart in memory: two gathers (the score, and
    # TP and FP as the bits of one byte); each class's slice follows from its size.
    sc = dt_score[order]
    both = (np.asarray(dt_tp, bool).view(np.int8) | (np.asarray(dt_fp, bool).view(np.int8) << 1))[
        order
    ]
    t, f = (both & 1).view(bool), (both >> 1).view(bool)
    size = np.bincount(dt_class[used], minlength=n_classes)[:n_classes]
    _sweep_classes(sc, t, f, size, np.asarray(class_gt, dtype=np.int64), best, best_s)
    return best, best_s


def _sweep_classes(
    sc: np.ndarray,
    t: np.ndarray,
    f: np.ndarray,
    size: np.ndarray,
    class_gt: np.ndarray,
    best: np.ndarray,
    best_s: np.ndarray,
) -> None:
    """:func:`best_f1` of every class at once, into ``best[K]`` and ``best_s[K]``.

    ``sc``, ``t``, ``f``: ``[D]`` the classes' slices one after the other
    (``size[K]`` rows each), each in descending score order.  The counts
    are the running sums less each slice's start, the same integers; F1
    takes the same float operations at each cut, and the first largest of
    a class is its ``argmax``.
    """
    starts = np.r_[0, np.cumsum(size)]
    best[(class_gt > 0) & (size == 0)] = 0.0
    n = len(sc)
    if not n:
        return
    cls = np.repeat(np.arange(len(size)), size)
    ctp = np.cumsum(t, dtype=np.int64)
    cfp = np.cumsum(f, dtype=np.int64)
    # Cuts fall after a class's last row and between different scores.
    cut = np.ones(n, dtype=bool)
    np.not_equal(sc[1:], sc[:-1], out=cut[:-1])
    cut[starts[1:][size > 0] - 1] = True
    cut &= class_gt[cls] > 0
    at = np.flatnonzero(cut)
    if not len(at):
        return
    k = cls[at]
    before_tp = np.r_[0, ctp][starts[:-1]]
    before_fp = np.r_[0, cfp][starts[:-1]]
    c_tp = ctp[at] - before_tp[k]
    c_fp = cfp[at] - before_fp[k]
    n_gt = class_gt[k]
    f1 = 2 * c_tp / (2 * c_tp + c_fp + (n_gt - c_tp))
    # Each class's cuts are a run of ``at``: the first of the largest F1 of each run.
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    top = np.maximum.reduceat(f1, first)
    runs = np.repeat(np.arange(len(first)), np.diff(np.r_[first, len(at)]))
    is_top = np.flatnonzero(f1 == top[runs])
    pick = is_top[np.r_[True, runs[is_top][1:] != runs[is_top][:-1]]]
    best[k[pick]] = f1[pick]
    best_s[k[pick]] = sc[at[pick]]


def count_point(
    *,
    n_images: int,
    n_classes: int,
    gt_image: np.ndarray,
    gt_class: np.ndarray,
    gt_counts: np.ndarray,
    dt_image: np.ndarray,
    dt_class: np.ndarray,
    dt_score: np.ndarray,
    dt_tp: np.ndarray,
    dt_fp: np.ndarray,
    dt_iou: np.ndarray,
    extra_image: np.ndarray,
    extra_class: np.ndarray,
    extra_score: np.ndarray,
    score_thr: float,
    dt_order: np.ndarray | None = None,
) -> PointCounts:
    """Aggregate one operating point into per-class and per-image counts.

    Args:
        gt_image, gt_class: ``[G]``; gt_counts: ``[G]`` bool (not crowd/ignored).
        dt_*: ``[D]`` the scored predictions with their outcome at the threshold.
        extra_*: ``[E]`` predictions that were not matched at all (categories
            the ground truth lacks); each is a false positive.
        score_thr: predictions below it are left out.
        dt_order: ``[D]`` the predictions by class, then descending score,
            ties in row order, if the caller has it (else it is computed).
    """
    keep = dt_score >= score_thr
    ex = extra_score >= score_thr
    tp = dt_tp & keep
    fp = dt_fp & keep
    class_gt = _count(gt_class[gt_counts], n_classes)
    class_tp, class_fp, class_pred = _tally(dt_class, extra_class[ex], tp, fp, keep, n_classes)
    image_gt = _count(gt_image[gt_counts], n_images)
    image_tp, image_fp, image_pred = _tally(dt_image, extra_image[ex], tp, fp, keep, n_images)
    image_iou_sum = np.bincount(dt_image[tp], weights=dt_iou[tp], minlength=n_images)[:n_images]
    # The best cut-off is searched over every scored prediction, whatever --score-thr.
    best, best_s = _best_f1_by_class(dt_class, dt_score, dt_tp, dt_fp, class_gt, dt_order)
    return PointCounts(
        class_gt=class_gt,
        class_pred=class_pred,
        class_tp=class_tp,
        class_fp=class_fp,
        class_best_f1=best,
        class_best_score=best_s,
        image_gt=image_gt,
        image_pred=image_pred,
        image_tp=image_tp,
        image_fp=image_fp,
        image_iou_sum=image_iou_sum,
    )


def sweeps_by_class(
    dt_class: np.ndarray,
    dt_score: np.ndarray,
    dt_tp: np.ndarray,
    dt_fp: np.ndarray,
    class_gt: np.ndarray,
) -> tuple[dict[int, ScoreSweep], ScoreSweep | None]:
    """:func:`f1_sweep` of each class with ground truth, and of all classes pooled.

    Args:
        dt_class, dt_score, dt_tp, dt_fp: ``[D]`` scored predictions (any
            order); those neither true nor false positives are left out, as
            :func:`count_point` leaves them out of the best F1.
        class_gt: ``[C]`` ground truths that count per class.

    Returns:
        ``({class: sweep}, pooled)``: classes without ground truth have no
        sweep; ``pooled`` ranks every class's predictions together against
        ``class_gt.sum()`` (None when that is 0).  Whatever the order of
        equal scores, a sweep is the same: it cuts only between scores.
    """
    used = np.flatnonzero(dt_tp | dt_fp)
    order = used[score_order(dt_class[used], dt_score[used])]
    cls = dt_class[order]
    starts = np.searchsorted(cls, np.arange(len(class_gt) + 1))
    sc, t, f = dt_score[order], dt_tp[order], dt_fp[order]
    per_class = {
        c: f1_sweep(sc[lo:hi], t[lo:hi], f[lo:hi], int(class_gt[c]))
        for c, (lo, hi) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True))
        if class_gt[c] > 0
    }
    total = int(np.sum(class_gt))
    if not total:
        return per_class, None
    pooled = used[np.argsort(-dt_score[used], kind="stable")]
    return per_class, f1_sweep(dt_score[pooled], dt_tp[pooled], dt_fp[pooled], total)
