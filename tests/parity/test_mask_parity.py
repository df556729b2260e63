"""Whole-array parity of the mask module with pycocotools on seeded random scenes and real cases.

Each scene mixes polygons of 1-3 parts (some touching the border, some
partly or wholly outside the image, some below a pixel, later parts of 4
numbers), uncompressed and compressed RLEs (``str`` and ``bytes``), empty
masks, full masks, masks touching the first and last pixel, identical
masks, and crowd ground truths, over several image sizes.  RLE bytes,
areas, ``toBbox`` boxes and IoU matrices must be equal exactly.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO

from iou_eval.errors import InputError
from iou_eval.geometry.masks import (
    encode_segmentations,
    mask_boxes,
    mask_overlaps,
    mask_overlaps_batched,
    mask_pair_overlaps,
    polygon_rles,
)

from ..conftest import ACCEPTANCE

SIZES = [(48, 64), (31, 17), (64, 64)]


def _polygon(rng, h, w) -> list[float]:
    k = int(rng.integers(3, 12))
    where = rng.random()
    if where < 0.3:  # near or across a border
        cx = float(rng.choice([0.0, w, rng.uniform(0, w)]))
        cy = float(rng.choice([0.0, h, rng.uniform(0, h)]))
    elif where < 0.4:  # wholly outside
        cx, cy = -30.0, float(h + 30)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    r = float(rng.choice([0.3, rng.uniform(1, 8), rng.uniform(8, 40)]))
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    pts = np.stack([cx + r * np.cos(ang), cy + r * np.sin(ang)], 1)
    if rng.random() < 0.3:  # on the half-pixel grid: rounding ties in the rasteriser
        pts = np.round(pts * 2) / 2
    return [float(v) for v in pts.ravel()]


def _dense(rng, h, w) -> np.ndarray:
    kind = rng.random()
    m = np.zeros((h, w), dtype=np.uint8, order="F")
    if kind < 0.1:
        return m
    if kind < 0.2:
        m[:] = 1
        return m
    for _ in range(int(rng.integers(1, 4))):
        y0, x0 = int(rng.integers(0, h)), int(rng.integers(0, w))
        m[y0 : y0 + int(rng.integers(1, h)), x0 : x0 + int(rng.integers(1, w))] = 1
    m[rng.random((h, w)) < 0.05] ^= 1
    if rng.random() < 0.3:
        m[0, 0] = 1  # counts start with a zero-length background run
    if rng.random() < 0.3:
        m[-1, -1] = 1
    return m


def random_segmentations(rng, n: int, h: int, w: int):
    """``n`` segmentations and pycocotools' RLE of each (as annToRLE makes it)."""
    segs, refs = [], []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.45:
            parts = [_polygon(rng, h, w) for _ in range(int(rng.integers(1, 4)))]
            if rng.random() < 0.1:
                parts.append([float(v) for v in rng.uniform(0, min(h, w), 4)])
            seg = parts
            ref = mask_utils.merge(mask_utils.frPyObjects(parts, h, w))
        elif kind < 0.9:
            dense = _dense(rng, h, w)
            ref = mask_utils.encode(dense)
            if kind < 0.6:
                flat = dense.reshape(-1, order="F")
                edges = np.flatnonzero(np.diff(flat)) + 1
                counts = np.diff(np.concatenate([[0], edges, [flat.size]])).tolist()
                seg = {"counts": [0, *counts] if flat[0] else counts, "size": [h, w]}
            elif kind < 0.75:
                seg = {"counts": ref["counts"].decode(), "size": [h, w]}
            else:
                seg = {"counts": ref["counts"], "size": [h, w]}
        else:
            seg = [] if kind < 0.95 else None
            ref = mask_utils.encode(np.zeros((h, w), dtype=np.uint8, order="F"))
        segs.append(seg)
        refs.append(ref)
    return segs, refs


def areas(refs) -> np.ndarray:
    # pycocotools' area() overflows a uint8 beyond 255 masks under numpy 2: chunks.
    return np.concatenate([mask_utils.area(refs[i : i + 255]) for i in range(0, len(refs), 255)])


