"""Files as people have them, joined as their tools meant them.

Each case here scored wrong (or was refused) on the code before: an
Ultralytics ``image_id`` that is a file stem, ids written as floats, a
ground truth of which only part was predicted, a VOCdevkit folder, keypoint
files scored as boxes without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..unit.formats_helpers import write
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
ACCEPTANCE = Path("/work/shared/acceptance/cases")


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


def sample_coco() -> tuple[dict, list[dict]]:
    gt = json.loads((SAMPLE / "coco/gt.json").read_text())
    preds = json.loads((SAMPLE / "coco/preds.json").read_text())
    return gt, preds


# --------------------------------------------------------------------------- Ultralytics image ids


def test_ultralytics_stem_image_ids_join_the_coco_file_names_with_a_note(tmp_path):
    """val(save_json=True) writes image_id "street_01" for the picture street_01.jpg (id 1)."""
    gt, preds = sample_coco()
    stem = {im["id"]: Path(im["file_name"]).stem for im in gt["images"]}
    p = write(tmp_path / "predictions.json",
              json.dumps([{**r, "image_id": stem[r["image_id"]]} for r in preds]))  # fmt: skip
    reference, _ = report(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")
    doc, err = report(SAMPLE / "coco/gt.json", p, "--strict")
    assert doc["summary"] == reference["summary"] and doc["summary"]["AP50"] == pytest.approx(
        0.7177456207
    )
    assert "12 image_id(s) that no ground-truth image has as id joined" in err
    assert doc["doubts"] == []


def test_stem_two_coco_images_share_is_a_doubt_naming_both(tmp_path):
    gt, preds = sample_coco()
    gt["images"][1]["file_name"] = "other/street_01.png"  # street_02's picture now shares a stem
    g = write(tmp_path / "gt.json", json.dumps(gt))
    p = write(tmp_path / "p.json", json.dumps([{**preds[0], "image_id": "street_01"}]))
    doc, err = report(g, p)
    shared = [d for d in doc["doubts"] if "two ground-truth images" in d]
    assert (
        len(shared) == 1 and "'street_01.jpg'" in shared[0] and "'other/street_01.png'" in shared[0]
    )
    run(g, p, "--strict", expect=1)
