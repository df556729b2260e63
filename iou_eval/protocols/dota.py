"""The DOTA devkit's task-1 evaluation (``dota_evaluation_task1.py``), in numpy.

Per class, predictions in descending confidence, equal ones in the order
the devkit's ``np.argsort(-confidence)`` leaves them (the same call on the
same array).  Each looks at the ground
truths of its image and class whose enclosing boxes overlap its own (the
devkit's prefilter: IoU of the axis-aligned enclosures with +1-pixel
extents above 0) and takes the one of highest polygon IoU, computed as the
devkit's ``polyiou`` computes it (:mod:`iou_eval.geometry.polyiou`), the
first of equal ones.  Above 0.5 (strictly) it is a true positive unless
that object is difficult (then ignored) or already taken (a false
positive); otherwise a false positive.  AP is VOC2007's 11-point
interpolation (``dota``, the devkit's default) or the area under the
precision envelope (``dota-allpoint``), summed as the devkit sums it.

Where iou-eval departs from the devkit's code, on purpose:

- a class without ground truth has no AP (``null``) and mAP is the mean
  over the classes that have ground truth; the devkit divides by its fixed
  list of 15 classes and counts 0 for such a class (the report says what
  that mean would be);
- predictions on images that are not in the ground truth are set aside
  with a warning (the devkit stops with a ``KeyError``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.oriented import DOTA_CLASS_LISTS, dataset_corners, not_convex_note
from iou_eval.data.reconcile import Alignment
from iou_eval.geometry.pairs import candidate_pairs
from iou_eval.geometry.polyiou import iou_poly
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.voc import VocEvaluation, class_aps, devkit_claims, mean_ap


def class_key(name: object) -> str:
    """The summary key of one class's AP: ``AP[plane]``."""
    return f"AP[{name}]"


@dataclass(frozen=True)
class DotaEvaluation(VocEvaluation):
    """The outcome of ``dota`` / ``dota-allpoint``: AP per class and mAP, as :class:`VocEvaluation`.

    Attributes:
        class_names: ``[K]`` names of the ground truth's categories, for the
            summary's ``AP[name]`` keys.
    """

    class_names: tuple[str, ...] = ()

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]:
        ap = class_aps(**self.curve_inputs, image_weight=image_weight)
        if self.protocol.class_agnostic:
            return {"mAP": mean_ap(ap)}, ap
        return summary_of(ap, self.class_order, self.class_names), ap


def summary_of(
    ap: np.ndarray, class_order: tuple[int, ...], class_names: tuple[str, ...]
) -> dict[str, float | None]:
    """``{"mAP", "AP[name]"...}``: the mean over classes with ground truth, then each class's AP
    (None without ground truth) in the class list's order."""
    out: dict[str, float | None] = {"mAP": mean_ap(ap, class_order)}
    order = class_order if len(class_order) else tuple(range(len(class_names)))
    for k in order:
        value = float(ap[k])
        out[class_key(class_names[k])] = None if np.isnan(value) else value
    return out


def enclosure_overlap(dt_xyxy: np.ndarray, gt_xyxy: np.ndarray) -> np.ndarray:
    """``[P]`` the devkit's prefilter: IoU of enclosing boxes with +1-pixel extents.

    As the devkit computes it: ``iw = max(min(x2) - max(x1) + 1, 0)``, the
    union from the boxes' ``(w + 1) (h + 1)``.
    """
    iw = np.maximum(
        np.minimum(gt_xyxy[:, 2], dt_xyxy[:, 2]) - np.maximum(gt_xyxy[:, 0], dt_xyxy[:, 0]) + 1.0,
        0.0,
    )
    ih = np.maximum(
        np.minimum(gt_xyxy[:, 3], dt_xyxy[:, 3]) - np.maximum(gt_xyxy[:, 1], dt_xyxy[:, 1]) + 1.0,
        0.0,
    )
    inters = iw * ih
    uni = (
        (dt_xyxy[:, 2] - dt_xyxy[:, 0] + 1.0) * (dt_xyxy[:, 3] - dt_xyxy[:, 1] + 1.0)
        + (gt_xyxy[:, 2] - gt_xyxy[:, 0] + 1.0) * (gt_xyxy[:, 3] - gt_xyxy[:, 1] + 1.0)
        - inters
    )
    return inters / uni


