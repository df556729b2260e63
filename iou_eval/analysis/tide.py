"""TIDE: the AP a detector would gain by fixing each kind of error.

Bolya et al., "TIDE: A General Toolbox for Identifying Object Detection
Errors" (ECCV 2020).  The numbers equal the ``tidecv`` package (1.0.1) run
as its README shows, ``TIDE().evaluate(datasets.COCO(gt),
datasets.COCOResult(dt), mode=TIDE.BOX)``; every rule below mirrors it.

* Unit: AP points (0-100) at IoU 0.5 by tidecv's own AP: precision made
  monotone, sampled at recalls ``i / 100`` (``i = 0..100``) at the first
  point whose recall reaches it, averaged.  Classes enter the mean when they
  have ground truth or counted predictions; a class with predictions and no
  ground truth counts as 0.
* At most 100 predictions per image across all classes, in stable score order.
* Matching per image and class: each prediction in score order takes the free
  ground truth of highest IoU (the first of equals) when the IoU is >= 0.5.
* Crowd regions: an unmatched prediction whose IoF with a crowd region of its
  class is > 0.5 (strictly) is ignored (neither true nor false positive).
* A false or ignored prediction is classified, first rule that holds:
  background when the image has no (non-crowd) ground truth; localisation
  when its best same-class IoU is in [0.1, 0.5]; classification when some
  other-class ground truth has IoU >= 0.5; duplicate when a matched
  same-class ground truth has IoU >= 0.5; background when no ground truth
  has IoU > 0.1; else both.  A ground truth that is unmatched and that no
  localisation or classification error points at is missed.
* Fixing: each error type alone.  A localisation or classification error
  becomes a true positive (in the ground truth's class) when its ground truth
  is unmatched and it is the highest-scored such error pointing at it; the
  others, and every duplicate, background and both error, are removed; a
  fixed miss removes its ground truth from the count.  dAP = max(fixed AP -
  AP, 0).  The false-positive dAP re-scores true positives 1 and false ones
  0; the false-negative dAP counts only matched ground truths; neither is
  clamped at 0.
* tidecv rebuilds the predictions of a fixed run errors first, then true
  positives, so on equal scores a false positive now ranks before a true
  one: that order is kept, hence a small AP change even for a fix that
  changes nothing.

Where tidecv stops with an error, iou-eval gives an undefined number: an
average over no class (no ground truth and no counted prediction, or a fix
that removes them all, as fixing every miss does when nothing was predicted)
divides by zero in tidecv; that AP, and a dAP taken from it, is None (``null``
in JSON, ``n/a`` in text).  Scores need not exceed -1 (tidecv's "best score
so far" starts there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iou_eval.analysis.common import (
    Columns,
    Overlaps,
    box_overlaps,
    checked_columns,
    dataset_columns,
    greedy_first_wins,
    rank_in_group,
    same_group_pairs,
    score_order,
    segment_max,
)

ERROR_TYPES = ("cls", "loc", "both", "dupe", "bkg", "miss")
"""The six main error types in tidecv's order (its short names Cls, Loc, Both, Dupe, Bkg, Miss)."""

# Codes of pred_error: the prediction-level error types, -1 for none.
CLS, LOC, BOTH, DUPE, BKG = 0, 1, 2, 3, 4
NO_ERROR = -1


@dataclass(frozen=True)
class TideErrors:
    """One number per main error type (a dAP, None where undefined, or a count)."""

    cls: float | None
    loc: float | None
    both: float | None
    dupe: float | None
    bkg: float | None
    miss: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name in ERROR_TYPES}


