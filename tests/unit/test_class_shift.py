"""Class numberings shifted by a rule (``iou_eval.data.class_shift``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iou_eval.data.class_shift import (
    COCO80_TO_COCO91,
    apply_class_map,
    class_counts,
    detect_class_shift,
    remap_categories,
)
from iou_eval.errors import UsageError
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.yolo import load_yolo

from .formats_helpers import write


def test_the_coco80_map_skips_the_ten_unused_coco_ids():
    assert len(COCO80_TO_COCO91) == 80 and COCO80_TO_COCO91[0] == 1 and COCO80_TO_COCO91[-1] == 90
    assert sorted(set(range(1, 91)) - set(COCO80_TO_COCO91)) == [
        12,
        26,
        29,
        30,
        45,
        66,
        68,
        69,
        71,
        83,
    ]


def test_index_plus_one_against_a_zero_based_ground_truth():
    """Ultralytics since December 2024: category_id = index + 1."""
    shift = detect_class_shift(range(5), [1, 2, 3, 4, 5], [10, 3, 2, 1, 4])
    assert (shift.kind, shift.offset, shift.flag) == ("offset", -1, "--class-offset -1")
    assert (shift.known_before, shift.known_after, shift.total) == (16, 20, 20)  # id 5: 4 unknown
    assert "number classes from 1, the ground truth from 0" in shift.evidence
    assert "pass --class-offset -1" in shift.warning("preds.json")


def test_zero_based_predictions_against_a_one_based_ground_truth():
    shift = detect_class_shift([1, 2, 3], [0, 1, 2])
    assert shift.flag == "--class-offset 1"


def test_coco80_indices_against_coco_ids_and_back():
    shift = detect_class_shift(COCO80_TO_COCO91, range(80))
    assert (shift.kind, shift.inverse, shift.flag) == ("coco80", False, "--class-map coco80")
    back = detect_class_shift(range(80), COCO80_TO_COCO91)
    assert (back.kind, back.inverse) == ("coco80", True)
    assert "COCO's ids 1..90, the ground truth the 80 indices" in back.evidence


def test_no_shift_when_ids_agree_or_no_rule_explains_them():
    assert detect_class_shift(range(5), range(5)).kind == "none"
    assert detect_class_shift(range(5), range(5)).warning("p") is None
    assert detect_class_shift(range(5), [40, 41]).kind == "none"
    assert detect_class_shift(["cat", "dog"], [1, 2]).kind == "none"  # names, not numbers


def test_apply_class_map_both_ways():
    assert apply_class_map([1, 2], offset=-1) == (0, 1)
    assert apply_class_map([0, 11, 79], class_map="coco80") == (1, 13, 90)
    assert apply_class_map([1, 13, 90], class_map="coco80", gt_category_ids=range(80)) == (
        0,
        11,
        79,
    )
    with pytest.raises(UsageError, match="class id 12 is not a COCO id"):
        apply_class_map([12], class_map="coco80", gt_category_ids=range(80))
    with pytest.raises(UsageError, match="unknown class map"):
        apply_class_map([1], class_map="lvis")


def test_predictions_json_read_through_yolo_and_remapped(tmp_path: Path):
    """val(save_json=True): image_id the stem, category_id index + 1."""
    path = write(
        tmp_path / "predictions.json",
        '[{"image_id": "a", "category_id": 2, "bbox": [1.0, 2.0, 3.0, 4.0], "score": 0.9},\n'
        ' {"image_id": 7, "category_id": 1, "bbox": [1.0, 2.0, 3.0, 4.0], "score": 0.5}]\n',
    )
    pred = load_yolo(str(path), "pred", LoadOptions())
    assert pred.format == "coco"
    ids, counts = class_counts(pred)
    shift = detect_class_shift([0, 1], ids, counts)
    assert shift.flag == "--class-offset -1"
    fixed = remap_categories(pred, offset=shift.offset)
    assert sorted(fixed.categories.ids) == [0, 1]
    assert fixed.categories.ids[pred.category_idx[0]] == 1
