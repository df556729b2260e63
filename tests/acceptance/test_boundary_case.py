"""Acceptance case 14 (faster-coco-eval's boundary test data): Boundary AP and the boundaries themselves.

Its summary is published (from boundary-iou-api); on its data every overlap
is 0 or 1, so the boundaries are pinned by the rest: each ground truth's
boundary area, mask and boundary IoUs of overlapping ground truths, a 5 x 5
mask and its boundary, and a polygon at 80 x 70 (``computed_reference``).
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from iou_eval import evaluate, iou

from ..parity.boundary_scenes import decode, our_matrices
from .helpers import assert_stats, case_dir, expected

CASE = "14_fce_boundary"


def _results_without_boxes(d) -> list:
    """The results as the published test reads them: the box dropped, so the mask gives the area."""
    dt = json.loads((d / "dt_dataset.json").read_text())
    anns = dt["annotations"] if isinstance(dt, dict) else dt
    for a in anns:
        a.pop("bbox", None)
    return anns


def test_14_boundary_ap_reproduces_the_published_numbers(tmp_path):
    d = case_dir(CASE)
    want = next(x for x in expected(CASE)["expected"] if x.get("iou_type") == "boundary")
    dt = tmp_path / "dt.json"
    dt.write_text(json.dumps(_results_without_boxes(d)))
    ours = evaluate(str(d / "gt_dataset.json"), str(dt), iou_type="boundary")
    assert_stats(ours.summary, want["stats"], want["tolerance"], CASE)
    assert abs(ours.summary["AP"] - 0.6947) < 5e-5
    assert abs(ours.summary["APm"] - 0.7368) < 5e-5
    assert abs(ours.summary["AR100"] - 0.75) < 5e-5


def test_14_overlap_matrices(tmp_path):
    d = case_dir(CASE)
    ref = expected(CASE)["computed_reference"]["iou_matrices_boundary"]["values"]
    gt = json.loads((d / "gt_dataset.json").read_text())
    mine = our_matrices(tmp_path, gt, _results_without_boxes(d), 0.02)
    want = {tuple(int(v) for v in k.split("|")): np.array(m) for k, m in ref.items()}
    assert set(mine) == set(want)
    for key, m in want.items():
        assert np.array_equal(mine[key], m), key


def _gt_rles(d) -> dict:
    from pycocotools.coco import COCO

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(str(d / "gt_dataset.json"))
    return {a: coco.annToRLE(coco.anns[a]) for a in coco.anns}


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
def test_14_ground_truth_boundary_areas(kernel, monkeypatch):
    from iou_eval.geometry.boundary import boundary_column
    from iou_eval.geometry.masks import MaskColumn

    if kernel == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    d = case_dir(CASE)
    ref = expected(CASE)["computed_reference"]["gt_boundary_areas"]["values"]
    rles = _gt_rles(d)
    ids = sorted(rles)
    column = MaskColumn.of(
        [rles[i]["counts"] for i in ids], np.array([rles[i]["size"][0] for i in ids]),
        np.array([rles[i]["size"][1] for i in ids]), np.zeros(len(ids)),
    )  # fmt: skip
    edges = boundary_column(column, 0.02)
    got = {i: (int(edges.area[k])) for k, i in enumerate(ids)}
    assert got == {int(i): v["boundary_area"] for i, v in ref.items()}


def test_14_mask_and_boundary_iou_of_overlapping_ground_truths():
    d = case_dir(CASE)
    pairs = expected(CASE)["computed_reference"]["cross_gt_probe"]["pairs"]
    rles = _gt_rles(d)
    for p in pairs:
        a, b = rles[p["gt_a"]], rles[p["gt_b"]]
        mask, edge = iou.masks(a, b), iou.boundary(a, b)
        assert (mask, edge, min(mask, edge)) == (
            p["mask_iou"],
            p["boundary_iou"],
            p["boundary_ap_iou_min"],
        ), p
    one_eight = next(p for p in pairs if (p["gt_a"], p["gt_b"]) == (1, 8))
    assert (
        round(one_eight["mask_iou"], 4) == 0.6807 and round(one_eight["boundary_iou"], 4) == 0.1589
    )


def test_14_five_by_five_mask_and_its_boundary():
    from pycocotools import mask as mask_utils

    from iou_eval.geometry.boundary import boundary_column, boundary_masks, dilation_pixels
    from iou_eval.geometry.masks import MaskColumn

    check = next(x for x in expected(CASE)["expected"] if x.get("check") == "boundary_mask_5x5")
    mask = np.array(check["mask"], dtype=bool)
    want = np.array(check["expected_boundary"], dtype=bool)
    d = int(dilation_pixels(5, 5, check["dilation_ratio"]))
    assert d == 1
    assert np.array_equal(boundary_masks(mask, d), want)
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    column = MaskColumn.of([rle["counts"]], np.array([5]), np.array([5]), np.array([15.0]))
    edge = boundary_column(column)
    got = decode({"size": [5, 5], "counts": edge.strings.values()[0]})
    assert np.array_equal(got, want)


def test_14_polygon_at_80_by_70():
    from pycocotools import mask as mask_utils

    from iou_eval.geometry.boundary import boundary_masks, dilation_pixels

    ref = expected(CASE)["computed_reference"]["polygon_80x70"]
    rle = mask_utils.merge(mask_utils.frPyObjects(ref["segmentation"], 70, 80))
    mask = decode(rle)

    d = int(dilation_pixels(70, 80, 0.02))
    assert (int(mask.sum()), d) == (ref["mask_area"], 2)
    assert int(boundary_masks(mask, d).sum()) == ref["boundary_area"]
    assert iou.boundary(rle, rle) == 1.0
