"""CSV: one row per object.

Columns ``image, image_width, image_height, label, xmin, ymin, xmax, ymax``,
then ``score`` (predictions) or ``iscrowd, difficult`` (ground truth).  The
image sizes are left out when some image has none.  An image of the
ground truth without objects is a row with empty label and box cells (as
iou-eval reads a declared empty image).
"""

from __future__ import annotations

import csv
import io

import numpy as np

from iou_eval.io.writers.common import dropped, num
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def write_csv(labels: Labels, context: Context) -> Written:
    """``labels`` as one CSV file."""
    keep, notes = dropped(labels, get_target("csv").keeps, "CSV")
    rows = labels.rows
    im = labels.images
    sized = bool(np.isfinite(im.width).all() and np.isfinite(im.height).all())
    head = ["image", *(["image_width", "image_height"] if sized else []), "label",
            "xmin", "ymin", "xmax", "ymax"]  # fmt: skip
    head += ["score"] if labels.is_prediction else ["iscrowd", "difficult"]
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(head)
    names = [str(n) for n in labels.categories.names]
    xyxy = rows.xyxy.tolist()
    img, cat = rows.image_idx.tolist(), rows.category_idx.tolist()
    for r in np.flatnonzero(keep).tolist():
        i = img[r]
        line = [labels.image_name(i)]
        if sized:
            line += [num(im.width[i]), num(im.height[i])]
        line += [names[cat[r]], *(num(v) for v in xyxy[r])]
        if labels.is_prediction:
            line.append(num(rows.scores[r]))
        else:
            crowd = bool(rows.is_crowd[r])
            line += [str(int(crowd)), str(int(bool(rows.ignore[r]) and not crowd))]
        out.writerow(line)
    if not labels.is_prediction:
        used = np.zeros(len(im), dtype=bool)
        used[rows.image_idx[keep]] = True
        for i in np.flatnonzero(~used).tolist():
            sizes = [num(im.width[i]), num(im.height[i])] if sized else []
            out.writerow([labels.image_name(i), *sizes, *[""] * (len(head) - 1 - len(sizes))])
    return Written({"": buf.getvalue().encode()}, notes, int(keep.sum()))
