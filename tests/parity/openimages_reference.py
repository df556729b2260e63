"""A plain reference of the Open Images challenge metric, for parity tests.

Written from the TensorFlow Object Detection API's rules, one image, one
class and one detection at a time, as its classes lay them out: the
challenge script groups the CSV rows by image (ids sorted, as numbers when
every id is one), the challenge
evaluator keeps the verified classes of each image, ``PerImageEvaluation``
sorts a class's detections (``np.argsort`` reversed), matches them to the
non-group-of boxes and then to the group-of boxes, and ``metrics`` turns the
joined scores and labels into precision, recall and AP.  The hierarchy
expansion follows the challenge's expansion script: a tree walked
recursively, lists merged child by child.  No vectorisation: clarity over
speed.
"""

from __future__ import annotations

import numpy as np

# -- the hierarchy expansion script ------------------------------------------------


def plain_hierarchy(node: dict, skip_root: bool = False):
    """``(label -> descendants, label -> ancestors, listing)`` of a subtree, recursively."""
    parents: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}
    listing: list[str] = []
    for sub in node.get("Subcategory", []):
        p, c, lst = plain_hierarchy(sub)
        for key, values in p.items():
            if key in parents:
                parents[key].extend(values)
            else:
                parents[key] = values
        for key, values in c.items():
            if key in children:
                children[key].extend(values)
            else:
                children[key] = values
        listing.extend(lst)
    if not skip_root:
        label = node["LabelName"]
        parents[label] = listing
        listing = [label] + listing
        for key in children:
            children[key].append(label)
        children[label] = []
    return parents, children, listing


def expand_rows(tree, boxes, labels):
    """Boxes ``(image, label, ...)`` and labels ``(image, label, confidence)`` as the script writes them."""
    parents, children, _ = plain_hierarchy(tree, skip_root=True)
    out_boxes = []
    for row in boxes:
        out_boxes.append(row)
        for parent in children[row[1]]:
            out_boxes.append((row[0], parent, *row[2:]))
    out_labels = []
    for image, label, confidence in labels:
        out_labels.append((image, label, confidence))
        more = children[label] if int(confidence) == 1 else parents[label]
        for other in more:
            out_labels.append((image, other, confidence))
    return out_boxes, out_labels


# -- np_box_ops ---------------------------------------------------------------------


def intersection(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """``[N, M]`` intersection areas of ``[ymin, xmin, ymax, xmax]`` boxes."""
    ymin1, xmin1, ymax1, xmax1 = np.split(b1, 4, axis=1)
    ymin2, xmin2, ymax2, xmax2 = np.split(b2, 4, axis=1)
    heights = np.maximum(
        np.zeros((len(b1), len(b2))),
        np.minimum(ymax1, ymax2.T) - np.maximum(ymin1, ymin2.T),
    )
    widths = np.maximum(
        np.zeros((len(b1), len(b2))),
        np.minimum(xmax1, xmax2.T) - np.maximum(xmin1, xmin2.T),
    )
    return heights * widths


def area(b: np.ndarray) -> np.ndarray:
    return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])


