"""The LVIS protocol: lvis-api 0.5.3's ``LVISEval`` on COCO's matching and accumulation.

LVIS is COCO's evaluation with federated labels.  Where its rules agree
with pycocotools' this module hands the work to :mod:`.coco` (matching,
accumulation, parts); what differs is decided here, before and after:

* at most 300 results per image, the top scores across categories (ties in
  file order), before anything else (``LVISResults.limit_dets_per_image``);
* a result, and a ground truth, whose ``area`` is not above 0 is not
  evaluated at all (``get_ann_ids`` keeps ``0 < area < inf``);
* per image, only the categories labelled there (a ground truth of them)
  or listed in the image's ``neg_category_ids`` are evaluated: other
  results are dropped, not counted as false positives;
* an unmatched result of a category in the image's
  ``not_exhaustive_category_ids`` is ignored, as one outside the area range is;
* ``iscrowd`` means nothing (plain IoU, no region absorbs results) and a
  ground truth's own ``ignore`` flag is kept;
* no per-category cap (the 300 per image is the only one), so precision
  and recall have one maxDets slice;
* AP over the categories with ground truth, and APr / APc / APf over those
  of each ``frequency`` group, as lvis-api's ``_summarize`` averages them.

Matching and accumulation are then pycocotools' (lvis-api's ``evaluate_img``
and ``accumulate`` are the same operations): the arrays are bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import chain

import numpy as np

from iou_eval.data.dataset import Dataset, normalize_id
from iou_eval.data.ordering import narrow_index
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.coco import (
    CocoEvaluation,
    OperatingPoint,
    accumulation_inputs,
    operating_point,
    prepare,
)
from iou_eval.protocols.params import LVIS_MAX_DETS, LVIS_STATS, Protocol
from iou_eval.protocols.partition import PartExecutor, match_in_parts
from iou_eval.protocols.point_parts import point_in_parts

FREQUENCY_GROUPS = ("r", "c", "f")


def federated_ground_truth(gt: Dataset) -> bool:
    """Whether ``gt`` is an LVIS dataset: images with category lists, or category frequencies."""
    return gt.images.federated or gt.categories.frequency is not None


def top_per_image(image_idx: np.ndarray, score: np.ndarray, cap: int) -> np.ndarray:
    """``[D]`` bool: the result is among its image's ``cap`` best scores.

    ``LVISResults.limit_dets_per_image``: an image's results sorted by
    descending score, stably (equal scores keep file order), the first
    ``cap`` kept; an image with at most ``cap`` keeps all.
    """
    n = len(image_idx)
    keep = np.ones(n, dtype=bool)
    if not n or int(np.bincount(image_idx).max()) <= cap:
        return keep
    # lexsort is stable: the row number breaks ties as file order does.
    order = np.lexsort((-score, image_idx))
    img = image_idx[order]
    starts = np.searchsorted(img, np.arange(int(img[-1]) + 2))
    rank = np.arange(n) - starts[img]
    keep[order] = rank < cap
    return keep


def _norm(key: object) -> object:
    try:
        return normalize_id(key)
    except ValueError:
        return key


def _positions(ids: list, categories: tuple) -> np.ndarray:
    """``[len(ids)]`` int64: each id's position among ``categories`` (normalized), -1 where none.

    Integer ids (LVIS's) are looked up in the sorted category ids at once;
    others (a string id, two categories of the same id: the last one counts)
    one by one in a dict.
    """
    keys = [_norm(c) for c in categories]
    values = np.array(ids) if ids else np.zeros(0, dtype=np.int64)
    table = np.array(keys) if keys else np.zeros(0, dtype=np.int64)
    if values.dtype.kind == "i" and table.dtype.kind == "i" and len(set(keys)) == len(keys):
        if not len(values) or not len(table):
            return np.full(len(values), -1, dtype=np.int64)
        order = np.argsort(table, kind="stable")
        ordered = table[order]
        at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
        return np.where(ordered[at] == values, order[at], -1).astype(np.int64)
    pos = {c: i for i, c in enumerate(keys)}
    return np.fromiter((pos.get(c, -1) for c in ids), dtype=np.int64, count=len(ids))


def _pair_keys(lists: tuple[tuple, ...] | None, categories: tuple) -> np.ndarray:
    """int64 keys ``image * K + category`` of the (image, category) pairs an LVIS list names.

    ``categories``: the ``K`` ground-truth category ids.  Ids that are not
    among them name nothing a result can have (lvis-api drops such results
    first).
    """
    if lists is None:
        return np.zeros(0, dtype=np.int64)
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    cats = _positions(list(chain.from_iterable(lists)), categories)
    images = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    known = cats >= 0
    return images[known] * len(categories) + cats[known]


# Up to this many (image, category) pairs, membership is a lookup in a flag per pair
# (128 MiB at most): a pass over the keys, where a search is a cache miss per key.
DENSE_PAIRS = 1 << 27


def _pair_flags(keys: np.ndarray, tables: tuple[np.ndarray, ...], n_pairs: int) -> np.ndarray:
    """``[N]`` uint8: bit ``j`` set where the key (in ``[0, n_pairs)``) is in ``tables[j]``.

    One table of flags for all the lists, one pass over the keys (past
    DENSE_PAIRS: a search of each list, sorted).
    """
    out = np.zeros(len(keys), dtype=np.uint8)
    if not len(keys) or not any(len(t) for t in tables):
        return out
    if n_pairs <= DENSE_PAIRS:
        flags = np.zeros(n_pairs, dtype=np.uint8)
        for j, table in enumerate(tables):
            flags[table] |= np.uint8(1 << j)
        return flags[keys]
    for j, table in enumerate(tables):
        if len(table):
            table = np.sort(table)
            i = np.minimum(np.searchsorted(table, keys), len(table) - 1)
            out |= (table[i] == keys).astype(np.uint8) << np.uint8(j)
    return out


@dataclass(frozen=True)
class FederatedView:
    """What lvis-api evaluates of an alignment.

    Attributes:
        alignment: the rows evaluated (ground truths without crowd flags).
        gt_rows: ``[G']`` their rows in the given alignment's ground truth.
        pred_rows: ``[D']`` their rows in the given alignment's predictions.
        unmatched_ignored: ``[D']`` bool, the result's category is not
            exhaustively labelled on its image.
        groups: the categories (positions ``< K``) of each frequency group
            ``r``, ``c``, ``f``, ascending.
    """

    alignment: Alignment
    gt_rows: np.ndarray
    pred_rows: np.ndarray
    unmatched_ignored: np.ndarray
    groups: tuple[np.ndarray, ...]


def federated_view(alignment: Alignment) -> FederatedView:
    """The ground truths and results lvis-api's ``LVISEval`` evaluates, with its per-image rules."""
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    top = top_per_image(pred.image_idx, pred.scores, LVIS_MAX_DETS)
    gt_rows = np.flatnonzero(gt.area > 0)  # areas are finite: "< inf" holds
    g_key = gt.image_idx[gt_rows].astype(np.int64) * k + gt.category_idx[gt_rows]
    categories = gt.categories.ids[:k]
    labelled = np.concatenate([g_key, _pair_keys(gt.images.negative, categories)])
    not_exhaustive = _pair_keys(gt.images.not_exhaustive, categories)
    n_pairs = len(gt.images) * k
    keep = top & (pred.category_idx < k) & (pred.area > 0)
    d_key = pred.image_idx[keep].astype(np.int64) * k + pred.category_idx[keep]
    # bit 0: the image labels the category; bit 1: not exhaustively.
    flags = _pair_flags(d_key, (labelled, not_exhaustive), n_pairs)
    labelled_here = (flags & 1).astype(bool)
    keep[keep] = labelled_here
    pred_rows = np.flatnonzero(keep)
    view = replace(
        alignment,
        gt=replace(gt.take(gt_rows), is_crowd=np.zeros(len(gt_rows), dtype=bool)),
        pred=pred.take_scored(pred_rows),
    )
    return FederatedView(
        alignment=view,
        gt_rows=narrow_index(gt_rows),
        pred_rows=narrow_index(pred_rows),
        unmatched_ignored=(flags[labelled_here] & 2).astype(bool),
        groups=frequency_groups(gt.categories.frequency, k),
    )


def frequency_groups(frequency: tuple[str | None, ...] | None, k: int) -> tuple[np.ndarray, ...]:
    """The category positions of each group ``r``, ``c``, ``f`` (``_prepare_freq_group``)."""
    freq = (frequency or ())[:k]
    return tuple(
        np.array([i for i, f in enumerate(freq) if f == g], dtype=np.int64)
        for g in FREQUENCY_GROUPS
    )


def summarize_lvis(
    arrays: CocoArrays,
    iou_thresholds: tuple[float, ...],
    area_labels: tuple[str, ...],
    groups: tuple[np.ndarray, ...],
) -> dict[str, float | None]:
    """lvis-api's 13 summary statistics (``LVISEval.summarize``); None where it gives -1.

    Means over the entries > -1 of the same slices, in the same memory
    order (threshold, recall point, category), as lvis-api takes them.
    """

    slices: dict[tuple[bool, int], np.ndarray] = {}

    def area_slice(ap: bool, a: int) -> np.ndarray:
        # One contiguous copy per area, shared by the statistics that read it
        # (the same values in the same order as the strided view).
        if (ap, a) not in slices:
            view = arrays.precision[:, :, :, a, 0] if ap else arrays.recall[:, :, a, 0]
            slices[ap, a] = np.ascontiguousarray(view)
        return slices[ap, a]

    def stat(ap: bool, iou: float | None, area: str, group: str | None) -> float | None:
        if area not in area_labels:
            return None
        s = area_slice(ap, area_labels.index(area))
        if iou is not None:
            s = s[np.where(iou == np.asarray(iou_thresholds))[0]]
        if group is not None:
            s = s[:, :, groups[FREQUENCY_GROUPS.index(group)]]
        s = s[s > -1]
        return float(np.mean(s)) if s.size else None

    return {key: stat(*rule) for key, rule in LVIS_STATS.items()}


@dataclass(frozen=True)
class LvisEvaluation(CocoEvaluation):
    """The outcome of the ``lvis`` protocol: COCO's record, with lvis-api's summary.

    ``arrays`` are ``[T, R, K, A, 1]`` (lvis-api's ``[T, R, K, A]`` with the one
    maxDets slice); ``point`` names rows of the alignment given to :func:`run_lvis`.

    Attributes:
        groups: the categories of each frequency group (``r``, ``c``, ``f``).
    """

    groups: tuple[np.ndarray, ...] = ()

    def read_slices(self) -> tuple[set[tuple[int, int]], set[tuple[int, int]]] | None:
        # Precision of every area range (its curve gives the recall too).
        return {(a, 0) for a in range(len(self.protocol.area_ranges))}, set()

    def summarize(self, arrays: CocoArrays) -> dict[str, float | None]:
        labels = tuple(a.label for a in self.protocol.area_ranges)
        return summarize_lvis(arrays, self.protocol.iou_thresholds, labels, self.groups)


def _in_given_rows(point: OperatingPoint, view: FederatedView, n_gt: int) -> OperatingPoint:
    """The operating point's ground-truth rows as rows of the given alignment's ground truth."""
    # Only matched entries are looked up: with no ground truth at all (an image
    # with only neg_category_ids) there is no row to index.
    matched = point.match_gt >= 0
    match_gt = np.full(point.match_gt.shape, -1, dtype=np.int64)
    match_gt[matched] = view.gt_rows[point.match_gt[matched]]
    counts = np.zeros(n_gt, dtype=bool)
    counts[view.gt_rows] = point.gt_counts
    return replace(point, match_gt=narrow_index(match_gt), gt_counts=counts)


def run_lvis(
    alignment: Alignment,
    protocol: Protocol,
    iou_thr: float = 0.5,
    workers: int = 1,
    executor: PartExecutor | None = None,
    keep_accumulation: bool = True,
) -> LvisEvaluation:
    """Evaluate under lvis-api's rules; ``iou_thr`` picks the operating point of the count tables.

    As :func:`~iou_eval.protocols.coco_run.run_coco` (parts, workers, a cluster),
    on :func:`federated_view`'s rows; the operating point names rows of ``alignment``.
    """
    view = federated_view(alignment)
    setup = prepare(view.alignment, protocol, iou_thr, protocol.iou_type)
    setup = replace(
        setup,
        # Every evaluated result has a ground-truth category: scored_rows is
        # all of them, renumbered here to the given alignment's rows.
        scored_rows=narrow_index(view.pred_rows[setup.scored_rows].astype(np.int64)),
        unmatched_ignored=view.unmatched_ignored[setup.scored_rows],
    )
    n_gt = len(alignment.gt)
    if not keep_accumulation and executor is None:
        arrays, point = point_in_parts(setup, workers, iou_thr)
        ev = LvisEvaluation(
            protocol, arrays, {}, _in_given_rows(point, view, n_gt), None, view.groups
        )
    else:
        m, arrays, order = match_in_parts(setup, workers, executor)
        ev = LvisEvaluation(
            protocol=protocol,
            arrays=arrays,
            summary={},
            point=_in_given_rows(operating_point(setup, m, order, iou_thr), view, n_gt),
            accumulation=accumulation_inputs(setup, m, order),
            groups=view.groups,
        )
    return replace(ev, summary=ev.summarize(arrays))
