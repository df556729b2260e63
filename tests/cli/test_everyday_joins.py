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
