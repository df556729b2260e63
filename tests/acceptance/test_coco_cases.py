"""Every COCO bbox case of the shared acceptance set reproduces its expected stats.

Read from ../shared/acceptance at test time; skipped when it is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.geometry.boxes import pair_iou
from iou_eval.io.loaders import load

from .helpers import assert_stats, case_dir, expected


def test_04_cocoapi_val2014_bbox():
    d = case_dir("04_cocoapi_val2014_100_bbox_segm")
    exp = next(e for e in expected(d.name)["expected"] if e["iou_type"] == "bbox")
    r = evaluate(
        str(d / "instances_val2014_100.json"), str(d / "instances_val2014_fakebbox100_results.json")
    )
    assert_stats(r.summary, exp["stats"], exp["tolerance"], d.name)


def test_05_area_field_and_predictions_as_coco_dict():
    d = case_dir("05_rdm_coco_sampled_bbox_area")
    exp = expected(d.name)["expected"][0]
    r = evaluate(str(d / "sampled_gts_bbox_area.json"), str(d / "sampled_bbox_results.json"))
    assert_stats(r.summary, exp["stats"], exp["tolerance"], d.name)
    full = expected(d.name)["computed_reference"]["stats_full_precision"]
    assert_stats(r.summary, full, 1e-12, d.name + " (full precision)")


@pytest.mark.parametrize("variant", ["full", "empty_dt", "empty_gt", "no_categories"])
def test_06_detectron2_snippet_variants(variant):
    d = case_dir("06_detectron2_coco_val_snippet")
    exp = next(
        e for e in expected(d.name)["expected"]
        if e["variant"] == variant and e["iou_type"] == "bbox"
    )  # fmt: skip
    agnostic = exp.get("params", {}).get("useCats") == 0
    r = evaluate(str(d / exp["gt"]), str(d / exp["detections"]), class_agnostic=agnostic)
    assert_stats(r.summary, exp["stats"], exp["tolerance"], f"{d.name} {variant}")


def test_07_polygon_shapes_bbox():
    d = case_dir("07_fce_shapes_polygons")
    exp = next(e for e in expected(d.name)["expected"] if e["iou_type"] == "bbox")
    r = evaluate(str(d / "gt_dataset.json"), str(d / "dt_dataset.json"))
    assert_stats(r.summary, exp["stats"], exp["tolerance"], d.name)


@pytest.mark.parametrize("min_score", [None, 0.1])
def test_08_crowd_region_and_mixed_id_types(min_score, tmp_path):
    d = case_dir("08_fce_crowd_region_ignore")
    exps = [e for e in expected(d.name)["expected"] if e.get("iou_type") == "bbox"]
    exp = exps[0] if min_score else exps[1]
    preds = str(d / "dt_ignore_test.json")
    if min_score:
        kept = [
            p
            for p in json.loads((d / "dt_ignore_test.json").read_text())
            if p["score"] >= min_score
        ]
        preds = str(tmp_path / "kept.json")
        (tmp_path / "kept.json").write_text(json.dumps(kept))
    r = evaluate(str(d / "gt_ignore_test.json"), preds)
    assert_stats(r.summary, exp["stats"], exp["tolerance"], d.name)
    if "AR100_iou0.5" in exp["stats"]:
        rec = r.primary.arrays.recall  # [T, K, A, M]
        assert rec[0, 0, 0, -1] == pytest.approx(exp["stats"]["AR100_iou0.5"], abs=1e-10)
        assert rec[5, 0, 0, -1] == pytest.approx(exp["stats"]["AR100_iou0.75"], abs=1e-10)


def test_08_iou_matrix_with_crowd_column_as_iof():
    d = case_dir("08_fce_crowd_region_ignore")
    want = np.load(d / "expected_iou_2299_1.npy")
    gt = load(str(d / "gt_ignore_test.json"), "gt")
    pred = load(str(d / "dt_ignore_test.json"), "pred")
    keep = np.flatnonzero(pred.score >= 0.1)
    keep = keep[np.argsort(-pred.score[keep], kind="stable")]
    # Columns: non-crowd ground truths first, crowd last (pycocotools' order).
    cols = np.r_[np.flatnonzero(~gt.is_crowd), np.flatnonzero(gt.is_crowd)]
    di = np.repeat(keep, len(cols))
    gi = np.tile(cols, len(keep))
    got = pair_iou(
        pred.xyxy[di], pred.bbox_area[di], gt.xyxy[gi], gt.bbox_area[gi], gt.is_crowd[gi]
    )
    got = got.reshape(len(keep), len(cols))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-9, rtol=0)


def test_09_torchmetrics_inputs_summary_and_per_class():
    d = case_dir("09_torchmetrics_map_inputs")
    doc = expected(d.name)
    r = evaluate(str(d / "coco_gt.json"), str(d / "coco_results.json"))
    exp = doc["expected"][0]
    assert_stats(r.summary, exp["stats"], exp["tolerance"], d.name)
    assert_stats(r.summary, doc["computed_reference"]["stats"], 1e-12, d.name + " (full)")
    per = doc["expected"][1]
    table = r.per_class.set_index("category_id")
    for cid, (ap, ar) in per["per_class_AP_AR100"].items():
        row = table.loc[int(cid)]
        if ap == -1:
            assert np.isnan(row["AP"]) and np.isnan(row["AR100"]), cid
        else:
            assert row["AP"] == pytest.approx(ap, abs=per["tolerance"]), cid
            assert row["AR100"] == pytest.approx(ar, abs=per["tolerance"]), cid


def _tiny_cases():
    try:
        return sorted(expected("10_tiny_edge_cases")["subcases"])
    except BaseException:  # noqa: BLE001 - skipped when the folder is absent
        return ["absent"]


@pytest.mark.parametrize("sub", _tiny_cases())
def test_10_tiny_edge_cases(sub):
    d = case_dir("10_tiny_edge_cases")
    spec = expected(d.name)["subcases"][sub]
    gt, dt = str(d / sub / "gt.json"), str(d / sub / "detections.json")
    if "expected_stats_bbox" in spec:
        r = evaluate(gt, dt)
        assert_stats(r.summary, spec["expected_stats_bbox"], 1e-12, sub)
    if "expected_stats_bbox_iouThrs_0.2" in spec:
        r = evaluate(gt, dt, iou_thresholds=[0.2])
        assert_stats(r.summary, spec["expected_stats_bbox_iouThrs_0.2"], 1e-12, sub + " @0.2")
    if "expected_stats_bbox_default_thresholds" in spec:
        r = evaluate(gt, dt)
        assert_stats(r.summary, spec["expected_stats_bbox_default_thresholds"], 1e-12, sub)
    for cid, vals in spec.get("per_class", {}).items():
        row = r.per_class.set_index("category_id").loc[int(cid)]
        assert row["AP"] == pytest.approx(vals["AP"], abs=1e-12), (sub, cid)
        assert row["AP50"] == pytest.approx(vals["AP50"], abs=1e-12), (sub, cid)
        assert row["AR100"] == pytest.approx(vals["AR100"], abs=1e-12), (sub, cid)


def test_02_coco_twin_annotation_id_zero():
    """pycocotools never counts a match to annotation id 0; --count-id-zero does."""
    d = case_dir("02_rdm_toyexample_voc_xml")
    ref = expected(d.name)["computed_reference"]
    gt = str(d / "gts_coco_format" / "toy_example_coco.JSON")
    dt = str(d / "dets_coco_format" / "coco_dets.json")
    r = evaluate(gt, dt)
    assert_stats(r.summary, ref["coco_pycocotools_as_is"], 1e-12, "as is")
    assert any("annotation id 0" in w for w in r.warnings)
    fixed = evaluate(gt, dt, zero_id_quirk=False)
    assert fixed.summary["AP50"] > r.summary["AP50"]
    renumbered = ref["coco_pycocotools_after_renumbering_gt_ids_from_1"]
    assert_stats(fixed.summary, renumbered, 1e-12, "ids from 1")


def test_03_coco_dets_joined_by_file_name_and_category_name():
    d = case_dir("03_rdm_voc_database_100")
    exp = next(e for e in expected(d.name)["expected"] if e["metric"].startswith("COCO"))
    for gt in ("gts/coco_format_v2/instances_v2.json", "gts/coco_format_v1/instances_default.json"):
        r = evaluate(str(d / gt), str(d / "dets/coco_format/coco_dets.json"))
        assert_stats(r.summary, exp["values"], exp["tolerance"], gt)
        assert r.inputs["image_match"] == "file name"
        assert r.inputs["category_match"] == "name"
