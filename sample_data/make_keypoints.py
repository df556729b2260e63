"""Write the keypoint scene: ``python sample_data/make_keypoints.py``.

The people of the street scene (``make_sample.py``) with COCO's 17 person
keypoints, for ``--iou-type keypoints``:

- ``keypoints/gt.json``: a COCO person-keypoints dataset (the ``person``
  category lists the 17 keypoint names and the skeleton); each person's
  ``keypoints`` are ``[x, y, v]`` triplets placed on a standing figure
  inside its box, ``v`` 2 (visible), 1 (labelled, occluded) or 0 (not
  labelled, written as ``0, 0, 0``); ``area`` is 0.53 of the box's
  ``w * h`` (COCO's ``area`` is a person's mask, about that much of its box);
- ``keypoints/preds.json``: results as a pose model's ``val(save_json=True)``
  writes them: ``bbox``, ``keypoints`` ``[x, y, confidence]`` and ``score``;
- ``yolo-pose/``: the same scene as an Ultralytics pose dataset
  (``kpt_shape: [17, 3]``, blank PNGs of the scene's sizes, label lines
  ``class cx cy w h x1 y1 v1 ...`` in fractions) and its predictions as
  ``predict(save_txt=True, save_conf=True)`` writes them
  (``predictions/labels``: ``class cx cy w h x1 y1 c1 ... conf``).

What the scene holds, so that each rule has something to show:

- the group of pedestrians (``iscrowd`` 1, no keypoints, ``num_keypoints``
  0): two detections on it are swallowed (neither hits nor false positives);
- the far-away person with no labelled keypoint (``num_keypoints`` 0):
  ignored, as pycocotools ignores such a person; a detection on it is
  matched to it by the distance to its box enlarged by its size, and
  ignored too;
- close detections (OKS above 0.9), a loose one that counts at OKS 0.5 but
  not at 0.75, a person missed, a duplicate, a person's keypoints in the
  wrong box (a false positive) and a pose on an image without people;
- distinct scores (no ties).

The output is deterministic: running the script again rewrites identical files.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from make_sample import GROUND_TRUTH, IMAGES, _coco_id  # noqa: E402

NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder",
    "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
    "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
]  # fmt: skip
SKELETON = [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13], [6, 12], [7, 13], [6, 7],
            [6, 8], [7, 9], [8, 10], [9, 11], [2, 3], [1, 2], [1, 3], [2, 4], [3, 5],
            [4, 6], [5, 7]]  # fmt: skip
# A standing figure, each keypoint as a fraction of the box (u across, v down).
FIGURE = [
    (0.50, 0.07), (0.56, 0.05), (0.44, 0.05), (0.63, 0.06), (0.37, 0.06), (0.74, 0.20),
    (0.26, 0.20), (0.84, 0.35), (0.16, 0.35), (0.88, 0.48), (0.12, 0.48), (0.64, 0.52),
    (0.36, 0.52), (0.64, 0.73), (0.36, 0.73), (0.65, 0.95), (0.35, 0.95),
]  # fmt: skip
AREA_OF_BOX = 0.53

# The people of the street scene: (image, box, labels), labels a string of
# v per keypoint ("-": the group of pedestrians, a crowd without keypoints).
PEOPLE = [
    ("street_01", "22222222222222222"),
    ("street_02", "22222222222211111"),  # legs behind the bicycle: occluded
    ("street_02", "20022222222222222"),  # ears not labelled
    ("street_04", "22222222122222222"),
    ("street_05", "-"),  # the group of pedestrians
    ("street_05", "22222222222222200"),  # feet out of sight
    ("street_06", "22211222222222222"),
    ("street_07", "22222222222222222"),
    ("street_07", "00000000000000000"),  # far away: nothing labelled, ignored
    ("street_09", "22222222222222222"),
    ("street_10", "21122222222222222"),
    ("street_11", "22222222222222222"),
]
# Predictions: (image, person index in that image or a box, keypoint jitter as a
# fraction of the box, score).  Jitters: 0.01 close, 0.1 loose.
PREDICTIONS = [
    ("street_01", 0, 0.010, 0.97),
    ("street_02", 0, 0.012, 0.93),
    ("street_02", 1, 0.100, 0.71),  # loose: counts at OKS 0.5, not at 0.75
    ("street_02", 1, 0.015, 0.34),  # a duplicate of the loose one's person
    ("street_04", 0, 0.010, 0.95),
    ("street_05", 0, 0.050, 0.66),  # on the crowd: swallowed
    ("street_05", 0, 0.080, 0.52),  # on the crowd: swallowed
    ("street_05", 1, 0.010, 0.89),
    ("street_06", 0, 0.020, 0.81),
    ("street_07", 0, 0.012, 0.76),
    ("street_07", 1, 0.015, 0.44),  # on the far-away person: ignored with it
    ("street_07", (420, 120, 480, 320), 0.010, 0.58),  # a figure where nobody is
    ("street_09", 0, 0.010, 0.86),
    ("street_10", 0, 0.025, 0.63),
    ("street_12", (200, 120, 260, 300), 0.010, 0.27),  # an image without people
]  # street_11's person is missed

PERSON_BOXES: dict[str, list[tuple[int, int, int, int]]] = {}
for _stem, _cls, *_box, _crowd, _diff in GROUND_TRUTH:
    if _cls == "person":
        PERSON_BOXES.setdefault(_stem, []).append(tuple(_box))  # type: ignore[arg-type]


def _jitter(i: int, k: int, amount: float) -> tuple[float, float]:
    """A deterministic offset in [-amount, amount] for keypoint ``k`` of prediction ``i``."""
    a = ((i * 7919 + k * 104729) % 1000) / 999.0 * 2 - 1
    b = ((i * 6271 + k * 130363) % 1000) / 999.0 * 2 - 1
    return a * amount, b * amount


def _figure(box: tuple[int, int, int, int]) -> list[tuple[float, float]]:
    x1, y1, x2, y2 = box
    return [(round(x1 + u * (x2 - x1), 1), round(y1 + v * (y2 - y1), 1)) for u, v in FIGURE]


def ground_truth() -> tuple[dict, list[tuple[str, tuple, str]]]:
    """The COCO dataset and its people ``(image, box, labels)``."""
    seen: dict[str, int] = {}
    people = []
    for stem, labels in PEOPLE:
        box = PERSON_BOXES[stem][seen.get(stem, 0)]
        seen[stem] = seen.get(stem, 0) + 1
        people.append((stem, box, labels))
    anns = []
    for i, (stem, box, labels) in enumerate(people):
        x1, y1, x2, y2 = box
        crowd = labels == "-"
        kp: list[float] = []
        for (x, y), v in zip(_figure(box), "0" * 17 if crowd else labels, strict=True):
            kp += [x, y, 2] if v == "2" else [x, y, 1] if v == "1" else [0, 0, 0]
        anns.append({
            "id": i + 1, "image_id": _coco_id(stem), "category_id": 1,
            "bbox": [x1, y1, x2 - x1, y2 - y1],
            "area": round(AREA_OF_BOX * (x2 - x1) * (y2 - y1), 2), "iscrowd": int(crowd),
            "num_keypoints": sum(v != "0" for v in labels) if not crowd else 0, "keypoints": kp,
        })  # fmt: skip
    images = [{"id": _coco_id(s), "file_name": f"{s}.jpg", "width": w, "height": h}
              for s, (w, h) in IMAGES.items()]  # fmt: skip
    cats = [{"id": 1, "name": "person", "supercategory": "person", "keypoints": NAMES,
             "skeleton": SKELETON}]  # fmt: skip
    return {"images": images, "annotations": anns, "categories": cats}, people


def predictions() -> list[dict]:
    """The results list, by falling score."""
    out = []
    for i, (stem, who, jitter, score) in enumerate(PREDICTIONS):
        box = PERSON_BOXES[stem][who] if isinstance(who, int) else who
        x1, y1, x2, y2 = box
        w, h = x2 - x1, y2 - y1
        kp: list[float] = []
        for k, (x, y) in enumerate(_figure(box)):
            dx, dy = _jitter(i, k, jitter)
            conf = round(0.95 - 0.03 * k * (jitter > 0.05), 3)
            kp += [round(x + dx * w, 1), round(y + dy * h, 1), conf]
        out.append({
            "image_id": _coco_id(stem), "category_id": 1, "bbox": [x1 + 1, y1 - 1, w, h + 2],
            "keypoints": kp, "score": score,
        })  # fmt: skip
    return sorted(out, key=lambda r: -r["score"])


def _dump(path: str, obj) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def write_coco(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    gt, _ = ground_truth()
    _dump(os.path.join(out, "gt.json"), gt)
    _dump(os.path.join(out, "preds.json"), predictions())


def _line(values: list[float]) -> str:
    return " ".join(f"{v:.6f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)
                    for v in values)  # fmt: skip


def _fractions(box, kp: list[float], w: int, h: int) -> list[float]:
    x1, y1, x2, y2 = box
    head = [(x1 + x2) / 2 / w, (y1 + y2) / 2 / h, (x2 - x1) / w, (y2 - y1) / h]
    body = []
    for j in range(0, len(kp), 3):
        body += [kp[j] / w, kp[j + 1] / h, float(kp[j + 2])]
    return head + body


def write_yolo_pose(out: str) -> None:
    from PIL import Image

    gt, people = ground_truth()
    stems = list(IMAGES)
    for sub in ("images/val", "labels/val", "predictions/labels"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "data.yaml"), "w", encoding="utf-8") as f:
        f.write("# The street scene's people as an Ultralytics pose dataset (make_keypoints.py).\n"
                "val: images/val\nkpt_shape: [17, 3]\n"
                "flip_idx: [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]\n"
                "names:\n  0: person\n")  # fmt: skip
    labels: dict[str, list[str]] = {s: [] for s in stems}
    for ann, (stem, box, mark) in zip(gt["annotations"], people, strict=True):
        if mark == "-":
            continue  # YOLO has no crowd regions: the group is left out
        w, h = IMAGES[stem]
        labels[stem].append("0 " + _line(_fractions(box, ann["keypoints"], w, h)))
    preds: dict[str, list[str]] = {}
    for r in predictions():
        stem = next(s for s in stems if _coco_id(s) == r["image_id"])
        w, h = IMAGES[stem]
        x, y, bw, bh = r["bbox"]
        row = _fractions((x, y, x + bw, y + bh), r["keypoints"], w, h) + [r["score"]]
        preds.setdefault(stem, []).append("0 " + _line(row))
    for stem, (w, h) in IMAGES.items():
        Image.new("1", (w, h), 0).save(os.path.join(out, "images/val", f"{stem}.png"), optimize=True)
        with open(os.path.join(out, "labels/val", f"{stem}.txt"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in labels[stem]))
        if stem in preds:
            with open(os.path.join(out, "predictions/labels", f"{stem}.txt"), "w",
                      encoding="utf-8") as f:  # fmt: skip
                f.write("".join(line + "\n" for line in preds[stem]))


def main() -> None:
    write_coco(os.path.join(HERE, "keypoints"))
    write_yolo_pose(os.path.join(HERE, "yolo-pose"))


if __name__ == "__main__":
    main()
