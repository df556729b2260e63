"""Indicative timings of the mask pipeline on a synthetic COCO-like scene.

Usage: .venv/bin/python tests/bench/bench_mask_kernel.py [N_IMAGES] [SEED]

The scene: 640x480 images, about 7 polygon ground truths (1-3 parts) and
100 compressed-RLE predictions (as ``str``, as JSON gives them) per image
over 80 categories; 30% of the predictions are jittered copies of a ground
truth of their category, the rest lie anywhere in any category (a
detector's low-score tail).  Groups are
(image, category) pairs with both predictions and ground truths, as
pycocotools' ``computeIoU`` sees them.

Measured (CPU seconds, the least of 3 runs, per 1,000 images; the machine
is shared, so the figures are indicative):

- encode: ground-truth polygons with ``encode_segmentations`` (pycocotools'
  rasteriser, parts merged) vs ``annToRLE`` one annotation at a time;
  predictions' strings with ``encode_segmentations`` (checks and areas),
  of which the numpy decoding, beside pycocotools' C decoder for scale.
- overlaps of every group: (a) ``pycocotools.mask.iou`` once per group on
  RLE dicts, as COCOeval calls it, raw and through
  ``masks.mask_overlaps_batched``; (b) the numpy run kernel of
  ``mask_run_kernel.py``: every mask decoded once to runs, then one batched
  call over all pairs.  The three results are compared for equality.
- the memory the predictions' masks take as strings and as runs.

Figures of one run (1,000 images, 7,100 ground truths, 100,000 predictions,
2,777 groups, 114,223 pairs): encode gt 0.12 s (annToRLE 0.11 s), encode
predictions 0.59 s (numpy checks 0.45 s, C decoder 0.08 s); overlaps
(a) 0.18 s, (b) 1.17 s of which the kernel 0.25 s; strings 18 MB, runs
130 MB.  Hence masks.py calls pycocotools.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from pycocotools import mask as mask_utils

from iou_eval.geometry.masks import encode_segmentations, mask_overlaps_batched
from iou_eval.geometry.rle import check_compressed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mask_run_kernel import decode_runs, pair_overlaps  # noqa: E402

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
                polys.append(
                    _polygon(rng, rng.uniform(0, W), rng.uniform(0, H), rng.uniform(3, 120))
                )
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


def timed(label, fn, per, repeat=3):
    """Run ``fn`` ``repeat`` times; print the least CPU time (the machine is shared)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    print(f"  {label:<60s} {best:6.3f} s = {best * per:5.2f} s / 1,000 images")
    return out


def pycoco_groups(ref_p, ref_g, crowd, d_rows, d_starts, g_rows, g_starts):
    """(a) as COCOeval does it: ``maskUtils.iou`` once per group on RLE dicts."""
    out = []
    for k in range(len(d_starts) - 1):
        dd = [ref_p[i] for i in d_rows[d_starts[k] : d_starts[k + 1]]]
        gi = g_rows[g_starts[k] : g_starts[k + 1]]
        out.append(mask_utils.iou(dd, [ref_g[i] for i in gi], crowd[gi].tolist()).ravel())
    return np.concatenate(out)


def numpy_runs(pcol, gcol, crowd, d_rows, d_starts, g_rows, g_starts):
    """(b): decode every mask once to runs, then one batched numpy call over all pairs."""
    dr = decode_runs(pcol.rle, pcol.height, pcol.width)
    gr = decode_runs(gcol.rle, gcol.height, gcol.width)
    group = np.repeat(np.arange(len(d_starts) - 1), np.diff(d_starts))
    per = np.diff(g_starts)[group]
    d = np.repeat(d_rows, per)
    g_pos = np.repeat(g_starts[group] - (np.cumsum(per) - per), per) + np.arange(per.sum())
    return pair_overlaps(dr, gr, crowd, d, g_rows[g_pos]), dr


