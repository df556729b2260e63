"""Write the sample scene in every supported format: ``python sample_data/make_sample.py``.

One small, hand-made street scene: 12 images, 5 classes, 30 ground-truth
boxes and 33 predictions.  The same boxes are written three ways, and the
evaluation of each pair must give the same numbers
(``tests/unit/test_sample_data.py`` checks it):

- ``coco/gt.json`` (a COCO dataset) and ``coco/preds.json`` (a results list);
- ``voc/annotations/street_NN.xml`` and ``voc/predictions/street_NN.xml``
  (Pascal VOC, predictions carry ``<score>``);
- ``csv/gt.csv`` and ``csv/preds.csv`` (one row per box);
- ``yolo/``: an Ultralytics dataset (``data.yaml``, ``images/val`` with tiny
  PNG and JPEG images of the scene's sizes, one JPEG stored portrait with
  EXIF orientation 6, ``labels/val``), its predictions as ``predict``
  writes them (``predictions/labels``: ``class cx cy w h conf``) and as
  ``val(save_json=True)`` writes them (``predictions.json``: classes
  numbered ``index + 1``, read so beside ``data.yaml`` with a note);
- ``labelme/gt`` and ``labelme/preds`` (one JSON per image, the score of a
  prediction in the shape's ``score``);
- ``cvat/gt.xml`` and ``cvat/preds.xml`` (CVAT for images 1.1, the score as
  ``<attribute name="score">``, the crowd as ``is_crowd``);
- ``openimages/``: ``gt.csv`` (fractions, ``IsGroupOf`` for the crowd),
  ``preds.csv``, ``images.csv`` (every image, street_12 too) and
  ``class-descriptions.csv``;
- ``labelstudio/``: ``gt.json`` and ``preds.json``, a Label Studio export
  of ``coco/`` written by ``iou-eval convert --to labelstudio`` (not by this
  script; ``tests/cli/test_convert.py`` checks that it writes them so);
- ``images/``: the scene's pictures at the ground truth's sizes (flat
  shapes where its objects are), for ``iou-eval draw`` and the HTML report:
  JPEG under the COCO file names, street_08 and street_09 as PNG (found by
  their stem).

YOLO and LabelMe have no crowd regions: there the group of pedestrians is
an ordinary person.  The objects of street_04 are polygons in YOLO, LabelMe
and CVAT (rectangles drawn as four corners, so their bounds are the boxes).

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

Coordinates are integer pixels, ``xmin, ymin, xmax, ymax``, so the pixel
formats hold them exactly (YOLO and Open Images hold fractions of them).  Category ids follow the alphabetical order of
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


def coco_dicts(crowd: bool = True) -> tuple[dict, list[dict]]:
    """The scene as a COCO dataset and a COCO results list.

    ``crowd=False`` makes the crowd region an ordinary box: the scene as
    formats without crowd regions (YOLO, LabelMe) hold it.
    """
    images = [
        {"id": _coco_id(s), "file_name": f"{s}.jpg", "width": w, "height": h}
        for s, (w, h) in IMAGES.items()
    ]
    categories = [{"id": i + 1, "name": n} for i, n in enumerate(CATEGORIES)]
    annotations = []
    for k, (stem, cls, x1, y1, x2, y2, iscrowd, difficult) in enumerate(GROUND_TRUTH, start=1):
        ann = {
            "id": k,
            "image_id": _coco_id(stem),
            "category_id": CATEGORIES.index(cls) + 1,
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "area": (x2 - x1) * (y2 - y1),
            "iscrowd": iscrowd if crowd else 0,
        }
        if difficult:
            ann["ignore"] = 1
        annotations.append(ann)
    preds = [
        {
            "image_id": _coco_id(stem),
            "category_id": CATEGORIES.index(cls) + 1,
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "score": score,
        }
        for stem, cls, x1, y1, x2, y2, score in PREDICTIONS
    ]
    gt = {"images": images, "annotations": annotations, "categories": categories}
    return gt, preds


def write_coco(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    gt, preds = coco_dicts()
    with open(os.path.join(out, "gt.json"), "w") as fh:
        fh.write(_json_lines([(k, gt[k]) for k in ("images", "annotations", "categories")]))
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


# Drawn as four-corner polygons in the formats that hold polygons.
POLYGON_IMAGES = {"street_04"}
# Open Images names classes by Freebase MID.
MIDS = {"bicycle": "/m/0199g", "car": "/m/0k4j", "dog": "/m/0bt9lr", "person": "/m/01g317",
        "traffic light": "/m/015qff"}  # fmt: skip
# street_05 is stored portrait (480 x 640) with EXIF orientation 6 (turn a
# quarter clockwise to view): upright it is 640 x 480 like the others.
EXIF_ROTATED = "street_05"
JPEG_IMAGES = {"street_01", EXIF_ROTATED}


def _corners(x1: float, y1: float, x2: float, y2: float) -> list[tuple[float, float]]:
    return [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]


def _image_file(stem: str) -> str:
    return f"{stem}.jpg" if stem in JPEG_IMAGES else f"{stem}.png"


def _write_image(path: str, w: int, h: int, orientation: int | None = None) -> None:
    """A blank image of the scene's size: a 1-bit PNG (about 120 bytes) or a small JPEG."""
    from PIL import Image

    if path.endswith(".png"):
        Image.new("1", (w, h), 0).save(path, optimize=True)
        return
    exif = Image.Exif()
    if orientation is not None:
        exif[274] = orientation  # the EXIF orientation tag
        w, h = h, w  # stored turned: the viewer turns it back
    Image.new("L", (w, h), 0).save(path, quality=1, optimize=True, exif=exif.tobytes())


