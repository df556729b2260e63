"""Write the sample aerial scene of oriented boxes: ``python sample_data/make_dota.py``.

Four synthetic aerial images (flat-coloured PNGs: a harbour, a car park, an
apron and a tank farm) with rotated objects of six DOTA-v1.0 classes, in
every oriented-box format iou-eval reads:

- ``dota/labelTxt/<image>.txt``: the DOTA ground truth, with the
  ``imagesource:`` / ``gsd:`` header lines, ``x1 y1 ... x4 y4 class
  difficult``; corners from various starting corners and in both windings;
  one difficult ship; one storage tank given as a square turned by 45°;
- ``dota/task1/Task1_<class>.txt``: the devkit's task-1 results of a
  detector (``image score x1 y1 ... x4 y4``): good boxes, a loose one,
  a duplicate, false alarms, a miss; two classes predicted nowhere;
- ``dota/preds.csv``: the same detections as ``cx, cy, w, h, angle``
  (radians, Ultralytics' ``xywhr``), the form a table of oriented boxes takes;
- ``dota/images/<image>.png``: the pictures (the boxes drawn in them are
  what the detector "saw");
- ``yolo-obb/``: the same scene as an Ultralytics OBB dataset: ``data.yaml``,
  ``images/val`` (the PNGs), ``labels/val`` (``class x1 y1 ... x4 y4`` in
  fractions), ``predictions/labels`` (``save_txt`` with the confidence last)
  and ``predictions.json`` (``val(save_json=True)``: ``rbox`` and ``poly``,
  ``category_id`` = index + 1).

The output is deterministic (seeded).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES = ("plane", "ship", "small-vehicle", "large-vehicle", "storage-tank", "tennis-court")
COLOURS = {
    "plane": (235, 235, 240), "ship": (250, 250, 250), "small-vehicle": (200, 40, 40),
    "large-vehicle": (230, 200, 60), "storage-tank": (210, 210, 200),
    "tennis-court": (70, 140, 90),
}  # fmt: skip
GROUND = {"P9001": (40, 80, 120), "P9002": (90, 90, 95), "P9003": (120, 120, 110),
          "P9004": (110, 100, 80)}  # fmt: skip
SIZES = {"P9001": (800, 600), "P9002": (640, 480), "P9003": (800, 600), "P9004": (640, 480)}

# (image, class, cx, cy, w, h, angle in degrees, difficult)
OBJECTS = [
    ("P9001", "ship", 150, 120, 120, 34, 20, 0),
    ("P9001", "ship", 330, 160, 140, 40, 20, 0),
    ("P9001", "ship", 520, 420, 90, 26, -35, 1),
    ("P9001", "ship", 640, 250, 160, 44, 80, 0),
    ("P9001", "large-vehicle", 90, 520, 60, 22, 0, 0),
    ("P9002", "small-vehicle", 100, 100, 40, 20, 0, 0),
    ("P9002", "small-vehicle", 150, 100, 40, 20, 0, 0),
    ("P9002", "small-vehicle", 200, 100, 40, 20, 0, 0),
    ("P9002", "small-vehicle", 100, 200, 40, 20, 90, 0),
    ("P9002", "small-vehicle", 300, 300, 42, 21, 30, 0),
    ("P9002", "small-vehicle", 360, 330, 42, 21, 30, 0),
    ("P9002", "large-vehicle", 500, 150, 110, 34, -15, 0),
    ("P9002", "large-vehicle", 520, 380, 100, 30, 60, 0),
    ("P9003", "plane", 250, 250, 160, 150, 30, 0),
    ("P9003", "plane", 560, 220, 150, 140, -45, 0),
    ("P9003", "plane", 420, 470, 120, 110, 0, 0),
    ("P9003", "small-vehicle", 700, 520, 36, 18, 45, 0),
    ("P9004", "storage-tank", 150, 150, 80, 80, 45, 0),
    ("P9004", "storage-tank", 260, 150, 80, 80, 0, 0),
    ("P9004", "storage-tank", 370, 150, 70, 70, 0, 0),
    ("P9004", "tennis-court", 420, 360, 140, 70, 10, 0),
    ("P9004", "tennis-court", 200, 360, 140, 70, 10, 0),
]

# Detections: (object index, score, shift x, shift y, scale, turn in degrees) or a
# false alarm (image, class, score, cx, cy, w, h, angle).
HITS = [
    (0, 0.95, 3, -2, 1.02, 2),
    (1, 0.91, -4, 3, 0.97, -3),
    (2, 0.55, 2, 2, 1.0, 4),
    (3, 0.88, 25, 10, 1.1, 12),
    (4, 0.40, 1, 1, 1.0, 0),
    (5, 0.93, 1, 0, 1.0, 0),
    (6, 0.92, 2, 1, 1.05, 3),
    (7, 0.62, 14, 6, 1.0, 20),
    (8, 0.90, 0, 2, 1.0, -4),
    (9, 0.86, -2, 1, 1.0, 5),
    (9, 0.81, 3, -1, 1.03, -2),
    (11, 0.84, 4, -3, 1.0, 6),
    (12, 0.45, 20, 15, 0.8, 25),
    (13, 0.97, 4, -5, 1.0, 3),
    (14, 0.89, -6, 4, 1.05, 6),
    (16, 0.58, 2, 2, 1.1, 0),
    (17, 0.94, 1, 1, 1.0, 40),
    (18, 0.92, 2, 0, 1.0, 2),
    (19, 0.35, 10, 8, 1.25, 0),
    (20, 0.83, -5, 3, 1.0, -4),
    (21, 0.77, 6, -4, 1.08, 8),
]
FALSE_ALARMS = [
    ("P9001", "ship", 0.72, 700, 520, 100, 30, 15),
    ("P9002", "small-vehicle", 0.66, 600, 440, 40, 20, 0),
    ("P9003", "plane", 0.51, 120, 520, 100, 100, 20),
    ("P9004", "storage-tank", 0.48, 560, 120, 60, 60, 0),
]


def corners(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """``[4, 2]`` as Ultralytics' ``xywhr2xyxyxyxy`` (angle in radians)."""
    c, s = math.cos(angle), math.sin(angle)
    v1 = np.array([w / 2 * c, w / 2 * s])
    v2 = np.array([-h / 2 * s, h / 2 * c])
    ctr = np.array([cx, cy])
    return np.array([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2])


