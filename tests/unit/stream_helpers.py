"""Scenes of per-image dicts, the COCO files they stand for, and result comparison.

The files are written here, independently of the evaluator (plain loops
over the dicts, as a user's conversion script would): a COCO dataset whose
boxes are ``[x1, y1, x2 - x1, y2 - y1]`` in float64, ``area`` as given
where > 0, else the mask's area (segm) or ``w * h``, annotation ids from 1;
a COCO results list; categories every label seen, ascending.
"""

from __future__ import annotations

import json
import math

import numpy as np
from pycocotools import mask as mask_utils


def scene(seed: int, n_images: int = 12, masks: bool = False, per_image: int = 8, classes=3):
    """``(preds, targets)``: per-image dicts (numpy), with ties, crowds, given areas, empty images.

    Picture: 64 x 48 images; ground truths are random boxes, predictions
    jittered copies plus false positives; scores rounded to 0.05 (ties).
    """
    rng = np.random.default_rng(seed)
    h, w = 48, 64
    preds, targets = [], []
    for i in range(n_images):
        g = int(rng.integers(0, per_image)) if i % 5 else 0  # every fifth image: no ground truth
        xy = rng.uniform(0, 40, (g, 2))
        wh = rng.uniform(2, 24, (g, 2))
        gt_boxes = np.column_stack([xy, np.minimum(xy + wh, [w, h])])
        gt_labels = rng.integers(0, classes, g)
        crowd = (rng.uniform(size=g) < 0.1).astype(np.int64)
        area = np.where(rng.uniform(size=g) < 0.3, rng.uniform(10, 400, g), 0.0)
        jitter = rng.normal(0, 2.0, (g, 4))
        extra = int(rng.integers(0, per_image))
        fp_xy = rng.uniform(0, 40, (extra, 2))
        fp = np.column_stack([fp_xy, fp_xy + rng.uniform(2, 20, (extra, 2))])
        p_boxes = np.vstack([gt_boxes + jitter, fp]) if g + extra else np.zeros((0, 4))
        p_boxes[:, 2:] = np.maximum(p_boxes[:, 2:], p_boxes[:, :2])
        p_labels = np.r_[gt_labels, rng.integers(0, classes, extra)].astype(np.int64)
        scores = np.round(rng.uniform(0.05, 1.0, g + extra) * 20) / 20
        t = {"boxes": gt_boxes, "labels": gt_labels, "iscrowd": crowd, "area": area,
             "image_id": 100 + 7 * i}  # fmt: skip
        p = {"boxes": p_boxes, "scores": scores, "labels": p_labels}
        if masks:
            t["masks"] = _bitmaps(gt_boxes, h, w, rng)
            p["masks"] = _bitmaps(p_boxes, h, w, rng)
        targets.append(t)
        preds.append(p)
    return preds, targets


def _bitmaps(boxes: np.ndarray, h: int, w: int, rng) -> np.ndarray:
    """``[N, h, w]`` bool: each box filled, with a few pixels flipped."""
    out = np.zeros((len(boxes), h, w), dtype=bool)
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        out[k, int(max(y1, 0)) : int(math.ceil(y2)), int(max(x1, 0)) : int(math.ceil(x2))] = True
    out ^= rng.uniform(size=out.shape) < 0.03
    return out


def _rle(mask: np.ndarray) -> dict:
    r = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(s) for s in r["size"]], "counts": r["counts"].decode("ascii")}


def coco_files(preds, targets, tmp_path, segm: bool = False, name: str = "stream"):
    """Write the scene as ``(gt.json, results.json)`` paths (images in id order)."""
    order = sorted(range(len(targets)), key=lambda i: targets[i]["image_id"])
    images, anns, results, labels = [], [], [], set()
    for i in order:
        t, p = targets[i], preds[i]
        im = {"id": int(t["image_id"])}
        if segm:  # the evaluator reads the size off the masks ([0, H, W] too)
            im["height"], im["width"] = int(t["masks"].shape[1]), int(t["masks"].shape[2])
        images.append(im)
        for k in range(len(t["labels"])):
            x1, y1, x2, y2 = (float(v) for v in t["boxes"][k])
            box = [x1, y1, x2 - x1, y2 - y1]
            given = float(t["area"][k])
            own = float(mask_utils.area(_rle(t["masks"][k]))) if segm else box[2] * box[3]
            ann = {"id": len(anns) + 1, "image_id": im["id"], "category_id": int(t["labels"][k]),
                   "bbox": box, "area": given if given > 0 else own,
                   "iscrowd": int(t["iscrowd"][k])}  # fmt: skip
            if segm:
                ann["segmentation"] = _rle(t["masks"][k])
            anns.append(ann)
            labels.add(int(t["labels"][k]))
        for k in range(len(p["labels"])):
            x1, y1, x2, y2 = (float(v) for v in p["boxes"][k])
            res = {"image_id": im["id"], "category_id": int(p["labels"][k]),
                   "bbox": [x1, y1, x2 - x1, y2 - y1], "score": float(p["scores"][k])}  # fmt: skip
            if segm:
                res["segmentation"] = _rle(p["masks"][k])
            results.append(res)
            labels.add(int(p["labels"][k]))
    gt = {"images": images, "annotations": anns,
          "categories": [{"id": c, "name": str(c)} for c in sorted(labels)]}  # fmt: skip
    gt_path, res_path = tmp_path / f"{name}_gt.json", tmp_path / f"{name}_results.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    return str(gt_path), str(res_path)


def comparable(result, paths=()) -> dict:
    """A result's JSON document without what names the inputs (paths, formats)."""
    doc = json.loads(json.dumps(result.to_dict(), default=str))
    for side in ("ground_truth", "predictions"):
        doc["inputs"][side].pop("path", None)
        doc["inputs"][side].pop("format", None)
    text = json.dumps(doc, sort_keys=True)
    for p in (*paths, "<Evaluator>"):
        text = text.replace(json.dumps(str(p))[1:-1], "<source>")
    return json.loads(text)


def assert_same(stream, files, paths=()) -> None:
    """Two results agree bit for bit: arrays, tables, summaries, the whole document."""
    assert len(stream.results) == len(files.results)
    for a, b in zip(stream.results, files.results, strict=True):
        assert a.summary == b.summary, (a.summary, b.summary)
        if b.arrays is not None:
            for k in ("precision", "recall", "scores"):
                x, y = getattr(a.arrays, k), getattr(b.arrays, k)
                assert x.shape == y.shape and np.array_equal(x, y, equal_nan=True), k
    da, db = comparable(stream, paths), comparable(files, paths)
    assert da == db
