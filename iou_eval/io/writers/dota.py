"""DOTA: ``labelTxt/<stem>.txt`` (ground truth) or ``Task1_<class>.txt`` (predictions).

Ground truth lines are ``x1 y1 x2 y2 x3 y3 x4 y4 class difficult`` (an
axis-aligned box as its corners, clockwise from its top-left), one file per
image (empty for an image without objects), with the images in ``images/``
where they are at hand.  Predictions are the devkit's task-1 files, one per
class: ``image score x1 y1 ... x4 y4``.  A class name is one word in these
files: spaces become ``-``.
"""

from __future__ import annotations

import numpy as np

from iou_eval.io.writers.common import corners_of, dropped, num, unique_stems
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _word(name: str) -> str:
    return "-".join(str(name).split()) or "_"


def write_dota(labels: Labels, context: Context) -> Written:
    """``labels`` as DOTA label files or task-1 results."""
    keep, notes = dropped(labels, get_target("dota").keeps, "DOTA")
    if labels.polygons is not None:
        n = sum(p is not None for p in labels.polygons)
        if n:
            notes.append(f"{labels.source}: {n} outline(s) written as their boxes: DOTA holds "
                         "quadrilaterals")  # fmt: skip
    stems = unique_stems(labels)
    names = [_word(n) for n in labels.categories.names]
    corners = corners_of(labels).reshape(-1, 8).tolist()
    rows = labels.rows
    img, cat = rows.image_idx.tolist(), rows.category_idx.tolist()
    files: dict[str, bytes | tuple[str, str]] = {}
    per: dict[int, list[str]] = {}
    if labels.is_prediction:
        scores = rows.scores.tolist()
        for r in np.flatnonzero(keep).tolist():
            line = " ".join([stems[img[r]], num(scores[r]), *(num(v) for v in corners[r])])
            per.setdefault(cat[r], []).append(line)
        for k, lines in per.items():
            files[f"Task1_{names[k]}.txt"] = ("\n".join(lines) + "\n").encode()
        return Written(files, notes, int(keep.sum()))
    for r in np.flatnonzero(keep).tolist():
        difficult = int(bool(rows.ignore[r]))
        line = " ".join([*(num(v) for v in corners[r]), names[cat[r]], str(difficult)])
        per.setdefault(img[r], []).append(line)
    for i, s in enumerate(stems):
        lines = per.get(i, [])
        files[f"labelTxt/{s}.txt"] = ("\n".join(lines) + "\n").encode() if lines else b""
    from iou_eval.io.writers.yolo import place_images

    notes += place_images(labels, context, stems, files, "images")
    return Written(files, notes, int(keep.sum()))
