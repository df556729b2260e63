"""--slices, --img-ids and --cat-ids on the command line: every format, gates, bad files."""

from __future__ import annotations

import json

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


@pytest.fixture
def slices(tmp_path) -> str:
    path = tmp_path / "slices.csv"
    path.write_text("image_id,slice\n1,night\n2,night\n3,day\n4,day\n5,day\n999,day\n")
    return str(path)


def test_one_row_per_slice_beside_the_whole_set_in_every_format(slices):
    doc = json.loads(run(GT, PREDS, "--slices", slices, "-f", "json", "-q").out)
    assert list(doc["slices"]) == ["night", "day"]
    assert doc["slices"]["night"]["images"] == 2 and doc["slices"]["day"]["images"] == 3
    assert list(doc["slices"]["day"]["summary"]) == list(doc["summary"])
    text = run(GT, PREDS, "--slices", slices, "-q").out
    assert "Slices (coco" in text and "(all images)" in text and "\n  night " in text
    md = run(GT, PREDS, "--slices", slices, "-q", "-f", "markdown").out
    assert "| night | 2 |" in md and "| (all images) | 12 |" in md
    csv = run(GT, PREDS, "--slices", slices, "-q", "-f", "csv").out
    assert "coco,slice,night,images,2" in csv and "coco,slice,day,AP," in csv


def test_slice_members_not_in_the_ground_truth_are_warned_about(slices):
    r = run(GT, PREDS, "--slices", slices)
    assert "1 image id(s) are not among the scored images (999)" in r.err


def test_every_protocol_gets_its_slices(slices):
    doc = json.loads(run(GT, PREDS, "--slices", slices, "-p", "coco,voc12", "-f", "json").out)
    voc = doc["additional_protocols"][0]
    assert list(voc["slices"]["night"]["summary"]) == ["mAP"]


def test_gates_name_a_slice(slices):
    r = run(GT, PREDS, "--slices", slices, "--fail-under", "AP@night=0.7", "-q")
    assert "AP@night=0.7" in r.out and "pass" in r.out
    r = run(GT, PREDS, "--slices", slices, "--fail-under", "AP@night=0.8", "-q", expect=3)
    assert "0.7245 is below 0.8" in r.out
    run(GT, PREDS, "--slices", slices, "--fail-under", "voc12:mAP@day=0.5", "-p", "coco,voc12")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--fail-under", "AP@dusk=0.5"], "no slice 'dusk' (slices: night, day)"),
        (["--fail-under", "AP[car]@night=0.5"], "a slice has summary metrics only"),
    ],
)
def test_bad_slice_gates_are_usage_errors(slices, args, needle):
    assert needle in run(GT, PREDS, "--slices", slices, *args, expect=2).err


def test_a_slice_gate_without_slices_is_a_usage_error():
    r = run(GT, PREDS, "--fail-under", "AP@night=0.5", expect=2)
    assert "no --slices were given" in r.err


@pytest.mark.parametrize(
    "content, needle",
    [
        ("image,name\n1,night\n", "slices.csv:1: expected a CSV header with image_id and slice"),
        ("image_id,slice\n1,night\n2\n", "slices.csv:3: expected image_id,slice"),
        ("image_id,slice\n", "no slices"),
    ],
)
def test_bad_csv_slices_files_are_located(tmp_path, content, needle):
    path = tmp_path / "slices.csv"
    path.write_text(content)
    r = run(GT, PREDS, "--slices", path, expect=1)
    assert needle in r.err and "Traceback" not in r.err


@pytest.mark.parametrize(
    "content, needle",
    [
        ('{"1": ["night"', "malformed JSON"),
        ('{"1": 3}', "image '1': expected a list of slice names"),
        ('["night"]', "expected a JSON object"),
    ],
)
def test_bad_json_slices_files_are_located(tmp_path, content, needle):
    path = tmp_path / "slices.json"
    path.write_text(content)
    r = run(GT, PREDS, "--slices", path, expect=1)
    assert needle in r.err and "slices.json" in r.err


def test_json_slices_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"1": ["night", "city"], "street_02.jpg": ["night"]}))
    doc = json.loads(run(GT, PREDS, "--slices", path, "-f", "json", "-q").out)
    assert doc["slices"]["night"]["images"] == 2 and doc["slices"]["city"]["images"] == 1


def test_img_ids_and_cat_ids_select_what_is_scored(tmp_path):
    doc = json.loads(run(GT, PREDS, "--img-ids", "1,2,3", "--cat-ids", "person,3",
                         "-f", "json", "-q").out)  # fmt: skip
    assert [r["image_id"] for r in doc["per_image"]] == [1, 2, 3]
    assert [r["class"] for r in doc["per_class"]] == ["dog", "person"]
    assert doc["inputs"]["selection"] == {
        "images": 3, "categories": 2, "img_ids_given": 3, "cat_ids_given": 2,
    }  # fmt: skip


def test_unknown_ids_are_warned_about_and_none_known_is_an_error(tmp_path):
    r = run(GT, PREDS, "--img-ids", "1,2,77", "--cat-ids", "person,zebra")
    assert "--img-ids: 1 id(s) are not images of the ground truth (77)" in r.err
    assert "--cat-ids: 1 id(s) are not categories of either file ('zebra')" in r.err
    assert "none of 77, 78" in run(GT, PREDS, "--img-ids", "77,78", expect=2).err
    assert "--img-ids: expected at least one id" in run(GT, PREDS, "--img-ids", ",", expect=2).err
    missing = tmp_path / "nope.txt"
    assert "nope.txt: no such file" in run(GT, PREDS, "--img-ids", f"@{missing}", expect=1).err


def test_a_baseline_of_other_images_is_refused(tmp_path):
    base = tmp_path / "base.json"
    run(GT, PREDS, "-f", "json", "-o", base)
    r = run(GT, PREDS, "--img-ids", "1,2,3", "--baseline", base, expect=1)
    assert "img_ids: baseline None, now '3 ids, digest" in r.err