def scene(seed: int, n_per_size: int = 120):
    """Rows of several image sizes: ``(segs, refs, h[N], w[N])``, duplicates included."""
    rng = np.random.default_rng(seed)
    segs, refs, hs, ws = [], [], [], []
    for h, w in SIZES:
        s, r = random_segmentations(rng, n_per_size, h, w)
        dup = rng.integers(0, n_per_size, n_per_size // 10)  # identical masks
        segs += s + [copy.deepcopy(s[i]) for i in dup]
        refs += r + [r[i] for i in dup]
        hs += [h] * (n_per_size + len(dup))
        ws += [w] * (n_per_size + len(dup))
    return segs, refs, np.array(hs), np.array(ws)


def show(got, want) -> str:
    diff = np.flatnonzero(np.asarray(got).ravel() != np.asarray(want).ravel())
    return f"{len(diff)} differ, first at {diff[:5]}: got {np.asarray(got).ravel()[diff[:5]]}, want {np.asarray(want).ravel()[diff[:5]]}"


@pytest.mark.parametrize("seed", range(4))
def test_encoding_bytes_areas_and_boxes(seed):
    segs, refs, h, w = scene(seed)
    col, _ = encode_segmentations(segs, h, w, path="scene.json")
    bad = [i for i, (a, r) in enumerate(zip(col.rle, refs, strict=True)) if a != r["counts"]]
    assert not bad, f"rows {bad[:5]}: got {col.rle[bad[0]]!r}, want {refs[bad[0]]['counts']!r}"
    want_area = areas(refs)
    assert np.array_equal(col.area, want_area), show(col.area, want_area)
    want_box = mask_utils.toBbox(refs)
    assert np.array_equal(mask_boxes(col), want_box), show(mask_boxes(col), want_box)


@pytest.mark.parametrize("seed", range(4))
def test_overlap_matrices(seed):
    segs, refs, h, w = scene(100 + seed)
    col, _ = encode_segmentations(segs, h, w)
    rng = np.random.default_rng(seed)
    crowd_all = rng.random(len(segs)) < 0.25
    for hh, ww in SIZES:
        rows = np.flatnonzero((h == hh) & (w == ww))
        rng.shuffle(rows)
        d, g = rows[: len(rows) // 2], rows[len(rows) // 2 :]
        got = mask_overlaps(col.take(d), col.take(g), crowd_all[g])
        want = mask_utils.iou(
            [refs[i] for i in d], [refs[i] for i in g], crowd_all[g].astype(np.uint8)
        )
        assert got.shape == (len(d), len(g))
        assert np.array_equal(got, want), show(got, want)
        assert (got > 0).sum() > 50 and (got == 1).any()


@pytest.mark.parametrize("seed", range(2))
def test_batched_groups_and_pairs_match_pycocotools(seed):
    segs, refs, h, w = scene(200 + seed)
    col, _ = encode_segmentations(segs, h, w)
    rng = np.random.default_rng(seed)
    crowd = rng.random(len(segs)) < 0.2
    # Random groups within one image size, some with no predictions or no ground truths.
    pr, ps, gr, gs = [], [0], [], [0]
    wants = []
    for _ in range(60):
        hh, ww = SIZES[int(rng.integers(len(SIZES)))]
        rows = np.flatnonzero((h == hh) & (w == ww))
        d = rng.choice(rows, int(rng.integers(0, 8)), replace=False)
        g = rng.choice(rows, int(rng.integers(0, 5)), replace=False)
        pr += d.tolist()
        gr += g.tolist()
        ps.append(len(pr))
        gs.append(len(gr))
        if len(d) and len(g):
            m = mask_utils.iou(
                [refs[i] for i in d], [refs[i] for i in g], crowd[g].astype(np.uint8)
            )
            wants.append(np.asarray(m).ravel())
    values, offsets = mask_overlaps_batched(
        col, col, crowd, np.array(pr), np.array(ps), np.array(gr), np.array(gs)
    )
    want = np.concatenate(wants)
    assert np.array_equal(values, want), show(values, want)
    assert offsets[-1] == len(want)
    d = rng.choice(len(segs), 300)
    g = np.array([rng.choice(np.flatnonzero((h == h[i]) & (w == w[i]))) for i in d])
    want = np.array(
        [
            mask_utils.iou([refs[a]], [refs[b]], [int(crowd[b])])[0, 0]
            for a, b in zip(d, g, strict=True)
        ]
    )
    got = mask_pair_overlaps(col, col, crowd, d, g)
    assert np.array_equal(got, want), show(got, want)


@pytest.mark.parametrize("seed", range(2))
def test_yolo_polygons(seed):
    rng = np.random.default_rng(300 + seed)
    polys, hs, ws = [], [], []
    for _ in range(300):
        h, w = SIZES[int(rng.integers(len(SIZES)))]
        polys.append(np.array(_polygon(rng, h, w)))
        hs.append(h)
        ws.append(w)
    col, warnings = polygon_rles(polys, np.array(hs), np.array(ws))
    assert warnings == []
    refs = [
        mask_utils.frPyObjects([p.tolist()], h, w)[0] for p, h, w in zip(polys, hs, ws, strict=True)
    ]
    assert [r["counts"] for r in refs] == list(col.rle)
    assert np.array_equal(col.area, areas(refs))


# ------------------------------------------------------------ acceptance


CASES = {
    "04_cocoapi_val2014_100_bbox_segm": (
        "instances_val2014_100.json",
        "instances_val2014_fakesegm100_results.json",
    ),
    "06_detectron2_coco_val_snippet": ("gt.json", "detections.json"),
    "07_fce_shapes_polygons": ("gt_dataset.json", "dt_dataset.json"),
    "10_tiny_edge_cases/g_mmdet_perfect_catid0_rle": ("gt.json", "detections.json"),
}


def _load_case(name: str):
    folder = ACCEPTANCE / "cases" / name
    if not folder.is_dir():
        pytest.skip(f"acceptance case {name} not available at {folder}")
    gt_file, dt_file = CASES[name]
    gt = json.loads((folder / gt_file).read_text())
    dt = json.loads((folder / dt_file).read_text())
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        res = coco.loadRes(copy.deepcopy(dt))
    return gt, dt, coco, res


def _encode_side(anns, images, size_mismatch="error"):
    sizes = {img["id"]: (img["height"], img["width"]) for img in images}
    h = np.array([sizes[a["image_id"]][0] for a in anns])
    w = np.array([sizes[a["image_id"]][1] for a in anns])
    segs = [a["segmentation"] for a in anns]
    return encode_segmentations(segs, h, w, path="case.json", size_mismatch=size_mismatch)


# Case 10g (mmdet's test data) puts 10x10 RLE masks on a 640x640 image;
# pycocotools keeps them at 10x10 and scores segm AP 1.0.
MISMATCHED = {"10_tiny_edge_cases/g_mmdet_perfect_catid0_rle"}


def _as_bytes(rle) -> bytes:
    c = rle["counts"]
    return c.encode() if isinstance(c, str) else c


@pytest.mark.parametrize("name", sorted(CASES))
def test_acceptance_masks(name):
    gt, dt, coco, res = _load_case(name)
    mismatch = "error"
    if name in MISMATCHED:
        with pytest.raises(InputError, match="does not fit its image: RLE size"):
            _encode_side(gt["annotations"], gt["images"])
        mismatch = "warn"
    gcol, g_warn = _encode_side(gt["annotations"], gt["images"], mismatch)
    pcol, p_warn = _encode_side(dt, gt["images"], mismatch)
    assert bool(g_warn) == bool(p_warn) == (name in MISMATCHED)
    g_refs = [coco.annToRLE(a) for a in gt["annotations"]]
    p_anns = res.dataset["annotations"]
    p_refs = [res.annToRLE(a) for a in p_anns]
    assert [_as_bytes(r) for r in g_refs] == list(gcol.rle)
    assert [_as_bytes(r) for r in p_refs] == list(pcol.rle)
    assert np.array_equal(gcol.area, areas(g_refs))
    assert np.array_equal(pcol.area, areas(p_refs))
    # loadRes gives a mask result without a bbox toBbox's box and the mask's area.
    no_box = [i for i, a in enumerate(dt) if "bbox" not in a]
    if no_box:
        want = np.array([p_anns[i]["bbox"] for i in no_box])
        assert np.array_equal(mask_boxes(pcol.take(no_box)), want)
        assert np.array_equal(pcol.area[no_box], [p_anns[i]["area"] for i in no_box])
    crowd = np.array([bool(a.get("iscrowd", 0)) for a in gt["annotations"]])
    _check_group_matrices(gt["annotations"], p_anns, g_refs, p_refs, gcol, pcol, crowd)


def _check_group_matrices(g_anns, p_anns, g_refs, p_refs, gcol, pcol, crowd):
    """Per (image, category) IoU matrices as COCOeval.computeIoU asks for them."""
    g_key = [(a["image_id"], a["category_id"]) for a in g_anns]
    p_key = [(a["image_id"], a["category_id"]) for a in p_anns]
    pr, ps, gr, gs, wants = [], [0], [], [0], []
    for key in sorted(set(g_key) & set(p_key), key=str):
        d = [i for i, k in enumerate(p_key) if k == key]
        g = [i for i, k in enumerate(g_key) if k == key]
        want = mask_utils.iou(
            [p_refs[i] for i in d], [g_refs[i] for i in g], crowd[g].astype(np.uint8)
        )
        got = mask_overlaps(pcol.take(d), gcol.take(g), crowd[g])
        assert np.array_equal(got, want), f"{key}: {show(got, want)}"
        pr += d
        gr += g
        ps.append(len(pr))
        gs.append(len(gr))
        wants.append(np.asarray(want).ravel())
    assert wants, "no group with both sides"
    values, _ = mask_overlaps_batched(
        pcol, gcol, crowd, np.array(pr), np.array(ps), np.array(gr), np.array(gs)
    )
    assert np.array_equal(values, np.concatenate(wants))
