"""Label Studio JSON: a list of tasks, one per image, to import into a project.

Each task's ``data.image`` is the image's file name (``data.width`` and
``data.height`` its size, which an image without results keeps so); ground truth is its
one annotation, predictions its one prediction (``model_version``
``iou-eval``, each result's ``score``).  A box is a ``rectanglelabels``
result, an oriented box one with its ``rotation`` (degrees clockwise about
its first corner), an outline a ``polygonlabels`` result (the largest part
of a multi-part one).  Coordinates are percentages of ``original_width`` /
``original_height`` (pixels * 100 / size, full precision: a division, so
reading them back gives the pixels within the last bit, as for YOLO).  A
crowd region or a difficult object carries a per-region ``choices`` result
(``from_name`` ``iscrowd`` / ``difficult``), which iou-eval reads back.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from iou_eval.errors import InputError
from iou_eval.io.writers.common import dropped, multipart_note, outline
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _size(labels: Labels, i: int) -> tuple[float, float]:
    w, h = float(labels.images.width[i]), float(labels.images.height[i])
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise InputError(
            labels.source,
            f"Label Studio coordinates are percentages of the image size: image "
            f"{labels.image_name(i)!r} has no known size",
            hint="pass --images DIR (sizes from the image files) or --image-size WxH",
        )
    return w, h


def _rectangle(corners: np.ndarray, w: float, h: float) -> dict[str, Any]:
    """``value`` of a rotated rectangle from its ``[4, 2]`` corners (either winding)."""
    c = corners
    a, b = c[1] - c[0], c[3] - c[0]
    if a[0] * b[1] - a[1] * b[0] < 0:  # the other winding: go round the other way
        a, b = b, a
    angle = math.degrees(math.atan2(a[1], a[0])) % 360
    return {"x": c[0][0] * 100 / w, "y": c[0][1] * 100 / h, "width": math.hypot(*a) * 100 / w,
            "height": math.hypot(*b) * 100 / h, "rotation": angle}  # fmt: skip


def _value(labels: Labels, r: int, w: float, h: float) -> tuple[str, dict[str, Any]]:
    flat = outline(labels, r)
    if flat is not None:
        pts = flat.reshape(-1, 2)
        return "polygonlabels", {
            "points": [[x * 100 / w, y * 100 / h] for x, y in pts.tolist()], "closed": True,
        }  # fmt: skip
    if labels.corners is not None:
        return "rectanglelabels", _rectangle(labels.corners[r], w, h)
    x1, y1, x2, y2 = labels.rows.xyxy[r].tolist()
    return "rectanglelabels", {"x": x1 * 100 / w, "y": y1 * 100 / h, "width": (x2 - x1) * 100 / w,
                               "height": (y2 - y1) * 100 / h, "rotation": 0}  # fmt: skip


def _results(labels: Labels, r: int, name: str) -> list[dict[str, Any]]:
    rows = labels.rows
    i = int(rows.image_idx[r])
    w, h = _size(labels, i)
    kind, value = _value(labels, r, w, h)
    value[kind] = [name]
    region = f"r{r + 1}"
    res: dict[str, Any] = {
        "id": region, "type": kind, "from_name": "label", "to_name": "image",
        "original_width": int(w) if w.is_integer() else w,
        "original_height": int(h) if h.is_integer() else h, "image_rotation": 0, "value": value,
    }  # fmt: skip
    if labels.is_prediction:
        res["score"] = float(rows.scores[r])
        return [res]
    out = [res]
    for flag, on in (("iscrowd", rows.is_crowd[r]), ("difficult", rows.ignore[r])):
        if on and not (flag == "difficult" and rows.is_crowd[r]):
            out.append({"id": region, "type": "choices", "from_name": flag, "to_name": "image",
                        "value": {"choices": [flag]}})  # fmt: skip
    return out


def _data(labels: Labels, i: int) -> dict[str, Any]:
    """A task's ``data``: the image, and its size where known (kept for an image without results)."""
    data: dict[str, Any] = {"image": labels.image_name(i)}
    w, h = float(labels.images.width[i]), float(labels.images.height[i])
    if math.isfinite(w) and math.isfinite(h):
        data["width"] = int(w) if w.is_integer() else w
        data["height"] = int(h) if h.is_integer() else h
    return data


def write_labelstudio(labels: Labels, context: Context) -> Written:
    """``labels`` as one Label Studio JSON file of tasks."""
    keep, notes = dropped(labels, get_target("labelstudio").keeps, "Label Studio JSON")
    notes += multipart_note(labels, keep, "Label Studio JSON")
    names = [str(n) for n in labels.categories.names]
    per: dict[int, list[dict[str, Any]]] = {}
    cat = labels.rows.category_idx.tolist()
    for r, i in enumerate(labels.rows.image_idx.tolist()):
        if keep[r]:
            per.setdefault(i, []).extend(_results(labels, r, names[cat[r]]))
    tasks = []
    for i in range(len(labels.images)):
        if labels.is_prediction and i not in per:
            continue
        task: dict[str, Any] = {"id": i + 1, "data": _data(labels, i)}
        results = per.get(i, [])
        if labels.is_prediction:
            task["predictions"] = [{"model_version": "iou-eval", "result": results}]
        else:
            task["annotations"] = [{"id": i + 1, "result": results, "was_cancelled": False,
                                    "ground_truth": False}]  # fmt: skip
        tasks.append(task)
    text = json.dumps(tasks, indent=1, ensure_ascii=False) + "\n"
    return Written({"": text.encode()}, notes, int(keep.sum()))