@dataclass(frozen=True)
class TideResult:
    """TIDE's error breakdown.

    Attributes:
        ap: the base AP (AP points, 0-100, tidecv's AP at ``pos_threshold``);
            None with no class to average (no ground truth, no prediction).
        dap: the AP gained by fixing each main error type alone; None where
            the fixed run has no class left to average (tidecv divides by zero).
        fp_dap, fn_dap: the AP gained with no false positives (true positives
            scored above every false one) / with no false negatives; None
            where undefined.
        counts: the number of errors of each main type (ignored predictions
            that are errors included, as tidecv counts them).
        pred_error: ``[D]`` int8 error code of each prediction (``CLS``,
            ``LOC``, ``BOTH``, ``DUPE``, ``BKG``), -1 for a true positive or a
            prediction not scored (beyond ``max_dets`` in its image).
        gt_missed: ``[G]`` bool, the ground truths counted as missed.
        pos_threshold, bg_threshold, max_dets: the rules' parameters.
        unit: what the AP numbers are.
    """

    ap: float | None
    dap: TideErrors
    fp_dap: float | None
    fn_dap: float | None
    counts: TideErrors
    pred_error: np.ndarray = field(repr=False)
    gt_missed: np.ndarray = field(repr=False)
    pos_threshold: float = 0.5
    bg_threshold: float = 0.1
    max_dets: int = 100
    unit: str = "AP points (0-100) at IoU 0.5, tidecv rules"

    def to_dict(self) -> dict:
        """The numbers as plain JSON-ready values."""
        return {
            "unit": self.unit,
            "ap": self.ap,
            "dap": self.dap.as_dict(),
            "fp_dap": self.fp_dap,
            "fn_dap": self.fn_dap,
            "counts": {k: int(getattr(self.counts, k) or 0) for k in ERROR_TYPES},
            "pos_threshold": self.pos_threshold,
            "bg_threshold": self.bg_threshold,
            "max_dets": self.max_dets,
        }


@dataclass(frozen=True)
class _Outcome:
    """Per kept prediction ``[Dk]`` (ordered as tidecv visits them) and per ground truth ``[G]``.

    Attributes:
        rows: ``[Dk]`` prediction rows; tp, ignored: ``[Dk]`` bool;
        error: ``[Dk]`` error code (-1 for true positives);
        fixes: ``[Dk]`` bool, a localisation/classification error that becomes a
            true positive when its type is fixed; fix_class: ``[Dk]`` its class then;
        gt_used, gt_missed: ``[G]`` bool.
    """

    rows: np.ndarray
    tp: np.ndarray
    ignored: np.ndarray
    error: np.ndarray
    fixes: np.ndarray
    fix_class: np.ndarray
    gt_used: np.ndarray
    gt_missed: np.ndarray


def tide(
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
    overlaps: Overlaps | None = None,
    image_order: np.ndarray | None = None,
    pos_threshold: float = 0.5,
    bg_threshold: float = 0.1,
    max_dets: int = 100,
) -> TideResult:
    """TIDE's dAPs and error counts, as tidecv 1.0.1 computes them (see the module docstring).

    Args:
        gt_image, gt_category: ``[G]`` int64; gt_xyxy: ``[G, 4]`` float64;
            gt_crowd: ``[G]`` bool (crowd regions are tidecv's ignore regions).
        pred_image, pred_category: ``[D]`` int64; pred_xyxy: ``[D, 4]``;
            pred_score: ``[D]`` float64, in file order.
        num_images: ``I``; num_categories: ``K``, every category either side
            uses (prediction-only categories included: they count as AP 0).
        overlaps: ``overlaps(pred_rows[P], gt_rows[P]) -> [P]`` IoU, IoF for
            crowd ground truths; default the boxes' (:func:`.common.box_overlaps`).
        image_order: ``[I]`` the rank of each image in the order tidecv visits
            them (the ground-truth file's ``images`` list); it decides only
            between equal scores of one class in different images.  Default:
            index order.
        pos_threshold, bg_threshold: tidecv's foreground and background IoU.
        max_dets: predictions kept per image (tidecv's COCO loader: 100).

    Returns:
        :class:`TideResult`.
    """
    cols, overlaps = checked_columns(
        (gt_image, gt_category, gt_xyxy, gt_crowd, pred_image, pred_category, pred_xyxy,
         pred_score, num_images, num_categories),
        overlaps,
    )  # fmt: skip
    if image_order is not None:
        image_order = np.asarray(image_order, dtype=np.int64).reshape(-1)
        if np.sort(image_order).tolist() != list(range(cols.num_images)):
            raise ValueError(
                f"image_order: expected a permutation of 0..{cols.num_images - 1}, "
                f"found {len(image_order)} values"
            )
    out = _classify(cols, overlaps, image_order, pos_threshold, bg_threshold, max_dets)
    return _summarize(cols, out, pos_threshold, bg_threshold, max_dets)


def tide_from_datasets(
    gt, pred, *, overlaps: Overlaps | None = None, image_order=None, **options
) -> TideResult:
    """:func:`tide` on two aligned :class:`~iou_eval.data.dataset.Dataset` (ground truth, predictions).

    The default overlaps use the datasets' ``bbox_area`` (the files' ``w * h``),
    as tidecv's pycocotools calls do.  ``options``: ``pos_threshold``,
    ``bg_threshold``, ``max_dets``.
    """
    if overlaps is None:
        overlaps = box_overlaps(pred.xyxy, gt.xyxy, gt.is_crowd, pred.bbox_area, gt.bbox_area)
    return tide(*dataset_columns(gt, pred), overlaps=overlaps, image_order=image_order, **options)