def devkit_order(dt_class: np.ndarray, dt_score: np.ndarray) -> np.ndarray:
    """``[D]`` the predictions by class, each class ranked as the devkit's ``voc_eval`` ranks it.

    The devkit reads a class's results file and sorts its lines with
    ``np.argsort(-confidence)``: numpy's default sort, whose order of equal
    confidences is numpy's (it depends on the numpy build and the CPU).  The
    very same call is made on the very same array, the class's predictions
    in file order (``dt_class`` and ``dt_score`` are in file order), so that
    equal confidences come out as they come out of the devkit run with the
    same numpy on the same machine.
    """
    by_class = np.argsort(dt_class, kind="stable")
    bounds = np.searchsorted(dt_class[by_class], np.arange(int(dt_class.max(initial=-1)) + 2))
    parts = [np.zeros(0, dtype=np.int64)]
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        rows = by_class[lo:hi]
        parts.append(rows[np.argsort(-dt_score[rows])])
    return np.concatenate(parts).astype(np.int64)


def match_dota(
    *,
    gt_corners: np.ndarray,
    gt_difficult: np.ndarray,
    gt_group: np.ndarray,
    dt_corners: np.ndarray,
    dt_score: np.ndarray,
    dt_group: np.ndarray,
    dt_class: np.ndarray,
    n_groups: int,
    iou_thr: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The devkit's matching of every class at once.

    Args:
        gt_corners: ``[G, 4, 2]`` as the files give them; gt_difficult: ``[G]``
            bool; gt_group: ``[G]`` (image x class).
        dt_corners: ``[D, 4, 2]``; dt_score, dt_group, dt_class: ``[D]``.

    Returns:
        ``order[D]`` (by class, then as :func:`devkit_order` ranks them) and, aligned with it, ``tp[D]``, ``fp[D]`` bool, ``best_gt[D]``
        (-1: none looked at), ``best_iou[D]``.
    """
    n_dt = len(dt_score)
    order = devkit_order(dt_class, dt_score)
    gt_sorted = np.argsort(gt_group, kind="stable")  # the file's order within an image
    g_starts = np.searchsorted(gt_group[gt_sorted], np.arange(n_groups + 1))
    gt_box = np.concatenate([gt_corners.min(axis=1), gt_corners.max(axis=1)], axis=1)
    dt_box = np.concatenate([dt_corners.min(axis=1), dt_corners.max(axis=1)], axis=1)
    pd, pg = _near_pairs(dt_group[order], g_starts, gt_sorted, dt_box[order], gt_box)
    ov = iou_poly(np.take(gt_corners, pg, axis=0), np.take(dt_corners, order[pd], axis=0))
    tp, fp, best_gt, best_iou, _ = devkit_claims(pd, pg, ov, n_dt, gt_difficult, iou_thr)
    return order, tp, fp, best_gt, best_iou


# Candidate pairs looked at per step: a car park of 3000 cars and 4000 detections
# makes 12 million pairs in one image and class, of which the prefilter keeps few.
_PAIR_BUDGET = 1 << 21


def _near_pairs(
    groups: np.ndarray,
    g_starts: np.ndarray,
    gt_sorted: np.ndarray,
    dt_box: np.ndarray,
    gt_box: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the devkit looks at: same image and class, enclosing boxes overlapping (+1 pixel).

    Args:
        groups: ``[D]`` each ranked prediction's group; dt_box: ``[D, 4]`` its enclosing box.
        g_starts: ``[groups + 1]`` offsets into ``gt_sorted[G]`` (ground truths by group,
            file order within); gt_box: ``[G, 4]``.

    Returns:
        ``(dt_pos[P], gt_row[P])`` by prediction, then ground truth in file order;
        predictions are taken a bounded number of candidate pairs at a time.
    """
    counts = g_starts[groups + 1] - g_starts[groups]
    ends = np.cumsum(counts)
    cuts = np.searchsorted(ends, np.arange(_PAIR_BUDGET, int(ends[-1]) if len(ends) else 0,
                                           _PAIR_BUDGET), side="right")  # fmt: skip
    bounds = [0, *np.unique(cuts).tolist(), len(groups)]
    parts_d, parts_g = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if hi <= lo:
            continue
        pd, pg = candidate_pairs(groups[lo:hi], g_starts)
        pg = gt_sorted[pg]
        keep = enclosure_overlap(dt_box[lo:hi][pd], gt_box[pg]) > 0
        parts_d.append(pd[keep] + lo)
        parts_g.append(pg[keep])
    return np.concatenate(parts_d), np.concatenate(parts_g)


def run_dota(
    alignment: Alignment, protocol: Protocol, iou_thr: float | None = None
) -> DotaEvaluation:
    """Evaluate under ``dota`` or ``dota-allpoint``; ``iou_thr`` overrides the devkit's 0.5."""
    gt, pred = alignment.gt, alignment.pred
    k = alignment.n_categories
    thr = protocol.iou_thresholds[0] if iou_thr is None else float(iou_thr)
    protocol = replace(protocol, iou_thresholds=(thr,))
    scored = np.flatnonzero(pred.category_idx < k)
    dt_class = pred.category_idx[scored].astype(np.int64)
    agnostic = protocol.class_agnostic
    k_groups = 1 if agnostic else k
    gt_class = np.zeros(len(gt), np.int64) if agnostic else gt.category_idx.astype(np.int64)
    dt_key = np.zeros(len(scored), np.int64) if agnostic else dt_class
    # int64: image and category indices may be int32, I * K not.
    gt_group = gt.image_idx.astype(np.int64) * k_groups + gt_class
    dt_group = pred.image_idx[scored].astype(np.int64) * k_groups + dt_key
    # DOTA has no crowd regions: a crowd box is treated like a difficult one.
    difficult = gt.ignore | gt.is_crowd
    order, tp, fp, best_gt, best_iou = match_dota(
        gt_corners=dataset_corners(gt),
        gt_difficult=difficult,
        gt_group=gt_group,
        dt_corners=np.take(dataset_corners(pred), scored, axis=0),
        dt_score=pred.scores[scored],
        dt_group=dt_group,
        dt_class=dt_key,
        n_groups=len(gt.images) * k_groups,
        iou_thr=thr,
    )
    cls_sorted = dt_key[order]
    curve_inputs = dict(
        tp=tp,
        fp=fp,
        dt_image=pred.image_idx[scored][order],
        starts=np.searchsorted(cls_sorted, np.arange(k_groups + 1)),
        gt_class=gt_class,
        gt_image=gt.image_idx,
        gt_counts=~difficult,
        eleven_point=protocol.name == "dota",
    )
    ap = class_aps(**curve_inputs)
    class_order = () if agnostic else alignment.class_order
    names = ("all classes",) if agnostic else tuple(str(n) for n in gt.categories.names[:k])
    point = OperatingPoint(
        iou_thr=thr,
        dt_rows=scored[order],
        tp=tp,
        fp=fp,
        match_gt=np.where(tp, best_gt, -1),
        match_iou=np.where(tp, best_iou, 0.0),
        gt_counts=~difficult,
    )
    return DotaEvaluation(
        protocol=protocol,
        ap=ap,
        summary=summary_of(ap, class_order, names) if not agnostic else {"mAP": mean_ap(ap)},
        point=point,
        curve_inputs=curve_inputs,
        class_order=class_order,
        class_names=names,
    )


def devkit_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    """What the DOTA devkit would have done otherwise with these files.

    Predictions that are not convex quadrilaterals are scored as the devkit
    scores them (its ``polyiou`` on the corners as given): one note says how
    many.  Its mAP divides by its fixed class list (15 classes for DOTA-v1.0)
    and counts 0 for a class without ground truth that is not difficult; here
    such a class has no AP and mAP averages the others.
    """
    loose = not_convex_note(
        alignment.pred,
        "the DOTA protocols score them as the devkit does (its polyiou on the corners as given)",
    )
    return ([loose] if loose else []) + _class_list_notes(alignment, protocol)


def _class_list_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    """The devkit's mean over its fixed class list, when classes of that list lack ground truth."""
    gt = alignment.gt
    k = alignment.n_categories
    names = [str(n) for n in gt.categories.names[:k]]
    counted = np.bincount(gt.category_idx[~(gt.ignore | gt.is_crowd)], minlength=k)[:k]
    with_gt = {n for n, c in zip(names, counted, strict=True) if c}
    listed = next(((v, lst) for v, lst in DOTA_CLASS_LISTS.items() if set(names) <= set(lst)), None)
    if protocol.class_agnostic or listed is None or not with_gt:
        return []
    version, classes = listed
    missing = [c for c in classes if c not in with_gt]
    if not missing:
        return []
    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
    return [
        f"{protocol.name}: {len(missing)} of the {len(classes)} {version} classes have no ground "
        f"truth that counts here ({shown}); they have no AP and mAP averages the "
        f"{len(with_gt)} others. The DOTA devkit divides by all {len(classes)} and counts 0 for "
        f"each of them: its mAP would be {len(with_gt)}/{len(classes)} of this one"
    ]
