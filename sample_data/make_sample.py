"""Write the sample scene in every supported format: ``python sample_data/make_sample.py``.

One small, hand-made street scene: 12 images, 5 classes, 30 ground-truth
boxes and 33 predictions.  The same boxes are written three ways, and the
evaluation of each pair must give the same numbers
(``tests/unit/test_sample_data.py`` checks it):

- ``coco/gt.json`` (a COCO dataset) and ``coco/preds.json`` (a results list);
- ``voc/annotations/street_NN.xml`` and ``voc/predictions/street_NN.xml``
  (Pascal VOC, predictions carry ``<score>``);
- ``csv/gt.csv`` and ``csv/preds.csv`` (one row per box).

What the scene holds, so that every part of a report has something to show:

- small (traffic lights), medium (people, dogs) and large (cars) boxes;
- a crowd region (a group of pedestrians, ``iscrowd`` 1) with two
  detections inside it, which are neither hits nor false positives;
- a difficult box (a far-away person, VOC ``difficult`` 1, COCO
  ``"ignore": 1``; pycocotools lets ``iscrowd`` override ``ignore``, so the
  COCO protocol still counts it, the VOC protocols skip it);
- misses (a traffic light, a dog, the second bicycle), a duplicate
  detection of a car, a loosely placed box that counts at IoU 0.5 but not at
  0.75, a class confusion (a dog called a person), false positives on the
  background and on an image without objects (``street_12``);
- distinct scores spread between 0.12 and 0.98 (no ties, so the result does
  not depend on how a tool orders equal scores).

Coordinates are integer pixels, ``xmin, ymin, xmax, ymax``, so all three
formats hold them exactly.  Category ids follow the alphabetical order of
the names, so that every format lists the classes in the same order and the
averages over classes are summed in the same order.  The output is
deterministic: running the script again rewrites identical files.
"""

from __future__ import annotations

import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

CATEGORIES = ["bicycle", "car", "dog", "person", "traffic light"]  # ids 1..5

# file stem -> (width, height)
IMAGES = {f"street_{i:02d}": (640, 480) for i in range(1, 13)}
IMAGES.update({"street_08": (800, 600), "street_09": (800, 600)})

# (image, class, xmin, ymin, xmax, ymax, iscrowd, difficult)
GROUND_TRUTH = [
    ("street_01", "car", 40, 220, 260, 380, 0, 0),
    ("street_01", "person", 300, 180, 340, 300, 0, 0),
    ("street_01", "traffic light", 520, 40, 536, 80, 0, 0),
    ("street_02", "person", 100, 150, 150, 330, 0, 0),
    ("street_02", "person", 160, 160, 205, 320, 0, 0),
    ("street_02", "bicycle", 90, 250, 230, 360, 0, 0),
    ("street_03", "car", 0, 200, 180, 330, 0, 0),
    ("street_03", "car", 400, 210, 630, 400, 0, 0),
    ("street_03", "traffic light", 300, 30, 314, 66, 0, 0),
    ("street_04", "dog", 250, 300, 370, 400, 0, 0),
    ("street_04", "person", 220, 120, 290, 390, 0, 0),
    ("street_05", "person", 20, 150, 300, 330, 1, 0),  # a group of pedestrians
    ("street_05", "person", 400, 140, 460, 330, 0, 0),
    ("street_05", "traffic light", 580, 20, 596, 60, 0, 0),
    ("street_06", "car", 100, 220, 380, 420, 0, 0),
    ("street_06", "bicycle", 420, 260, 560, 380, 0, 0),
    ("street_06", "person", 440, 150, 500, 330, 0, 0),
    ("street_07", "person", 50, 100, 110, 300, 0, 0),
    ("street_07", "dog", 120, 250, 200, 310, 0, 0),
    ("street_07", "person", 600, 200, 612, 230, 0, 1),  # far away: difficult
    ("street_08", "car", 300, 300, 700, 560, 0, 0),
    ("street_08", "traffic light", 100, 50, 118, 95, 0, 0),
    ("street_08", "traffic light", 200, 48, 218, 92, 0, 0),
    ("street_09", "person", 380, 200, 440, 400, 0, 0),
    ("street_09", "bicycle", 360, 300, 480, 420, 0, 0),
    ("street_09", "car", 0, 320, 200, 500, 0, 0),
    ("street_10", "dog", 300, 330, 420, 430, 0, 0),
    ("street_10", "person", 260, 120, 330, 400, 0, 0),
    ("street_11", "car", 200, 200, 500, 400, 0, 0),
    ("street_11", "person", 520, 180, 570, 340, 0, 0),
    # street_12: an empty road, no objects.
]

