"""Indicative timings of the mask pipeline on a synthetic COCO-like scene.

Usage: .venv/bin/python tests/bench/bench_mask_kernel.py [N_IMAGES] [SEED]

The scene: 640x480 images, about 7 polygon ground truths (1-3 parts) and
100 compressed-RLE predictions (as ``str``, as JSON gives them) per image
over 80 categories; 30% of the predictions are jittered copies of a ground
truth of their category, the rest lie anywhere in any category (a
detector's low-score tail).  Groups are
(image, category) pairs with both predictions and ground truths, as
pycocotools' ``computeIoU`` sees them.

Measured (seconds per 1,000 images, one run each, on a shared machine: the
figures are indicative):

- encode: ground-truth polygons with ``encode_segmentations`` (pycocotools'
  rasteriser, parts merged) vs ``annToRLE`` one annotation at a time;
  predictions' strings with ``encode_segmentations`` (checks + decoding).
- overlaps: (a) ``pycocotools.mask.iou`` once per group on RLE dicts, as
  COCOeval calls it; (b) the numpy run kernel, all groups in one
  ``mask_overlaps_batched`` call (runs decoded once); (b1) the same kernel
  called once per group through ``mask_overlaps`` (on a sample of groups).
The matrices of (a) and (b) are compared for equality.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from pycocotools import mask as mask_utils

from iou_eval.masks import (
    encode_segmentations,
    mask_overlaps,
    mask_overlaps_batched,
)

H, W = 480, 640
N_CATS = 80


def _polygon(rng, cx, cy, r) -> list[float]:
    k = int(rng.integers(5, 16))
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = r * rng.uniform(0.5, 1.0, k)
    pts = np.stack([cx + rad * np.cos(ang), cy + rad * rng.uniform(0.6, 1.4) * np.sin(ang)], 1)
    return [round(float(v), 2) for v in pts.ravel()]


def make_scene(n_images: int, seed: int):
    """Ground truth and prediction rows: per row ``(image, category, segmentation)``."""
    rng = np.random.default_rng(seed)
    gt, pred = [], []
    for img in range(n_images):
        cats = rng.choice(N_CATS, size=int(rng.integers(1, 7)), replace=False)
        objs = []
        for _ in range(int(rng.poisson(7))):
            c = int(rng.choice(cats))
            cx, cy = rng.uniform(0, W), rng.uniform(0, H)
            r = float(np.exp(rng.uniform(np.log(4), np.log(160))))
            parts = [_polygon(rng, cx, cy, r)]
            for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.2 else 0):
                parts.append(_polygon(rng, cx + rng.normal(0, r), cy + rng.normal(0, r), r / 3))
            gt.append((img, c, parts, rng.random() < 0.01))
            objs.append((c, cx, cy, r))
        polys, cats_p = [], []
        for _ in range(100):
            if objs and rng.random() < 0.3:
                c, cx, cy, r = objs[int(rng.integers(len(objs)))]
                s = r * 0.15
                polys.append(_polygon(rng, cx + rng.normal(0, s), cy + rng.normal(0, s), r))
            else:
                c = int(rng.integers(N_CATS))
                polys.append(_polygon(rng, rng.uniform(0, W), rng.uniform(0, H), rng.uniform(3, 120)))
            cats_p.append(c)
        for c, rle in zip(cats_p, mask_utils.frPyObjects(polys, H, W), strict=True):
            pred.append((img, c, {"size": [H, W], "counts": rle["counts"].decode()}))
    return gt, pred


def groups(gt, pred):
    """Rows of each (image, category) group with both sides, as offset arrays."""
    gk = np.array([r[0] * N_CATS + r[1] for r in gt])
    pk = np.array([r[0] * N_CATS + r[1] for r in pred])
    keys = np.intersect1d(gk, pk)
    g_rows = np.flatnonzero(np.isin(gk, keys))
    g_rows = g_rows[np.argsort(gk[g_rows], kind="stable")]
    d_rows = np.flatnonzero(np.isin(pk, keys))
    d_rows = d_rows[np.argsort(pk[d_rows], kind="stable")]
    g_starts = np.searchsorted(gk[g_rows], keys)
    d_starts = np.searchsorted(pk[d_rows], keys)
    g_starts = np.append(g_starts, len(g_rows))
    d_starts = np.append(d_starts, len(d_rows))
    return d_rows, d_starts, g_rows, g_starts


def timed(label, fn, per):
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    print(f"  {label:<58s} {dt:7.3f} s  = {dt * per:7.2f} s / 1,000 images")
    return out


def main() -> None:
    n_images = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    per = 1000 / n_images
    t = time.perf_counter()
    gt, pred = make_scene(n_images, seed)
    d_rows, d_starts, g_rows, g_starts = groups(gt, pred)
    n_groups = len(d_starts) - 1
    n_pairs = int((np.diff(d_starts) * np.diff(g_starts)).sum())
    print(
        f"scene: {n_images} images, {len(gt)} gts, {len(pred)} predictions, "
        f"{n_groups} groups, {n_pairs} pairs (made in {time.perf_counter() - t:.1f} s)"
    )
    hh = np.full(len(gt), H)
    ww = np.full(len(gt), W)
    segs = [r[2] for r in gt]
    crowd = np.array([r[3] for r in gt])
    print("encode")
    gcol, _ = timed("gt polygons: encode_segmentations", lambda: encode_segmentations(segs, hh, ww), per)
    ref_g = timed(
        "gt polygons: annToRLE per annotation (pycocotools)",
        lambda: [mask_utils.merge(mask_utils.frPyObjects(s, H, W)) for s in segs],
        per,
    )
    psegs = [r[2] for r in pred]
    pcol, _ = timed(
        "pred RLE strings: encode_segmentations (check + decode)",
        lambda: encode_segmentations(psegs, np.full(len(pred), H), np.full(len(pred), W)),
        per,
    )
    assert all(a == b["counts"] for a, b in zip(gcol.rle, ref_g, strict=True))
    print("overlaps")
    ref_p = [{"size": [H, W], "counts": r[2]["counts"]} for r in pred]

    def pycoco():
        out = []
        for k in range(n_groups):
            dd = [ref_p[i] for i in d_rows[d_starts[k] : d_starts[k + 1]]]
            gi = g_rows[g_starts[k] : g_starts[k + 1]]
            out.append(mask_utils.iou(dd, [ref_g[i] for i in gi], crowd[gi].tolist()).ravel())
        return np.concatenate(out)

    a = timed("(a) pycocotools iou once per group", pycoco, per)
    vals, _ = timed(
        "(b) numpy runs, one batched call",
        lambda: mask_overlaps_batched(pcol, gcol, crowd, d_rows, d_starts, g_rows, g_starts),
        per,
    )
    print(f"  (a) == (b) bit for bit: {np.array_equal(a, vals)} ({(a > 0).sum()} non-zero)")
    sample = min(n_groups, 2000)

    def per_group():
        for k in range(sample):
            gi = g_rows[g_starts[k] : g_starts[k + 1]]
            mask_overlaps(
                pcol.take(d_rows[d_starts[k] : d_starts[k + 1]]), gcol.take(gi), crowd[gi]
            )

    t = time.perf_counter()
    per_group()
    dt = (time.perf_counter() - t) * n_groups / sample
    print(f"  {'(b1) numpy runs, once per group (extrapolated)':<58s} {dt:7.3f} s  = {dt * per:7.2f} s / 1,000 images")


if __name__ == "__main__":
    main()