def write_yolo(out: str) -> None:
    for sub in ("images/val", "labels/val", "predictions/labels"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "data.yaml"), "w") as fh:
        fh.write("# The sample street scene as an Ultralytics dataset (make_sample.py).\n")
        fh.write("train: images/val\nval: images/val\nnames:\n")
        fh.writelines(f"  {i}: {n}\n" for i, n in enumerate(CATEGORIES))
    for stem, (w, h) in IMAGES.items():
        name = _image_file(stem)
        orientation = 6 if stem == EXIF_ROTATED else None
        _write_image(os.path.join(out, "images/val", name), w, h, orientation)
        lines = []
        for s, cls, x1, y1, x2, y2, _crowd, _difficult in GROUND_TRUTH:
            if s != stem:
                continue
            c = CATEGORIES.index(cls)
            if stem in POLYGON_IMAGES:
                pts = " ".join(f"{x / w:.6f} {y / h:.6f}" for x, y in _corners(x1, y1, x2, y2))
                lines.append(f"{c} {pts}\n")
            else:
                cx, cy = (x1 + x2) / 2 / w, (y1 + y2) / 2 / h
                lines.append(f"{c} {cx:.6f} {cy:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}\n")
        # street_12 gets an empty label file: an image without objects.
        with open(os.path.join(out, "labels/val", f"{stem}.txt"), "w") as fh:
            fh.writelines(lines)
        # Ultralytics' predict writes `class cx cy w h conf` with %g, by falling confidence.
        rows = sorted((p for p in PREDICTIONS if p[0] == stem), key=lambda p: -p[6])
        with open(os.path.join(out, "predictions/labels", f"{stem}.txt"), "w") as fh:
            for _, cls, x1, y1, x2, y2, score in rows:
                cx, cy = (x1 + x2) / 2 / w, (y1 + y2) / 2 / h
                fh.write(
                    f"{CATEGORIES.index(cls)} {cx:g} {cy:g} {(x2 - x1) / w:g} {(y2 - y1) / h:g} "
                    f"{score:g}\n"
                )
    # val(save_json=True): image_id the stem, category_id index + 1 (since December 2024).
    records = [
        {
            "image_id": stem,
            "category_id": CATEGORIES.index(cls) + 1,
            "bbox": [round(v, 3) for v in (x1, y1, x2 - x1, y2 - y1)],
            "score": round(score, 5),
        }
        for stem, cls, x1, y1, x2, y2, score in PREDICTIONS
    ]
    with open(os.path.join(out, "predictions.json"), "w") as fh:
        fh.write("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")


def _labelme_shape(
    cls: str, box: tuple[int, int, int, int], polygon: bool, **extra: object
) -> dict:
    x1, y1, x2, y2 = box
    points = _corners(x1, y1, x2, y2) if polygon else [(x1, y1), (x2, y2)]
    shape = {"label": cls, "points": [list(p) for p in points], "group_id": None,
             "description": "", "shape_type": "polygon" if polygon else "rectangle", "flags": {}}  # fmt: skip
    shape.update(extra)
    return shape