# (image, class, xmin, ymin, xmax, ymax, score)
PREDICTIONS = [
    ("street_01", "car", 44, 218, 262, 384, 0.97),
    ("street_01", "person", 302, 184, 341, 305, 0.88),
    ("street_01", "traffic light", 519, 42, 537, 83, 0.64),
    ("street_02", "person", 98, 152, 151, 333, 0.91),
    ("street_02", "person", 168, 178, 220, 330, 0.57),  # loose: IoU 0.53
    ("street_02", "bicycle", 95, 245, 228, 366, 0.83),
    ("street_03", "car", 3, 196, 176, 334, 0.95),
    ("street_03", "car", 410, 215, 628, 398, 0.90),
    # street_03: the traffic light is missed.
    ("street_04", "dog", 246, 305, 372, 404, 0.86),
    ("street_04", "person", 224, 118, 288, 386, 0.93),
    ("street_04", "person", 560, 100, 600, 220, 0.35),  # background
    ("street_05", "person", 30, 160, 90, 320, 0.78),  # inside the crowd
    ("street_05", "person", 150, 155, 210, 330, 0.66),  # inside the crowd
    ("street_05", "person", 398, 143, 463, 332, 0.89),
    ("street_05", "traffic light", 578, 22, 595, 63, 0.52),
    ("street_06", "car", 104, 226, 376, 418, 0.94),
    ("street_06", "car", 120, 230, 360, 410, 0.47),  # duplicate of the car
    ("street_06", "bicycle", 425, 258, 566, 384, 0.72),
    ("street_06", "person", 442, 146, 503, 335, 0.85),
    ("street_07", "person", 52, 104, 108, 302, 0.87),
    ("street_07", "person", 121, 248, 203, 313, 0.44),  # the dog, called a person
    ("street_07", "person", 599, 198, 613, 232, 0.31),  # the difficult one
    ("street_08", "car", 296, 305, 706, 555, 0.98),
    ("street_08", "traffic light", 102, 53, 117, 97, 0.61),
    # street_08: the second traffic light is missed.
    ("street_09", "person", 378, 205, 443, 398, 0.82),
    ("street_09", "car", 5, 318, 204, 496, 0.92),
    ("street_09", "traffic light", 600, 40, 616, 80, 0.23),  # background
    # street_09: the bicycle is missed.
    ("street_10", "person", 265, 125, 332, 395, 0.80),
    ("street_10", "dog", 150, 380, 230, 440, 0.39),  # wrong place; the dog is missed
    ("street_11", "car", 205, 198, 498, 405, 0.96),
    ("street_11", "person", 518, 176, 574, 345, 0.76),
    ("street_11", "dog", 40, 380, 110, 450, 0.12),  # background
    ("street_12", "car", 250, 260, 420, 360, 0.62),  # a shadow on the empty road
]


def _coco_id(stem: str) -> int:
    return int(stem.rsplit("_", 1)[1])


