"""Label Studio JSON export: images, the annotation that counts, scores, shapes, detection."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.io.loaders import detect_format, load
from iou_eval.io.loaders.labelstudio import image_name

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def rect(x, y, w, h, label="car", rotation=0, rid="a", **extra):
    return {"id": rid, "type": "rectanglelabels", "from_name": "label", "to_name": "image",
            "original_width": 200, "original_height": 100,
            "value": {"x": x, "y": y, "width": w, "height": h, "rotation": rotation,
                      "rectanglelabels": [label]}, **extra}  # fmt: skip


def write(tmp_path: Path, tasks) -> str:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    return str(path)


@pytest.mark.parametrize(
    ("ref", "name"),
    [
        ("/data/upload/3/1a2b3c4d-street_01.jpg", "street_01.jpg"),
        ("/data/upload/12/DEADBEEF-a-b.png", "a-b.png"),
        ("/data/local-files/?d=photos/day/img%201.jpg", "img 1.jpg"),
        ("https://example.com/x/y/photo.jpg?X-Amz=1", "photo.jpg"),
        ("s3://bucket/1a2b3c4d-kept.jpg", "1a2b3c4d-kept.jpg"),  # not an upload: name kept
    ],
)
def test_image_name_strips_the_upload_prefix_only_for_uploads(ref, name):
    assert image_name({"image": ref}) == name


def test_percentages_become_pixels_of_the_original_size(tmp_path):
    """A 200 x 100 image: x 10 %, y 20 %, w 30 %, h 40 % -> (20, 20)-(80, 60)."""
    path = write(tmp_path, [{"id": 1, "data": {"image": "/data/upload/1/0123abcd-a.jpg"},
                             "annotations": [{"result": [rect(10, 20, 30, 40)]}]}])  # fmt: skip
    ds = load(path, "gt")
    assert ds.format == "labelstudio" and ds.images.ids == ("a.jpg",)
    assert ds.xyxy.tolist() == [[20.0, 20.0, 80.0, 60.0]]
    assert (ds.images.width[0], ds.images.height[0]) == (200.0, 100.0)


def test_latest_annotation_not_cancelled_counts(tmp_path):
    anns = [
        {"id": 1, "created_at": "2024-01-01T00:00:00Z", "result": [rect(0, 0, 10, 10, "old")]},
        {"id": 2, "created_at": "2024-03-01T00:00:00Z", "result": [rect(0, 0, 10, 10, "new")]},
        {"id": 3, "created_at": "2024-05-01T00:00:00Z", "was_cancelled": True,
         "result": [rect(0, 0, 10, 10, "cancelled")]},
    ]  # fmt: skip
    ds = load(write(tmp_path, [{"id": 1, "data": {"image": "a.jpg"}, "annotations": anns}]), "gt")
    assert [ds.categories.names[c] for c in ds.category_idx] == ["new"]
    assert any("several annotations" in w for w in ds.warnings)


def test_task_with_only_cancelled_annotations_is_not_a_ground_truth_image(tmp_path):
    tasks = [
        {"id": 1, "data": {"image": "a.jpg"}, "annotations": [{"result": []}]},
        {"id": 2, "data": {"image": "b.jpg"}, "annotations": [{"was_cancelled": True, "result": []}]},
    ]  # fmt: skip
    ds = load(write(tmp_path, tasks), "gt")
    assert ds.images.ids == ("a.jpg",) and len(ds) == 0
    assert any("1 task(s) without an annotation" in w for w in ds.warnings)


def test_prediction_score_on_the_result_wins_over_the_prediction(tmp_path):
    preds = [{"model_version": "m", "score": 0.5,
              "result": [rect(0, 0, 10, 10, rid="a"), rect(5, 5, 10, 10, rid="b", score=0.9)]}]  # fmt: skip
    ds = load(
        write(tmp_path, [{"id": 1, "data": {"image": "a.jpg"}, "predictions": preds}]), "pred"
    )
    assert ds.scores.tolist() == [0.5, 0.9]


def test_prediction_without_any_score_is_an_error_naming_the_task(tmp_path):
    preds = [{"result": [rect(0, 0, 10, 10)]}]
    path = write(tmp_path, [{"id": 1, "data": {"image": "a.jpg"}, "predictions": preds}])
    with pytest.raises(InputError, match=r"tasks|\[0\]") as err:
        load(path, "pred")
    assert "no score" in str(err.value)


def test_rotation_gives_an_oriented_box_turned_about_its_top_left(tmp_path):
    """A 20 x 10 px box at (20, 20), turned 90 degrees clockwise: it hangs below-left of (20, 20)."""
    path = write(tmp_path, [{"id": 1, "data": {"image": "a.jpg"},
                             "annotations": [{"result": [rect(10, 20, 10, 10, rotation=90)]}]}])  # fmt: skip
    ds = load(path, "gt")
    assert ds.oriented is not None
    corners = ds.oriented.corners[0]
    assert np.allclose(sorted(map(tuple, corners)),
                       sorted([(20, 20), (20, 40), (10, 40), (10, 20)]), atol=1e-9)  # fmt: skip
    assert math.isclose(ds.xyxy[0][0], 10.0) and math.isclose(ds.xyxy[0][3], 40.0)


def test_polygon_and_crowd_choice_per_region(tmp_path):
    poly = {
        "id": "p",
        "type": "polygonlabels",
        "original_width": 200,
        "original_height": 100,
        "value": {"points": [[10, 10], [50, 10], [50, 50]], "polygonlabels": ["dog"]},
    }
    crowd = {"id": "p", "type": "choices", "from_name": "iscrowd", "value": {"choices": ["iscrowd"]}}  # fmt: skip
    path = write(tmp_path, [{"id": 1, "data": {"image": "a.jpg"},
                             "annotations": [{"result": [poly, crowd]}]}])  # fmt: skip
    ds = load(path, "gt")
    assert ds.xyxy.tolist() == [[20.0, 10.0, 100.0, 50.0]] and ds.is_crowd.tolist() == [True]


def test_export_is_detected_from_content_before_coco():
    assert detect_format(str(SAMPLE / "labelstudio/gt.json")) == "labelstudio"
    assert detect_format(str(SAMPLE / "labelstudio/preds.json")) == "labelstudio"
    assert detect_format(str(SAMPLE / "coco/preds.json")) == "coco"


def test_coco_file_that_mentions_result_is_still_coco(tmp_path):
    doc = {"info": {"description": "result"}, "images": [], "annotations": [], "categories": []}
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(doc))
    assert detect_format(str(path)) == "coco"
