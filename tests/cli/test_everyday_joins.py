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


# --------------------------------------------------------------------------- ids and scores as written


@pytest.fixture(params=["compiled", "numpy"])
def reader(request, monkeypatch):
    """Both JSON readers: the compiled one (as installed) and msgspec (``IOU_EVAL_NO_KERNEL=1``)."""
    if request.param == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    return request.param


def test_integral_float_ids_read_as_the_integers_pycocotools_takes(tmp_path, reader):
    """pandas writes ``"image_id": 1.0``; pycocotools looks it up as 1."""
    gt, preds = sample_coco()
    gt["images"][0]["id"] = 1.0
    gt["categories"][0]["id"] = 1.0
    gt["annotations"] = [{**a, "image_id": float(a["image_id"])} for a in gt["annotations"]]
    floats = [{**r, "image_id": float(r["image_id"]), "category_id": float(r["category_id"])}
              for r in preds]  # fmt: skip
    g = write(tmp_path / "gt.json", json.dumps(gt))
    p = write(tmp_path / "p.json", json.dumps(floats))
    reference, _ = report(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")
    doc, _ = report(g, p)
    assert doc["summary"] == reference["summary"] and doc["summary"]["AP"] == pytest.approx(
        0.5505234831
    )


def test_fractional_float_id_is_an_error_naming_the_element(tmp_path, reader):
    gt, preds = sample_coco()
    preds[3]["image_id"] = 1.5
    p = write(tmp_path / "p.json", json.dumps(preds))
    r = run(SAMPLE / "coco/gt.json", p, expect=1)
    assert "p.json:[3].image_id: expected a whole number or a string as id, got 1.5" in r.err
    gt["annotations"][2]["category_id"] = 2.5
    g = write(tmp_path / "gt.json", json.dumps(gt))
    r = run(g, SAMPLE / "coco/preds.json", expect=1)
    assert "gt.json:annotations[2].category_id: expected a whole number" in r.err


def test_confidence_key_in_place_of_score_is_read_with_a_note(tmp_path, reader):
    _, preds = sample_coco()
    renamed = [{**{k: v for k, v in r.items() if k != "score"}, "confidence": r["score"]}
               for r in preds]  # fmt: skip
    p = write(tmp_path / "p.json", json.dumps(renamed))
    reference, _ = report(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")
    doc, err = report(SAMPLE / "coco/gt.json", p)
    assert doc["summary"] == reference["summary"]
    assert "no 'score' key: the score read from 'confidence'" in err


def test_score_column_names_the_json_key_and_the_csv_column(tmp_path, reader):
    import iou_eval

    _, preds = sample_coco()
    prob = [{**{k: v for k, v in r.items() if k != "score"}, "prob": r["score"]} for r in preds]
    p = write(tmp_path / "p.json", json.dumps(prob))
    r = run(SAMPLE / "coco/gt.json", p, expect=1)
    assert "prediction has no 'score'" in r.err and "--score-column NAME" in r.err
    reference, _ = report(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")
    doc, _ = report(SAMPLE / "coco/gt.json", p, "--score-column", "prob")
    assert doc["summary"] == reference["summary"]
    lines = (SAMPLE / "csv/preds.csv").read_text().splitlines()
    assert lines[0].endswith(",score")
    c = write(
        tmp_path / "p.csv", "\n".join([lines[0][: -len("score")] + "p_obj", *lines[1:]]) + "\n"
    )
    run(SAMPLE / "csv/gt.csv", c, expect=1)
    csv_reference, _ = report(SAMPLE / "csv/gt.csv", SAMPLE / "csv/preds.csv")
    doc, _ = report(SAMPLE / "csv/gt.csv", c, "--score-column", "p_obj")
    assert doc["summary"] == csv_reference["summary"]
    r = run(SAMPLE / "csv/gt.csv", c, "--score-column", "nope", expect=1)
    assert "cannot find the score column 'nope' (--score-column)" in r.err
    api = iou_eval.evaluate(str(SAMPLE / "coco/gt.json"), str(p), score_column="prob")
    assert api.summary["AP"] == reference["summary"]["AP"]


# --------------------------------------------------------------------------- keypoints scored as boxes


def test_coco_keypoint_files_scored_as_boxes_say_iou_type_keypoints_is_there():
    gt, preds = SAMPLE / "keypoints/gt.json", SAMPLE / "keypoints/preds.json"
    hint = "carry keypoints; their boxes were scored (iou type bbox, the default): score them with --iou-type keypoints"
    doc, err = report(gt, preds, "--strict")
    assert (
        hint in err and doc["doubts"] == [] and doc["summary"]["AP"] == pytest.approx(0.8329047190)
    )
    _, err = report(gt, preds, "--iou-type", "bbox")  # asked for: nothing to say
    assert hint not in err
    _, err = report(gt, preds, "--iou-type", "keypoints")
    assert hint not in err
    _, err = report(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")  # boxes only
    assert "keypoints" not in err


def test_pose_data_yaml_with_keypoint_predictions_json_says_iou_type_keypoints(tmp_path):
    records = json.loads((SAMPLE / "keypoints/preds.json").read_text())
    stems = sorted(p.stem for p in (SAMPLE / "yolo-pose/labels").rglob("*.txt"))
    p = write(tmp_path / "predictions.json",
              json.dumps([{**r, "image_id": stems[0], "category_id": 1} for r in records[:2]]))  # fmt: skip
    _, err = report(SAMPLE / "yolo-pose/data.yaml", p)
    assert "score them with --iou-type keypoints" in err


# --------------------------------------------------------------------------- part of the ground truth predicted

CASE_03 = ACCEPTANCE / "03_rdm_voc_database_100"
needs_case_03 = pytest.mark.skipif(not CASE_03.exists(), reason="acceptance case 03 not present")


def devkit_scene(tmp_path: Path, predicted: int = 50) -> tuple[Path, Path, list[str]]:
    """Case 03's 100 VOC XMLs as ``VOCdevkit/VOC2007`` (every second image in ``test``, the
    others in ``trainval``) and its detections for the first ``predicted`` test images."""
    import shutil

    year = tmp_path / "VOCdevkit" / "VOC2007"
    (year / "Annotations").mkdir(parents=True)
    stems = sorted(f.stem for f in (CASE_03 / "gts/pascalvoc_format").glob("*.xml"))
    for s in stems:
        shutil.copy(CASE_03 / "gts/pascalvoc_format" / f"{s}.xml", year / "Annotations")
    test, trainval = stems[1::2], stems[0::2]
    write(year / "ImageSets/Main/test.txt", "\n".join(test) + "\n")
    write(year / "ImageSets/Main/trainval.txt", "\n".join(trainval) + "\n")
    write(year / "ImageSets/Main/dog_test.txt", "".join(f"{s}  1\n" for s in test))  # per class
    dets = tmp_path / "dets"
    dets.mkdir()
    for s in test[:predicted]:
        if (CASE_03 / "dets/abs_xyx2y2" / f"{s}.txt").exists():
            shutil.copy(CASE_03 / "dets/abs_xyx2y2" / f"{s}.txt", dets)
    return year, dets, test


def voc_args() -> tuple:
    return ("--names", CASE_03 / "dets/voc.names", "--pred-box-format", "xyxy", "-p", "voc07")


@needs_case_03
def test_ground_truth_half_predicted_says_how_many_images_have_no_predictions(tmp_path):
    year, dets, _ = devkit_scene(tmp_path)
    said = "50 of 100 ground-truth images with objects have no predictions"
    doc, err = report(year / "Annotations", dets, *voc_args(), "--strict")  # a note, not a doubt
    assert doc["summary"]["mAP"] == pytest.approx(0.3390623, abs=1e-6)
    assert said in err and doc["doubts"] == []
    p = doc["inputs"]["predictions"]
    assert (p["images_without_predictions"], p["images_with_objects"]) == (50, 100)
    assert said in run(year / "Annotations", dets, *voc_args()).out  # the text header
    assert said in run(year / "Annotations", dets, *voc_args(), "-f", "markdown").out
    html = tmp_path / "r.html"
    run(year / "Annotations", dets, *voc_args(), "-f", "html", "-o", html)
    assert said in html.read_text()


@needs_case_03
def test_most_of_the_ground_truth_without_predictions_is_a_doubt(tmp_path):
    year, dets, _ = devkit_scene(tmp_path, predicted=30)
    doc, _ = report(year / "Annotations", dets, *voc_args())
    (d,) = [d for d in doc["doubts"] if "have no predictions" in d]
    assert "ground-truth images with objects have no predictions" in d and "--split" in d
    run(year / "Annotations", dets, *voc_args(), "--strict", expect=1)


def test_no_predictions_at_all_is_no_doubt_about_a_part(tmp_path):
    gt = json.loads((SAMPLE / "coco/gt.json").read_text())
    p = write(tmp_path / "p.json", "[]")
    doc, err = report(write(tmp_path / "gt.json", json.dumps(gt)), p)
    assert "11 of 11 ground-truth images with objects have no predictions" in err
    assert doc["doubts"] == []


@needs_case_03
@pytest.mark.parametrize("root", ["year", "devkit"])
def test_vocdevkit_folder_read_as_the_devkit_reads_it(tmp_path, root):
    """The test image set (said in a note), in place of a refusal; mAP as for those 50 files alone."""
    import shutil

    year, dets, test = devkit_scene(tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    for s in test:
        shutil.copy(year / "Annotations" / f"{s}.xml", alone)
    reference, _ = report(alone, dets, *voc_args())
    path = year if root == "year" else year.parent
    doc, err = report(path, dets, *voc_args(), "--strict")
    assert doc["summary"] == reference["summary"] and doc["summary"]["mAP"] == pytest.approx(
        0.5763436, abs=1e-6
    )
    assert (
        doc["inputs"]["ground_truth"]["images"] == 50
        and doc["inputs"]["ground_truth"]["format"] == "voc-xml"
    )
    assert "read as a VOCdevkit year folder: the image set test (ImageSets/Main/test.txt)" in err
    other, err = report(path, dets, *voc_args(), "--split", "trainval")
    assert other["inputs"]["ground_truth"]["images"] == 50 and "not in the ground truth" in err
    r = run(path, dets, *voc_args(), "--split", "nope", expect=1)
    assert "no image set 'nope' (ImageSets/Main/nope.txt)" in r.err
    assert "--split takes one of: test, trainval" in r.err


@needs_case_03
def test_vocdevkit_root_with_two_years_asks_for_one(tmp_path):
    import shutil

    year, dets, _ = devkit_scene(tmp_path)
    shutil.copytree(year, year.parent / "VOC2012")
    r = run(year.parent, dets, *voc_args(), expect=1)
    assert "a VOCdevkit folder with 2 year folders (VOC2007, VOC2012); pass one of them" in r.err
