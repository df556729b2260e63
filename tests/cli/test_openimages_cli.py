"""``iou-eval --protocol openimages`` from the command line: every output, gates, options, errors."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import pytest

from ..conftest import ROOT
from .helpers import run

SAMPLE = ROOT / "sample_data" / "openimages-challenge"
GT = str(SAMPLE / "validation-annotations-bbox.csv")
PREDS = str(SAMPLE / "predictions.csv")
TREE = str(SAMPLE / "bbox_labels_hierarchy.json")
# The sample's mAP with the hierarchy (its predictions rarely name the ancestor
# classes the expanded boxes hold) and without it.
MAP_EXPANDED, MAP_PLAIN = 0.4468, 0.7176


def test_text_report_names_the_protocol_and_the_classes():
    r = run(GT, PREDS, "--protocol", "openimages", "--oi-hierarchy", TREE)
    assert "Open Images challenge: all-point AP, IoU >= 0.5" in r.out
    assert "hierarchy expanded" in r.out
    assert re.search(rf"mAP\s+{MAP_EXPANDED:.4f}", r.out)
    for name in ("land vehicle", "carnivore", "traffic light"):
        assert name in r.out
    assert "1 prediction(s) of classes neither verified nor boxed" not in r.err
    assert "3 prediction(s) of classes neither verified nor boxed" in r.err


def test_without_the_hierarchy_says_so():
    r = run(GT, PREDS, "--protocol", "openimages")
    assert "no --oi-hierarchy" in r.err
    assert re.search(rf"mAP\s+{MAP_PLAIN:.4f}", r.out)


def test_json_has_map_and_null_ap_for_classes_without_ground_truth():
    doc = json.loads(run(GT, PREDS, "--protocol", "openimages", "-f", "json", "--quiet").out)
    assert doc["protocol"] == "openimages"
    # mAP, then one AP per class of the list (null without ground truth), as the evaluator
    # reports each category.
    assert list(doc["summary"])[0] == "mAP"
    assert doc["summary"]["AP[animal]"] is None and doc["summary"]["AP[car]"] == 1.0
    assert round(doc["summary"]["mAP"], 4) == MAP_PLAIN
    ap = {c["class"]: c["AP"] for c in doc["per_class"]}
    assert ap["animal"] is None and ap["land vehicle"] is None  # only predicted, no box
    assert ap["car"] == 1.0
    assert doc["params"]["image_labels"].endswith("validation-annotations-human-imagelabels.csv")
    assert doc["params"]["hierarchy"] is None and doc["params"]["group_of_weight"] == 1.0


@pytest.mark.parametrize("fmt", ["csv", "markdown", "html"])
def test_every_other_output_format(fmt, tmp_path):
    out = tmp_path / f"report.{fmt}"
    run(GT, PREDS, "--protocol", "openimages", "--oi-hierarchy", TREE, "-f", fmt, "-o", out,
        "--quiet")  # fmt: skip
    text = out.read_text()
    assert "openimages" in text and f"{MAP_EXPANDED:.4f}" in text
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert {"protocol": "openimages", "scope": "summary", "metric": "mAP"}.items() <= rows[
            0
        ].items()


def test_gates_on_map_and_a_class():
    run(GT, PREDS, "--protocol", "openimages", "--fail-under", "openimages:mAP=0.5", "--quiet")
    r = run(GT, PREDS, "--protocol", "openimages", "--oi-hierarchy", TREE,
            "--fail-under", "openimages:mAP=0.5", "--quiet", expect=3)  # fmt: skip
    assert "openimages:mAP=0.5" in r.out and "FAIL" in r.out
    run(GT, PREDS, "--protocol", "openimages", "--fail-under", "AP[car]=0.99", "--quiet")


def test_side_by_side_with_coco():
    r = run(GT, PREDS, "--protocol", "coco,openimages")
    assert "openimages AP" in r.out and "coco AP" in r.out


def test_image_labels_named_explicitly(tmp_path):
    """Labels given with --oi-image-labels are read instead of looked for: only car on
    street_12 is verified beyond the boxes, so the shadow there counts."""
    for name in ("validation-annotations-bbox.csv", "predictions.csv"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    labels = tmp_path / "elsewhere.csv"
    labels.write_text("ImageID,Source,LabelName,Confidence\nstreet_12,verification,/m/0k4j,0\n")
    gt, preds = tmp_path / "validation-annotations-bbox.csv", tmp_path / "predictions.csv"
    doc = json.loads(run(gt, preds, "--protocol", "openimages", "--oi-image-labels", labels,
                         "-f", "json", "--quiet").out)  # fmt: skip
    assert doc["params"]["image_labels"] == str(labels)
    cars = next(c for c in doc["per_class"] if c["category_id"] == "/m/0k4j")
    assert cars["FP"] == 2  # the duplicate car, and the shadow on street_12 (verified absent)


def test_two_label_files_that_fit_equally_are_an_error_asking_for_the_option(tmp_path):
    for name in ("validation-annotations-bbox.csv", "predictions.csv"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    labels = (SAMPLE / "validation-annotations-human-imagelabels.csv").read_text()
    (tmp_path / "x-labels.csv").write_text(labels)
    (tmp_path / "y-labels.csv").write_text(labels)
    r = run(tmp_path / "validation-annotations-bbox.csv", tmp_path / "predictions.csv",
            "--protocol", "openimages", expect=1)  # fmt: skip
    assert "expected one Open Images image-labels CSV beside the boxes, found 2" in r.err
    assert "--oi-image-labels FILE" in r.err


def test_malformed_hierarchy_is_located(tmp_path):
    bad = tmp_path / "h.json"
    bad.write_text('{"LabelName": "/m/0bl9f",\n "Subcategory": [}\n')
    r = run(GT, PREDS, "--protocol", "openimages", "--oi-hierarchy", bad, expect=1)
    assert f"{bad}:2:" in r.err and "malformed JSON" in r.err


def test_class_outside_the_hierarchy_names_file_and_line(tmp_path):
    tree = json.loads((SAMPLE / "bbox_labels_hierarchy.json").read_text())
    tree["Subcategory"] = tree["Subcategory"][:2]  # person and traffic light gone
    path = tmp_path / "h.json"
    path.write_text(json.dumps(tree))
    r = run(GT, PREDS, "--protocol", "openimages", "--oi-hierarchy", path, expect=1)
    assert f"{GT}:3: class '/m/01g317' is not in the hierarchy {path}" in r.err


def test_options_refused_where_they_do_not_apply():
    r = run(GT, PREDS, "--oi-hierarchy", TREE, expect=2)
    assert "--oi-hierarchy apply to --protocol openimages" in r.err
    r = run(GT, PREDS, "--protocol", "openimages", "--iou-type", "segm", expect=2)
    assert "--protocol openimages scores boxes" in r.err


def test_compare_and_batch_find_the_labels_beside_the_boxes(tmp_path):
    """Both read the ground truth once and score each file against it."""
    r = run("compare", GT, PREDS, PREDS, "--protocol", "openimages", "--oi-hierarchy", TREE,
            "--bootstrap", "10", "-f", "json")  # fmt: skip
    assert "no verified image-level labels" not in r.err
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("a.csv", "b.csv"):
        shutil.copy(PREDS, folder / name)
    r = run(GT, folder / "a.csv", folder / "b.csv", "--protocol", "openimages", "--oi-hierarchy",
            TREE, "-f", "json")  # fmt: skip
    assert "no verified image-level labels" not in r.err
    doc = json.loads(r.out)
    maps = [round(row["mAP"], 4) for row in doc["leaderboard"]]
    assert maps == [MAP_EXPANDED, MAP_EXPANDED]


def test_pixel_sizes_are_noted(tmp_path):
    r = run(GT, PREDS, "--protocol", "openimages", "--images", ROOT / "sample_data" / "images",
            "--quiet", "-f", "json")  # fmt: skip
    doc = json.loads(r.out)
    assert any("scored in pixels" in w for w in doc["warnings"])
    assert round(doc["summary"]["mAP"], 4) == MAP_PLAIN


def test_group_of_weight_option_and_where_it_applies():
    half = json.loads(run(GT, PREDS, "-p", "openimages", "--oi-group-of-weight", "0.5",
                          "-f", "json", "--quiet").out)  # fmt: skip
    assert half["summary"]["mAP"] != pytest.approx(MAP_PLAIN, abs=1e-4)
    one = json.loads(run(GT, PREDS, "-p", "openimages", "--oi-group-of-weight", "1",
                         "-f", "json", "--quiet").out)  # fmt: skip
    assert round(one["summary"]["mAP"], 4) == MAP_PLAIN
    r = run(GT, PREDS, "-p", "openimages", "--oi-group-of-weight", "0.5")
    assert "group-of boxes count 0.5 each, verified classes only" in r.out, r.out
    r = run(GT, PREDS, "--oi-group-of-weight", "0.5", expect=2)
    assert "--oi-group-of-weight apply to --protocol openimages" in r.err
    r = run(GT, PREDS, "-p", "openimages", "--oi-group-of-weight", "1.5", expect=2)
    assert "--oi-group-of-weight: expected a number in [0, 1], got '1.5'" in r.err, r


def test_header_says_group_of_and_area_ranges_are_not_spoken_of_without_coco():
    r = run(GT, PREDS, "-p", "openimages")
    assert re.search(r"boxes \(\d+ group-of\)", r.out) and " crowd)" not in r.out, r.out
    assert "area ranges" not in r.err, r.err
    r = run(GT, PREDS, "-p", "openimages,coco")
    assert "but the area ranges do: APs, APm, APl" in r.err, r.err