def write_labelme(out: str) -> None:
    for role in ("gt", "preds"):
        os.makedirs(os.path.join(out, role), exist_ok=True)
    for stem, (w, h) in IMAGES.items():
        gt = [
            _labelme_shape(
                cls,
                (x1, y1, x2, y2),
                stem in POLYGON_IMAGES,
                **({"difficult": True} if difficult else {}),
            )  # fmt: skip
            for s, cls, x1, y1, x2, y2, _crowd, difficult in GROUND_TRUTH
            if s == stem
        ]
        preds = [
            _labelme_shape(cls, (x1, y1, x2, y2), False, score=score)
            for s, cls, x1, y1, x2, y2, score in PREDICTIONS
            if s == stem
        ]
        for role, shapes in (("gt", gt), ("preds", preds)):
            doc = {"version": "5.5.0", "flags": {}, "shapes": shapes,
                   "imagePath": f"../images/{stem}.jpg", "imageData": None,
                   "imageHeight": h, "imageWidth": w}  # fmt: skip
            with open(os.path.join(out, role, f"{stem}.json"), "w") as fh:
                json.dump(doc, fh, indent=2)
                fh.write("\n")


def _cvat_document(shapes_of: dict[str, list[str]]) -> str:
    labels = "".join(f"        <label><name>{n}</name></label>\n" for n in CATEGORIES)
    head = (
        '<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n'
        "  <meta>\n    <task>\n      <name>street</name>\n      <labels>\n"
        f"{labels}      </labels>\n    </task>\n  </meta>\n"
    )
    body = []
    for i, (stem, (w, h)) in enumerate(IMAGES.items()):
        shapes = shapes_of.get(stem, [])
        tag = f'  <image id="{i}" name="{stem}.jpg" width="{w}" height="{h}"'
        body.append(tag + (">\n" + "".join(shapes) + "  </image>\n" if shapes else "/>\n"))
    return head + "".join(body) + "</annotations>\n"


def _cvat_shape(cls: str, box: tuple[int, int, int, int], polygon: bool, attrs: dict) -> str:
    x1, y1, x2, y2 = box
    if polygon:
        pts = ";".join(f"{x:.2f},{y:.2f}" for x, y in _corners(x1, y1, x2, y2))
        open_tag = f'    <polygon label="{cls}" occluded="0" points="{pts}" z_order="0"'
        close = "    </polygon>\n"
    else:
        open_tag = (
            f'    <box label="{cls}" occluded="0" xtl="{x1:.2f}" ytl="{y1:.2f}" '
            f'xbr="{x2:.2f}" ybr="{y2:.2f}" z_order="0"'
        )
        close = "    </box>\n"
    if not attrs:
        return open_tag + "/>\n"
    inner = "".join(f'      <attribute name="{k}">{v}</attribute>\n' for k, v in attrs.items())
    return open_tag + ">\n" + inner + close


