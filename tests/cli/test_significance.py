"""A zero-width interval is never significant: compare, gates and baselines say so.

On one image every resample is that image, so every replicate is the
evaluation itself and every interval is ``[v, v]``: no evidence either way.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval.ci.compare import significance, significant

from .helpers import run

GT = {
    "images": [{"id": 1, "width": 100, "height": 100, "file_name": "a.jpg"}],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 20, 20], "area": 400,
         "iscrowd": 0},
        {"id": 2, "image_id": 1, "category_id": 1, "bbox": [50, 50, 20, 20], "area": 400,
         "iscrowd": 0},
    ],
    "categories": [{"id": 1, "name": "a"}],
}  # fmt: skip
GOOD = [
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 20, 20], "score": 0.9},
    {"image_id": 1, "category_id": 1, "bbox": [50, 50, 20, 20], "score": 0.8},
]
WORSE = GOOD[:1] + [{"image_id": 1, "category_id": 1, "bbox": [80, 0, 10, 10], "score": 0.95}]


@pytest.fixture
def files(write_json):
    return write_json("gt.json", GT), write_json("good.json", GOOD), write_json("worse.json", WORSE)


def test_interval_rules():
    assert significant(0.1, 0.2) and significant(-0.3, -0.1)
    assert not significant(-0.1, 0.2) and not significant(np.nan, np.nan)
    assert not significant(0.25, 0.25) and not significant(-0.5, -0.5)
    assert significance(0.25, 0.25) == "zero-width interval: no evidence"
    assert significance(0.1, 0.2) == "significant" and significance(-0.1, 0.1) == ""


def test_compare_on_one_image_calls_nothing_significant(files):
    gt, good, worse = files
    doc = json.loads(run("compare", gt, good, worse, "--bootstrap", "30", "-f", "json").out)
    ap = next(r for r in doc["rows"] if r["scope"] == "summary" and r["name"] == "AP")
    assert ap["delta"] < 0 and ap["lo"] == ap["hi"] == ap["delta"]
    assert ap["significance"] == "zero-width interval: no evidence"
    assert not any(r["significance"] == "significant" for r in doc["rows"])
    out = run("compare", gt, good, worse, "--bootstrap", "30").out
    assert "zero-width interval: no evidence" in out
    assert "significant" not in out.replace("not significant", "")


def test_a_failing_gate_with_a_zero_width_interval_is_not_significant(files):
    gt, good, _ = files
    run(gt, good, "--fail-under", "AP=0.99", "--bootstrap", "20", expect=0)  # AP is 1.0
    _, _, worse = files
    run(gt, worse, "--fail-under", "AP=0.9", expect=3)
    doc = json.loads(
        run(gt, worse, "--fail-under", "AP=0.9", "--bootstrap", "20", "--fail-if-significant",
            "-f", "json").out
    )  # fmt: skip
    check = doc["checks"][0]
    lo, hi = check["interval"]
    assert lo == hi == check["value"] < 0.9 and check["passed"]
    assert "zero width" in check["reason"]


def test_a_baseline_drop_with_a_zero_width_interval_is_not_significant(files, tmp_path):
    gt, good, worse = files
    base = tmp_path / "base.json"
    run(gt, good, "-f", "json", "-o", base, "--bootstrap", "20")
    run(gt, worse, "--baseline", base, "--bootstrap", "20", expect=3)
    doc = json.loads(
        run(gt, worse, "--baseline", base, "--bootstrap", "20", "--fail-if-significant",
            "-f", "json", expect=None).out
    )  # fmt: skip
    summary = [c for c in doc["checks"] if c["name"] in doc["summary"]]
    dropped = [c for c in summary if c["margin"] < 0]
    assert dropped and all(c["passed"] and "zero width" in c["reason"] for c in dropped)
    assert all(c["interval"][0] == c["interval"][1] for c in dropped)
