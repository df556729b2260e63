"""TIDE's undefined dAPs (null / n/a, not 0.00) and calibration's MCE beside ECE, in every report."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


@pytest.fixture
def crowd_only(write_json) -> tuple[str, str]:
    """One cat; the one prediction lies inside a cat crowd region, so it is ignored.

    Fixing the miss leaves no ground truth and no counted prediction: tidecv's mean over
    no class divides by zero, so the Miss and FN dAPs are undefined.
    """
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100, "file_name": "a.jpg"}],
        "categories": [{"id": 1, "name": "cat"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [50, 50, 40, 40], "area": 1600,
             "iscrowd": 1},
        ],
    }  # fmt: skip
    dt = [{"image_id": 1, "category_id": 1, "bbox": [55, 55, 30, 30], "score": 0.9}]
    return write_json("gt.json", gt), write_json("dt.json", dt)


def test_undefined_tide_dap_is_null_in_json(crowd_only):
    tide = json.loads(run(*crowd_only, "--tide", "-f", "json", "-q").out)["tide"]
    assert tide["dap"]["miss"] is None and tide["fn_dap"] is None
    assert tide["dap"]["cls"] == 0.0 and tide["fp_dap"] == 0.0 and tide["ap"] == 0.0
    assert tide["counts"]["miss"] == 1


def test_undefined_tide_dap_is_n_a_in_text_and_markdown(crowd_only):
    out = run(*crowd_only, "--tide", "-q").out
    assert re.search(r"missed \(Miss\)\s+n/a\s+1$", out, re.M), out
    assert re.search(r"false negatives \(FN\)\s+n/a$", out, re.M), out
    assert re.search(r"localisation \(Loc\)\s+0\.00\s+0$", out, re.M), out
    md = run(*crowd_only, "--tide", "-q", "-f", "markdown").out
    assert "| missed (Miss) | n/a | 1 |" in md


def test_undefined_tide_dap_is_empty_in_csv(crowd_only):
    rows = list(csv.reader(io.StringIO(run(*crowd_only, "--tide", "-f", "csv", "-q").out)))
    tide = {(r[2], r[3]): r[4] for r in rows if r[1] == "tide"}
    assert tide[("miss", "dAP")] == "" and tide[("FN", "dAP")] == ""
    assert tide[("cls", "dAP")] == "0.0"


@pytest.fixture(scope="module")
def calibration() -> dict:
    return json.loads(run(GT, PREDS, "--calibration", "-f", "json", "-q").out)["calibration"]


def test_mce_beside_ece_in_json_overall_and_per_class(calibration):
    assert list(calibration) == ["iou_threshold", "bins", "ece", "mce", "per_class"]
    gaps = [abs(b["accuracy"] - b["mean_score"]) for b in calibration["bins"] if b["count"]]
    assert calibration["mce"] == max(gaps) and calibration["mce"] >= calibration["ece"]
    for name, c in calibration["per_class"].items():
        assert list(c) == ["ece", "mce", "count"], name
        assert (c["mce"] is None) == (c["ece"] is None)


def test_mce_in_the_text_and_markdown_reports(calibration):
    out = run(GT, PREDS, "--calibration", "-q").out
    assert f"ECE {calibration['ece']:.4f}; MCE {calibration['mce']:.4f};" in out
    header = next(
        ln for ln in out.splitlines() if ln.split()[:4] == ["class", "count", "ECE", "MCE"]
    )
    assert header
    md = run(GT, PREDS, "--calibration", "-q", "-f", "markdown").out
    assert f"MCE {calibration['mce']:.4f}" in md and "| class | count | ECE | MCE |" in md


def test_mce_in_the_html_report(calibration, tmp_path):
    page = tmp_path / "report.html"
    run(GT, PREDS, "--calibration", "-f", "html", "-o", page, "-q")
    html = page.read_text()
    assert f"ECE {calibration['ece']:.4f}, MCE {calibration['mce']:.4f}" in html
    assert re.search(r"<th[^>]*>(<button[^>]*>)?MCE", html)


def test_mce_rows_in_csv(calibration):
    rows = list(csv.reader(io.StringIO(run(GT, PREDS, "--calibration", "-f", "csv", "-q").out)))
    cal = {(r[2], r[3]): r[4] for r in rows if r[1] == "calibration"}
    assert float(cal[("all", "MCE")]) == calibration["mce"]
