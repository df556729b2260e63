"""COCO JSON: a dataset (ground truth) or a results list (predictions).

Ground truth: ``images`` (id, file_name, width, height), ``categories``
(id, name) and ``annotations`` (id, image_id, category_id, bbox as x, y,
w, h, area, iscrowd, ``ignore`` where flagged, ``segmentation`` as polygons
or an RLE).  Predictions: a list of ``image_id, category_id, bbox, score``
(``segmentation`` where given).  Integer ids are kept; other ids (file
stems, class names) become ``1..n`` in the order the evaluation sorts them,
so the converted pair scores as the original one.  ``w = x2 - x1``: a
subtraction, exact for whole pixels, within the last bit otherwise.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from iou_eval.io.writers.common import dropped, integer_ids, plain
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _segmentation(labels: Labels, row: int, xyxy: np.ndarray, fill: bool) -> Any:
    """A row's segmentation: its polygon parts, its RLE, its box's rectangle (``fill``) or None."""
    if labels.polygons is not None and labels.polygons[row] is not None:
        return [[plain(v) for v in part] for part in labels.polygons[row] or []]
    if labels.rles is not None and labels.rles[row] is not None:
        rle = dict(labels.rles[row] or {})
        counts = rle.get("counts")
        if isinstance(counts, bytes):
            rle["counts"] = counts.decode("ascii")
        return rle
    if fill:
        x1, y1, x2, y2 = (plain(v) for v in xyxy)
        return [[x1, y1, x2, y1, x2, y2, x1, y2]]
    return None


def _boxes(labels: Labels) -> list[list[int | float]]:
    xyxy = labels.rows.xyxy
    xywh = np.column_stack([xyxy[:, :2], xyxy[:, 2:] - xyxy[:, :2]])
    return [[plain(v) for v in row] for row in xywh.tolist()]


def _images(labels: Labels, image_ids: list[int]) -> list[dict[str, Any]]:
    out = []
    im = labels.images
    for i, image_id in enumerate(image_ids):
        rec: dict[str, Any] = {"id": image_id, "file_name": labels.image_name(i)}
        if np.isfinite(im.width[i]) and np.isfinite(im.height[i]):
            rec["width"], rec["height"] = plain(im.width[i]), plain(im.height[i])
        out.append(rec)
    return out


def _categories(labels: Labels, cat_ids: list[int]) -> list[dict[str, Any]]:
    names = labels.categories.names
    return [{"id": c, "name": str(names[k])} for k, c in enumerate(cat_ids)]


def write_coco(labels: Labels, context: Context) -> Written:
    """``labels`` as one COCO JSON file."""
    keep, notes = dropped(labels, get_target("coco").keeps, "COCO JSON")
    rows = labels.rows
    image_ids = integer_ids(labels.images.ids)
    cat_ids = integer_ids(labels.categories.ids)
    boxes = _boxes(labels)
    # With any outline, every row has one (a box its rectangle), as segm scoring reads them.
    fill = labels.polygons is not None and not labels.is_prediction
    img, cat = rows.image_idx.tolist(), rows.category_idx.tolist()
    if labels.is_prediction:
        scores = rows.scores.tolist()
        out: Any = []
        for r in np.flatnonzero(keep).tolist():
            rec = {"image_id": image_ids[img[r]], "category_id": cat_ids[cat[r]],
                   "bbox": boxes[r], "score": scores[r]}  # fmt: skip
            seg = _segmentation(labels, r, rows.xyxy[r], False)
            if seg is not None:
                rec["segmentation"] = seg
            out.append(rec)
    else:
        out = {
            "images": _images(labels, image_ids),
            "annotations": _annotations(labels, keep, image_ids, cat_ids, boxes, fill),
            "categories": _categories(labels, cat_ids),
        }
    return Written(
        {"": (json.dumps(out, ensure_ascii=False) + "\n").encode()}, notes, int(keep.sum())
    )


def _annotations(
    labels: Labels, keep: np.ndarray, image_ids: list[int], cat_ids: list[int],
    boxes: list[list[int | float]], fill: bool,
) -> list[dict[str, Any]]:  # fmt: skip
    rows = labels.rows
    ann_ids = rows.ann_id.tolist()
    if len(set(ann_ids)) != len(ann_ids):
        ann_ids = list(range(1, len(rows) + 1))
    img, cat = rows.image_idx.tolist(), rows.category_idx.tolist()
    area, crowd, ignore = rows.area.tolist(), rows.is_crowd.tolist(), rows.ignore.tolist()
    out = []
    for r in np.flatnonzero(keep).tolist():
        rec: dict[str, Any] = {
            "id": ann_ids[r], "image_id": image_ids[img[r]], "category_id": cat_ids[cat[r]],
            "bbox": boxes[r], "area": plain(area[r]), "iscrowd": int(crowd[r]),
        }  # fmt: skip
        if ignore[r] and not crowd[r]:
            rec["ignore"] = 1
        seg = _segmentation(labels, r, rows.xyxy[r], fill)
        if seg is not None:
            rec["segmentation"] = seg
        out.append(rec)
    return out
