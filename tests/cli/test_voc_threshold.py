"""VOC protocols at ``--iou-thr``: the report says the threshold that was used."""

from __future__ import annotations

import json

import pytest

from ..parity.synth import make_scene
from .helpers import run


@pytest.fixture
def scene(write_json):
    gt, preds = make_scene(1300, n_images=12)
    return write_json("gt.json", gt), write_json("p.json", preds)


@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
def test_json_params_hold_the_threshold_used(protocol, scene):
    doc = json.loads(run(*scene, "--protocol", protocol, "--iou-thr", "0.3", "-f", "json").out)
    assert doc["params"]["iou_thresholds"] == [0.3]
    assert doc["params"]["iou_thr"] == 0.3
    default = json.loads(run(*scene, "--protocol", protocol, "-f", "json").out)
    assert default["params"]["iou_thresholds"] == [0.5]
    assert doc["summary"]["mAP"] != default["summary"]["mAP"]


def test_text_header_names_the_threshold_used(scene):
    out = run(*scene, "--protocol", "voc12", "--iou-thr", "0.3").out
    assert "IoU > 0.3," in out and "IoU > 0.5" not in out, out


def test_coco_beside_voc_keeps_its_own_thresholds(scene):
    doc = json.loads(run(*scene, "--protocol", "coco,voc12", "--iou-thr", "0.3", "-f", "json").out)
    assert len(doc["params"]["iou_thresholds"]) == 10
    (voc,) = doc["additional_protocols"]
    assert voc["params"]["iou_thresholds"] == [0.3]


def test_a_baseline_at_another_threshold_is_refused(scene, tmp_path):
    base = tmp_path / "base.json"
    run(*scene, "--protocol", "voc12", "-f", "json", "-o", base)
    r = run(*scene, "--protocol", "voc12", "--iou-thr", "0.3", "--baseline", base, expect=1)
    assert "iou_thresholds" in r.err or "iou_thr" in r.err, r
