"""Precision/recall arrays and AP, from matches (pure numpy).

``accumulate_coco`` fills the same ``precision[T, R, K, A, M]``,
``recall[T, K, A, M]`` and ``scores[T, R, K, A, M]`` arrays as pycocotools'
``COCOeval.accumulate``, operation for operation where rounding matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# pycocotools divides by (fp + tp + eps) so an empty prefix gives 0, not NaN.
_EPS = np.spacing(1)


@dataclass(frozen=True)
class CocoArrays:
    """pycocotools' ``COCOeval.eval`` arrays; -1 where a slice has no ground truth.

    Attributes:
        precision: ``[T, R, K, A, M]`` interpolated precision at each recall point.
        recall: ``[T, K, A, M]`` final recall.
        scores: ``[T, R, K, A, M]`` score of the prediction at each recall point.
    """

    precision: np.ndarray
    recall: np.ndarray
    scores: np.ndarray


def accumulate_coco(
    *,
    tp: np.ndarray,
    fp: np.ndarray,
    dt_score: np.ndarray,
    dt_category: np.ndarray,
    dt_image: np.ndarray,
    dt_rank: np.ndarray,
    gt_category: np.ndarray,
    gt_ignore: np.ndarray,
    n_categories: int,
    max_dets: tuple[int, ...],
    recall_thresholds: np.ndarray,
    gt_image: np.ndarray | None = None,
    image_weight: np.ndarray | None = None,
) -> CocoArrays:
    """Accumulate per-category precision/recall curves.

    Args:
        tp, fp: ``[A, T, D]`` bool per kept prediction.
        dt_score, dt_category, dt_image, dt_rank: ``[D]`` score, category
            index, image position (in sorted image-id order) and rank inside
            its (image, category) group.
        gt_category: ``[G]``; gt_ignore: ``[A, G]`` bool.
        n_categories: ``K``.
        max_dets: ``[M]`` per-image caps.
        recall_thresholds: ``[R]``.
        gt_image, image_weight: ``[G]`` image of each ground truth and ``[I]``
            integer multiplicity of each image, for bootstrap replicates: an
            image drawn twice counts twice.  None for the plain evaluation.

    The ordering reproduces pycocotools: within a category, predictions are
    ranked by score, ties by image (sorted ids) then by rank in the image.
    """
    n_area, n_thr, _ = tp.shape
    rec_thr = np.asarray(recall_thresholds, dtype=np.float64)
    n_rec = len(rec_thr)
    n_max = len(max_dets)
    precision = -np.ones((n_thr, n_rec, n_categories, n_area, n_max))
    recall = -np.ones((n_thr, n_categories, n_area, n_max))
    scores = -np.ones((n_thr, n_rec, n_categories, n_area, n_max))

    # Ground truths that count, per category and area range: npig[K, A].
    npig = np.zeros((n_categories, n_area), dtype=np.int64)
    for a in range(n_area):
        counted = ~gt_ignore[a]
        w = None
        if image_weight is not None and gt_image is not None:
            w = image_weight[gt_image[counted]]
        npig[:, a] = np.round(
            np.bincount(gt_category[counted], weights=w, minlength=n_categories)[:n_categories]
        ).astype(np.int64)

    order = np.lexsort((dt_rank, dt_image, -dt_score, dt_category))
    cat_sorted = dt_category[order]
    starts = np.searchsorted(cat_sorted, np.arange(n_categories + 1))
    lanes = n_area * n_thr
    tp2 = tp.reshape(lanes, -1)
    fp2 = fp.reshape(lanes, -1)
    lane_npig_index = np.repeat(np.arange(n_area), n_thr)

    for k in range(n_categories):
        if not npig[k].any():
            continue
        cols_all = order[starts[k] : starts[k + 1]]
        for m, max_det in enumerate(max_dets):
            cols = cols_all[dt_rank[cols_all] < max_det]
            if image_weight is not None:
                mult = image_weight[dt_image[cols]]
                cols, mult = cols[mult > 0], mult[mult > 0]
            n = len(cols)
            tps = tp2[:, cols]
            fps = fp2[:, cols]
            if image_weight is not None:
                tps = tps * mult
                fps = fps * mult
            tp_sum = np.cumsum(tps, axis=1).astype(np.float64)
            fp_sum = np.cumsum(fps, axis=1).astype(np.float64)
            lane_npig = npig[k, lane_npig_index]
            live = lane_npig > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                rc = tp_sum / lane_npig[:, None]
            pr = tp_sum / (fp_sum + tp_sum + _EPS)
            # Interpolated precision: the running maximum from the right.
            env = np.maximum.accumulate(pr[:, ::-1], axis=1)[:, ::-1] if n else pr
            final_recall = rc[:, -1] if n else np.zeros(lanes)

            # The first prediction whose recall reaches each recall point.
            # Recall is tp / npig, monotone in tp, so "rc >= r" is "tp >= c"
            # for the smallest count c with c / npig >= r: exact, no rounding.
            idx = np.full((lanes, n_rec), n, dtype=np.int64)
            if n:
                for a in range(n_area):
                    p = int(npig[k, a])
                    if p == 0:
                        continue
                    need = np.searchsorted(
                        np.arange(p + 1, dtype=np.float64) / p, rec_thr, side="left"
                    )
                    rows = slice(a * n_thr, (a + 1) * n_thr)
                    # tp_sum rows are integer-valued: shift each row into its
                    # own band so one searchsorted serves them all.
                    span = float(tp_sum[rows, -1].max()) + 1.0
                    band = (np.arange(n_thr, dtype=np.float64) * span)[:, None]
                    flat = (tp_sum[rows] + band).ravel()
                    pos = np.searchsorted(flat, (need[None, :] + band).ravel(), side="left")
                    idx[rows] = pos.reshape(n_thr, n_rec) - (np.arange(n_thr) * n)[:, None]
            hit = idx < n
            safe = np.where(hit, idx, 0)
            q = (
                np.where(hit, np.take_along_axis(env, safe, axis=1), 0.0)
                if n
                else np.zeros((lanes, n_rec))
            )
            ss = np.where(hit, dt_score[cols][safe], 0.0) if n else np.zeros((lanes, n_rec))
            # lanes are (area, threshold); the arrays are [T, R, K, A, M].
            q = q.reshape(n_area, n_thr, n_rec)
            ss = ss.reshape(n_area, n_thr, n_rec)
            fr = final_recall.reshape(n_area, n_thr)
            for a in range(n_area):
                if not live[a * n_thr]:
                    continue
                precision[:, :, k, a, m] = q[a]
                scores[:, :, k, a, m] = ss[a]
                recall[:, k, a, m] = fr[a]
    return CocoArrays(precision=precision, recall=recall, scores=scores)


def summarize_coco(
    arrays: CocoArrays,
    iou_thresholds: tuple[float, ...],
    area_labels: tuple[str, ...],
    max_dets: tuple[int, ...],
) -> dict[str, float | None]:
    """The 12 summary statistics of ``COCOeval.summarize``; None where undefined.

    Means are taken over the entries > -1 of the same slices, in the same
    memory order, as pycocotools takes them.
    """

    def stat(ap: bool, iou: float | None = None, area: str = "all", max_det: int | None = None):
        if max_det is None or area not in area_labels or max_det not in max_dets:
            return None
        a = area_labels.index(area)
        m = max_dets.index(max_det)
        s = arrays.precision[:, :, :, a, m] if ap else arrays.recall[:, :, a, m]
        if iou is not None:
            t = np.where(iou == np.asarray(iou_thresholds))[0]
            s = s[t]
        s = s[s > -1]
        return float(np.mean(s)) if s.size else None

    md = max_dets
    last = md[-1] if md else None
    return {
        "AP": stat(True, max_det=last),
        "AP50": stat(True, 0.5, max_det=md[2] if len(md) > 2 else None),
        "AP75": stat(True, 0.75, max_det=md[2] if len(md) > 2 else None),
        "APs": stat(True, area="small", max_det=md[2] if len(md) > 2 else None),
        "APm": stat(True, area="medium", max_det=md[2] if len(md) > 2 else None),
        "APl": stat(True, area="large", max_det=md[2] if len(md) > 2 else None),
        "AR1": stat(False, max_det=md[0] if md else None),
        "AR10": stat(False, max_det=md[1] if len(md) > 1 else None),
        "AR100": stat(False, max_det=md[2] if len(md) > 2 else None),
        "ARs": stat(False, area="small", max_det=md[2] if len(md) > 2 else None),
        "ARm": stat(False, area="medium", max_det=md[2] if len(md) > 2 else None),
        "ARl": stat(False, area="large", max_det=md[2] if len(md) > 2 else None),
    }
