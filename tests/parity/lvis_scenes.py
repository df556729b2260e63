"""Seeded LVIS scenes: a federated ground truth and results that exercise every LVISEval rule.

Each image labels a few categories (ground truths), lists others as verified
absent (``neg_category_ids``) and some of its labelled ones as not exhaustive;
results fall on labelled, negative and unlisted categories (and on a category
the ground truth lacks), some images carry more than 300 results with scores
tied across the cut, and a few boxes have no area.
"""

from __future__ import annotations

import numpy as np

H, W = 96, 128


def _polygon(rng, cx: float, cy: float, r: float) -> list[float]:
    k = int(rng.integers(3, 8))
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = rng.uniform(0.4, 1.0, k) * r
    xs = np.clip(np.round(cx + rad * np.cos(ang), 2), 0, W)
    ys = np.clip(np.round(cy + rad * np.sin(ang), 2), 0, H)
    return [float(v) for xy in zip(xs, ys, strict=True) for v in xy]


def _box_of(poly: list[float]) -> list[float]:
    xs, ys = poly[0::2], poly[1::2]
    return [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]


def _categories(rng, n_cats: int, groups: str) -> list[dict]:
    return [
        {"id": c + 1, "name": f"c{c + 1}", "frequency": str(rng.choice(list(groups)))}
        for c in range(n_cats)
    ]


def _ground_truth(rng, images: list[dict], n_cats: int, quirks: bool) -> list[dict]:
    anns: list[dict] = []
    for img in images:
        present = rng.choice(n_cats, size=int(rng.integers(0, 4)), replace=False) + 1
        for c in present.tolist():
            for _ in range(int(rng.integers(1, 4))):
                poly = _polygon(rng, rng.uniform(0, W), rng.uniform(0, H), rng.uniform(4, 50))
                box = _box_of(poly)
                ann = {
                    "id": len(anns) + 1,
                    "image_id": img["id"],
                    "category_id": c,
                    "bbox": box,
                    "area": float(np.round(box[2] * box[3] * rng.uniform(0.4, 0.9), 2)),
                    "segmentation": [poly],
                }
                if quirks and rng.random() < 0.08:
                    ann["area"] = 0.0  # never evaluated (lvis-api keeps 0 < area)
                if quirks and rng.random() < 0.08:
                    ann["ignore"] = 1
                if quirks and rng.random() < 0.05:
                    ann["iscrowd"] = 1  # meaningless to lvis-api: plain IoU
                anns.append(ann)
        labelled = sorted({a["category_id"] for a in anns if a["image_id"] == img["id"]})
        others = [c for c in range(1, n_cats + 1) if c not in labelled]
        img["neg_category_ids"] = sorted(
            rng.choice(others, size=min(len(others), int(rng.integers(0, 4))), replace=False)
            .astype(int)
            .tolist()
        )
        img["not_exhaustive_category_ids"] = [c for c in labelled if rng.random() < 0.35]
    if quirks and anns:
        anns[int(rng.integers(len(anns)))]["id"] = 0  # pycocotools' (and lvis-api's) id-0 defect
    return anns


def _result_near(rng, ann: dict, score_digits: int) -> dict:
    x, y, w, h = ann["bbox"]
    j = rng.normal(0, 0.12, 4) * np.array([w, h, w, h]) + rng.normal(0, 1, 4)
    box = [float(x + j[0]), float(y + j[1]), float(max(w + j[2], 0.5)), float(max(h + j[3], 0.5))]
    return {
        "image_id": ann["image_id"],
        "category_id": ann["category_id"],
        "bbox": [round(v, 2) for v in box],
        "score": round(float(rng.random()), score_digits),
    }


def _random_result(rng, image_id: int, category_id: int, score_digits: int) -> dict:
    w, h = rng.uniform(1, 60, 2)
    x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
    return {
        "image_id": image_id,
        "category_id": category_id,
        "bbox": [round(float(v), 2) for v in (x, y, w, h)],
        "score": round(float(rng.random()), score_digits),
    }


def _results(rng, images, anns, n_cats: int, crowded: set[int], quirks: bool) -> list[dict]:
    res: list[dict] = []
    for img in images:
        iid = img["id"]
        # Coarse scores on crowded images: ties across the 300th place.
        digits = 1 if iid in crowded else 3
        for a in anns:
            if a["image_id"] == iid and rng.random() < 0.8:
                for _ in range(int(rng.integers(1, 3))):
                    res.append(_result_near(rng, a, digits))
        n = int(rng.integers(330, 420)) if iid in crowded else int(rng.integers(0, 12))
        # Labelled, negative and unlisted categories alike, and one the ground truth lacks.
        cats = rng.integers(1, n_cats + 2 if quirks else n_cats + 1, size=n)
        res += [_random_result(rng, iid, int(c), digits) for c in cats]
        if quirks and rng.random() < 0.3:
            r = _random_result(rng, iid, int(rng.integers(1, n_cats + 1)), digits)
            r["bbox"][2] = 0.0  # no area: never evaluated
            res.append(r)
    order = rng.permutation(len(res))
    return [res[i] for i in order]


def make_lvis_scene(
    seed: int,
    n_images: int = 14,
    n_cats: int = 9,
    groups: str = "rcf",
    crowded: int = 2,
    quirks: bool = True,
) -> tuple[dict, list[dict]]:
    """``(ground truth, results)`` of one seeded LVIS scene.

    ``groups``: the frequencies categories draw from ("cf": no rare category);
    ``crowded``: how many images get more than 300 results; ``quirks``: ignore
    flags, crowd flags, zero areas, an annotation id 0, a category only the
    results have, boxes without area.
    """
    rng = np.random.default_rng(seed)
    images = [
        {"id": i + 1, "height": H, "width": W, "file_name": f"{i + 1}.jpg"} for i in range(n_images)
    ]
    cats = _categories(rng, n_cats, groups)
    anns = _ground_truth(rng, images, n_cats, quirks)
    crowded_ids = set(rng.choice(n_images, size=min(crowded, n_images), replace=False) + 1)
    res = _results(rng, images, anns, n_cats, {int(i) for i in crowded_ids}, quirks)
    gt = {"images": images, "annotations": anns, "categories": cats}
    return gt, res
