"""Instance masks (``--iou-type segm``) against pycocotools' ``COCOeval(iouType="segm")``.

Whole arrays on seeded random scenes (polygons of several parts, crowd
regions as uncompressed RLE, compressed RLE and polygon results, with and
without boxes, ties, empty masks, masks touching the border), the quirks of
``loadRes`` that decide the numbers, and the acceptance cases with masks.
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
from pycocotools.cocoeval import COCOeval

from iou_eval import evaluate

from ..acceptance.helpers import STAT_NAMES, case_dir

H, W = 96, 128


def _polygon(rng, cx, cy, r) -> list[float]:
    k = int(rng.integers(3, 8))
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = rng.uniform(0.4, 1.0, k) * r
    xs = np.round(cx + rad * np.cos(ang), 2)
    ys = np.round(cy + rad * np.sin(ang), 2)
    return [float(v) for xy in zip(xs, ys, strict=True) for v in xy]


def _shape(rng, cx, cy, r) -> list[list[float]]:
    return [_polygon(rng, cx + rng.normal(0, 2), cy + rng.normal(0, 2), r)
            for _ in range(int(rng.integers(1, 4)))]  # fmt: skip


def _rle(poly_parts, h=H, w=W) -> dict:
    rle = mask_utils.merge(mask_utils.frPyObjects(poly_parts, h, w))
    return {"size": rle["size"], "counts": rle["counts"].decode()}


def make_segm_scene(seed: int, n_images=12, n_cats=3, with_bbox=True, polygons=False):
    """A ground truth (polygons, crowd as uncompressed RLE) and mask results."""
    rng = np.random.default_rng(seed)
    images = [{"id": i + 1, "height": H, "width": W, "file_name": f"{i + 1}.jpg"}
              for i in range(n_images)]  # fmt: skip
    cats = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(n_cats)]
    anns, results = [], []
    for img in images:
        for _ in range(int(rng.integers(0, 5))):
            cx, cy = rng.uniform(-4, W + 4), rng.uniform(-4, H + 4)  # some touch the border
            r = rng.uniform(3, 45)
            parts = _shape(rng, cx, cy, r)
            crowd = rng.random() < 0.1
            seg: object = parts
            if crowd:
                dense = np.asfortranarray(mask_utils.decode(_rle(parts)))
                seg = {"size": [H, W], "counts": _uncompressed(dense)}
            elif rng.random() < 0.05:
                seg = []  # pycocotools crashes here; iou-eval reads an empty mask
            area = float(mask_utils.area(mask_utils.merge(mask_utils.frPyObjects(parts, H, W))))
            cat = int(rng.integers(1, n_cats + 1))
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat,
                         "segmentation": seg, "area": area, "iscrowd": int(crowd),
                         "bbox": [max(cx - r, 0), max(cy - r, 0), r, r]})  # fmt: skip
            for _ in range(int(rng.integers(0, 3))):
                # Mostly the object's own outline jittered (high IoU), sometimes a stray shape.
                jitter = rng.choice([0.02, 0.08, 0.3]) * r
                near = [[float(np.round(v + rng.normal(0, jitter), 2)) for v in part]
                        for part in parts]  # fmt: skip
                if rng.random() < 0.2:
                    near = _shape(rng, cx + rng.normal(0, r / 3), cy + rng.normal(0, r / 3), r)
                results.append(_result(rng, img["id"], cat, near, with_bbox, polygons))
        for _ in range(int(rng.integers(0, 3))):  # background
            shape = _shape(rng, rng.uniform(0, W), rng.uniform(0, H), rng.uniform(2, 10))
            results.append(_result(rng, img["id"], int(rng.integers(1, n_cats + 1)), shape,
                                   with_bbox, polygons))  # fmt: skip
    gt = {"images": images, "categories": cats, "annotations": anns}
    return gt, results


def _uncompressed(dense: np.ndarray) -> list[int]:
    flat = dense.flatten(order="F").astype(np.int64)
    change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1] if len(flat) else 0]))
    runs = np.diff(np.r_[0, change])
    return [int(v) for v in runs[: len(runs)]] if flat.size else [0]


def _result(rng, image_id, cat, parts, with_bbox, polygons) -> dict:
    rle = _rle(parts)
    out = {"image_id": image_id, "category_id": cat,
           "score": float(np.round(rng.uniform(0, 1), 1)),  # ties
           "segmentation": parts if polygons else rle}  # fmt: skip
    if with_bbox:
        coded = {"size": rle["size"], "counts": rle["counts"].encode()}
        out["bbox"] = [float(v) for v in mask_utils.toBbox(coded)]
    return out


def pycocotools_segm(gt: dict, results: list[dict]):
    """COCOeval segm on in-memory dicts; None where pycocotools would crash."""
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(results))
        e = COCOeval(coco, dt, "segm")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def _write(tmp_path, name, obj) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def assert_arrays(ours, theirs, label):
    for name in ("precision", "recall", "scores"):
        a, b = getattr(ours.primary.arrays, name), theirs.eval[name]
        if not np.array_equal(a, b):
            bad = np.argwhere(a != b)[:5]
            pytest.fail(f"{label}: {name} differs at {bad.tolist()}: {a[tuple(bad.T)]} vs "
                        f"{b[tuple(bad.T)]}")  # fmt: skip
    stats = [ours.summary[k] for k in STAT_NAMES.values()]
    want = [None if v == -1 else float(v) for v in theirs.stats]
    assert stats == want, label


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("with_bbox", [True, False], ids=["bbox-branch", "segm-branch"])
def test_random_scenes_give_pycocotools_arrays(seed, with_bbox, tmp_path):
    gt, results = make_segm_scene(seed, with_bbox=with_bbox)
    # pycocotools cannot read an empty polygon list: give it the empty mask we read.
    ref_gt = copy.deepcopy(gt)
    for a in ref_gt["annotations"]:
        if a["segmentation"] == []:
            a["segmentation"] = {"size": [H, W], "counts": [H * W]}
    theirs = pycocotools_segm(ref_gt, results)
    ours = evaluate(_write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results),
                    iou_type="segm")  # fmt: skip
    assert_arrays(ours, theirs, f"seed {seed}")


@pytest.mark.parametrize("seed", [40, 41])
def test_polygon_results_are_rasterised_as_pycocotools_does(seed, tmp_path):
    gt, results = make_segm_scene(seed, polygons=True, with_bbox=True)
    for a in gt["annotations"]:
        if a["segmentation"] == []:
            a["segmentation"] = {"size": [H, W], "counts": [H * W]}
    theirs = pycocotools_segm(gt, results)
    ours = evaluate(_write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results),
                    iou_type="segm", workers=1)  # fmt: skip
    assert_arrays(ours, theirs, f"polygons {seed}")


def test_bbox_and_segm_from_one_parse_equal_two_runs(tmp_path):
    gt, results = make_segm_scene(5)
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    both = evaluate(g, p, iou_type="bbox,segm")
    assert [r.protocol.label for r in both.results] == ["coco", "coco-segm"]
    assert both.results[0].summary == evaluate(g, p).summary
    assert both.results[1].summary == evaluate(g, p, iou_type="segm").summary
    doc = both.to_dict()
    assert doc["params"]["iou_type"] == "bbox"
    assert doc["additional_protocols"][0]["params"]["iou_type"] == "segm"


def test_a_later_result_without_a_bbox_is_scored_with_its_mask_area(tmp_path):
    """pycocotools stops at such a result; iou-eval scores it by its mask and says so."""
    from iou_eval.api import load
    from iou_eval.data.reconcile import align
    from iou_eval.geometry.segm import with_masks

    gt, results = make_segm_scene(7, with_bbox=True)
    results[-1].pop("bbox")
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    ours = evaluate(g, p, iou_type="segm")
    assert any("no 'bbox' although the first one has" in w for w in ours.warnings)
    a = with_masks(align(load(g, "gt", masks=True), load(p, "pred", masks=True)))
    seg = results[-1]["segmentation"]
    rle = {**seg, "counts": seg["counts"].encode()}
    last = int(np.flatnonzero(a.pred.origin == len(results) - 1)[0])
    assert a.pred.area[last] == float(mask_utils.area(rle))
    x, y, w, h = (float(v) for v in mask_utils.toBbox(rle))
    assert a.pred.xyxy[last].tolist() == [x, y, x + w, y + h]
    # The others keep their box's w * h, as loadRes's bbox branch sets it.
    first = int(np.flatnonzero(a.pred.origin == 0)[0])
    bw, bh = results[0]["bbox"][2:]
    assert a.pred.area[first] == bw * bh


def test_four_number_polygon_parts_have_no_pixels_and_are_said(tmp_path):
    gt, results = make_segm_scene(3)
    gt["annotations"][0]["segmentation"] = [[1, 1, 30, 30], *gt["annotations"][0]["segmentation"]]
    ours = evaluate(_write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results),
                    iou_type="segm")  # fmt: skip
    assert any("4 numbers" in w or "4-number" in w or "four" in w for w in ours.warnings), (
        ours.warnings
    )


def test_empty_results_list_scores_zero(tmp_path):
    gt, _ = make_segm_scene(2)
    ours = evaluate(_write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", []),
                    iou_type="segm")  # fmt: skip
    assert ours.summary["AP"] == 0.0


def test_voc_protocols_do_not_score_masks(tmp_path):
    from iou_eval.errors import UsageError

    gt, results = make_segm_scene(1)
    with pytest.raises(UsageError, match="VOC protocols score boxes"):
        evaluate(_write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results),
                 iou_type="segm", protocol="voc12")  # fmt: skip


# -- acceptance cases with masks -----------------------------------------------


def _stats(summary) -> dict:
    return {theirs: summary[ours] for theirs, ours in STAT_NAMES.items()}


def _check(summary, want: dict, tol: float, label: str) -> None:
    got = _stats(summary)
    for k, v in want.items():
        if v == -1:
            assert got[k] is None, f"{label} {k}"
        else:
            assert got[k] is not None and abs(got[k] - v) <= tol, f"{label} {k}: {got[k]} vs {v}"


def test_case_04_segm_arrays_equal_pycocotools():
    d = case_dir("04_cocoapi_val2014_100_bbox_segm")
    gt, res = d / "instances_val2014_100.json", d / "instances_val2014_fakesegm100_results.json"
    ours = evaluate(str(gt), str(res), iou_type="segm")
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(str(gt))
        e = COCOeval(coco, coco.loadRes(str(res)), "segm")
        e.evaluate()
        e.accumulate()
        e.summarize()
    assert_arrays(ours, e, "case 04 segm")
    assert abs(ours.summary["AP"] - 0.3195) < 5e-5 and abs(ours.summary["AP50"] - 0.5623) < 5e-5


@pytest.mark.parametrize("variant", ["full", "empty_dt", "empty_gt", "no_categories"])
def test_case_06_segm_variants(variant):
    d = case_dir("06_detectron2_coco_val_snippet")
    exp = json.loads((d / "EXPECTED.json").read_text())
    for x in exp["expected"]:
        if x.get("variant") == variant and x["iou_type"] == "segm":
            ours = evaluate(str(d / x["gt"]), str(d / x["detections"]), iou_type="segm",
                            class_agnostic=variant == "no_categories")  # fmt: skip
            _check(ours.summary, x["stats"], x.get("tolerance", 1e-12), f"06 {variant}")


def test_case_07_polygon_results_as_given_and_with_boxes_stripped(tmp_path):
    d = case_dir("07_fce_shapes_polygons")
    exp = json.loads((d / "EXPECTED.json").read_text())["expected"]
    segm = next(x for x in exp if x["iou_type"] == "segm")
    gt = str(d / "gt_dataset.json")
    given = evaluate(gt, str(d / "dt_dataset.json"), iou_type="segm")
    # As given the first result has a bbox: loadRes's bbox branch, box areas.
    assert abs(given.summary["APm"] - segm["pycocotools_as_given"]["AP_medium"]) < 1e-12
    dt = json.loads((d / "dt_dataset.json").read_text())
    anns = dt["annotations"] if isinstance(dt, dict) else dt
    for a in anns:
        a.pop("bbox", None)
    stripped = evaluate(gt, _write(tmp_path, "dt.json", dt), iou_type="segm")
    _check(stripped.summary, segm["stats"], segm["tolerance"], "07 stripped")
    assert abs(stripped.summary["APm"] - 0.7368) < 5e-5


def test_case_10g_identical_rle_masks_on_category_zero():
    d = case_dir("10_tiny_edge_cases") / "g_mmdet_perfect_catid0_rle"
    exp = json.loads((d.parent / "EXPECTED.json").read_text())["subcases"][d.name]
    ours = evaluate(str(d / "gt.json"), str(d / "detections.json"), iou_type="segm")
    _check(ours.summary, exp["expected_stats_segm"], 1e-12, "10g segm")
