"""Doubts that try the other reading on the data itself: box layouts, image ids, class names.

Each scene gives a wrong number without a word on the code before these
checks.  Now, without ``--strict``: exit 0, the doubt on stderr and in the
JSON ``doubts``; with it: exit 1; with the flag the doubt names: the right
number and no doubt.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ..conftest import ACCEPTANCE
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
CASE01 = ACCEPTANCE / "cases" / "01_padilla_odm_sample_txt"


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


def coco_scene(seed: int = 0, n_images: int = 40, sizes: bool = True) -> tuple[dict, list]:
    """A COCO ground truth (ids 1..n) and good predictions: each object found, jittered by a few pixels."""
    rng = np.random.default_rng(seed)
    images, anns, preds = [], [], []
    for i in range(1, n_images + 1):
        images.append({"id": i, "file_name": f"{i:04d}.jpg",
                       **({"width": 640, "height": 480} if sizes else {})})  # fmt: skip
        for _ in range(int(rng.integers(3, 8))):
            w, h = rng.uniform(20, 120), rng.uniform(20, 100)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            c = int(rng.integers(1, 4))
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": c,
                         "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})  # fmt: skip
            j = rng.normal(0, 2, size=4)
            preds.append({"image_id": i, "category_id": c, "score": float(rng.uniform(0.3, 1)),
                          "bbox": [x + j[0], y + j[1], w + j[2], h + j[3]]})  # fmt: skip
    cats = [{"id": c, "name": f"class{c}"} for c in (1, 2, 3)]
    return {"images": images, "annotations": anns, "categories": cats}, preds


def write(tmp_path: Path, name: str, doc) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def as_xyxy(preds: list) -> list:
    return [{**p, "bbox": [p["bbox"][0], p["bbox"][1], p["bbox"][0] + p["bbox"][2],
                           p["bbox"][1] + p["bbox"][3]]} for p in preds]  # fmt: skip


def doubts_in(doc: dict, err: str, *words: str) -> str:
    """The doubt of the JSON document that holds ``words``, checked to be on stderr too."""
    found = [d for d in doc["doubts"] if all(w in d for w in words)]
    assert len(found) == 1, (words, doc["doubts"])
    assert "warning (doubt)" in err and found[0][:60] in err
    return found[0]


# ------------------------------------------------------------------ box layouts


def _corners(src: Path, dst: Path) -> None:
    """Case 01's text files rewritten as ``class [score] x1 y1 x2 y2``."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        rows = []
        for line in f.read_text().splitlines():
            t = line.split()
            if t:
                x, y, w, h = (float(v) for v in t[-4:])
                rows.append(" ".join([*t[:-4], f"{x:g}", f"{y:g}", f"{x + w:g}", f"{y + h:g}"]))
        (dst / f.name).write_text("\n".join(rows) + "\n")


@pytest.fixture
def case01_xyxy(tmp_path):
    if not CASE01.is_dir():
        pytest.skip(f"acceptance case 01 not available at {CASE01}")
    for side in ("groundtruths", "detections"):
        _corners(CASE01 / side, tmp_path / side)
    return tmp_path / "groundtruths", tmp_path / "detections"


def test_xyxy_text_read_as_xywh_is_a_doubt_though_weak_detections_overlap_better_so(case01_xyxy):
    gt, dets = case01_xyxy
    args = (gt, dets, "--protocol", "voc12", "--iou-thr", "0.3")
    doc, err = report(*args)
    assert doc["summary"]["mAP"] == pytest.approx(0.2801, abs=1e-4)  # the wrong reading
    doubts_in(doc, err, "wider than its x", "--box-format xyxy")
    run(*args, "--strict", expect=1)
    doc, err = report(*args, "--box-format", "xyxy", "--strict")
    assert doc["summary"]["mAP"] == pytest.approx(0.2457, abs=1e-4)  # the published number
    assert doc["doubts"] == []


