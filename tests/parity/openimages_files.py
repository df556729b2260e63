"""The Open Images challenge's files written from rows, for the protocol's tests."""

from __future__ import annotations

import csv
import json

BOX_HEADER = [
    "ImageID", "Source", "LabelName", "Confidence", "XMin", "XMax", "YMin", "YMax",
    "IsOccluded", "IsTruncated", "IsGroupOf", "IsDepiction", "IsInside",
]  # fmt: skip


def write_scene(tmp_path, boxes, labels, preds, class_list, tree=None):
    """The challenge's files; returns ``(boxes csv, predictions csv, options)``."""
    gt = tmp_path / "validation-annotations-bbox.csv"
    with open(gt, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(BOX_HEADER)
        for image, label, xmin, xmax, ymin, ymax, group in boxes:
            w.writerow([image, "xclick", label, 1, repr(xmin), repr(xmax), repr(ymin), repr(ymax),
                        0, 0, group, 0, 0])  # fmt: skip
    with open(tmp_path / "validation-annotations-human-imagelabels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ImageID", "Source", "LabelName", "Confidence"])
        w.writerows([image, "verification", label, conf] for image, label, conf in labels)
    with open(tmp_path / "class-descriptions.csv", "w", newline="") as f:
        csv.writer(f).writerows([c, c.split("/")[-1].title()] for c in class_list)
    pred = tmp_path / "predictions.csv"
    with open(pred, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ImageID", "LabelName", "Score", "XMin", "XMax", "YMin", "YMax"])
        for image, label, score, xmin, xmax, ymin, ymax in preds:
            w.writerow([image, label, repr(score), repr(xmin), repr(xmax), repr(ymin), repr(ymax)])
    options = {"protocol": "openimages"}
    if tree is not None:
        (tmp_path / "hierarchy.json").write_text(json.dumps(tree))
        options["oi_hierarchy"] = str(tmp_path / "hierarchy.json")
    return str(gt), str(pred), options