def _json_lines(key_values: list[tuple[str, list[dict]]]) -> str:
    """A COCO dict with one record per line: readable and diff-friendly."""
    parts = []
    for key, records in key_values:
        body = ",\n".join("    " + json.dumps(r) for r in records)
        parts.append(f'  "{key}": [\n{body}\n  ]')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_coco(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    images = [
        {"id": _coco_id(s), "file_name": f"{s}.jpg", "width": w, "height": h}
        for s, (w, h) in IMAGES.items()
    ]
    categories = [{"id": i + 1, "name": n} for i, n in enumerate(CATEGORIES)]
    annotations = []
    for k, (stem, cls, x1, y1, x2, y2, crowd, difficult) in enumerate(GROUND_TRUTH, start=1):
        ann = {
            "id": k,
            "image_id": _coco_id(stem),
            "category_id": CATEGORIES.index(cls) + 1,
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "area": (x2 - x1) * (y2 - y1),
            "iscrowd": crowd,
        }
        if difficult:
            ann["ignore"] = 1
        annotations.append(ann)
    with open(os.path.join(out, "gt.json"), "w") as fh:
        fh.write(
            _json_lines(
                [("images", images), ("annotations", annotations), ("categories", categories)]
            )
        )
    preds = [
        {
            "image_id": _coco_id(stem),
            "category_id": CATEGORIES.index(cls) + 1,
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "score": score,
        }
        for stem, cls, x1, y1, x2, y2, score in PREDICTIONS
    ]
    with open(os.path.join(out, "preds.json"), "w") as fh:
        fh.write("[\n" + ",\n".join("  " + json.dumps(p) for p in preds) + "\n]\n")


def _voc_xml(stem: str, objects: list[str]) -> str:
    w, h = IMAGES[stem]
    head = (
        "<annotation>\n"
        "  <folder>street</folder>\n"
        f"  <filename>{stem}.jpg</filename>\n"
        f"  <size>\n    <width>{w}</width>\n    <height>{h}</height>\n"
        "    <depth>3</depth>\n  </size>\n"
        "  <segmented>0</segmented>\n"
    )
    return head + "".join(objects) + "</annotation>\n"


def _voc_object(cls: str, box: tuple[int, int, int, int], extra: list[str]) -> str:
    x1, y1, x2, y2 = box
    lines = [f"    <name>{cls}</name>", *extra]
    lines.append(
        f"    <bndbox>\n      <xmin>{x1}</xmin>\n      <ymin>{y1}</ymin>\n"
        f"      <xmax>{x2}</xmax>\n      <ymax>{y2}</ymax>\n    </bndbox>"
    )
    return "  <object>\n" + "\n".join(lines) + "\n  </object>\n"


def write_voc(out: str) -> None:
    gt_dir = os.path.join(out, "annotations")
    pred_dir = os.path.join(out, "predictions")
    os.makedirs(gt_dir, exist_ok=True)
    os.makedirs(pred_dir, exist_ok=True)
    for stem in IMAGES:
        objects = []
        for s, cls, x1, y1, x2, y2, crowd, difficult in GROUND_TRUTH:
            if s != stem:
                continue
            extra = ["    <pose>Unspecified</pose>", "    <truncated>0</truncated>"]
            extra.append(f"    <difficult>{difficult}</difficult>")
            if crowd:
                extra.append("    <iscrowd>1</iscrowd>")
            objects.append(_voc_object(cls, (x1, y1, x2, y2), extra))
        with open(os.path.join(gt_dir, f"{stem}.xml"), "w") as fh:
            fh.write(_voc_xml(stem, objects))
        objects = [
            _voc_object(cls, (x1, y1, x2, y2), [f"    <score>{score}</score>"])
            for s, cls, x1, y1, x2, y2, score in PREDICTIONS
            if s == stem
        ]
        with open(os.path.join(pred_dir, f"{stem}.xml"), "w") as fh:
            fh.write(_voc_xml(stem, objects))


def write_csv(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gt.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["image", "label", "xmin", "ymin", "xmax", "ymax", "iscrowd", "difficult"])
        for stem in IMAGES:
            rows = [r for r in GROUND_TRUTH if r[0] == stem]
            for _, cls, x1, y1, x2, y2, crowd, difficult in rows:
                w.writerow([f"{stem}.jpg", cls, x1, y1, x2, y2, crowd, difficult])
            if not rows:
                # An image without boxes: a row with the image and nothing else.
                w.writerow([f"{stem}.jpg", "", "", "", "", "", "", ""])
    with open(os.path.join(out, "preds.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["image", "label", "xmin", "ymin", "xmax", "ymax", "score"])
        for stem, cls, x1, y1, x2, y2, score in PREDICTIONS:
            w.writerow([f"{stem}.jpg", cls, x1, y1, x2, y2, score])


def main() -> None:
    write_coco(os.path.join(HERE, "coco"))
    write_voc(os.path.join(HERE, "voc"))
    write_csv(os.path.join(HERE, "csv"))


if __name__ == "__main__":
    main()
