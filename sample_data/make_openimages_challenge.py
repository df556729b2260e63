"""Write the street scene as the Open Images challenge's files: ``python sample_data/make_openimages_challenge.py``.

``openimages-challenge/`` holds the scene of ``make_sample.py`` as
``iou-eval --protocol openimages`` reads it:

- ``validation-annotations-bbox.csv``: the boxes as fractions of their
  image, the group of pedestrians as a group-of box (``IsGroupOf`` 1);
- ``validation-annotations-human-imagelabels.csv``: verified image-level
  labels, ``Confidence`` 1 for each class boxed in an image, and 0 where
  people checked that a class is absent: "dog" on street_01, "animal" on
  street_02 and street_12 (so no dog there either, once the hierarchy
  expands it), "vehicle" on street_12 (no car, no bicycle: the shadow
  called a car there is a false positive);
- ``class-descriptions.csv``: the class list (the scene's five classes and
  their ancestors), ``LabelName,DisplayName`` without a header;
- ``bbox_labels_hierarchy.json``: the hierarchy, in the layout of
  ``bbox_labels_600_hierarchy.json``: car and bicycle under "land vehicle"
  under "vehicle", dog under "carnivore" under "animal";
- ``predictions.csv``: the scene's predictions (``ImageID,LabelName,Score,
  XMin,XMax,YMin,YMax``), a "land vehicle" and an "animal" prediction on
  boxes of their descendants (true positives once the hierarchy expands the
  boxes), and a "carnivore" prediction on street_09, where no class of it is
  verified (left out).

The output is deterministic: running the script again rewrites identical files.
"""

from __future__ import annotations

import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_sample import GROUND_TRUTH, IMAGES, MIDS, PREDICTIONS  # noqa: E402

OUT = os.path.join(HERE, "openimages-challenge")

PARENTS = {
    "vehicle": "/m/07yv9",
    "land vehicle": "/m/01prls",
    "animal": "/m/0jbk",
    "carnivore": "/m/01lrl",
}
MID = {**MIDS, **PARENTS}
# The class list in the order of the class descriptions (the label map).
CLASS_LIST = [
    "animal", "bicycle", "car", "carnivore", "dog", "land vehicle", "person", "traffic light",
    "vehicle",
]  # fmt: skip

HIERARCHY = {
    "LabelName": "/m/0bl9f",
    "Subcategory": [
        {
            "LabelName": MID["vehicle"],
            "Subcategory": [
                {
                    "LabelName": MID["land vehicle"],
                    "Subcategory": [{"LabelName": MID["car"]}, {"LabelName": MID["bicycle"]}],
                }
            ],
        },
        {
            "LabelName": MID["animal"],
            "Subcategory": [
                {"LabelName": MID["carnivore"], "Subcategory": [{"LabelName": MID["dog"]}]}
            ],
        },
        {"LabelName": MID["person"]},
        {"LabelName": MID["traffic light"]},
    ],
}

# (image, class, confidence) verified beyond the classes boxed in each image.
NEGATIVE_LABELS = [
    ("street_01", "dog", 0),
    ("street_02", "animal", 0),
    ("street_12", "animal", 0),
    ("street_12", "vehicle", 0),
]

# (image, class, xmin, ymin, xmax, ymax, score) in pixels, beside the scene's predictions.
MORE_PREDICTIONS = [
    ("street_06", "land vehicle", 100, 224, 378, 419, 0.58),  # the car, one level up
    ("street_04", "animal", 248, 302, 371, 402, 0.69),  # the dog, two levels up
    ("street_09", "carnivore", 100, 100, 160, 160, 0.55),  # not verified there: left out
]


def _fractions(stem: str, x1: float, y1: float, x2: float, y2: float) -> list[str]:
    w, h = IMAGES[stem]
    return [repr(x1 / w), repr(x2 / w), repr(y1 / h), repr(y2 / h)]


def write_challenge(out: str = OUT) -> None:
    os.makedirs(out, exist_ok=True)

    def writer(name: str):
        fh = open(os.path.join(out, name), "w", newline="")  # noqa: SIM115
        return fh, csv.writer(fh, lineterminator="\n")

    fh, w = writer("validation-annotations-bbox.csv")
    w.writerow(["ImageID", "Source", "LabelName", "Confidence", "XMin", "XMax", "YMin", "YMax",
                "IsOccluded", "IsTruncated", "IsGroupOf", "IsDepiction", "IsInside"])  # fmt: skip
    for stem, cls, x1, y1, x2, y2, crowd, _difficult in GROUND_TRUTH:
        w.writerow([stem, "xclick", MID[cls], 1, *_fractions(stem, x1, y1, x2, y2),
                    0, 0, crowd, 0, 0])  # fmt: skip
    fh.close()
    fh, w = writer("validation-annotations-human-imagelabels.csv")
    w.writerow(["ImageID", "Source", "LabelName", "Confidence"])
    boxed = dict.fromkeys((stem, cls) for stem, cls, *_ in GROUND_TRUTH)
    for stem, cls in boxed:
        w.writerow([stem, "verification", MID[cls], 1])
    for stem, cls, confidence in NEGATIVE_LABELS:
        w.writerow([stem, "verification", MID[cls], confidence])
    fh.close()
    fh, w = writer("class-descriptions.csv")
    w.writerows([MID[c], c] for c in CLASS_LIST)
    fh.close()
    fh, w = writer("predictions.csv")
    w.writerow(["ImageID", "LabelName", "Score", "XMin", "XMax", "YMin", "YMax"])
    for stem, cls, x1, y1, x2, y2, score in PREDICTIONS + MORE_PREDICTIONS:
        w.writerow([stem, MID[cls], score, *_fractions(stem, x1, y1, x2, y2)])
    fh.close()
    with open(os.path.join(out, "bbox_labels_hierarchy.json"), "w") as fh:
        fh.write(json.dumps(HIERARCHY, indent=2) + "\n")


if __name__ == "__main__":
    write_challenge()
