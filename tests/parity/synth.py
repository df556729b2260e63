"""Seeded random COCO scenes full of edge cases, and a pycocotools runner.

Scenes mix integer-grid boxes (IoUs that land exactly on thresholds),
float boxes, crowd regions, score ties, ground-truth areas on the area-range
boundaries, empty images, categories without ground truth or without
predictions, and groups of more than 100 predictions.
"""

from __future__ import annotations

import contextlib
import copy
import io

import numpy as np


def make_scene(seed: int, n_images: int = 60, n_categories: int = 6, **kw) -> tuple[dict, list]:
    """A ground-truth dict and a results list, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    crowd_rate = kw.get("crowd_rate", 0.06)
    tie_decimals = kw.get("tie_decimals", int(rng.integers(1, 3)))
    zero_id = kw.get("zero_id", False)
    string_ids = kw.get("string_ids", False)
    cat_ids = sorted(rng.choice(np.arange(1, 4 * n_categories + 1), n_categories, replace=False))
    cat_ids = [int(c) for c in cat_ids]
    images = []
    anns = []
    preds = []
    img_ids = rng.choice(np.arange(1, 50 * n_images), n_images, replace=False)
    ann_id = 0 if zero_id else 1
    # One category never has ground truth; another never gets predictions.
    no_gt_cat = cat_ids[-1]
    no_pred_cat = cat_ids[0] if n_categories > 2 else None
    special = [32.0**2, 96.0**2, 32.0**2 - 1e-9, 96.0**2 + 1e-9, 0.0]
    for img_id in img_ids:
        img_id = int(img_id)
        w_img, h_img = 640, 480
        images.append(
            {"id": img_id, "width": w_img, "height": h_img, "file_name": f"{img_id:06d}.jpg"}
        )
        n_gt = 0 if rng.random() < 0.1 else int(rng.integers(1, 12))
        gts_here = []
        for _ in range(n_gt):
            c = int(rng.choice(cat_ids[:-1]))
            if rng.random() < 0.5:
                x, y = float(rng.integers(0, 500)), float(rng.integers(0, 380))
                w, h = float(rng.integers(1, 140)), float(rng.integers(1, 100))
            else:
                x, y = rng.uniform(0, 500), rng.uniform(0, 380)
                w, h = rng.uniform(0.5, 140), rng.uniform(0.5, 100)
            crowd = int(rng.random() < crowd_rate)
            r = rng.random()
            area = (
                float(w * h)
                if r < 0.7
                else (
                    float(rng.choice(special)) if r < 0.85 else float(w * h * rng.uniform(0.3, 1.0))
                )
            )
            ann = {
                "id": ann_id,
                "image_id": img_id,
                "category_id": c,
                "bbox": [x, y, w, h],
                "area": area,
                "iscrowd": crowd,
            }
            if rng.random() < 0.05:
                ann["ignore"] = int(rng.integers(0, 2))
            ann_id += 1
            anns.append(ann)
            gts_here.append(ann)
        # Predictions: jittered copies, duplicates, wrong classes, background.
        n_pred = int(rng.integers(0, 20))
        if rng.random() < 0.05:
            n_pred = int(rng.integers(100, 160))  # more than maxDets in one group
        for _ in range(n_pred):
            if gts_here and rng.random() < 0.7:
                g = gts_here[int(rng.integers(len(gts_here)))]
                x, y, w, h = g["bbox"]
                if rng.random() < 0.5:
                    j = rng.integers(-3, 4, size=4).astype(float)
                else:
                    j = rng.normal(0, 4, size=4)
                bx = [x + j[0], y + j[1], max(w + j[2], 0.0), max(h + j[3], 0.0)]
                c = g["category_id"] if rng.random() < 0.85 else int(rng.choice(cat_ids))
            else:
                bx = [
                    float(rng.integers(0, 600)),
                    float(rng.integers(0, 440)),
                    float(rng.integers(1, 200)),
                    float(rng.integers(1, 200)),
                ]
                c = int(rng.choice(cat_ids))
            if c == no_pred_cat:
                c = cat_ids[1]
            if n_pred > 100 and gts_here:
                c = gts_here[0]["category_id"]
            score = round(float(rng.random()), tie_decimals)
            preds.append(
                {
                    "image_id": img_id,
                    "category_id": c,
                    "bbox": [float(v) for v in bx],
                    "score": score,
                }
            )
    cats = [{"id": c, "name": f"class{c}"} for c in cat_ids]
    rng.shuffle(images)
    gt = {"images": images, "annotations": anns, "categories": cats}
    if string_ids:
        for a in gt["annotations"][::3]:
            a["image_id"] = str(a["image_id"])
    assert no_gt_cat not in {a["category_id"] for a in anns}
    return gt, preds


def run_pycocotools(gt: dict, preds: list, as_given: bool = False, **params) -> dict:
    """pycocotools' arrays and stats for a scene (quietly).

    Annotation image ids are made integers (the scenes' ``string_ids`` spell
    some as text, which iou-eval joins and pycocotools would not) unless
    ``as_given``: then the files are read exactly as written.
    """
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt = copy.deepcopy(gt)
    if not as_given:
        for a in gt["annotations"]:
            a["image_id"] = int(a["image_id"])
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO()
        cg.dataset = gt
        cg.createIndex()
        if preds:
            cd = cg.loadRes(copy.deepcopy(preds))
        else:
            cd = COCO()
            cd.dataset = {"images": gt["images"], "annotations": [], "categories": gt["categories"]}
            cd.createIndex()
        ev = COCOeval(cg, cd, "bbox")
        for k, v in params.items():
            setattr(ev.params, k, v)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {
        "precision": ev.eval["precision"],
        "recall": ev.eval["recall"],
        "scores": ev.eval["scores"],
        "stats": np.asarray(ev.stats),
    }
