"""LabelMe JSON: one ``<stem>.json`` per image.

A box is a ``rectangle`` shape (its two corners), an outline a ``polygon``
(the largest part of a multi-part one), an oriented box the ``polygon`` of
its four corners.  A prediction's shape carries ``"score"`` (as
X-AnyLabeling writes it), a difficult object ``"difficult": true``.
``imagePath`` is the image's file name, ``imageWidth``/``imageHeight`` its
size.  LabelMe has no crowd flag: crowd regions are left out, counted.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np

from iou_eval.io.writers.common import (
    dropped,
    multipart_note,
    outline,
    plain,
    unique_stems,
)
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _shape(labels: Labels, r: int, name: str) -> dict[str, Any]:
    rows = labels.rows
    flat = outline(labels, r)
    if flat is None and labels.corners is not None:
        flat = labels.corners[r].reshape(-1)
    if flat is None:
        x1, y1, x2, y2 = (plain(v) for v in rows.xyxy[r].tolist())
        points, kind = [[x1, y1], [x2, y2]], "rectangle"
    else:
        points = [[plain(x), plain(y)] for x, y in flat.reshape(-1, 2).tolist()]
        kind = "polygon"
    shape: dict[str, Any] = {
        "label": name, "points": points, "group_id": None, "description": "",
        "shape_type": kind, "flags": {},
    }  # fmt: skip
    if labels.is_prediction:
        shape["score"] = float(rows.scores[r])
    elif rows.ignore[r]:
        shape["difficult"] = True
    return shape


def write_labelme(labels: Labels, context: Context) -> Written:
    """``labels`` as a folder of LabelMe files, one per image."""
    # An oriented box is written as the polygon of its corners (note below).
    keeps = replace(get_target("labelme").keeps, oriented=True)
    keep, notes = dropped(labels, keeps, "LabelMe")
    notes += multipart_note(labels, keep, "LabelMe")
    if labels.corners is not None:
        notes.append(
            f"{labels.source}: {len(labels.rows)} oriented box(es) written as 4-point polygons "
            "(read back as outlines, scored by their enclosing boxes)"
        )
    stems = unique_stems(labels)
    names = [str(n) for n in labels.categories.names]
    shapes: dict[int, list[dict[str, Any]]] = {}
    cat = labels.rows.category_idx.tolist()
    for r, i in enumerate(labels.rows.image_idx.tolist()):
        if keep[r]:
            shapes.setdefault(i, []).append(_shape(labels, r, names[cat[r]]))
    files: dict[str, bytes | tuple[str, str]] = {}
    im = labels.images
    for i, s in enumerate(stems):
        if labels.is_prediction and i not in shapes:
            continue
        doc: dict[str, Any] = {
            "version": "5.5.0", "flags": {}, "shapes": shapes.get(i, []),
            "imagePath": labels.image_name(i).rsplit("/", 1)[-1], "imageData": None,
        }  # fmt: skip
        if np.isfinite(im.width[i]) and np.isfinite(im.height[i]):
            doc["imageHeight"], doc["imageWidth"] = plain(im.height[i]), plain(im.width[i])
        files[f"{s}.json"] = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
    return Written(files, notes, int(keep.sum()))