def _kept_predictions(cols: Columns, image_order: np.ndarray | None, max_dets: int):
    """Rows ``[Dk]`` tidecv scores, in the order it visits them, and their rank in their image."""
    order = score_order(cols.pred_image, cols.pred_score, image_order)
    rank = rank_in_group(cols.pred_image[order])
    keep = rank < max_dets
    return order[keep], rank[keep]


def _classify(
    cols: Columns,
    overlaps: Overlaps,
    image_order: np.ndarray | None,
    pos: float,
    bg: float,
    max_dets: int,
) -> _Outcome:
    """Match, ignore, classify: tidecv's ``TIDEExample`` and ``_eval_image`` on every image at once."""
    rows, rank = _kept_predictions(cols, image_order, max_dets)
    n_kept, n_gt = len(rows), len(cols.gt_image)
    pairs = _Pairs.of(cols, overlaps, rows)
    cand = pairs.same & (pairs.iou >= pos)
    match = greedy_first_wins(pairs.kept[cand], pairs.gt[cand], pairs.iou[cand], rank, n_kept, n_gt)
    tp = match >= 0
    gt_used = np.zeros(n_gt, dtype=bool)
    gt_used[match[tp]] = True
    ignored = _in_crowd(cols, overlaps, rows, ~tp, pos)
    error, target = _error_types(cols, rows, pairs, tp, gt_used, pos, bg)
    # tidecv's BestGTMatch: only a free ground truth can be fixed, by the
    # highest-scored error pointing at it (the first: kept rows are in score
    # order inside an image); it is then "usable", not missed.
    free = target >= 0
    free[free] = ~gt_used[target[free]]
    cand_k = np.flatnonzero(free)
    _, first = np.unique(target[cand_k], return_index=True)
    fixes = np.zeros(n_kept, dtype=bool)
    fixes[cand_k[first]] = True
    usable = np.zeros(n_gt, dtype=bool)
    usable[target[cand_k]] = True
    fix_class = cols.pred_category[rows]
    fix_class[target >= 0] = cols.gt_category[target[target >= 0]]
    gt_missed = ~cols.gt_crowd & ~gt_used & ~usable
    return _Outcome(rows, tp, ignored, error, fixes, fix_class, gt_used, gt_missed)


@dataclass(frozen=True)
class _Pairs:
    """Kept predictions and the non-crowd ground truths of their image that they overlap.

    Attributes:
        kept: ``[P]`` position among the kept predictions (sorted);
        gt: ``[P]`` ground-truth row (ascending within a prediction: file
            order, so the first of equal maxima is ``numpy.argmax``'s);
        iou: ``[P]`` > 0; same: ``[P]`` the two share a class.
    """

    kept: np.ndarray
    gt: np.ndarray
    iou: np.ndarray
    same: np.ndarray

    @staticmethod
    def of(cols: Columns, overlaps: Overlaps, rows: np.ndarray) -> _Pairs:
        real = np.flatnonzero(~cols.gt_crowd)
        kp, gi = same_group_pairs(cols.pred_image[rows], cols.gt_image[real], cols.num_images)
        g = real[gi]
        iou = overlaps(rows[kp], g) if len(kp) else np.zeros(0)
        # Pairs that do not overlap decide nothing: tidecv's rules compare
        # maxima with positive thresholds, and a row of zeros reads as 0.
        near = iou > 0
        kp, g, iou = kp[near], g[near], iou[near]
        return _Pairs(kp, g, iou, cols.pred_category[rows][kp] == cols.gt_category[g])


