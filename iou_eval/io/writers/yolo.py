"""YOLO / Ultralytics: a dataset (ground truth) or a ``predict`` run (predictions).

Ground truth: ``data.yaml`` (``path``: the folder, ``train`` and ``val``:
``images/<split>``, ``names``), ``labels/<split>/<stem>.txt`` for every
image (empty for an image without objects) and ``images/<split>/`` with
the images (linked or copied from ``--images``, or from the source's
images folder).  Predictions: ``labels/<stem>.txt`` with the confidence last,
as ``yolo predict --save-txt --save-conf`` writes them.

A line is ``class cx cy w h`` for boxes, ``class x1 y1 x2 y2 ...`` (one
polygon) when the input holds outlines (``-seg``: a box row is then its
rectangle), ``class x1 y1 ... x4 y4`` when it holds oriented boxes
(``-obb``).  Coordinates are fractions of the image size, written with full
precision; a fraction is a division, so reading them back gives the pixels
within the last bit (rounding the other formats do not have).  Classes are
the ground truth's, numbered 0.. in the order the evaluation sorts them.
"""

from __future__ import annotations

import os

import numpy as np

from iou_eval.errors import InputError
from iou_eval.io.writers.common import (
    corners_of,
    dropped,
    multipart_note,
    num,
    outline,
    rectangle,
    unique_stems,
)
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _sizes(labels: Labels) -> tuple[np.ndarray, np.ndarray]:
    """``[N]`` width and height of each row's image; an unknown size is a located error."""
    rows = labels.rows
    w, h = labels.images.width, labels.images.height
    bad = ~(np.isfinite(w) & np.isfinite(h) & (w > 0) & (h > 0))
    used = np.zeros(len(w), dtype=bool)
    used[rows.image_idx] = True
    if (bad & used).any():
        i = int(np.flatnonzero(bad & used)[0])
        raise InputError(
            labels.source,
            f"YOLO coordinates are fractions of the image size: image "
            f"{labels.image_name(i)!r} has no known size",
            hint="pass --images DIR (sizes from the image files) or --image-size WxH",
        )
    return w[rows.image_idx], h[rows.image_idx]


def _order(labels: Labels, context: Context) -> list[int]:
    """The ``K`` classes (positions in ``categories``) in the order YOLO numbers them.

    The evaluation's order, so that the dataset read back scores the same;
    the class list's own order when the user gave it (``--names``).
    """
    k = labels.n_categories
    if context.class_list and sorted(labels.class_order) == list(range(k)):
        return list(labels.class_order)
    return list(range(k))


def _class_numbers(
    labels: Labels, keep: np.ndarray, order: list[int]
) -> tuple[np.ndarray, list[str]]:
    """``[N]`` each row's class number, and notes; rows of classes beyond the list are left out."""
    cat = labels.rows.category_idx.astype(np.int64)
    k = labels.n_categories
    extra = cat >= k
    notes = []
    if (extra & keep).any():
        notes.append(
            f"{labels.source}: {int((extra & keep).sum())} prediction(s) of classes not in the "
            "ground truth left out: YOLO numbers the classes of data.yaml"
        )
        keep &= ~extra
    ids = labels.categories.ids
    if (
        labels.is_prediction
        and not labels.joined
        and all(isinstance(i, int) and i >= 0 for i in ids)
    ):
        # Predictions read without their ground truth keep their own class numbers.
        return np.asarray([int(ids[c]) for c in cat.tolist()], dtype=np.int64), notes
    rank = np.zeros(max(len(ids), 1), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[np.minimum(cat, len(rank) - 1)], notes


def _lines(labels: Labels, keep: np.ndarray, classes: np.ndarray) -> list[str]:
    """``[N]`` each row's label line (without a newline); rows not kept give ''."""
    rows = labels.rows
    w, h = _sizes(labels)
    scale = np.stack([w, h], axis=1)
    mode = "obb" if labels.corners is not None else "seg" if labels.polygons is not None else "box"
    scores = rows.scores.tolist() if labels.is_prediction else None
    corners = corners_of(labels) / scale[:, None, :] if mode == "obb" else None
    xyxy = rows.xyxy
    cxcywh = np.column_stack([(xyxy[:, 0] + xyxy[:, 2]) / 2, (xyxy[:, 1] + xyxy[:, 3]) / 2,
                              xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]])  # fmt: skip
    cxcywh /= np.column_stack([w, h, w, h])
    out = []
    for r in range(len(rows)):
        if not keep[r]:
            out.append("")
            continue
        if mode == "obb" and corners is not None:
            numbers = corners[r].reshape(-1)
        elif mode == "seg":
            flat = outline(labels, r)
            flat = rectangle(xyxy[r]) if flat is None else flat
            numbers = (flat.reshape(-1, 2) / scale[r]).reshape(-1)
        else:
            numbers = cxcywh[r]
        parts = [str(int(classes[r])), *(num(v) for v in numbers.tolist())]
        if scores is not None:
            parts.append(num(scores[r]))
        out.append(" ".join(parts))
    return out


def _yaml_text(dest: str, split: str, names: tuple[str, ...]) -> str:
    import json

    lines = [
        "# Written by iou-eval convert.",
        f"path: {json.dumps(dest)}",
        f"train: images/{split}",
        f"val: images/{split}",
        "names:",
        *(f"  {i}: {json.dumps(str(n), ensure_ascii=False)}" for i, n in enumerate(names)),
    ]
    return "\n".join(lines) + "\n"


def write_yolo(labels: Labels, context: Context) -> Written:
    """``labels`` as a YOLO dataset (ground truth) or a predict run's labels (predictions)."""
    keep, notes = dropped(labels, get_target("yolo").keeps, "YOLO")
    order = _order(labels, context)
    classes, more = _class_numbers(labels, keep, order)
    notes += more + multipart_note(labels, keep, "YOLO")
    stems = unique_stems(labels)
    lines = _lines(labels, keep, classes)
    per_image: dict[int, list[str]] = {}
    for r, i in enumerate(labels.rows.image_idx.tolist()):
        if keep[r]:
            per_image.setdefault(i, []).append(lines[r])
    files: dict[str, bytes | tuple[str, str]] = {}
    if labels.is_prediction:
        for i, text in per_image.items():
            files[f"labels/{stems[i]}.txt"] = ("\n".join(text) + "\n").encode()
        return Written(files, notes, int(keep.sum()))
    split = context.split
    for i, s in enumerate(stems):
        text = per_image.get(i, [])
        files[f"labels/{split}/{s}.txt"] = ("\n".join(text) + "\n").encode() if text else b""
    names = tuple(str(labels.categories.names[c]) for c in order)
    files["data.yaml"] = _yaml_text(context.dest, split, names).encode()
    notes += place_images(labels, context, stems, files, f"images/{split}")
    return Written(files, notes, int(keep.sum()))


def place_images(
    labels: Labels, context: Context, stems: list[str], files: dict, folder: str
) -> list[str]:
    """The images linked (or copied) into ``folder``; a note when they are not at hand."""
    found = context.image_files or (None,) * len(stems)
    missing = 0
    for i, s in enumerate(stems):
        src = found[i]
        if src is None:
            missing += 1
            continue
        files[f"{folder}/{s}{os.path.splitext(src)[1]}"] = ("copy", src)
    if not missing:
        return []
    return [
        f"{labels.source}: {missing} of {len(stems)} image(s) not found: put them in "
        f"{folder}/ (the dataset reads image sizes from them); pass --images DIR to place them"
    ]
