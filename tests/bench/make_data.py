"""Seeded synthetic data with COCO val2017's shape, for the speed benchmark.

Writes, for each requested size, a folder ``bench_data/coco-synth-<images>-seed<seed>/``
holding ``gt.json`` (COCO instances file), ``preds.json`` (COCO results list) and
``meta.json`` (what was generated and with which parameters). A folder whose
``meta.json`` matches the size, seed and generator version is reused as it is.

What "COCO val2017's shape" means here (the real file: 5,000 images, 36,781
annotations, 25 MB):

- images mostly 640 pixels on the long side (640x480, 640x427, portrait ...),
  with COCO-looking ids (sparse integers up to ~580k) and the usual fields;
- the 80 real categories with their real ids (1..90 with gaps), names and
  supercategories, drawn with weights from val2017's instance counts (person is
  ~30% of all objects) and only a few distinct categories per image;
- ~7.3 ground truths per image, ~1% of images empty, a heavy tail to ~80;
- ~1% crowd regions, stored like COCO's as uncompressed RLE;
- ~41% small / 34% medium / 25% large by ``area``, where ``area`` is the area of
  a single polygon segmentation (so it is below ``bbox`` w*h, as in COCO) and
  ``bbox`` is the polygon's extent; vertex counts grow with size so that the
  file has COCO's size per annotation;
- up to 100 predictions per image (~83 on average, ~417k for 5,000 images),
  derived from the ground truths: one jittered detection for most objects,
  looser duplicates, copies with a wrong class, plus background boxes; scores go
  up with the IoU to the object, are rounded to 5 decimals (so ties occur, as in
  real result files) and each image keeps its 100 best, as detectors do.

Everything is drawn with numpy in whole arrays; only building the JSON records
loops in Python. Run ``python tests/bench/make_data.py --sizes 500`` to try it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:  # orjson is ~10x faster at dumping; plain json gives byte-identical output.
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None

# Bump whenever the files generated for a given (size, seed) change, so that
# stale folders under bench_data/ are regenerated rather than reused.
GENERATOR_VERSION = 1
# The same for the mask set (``kind="segm"``), whose files have their own folders.
SEGM_GENERATOR_VERSION = 1
# The same for the keypoint set (``kind="keypoints"``, ``keypoint_data.py``).
KEYPOINTS_GENERATOR_VERSION = 1
KINDS = ("bbox", "segm", "keypoints")

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "bench_data"
DEFAULT_SIZES = "5000,20000"  # what `make bench` measures
SEGM_DEFAULT_MAX_IMAGES = 5000  # the mask set's default sizes: those up to this
KEYPOINTS_DEFAULT_SIZES = "5000"  # the keypoint set's: COCO person-keypoints val2017's size

# (id, name, supercategory, approximate instance count in val2017). The counts
# only serve as sampling weights, so approximate is good enough.
COCO_CATEGORIES: tuple[tuple[int, str, str, int], ...] = (
    (1, "person", "person", 11004),
    (2, "bicycle", "vehicle", 316),
    (3, "car", "vehicle", 1932),
    (4, "motorcycle", "vehicle", 371),
    (5, "airplane", "vehicle", 143),
    (6, "bus", "vehicle", 283),
    (7, "train", "vehicle", 190),
    (8, "truck", "vehicle", 415),
    (9, "boat", "vehicle", 430),
    (10, "traffic light", "outdoor", 634),
    (11, "fire hydrant", "outdoor", 101),
    (13, "stop sign", "outdoor", 75),
    (14, "parking meter", "outdoor", 60),
    (15, "bench", "outdoor", 413),
    (16, "bird", "animal", 440),
    (17, "cat", "animal", 202),
    (18, "dog", "animal", 218),
    (19, "horse", "animal", 273),
    (20, "sheep", "animal", 361),
    (21, "cow", "animal", 380),
    (22, "elephant", "animal", 255),
    (23, "bear", "animal", 71),
    (24, "zebra", "animal", 268),
    (25, "giraffe", "animal", 232),
    (27, "backpack", "accessory", 371),
    (28, "umbrella", "accessory", 413),
    (31, "handbag", "accessory", 540),
    (32, "tie", "accessory", 254),
    (33, "suitcase", "accessory", 303),
    (34, "frisbee", "sports", 115),
    (35, "skis", "sports", 241),
    (36, "snowboard", "sports", 69),
    (37, "sports ball", "sports", 263),
    (38, "kite", "sports", 336),
    (39, "baseball bat", "sports", 146),
    (40, "baseball glove", "sports", 148),
    (41, "skateboard", "sports", 179),
    (42, "surfboard", "sports", 269),
    (43, "tennis racket", "sports", 225),
    (44, "bottle", "kitchen", 1025),
    (46, "wine glass", "kitchen", 343),
    (47, "cup", "kitchen", 899),
    (48, "fork", "kitchen", 215),
    (49, "knife", "kitchen", 326),
    (50, "spoon", "kitchen", 253),
    (51, "bowl", "kitchen", 626),
    (52, "banana", "food", 379),
    (53, "apple", "food", 239),
    (54, "sandwich", "food", 177),
    (55, "orange", "food", 287),
    (56, "broccoli", "food", 316),
    (57, "carrot", "food", 371),
    (58, "hot dog", "food", 127),
    (59, "pizza", "food", 285),
    (60, "donut", "food", 338),
    (61, "cake", "food", 316),
    (62, "chair", "furniture", 1791),
    (63, "couch", "furniture", 261),
    (64, "potted plant", "furniture", 343),
    (65, "bed", "furniture", 163),
    (67, "dining table", "furniture", 697),
    (70, "toilet", "furniture", 179),
    (72, "tv", "electronic", 288),
    (73, "laptop", "electronic", 231),
    (74, "mouse", "electronic", 106),
    (75, "remote", "electronic", 283),
    (76, "keyboard", "electronic", 153),
    (77, "cell phone", "electronic", 262),
    (78, "microwave", "appliance", 55),
    (79, "oven", "appliance", 143),
    (80, "toaster", "appliance", 9),
    (81, "sink", "appliance", 225),
    (82, "refrigerator", "appliance", 126),
    (84, "book", "indoor", 1161),
    (85, "clock", "indoor", 267),
    (86, "vase", "indoor", 277),
    (87, "scissors", "indoor", 36),
    (88, "teddy bear", "indoor", 191),
    (89, "hair drier", "indoor", 11),
    (90, "toothbrush", "indoor", 57),
)

# (width, height, share of images): COCO's common shapes.
IMAGE_SHAPES: tuple[tuple[int, int, float], ...] = (
    (640, 480, 0.36),
    (640, 427, 0.26),
    (640, 425, 0.10),
    (480, 640, 0.10),
    (427, 640, 0.08),
    (500, 375, 0.05),
    (640, 360, 0.05),
)

# COCO's area ranges (pycocotools' areaRng) and the val2017 share of each.
SMALL_MAX, MEDIUM_MAX = 32.0**2, 96.0**2
AREA_BUCKETS: tuple[tuple[float, float, float], ...] = (
    (6.0, SMALL_MAX, 0.41),
    (SMALL_MAX, MEDIUM_MAX, 0.34),
    (MEDIUM_MAX, 160_000.0, 0.25),
)

MAX_DETS = 100  # detectors keep the best 100 per image, as COCO's maxDets does
MAX_GT_PER_IMAGE = 80
MAX_VERTICES = 56
MAX_PALETTE = 8  # at most this many distinct categories drawn per image
# The mask set: background detections per image (mean), so that most images
# reach MAX_DETS, as Mask R-CNN's results (score threshold 0.05) do; and the
# vertex count of a background blob's outline.
SEGM_BACKGROUND = 95.0
BLOB_VERTICES = 20


@dataclass(frozen=True)
class DataSet:
    """Where one generated size lives and what it holds."""

    folder: Path
    gt_path: Path
    pred_path: Path
    meta: dict[str, Any]


def folder_for(data_dir: Path, n_images: int, seed: int, kind: str = "bbox") -> Path:
    """The folder that holds the ``kind`` data for ``n_images`` images drawn with ``seed``."""
    infix = "" if kind == "bbox" else f"-{kind}"
    return data_dir / f"coco-synth{infix}-{n_images}-seed{seed}"


def ensure(
    n_images: int, seed: int = 0, data_dir: Path = DEFAULT_DATA_DIR, kind: str = "bbox"
) -> DataSet:
    """Return the data set for (n_images, seed, kind), generating it unless already on disk.

    ``kind`` is ``"bbox"`` (box results) or ``"segm"`` (results with
    compressed RLE masks; the ground truth is the same document). Reuse is
    decided by ``meta.json``, written last, so an interrupted run is
    regenerated rather than reused half-written.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    version = {"bbox": GENERATOR_VERSION, "segm": SEGM_GENERATOR_VERSION,
               "keypoints": KEYPOINTS_GENERATOR_VERSION}[kind]  # fmt: skip
    folder = folder_for(data_dir, n_images, seed, kind)
    gt_path, pred_path, meta_path = (folder / n for n in ("gt.json", "preds.json", "meta.json"))
    if meta_path.exists() and gt_path.exists() and pred_path.exists():
        meta = json.loads(meta_path.read_text())
        wanted = {"generator_version": version, "images": n_images, "seed": seed, "kind": kind}
        if all(meta.get(k, "bbox" if k == "kind" else None) == v for k, v in wanted.items()):
            return DataSet(folder, gt_path, pred_path, meta)

    started = time.perf_counter()
    gt, preds, stats = generate(n_images, seed, kind)
    folder.mkdir(parents=True, exist_ok=True)
    meta_path.unlink(missing_ok=True)
    gt_bytes = dump_json(gt, gt_path)
    pred_bytes = dump_json(preds, pred_path)
    del gt, preds
    meta = {
        "generator_version": version,
        "kind": kind,
        "images": n_images,
        "seed": seed,
        **stats,
        "gt_bytes": gt_bytes,
        "pred_bytes": pred_bytes,
        "seconds_to_generate": round(time.perf_counter() - started, 2),
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return DataSet(folder, gt_path, pred_path, meta)


class Records:
    """A JSON list written record by record, built a block at a time (never all in memory).

    ``block(start, stop)`` returns the records ``[start, stop)``; ``dump_json``
    writes ``[`` them ``]`` with the bytes one ``dumps`` of the whole list gives.
    """

    def __init__(self, count: int, block: Any) -> None:
        self.count = count
        self.block = block

    def __len__(self) -> int:
        return self.count


BLOCK = 100_000


def _dumps(obj: Any) -> bytes:
    if orjson is not None:
        return orjson.dumps(obj)
    return json.dumps(obj, separators=(",", ":")).encode()


def _write(obj: Any, fh: Any) -> int:
    """Write ``obj`` as compact JSON, streaming :class:`Records` inside lists and dicts."""
    if isinstance(obj, Records):
        n = fh.write(b"[")
        for start in range(0, obj.count, BLOCK):
            part = _dumps(obj.block(start, min(obj.count, start + BLOCK)))[1:-1]
            if start and part:
                n += fh.write(b",")
            n += fh.write(part)
        return n + fh.write(b"]")
    if isinstance(obj, dict) and any(isinstance(v, Records) for v in obj.values()):
        n = fh.write(b"{")
        for i, (key, value) in enumerate(obj.items()):
            n += fh.write((b"," if i else b"") + _dumps(key) + b":")
            n += _write(value, fh)
        return n + fh.write(b"}")
    return fh.write(_dumps(obj))


def dump_json(obj: Any, path: Path) -> int:
    """Write ``obj`` as compact JSON (orjson if installed, else json); return the byte count.

    :class:`Records` in it are written a block at a time, so that ten million
    predictions never exist as Python dicts all at once.
    """
    with open(path, "wb") as fh:
        return _write(obj, fh)


def generate(
    n_images: int, seed: int, kind: str = "bbox"
) -> tuple[dict[str, Any], list[dict[str, Any]], dict]:
    """Draw one data set: (COCO ground-truth document, results list, summary statistics).

    ``kind="segm"``: the same ground truth, predictions (more of them per
    image) that carry a compressed RLE mask each.
    """
    rng = np.random.default_rng(seed)
    images = _draw_images(rng, n_images)
    if kind == "keypoints":
        from keypoint_data import generate_keypoints

        return generate_keypoints(images, np.random.default_rng([seed, 2]))
    gts = _draw_ground_truths(rng, images)
    masks = None
    if kind == "segm":
        preds = _draw_predictions(rng, images, gts, background=SEGM_BACKGROUND)
        # Its own stream, so the boxes above do not depend on how masks are drawn.
        masks = _prediction_masks(np.random.default_rng([seed, 1]), images, gts, preds)
    else:
        preds = _draw_predictions(rng, images, gts)
    gt_doc = _ground_truth_document(images, gts)
    pred_doc = _results_list(images, preds, masks)
    area = gts["area"]
    n_gt = len(area)
    per_image = np.bincount(gts["image"], minlength=n_images)
    stats = {
        "ground_truths": n_gt,
        "crowd": int(gts["crowd"].sum()),
        "predictions": len(pred_doc),
        "gt_per_image_mean": round(n_gt / n_images, 2),
        "gt_per_image_max": int(per_image.max()),
        "images_without_gt": int((per_image == 0).sum()),
        "share_small_medium_large": [
            round(float(np.mean(area < SMALL_MAX)), 3),
            round(float(np.mean((area >= SMALL_MAX) & (area < MEDIUM_MAX))), 3),
            round(float(np.mean(area >= MEDIUM_MAX)), 3),
        ],
        "mean_area_over_bbox_area": round(float(np.mean(area / (gts["w"] * gts["h"]))), 3),
    }
    if masks is not None:
        chars = np.fromiter((len(m["counts"]) for m in masks), dtype=np.int64, count=len(masks))
        stats["predictions_per_image_mean"] = round(len(pred_doc) / n_images, 2)
        stats["mask_counts_chars_mean"] = round(float(chars.mean()), 1) if len(chars) else 0.0
    return gt_doc, pred_doc, stats


# --------------------------------------------------------------------------- images


def _draw_images(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Columns for ``n`` images: ``id``, ``width``, ``height`` (pixels), category ``palette``."""
    shapes = np.array([(w, h) for w, h, _ in IMAGE_SHAPES])
    shape_idx = rng.choice(len(IMAGE_SHAPES), n, p=[p for *_, p in IMAGE_SHAPES])
    # COCO val2017 ids are sparse integers below ~581k, in no particular order.
    ids = rng.choice(581_929, n, replace=False) + 1
    # A few distinct categories per image (val2017 averages ~2.9): draw a small
    # palette per image and let every object of the image pick from it.
    weights = np.array([c[3] for c in COCO_CATEGORIES], dtype=float)
    palette = rng.choice(len(COCO_CATEGORIES), (n, MAX_PALETTE), p=weights / weights.sum())
    palette_size = 1 + np.minimum(rng.poisson(1.9, n), MAX_PALETTE - 1)
    return {
        "id": ids,
        "width": shapes[shape_idx, 0].astype(float),
        "height": shapes[shape_idx, 1].astype(float),
        "palette": palette,
        "palette_size": palette_size,
    }


# --------------------------------------------------------------------------- ground truth


def _draw_ground_truths(rng: np.random.Generator, images: dict) -> dict[str, Any]:
    """Columns for every ground truth, grouped by image.

    Returns ``image`` (index into images), ``category`` (index into
    COCO_CATEGORIES), ``x``, ``y``, ``w``, ``h`` (bbox, pixels), ``area``,
    ``crowd`` (bool) and ``segmentation`` (one JSON-ready object per row).
    """
    n_images = len(images["id"])
    # 1 + negative binomial: mean ~7.4, ~10% of images with one object, a long
    # tail (tens of objects) like crowded street and stadium scenes; then ~1% of
    # images are emptied, as 48 of val2017's 5,000 have no annotation.
    counts = 1 + rng.negative_binomial(0.9, 0.9 / (0.9 + 6.35), n_images)
    counts = np.minimum(counts, MAX_GT_PER_IMAGE)
    counts[rng.random(n_images) < 0.01] = 0
    image = np.repeat(np.arange(n_images), counts)
    g = len(image)

    slot = (rng.random(g) * images["palette_size"][image]).astype(int)
    category = images["palette"][image, slot]
    crowd = rng.random(g) < 0.01
    width, height = images["width"][image], images["height"][image]

    # Target areas: the bucket first, then log-uniform inside it.
    lo, hi, share = (np.array(col) for col in zip(*AREA_BUCKETS, strict=True))
    bucket = rng.choice(len(AREA_BUCKETS), g, p=share)
    target = np.exp(rng.uniform(np.log(lo[bucket]), np.log(hi[bucket])))
    aspect = np.exp(rng.normal(0.0, 0.55, g))  # bbox w / h

    gts: dict[str, Any] = {"image": image, "category": category, "crowd": crowd}
    x, y, w, h, area, segmentation, outline = _polygons(rng, target, aspect, width, height)
    # Crowd regions: a blob as an uncompressed RLE, like COCO's crowd masks.
    for i in np.flatnonzero(crowd):
        box, pixels, rle = _crowd_rle(rng, int(width[i]), int(height[i]))
        x[i], y[i], w[i], h[i] = box
        area[i] = pixels
        segmentation[i] = rle
    gts.update(x=x, y=y, w=w, h=h, area=area, segmentation=segmentation, outline=outline)
    return gts


def _polygons(
    rng: np.random.Generator,
    target_area: np.ndarray,
    aspect: np.ndarray,
    img_w: np.ndarray,
    img_h: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list, tuple]:
    """One star-shaped polygon per row, of about ``target_area`` pixels, inside its image.

    All inputs are shape (G,). Returns bbox columns x, y, w, h (the polygon's
    extent), the exact shoelace area of the rounded polygon, each polygon as
    COCO's ``[[x0, y0, x1, y1, ...]]``, and the outlines as arrays
    ``(px[G, V], py[G, V], n_vert[G])`` (rows padded with their last vertex),
    from which mask predictions are drawn.
    """
    g = len(target_area)
    # More vertices for bigger objects, as annotators click more. The constants
    # give ~34 vertices on average (6 to MAX_VERTICES), which brings gt.json to
    # COCO's ~650 bytes per annotation.
    n_vert = np.clip(
        np.round(4.5 * np.log2(target_area) - 12 + rng.normal(0, 3, g)), 6, MAX_VERTICES
    )
    n_vert = n_vert.astype(int)
    k = np.arange(MAX_VERTICES)
    valid = k[None, :] < n_vert[:, None]  # (G, V)
    # Angles evenly spread with jitter, radius 0.7..1: a lumpy ellipse.
    theta = 2 * np.pi * (k[None, :] + rng.uniform(-0.3, 0.3, (g, MAX_VERTICES))) / n_vert[:, None]
    radius = rng.uniform(0.7, 1.0, (g, MAX_VERTICES))
    px, py = radius * np.cos(theta), radius * np.sin(theta)
    # Pad each row with its last real vertex: repeated vertices add nothing to
    # the shoelace sum nor to the extent, so padded rows need no masking below.
    last = n_vert - 1
    px = np.where(valid, px, px[np.arange(g), last][:, None])
    py = np.where(valid, py, py[np.arange(g), last][:, None])

    # Stretch the unit shape to the wanted aspect ratio and area.
    unit_area = _shoelace(px, py)
    unit_w, unit_h = np.ptp(px, axis=1), np.ptp(py, axis=1)
    scale2 = target_area / unit_area
    sx = np.sqrt(scale2 * aspect * unit_h / unit_w)
    sy = scale2 / sx
    # Shrink what would not fit in the image (keeps the aspect ratio).
    shrink = np.minimum(1.0, np.minimum((img_w - 1) / (sx * unit_w), (img_h - 1) / (sy * unit_h)))
    sx, sy = sx * shrink, sy * shrink
    px, py = px * sx[:, None], py * sy[:, None]
    # Place the shape uniformly where it fits, then round like COCO (2 decimals).
    px -= px.min(axis=1, keepdims=True)
    py -= py.min(axis=1, keepdims=True)
    px += rng.uniform(0, 1, g)[:, None] * (img_w - px.max(axis=1))[:, None]
    py += rng.uniform(0, 1, g)[:, None] * (img_h - py.max(axis=1))[:, None]
    px, py = np.round(px, 2), np.round(py, 2)

    x, y = px.min(axis=1), py.min(axis=1)
    w, h = np.round(px.max(axis=1) - x, 2), np.round(py.max(axis=1) - y, 2)
    area = _shoelace(px, py)
    flat = np.stack([px, py], axis=2)[valid].ravel().tolist()
    ends = np.cumsum(2 * n_vert).tolist()
    starts = [0, *ends[:-1]]
    segmentation = [[flat[s:e]] for s, e in zip(starts, ends, strict=True)]
    return x, y, w, h, area, segmentation, (px, py, n_vert)


def _shoelace(px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Polygon areas from vertex arrays ``px[G, V]``, ``py[G, V]`` (closed implicitly)."""
    return 0.5 * np.abs(np.sum(px * np.roll(py, -1, axis=1) - np.roll(px, -1, axis=1) * py, axis=1))


def _crowd_rle(
    rng: np.random.Generator, img_w: int, img_h: int
) -> tuple[tuple[float, float, float, float], float, dict[str, Any]]:
    """A large elliptic blob as COCO's uncompressed RLE.

    Returns (bbox x, y, w, h), its pixel count (COCO's ``area`` for crowds) and
    ``{"counts": [...], "size": [h, w]}``, whose runs alternate 0s and 1s over
    the mask read column by column (Fortran order), starting with 0s.
    """
    rw = rng.uniform(0.1, 0.45) * img_w
    rh = rng.uniform(0.1, 0.45) * img_h
    cx = rng.uniform(rw, img_w - rw)
    cy = rng.uniform(rh, img_h - rh)
    yy, xx = np.mgrid[0:img_h, 0:img_w]
    mask = ((xx + 0.5 - cx) / rw) ** 2 + ((yy + 0.5 - cy) / rh) ** 2 <= 1.0
    column_major = mask.T.ravel()
    change = np.flatnonzero(column_major[1:] != column_major[:-1]) + 1
    runs = np.diff(np.concatenate([[0], change, [column_major.size]]))
    counts = runs.tolist()
    if column_major[0]:
        counts = [0, *counts]
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    box = (
        float(cols[0]),
        float(rows[0]),
        float(cols[-1] - cols[0] + 1),
        float(rows[-1] - rows[0] + 1),
    )
    return box, float(mask.sum()), {"counts": counts, "size": [img_h, img_w]}


# --------------------------------------------------------------------------- predictions


def _draw_predictions(
    rng: np.random.Generator, images: dict, gts: dict, background: float = 65.5
) -> dict[str, np.ndarray]:
    """Columns for the predictions: ``image``, ``category``, ``x``, ``y``, ``w``, ``h``, ``score``
    and ``source`` (the ground-truth row a prediction was derived from, -1 for background).

    ``background`` is the mean count of background boxes drawn per image.
    Sorted by image (in file order) then by descending score, at most
    MAX_DETS per image.
    """
    g = len(gts["image"])
    small = gts["area"] < SMALL_MAX
    large = gts["area"] >= MEDIUM_MAX
    cat_weights = np.array([c[3] for c in COCO_CATEGORIES], dtype=float)
    cat_weights /= cat_weights.sum()
    parts = []

    # 1. The detection of the object itself: missed more often when small.
    p_hit = np.where(small, 0.72, np.where(large, 0.97, 0.92))
    hit = np.flatnonzero(rng.random(g) < p_hit)
    sigma = rng.uniform(0.02, 0.18, len(hit)) + 0.06 * small[hit]
    box, iou = _jitter(rng, gts, hit, sigma, images)
    score = iou**1.5 * rng.uniform(0.55, 1.0, len(hit)) + rng.normal(0, 0.05, len(hit))
    parts.append((gts["image"][hit], gts["category"][hit], box, score, hit))

    # 2. Looser duplicates of the same object, scored lower.
    dup = np.repeat(np.arange(g), rng.poisson(1.8, g))
    box, iou = _jitter(rng, gts, dup, rng.uniform(0.08, 0.45, len(dup)), images)
    score = iou**2 * rng.uniform(0.1, 0.65, len(dup)) + rng.normal(0, 0.03, len(dup))
    parts.append((gts["image"][dup], gts["category"][dup], box, score, dup))

    # 3. Right place, wrong class (any category but the true one).
    wrong = np.repeat(np.arange(g), rng.poisson(0.6, g))
    box, iou = _jitter(rng, gts, wrong, rng.uniform(0.02, 0.15, len(wrong)), images)
    other = rng.choice(len(COCO_CATEGORIES), len(wrong), p=cat_weights)
    other = np.where(other == gts["category"][wrong], (other + 1) % len(COCO_CATEGORIES), other)
    score = iou * rng.uniform(0.02, 0.5, len(wrong))
    parts.append((gts["image"][wrong], other, box, score, wrong))

    # 4. Background: boxes anywhere, mostly of the image's own categories.
    n_images = len(images["id"])
    bg_image = np.repeat(np.arange(n_images), rng.poisson(background, n_images))
    n_bg = len(bg_image)
    img_w, img_h = images["width"][bg_image], images["height"][bg_image]
    area = np.exp(rng.uniform(np.log(16), np.log(0.5 * img_w * img_h)))
    aspect = np.exp(rng.normal(0, 0.6, n_bg))
    bw = np.minimum(np.sqrt(area * aspect), img_w - 1)
    bh = np.minimum(np.sqrt(area / aspect), img_h - 1)
    bx, by = rng.uniform(0, 1, n_bg) * (img_w - bw), rng.uniform(0, 1, n_bg) * (img_h - bh)
    slot = (rng.random(n_bg) * images["palette_size"][bg_image]).astype(int)
    own = images["palette"][bg_image, slot]
    anywhere = rng.choice(len(COCO_CATEGORIES), n_bg, p=cat_weights)
    category = np.where(rng.random(n_bg) < 0.7, own, anywhere)
    bg_box = np.stack([bx, by, bw, bh], axis=1)
    parts.append((bg_image, category, bg_box, rng.beta(1, 12, n_bg), np.full(n_bg, -1)))

    image = np.concatenate([p[0] for p in parts])
    category = np.concatenate([p[1] for p in parts])
    box = np.round(np.concatenate([p[2] for p in parts]), 2)
    box[:, 2:] = np.maximum(box[:, 2:], 0.01)  # rounding must not leave empty boxes
    score = np.round(np.clip(np.concatenate([p[3] for p in parts]), 0.001, 0.999), 5)
    source = np.concatenate([p[4] for p in parts])

    # Keep each image's best MAX_DETS, ordered by image then descending score.
    order = np.lexsort((-score, image))
    image, category, box, score = image[order], category[order], box[order], score[order]
    source = source[order]
    first = np.searchsorted(image, image)  # index of the image's first row
    keep = np.arange(len(image)) - first < MAX_DETS
    return {
        "image": image[keep],
        "category": category[keep],
        "x": box[keep, 0],
        "y": box[keep, 1],
        "w": box[keep, 2],
        "h": box[keep, 3],
        "score": score[keep],
        "source": source[keep],
    }


def _jitter(
    rng: np.random.Generator, gts: dict, rows: np.ndarray, sigma: np.ndarray, images: dict
) -> tuple[np.ndarray, np.ndarray]:
    """Move each edge of the ground-truth boxes ``rows`` by N(0, sigma * side).

    Returns the boxes ``[D, 4]`` as xywh, clipped to the image, and their IoU
    with the ground truth they came from (``[D]``), which drives the score.
    """
    x0, y0 = gts["x"][rows], gts["y"][rows]
    w, h = gts["w"][rows], gts["h"][rows]
    x1, y1 = x0 + w, y0 + h
    d = len(rows)
    img_w = images["width"][gts["image"][rows]]
    img_h = images["height"][gts["image"][rows]]
    nx0 = np.clip(x0 + rng.normal(0, 1, d) * sigma * w, 0, img_w - 1)
    ny0 = np.clip(y0 + rng.normal(0, 1, d) * sigma * h, 0, img_h - 1)
    nx1 = np.clip(np.maximum(x1 + rng.normal(0, 1, d) * sigma * w, nx0 + 1), 0, img_w)
    ny1 = np.clip(np.maximum(y1 + rng.normal(0, 1, d) * sigma * h, ny0 + 1), 0, img_h)
    inter = np.clip(np.minimum(x1, nx1) - np.maximum(x0, nx0), 0, None) * np.clip(
        np.minimum(y1, ny1) - np.maximum(y0, ny0), 0, None
    )
    union = w * h + (nx1 - nx0) * (ny1 - ny0) - inter
    box = np.stack([nx0, ny0, nx1 - nx0, ny1 - ny0], axis=1)
    return box, inter / union


# --------------------------------------------------------------------------- mask predictions


def _mask_polygons(rng: np.random.Generator, gts: dict, preds: dict, rows: np.ndarray) -> list:
    """One outline per prediction of ``rows``, inside its box, as a flat ``[x0, y0, ...]`` list.

    A prediction derived from an object takes that object's outline, stretched
    to the predicted box; a background box gets a lumpy ellipse. Every vertex
    then moves by 1-6% of the box, as no predicted mask is exact. Each outline
    spans its box, as detectron2's masks (pasted into their boxes) do.
    """
    px_g, py_g, nv_g = gts["outline"]
    n_vert_max = px_g.shape[1]
    d = len(rows)
    src = preds["source"][rows]
    derived = src >= 0
    s = np.where(derived, src, 0)
    ux, uy = px_g[s], py_g[s]  # (D, V)
    ux = (ux - ux.min(axis=1, keepdims=True)) / np.maximum(np.ptp(ux, axis=1), 1e-9)[:, None]
    uy = (uy - uy.min(axis=1, keepdims=True)) / np.maximum(np.ptp(uy, axis=1), 1e-9)[:, None]
    k = np.arange(n_vert_max)
    theta = 2 * np.pi * np.minimum(k, BLOB_VERTICES - 1)[None, :] / BLOB_VERTICES
    radius = rng.uniform(0.75, 1.0, (d, n_vert_max))
    ux = np.where(derived[:, None], ux, 0.5 + 0.5 * radius * np.cos(theta))
    uy = np.where(derived[:, None], uy, 0.5 + 0.5 * radius * np.sin(theta))
    n_vert = np.where(derived, nv_g[s], BLOB_VERTICES)
    jitter = rng.uniform(0.01, 0.06, d)[:, None]
    ux = ux + rng.normal(0, 1, (d, n_vert_max)) * jitter
    uy = uy + rng.normal(0, 1, (d, n_vert_max)) * jitter
    image = preds["image"][rows]
    x = preds["x"][rows, None] + ux * preds["w"][rows, None]
    y = preds["y"][rows, None] + uy * preds["h"][rows, None]
    x = np.round(np.clip(x, 0, gts["image_width"][image][:, None]), 2)
    y = np.round(np.clip(y, 0, gts["image_height"][image][:, None]), 2)
    valid = k[None, :] < n_vert[:, None]
    flat = np.stack([x, y], axis=2)[valid].ravel().tolist()
    ends = np.cumsum(2 * n_vert).tolist()
    return [flat[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def _prediction_masks(rng: np.random.Generator, images: dict, gts: dict, preds: dict) -> list:
    """``[D]`` COCO compressed RLEs ``{"size": [h, w], "counts": str}`` of the predictions.

    Outlines (see :func:`_mask_polygons`) rasterised by pycocotools at their
    image's size, as a detector's evaluation hook encodes its masks.
    """
    from pycocotools import mask as mask_utils  # in .venv-bench, with the peers

    gts = {**gts, "image_width": images["width"], "image_height": images["height"]}
    d = len(preds["image"])
    polygons: list = []
    for lo in range(0, d, 50_000):  # bounds the (D, V) temporaries
        polygons += _mask_polygons(rng, gts, preds, np.arange(lo, min(d, lo + 50_000)))
    width = images["width"][preds["image"]].astype(int)
    height = images["height"][preds["image"]].astype(int)
    out: list = [None] * d
    key = height * 10_000 + width
    for shape in np.unique(key).tolist():
        rows = np.flatnonzero(key == shape).tolist()
        h, w = divmod(shape, 10_000)
        rles = mask_utils.frPyObjects([polygons[r] for r in rows], h, w)
        for r, rle in zip(rows, rles, strict=True):
            out[r] = {"size": [h, w], "counts": rle["counts"].decode("ascii")}
    return out


# --------------------------------------------------------------------------- JSON documents


def _ground_truth_document(images: dict, gts: dict) -> dict[str, Any]:
    """The COCO instances document, with val2017's fields and key order."""
    ids = images["id"].tolist()
    widths = images["width"].astype(int).tolist()
    heights = images["height"].astype(int).tolist()
    image_docs = [
        {
            "license": 1 + i % 8,
            "file_name": f"{image_id:012d}.jpg",
            "coco_url": f"http://images.example.invalid/val2017/{image_id:012d}.jpg",
            "height": h,
            "width": w,
            "date_captured": "2013-11-14 17:02:52",
            "flickr_url": f"http://farm1.example.invalid/{image_id}/{image_id:012d}_z.jpg",
            "id": image_id,
        }
        for i, (image_id, w, h) in enumerate(zip(ids, widths, heights, strict=True))
    ]
    cat_ids = [c[0] for c in COCO_CATEGORIES]
    image_ids = images["id"][gts["image"]]
    category_ids = np.array(cat_ids)[gts["category"]]
    bboxes = np.stack([gts["x"], gts["y"], gts["w"], gts["h"]], axis=1)

    def block(a: int, b: int) -> list[dict[str, Any]]:
        return [
            {
                "segmentation": seg,
                "area": area,
                "iscrowd": crowd,
                "image_id": image_id,
                "bbox": bbox,
                "category_id": cat,
                "id": ann_id,
            }
            for ann_id, (seg, area, crowd, image_id, bbox, cat) in enumerate(
                zip(
                    gts["segmentation"][a:b],
                    gts["area"][a:b].tolist(),
                    gts["crowd"][a:b].astype(int).tolist(),
                    image_ids[a:b].tolist(),
                    bboxes[a:b].tolist(),
                    category_ids[a:b].tolist(),
                    strict=True,
                ),
                start=a + 1,
            )
        ]

    annotations = Records(len(image_ids), block)
    return {
        "info": {
            "description": "Synthetic data with COCO val2017's statistics (iou-eval benchmark)",
            "version": str(GENERATOR_VERSION),
            "year": 2017,
        },
        "licenses": [{"url": "", "id": i, "name": f"license {i}"} for i in range(1, 9)],
        "images": image_docs,
        "annotations": annotations,
        "categories": [
            {"supercategory": sup, "id": cid, "name": name} for cid, name, sup, _ in COCO_CATEGORIES
        ],
    }


def _results_list(images: dict, preds: dict, masks: list | None = None) -> Records:
    """The COCO results list (what a detector's evaluation hook writes), streamed in blocks.

    With ``masks``, each result also carries its ``segmentation``, after the
    score, as detectron2's ``instances_to_coco_json`` writes it.
    """
    cat_ids = np.array([c[0] for c in COCO_CATEGORIES])
    bboxes = np.stack([preds["x"], preds["y"], preds["w"], preds["h"]], axis=1)
    image_ids = images["id"][preds["image"]]
    category_ids = cat_ids[preds["category"]]

    def block(a: int, b: int) -> list[dict[str, Any]]:
        rows = zip(
            image_ids[a:b].tolist(),
            category_ids[a:b].tolist(),
            bboxes[a:b].tolist(),
            preds["score"][a:b].tolist(),
            strict=True,
        )
        out = [
            {"image_id": image_id, "category_id": cat, "bbox": bbox, "score": score}
            for image_id, cat, bbox, score in rows
        ]
        if masks is not None:
            for rec, m in zip(out, masks[a:b], strict=True):
                rec["segmentation"] = m
        return out

    return Records(len(image_ids), block)


# --------------------------------------------------------------------------- command line


def parse_sizes(text: str) -> list[int]:
    """``"5000,20000"`` -> ``[5000, 20000]``."""
    try:
        sizes = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError as exc:
        raise SystemExit(f"sizes must be comma-separated integers, got {text!r}") from exc
    if not sizes or min(sizes) < 1:
        raise SystemExit(f"sizes must be positive integers, got {text!r}")
    return sizes


def segm_sizes(text: str | None, sizes: list[int]) -> list[int]:
    """The mask set's sizes: ``text`` parsed, ``"0"`` for none, or by default the
    ``sizes`` up to 5,000 images (pycocotools needs minutes per run there)."""
    if text is None or not text.strip():
        return [n for n in sizes if n <= SEGM_DEFAULT_MAX_IMAGES]
    if text.strip() == "0":
        return []
    return parse_sizes(text)


def keypoint_sizes(text: str | None) -> list[int]:
    """The keypoint set's sizes: ``text`` parsed, ``"0"`` for none, or 5,000 images."""
    if text is not None and text.strip() == "0":
        return []
    return parse_sizes(text.strip() if text and text.strip() else KEYPOINTS_DEFAULT_SIZES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="", help="image counts, comma-separated (empty: 5000,20000)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument(
        "--segm-sizes",
        default=None,
        help="image counts of the mask set (default: the sizes up to 5000; '0': none)",
    )
    parser.add_argument(
        "--kpt-sizes",
        default=None,
        help="image counts of the keypoint set (default: 5000; '0': none)",
    )
    parser.add_argument(
        "--large", type=int, default=0, metavar="N",
        help="instead: the Objects365-val-sized set with N images (80000 for the real size)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.large:
        data = ensure_large(args.large, args.seed, args.data_dir)
        print(f"{data.folder}: {json.dumps(data.meta)}", file=sys.stderr)
        return 0
    sizes = parse_sizes(args.sizes or DEFAULT_SIZES)
    for n in sizes:
        data = ensure(n, args.seed, args.data_dir)
        print(f"{data.folder}: {json.dumps(data.meta)}", file=sys.stderr)
    for n in segm_sizes(args.segm_sizes, sizes):
        data = ensure(n, args.seed, args.data_dir, kind="segm")
        print(f"{data.folder}: {json.dumps(data.meta)}", file=sys.stderr)
    for n in keypoint_sizes(args.kpt_sizes):
        data = ensure(n, args.seed, args.data_dir, kind="keypoints")
        print(f"{data.folder}: {json.dumps(data.meta)}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- a large set
#
# Objects365 val's size (~80,000 images, ~1.2 million boxes) for the cluster
# benchmark: 365 categories with a long tail, ~15 boxes per image, box-only
# annotations (Objects365 has no masks), larger images, and predictions made
# as above (the object, looser duplicates, wrong classes, background), the
# best 100 per image.  ``python tests/bench/make_data.py --large 80000``.

LARGE_VERSION = 1
LARGE_CATEGORIES = 365
LARGE_IMAGE_SHAPES: tuple[tuple[int, int, float], ...] = (
    (1024, 768, 0.40),
    (1024, 683, 0.25),
    (768, 1024, 0.15),
    (1280, 720, 0.15),
    (800, 600, 0.05),
)


def large_folder_for(data_dir: Path, n_images: int, seed: int) -> Path:
    return data_dir / f"large-synth-{n_images}-seed{seed}"


def ensure_large(n_images: int, seed: int = 0, data_dir: Path = DEFAULT_DATA_DIR) -> DataSet:
    """The large set for (n_images, seed), generated unless already on disk (as :func:`ensure`)."""
    folder = large_folder_for(data_dir, n_images, seed)
    gt_path, pred_path, meta_path = (folder / n for n in ("gt.json", "preds.json", "meta.json"))
    if meta_path.exists() and gt_path.exists() and pred_path.exists():
        meta = json.loads(meta_path.read_text())
        wanted = {"generator_version": LARGE_VERSION, "images": n_images, "seed": seed}
        if all(meta.get(k) == v for k, v in wanted.items()):
            return DataSet(folder, gt_path, pred_path, meta)
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    images, gts, weights = _draw_large(rng, n_images)
    preds = _draw_large_predictions(rng, images, gts, weights)
    folder.mkdir(parents=True, exist_ok=True)
    meta_path.unlink(missing_ok=True)
    gt_bytes = dump_json(_large_gt_document(images, gts), gt_path)
    pred_bytes = dump_json(_large_results(images, preds), pred_path)
    per_cat = np.bincount(preds["category"], minlength=LARGE_CATEGORIES)
    meta = {
        "generator_version": LARGE_VERSION,
        "images": n_images,
        "seed": seed,
        "categories": LARGE_CATEGORIES,
        "ground_truths": len(gts["image"]),
        "predictions": len(preds["image"]),
        "largest_category_share_of_predictions": round(float(per_cat.max() / per_cat.sum()), 4),
        "gt_bytes": gt_bytes,
        "pred_bytes": pred_bytes,
        "seconds_to_generate": round(time.perf_counter() - started, 2),
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return DataSet(folder, gt_path, pred_path, meta)


def _draw_large(rng: np.random.Generator, n: int) -> tuple[dict, dict, np.ndarray]:
    """Images, box-only ground truths (``image``, ``category``, ``x y w h``, ``area``, ``crowd``)
    and the category weights."""
    shapes = np.array([(w, h) for w, h, _ in LARGE_IMAGE_SHAPES], dtype=float)
    shape = rng.choice(len(shapes), n, p=[p for *_, p in LARGE_IMAGE_SHAPES])
    # A long tail: the most frequent class holds about a tenth of the boxes.
    weights = 1.0 / (np.arange(LARGE_CATEGORIES) + 2.0) ** 0.95
    weights /= weights.sum()
    palette = rng.choice(LARGE_CATEGORIES, (n, 12), p=weights)
    images = {
        "id": rng.choice(2_000_000, n, replace=False) + 1,
        "width": shapes[shape, 0],
        "height": shapes[shape, 1],
        "palette": palette,
        "palette_size": 1 + np.minimum(rng.poisson(4.0, n), 11),
    }
    counts = np.minimum(1 + rng.negative_binomial(1.2, 1.2 / (1.2 + 14.0), n), 200)
    image = np.repeat(np.arange(n), counts)
    g = len(image)
    category = palette[image, (rng.random(g) * images["palette_size"][image]).astype(int)]
    iw, ih = images["width"][image], images["height"][image]
    area = np.exp(rng.uniform(np.log(36.0), np.log(0.6 * iw * ih)))
    aspect = np.exp(rng.normal(0.0, 0.6, g))
    w = np.round(np.minimum(np.sqrt(area * aspect), iw - 1), 2)
    h = np.round(np.minimum(np.sqrt(area / aspect), ih - 1), 2)
    x = np.round(rng.random(g) * (iw - w), 2)
    y = np.round(rng.random(g) * (ih - h), 2)
    crowd = rng.random(g) < 0.005
    gts = {"image": image, "category": category, "x": x, "y": y, "w": w, "h": h,
           "area": np.round(w * h, 4), "crowd": crowd}  # fmt: skip
    return images, gts, weights


def _draw_large_predictions(
    rng: np.random.Generator, images: dict, gts: dict, weights: np.ndarray
) -> dict[str, np.ndarray]:
    """As :func:`_draw_predictions`, over ``LARGE_CATEGORIES``; the best 100 per image."""
    g = len(gts["image"])
    small = gts["area"] < SMALL_MAX
    parts = []
    hit = np.flatnonzero(rng.random(g) < np.where(small, 0.65, 0.9))
    box, iou = _jitter(rng, gts, hit, rng.uniform(0.02, 0.2, len(hit)) + 0.06 * small[hit], images)
    parts.append((gts["image"][hit], gts["category"][hit], box,
                  iou**1.5 * rng.uniform(0.5, 1.0, len(hit)) + rng.normal(0, 0.05, len(hit))))  # fmt: skip
    dup = np.repeat(np.arange(g), rng.poisson(1.2, g))
    box, iou = _jitter(rng, gts, dup, rng.uniform(0.08, 0.45, len(dup)), images)
    parts.append((gts["image"][dup], gts["category"][dup], box,
                  iou**2 * rng.uniform(0.1, 0.6, len(dup)) + rng.normal(0, 0.03, len(dup))))  # fmt: skip
    wrong = np.repeat(np.arange(g), rng.poisson(0.5, g))
    box, iou = _jitter(rng, gts, wrong, rng.uniform(0.02, 0.15, len(wrong)), images)
    other = rng.choice(LARGE_CATEGORIES, len(wrong), p=weights)
    other = np.where(other == gts["category"][wrong], (other + 1) % LARGE_CATEGORIES, other)
    parts.append((gts["image"][wrong], other, box, iou * rng.uniform(0.02, 0.5, len(wrong))))
    n = len(images["id"])
    bg = np.repeat(np.arange(n), rng.poisson(30.0, n))
    iw, ih = images["width"][bg], images["height"][bg]
    area = np.exp(rng.uniform(np.log(36.0), np.log(0.5 * iw * ih)))
    aspect = np.exp(rng.normal(0, 0.6, len(bg)))
    bw, bh = np.minimum(np.sqrt(area * aspect), iw - 1), np.minimum(np.sqrt(area / aspect), ih - 1)
    slot = (rng.random(len(bg)) * images["palette_size"][bg]).astype(int)
    cat = np.where(rng.random(len(bg)) < 0.7, images["palette"][bg, slot],
                   rng.choice(LARGE_CATEGORIES, len(bg), p=weights))  # fmt: skip
    boxes = np.stack([rng.random(len(bg)) * (iw - bw), rng.random(len(bg)) * (ih - bh), bw, bh], 1)
    parts.append((bg, cat, boxes, rng.beta(1, 12, len(bg))))
    image = np.concatenate([p[0] for p in parts])
    category = np.concatenate([p[1] for p in parts])
    box = np.round(np.concatenate([p[2] for p in parts]), 2)
    box[:, 2:] = np.maximum(box[:, 2:], 0.01)
    score = np.round(np.clip(np.concatenate([p[3] for p in parts]), 0.001, 0.999), 5)
    order = np.lexsort((-score, image))
    image, category, box, score = image[order], category[order], box[order], score[order]
    keep = np.arange(len(image)) - np.searchsorted(image, image) < MAX_DETS
    return {"image": image[keep], "category": category[keep], "x": box[keep, 0],
            "y": box[keep, 1], "w": box[keep, 2], "h": box[keep, 3], "score": score[keep]}  # fmt: skip


def _large_gt_document(images: dict, gts: dict) -> dict[str, Any]:
    """A COCO instances document with box-only annotations (Objects365's form)."""
    image_docs = [
        {"id": i, "width": w, "height": h, "file_name": f"obj365_val_{i:012d}.jpg"}
        for i, w, h in zip(images["id"].tolist(), images["width"].astype(int).tolist(),
                           images["height"].astype(int).tolist(), strict=True)
    ]  # fmt: skip
    bboxes = np.stack([gts["x"], gts["y"], gts["w"], gts["h"]], axis=1).tolist()
    annotations = [
        {"id": k, "image_id": i, "category_id": c, "bbox": b, "area": a, "iscrowd": z}
        for k, (i, c, b, a, z) in enumerate(
            zip(images["id"][gts["image"]].tolist(), (gts["category"] + 1).tolist(), bboxes,
                gts["area"].tolist(), gts["crowd"].astype(int).tolist(), strict=True),
            start=1,
        )
    ]  # fmt: skip
    categories = [{"id": c + 1, "name": f"class{c + 1:03d}", "supercategory": "object"}
                  for c in range(LARGE_CATEGORIES)]  # fmt: skip
    return {"images": image_docs, "annotations": annotations, "categories": categories}


def _large_results(images: dict, preds: dict) -> list[dict[str, Any]]:
    bboxes = np.stack([preds["x"], preds["y"], preds["w"], preds["h"]], axis=1).tolist()
    return [
        {"image_id": i, "category_id": c, "bbox": b, "score": s}
        for i, c, b, s in zip(images["id"][preds["image"]].tolist(),
                              (preds["category"] + 1).tolist(), bboxes,
                              preds["score"].tolist(), strict=True)
    ]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
