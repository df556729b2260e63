"""Seeded random COCO scenes built to hold every kind of detection error.

Per ground truth the scene draws one or more of: a good detection, a
duplicate, a near miss (IoU between 0.1 and 0.5), a wrong class, a wrong
class *and* a near miss, or nothing (missed).  Besides: background boxes,
crowd regions with detections inside (of their class and of another),
integer-grid boxes whose IoU lands exactly on 0.5 / 0.1 and IoF exactly on
0.5, rounded scores (ties inside and across images), images without ground
truth or without predictions, images with more than 100 predictions, a
category without ground truth, one only in the predictions, and an
``images`` list that is not in id order.
"""

from __future__ import annotations

import numpy as np

W_IMG, H_IMG = 640, 480


def _box(rng, grid: bool) -> list[float]:
    if grid:
        x, y = float(rng.integers(0, 520)), float(rng.integers(0, 380))
        w, h = float(rng.integers(4, 120)), float(rng.integers(4, 100))
    else:
        x, y = rng.uniform(0, 520), rng.uniform(0, 380)
        w, h = rng.uniform(2, 120), rng.uniform(2, 100)
    return [float(x), float(y), float(w), float(h)]


def _jitter(rng, b: list[float], scale: float) -> list[float]:
    x, y, w, h = b
    j = rng.normal(0, scale, size=4)
    return [x + j[0] * w, y + j[1] * h, max(w * (1 + j[2]), 0.5), max(h * (1 + j[3]), 0.5)]


def _near_miss(rng, b: list[float]) -> list[float]:
    """A box whose IoU with ``b`` is roughly in (0.1, 0.5)."""
    x, y, w, h = b
    f = rng.uniform(0.45, 0.8)
    return [x + f * w * rng.choice([-1, 1]), y + rng.uniform(-0.1, 0.1) * h, w, h]


def _boundary(rng, b: list[float]) -> list[float]:
    """A box with IoU exactly 0.5 or exactly 0.1 with ``b`` (an integer box, height a
    multiple of 10): the same box cut to a half or a tenth of its height."""
    x, y, w, h = b
    return [x, y, w, h / 2] if rng.random() < 0.5 else [x, y, w, h / 10]


def _polygon(b: list[float]) -> list[list[float]]:
    """The box as a polygon: tidecv's COCO loader reads every annotation's segmentation."""
    x, y, w, h = b
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def _tie_gadget(rng, img: int, cat: int, anns: list, preds: list) -> None:
    """Two ground truths equally good for one prediction, listed in a random order.

    Match tie: ``P`` has IoU 0.5 with both ``A`` and ``B``, the later ``Q``
    only with ``A``: who gets ``A`` decides one true positive.  Target tie:
    ``P`` has IoU 0.2 with both, the later ``Q`` 1/3 with ``B`` only: which
    one ``P`` points at decides which localisation error is fixed.
    """
    x, y = float(rng.integers(10, 580)), float(rng.integers(20, 420))
    if rng.random() < 0.5:
        gts = [[x, y, 10.0, 20.0], [x, y - 10.0, 10.0, 20.0]]
        p, q = [x, y, 10.0, 10.0], [x, y + 10.0, 10.0, 10.0]
    else:
        gts = [[x, y, 10.0, 10.0], [x + 20.0, y, 10.0, 10.0]]
        p, q = [x + 5.0, y, 20.0, 10.0], [x + 25.0, y, 10.0, 10.0]
    if rng.random() < 0.5:
        gts.reverse()
    for box in gts:
        anns.append({"id": len(anns) + 1, "image_id": img, "category_id": cat, "bbox": box,
                     "area": box[2] * box[3], "iscrowd": 0, "segmentation": _polygon(box)})  # fmt: skip
    preds.append({"image_id": img, "category_id": cat, "bbox": p, "score": 0.97})
    preds.append({"image_id": img, "category_id": cat, "bbox": q, "score": 0.31})