def _error_types(
    cols: Columns,
    rows: np.ndarray,
    pairs: _Pairs,
    tp: np.ndarray,
    gt_used: np.ndarray,
    pos: float,
    bg: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``error[Dk]`` (tidecv's order of tests) and ``target[Dk]``, the ground
    truth a localisation / classification error points at (-1 otherwise)."""
    n_kept = len(rows)
    kp, iou, same = pairs.kept, pairs.iou, pairs.same
    best_same, arg_same = segment_max(kp, np.where(same, iou, -np.inf), n_kept)
    best_other, arg_other = segment_max(kp, np.where(same, -np.inf, iou), n_kept)
    best_used, _ = segment_max(kp, np.where(same & gt_used[pairs.gt], iou, -np.inf), n_kept)
    best_any, _ = segment_max(kp, iou, n_kept)
    has_gt = np.bincount(cols.gt_image[~cols.gt_crowd], minlength=cols.num_images) > 0
    error = np.select(
        [
            tp,
            ~has_gt[cols.pred_image[rows]],
            (best_same >= bg) & (best_same <= pos),
            best_other >= pos,
            best_used >= pos,
            best_any <= bg,
        ],
        [NO_ERROR, BKG, LOC, CLS, DUPE, BKG],
        BOTH,
    ).astype(np.int8)
    target = np.full(n_kept, -1, dtype=np.int64)
    is_loc, is_cls = error == LOC, error == CLS
    target[is_loc] = pairs.gt[arg_same[is_loc]]
    target[is_cls] = pairs.gt[arg_other[is_cls]]
    return error, target


def _in_crowd(
    cols: Columns, overlaps: Overlaps, rows: np.ndarray, unmatched: np.ndarray, pos: float
) -> np.ndarray:
    """``[Dk]`` unmatched kept predictions with IoF > ``pos`` on a crowd region of their class."""
    crowd = np.flatnonzero(cols.gt_crowd)
    ignored = np.zeros(len(rows), dtype=bool)
    cand = np.flatnonzero(unmatched)
    if len(crowd) == 0 or len(cand) == 0:
        return ignored
    a, b = same_group_pairs(cols.pred_image[rows[cand]], cols.gt_image[crowd], cols.num_images)
    mine = cols.pred_category[rows[cand[a]]] == cols.gt_category[crowd[b]]
    a, b = a[mine], b[mine]
    if len(a):
        iof = overlaps(rows[cand[a]], crowd[b])
        # tidecv: ``ignore_iou > pos_thresh``, strictly.
        ignored[cand[a[iof > pos]]] = True
    return ignored


def _summarize(cols: Columns, out: _Outcome, pos: float, bg: float, max_dets: int) -> TideResult:
    """The base AP, every fix's dAP and the counts."""
    k = cols.num_categories
    cat = cols.pred_category[out.rows]
    score = cols.pred_score[out.rows]
    n_gt = np.bincount(cols.gt_category[~cols.gt_crowd], minlength=k)
    fp = ~out.tp & ~out.ignored
    # tidecv ranks a class's points by descending score, equal scores in the
    # order it pushed them.  The base run pushes them as it visits them (the
    # kept rows' order); a fixed run pushes the errors, then the true positives.
    visit = np.argsort(-score, kind="stable")
    errors_first = np.lexsort((np.arange(len(score)), out.tp, -score))

    def ranked(order: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return order[keep[order]]

    pts = ranked(visit, fp | out.tp)
    base = _mean_ap(cat[pts], out.tp[pts], n_gt)

    def fixed(error_type: int) -> float | None:
        # Other errors keep their false positive; this type's are removed,
        # except the best localisation / classification error per free ground
        # truth, which becomes a true positive (of the ground truth's class).
        fix = (out.error == error_type) & out.fixes
        pts = ranked(errors_first, (fp & (out.error != error_type)) | fix | out.tp)
        return _mean_ap(np.where(fix, out.fix_class, cat)[pts], (out.tp | fix)[pts], n_gt)

    dap = {
        "cls": fixed(CLS),
        "loc": fixed(LOC),
        "both": fixed(BOTH),
        "dupe": fixed(DUPE),
        "bkg": fixed(BKG),
    }
    pts = ranked(errors_first, fp | out.tp)
    missed_per_class = np.bincount(cols.gt_category[out.gt_missed], minlength=k)
    dap["miss"] = _mean_ap(cat[pts], out.tp[pts], n_gt - missed_per_class)
    dap = {name: _gain(value, base, clamp=True) for name, value in dap.items()}
    # Special errors, not clamped by tidecv: true positives re-scored 1 and
    # false ones 0 (so all true positives first, each group in push order);
    # or only the matched ground truths counted.
    matched_per_class = np.bincount(cols.gt_category[out.gt_used], minlength=k)
    fn_ap = _mean_ap(cat[pts], out.tp[pts], matched_per_class)
    pts = np.r_[np.flatnonzero(out.tp), np.flatnonzero(fp)]
    fp_ap = _mean_ap(cat[pts], out.tp[pts], n_gt)

    pred_error = np.full(len(cols.pred_image), NO_ERROR, dtype=np.int8)
    pred_error[out.rows] = out.error
    counts = np.bincount(out.error[out.error >= 0].astype(np.int64), minlength=5)
    return TideResult(
        ap=base,
        dap=TideErrors(**dap),
        fp_dap=_gain(fp_ap, base),
        fn_dap=_gain(fn_ap, base),
        counts=TideErrors(
            cls=int(counts[CLS]),
            loc=int(counts[LOC]),
            both=int(counts[BOTH]),
            dupe=int(counts[DUPE]),
            bkg=int(counts[BKG]),
            miss=int(out.gt_missed.sum()),
        ),
        pred_error=pred_error,
        gt_missed=out.gt_missed,
        pos_threshold=pos,
        bg_threshold=bg,
        max_dets=max_dets,
        unit=f"AP points (0-100) at IoU {pos:g}, tidecv rules",
    )


def _gain(fixed: float | None, base: float | None, clamp: bool = False) -> float | None:
    """``fixed - base`` (at least 0 when ``clamp``, as tidecv clamps the main errors);
    None when either AP is undefined."""
    if fixed is None or base is None:
        return None
    return max(fixed - base, 0.0) if clamp else fixed - base


RECALL_POINTS = np.arange(101) / 100.0
"""tidecv samples precision at recalls ``x / 100`` for ``x`` in 0..100."""


def _mean_ap(cls: np.ndarray, is_tp: np.ndarray, n_gt: np.ndarray) -> float | None:
    """tidecv's ``ClassedAPDataObject.get_mAP``, in AP points.

    Args:
        cls, is_tp: ``[N]`` each data point's class and outcome, in tidecv's
            ranking order (descending score, equal scores in push order).
        n_gt: ``[K]`` ground-truth count per class.

    A class enters the mean when it has data points or ground truth; its AP
    is 0 without ground truth.  An empty mean is None (tidecv divides by zero:
    no ground truth and no counted prediction, or a fix that removes them all).
    """
    k, n = len(n_gt), len(cls)
    # A stable sort keeps the ranking inside a class; on 16-bit keys numpy's
    # stable sort is a radix sort.
    by_class = np.argsort(cls.astype(np.uint16) if k <= 1 << 16 else cls, kind="stable")
    c, t = cls[by_class], is_tp[by_class]
    present = (np.bincount(c, minlength=k) > 0) | (n_gt > 0)
    if not present.any():
        return None
    starts = np.searchsorted(c, np.arange(k + 1))
    ctp = np.cumsum(t)
    ctp = ctp - np.r_[0, ctp][starts[c]]
    precision = ctp / (np.arange(n) - starts[c] + 1.0)
    # at[c, x]: the first point of class c with recall ctp / n_gt >= x, found
    # by the true-positive count it needs (exact integers, no float search).
    at = np.searchsorted(c * (n + 2) + ctp, np.arange(k)[:, None] * (n + 2) + _needed(n_gt, n))
    # tidecv's precision at x is max(precision[at:end]) (made monotone from
    # the right).  Maxima of the blocks between consecutive at's, then a
    # running maximum over a class's 101 blocks from the right.
    flat = at.ravel()
    block = np.maximum.reduceat(np.r_[precision, -np.inf], flat)
    block[flat >= np.r_[flat[1:], n]] = -np.inf  # empty blocks
    y = np.maximum.accumulate(block.reshape(k, -1)[:, ::-1], axis=1)[:, ::-1]
    y = np.where(at < starts[1:, None], y, 0.0)
    ap = np.where(n_gt > 0, y.sum(axis=1) / len(RECALL_POINTS) * 100, 0.0)
    return float(ap[present].sum() / present.sum())


def _needed(n_gt: np.ndarray, n: int) -> np.ndarray:
    """``[K, 101]`` the least true-positive count ``t`` with ``t / n_gt >= x``
    (as tidecv divides), capped at ``n + 1`` (never reached); 0 for x = 0."""
    g = n_gt[:, None].astype(np.float64)
    x = RECALL_POINTS[None, :]
    need = np.ceil(x * g)
    # x * n_gt may round across an integer: step to the exact least t.
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where((need - 1) / g >= x, need - 1, need)
        need = np.where(need / g < x, need + 1, need)
    need = np.where(g > 0, need, np.where(x > 0, n + 1, 0))
    return np.minimum(need, n + 1).astype(np.int64)