def main() -> None:
    n_images = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    per = 1000 / n_images
    t = time.perf_counter()
    gt, pred = make_scene(n_images, seed)
    groups_ = groups(gt, pred)
    d_rows, d_starts, g_rows, g_starts = groups_
    n_pairs = int((np.diff(d_starts) * np.diff(g_starts)).sum())
    print(
        f"scene: {n_images} images, {len(gt)} gts, {len(pred)} predictions, "
        f"{len(d_starts) - 1} groups, {n_pairs} pairs (made in {time.perf_counter() - t:.1f} s)"
    )
    segs = [r[2] for r in gt]
    psegs = [r[2] for r in pred]
    hh, ww = np.full(len(gt), H), np.full(len(gt), W)
    ph, pw = np.full(len(pred), H), np.full(len(pred), W)
    crowd = np.array([r[3] for r in gt])
    print("encode (CPU seconds, least of 3)")
    gcol, _ = timed(
        "gt polygons: encode_segmentations", lambda: encode_segmentations(segs, hh, ww), per
    )
    ref_g = timed(
        "gt polygons: annToRLE one annotation at a time (pycocotools)",
        lambda: [mask_utils.merge(mask_utils.frPyObjects(s, H, W)) for s in segs],
        per,
    )
    assert all(a == b["counts"] for a, b in zip(gcol.rle, ref_g, strict=True))
    pcol, _ = timed(
        "pred strings: encode_segmentations (checks, areas)",
        lambda: encode_segmentations(psegs, ph, pw),
        per,
    )
    timed(
        "  of which numpy decoding and checks (rle.check_compressed)",
        lambda: check_compressed(pcol.rle, pcol.height, pcol.width),
        per,
    )
    ref_p = [{"size": [H, W], "counts": r[2]["counts"]} for r in pred]
    timed(
        "  for scale: pycocotools' C decoder (mask.area of every string)",
        lambda: [mask_utils.area(ref_p[i : i + 255]) for i in range(0, len(ref_p), 255)],
        per,
    )
    print("overlaps, every group (CPU seconds, least of 3)")
    a = timed(
        "(a) pycocotools iou once per group (C decoding inside)",
        lambda: pycoco_groups(ref_p, ref_g, crowd, *groups_),
        per,
    )
    a2, _ = timed(
        "(a) the same through masks.mask_overlaps_batched",
        lambda: mask_overlaps_batched(pcol, gcol, crowd, *groups_),
        per,
    )
    b, dr = timed(
        "(b) numpy: decode all masks to runs + one batched kernel call",
        lambda: numpy_runs(pcol, gcol, crowd, *groups_),
        per,
    )
    gr = decode_runs(gcol.rle, gcol.height, gcol.width)
    timed(
        "  of which the kernel alone (runs decoded beforehand)",
        lambda: numpy_runs_kernel(dr, gr, crowd, *groups_),
        per,
    )
    print(
        f"  bit for bit: (a) == masks.py {np.array_equal(a, a2)}, (a) == (b) {np.array_equal(a, b)}"
        f" ({int((a > 0).sum())} non-zero of {len(a)})"
    )
    run_bytes = sum(x.nbytes for x in (dr.start, dr.length))
    str_bytes = sum(map(len, pcol.rle))
    print(
        f"memory of the predictions' masks: strings {str_bytes / 1e6:.1f} MB, "
        f"runs {run_bytes / 1e6:.1f} MB ({len(dr.start)} runs)"
    )


def numpy_runs_kernel(dr, gr, crowd, d_rows, d_starts, g_rows, g_starts):
    group = np.repeat(np.arange(len(d_starts) - 1), np.diff(d_starts))
    per = np.diff(g_starts)[group]
    d = np.repeat(d_rows, per)
    g_pos = np.repeat(g_starts[group] - (np.cumsum(per) - per), per) + np.arange(per.sum())
    return pair_overlaps(dr, gr, crowd, d, g_rows[g_pos])


if __name__ == "__main__":
    main()
