"""sample_data/keypoints and sample_data/yolo-pose: pycocotools' numbers, and the script rewrites them."""

from __future__ import annotations

import copy
import filecmp
import sys

import numpy as np

from iou_eval import evaluate

from ..conftest import ROOT
from .test_keypoints_parity import KEYS, assert_same, pycocotools_keypoints

SAMPLE = ROOT / "sample_data"
sys.path.insert(0, str(SAMPLE))

import make_keypoints  # noqa: E402


def test_coco_sample_equals_pycocotools():
    gt, preds = make_keypoints.ground_truth()[0], make_keypoints.predictions()
    ours = evaluate(str(SAMPLE / "keypoints/gt.json"), str(SAMPLE / "keypoints/preds.json"),
                    iou_type="keypoints")  # fmt: skip
    assert_same(ours, pycocotools_keypoints(gt, preds), "sample_data/keypoints")
    # What the script promises: a crowd and a person without labels, both ignored; one miss.
    assert all(ours.summary[k] is not None for k in KEYS)
    assert ours.summary["AP75"] < ours.summary["AP50"]
    assert (ours.per_class["gt"].tolist(), ours.per_class["FN"].tolist()) == ([10], [1])


def test_yolo_pose_sample_equals_the_coco_scene_without_its_crowd():
    """YOLO has no crowd regions: the group is left out, its two detections are false positives."""
    gt, preds = copy.deepcopy(make_keypoints.ground_truth()[0]), make_keypoints.predictions()
    gt["annotations"] = [a for a in gt["annotations"] if not a["iscrowd"]]
    for a in gt["annotations"]:
        a["area"] = make_keypoints.AREA_OF_BOX * a["bbox"][2] * a["bbox"][3]
    ours = evaluate(str(SAMPLE / "yolo-pose/data.yaml"), str(SAMPLE / "yolo-pose/predictions/labels"),
                    iou_type="keypoints")  # fmt: skip
    assert ours.inputs["ground_truth"]["format"] == "yolo"
    ref = pycocotools_keypoints(gt, preds)
    np.testing.assert_array_equal(ours.primary.arrays.precision, ref["precision"])
    np.testing.assert_array_equal(ours.primary.arrays.recall, ref["recall"])


def test_the_script_rewrites_the_same_files(tmp_path):
    make_keypoints.write_coco(str(tmp_path / "keypoints"))
    make_keypoints.write_yolo_pose(str(tmp_path / "yolo-pose"))
    for sub in ("keypoints", "yolo-pose"):
        for f in sorted((SAMPLE / sub).rglob("*")):
            if f.is_file() and f.suffix != ".png":
                assert filecmp.cmp(
                    f, tmp_path / sub / f.relative_to(SAMPLE / sub), shallow=False
                ), f