def iou(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    inter = intersection(b1, b2)
    union = np.expand_dims(area(b1), 1) + np.expand_dims(area(b2), 0) - inter
    return inter / union


def ioa(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """Intersection over the area of ``b2``'s boxes, ``[N, M]``."""
    return intersection(b1, b2) / np.expand_dims(area(b2), 0)


# -- PerImageEvaluation ---------------------------------------------------------------


def tp_fp_single_class(det_boxes, det_scores, gt_boxes, gt_group_of, thr, group_of_weight=1.0):
    """Scores and labels of one class on one image."""
    if det_boxes.size == 0:
        return np.array([], dtype=float), np.array([], dtype=bool)
    keep = det_scores > -10.0
    det_boxes, det_scores = det_boxes[keep], det_scores[keep]
    order = np.argsort(det_scores)[::-1][:10000]
    det_boxes, det_scores = det_boxes[order], det_scores[order]
    n = len(det_scores)
    if gt_boxes.size == 0:
        return det_scores, np.zeros(n, dtype=bool)
    plain = gt_boxes[~gt_group_of]
    groups = gt_boxes[gt_group_of]
    tp = np.zeros(n, dtype=bool)
    in_group = np.zeros(n, dtype=bool)
    if len(plain):
        m = iou(det_boxes, plain)
        best = np.argmax(m, axis=1)
        taken = np.zeros(len(plain), dtype=bool)
        for i in range(n):
            g = best[i]
            if m[i, g] >= thr and not taken[g]:
                tp[i] = True
                taken[g] = True
    group_scores = np.zeros(0, dtype=float)
    group_labels = np.zeros(0, dtype=float)
    if len(groups):
        m = np.transpose(ioa(groups, det_boxes))
        best = np.argmax(m, axis=1)
        group_scores = np.zeros(len(groups), dtype=float)
        for i in range(n):
            g = best[i]
            if not tp[i] and m[i, g] >= thr:
                in_group[i] = True
                group_scores[g] = max(group_scores[g], det_scores[i])
        group_labels = group_of_weight * np.ones(len(group_scores), dtype=float)
        hit = (group_scores > 0) & (group_labels > 0)
        group_scores = group_scores[hit]
        group_labels = group_labels[hit]
    valid = ~in_group
    return (
        np.concatenate((det_scores[valid], group_scores)),
        np.concatenate((tp[valid].astype(float), group_labels)),
    )


# -- metrics ----------------------------------------------------------------------


def average_precision(scores, labels, num_gt):
    if len(scores) == 0:
        return 0.0
    order = np.argsort(scores)[::-1]
    tp = labels[order]
    fp = (tp <= 0).astype(float)
    ctp = np.cumsum(tp)
    cfp = np.cumsum(fp)
    precision = ctp.astype(float) / (ctp + cfp)
    recall = ctp.astype(float) / num_gt
    recall = np.concatenate([[0], recall, [1]])
    precision = np.concatenate([[0], precision, [0]])
    for i in range(len(precision) - 2, -1, -1):
        precision[i] = np.maximum(precision[i], precision[i + 1])
    indices = np.where(recall[1:] != recall[:-1])[0] + 1
    return np.sum((recall[indices] - recall[indices - 1]) * precision[indices])


# -- the challenge evaluator -----------------------------------------------------------


def groupby_order(ids):
    """The image ids in the order ``pandas.DataFrame.groupby('ImageID')`` gives them: as integers
    when every id is one (pandas then reads the column as numbers), else as text."""
    ids = set(ids)
    if ids and all(str(i).isascii() and str(i).isdigit() for i in ids):
        return sorted(ids, key=int)
    return sorted(ids)


def challenge_reference(
    gt_boxes, gt_labels, preds, class_list, thr=0.5, tree=None, group_of_weight=1.0
):
    """AP per class ``[len(class_list)]`` (NaN without ground truth) and mAP.

    Args:
        gt_boxes: ``(image, label, xmin, xmax, ymin, ymax, is_group_of)`` in file order.
        gt_labels: ``(image, label, confidence)`` in file order.
        preds: ``(image, label, score, xmin, xmax, ymin, ymax)`` in file order.
        class_list: the label map, every label of the data in it.
        tree: the hierarchy (parsed JSON), or None.
        group_of_weight: what a group-of box counts (the challenge's 1).
    """
    if tree is not None:
        gt_boxes, gt_labels = expand_rows(tree, gt_boxes, gt_labels)
    cls = {c: i for i, c in enumerate(class_list)}
    n_cls = len(class_list)
    num_gt = np.zeros(n_cls, dtype=float)
    images = groupby_order({r[0] for r in gt_boxes} | {r[0] for r in gt_labels})
    gt_of, evaluatable = {}, {}
    for image in images:
        rows = [r for r in gt_boxes if r[0] == image]
        boxes = np.array([[r[4], r[2], r[5], r[3]] for r in rows], dtype=float).reshape(-1, 4)
        labels = np.array([cls[r[1]] for r in rows], dtype=int)
        group = np.array([r[6] for r in rows], dtype=int).astype(bool)
        verified = np.array([cls[r[1]] for r in gt_labels if r[0] == image], dtype=int)
        evaluatable[image] = np.unique(np.concatenate((verified, labels)))
        gt_of[image] = (boxes, labels, group)
        for c in range(n_cls):
            num_gt[c] += np.sum(labels[~group] == c) + group_of_weight * np.sum(labels[group] == c)
    scores_per_class = [[] for _ in range(n_cls)]
    labels_per_class = [[] for _ in range(n_cls)]
    for image in groupby_order({r[0] for r in preds}):
        rows = [r for r in preds if r[0] == image]
        det_cls = np.array([cls[r[1]] for r in rows], dtype=int)
        det_scores = np.array([r[2] for r in rows], dtype=float)
        det_boxes = np.array([[r[5], r[3], r[6], r[4]] for r in rows], dtype=float).reshape(-1, 4)
        allowed = np.where(np.isin(det_cls, evaluatable.get(image, np.array([]))))
        det_cls, det_scores, det_boxes = det_cls[allowed], det_scores[allowed], det_boxes[allowed]
        valid = (det_boxes[:, 0] < det_boxes[:, 2]) & (det_boxes[:, 1] < det_boxes[:, 3])
        det_cls, det_scores, det_boxes = det_cls[valid], det_scores[valid], det_boxes[valid]
        boxes, labels, group = gt_of.get(
            image, (np.zeros((0, 4)), np.zeros(0, dtype=int), np.zeros(0, dtype=bool))
        )
        for c in range(n_cls):
            s, t = tp_fp_single_class(
                det_boxes[det_cls == c], det_scores[det_cls == c], boxes[labels == c],
                group[labels == c], thr, group_of_weight,
            )  # fmt: skip
            if s.shape[0] > 0:
                scores_per_class[c].append(s)
                labels_per_class[c].append(t)
    ap = np.full(n_cls, np.nan)
    for c in range(n_cls):
        if num_gt[c] == 0:
            continue
        if not scores_per_class[c]:
            ap[c] = 0.0
            continue
        ap[c] = average_precision(
            np.concatenate(scores_per_class[c]), np.concatenate(labels_per_class[c]), num_gt[c]
        )
    return ap, np.nanmean(ap) if np.isfinite(ap).any() else None
