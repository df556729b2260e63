"""Write the sample scene as an LVIS dataset: ``python sample_data/make_lvis.py``.

``lvis/gt.json`` is the street scene of ``make_sample.py`` labelled the LVIS
way (federated), and ``lvis/preds.json`` its results list:

- every category has a ``frequency``: person, car and traffic light are
  frequent (``f``), bicycle and dog common (``c``), and two rare (``r``)
  categories join the scene, a fire hydrant (street_03) and a stroller
  (street_10);
- every image lists categories verified absent (``neg_category_ids``):
  results of those categories there are false positives (the stroller
  "seen" on the empty road, street_12); results of categories an image
  neither labels nor lists are not evaluated (a bench on street_04);
- the group of pedestrians of street_05 is an ordinary person (LVIS has no
  crowd regions) and person is ``not_exhaustive`` there: the two detections
  inside the group that match nothing are ignored, not false positives;
- the far-away person keeps ``"ignore": 1`` (lvis-api honours it).

``iou-eval sample_data/lvis/gt.json sample_data/lvis/preds.json`` detects
the LVIS ground truth and scores it with the LVIS protocol
(``tests/unit/test_sample_data.py`` checks it against lvis-api's numbers).
The output is deterministic.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from make_sample import _json_lines, coco_dicts  # noqa: E402

# The scene's categories, then the ones only this version has.
FREQUENCY = {
    "bicycle": "c", "car": "f", "dog": "c", "person": "f", "traffic light": "f",
    "fire hydrant": "r", "stroller": "r", "bench": "c",
}  # fmt: skip
EXTRA_CATEGORIES = ["fire hydrant", "stroller", "bench"]  # ids 6, 7, 8

# (image id, class, x, y, w, h): objects only the LVIS version labels.
EXTRA_GROUND_TRUTH = [
    (3, "fire hydrant", 300, 330, 40, 70),
    (10, "stroller", 420, 300, 110, 120),
]
# (image id, class, x, y, w, h, score)
EXTRA_PREDICTIONS = [
    (3, "fire hydrant", 302, 328, 39, 73, 0.81),
    (10, "stroller", 424, 296, 104, 126, 0.58),
    (12, "stroller", 100, 300, 90, 100, 0.27),  # verified absent: a false positive
    (4, "bench", 20, 330, 150, 60, 0.69),  # neither labelled nor listed: not evaluated
]
# Categories verified absent, per image id (never one labelled there).
NEGATIVE = {
    1: ["dog", "stroller"], 2: ["car"], 3: ["dog"], 4: ["bicycle"], 5: ["car", "dog"],
    6: ["dog"], 7: ["car"], 8: ["person"], 9: ["dog"], 10: ["car"], 11: ["bicycle"],
    12: ["car", "person", "stroller", "dog"],
}  # fmt: skip
NOT_EXHAUSTIVE = {5: ["person"]}


def lvis_dicts() -> tuple[dict, list[dict]]:
    """The scene as an LVIS dataset and a results list."""
    gt, preds = coco_dicts(crowd=False)
    names = [c["name"] for c in gt["categories"]] + EXTRA_CATEGORIES
    ids = {n: i + 1 for i, n in enumerate(names)}
    gt["categories"] = [
        {"id": ids[n], "name": n, "frequency": FREQUENCY[n]} for n in names
    ]
    for ann in gt["annotations"]:
        ann.pop("iscrowd")
    for image_id, cls, x, y, w, h in EXTRA_GROUND_TRUTH:
        gt["annotations"].append(
            {"id": len(gt["annotations"]) + 1, "image_id": image_id, "category_id": ids[cls],
             "bbox": [x, y, w, h], "area": w * h}
        )  # fmt: skip
    for img in gt["images"]:
        img["neg_category_ids"] = sorted(ids[n] for n in NEGATIVE.get(img["id"], []))
        img["not_exhaustive_category_ids"] = sorted(
            ids[n] for n in NOT_EXHAUSTIVE.get(img["id"], [])
        )
    for image_id, cls, x, y, w, h, score in EXTRA_PREDICTIONS:
        preds.append(
            {"image_id": image_id, "category_id": ids[cls], "bbox": [x, y, w, h], "score": score}
        )
    return gt, preds


def write_lvis(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    gt, preds = lvis_dicts()
    with open(os.path.join(out, "gt.json"), "w") as fh:
        fh.write(_json_lines([(k, gt[k]) for k in ("images", "annotations", "categories")]))
    with open(os.path.join(out, "preds.json"), "w") as fh:
        fh.write("[\n" + ",\n".join("  " + json.dumps(p) for p in preds) + "\n]\n")


if __name__ == "__main__":
    write_lvis(os.path.join(HERE, "lvis"))
