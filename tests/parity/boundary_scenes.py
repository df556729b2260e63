"""Seeded scenes for Boundary IoU, and a reference of boundary-iou-api's rule written here.

A scene's ground truth has rectangles and ellipses (some cut by the image
border), rings (a hole), thin strips one to three pixels wide and crowd
regions (uncompressed RLE); its results are those masks shifted, grown,
shrunk, filled or torn, plus stray shapes, as compressed RLE, with scores
of one decimal (ties).  Several image sizes per scene, each with its own
erosion depth.

The reference (:func:`api_boundary`, :func:`api_evaluate`) follows
boundary-iou-api: the mask padded with one row and column of zeros, eroded
``d`` times by a 3 x 3 square, ``d = max(1, int(round(0.02 * sqrt(h**2 +
w**2))))``; pycocotools' ``COCOeval`` with ``computeIoU`` giving
``min(mask IoU, boundary IoU)`` for ordinary ground truths and the mask
overlap (IoF) for crowd regions.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import warnings

import numpy as np
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

# 0.02 * diagonal: 3.2, 2.0 (an integer), 4.28, 1.6: none of them k + 0.5.
SIZES = ((96, 128), (90, 120), (37, 211), (48, 64))
# 0.02 * diagonal exactly k + 0.5 (1.5, 3.5, 5.5): Python's round gives 2, 4, 6;
# faster-coco-eval rounds them down (1, 3, 5).
HALF_SIZES = ((45, 60), (105, 140), (165, 220))


def _shape(rng, h: int, w: int) -> np.ndarray:
    """One object's mask ``[h, w]`` bool: a box, an ellipse, a ring or a thin strip."""
    m = np.zeros((h, w), dtype=bool)
    yy, xx = np.mgrid[0:h, 0:w]
    kind = rng.choice(["box", "ellipse", "ring", "strip", "border"])
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    ry, rx = rng.uniform(2, h / 2.5), rng.uniform(2, w / 2.5)
    inside = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
    if kind == "box":
        m[int(max(cy - ry, 0)) : int(cy + ry) + 1, int(max(cx - rx, 0)) : int(cx + rx) + 1] = True
    elif kind == "ellipse":
        m = inside
    elif kind == "ring":
        hole = ((yy - cy) / (ry * 0.5)) ** 2 + ((xx - cx) / (rx * 0.5)) ** 2 <= 1
        m = inside & ~hole
    elif kind == "strip":
        width = int(rng.integers(1, 4))
        if rng.random() < 0.5:
            m[int(cy) : int(cy) + width, int(max(cx - rx, 0)) : int(cx + rx) + 1] = True
        else:
            m[int(max(cy - ry, 0)) : int(cy + ry) + 1, int(cx) : int(cx) + width] = True
    else:  # a box against one side of the image
        side = int(rng.integers(4))
        a, b = int(rng.integers(1, max(2, h // 2))), int(rng.integers(1, max(2, w // 2)))
        y0, x0 = int(rng.integers(0, h - a + 1)), int(rng.integers(0, w - b + 1))
        y0, x0 = (
            (0, x0)
            if side == 0
            else (h - a, x0)
            if side == 1
            else (y0, 0)
            if side == 2
            else (y0, w - b)
        )
        m[y0 : y0 + a, x0 : x0 + b] = True
    return m


def _grown(m: np.ndarray, k: int) -> np.ndarray:
    out = m.copy()
    for _ in range(k):
        p = np.pad(out, 1)
        out = p[1:-1, 1:-1] | p[:-2, 1:-1] | p[2:, 1:-1] | p[1:-1, :-2] | p[1:-1, 2:]
    return out


def _variant(rng, m: np.ndarray) -> np.ndarray:
    """A prediction of mask ``m``: shifted, grown, shrunk, filled or torn."""
    kind = rng.choice(["shift", "grow", "shrink", "tear", "same"])
    if kind == "shift":
        dy, dx = (int(v) for v in rng.integers(-4, 5, 2))
        out = np.zeros_like(m)
        h, w = m.shape
        out[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = m[
            max(-dy, 0) : h + min(-dy, 0), max(-dx, 0) : w + min(-dx, 0)
        ]
        return out
    if kind == "grow":
        return _grown(m, int(rng.integers(1, 4)))
    if kind == "shrink":
        return ~_grown(~m, int(rng.integers(1, 3)))
    if kind == "tear":
        return m & (rng.random(m.shape) > 0.15)
    return m.copy()


def _compressed(m: np.ndarray) -> dict:
    rle = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
    return {"size": rle["size"], "counts": rle["counts"].decode()}


def _uncompressed(m: np.ndarray) -> dict:
    flat = m.flatten(order="F").astype(np.int8)
    edges = np.flatnonzero(np.diff(flat)) + 1
    counts = np.diff(np.r_[0, edges, len(flat)]).tolist()
    if flat[0]:
        counts = [0, *counts]
    return {"size": list(m.shape), "counts": [int(c) for c in counts]}


def make_boundary_scene(seed: int, sizes=SIZES, n_images: int = 10, n_cats: int = 3):
    """``(gt, results)``: a COCO ground truth dict and a results list (see the module notes)."""
    rng = np.random.default_rng(seed)
    images, anns, results = [], [], []
    for i in range(n_images):
        h, w = sizes[i % len(sizes)]
        images.append({"id": i + 1, "height": h, "width": w, "file_name": f"{i + 1}.png"})
        for _ in range(int(rng.integers(1, 6))):
            m = _shape(rng, h, w)
            if not m.any():
                continue
            crowd = rng.random() < 0.12
            cat = int(rng.integers(1, n_cats + 1))
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": cat,
                         "segmentation": _uncompressed(m) if crowd else _compressed(m),
                         "area": float(m.sum()), "iscrowd": int(crowd),
                         "bbox": [float(v) for v in mask_utils.toBbox(mask_utils.encode(np.asfortranarray(m.astype(np.uint8))))]})  # fmt: skip
            for _ in range(int(rng.integers(0, 3))):
                pred = _variant(rng, m)
                if rng.random() < 0.1:
                    cat = int(rng.integers(1, n_cats + 1))
                results.append({"image_id": i + 1, "category_id": cat,
                                "segmentation": _compressed(pred),
                                "score": float(np.round(rng.uniform(0.05, 1), 1))})  # fmt: skip
        for _ in range(int(rng.integers(0, 2))):
            stray = _shape(rng, h, w)
            results.append({"image_id": i + 1, "category_id": int(rng.integers(1, n_cats + 1)),
                            "segmentation": _compressed(stray),
                            "score": float(np.round(rng.uniform(0.05, 1), 1))})  # fmt: skip
    cats = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(n_cats)]
    return {"images": images, "categories": cats, "annotations": anns}, results


def write(tmp_path, name: str, obj) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def our_matrices(tmp_path, gt, results, ratio: float) -> dict:
    """``{(image id, category id): [D, G]}`` overlaps, rows by descending score (stable)."""
    from iou_eval.api import load
    from iou_eval.data.reconcile import align
    from iou_eval.geometry.seam import geometry_for
    from iou_eval.geometry.segm import with_masks

    g, p = write(tmp_path, "g.json", gt), write(tmp_path, "p.json", results)
    a = with_masks(align(load(g, "gt", masks=True), load(p, "pred", masks=True)))
    geo = geometry_for(a.gt, a.pred, "boundary", dilation_ratio=ratio)
    img_ids = np.asarray(a.gt.images.ids)
    cat_ids = np.asarray(a.gt.categories.ids)
    gt_key = list(zip(img_ids[a.gt.image_idx], cat_ids[a.gt.category_idx], strict=True))
    dt_key = list(zip(img_ids[a.pred.image_idx], cat_ids[a.pred.category_idx], strict=True))
    out = {}
    for key in set(gt_key) & set(dt_key):
        gr = np.array([i for i, k in enumerate(gt_key) if k == key])
        dr = np.array([i for i, k in enumerate(dt_key) if k == key])
        dr = dr[np.argsort(-a.pred.score[dr], kind="mergesort")]
        vals = geo.pair(np.repeat(dr, len(gr)), np.tile(gr, len(dr)))
        out[(int(key[0]), int(key[1]))] = vals.reshape(len(dr), len(gr))
    return out


# ------------------------------------------------------------------ the reference


def api_dilation(h: int, w: int, ratio: float = 0.02) -> int:
    d = int(round(ratio * np.sqrt(h**2 + w**2)))
    return max(d, 1)


def api_boundary(mask: np.ndarray, ratio: float = 0.02) -> np.ndarray:
    """boundary-iou-api's ``mask_to_boundary``: zero padding, ``d`` erosions by a 3 x 3 square."""
    h, w = mask.shape
    padded = np.pad(mask.astype(bool), 1)
    for _ in range(api_dilation(h, w, ratio)):
        # Beyond the padded frame cv2.erode reads the maximum: edge-replicated
        # padding reads the frame again, which is 0 already.
        p = np.pad(padded, 1, mode="edge")
        eroded = np.ones_like(padded)
        for dy in range(3):
            for dx in range(3):
                eroded &= p[dy : dy + padded.shape[0], dx : dx + padded.shape[1]]
        padded = eroded
    return mask.astype(bool) & ~padded[1:-1, 1:-1]


def decode(rle: dict) -> np.ndarray:
    """``pycocotools.mask.decode`` of one RLE, as ``[h, w]`` bool."""
    with warnings.catch_warnings():  # pycocotools' decode under numpy 2: a DeprecationWarning
        warnings.simplefilter("ignore", DeprecationWarning)
        return mask_utils.decode(rle).astype(bool)


def _encoded_boundary(rle: dict, ratio: float) -> dict:
    return mask_utils.encode(np.asfortranarray(api_boundary(decode(rle), ratio).astype(np.uint8)))


class _ApiEval(COCOeval):
    """pycocotools' COCOeval with boundary-iou-api's ``computeBoundaryIoU``."""

    ratio = 0.02

    def computeIoU(self, imgId, catId):  # noqa: N802 (pycocotools' name)
        p = self.params
        gt, dt = self._gts[imgId, catId], self._dts[imgId, catId]
        if len(gt) == 0 or len(dt) == 0:
            return []
        order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in order][: p.maxDets[-1]]
        # _prepare has made every segmentation a compressed RLE (annToRLE).
        g = [a["segmentation"] for a in gt]
        d = [a["segmentation"] for a in dt]
        crowd = [int(a["iscrowd"]) for a in gt]
        ious = np.array(mask_utils.iou(d, g, crowd))
        gb = [_encoded_boundary(r, self.ratio) for r in g]
        db = [_encoded_boundary(r, self.ratio) for r in d]
        edge = np.array(mask_utils.iou(db, gb, crowd))
        plain = np.asarray(crowd) == 0
        ious[:, plain] = np.minimum(ious[:, plain], edge[:, plain])
        return ious


def api_evaluate(gt: dict, results: list, ratio: float = 0.02) -> COCOeval:
    """The reference evaluation of ``results`` against ``gt`` (evaluate, accumulate, summarize)."""
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = _ApiEval(coco, coco.loadRes(copy.deepcopy(results)), "segm")
        e.ratio = ratio
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def fce_evaluate(gt: dict, results: list, ratio: float = 0.02):
    """faster-coco-eval's ``COCOeval_faster(iouType="boundary")`` on the same dicts."""
    import faster_coco_eval as fce

    with contextlib.redirect_stdout(io.StringIO()):
        coco = fce.COCO(copy.deepcopy(gt))
        e = fce.COCOeval_faster(coco, coco.loadRes(copy.deepcopy(results)), "boundary",
                                boundary_dilation_ratio=ratio)  # fmt: skip
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e
