"""``--protocol lvis`` from the command line: detection, notes, gates, refusals, bad LVIS files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..acceptance.helpers import case_dir
from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "lvis" / "gt.json")
PREDS = str(ROOT / "sample_data" / "lvis" / "preds.json")
COCO_GT = str(ROOT / "sample_data" / "coco" / "gt.json")
COCO_PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


def test_an_lvis_ground_truth_is_scored_with_the_lvis_protocol_and_says_so():
    r = run(GT, PREDS)
    assert "Protocol lvis (LVIS protocol" in r.out
    assert "--protocol coco for COCO's rules" in r.out
    assert "scored with the LVIS protocol" in r.err and "--protocol coco" in r.err
    for key in ("APr", "APc", "APf", "AR300"):
        assert f"\n  {key} " in r.out, key


def test_json_names_the_protocol_and_lvis_keys():
    doc = json.loads(run(GT, PREDS, "-f", "json", "--quiet").out)
    assert doc["protocol"] == "lvis"
    assert list(doc["summary"]) == [
        "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
        "AR300", "ARs", "ARm", "ARl",
    ]  # fmt: skip
    assert doc["params"]["max_dets_per_image"] == 300
    assert "AR300" in doc["per_class"][0]


def test_coco_on_an_lvis_file_is_allowed_and_says_what_it_ignores():
    r = run(GT, PREDS, "--protocol", "coco")
    assert "Protocol coco (COCOeval" in r.out
    assert "neg_category_ids, not_exhaustive_category_ids and frequency are ignored" in r.err
    assert "AR100" in r.out and "APr" not in r.out


def test_a_coco_file_stays_coco_by_default():
    r = run(COCO_GT, COCO_PREDS)
    assert "Protocol coco (COCOeval" in r.out
    assert "LVIS" not in r.out + r.err


def test_lvis_and_coco_side_by_side():
    r = run(GT, PREDS, "--protocol", "lvis,coco", "-f", "json", "--quiet")
    doc = json.loads(r.out)
    assert doc["protocol"] == "lvis"
    assert doc["additional_protocols"][0]["protocol"] == "coco"


def test_gate_on_the_rare_categories():
    r = run(GT, PREDS, "--fail-under", "lvis:APr=0.2", "--quiet")
    assert "lvis:APr=0.2" in r.out and "pass" in r.out
    failed = run(GT, PREDS, "--fail-under", "lvis:APr=0.95", "--quiet", expect=3)
    assert "FAIL" in failed.out


def test_per_class_gate_on_ar300():
    run(GT, PREDS, "--fail-under", "AR300[car]=0.5", "--quiet")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--max-dets", "100"), ("--area-ranges", "tiny=0:16"), ("--class-agnostic", None)],
)
def test_coco_only_options_are_refused_under_lvis(flag, value):
    args = [GT, PREDS, "--protocol", "lvis", flag] + ([value] if value else [])
    r = run(*args, expect=2)
    assert flag in r.err and "--protocol coco" in r.err


def test_unknown_protocol_lists_auto_and_lvis():
    r = run(GT, PREDS, "--protocol", "lvsi", expect=2)
    assert "auto, coco, lvis" in r.err


def test_lvis_on_a_plain_coco_file_says_what_is_missing():
    r = run(COCO_GT, COCO_PREDS, "--protocol", "lvis")
    assert "no image has neg_category_ids" in r.err
    assert "APr" in r.out


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda gt: gt["categories"][2].update(frequency="x"), "categories[2].frequency"),
        (lambda gt: gt["images"][4].update(neg_category_ids=3), "images[4].neg_category_ids"),
        (
            lambda gt: gt["images"][1].update(not_exhaustive_category_ids=[[1]]),
            "images[1].not_exhaustive_category_ids",
        ),
    ],
)
def test_malformed_lvis_fields_are_located_errors(tmp_path, change, needle):
    gt = json.loads(Path(GT).read_text())
    change(gt)
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    r = run(path, PREDS, expect=1)
    assert needle in r.err and "Traceback" not in r.err


def test_acceptance_lvis_ground_truth_is_detected_as_lvis(tmp_path):
    """Case 13's LVIS v0.5 ground truth (its detections are not published with it)."""
    gt = case_dir("13_fce_lvis_val_100") / "lvis_val_100.json"
    doc = json.loads(gt.read_text())
    # Its own objects as results: every category with ground truth scores AP 1.
    res = [
        {"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"],
         "score": 1.0 - i * 1e-4}
        for i, a in enumerate(doc["annotations"])
    ]  # fmt: skip
    preds = tmp_path / "res.json"
    preds.write_text(json.dumps(res))
    r = run(gt, preds, "-f", "json")
    out = json.loads(r.out)
    assert out["protocol"] == "lvis"
    assert "scored with the LVIS protocol" in r.err
    assert out["summary"]["AP"] == 1.0
    # A frequency group is defined when one of its categories has ground truth here.
    freq = {c["id"]: c["frequency"] for c in doc["categories"]}
    labelled = {freq[a["category_id"]] for a in doc["annotations"]}
    for g in "rcf":
        assert (out["summary"][f"AP{g}"] is not None) == (g in labelled), g
