"""Seeded synthetic data with COCO person-keypoints val2017's shape (``make_data.py``'s ``keypoints`` kind).

The real file: 5,000 images, 2,693 with people, 11,004 person annotations
of which 6,352 have labelled keypoints.  Here, per image: no person in ~46%
of the images, else 1 + a negative binomial (~4 per such image, a tail to
40); boxes of a person's aspect with COCO's spread of sizes; ~1% crowd
regions (no keypoints); a person smaller than 32x32 pixels has no labelled
keypoint (``num_keypoints`` 0, ignored, as COCO leaves small people
unlabelled), a larger one labels each of the 17 keypoints with probability
0.75 (``v`` 1 or 2); ``area`` is 0.53 of the box (a person's mask).

Results, as a pose model writes them (``val(save_json=True)``): ``bbox``,
17 keypoints ``[x, y, confidence]`` and a score; one detection for ~90% of
the people (keypoints jittered by a few percent of the person's size),
looser duplicates, figures on the background, the best 20 per image
(pycocotools reads no more); scores rounded to 5 decimals (ties occur).
Everything is drawn with numpy in whole arrays; building the JSON records
loops in Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# A standing figure: the 17 COCO keypoints as fractions of the box (u across, v down).
FIGURE = np.array([
    (0.50, 0.07), (0.56, 0.05), (0.44, 0.05), (0.63, 0.06), (0.37, 0.06), (0.74, 0.20),
    (0.26, 0.20), (0.84, 0.35), (0.16, 0.35), (0.88, 0.48), (0.12, 0.48), (0.64, 0.52),
    (0.36, 0.52), (0.64, 0.73), (0.36, 0.73), (0.65, 0.95), (0.35, 0.95),
])  # fmt: skip
K = len(FIGURE)
MAX_PER_IMAGE = 20
NAMES = [
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder",
    "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
    "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
]  # fmt: skip


def _people(rng: np.random.Generator, width: np.ndarray, height: np.ndarray) -> dict[str, Any]:
    """Ground-truth columns: ``image``, box ``x, y, w, h``, ``crowd``, keypoints ``[G, 17, 3]``."""
    n = len(width)
    counts = 1 + rng.negative_binomial(0.8, 0.8 / (0.8 + 3.1), n)
    counts = np.minimum(counts, 40)
    counts[rng.random(n) < 0.46] = 0
    image = np.repeat(np.arange(n), counts)
    g = len(image)
    area = np.exp(rng.uniform(np.log(150.0), np.log(90_000.0), g))
    h = np.minimum(np.sqrt(area * 2.4), height[image] * 0.98)
    w = np.minimum(area / h, width[image] * 0.98)
    x = rng.uniform(0, 1, g) * (width[image] - w)
    y = rng.uniform(0, 1, g) * (height[image] - h)
    crowd = rng.random(g) < 0.01
    xy = _figure(x, y, w, h) + rng.normal(0, 0.03, (g, K, 2)) * np.stack([w, h], 1)[:, None, :]
    labelled = (rng.random((g, K)) < 0.75) & (w * h >= 32 * 32)[:, None] & ~crowd[:, None]
    v = np.where(labelled, rng.choice([1, 2], (g, K), p=[0.3, 0.7]), 0)
    kp = np.concatenate([np.where(labelled[..., None], np.round(xy), 0), v[..., None]], axis=2)
    return {"image": image, "x": x, "y": y, "w": w, "h": h, "crowd": crowd, "kp": kp}


def _figure(x: np.ndarray, y: np.ndarray, w: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``[N, 17, 2]`` the standing figure in each box."""
    return np.stack([x[:, None] + FIGURE[None, :, 0] * w[:, None],
                     y[:, None] + FIGURE[None, :, 1] * h[:, None]], axis=2)  # fmt: skip