def write_cvat(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    gt: dict[str, list[str]] = {}
    for stem, cls, x1, y1, x2, y2, crowd, _difficult in GROUND_TRUTH:
        attrs = {"is_crowd": "true"} if crowd else {}
        gt.setdefault(stem, []).append(
            _cvat_shape(cls, (x1, y1, x2, y2), stem in POLYGON_IMAGES, attrs)
        )
    preds: dict[str, list[str]] = {}
    for stem, cls, x1, y1, x2, y2, score in PREDICTIONS:
        preds.setdefault(stem, []).append(
            _cvat_shape(cls, (x1, y1, x2, y2), False, {"score": f"{score}"})
        )
    for name, shapes in (("gt.xml", gt), ("preds.xml", preds)):
        with open(os.path.join(out, name), "w") as fh:
            fh.write(_cvat_document(shapes))


def write_openimages(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gt.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["ImageID", "Source", "LabelName", "Confidence", "XMin", "XMax", "YMin",
                    "YMax", "IsOccluded", "IsTruncated", "IsGroupOf", "IsDepiction", "IsInside"])  # fmt: skip
        for stem, cls, x1, y1, x2, y2, crowd, _difficult in GROUND_TRUTH:
            iw, ih = IMAGES[stem]
            w.writerow([stem, "xclick", MIDS[cls], 1, repr(x1 / iw), repr(x2 / iw),
                        repr(y1 / ih), repr(y2 / ih), 0, 0, crowd, 0, 0])  # fmt: skip
    with open(os.path.join(out, "preds.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["ImageID", "LabelName", "Score", "XMin", "XMax", "YMin", "YMax"])
        for stem, cls, x1, y1, x2, y2, score in PREDICTIONS:
            iw, ih = IMAGES[stem]
            w.writerow([stem, MIDS[cls], score, repr(x1 / iw), repr(x2 / iw),
                        repr(y1 / ih), repr(y2 / ih)])  # fmt: skip
    with open(os.path.join(out, "images.csv"), "w", newline="") as fh:
        fh.write("ImageID,Subset\n" + "".join(f"{stem},validation\n" for stem in IMAGES))
    with open(os.path.join(out, "class-descriptions.csv"), "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([MIDS[c], c] for c in CATEGORIES)


# ---------------------------------------------------------------- images

# The scene's images for drawings (``images/``): flat shapes where the ground
# truth's objects are.  JPEG under the ground truth's file names; street_08
# and street_09 are PNGs, found by their stem.
PNG_SCENE_IMAGES = {"street_08", "street_09"}
SKY, FAR, ROAD, KERB, MARK = (196, 222, 240), (170, 182, 196), (112, 116, 124), (150, 150, 146), (236, 236, 230)  # fmt: skip
CAR_COLOURS = [(178, 34, 52), (30, 90, 160), (232, 180, 40), (70, 70, 78), (40, 130, 90)]
CLOTHES = [(200, 80, 60), (60, 100, 170), (90, 140, 80), (140, 90, 150), (220, 160, 50)]


def _draw_background(d, w: int, h: int, seed: int) -> None:
    horizon = int(h * 0.42)
    d.rectangle([0, 0, w, horizon], fill=SKY)
    x = 0
    k = seed
    while x < w:  # a skyline of plain blocks
        bw = 60 + (k * 37) % 70
        bh = 40 + (k * 53) % 110
        d.rectangle([x, horizon - bh, x + bw, horizon], fill=FAR if k % 2 else (182, 192, 204))
        x += bw + 4
        k += 3
    d.rectangle([0, horizon, w, horizon + 14], fill=KERB)
    d.rectangle([0, horizon + 14, w, h], fill=ROAD)
    for x0 in range(-40 + (seed * 29) % 80, w, 120):  # lane marks
        d.rectangle([x0, int(h * 0.78), x0 + 60, int(h * 0.78) + 6], fill=MARK)


def _draw_car(d, box, colour) -> None:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    d.rounded_rectangle([x1, y1 + h * 0.38, x2, y2 - h * 0.12], radius=h * 0.12, fill=colour)
    d.polygon([(x1 + w * 0.2, y1 + h * 0.4), (x1 + w * 0.3, y1), (x2 - w * 0.28, y1),
               (x2 - w * 0.14, y1 + h * 0.4)], fill=colour)  # fmt: skip
    d.polygon([(x1 + w * 0.27, y1 + h * 0.38), (x1 + w * 0.34, y1 + h * 0.08),
               (x2 - w * 0.32, y1 + h * 0.08), (x2 - w * 0.2, y1 + h * 0.38)], fill=(200, 225, 240))  # fmt: skip
    r = h * 0.17
    for cx in (x1 + w * 0.22, x2 - w * 0.22):
        d.ellipse([cx - r, y2 - 2 * r, cx + r, y2], fill=(30, 30, 34))
        d.ellipse([cx - r / 2, y2 - 1.5 * r, cx + r / 2, y2 - 0.5 * r], fill=(160, 160, 166))


def _draw_person(d, box, colour) -> None:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    cx = (x1 + x2) / 2
    r = min(w * 0.32, h * 0.09)
    d.ellipse([cx - r, y1, cx + r, y1 + 2 * r], fill=(236, 196, 160))
    d.rounded_rectangle([x1 + w * 0.18, y1 + 2.2 * r, x2 - w * 0.18, y1 + h * 0.58],
                        radius=w * 0.15, fill=colour)  # fmt: skip
    leg = max(2, w * 0.16)
    for lx in (cx - w * 0.14, cx + w * 0.14):
        d.line([(lx, y1 + h * 0.55), (lx, y2)], fill=(50, 54, 70), width=int(leg))


def _draw_dog(d, box) -> None:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    brown = (150, 100, 56)
    d.ellipse([x1 + w * 0.1, y1 + h * 0.3, x2 - w * 0.22, y1 + h * 0.75], fill=brown)
    d.ellipse([x2 - w * 0.34, y1, x2, y1 + h * 0.45], fill=brown)
    d.polygon([(x2 - w * 0.3, y1 + h * 0.05), (x2 - w * 0.38, y1 + h * 0.3),
               (x2 - w * 0.24, y1 + h * 0.2)], fill=(110, 70, 40))  # fmt: skip
    for lx in (x1 + w * 0.2, x1 + w * 0.35, x2 - w * 0.42, x2 - w * 0.3):
        d.line([(lx, y1 + h * 0.65), (lx, y2)], fill=brown, width=max(2, int(w * 0.06)))
    d.line([(x1 + w * 0.12, y1 + h * 0.45), (x1, y1 + h * 0.2)], fill=brown, width=max(2, int(w * 0.04)))


def _draw_bicycle(d, box) -> None:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    r = min(w * 0.24, h * 0.36)
    wheels = [(x1 + r + 2, y2 - r - 2), (x2 - r - 2, y2 - r - 2)]
    for cx, cy in wheels:
        d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=(30, 30, 30), width=max(2, int(r * 0.15)))
    top = y1 + h * 0.25
    frame = [wheels[0], ((x1 + x2) / 2, wheels[0][1]), (x2 - w * 0.32, top), (x1 + w * 0.35, top),
             wheels[0]]  # fmt: skip
    d.line(frame, fill=(20, 110, 150), width=max(2, int(w * 0.03)))
    d.line([(x2 - w * 0.32, top), wheels[1]], fill=(20, 110, 150), width=max(2, int(w * 0.03)))
    d.line([(x1 + w * 0.3, y1), (x1 + w * 0.4, y1)], fill=(20, 20, 20), width=max(2, int(w * 0.04)))


def _draw_traffic_light(d, box) -> None:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    d.rectangle([x1 + w * 0.4, y2, x1 + w * 0.6, y2 + h * 1.2], fill=(60, 60, 64))
    d.rectangle([x1, y1, x2, y2], fill=(36, 36, 40))
    for i, colour in enumerate([(220, 40, 40), (240, 190, 40), (50, 190, 90)]):
        cy = y1 + h * (i + 0.5) / 3
        r = min(w, h / 3) * 0.36
        d.ellipse([(x1 + x2) / 2 - r, cy - r, (x1 + x2) / 2 + r, cy + r], fill=colour)


def scene_image(stem: str):
    """The scene of one image: its ground truth's objects drawn flat on a street."""
    from PIL import Image, ImageDraw

    w, h = IMAGES[stem]
    img = Image.new("RGB", (w, h))
    d = ImageDraw.Draw(img)
    seed = _coco_id(stem)
    _draw_background(d, w, h, seed)
    if stem == "street_12":  # the shadow the last prediction takes for a car
        d.ellipse([250, 280, 420, 360], fill=(88, 92, 100))
    objects = [g for g in GROUND_TRUTH if g[0] == stem]
    # Far (higher up) first, so nearer objects cover them.
    for i, (_, cls, x1, y1, x2, y2, crowd, _difficult) in enumerate(sorted(objects, key=lambda g: g[5])):
        box = (x1, y1, x2, y2)
        if cls == "car":
            _draw_car(d, box, CAR_COLOURS[(seed + i) % len(CAR_COLOURS)])
        elif cls == "person" and crowd:
            step = (x2 - x1) / 5
            for j in range(5):  # a group of pedestrians
                top = y1 + (j % 2) * 12
                _draw_person(d, (x1 + j * step, top, x1 + (j + 1) * step, y2 - (j % 2) * 6),
                             CLOTHES[(j + 2) % len(CLOTHES)])  # fmt: skip
        elif cls == "person":
            _draw_person(d, box, CLOTHES[(seed + i) % len(CLOTHES)])
        elif cls == "dog":
            _draw_dog(d, box)
        elif cls == "bicycle":
            _draw_bicycle(d, box)
        else:
            _draw_traffic_light(d, box)
    return img


def write_images(out: str) -> None:
    """``images/``: the scene's pictures, JPEG (PNG for street_08 and street_09)."""
    os.makedirs(out, exist_ok=True)
    for stem in IMAGES:
        img = scene_image(stem)
        if stem in PNG_SCENE_IMAGES:
            # Flat colours: a small palette PNG.
            img.quantize(colors=32, dither=0).save(os.path.join(out, f"{stem}.png"), optimize=True)
        else:
            img.save(os.path.join(out, f"{stem}.jpg"), quality=60, optimize=True)


def main() -> None:
    write_coco(os.path.join(HERE, "coco"))
    write_voc(os.path.join(HERE, "voc"))
    write_csv(os.path.join(HERE, "csv"))
    write_yolo(os.path.join(HERE, "yolo"))
    write_labelme(os.path.join(HERE, "labelme"))
    write_cvat(os.path.join(HERE, "cvat"))
    write_openimages(os.path.join(HERE, "openimages"))
    write_images(os.path.join(HERE, "images"))


if __name__ == "__main__":
    main()
