"""Ultralytics pose datasets and predictions (``iou_eval.io.loaders.yolo_pose``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate, load
from iou_eval.errors import InputError
from iou_eval.geometry.keypoints import KeypointColumn, PendingKeypoints

from .formats_helpers import image, write

YAML = "val: images/val\nnames:\n  0: person\nkpt_shape: [3, 3]\n"


def pose_dataset(root: Path, yaml: str = YAML, **labels: str) -> Path:
    """Images a (100x50) and b (200x100) and their label files."""
    image(root / "images/val/a.png", 100, 50)
    image(root / "images/val/b.png", 200, 100)
    for stem, text in labels.items():
        write(root / "labels/val" / f"{stem}.txt", text)
    return write(root / "data.yaml", yaml)


def predictions(root: Path, **files: str) -> Path:
    """A ``predict`` run folder: ``labels/<stem>.txt`` and the images beside ``labels/``."""
    image(root / "run/a.png", 100, 50)
    for stem, text in files.items():
        write(root / "run/labels" / f"{stem}.txt", text)
    return root / "run"


# a: 100x50; a person whose box is centred at (50, 25), 40 x 20 pixels,
# keypoints (40, 20) labelled, (60, 30) labelled, (0, 0) unlabelled.
A_LINE = "0 0.5 0.5 0.4 0.4 0.4 0.4 2 0.6 0.6 1 0 0 0\n"


def test_pose_labels_give_pixels_labels_and_ultralytics_area(tmp_path):
    d = load(str(pose_dataset(tmp_path, a=A_LINE)), "gt", "yolo", keypoints=True)
    kp = d.keypoints
    assert isinstance(kp, KeypointColumn)
    np.testing.assert_allclose(d.xyxy, [[30, 15, 70, 35]])
    np.testing.assert_allclose(kp.x, [[40, 60, 0]])
    np.testing.assert_allclose(kp.y, [[20, 30, 0]])
    assert kp.visible.tolist() == [[True, True, False]]
    assert kp.num_keypoints.tolist() == [2] and kp.count.tolist() == [3]
    np.testing.assert_allclose(kp.box, [[30, 15, 40, 20]])
    # OKS scale as Ultralytics' PoseValidator: 0.53 of the box's w * h.
    np.testing.assert_allclose(d.area, [40 * 20 * 0.53])


def test_boxes_only_keep_the_box_area_and_no_keypoints(tmp_path):
    d = load(str(pose_dataset(tmp_path, a=A_LINE)), "gt", "yolo")
    assert d.keypoints is None
    np.testing.assert_allclose(d.area, [800.0])


def test_two_numbers_a_keypoint_label_unless_negative(tmp_path):
    yaml = YAML.replace("[3, 3]", "[2, 2]")
    d = load(str(pose_dataset(tmp_path, yaml, a="0 0.5 0.5 0.4 0.4 0.4 0.4 -1 0.5\n")), "gt",
             "yolo", keypoints=True)  # fmt: skip
    assert d.keypoints.visible.tolist() == [[True, False]]


@pytest.mark.parametrize(
    "line, message",
    [
        ("0 0.5 0.5 0.4 0.4 0.4 0.4 2 0.6 0.6 1\n", "expected 14 numbers"),
        ("0 0.5 0.5 0.4 0.4 0.4 0.4 2 0.6 0.6 1 0 0 0 1\n", "got 15"),
        ("0 0.5 0.5 0.4 0.4 0.4 0.4 2 1.6 0.6 1 0 0 0\n", "keypoint 2 at 1.6 0.6"),
        ("0 0.5 0.5 0.4 0.4 0.4 0.4 x 0.6 0.6 1 0 0 0\n", "expected a number, got 'x'"),
    ],
)
def test_a_line_that_does_not_fit_kpt_shape_names_file_and_line(tmp_path, line, message):
    path = pose_dataset(tmp_path, a="0 0.5 0.5 0.4 0.4 0.4 0.4 2 0.6 0.6 1 0 0 0\n" + line)
    with pytest.raises(InputError) as e:
        load(str(path), "gt", "yolo", keypoints=True)
    text = e.value.format()
    assert message in text and "a.txt:2" in text, text


@pytest.mark.parametrize("shape", ["[17]", "[17, 4]", "[0, 3]", "oops"])
def test_bad_kpt_shape_is_refused(tmp_path, shape):
    with pytest.raises(InputError, match="'kpt_shape' must be"):
        load(str(pose_dataset(tmp_path, YAML.replace("[3, 3]", shape))), "gt", "yolo")


def test_duplicate_lines_are_dropped_as_ultralytics_does(tmp_path):
    d = load(str(pose_dataset(tmp_path, a=A_LINE * 2)), "gt", "yolo", keypoints=True)
    assert len(d) == 1 and any("1 duplicate label line" in w for w in d.warnings)


def test_predict_text_is_read_with_the_ground_truths_k(tmp_path):
    """A prediction equal to the ground truth scores OKS 1; K decides 'x y conf' or 'x y'."""
    root = pose_dataset(tmp_path, a=A_LINE)
    with_conf = "0 0.5 0.5 0.4 0.4 0.4 0.4 0.9 0.6 0.6 0.8 0.1 0.1 0.2 0.75\n"
    without = "0 0.5 0.5 0.4 0.4 0.4 0.4 0.6 0.6 0.1 0.1 0.5\n"
    for text in (with_conf, without):
        preds = predictions(tmp_path / text.count(" ").__str__(), a=text)
        ds = load(str(preds), "pred", "yolo", keypoints=True)
        assert isinstance(ds.keypoints, PendingKeypoints)
        r = evaluate(str(root), str(preds), iou_type="keypoints")
        # One true positive: pycocotools' precision is 1 / (1 + eps), not 1.
        assert r.summary["AP"] == pytest.approx(1.0, abs=1e-15) and r.summary["AR"] == 1.0
        assert r.per_image["mean_OKS"].tolist()[0] == 1.0


def test_predict_line_of_the_wrong_length_names_file_and_line(tmp_path):
    root = pose_dataset(tmp_path, a=A_LINE)
    preds = predictions(tmp_path, a="0 0.5 0.5 0.4 0.4 0.4 0.4 0.9 0.6 0.6 0.75\n")
    with pytest.raises(InputError) as e:
        evaluate(str(root), str(preds), iou_type="keypoints")
    text = e.value.format()
    assert "a.txt:1" in text and "12 or 15 numbers, got 11" in text, text


def test_predict_line_without_keypoints_is_refused(tmp_path):
    preds = predictions(tmp_path, a="0 0.5 0.5 0.4 0.4 0.75\n")
    with pytest.raises(InputError, match="a box without keypoints"):
        load(str(preds), "pred", "yolo", keypoints=True)


def test_predictions_json_of_val_is_read_as_coco_results(tmp_path, write_json):
    """Ultralytics' predictions.json: image ids are stems, boxes xywh, keypoints in pixels."""
    root = pose_dataset(tmp_path, a=A_LINE)
    res = write_json("predictions.json", [
        {"image_id": "a", "category_id": 0, "bbox": [30, 15, 40, 20], "score": 0.9,
         "keypoints": [40, 20, 0.9, 60, 30, 0.8, 3, 3, 0.1]},
    ])  # fmt: skip
    r = evaluate(str(root), res, iou_type="keypoints", pred_format="yolo")
    assert r.summary["AR"] == 1.0 and r.per_image["mean_OKS"].tolist()[0] == 1.0