def test_coco_results_written_as_xyxy_against_a_ground_truth_without_sizes(tmp_path):
    gt, preds = coco_scene(sizes=False)
    g = write(tmp_path, "gt.json", gt)
    doc, err = report(g, write(tmp_path, "xyxy.json", as_xyxy(preds)))
    assert doc["summary"]["AP"] < 0.05  # the wrong reading, said by nothing before
    doubts_in(doc, err, "reading the prediction boxes as xyxy", "[x, y, width, height]")
    run(g, tmp_path / "xyxy.json", "--strict", expect=1)
    right, _ = report(g, write(tmp_path, "xywh.json", preds), "--strict")
    assert right["summary"]["AP"] > 0.6 and right["doubts"] == []


def test_csv_predictions_in_xyxy_read_as_xywh_without_image_sizes(tmp_path):
    gt, preds = coco_scene(seed=1, sizes=False)
    g = write(tmp_path, "gt.json", gt)
    lines = ["image_id,category_id,score,x,y,w,h"] + [
        f"{p['image_id']},{p['category_id']},{p['score']},{','.join(map(str, b['bbox']))}"
        for p, b in zip(preds, as_xyxy(preds), strict=True)
    ]
    (tmp_path / "preds.csv").write_text("\n".join(lines) + "\n")
    doc, err = report(g, tmp_path / "preds.csv")
    doubts_in(doc, err, "--pred-box-format xyxy")
    run(g, tmp_path / "preds.csv", "--strict", expect=1)
    right, _ = report(g, tmp_path / "preds.csv", "--pred-box-format", "xyxy", "--strict")
    assert right["summary"]["AP"] > 0.6 > doc["summary"]["AP"]


# ------------------------------------------------------------------ image ids


def test_prediction_image_ids_shifted_by_minus_one_name_the_offset(tmp_path):
    gt, preds = coco_scene(seed=2)
    g = write(tmp_path, "gt.json", gt)
    right, _ = report(g, write(tmp_path, "right.json", preds))
    shifted = write(tmp_path, "shifted.json", [{**p, "image_id": p["image_id"] - 1} for p in preds])
    doc, err = report(g, shifted)
    assert doc["summary"]["AP"] < 0.05
    doubts_in(doc, err, "image ids look shifted by -1", "image k overlap the ground truth of "
              "image k+1", "--image-id-offset 1")  # fmt: skip
    run(g, shifted, "--strict", expect=1)
    fixed, _ = report(g, shifted, "--image-id-offset", "1", "--strict")
    assert fixed["summary"] == right["summary"] and fixed["doubts"] == []


def test_prediction_image_ids_permuted_within_the_ground_truths_ids(tmp_path):
    gt, preds = coco_scene(seed=3)
    perm = np.random.default_rng(3).permutation(np.arange(1, 41))
    g = write(tmp_path, "gt.json", gt)
    moved = write(tmp_path, "moved.json", [{**p, "image_id": int(perm[p["image_id"] - 1])}
                                           for p in preds])  # fmt: skip
    doc, err = report(g, moved)
    assert doc["summary"]["AP"] < 0.05
    doubts_in(doc, err, "another image's ground truth far better than their own")
    run(g, moved, "--strict", expect=1)


def test_image_id_offset_needs_whole_number_ids(tmp_path):
    r = run(SAMPLE / "csv/gt.csv", SAMPLE / "csv/preds.csv", "--image-id-offset", "1", expect=2)
    assert "--image-id-offset" in r.err and "not a whole number" in r.err


# ------------------------------------------------------------------ class names


def test_dota_results_file_spelling_a_class_with_underscores(tmp_path):
    shutil.copytree(SAMPLE / "dota", tmp_path / "dota")
    task1 = tmp_path / "dota" / "task1"
    (task1 / "Task1_large-vehicle.txt").rename(task1 / "Task1_large_vehicle.txt")
    gt = tmp_path / "dota" / "labelTxt"
    right, _ = report(gt, SAMPLE / "dota" / "task1")
    doc, err = report(gt, task1)
    assert doc["summary"]["AP"] < right["summary"]["AP"]
    doubts_in(doc, err, "'large_vehicle'", "--class-map large_vehicle=large-vehicle")
    run(gt, task1, "--strict", expect=1)
    fixed, _ = report(gt, task1, "--class-map", "large_vehicle=large-vehicle", "--strict")
    assert fixed["summary"] == right["summary"] and fixed["doubts"] == []
