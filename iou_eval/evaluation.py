"""Wire one protocol over an aligned pair of datasets (numpy only).

``run_coco`` computes everything the COCO reports need from one matching
pass: pycocotools' arrays, the summary statistics, and the raw counts the
per-class and per-image tables are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .accumulate import CocoArrays, accumulate_coco, summarize_coco
from .boxes import pair_iou
from .dataset import Dataset
from .matching import Matches, ignored_per_range, match_coco
from .ordering import group_score_order, run_bounds, score_rank
from .parallel import run_parts
from .protocols import Protocol
from .reconcile import Alignment


@dataclass(frozen=True)
class OperatingPoint:
    """Matches at one IoU threshold (area ``all``), for the count-based tables.

    Attributes:
        iou_thr: the threshold.
        dt_rows: ``[D]`` prediction rows that were scored (after maxDets).
        tp, fp: ``[D]`` bool; a prediction that is neither was ignored.
        match_gt: ``[D]`` matched ground-truth row or -1.
        match_iou: ``[D]`` overlap of the match (0 when none).
        gt_counts: ``[G]`` bool, ground truths that count (not crowd, not ignored).
        order: ``[D]`` positions by category, then descending score (ties in
            ``dt_rows`` order), when the evaluation has it at hand; else None.
    """

    iou_thr: float
    dt_rows: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    gt_counts: np.ndarray
    order: np.ndarray | None = None


@dataclass(frozen=True)
class CocoEvaluation:
    """The outcome of the ``coco`` protocol on one alignment."""

    protocol: Protocol
    arrays: CocoArrays
    summary: dict[str, float | None]
    point: OperatingPoint
    accumulate_inputs: dict

    def replicate(self, image_weight: np.ndarray) -> dict[str, float | None]:
        """The summary on a resampled image set (``image_weight[I]`` multiplicities)."""
        arrays = accumulate_coco(**self.accumulate_inputs, image_weight=image_weight)
        p = self.protocol
        out = summarize_coco(
            arrays, p.iou_thresholds, tuple(a.label for a in p.area_ranges), p.max_dets
        )
        # Per-class AP as the per-class table defines it: IoU .50:.95, area all, last maxDets.
        prec = arrays.precision[:, :, :, 0, -1]
        for k in range(prec.shape[2]):
            v = prec[:, :, k]
            v = v[v > -1]
            out[f"AP[{k}]"] = float(np.mean(v)) if v.size else None
        return out


def _groups(gt: Dataset, pred: Dataset, k: int, class_agnostic: bool):
    """Group ids ``[G]``, ``[D]``, in-group order keys, and the number of groups."""
    n_img = len(gt.images)
    if class_agnostic:
        # pycocotools' useCats=0 lists boxes category by category (sorted
        # ids), then in file order: that is their order inside an image.
        gt_order = gt.category_idx * max(len(gt), 1) + np.arange(len(gt))
        dt_order = pred.category_idx * max(len(pred), 1) + np.arange(len(pred))
        return gt.image_idx, pred.image_idx, gt_order, dt_order, n_img
    gt_group = gt.image_idx * k + gt.category_idx
    dt_group = pred.image_idx * k + pred.category_idx
    return gt_group, dt_group, np.arange(len(gt)), np.arange(len(pred)), n_img * k


# Below this many predictions one process is quicker than forking.
PARALLEL_MIN_PREDICTIONS = 200_000


def category_parts(dt_category: np.ndarray, n_categories: int, n_parts: int) -> list[np.ndarray]:
    """Categories dealt into at most ``n_parts`` sets of about equal prediction counts.

    Largest first, each to the lightest set so far (the cost of matching and
    accumulating a category grows with its predictions).  Empty sets are
    dropped; each set is sorted.
    """
    weight = np.bincount(dt_category, minlength=n_categories)[:n_categories]
    load = np.zeros(max(1, n_parts), dtype=np.int64)
    owner = np.zeros(n_categories, dtype=np.int64)
    for c in np.argsort(-weight, kind="stable").tolist():
        j = int(np.argmin(load))
        owner[c] = j
        load[j] += weight[c] + 1
    parts = [np.flatnonzero(owner == j) for j in range(len(load))]
    return [p for p in parts if len(p)]


def _merge_parts(
    parts: list[tuple[Matches, CocoArrays, np.ndarray]],
    owned: list[np.ndarray],
    dt_group: np.ndarray,
    dt_category: np.ndarray,
    max_det: int,
) -> tuple[Matches, CocoArrays, np.ndarray]:
    """One :class:`Matches`, one set of arrays and one score order from category-disjoint parts.

    Predictions are put back in the order one process gives (by group
    ``dt_group[row]``, then rank) so that every later step sums in the same
    order and gives the same bits; records follow their predictions.  Each
    category's arrays come from the part that owns it.  Each part's order
    (by category, then descending score) is renumbered and the parts'
    categories interleaved, which gives the order of the whole.
    """
    ms = [m for m, _, _ in parts]
    rows = np.concatenate([m.dt_rows for m in ms])
    ranks = np.concatenate([m.dt_rank for m in ms])
    # Each part is sorted by this key already: the stable sort merges runs.
    order = np.argsort(dt_group[rows] * max_det + ranks, kind="stable")
    new_pos = np.empty(len(order), dtype=np.int64)
    new_pos[order] = np.arange(len(order))
    offsets = np.cumsum([0] + [len(m.dt_rows) for m in ms])[:-1].tolist()
    merged = Matches(
        dt_rows=rows[order],
        dt_rank=ranks[order],
        n_thresholds=ms[0].n_thresholds,
        outside=np.take(np.concatenate([m.outside for m in ms], axis=1), order, axis=1),
        lane=np.concatenate([m.lane for m in ms]),
        dt=np.concatenate(
            [new_pos[m.dt.astype(np.int64) + off] for m, off in zip(ms, offsets, strict=True)]
        ).astype(np.int32),
        gt=np.concatenate([m.gt for m in ms]),
        tp=np.concatenate([m.tp for m in ms]),
        counted=np.concatenate([m.counted for m in ms]),
        gt_ignore=ms[0].gt_ignore,
    )
    # Each part's order runs category by category: deal its blocks out, in
    # category order, to where the whole order has them.
    blocks: dict[int, np.ndarray] = {}
    for (m, _, o), off in zip(parts, offsets, strict=True):
        if not len(o):
            continue
        cats = dt_category[m.dt_rows[o]]
        bounds = run_bounds(cats)
        renumbered = new_pos[o + off]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            blocks[int(cats[lo])] = renumbered[lo:hi]
    by_score = np.concatenate([blocks[c] for c in sorted(blocks)] or [np.zeros(0, np.int64)])
    arrays = _join_arrays([arrays for _, arrays, _ in parts], owned)
    return merged, arrays, by_score


def _join_arrays(parts: list[CocoArrays], owned: list[np.ndarray]) -> CocoArrays:
    """Arrays over every category from parts that hold their own categories' slices.

    ``parts[i]`` holds ``[T, R, len(owned[i]), A, M]`` (and the like) for the
    categories ``owned[i]``.
    """
    k = sum(len(c) for c in owned)
    first = parts[0]
    precision = np.empty((*first.precision.shape[:2], k, *first.precision.shape[3:]))
    scores = np.empty_like(precision)
    recall = np.empty((first.recall.shape[0], k, *first.recall.shape[2:]))
    for arrays, cats in zip(parts, owned, strict=True):
        precision[:, :, cats] = arrays.precision
        scores[:, :, cats] = arrays.scores
        recall[:, cats] = arrays.recall
    return CocoArrays(precision=precision, recall=recall, scores=scores)


def run_coco(
    alignment: Alignment, protocol: Protocol, iou_thr: float = 0.5, workers: int = 1
) -> CocoEvaluation:
    """Evaluate under COCO rules; ``iou_thr`` picks the operating point of the count tables.

    With ``workers > 1`` (and enough predictions) categories are matched and
    accumulated in that many processes; the results are identical.
    """
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    # pycocotools drops predictions whose category the ground truth lacks.
    in_vocab = pred.category_idx < k
    scored_rows = np.flatnonzero(in_vocab)
    pred_eval = pred if len(scored_rows) == len(pred) else pred.take(scored_rows)
    gt_group, dt_group, gt_order, dt_order, n_groups = _groups(
        gt, pred_eval, k, protocol.class_agnostic
    )

    thresholds = list(protocol.iou_thresholds)
    if iou_thr not in thresholds:
        thresholds.append(iou_thr)
    ignore_flag = gt.is_crowd | gt.ignore if protocol.honour_ignore else gt.is_crowd.copy()
    zero_id = (gt.ann_id == 0) if protocol.zero_id_quirk else np.zeros(len(gt), dtype=bool)
    area_bounds = np.array([[a.lo, a.hi] for a in protocol.area_ranges], dtype=np.float64)
    max_det = max(protocol.max_dets)
    n_t = len(protocol.iou_thresholds)
    # Per area range, for the whole ground truth (parts see only theirs).
    gt_ignore = ignored_per_range(ignore_flag, gt.area, area_bounds)

    def accumulate_inputs(
        m: Matches, order: np.ndarray | None = None, rank: tuple[np.ndarray, int] | None = None
    ) -> dict:
        """The arguments of :func:`accumulate_coco`; ``order`` computed when None.

        ``rank``: the score rank of the predictions ``m.dt_rows``, if known.
        """
        if protocol.class_agnostic:
            dt_cat = np.zeros(len(m.dt_rows), dtype=np.int64)
            gt_cat = np.zeros(len(gt), dtype=np.int64)
            n_k = 1
        else:
            dt_cat = pred_eval.category_idx[m.dt_rows]
            gt_cat = gt.category_idx
            n_k = k
        dt_score = pred_eval.scores[m.dt_rows]
        return dict(
            outside=m.outside,
            rec_lane=m.lane,
            rec_dt=m.dt,
            rec_tp=m.tp,
            rec_counted=m.counted,
            lane_thresholds=len(thresholds),
            n_thresholds=n_t,
            dt_score=dt_score,
            dt_category=dt_cat,
            dt_image=pred_eval.image_idx[m.dt_rows],
            dt_rank=m.dt_rank,
            gt_category=gt_cat,
            gt_ignore=m.gt_ignore,
            n_categories=n_k,
            max_dets=protocol.max_dets,
            recall_thresholds=np.asarray(protocol.recall_thresholds, dtype=np.float64),
            gt_image=gt.image_idx,
            # Kept for bootstrap replicates, which then need not sort again.
            order=group_score_order(dt_cat, dt_score, rank) if order is None else order,
        )

    def match_and_accumulate(cats: np.ndarray | None) -> tuple[Matches, CocoArrays, np.ndarray]:
        """Match and accumulate the categories ``cats`` (all when None).

        Matches come back in the rows of ``gt`` and ``pred_eval``, with the
        accumulation's order of their predictions.
        """
        g_rows: slice | np.ndarray = slice(None)
        d_rows: slice | np.ndarray = slice(None)
        if cats is not None:
            g_rows = np.flatnonzero(np.isin(gt.category_idx, cats))
            d_rows = np.flatnonzero(np.isin(pred_eval.category_idx, cats))
        # One score sort serves the matcher's order and the accumulation's.
        rank, n_levels = score_rank(pred_eval.scores[d_rows])
        m = match_coco(
            gt_xyxy=gt.xyxy if isinstance(g_rows, slice) else np.take(gt.xyxy, g_rows, axis=0),
            gt_bbox_area=gt.bbox_area[g_rows],
            gt_area=gt.area[g_rows],
            gt_crowd=gt.is_crowd[g_rows],
            gt_ignore_flag=ignore_flag[g_rows],
            gt_zero_id=zero_id[g_rows],
            gt_group=gt_group[g_rows],
            gt_order_key=gt_order[g_rows],
            dt_xyxy=(
                pred_eval.xyxy
                if isinstance(d_rows, slice)
                else np.take(pred_eval.xyxy, d_rows, axis=0)
            ),
            dt_bbox_area=pred_eval.bbox_area[d_rows],
            dt_score=pred_eval.scores[d_rows],
            dt_group=dt_group[d_rows],
            dt_order_key=dt_order[d_rows],
            n_groups=n_groups,
            iou_thresholds=np.asarray(thresholds, dtype=np.float64),
            area_ranges=area_bounds,
            max_det=max_det,
            dt_score_rank=(rank, n_levels),
        )
        kept_rank = (rank[m.dt_rows], n_levels)
        if isinstance(g_rows, np.ndarray) and isinstance(d_rows, np.ndarray):
            m = m.in_rows(g_rows, d_rows, gt_ignore)
        inputs = accumulate_inputs(m, rank=kept_rank)
        arrays = accumulate_coco(**inputs)
        if cats is not None:  # only this part's categories travel back
            arrays = CocoArrays(
                precision=arrays.precision[:, :, cats],
                recall=arrays.recall[:, cats],
                scores=arrays.scores[:, :, cats],
            )
        return m, arrays, inputs["order"]

    parts = None
    if workers > 1 and not protocol.class_agnostic and len(pred_eval) >= PARALLEL_MIN_PREDICTIONS:
        parts = category_parts(pred_eval.category_idx, k, workers)
    if parts is not None and len(parts) > 1:
        m, arrays, order = _merge_parts(
            run_parts(match_and_accumulate, parts),
            parts,
            dt_group,
            pred_eval.category_idx,
            max_det,
        )
    else:
        m, arrays, order = match_and_accumulate(None)
    acc_inputs = accumulate_inputs(m, order)
    summary = summarize_coco(
        arrays,
        protocol.iou_thresholds,
        tuple(a.label for a in protocol.area_ranges),
        protocol.max_dets,
    )
    t = thresholds.index(iou_thr)
    tp, fp, match_gt = m.at(0, t)
    # The overlaps of the operating point's matches (the records keep none).
    hit = np.flatnonzero(match_gt >= 0)
    rows, g = m.dt_rows[hit], match_gt[hit]
    match_iou = np.zeros(len(match_gt), dtype=np.float64)
    match_iou[hit] = pair_iou(
        np.take(pred_eval.xyxy, rows, axis=0),
        pred_eval.bbox_area[rows],
        np.take(gt.xyxy, g, axis=0),
        gt.bbox_area[g],
        gt.is_crowd[g],
    )
    point = OperatingPoint(
        iou_thr=iou_thr,
        dt_rows=scored_rows[m.dt_rows],
        tp=tp,
        fp=fp,
        match_gt=match_gt,
        match_iou=match_iou,
        gt_counts=~m.gt_ignore[0],
        # The count tables' classes are the categories unless class-agnostic.
        order=None if protocol.class_agnostic else order,
    )
    return CocoEvaluation(
        protocol=protocol,
        arrays=arrays,
        summary=summary,
        point=point,
        accumulate_inputs=acc_inputs,
    )
