"""Empty inputs under every protocol: no ground-truth annotations, no predictions, neither.

lvis-api, pycocotools and the devkits give -1 (undefined) where nothing can be
scored; the CLI gives ``null`` in JSON and ``n/a`` in text, and exits 0.
"""

from __future__ import annotations

import json

import pytest

from ..conftest import ROOT
from .helpers import run

IMAGE = {"id": 1, "width": 100, "height": 100}
CATS = [{"id": 1, "name": "cat"}]
ANN = {"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10], "area": 100, "iscrowd": 0}
PRED = {"image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10], "score": 0.9}


def _summary(r) -> dict:
    doc = json.loads(r.out)
    return doc["summary"]


@pytest.mark.parametrize("protocol", ["lvis", "lvis,coco"])
def test_lvis_ground_truth_without_annotations_is_undefined_not_a_crash(write_json, protocol):
    """One image whose only category is verified absent, one result on it: all -1 in lvis-api."""
    image = dict(IMAGE, neg_category_ids=[1], not_exhaustive_category_ids=[])
    cats = [{"id": 1, "name": "cat", "frequency": "r"}, {"id": 2, "name": "dog", "frequency": "f"}]
    gt = write_json("gt.json", {"images": [image], "annotations": [], "categories": cats})
    preds = write_json("preds.json", [PRED])
    text = run(gt, preds, "--protocol", protocol)
    assert "  AP        n/a" in text.out and "AR300     n/a" in text.out
    summary = _summary(run(gt, preds, "--protocol", protocol, "-f", "json", "--quiet"))
    assert set(summary.values()) == {None}


@pytest.mark.parametrize("protocol", ["coco", "lvis", "voc07", "voc12", "openimages", "dota"])
@pytest.mark.parametrize(
    ("annotations", "predictions"),
    [([], [PRED]), ([ANN], []), ([], [])],
    ids=["no_ground_truth", "no_predictions", "neither"],
)
def test_empty_coco_inputs_under_every_protocol(write_json, protocol, annotations, predictions):
    gt = write_json("gt.json", {"images": [IMAGE], "annotations": annotations, "categories": CATS})
    preds = write_json("preds.json", predictions)
    summary = _summary(run(gt, preds, "--protocol", protocol, "-f", "json", "--quiet"))
    values = set(summary.values())
    if not annotations:  # nothing to find: every number undefined
        assert values == {None}, summary
    else:  # nothing found: zero, or undefined where the protocol has no slice
        assert values <= {0.0, None} and 0.0 in values, summary


def _header_only(src, dst) -> str:
    dst.write_text(src.read_text().splitlines()[0] + "\n")
    return str(dst)


@pytest.mark.parametrize("side", ["gt", "preds", "both"])
def test_empty_open_images_csv(tmp_path, side):
    """Open Images CSVs with only their header line."""
    sample = ROOT / "sample_data" / "openimages"
    gt, preds = str(sample / "gt.csv"), str(sample / "preds.csv")
    if side in ("gt", "both"):
        gt = _header_only(sample / "gt.csv", tmp_path / "gt.csv")
    if side in ("preds", "both"):
        preds = _header_only(sample / "preds.csv", tmp_path / "preds.csv")
    run(gt, preds, "--protocol", "openimages", "-f", "json", "--quiet")


@pytest.mark.parametrize("side", ["gt", "preds", "both"])
def test_empty_dota_labels_and_results(tmp_path, side):
    """DOTA label files with only their header lines, a results CSV with only its header."""
    sample = ROOT / "sample_data" / "dota"
    gt, preds = str(sample / "labelTxt"), str(sample / "preds.csv")
    if side in ("gt", "both"):
        folder = tmp_path / "labelTxt"
        folder.mkdir()
        for f in (sample / "labelTxt").iterdir():
            (folder / f.name).write_text("\n".join(f.read_text().splitlines()[:2]) + "\n")
        gt = str(folder)
    if side in ("preds", "both"):
        preds = _header_only(sample / "preds.csv", tmp_path / "preds.csv")
    for protocol in ("dota", "dota-allpoint"):
        run(gt, preds, "--protocol", protocol, "-f", "json", "--quiet")