def make_error_scene(
    seed: int, n_images: int = 40, n_categories: int = 5
) -> tuple[dict, list[dict]]:
    """A COCO ground-truth dict and a results list, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    cat_ids = sorted(
        int(c) for c in rng.choice(np.arange(1, 6 * n_categories), n_categories, replace=False)
    )
    no_gt_cat = cat_ids[-1]
    pred_only_cat = 6 * n_categories  # not in the ground truth's categories
    decimals = int(rng.integers(1, 4))
    img_ids = [int(i) for i in rng.choice(np.arange(1, 10 * n_images), n_images, replace=False)]
    images, anns, preds = [], [], []

    def score() -> float:
        return round(float(rng.random()), decimals)

    def pred(img: int, cat: int, box: list[float], s: float | None = None) -> None:
        preds.append({"image_id": img, "category_id": cat, "bbox": box,
                      "score": score() if s is None else s})  # fmt: skip

    for img in img_ids:
        images.append({"id": img, "width": W_IMG, "height": H_IMG, "file_name": f"{img}.jpg"})
        n_gt = 0 if rng.random() < 0.12 else int(rng.integers(1, 9))
        no_preds = rng.random() < 0.08
        for _ in range(n_gt):
            cat = int(rng.choice(cat_ids[:-1]))
            r = rng.random()
            box = _box(rng, grid=r >= 0.72 or rng.random() < 0.5)
            if 0.72 <= r < 0.8:
                box[3] = float(10 * max(round(box[3] / 10), 1))
            anns.append({"id": len(anns) + 1, "image_id": img, "category_id": cat, "bbox": box,
                         "area": box[2] * box[3], "iscrowd": 0, "segmentation": _polygon(box)})  # fmt: skip
            if no_preds:
                continue
            other = int(rng.choice([c for c in cat_ids if c != cat] + [pred_only_cat]))
            if r < 0.45:
                pred(img, cat, _jitter(rng, box, 0.05))
                if rng.random() < 0.3:  # duplicate
                    pred(img, cat, _jitter(rng, box, 0.05))
            elif r < 0.55:
                pred(img, cat, _near_miss(rng, box))
            elif r < 0.65:
                pred(img, other, _jitter(rng, box, 0.05))
            elif r < 0.72:
                pred(img, other, _near_miss(rng, box))
            elif r < 0.8:
                cut = _boundary(rng, box)
                c = cat if rng.random() < 0.7 else other
                pred(img, c, cut)
                if rng.random() < 0.4:  # again: exactly on the threshold of a taken one
                    pred(img, c, list(cut))
            # else: missed
        if rng.random() < 0.25:  # a crowd region, with detections inside
            cat = int(rng.choice(cat_ids[:-1]))
            x, y = float(rng.integers(0, 300)), float(rng.integers(0, 200))
            crowd = [x, y, 200.0, 160.0]
            anns.append({"id": len(anns) + 1, "image_id": img, "category_id": cat, "bbox": crowd,
                         "area": 32000.0, "iscrowd": 1, "segmentation": _polygon(crowd)})  # fmt: skip
            if not no_preds:
                for _ in range(int(rng.integers(1, 5))):
                    c = cat if rng.random() < 0.7 else int(rng.choice(cat_ids))
                    pred(img, c, [x + float(rng.integers(0, 150)), y + float(rng.integers(0, 120)),
                                  float(rng.integers(5, 60)), float(rng.integers(5, 50))])  # fmt: skip
                # IoF exactly 0.5: half of this box lies in the region.
                pred(img, cat, [x - 20.0, y + 10.0, 40.0, 20.0])
        if no_preds:
            continue
        if rng.random() < 0.3:
            _tie_gadget(rng, img, int(rng.choice(cat_ids[:-1])), anns, preds)
        for _ in range(int(rng.integers(0, 3))):  # background and stray boxes
            pred(img, int(rng.choice(cat_ids + [pred_only_cat])), _box(rng, grid=True))
        if rng.random() < 0.05:  # more than 100 predictions in one image
            for _ in range(int(rng.integers(100, 130))):
                pred(img, int(rng.choice(cat_ids)), _box(rng, grid=False))
    cats = [{"id": c, "name": f"class{c}"} for c in cat_ids]
    rng.shuffle(images)
    assert no_gt_cat not in {a["category_id"] for a in anns}
    return {"images": images, "annotations": anns, "categories": cats}, preds


def to_columns(gt: dict, preds: list[dict]) -> dict:
    """The scene as analysis columns: images in ``images`` order, categories by sorted id
    (prediction-only ids after), ``xyxy = (x, y, x + w, y + h)``."""
    img_index = {im["id"]: i for i, im in enumerate(gt["images"])}
    cat_ids = sorted(c["id"] for c in gt["categories"])
    cat_ids += sorted({p["category_id"] for p in preds} - set(cat_ids))
    cat_index = {c: i for i, c in enumerate(cat_ids)}

    def xyxy(rows: list[dict]) -> np.ndarray:
        b = np.array([r["bbox"] for r in rows], dtype=np.float64).reshape(-1, 4)
        return np.c_[b[:, :2], b[:, :2] + b[:, 2:]]

    anns = gt["annotations"]
    return {
        "gt_image": np.array([img_index[a["image_id"]] for a in anns], dtype=np.int64),
        "gt_category": np.array([cat_index[a["category_id"]] for a in anns], dtype=np.int64),
        "gt_xyxy": xyxy(anns),
        "gt_crowd": np.array([bool(a["iscrowd"]) for a in anns], dtype=bool),
        "pred_image": np.array([img_index[p["image_id"]] for p in preds], dtype=np.int64),
        "pred_category": np.array([cat_index[p["category_id"]] for p in preds], dtype=np.int64),
        "pred_xyxy": xyxy(preds),
        "pred_score": np.array([p["score"] for p in preds], dtype=np.float64),
        "num_images": len(gt["images"]),
        "num_categories": len(cat_ids),
    }