def _detections(rng: np.random.Generator, gts: dict, width: np.ndarray, height: np.ndarray):
    """Result columns: ``image``, box, keypoints ``[D, 17, 3]``, ``score``; the best 20 per image."""
    g = len(gts["image"])
    real = ~gts["crowd"]
    first = np.flatnonzero(real & (rng.random(g) < 0.9))
    dup = np.flatnonzero(real & (rng.random(g) < 0.2))
    src = np.concatenate([first, dup])
    spread = np.concatenate(
        [rng.uniform(0.005, 0.06, len(first)), rng.uniform(0.05, 0.2, len(dup))]
    )
    n_bg = rng.poisson(8.0, len(width))
    bg_image = np.repeat(np.arange(len(width)), n_bg)
    b = len(bg_image)
    bw, bh = rng.uniform(10, 120, b), rng.uniform(30, 300, b)
    bw, bh = np.minimum(bw, width[bg_image] * 0.9), np.minimum(bh, height[bg_image] * 0.9)
    bx = rng.uniform(0, 1, b) * (width[bg_image] - bw)
    by = rng.uniform(0, 1, b) * (height[bg_image] - bh)
    image = np.concatenate([gts["image"][src], bg_image])
    x = np.concatenate([gts["x"][src], bx])
    y = np.concatenate([gts["y"][src], by])
    w = np.concatenate([gts["w"][src], bw])
    h = np.concatenate([gts["h"][src], bh])
    spread = np.concatenate([spread, rng.uniform(0.01, 0.05, b)])
    d = len(image)
    size = np.stack([w, h], 1)[:, None, :]
    xy = _figure(x, y, w, h) + rng.normal(0, 1, (d, K, 2)) * spread[:, None, None] * size
    conf = rng.uniform(0.05, 1.0, (d, K, 1))
    kp = np.concatenate([np.round(xy, 2), np.round(conf, 3)], axis=2)
    score = np.round(np.clip(1.0 - spread * 4 + rng.normal(0, 0.1, d), 0.01, 1.0), 5)
    score[len(src) :] *= 0.5
    # The best MAX_PER_IMAGE of each image, by image then falling score.
    order = np.lexsort((-score, image))
    rank = np.arange(d) - np.searchsorted(image[order], image[order])
    keep = order[rank < MAX_PER_IMAGE]
    box = np.stack([x, y, w, h], 1)[keep]
    return {"image": image[keep], "box": np.round(box, 2), "kp": kp[keep], "score": score[keep]}


def generate_keypoints(images: dict, rng: np.random.Generator):
    """``(ground-truth document, results list, statistics)`` for ``images`` (make_data's columns)."""
    width, height, ids = images["width"], images["height"], images["id"]
    gts = _people(rng, width, height)
    dets = _detections(rng, gts, width, height)
    labelled = (gts["kp"][:, :, 2] > 0).sum(axis=1)
    area = 0.53 * gts["w"] * gts["h"]
    boxes = np.round(np.stack([gts["x"], gts["y"], gts["w"], gts["h"]], 1), 2)
    anns = [
        {"segmentation": [], "num_keypoints": nk, "area": a, "iscrowd": c,
         "keypoints": kp, "image_id": im, "bbox": bb, "category_id": 1, "id": i + 1}
        for i, (nk, a, c, kp, im, bb) in enumerate(zip(
            labelled.tolist(), np.round(area, 2).tolist(), gts["crowd"].astype(int).tolist(),
            gts["kp"].reshape(len(area), -1).astype(int).tolist(), ids[gts["image"]].tolist(),
            boxes.tolist(), strict=True))
    ]  # fmt: skip
    image_docs = [
        {"file_name": f"{i:012d}.jpg", "height": int(hh), "width": int(ww), "id": int(i)}
        for i, ww, hh in zip(ids.tolist(), width.tolist(), height.tolist(), strict=True)
    ]
    gt_doc = {
        "info": {"description": "Synthetic person keypoints (iou-eval benchmark)"},
        "images": image_docs,
        "annotations": anns,
        "categories": [{"supercategory": "person", "id": 1, "name": "person",
                        "keypoints": NAMES, "skeleton": []}],
    }  # fmt: skip
    results = [
        {"image_id": im, "category_id": 1, "bbox": bb, "keypoints": kp, "score": s}
        for im, bb, kp, s in zip(
            ids[dets["image"]].tolist(), dets["box"].tolist(),
            dets["kp"].reshape(len(dets["score"]), -1).tolist(), dets["score"].tolist(),
            strict=True,
        )
    ]  # fmt: skip
    n = len(ids)
    stats = {
        "ground_truths": len(anns),
        "crowd": int(gts["crowd"].sum()),
        "labelled": int((labelled > 0).sum()),
        "images_with_people": int(len(np.unique(gts["image"]))),
        "predictions": len(results),
        "predictions_per_image_mean": round(len(results) / n, 2),
    }
    return gt_doc, results, stats
