"""Ultralytics ``predict`` output against its YOLO dataset, from a fresh clone, as pycocotools scores it.

A dataset as Ultralytics lays it out (``data.yaml``, ``images/val``,
``labels/val``) and what ``model.predict(save_txt=True, save_conf=True)``
leaves behind without its images (``runs/detect/predict/labels/*.txt``:
``class cx cy w h conf``, fractions, confidence last, a file's lines by
falling confidence, no file for an image without detections).  Both
``iou-eval DATA.yaml runs/detect/predict`` and ``.../predict/labels`` give
pycocotools' numbers, with no format flag.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from iou_eval import evaluate

from ..acceptance.helpers import STAT_NAMES
from ..cli.helpers import run
from ..unit.formats_helpers import image, write
from .test_format_samples import yolo_box

NAMES = ("person", "car", "dog")


def _g(v: float) -> str:
    return f"{v:.6g}"  # Ultralytics writes label numbers with '%g'


def ultralytics_scene(root: Path, seed: int) -> tuple[Path, Path, dict, list[dict]]:
    """The dataset and the predict run under ``root``, and their COCO twins in pixels.

    Returns ``(data.yaml, runs/detect/predict, gt, results)``: the twins
    convert each label line as Ultralytics' ``xywhn2xyxy`` does.
    """
    rng = np.random.default_rng(seed)
    data = root / "datasets/shapes"
    run_dir = root / "runs/detect/predict"
    write(data / "data.yaml", "train: images/train\nval: images/val\n"
          "names:\n" + "".join(f"  {i}: {n}\n" for i, n in enumerate(NAMES)))  # fmt: skip
    (data / "images/train").mkdir(parents=True)
    images, annotations, results = [], [], []
    for i in range(14):
        stem, (w, h) = f"img_{i:03d}", (int(rng.integers(160, 640)), int(rng.integers(120, 480)))
        image(data / f"images/val/{stem}{'.png' if i % 3 else '.jpg'}", w, h)
        images.append({"id": i + 1, "file_name": stem, "width": w, "height": h})
        labels, preds = [], []
        for _ in range(int(rng.integers(0, 6))):
            c = int(rng.integers(0, len(NAMES)))
            bw, bh = rng.uniform(0.03, 0.5), rng.uniform(0.03, 0.5)
            cx, cy = rng.uniform(bw / 2, 1 - bw / 2), rng.uniform(bh / 2, 1 - bh / 2)
            labels.append(f"{c} {_g(cx)} {_g(cy)} {_g(bw)} {_g(bh)}")
            for _ in range(int(rng.integers(0, 3))):  # jittered detections, some of another class
                jc = c if rng.random() < 0.85 else int(rng.integers(0, len(NAMES)))
                jw, jh = bw * rng.uniform(0.8, 1.2), bh * rng.uniform(0.8, 1.2)
                jx = float(np.clip(cx + rng.normal(0, bw / 8), jw / 2, 1 - jw / 2))
                jy = float(np.clip(cy + rng.normal(0, bh / 8), jh / 2, 1 - jh / 2))
                preds.append((float(np.round(rng.uniform(0.05, 1.0), 2)), jc, jx, jy, jw, jh))
        if rng.random() < 0.3:  # a stray detection on the background
            preds.append((0.3, 0, 0.5, 0.5, 0.1, 0.1))
        if labels or rng.random() < 0.5:  # a missing label file: an image without objects
            write(data / f"labels/val/{stem}.txt", "\n".join(labels) + ("\n" if labels else ""))
        for line in labels:
            c, *rest = line.split()
            box = yolo_box(rest, w, h)
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1, "category_id": int(c) + 1,
                                "bbox": box, "area": box[2] * box[3], "iscrowd": 0})  # fmt: skip
        if preds:  # predict writes no file for an image without detections
            preds.sort(key=lambda p: -p[0])
            lines = [f"{c} {_g(x)} {_g(y)} {_g(pw)} {_g(ph)} {_g(conf)}" for conf, c, x, y, pw, ph in preds]  # fmt: skip
            write(run_dir / f"labels/{stem}.txt", "\n".join(lines) + "\n")
            for line in lines:
                c, *rest, conf = line.split()
                results.append({"image_id": i + 1, "category_id": int(c) + 1,
                                "bbox": yolo_box(rest, w, h), "score": float(conf)})  # fmt: skip
    gt = {"images": images, "annotations": annotations,
          "categories": [{"id": i + 1, "name": n} for i, n in enumerate(NAMES)]}  # fmt: skip
    return data / "data.yaml", run_dir, gt, results


def pycocotools_bbox(gt: dict, results: list[dict]) -> COCOeval:
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = gt
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(results), "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def _expected(e: COCOeval) -> dict:
    return {k: (None if v == -1 else float(v)) for k, v in zip(STAT_NAMES.values(), e.stats, strict=True)}  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_predict_run_folders_give_pycocotools_numbers_without_a_flag(tmp_path, monkeypatch, seed):
    yaml, predict, gt, results = ultralytics_scene(tmp_path, seed)
    assert not list(predict.glob("*.png")) and not list(predict.glob("*.jpg"))  # no images saved
    reference = pycocotools_bbox(gt, results)
    monkeypatch.chdir(tmp_path)  # as from a fresh clone: relative paths
    for preds in ("runs/detect/predict", "runs/detect/predict/labels"):
        r = run("datasets/shapes/data.yaml", preds, "-f", "json", "--strict")
        doc = json.loads(r.out)
        assert doc["summary"] == _expected(reference), preds
        assert doc["inputs"]["predictions"]["format"] == "yolo" and doc["doubts"] == []
        (note,) = [w for w in doc["warnings"] if "read as Ultralytics predictions" in w]
        assert note.startswith(f"{preds}: read as Ultralytics predictions ('class cx cy w h conf'")
    ours = evaluate(str(yaml), str(predict))
    for name in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(getattr(ours.primary.arrays, name), reference.eval[name])