def _fmt(values) -> str:
    return " ".join(f"{v:.1f}" for v in np.asarray(values).ravel())


def _detections() -> list[tuple[str, str, float, tuple[float, ...]]]:
    """``(image, class, score, (cx, cy, w, h, angle in radians))``."""
    out = []
    for k, score, dx, dy, scale, turn in HITS:
        img, cls, cx, cy, w, h, deg, _ = OBJECTS[k]
        out.append((img, cls, score, (cx + dx, cy + dy, w * scale, h * scale,
                                      math.radians(deg + turn))))  # fmt: skip
    for img, cls, score, cx, cy, w, h, deg in FALSE_ALARMS:
        out.append((img, cls, score, (cx, cy, w, h, math.radians(deg))))
    return out


def _order(c: np.ndarray, k: int) -> np.ndarray:
    """The corners from corner ``k % 4``, the other way round when ``k`` is odd."""
    c = np.roll(c, -(k % 4), axis=0)
    return c[::-1] if k % 2 else c


def write_dota(out: str) -> None:
    for sub in ("labelTxt", "task1", "images"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for img in SIZES:
        with open(os.path.join(out, "labelTxt", f"{img}.txt"), "w") as fh:
            fh.write("imagesource:GoogleEarth\ngsd:0.146343590398\n")
            for k, (i, cls, cx, cy, w, h, deg, diff) in enumerate(OBJECTS):
                if i == img:
                    c = _order(corners(cx, cy, w, h, math.radians(deg)), k)
                    fh.write(f"{_fmt(c)} {cls} {diff}\n")
    dets = _detections()
    for cls in CLASSES:
        mine = [d for d in dets if d[1] == cls]
        if not mine:
            continue
        with open(os.path.join(out, "task1", f"Task1_{cls}.txt"), "w") as fh:
            for img, _, score, box in mine:
                fh.write(f"{img} {score:g} {_fmt(corners(*box))}\n")
    with open(os.path.join(out, "preds.csv"), "w") as fh:
        fh.write("image,label,score,cx,cy,w,h,angle\n")
        for img, cls, score, (cx, cy, w, h, a) in dets:
            fh.write(f"{img},{cls},{score:g},{cx:g},{cy:g},{w:g},{h:g},{a:.6f}\n")
    for img, (w, h) in SIZES.items():
        _picture(os.path.join(out, "images", f"{img}.png"), img, w, h)


def _picture(path: str, img: str, w: int, h: int) -> None:
    """A flat aerial picture: the ground, and each object's shape in its colour."""
    from PIL import Image, ImageDraw

    pic = Image.new("RGB", (w, h), GROUND[img])
    draw = ImageDraw.Draw(pic)
    for _, cls, cx, cy, bw, bh, deg, _ in (o for o in OBJECTS if o[0] == img):
        c = corners(cx, cy, bw, bh, math.radians(deg))
        draw.polygon([tuple(p) for p in c], fill=COLOURS[cls], outline=(30, 30, 30))
    pic.save(path, optimize=True)


def write_yolo_obb(out: str) -> None:
    for sub in ("images/val", "labels/val", "predictions/labels"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "data.yaml"), "w") as fh:
        fh.write("# The sample aerial scene as an Ultralytics OBB dataset (make_dota.py).\n")
        fh.write("val: images/val\nnames:\n")
        fh.writelines(f"  {i}: {n}\n" for i, n in enumerate(CLASSES))
    index = {c: i for i, c in enumerate(CLASSES)}
    records = []
    for img, (w, h) in SIZES.items():
        _picture(os.path.join(out, "images/val", f"{img}.png"), img, w, h)
        scale = np.array([w, h], dtype=float)
        with open(os.path.join(out, "labels/val", f"{img}.txt"), "w") as fh:
            for _, cls, cx, cy, bw, bh, deg, _ in (o for o in OBJECTS if o[0] == img):
                c = corners(cx, cy, bw, bh, math.radians(deg)) / scale
                fh.write(f"{index[cls]} " + " ".join(f"{v:.6f}" for v in c.ravel()) + "\n")
        mine = sorted((d for d in _detections() if d[0] == img), key=lambda d: -d[2])
        with open(os.path.join(out, "predictions/labels", f"{img}.txt"), "w") as fh:
            for _, cls, score, box in mine:
                c = corners(*box) / scale
                fh.write(f"{index[cls]} " + " ".join(f"{v:g}" for v in c.ravel()) + f" {score:g}\n")
        for _, cls, score, box in mine:
            records.append({
                "image_id": img, "file_name": f"{img}.png", "category_id": index[cls] + 1,
                "score": round(score, 5), "rbox": [round(v, 3) for v in box],
                "poly": [round(float(v), 3) for v in corners(*box).ravel()],
            })  # fmt: skip
    with open(os.path.join(out, "predictions.json"), "w") as fh:
        json.dump(records, fh)


if __name__ == "__main__":
    write_dota(os.path.join(HERE, "dota"))
    write_yolo_obb(os.path.join(HERE, "yolo-obb"))
