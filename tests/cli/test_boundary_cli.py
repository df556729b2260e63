"""``iou-eval --iou-type boundary`` from the command line: the report, the JSON, gates, mistakes."""

from __future__ import annotations

import json

import pytest

from ..parity.boundary_scenes import make_boundary_scene, write
from .helpers import run


@pytest.fixture
def scene(tmp_path):
    gt, results = make_boundary_scene(7, n_images=6)
    return write(tmp_path, "gt.json", gt), write(tmp_path, "preds.json", results)


def test_the_report_names_boundary_iou_and_its_ratio(scene):
    r = run(*scene, "--iou-type", "boundary")
    assert "COCOeval boundary" in r.out and "dilation ratio 0.02" in r.out, r


def test_json_carries_the_ratio_and_segm_beside_it(scene, tmp_path):
    out = tmp_path / "r.json"
    run(*scene, "--iou-type", "segm,boundary", "--boundary-dilation", "0.05", "-f", "json",
        "-o", out)  # fmt: skip
    doc = json.loads(out.read_text())
    assert doc["params"]["iou_type"] == "segm" and "boundary_dilation" not in doc["params"]
    extra = doc["additional_protocols"][0]
    assert extra["params"]["iou_type"] == "boundary"
    assert extra["params"]["boundary_dilation"] == 0.05
    assert extra["summary"]["AP"] <= doc["summary"]["AP"]


def test_a_gate_on_boundary_ap(scene):
    r = run(*scene, "--iou-type", "boundary", "--fail-under", "boundary:AP=0.99", expect=3)
    assert "boundary:AP=0.99" in r.out and "FAIL" in r.out, r
    run(*scene, "--iou-type", "boundary", "--fail-under", "boundary:AP=0.0")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--boundary-dilation", "0.05"), "applies to --iou-type boundary"),
        (("--iou-type", "boundary", "--boundary-dilation", "-1"), "--boundary-dilation"),
        (("--iou-type", "boundary", "--protocol", "voc12"), "VOC protocols score boxes"),
        (("--iou-type", "boundry"), "expected bbox, segm, boundary"),
    ],
)
def test_mistakes_are_usage_errors(scene, args, message):
    r = run(*scene, *args, expect=2)
    assert message in r.err, r


def test_boxes_only_input_is_refused_for_boundaries(tmp_path):
    gt = {"images": [{"id": 1, "width": 10, "height": 10}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 3, 3],
                           "area": 9, "iscrowd": 0}]}  # fmt: skip
    csv = tmp_path / "p.csv"
    csv.write_text("image_id,category_id,x,y,w,h,score\n1,1,1,1,3,3,0.9\n")
    r = run(write(tmp_path, "g.json", gt), csv, "--iou-type", "boundary", expect=None)
    assert r.code != 0 and "gives no masks" in r.err, r


def test_a_baseline_at_another_ratio_is_refused(scene, tmp_path):
    base = tmp_path / "base.json"
    run(*scene, "--iou-type", "boundary", "--boundary-dilation", "0.05", "-f", "json", "-o", base)
    run(*scene, "--iou-type", "boundary", "--baseline", base, "--boundary-dilation", "0.05",
        "--max-drop", "0.01")  # fmt: skip
    r = run(*scene, "--iou-type", "boundary", "--baseline", base, expect=1)
    assert "boundary_dilation: baseline 0.05, now 0.02" in r.err, r
