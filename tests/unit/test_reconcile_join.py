"""How predictions join the ground truth's images and categories.

A COCO prediction names its image by id: an id the ground truth lacks is
reported and left out, never joined to an image whose file is called
"<id>.jpg" (joining by file name or stem is for formats that name images
by file).  A category id spelled differently ("1" for 1) still joins, but
pycocotools compares ids exactly and would leave such predictions out: the
warnings say so.
"""

from __future__ import annotations

import pytest

from iou_eval import evaluate

from ..parity.synth import run_pycocotools

GT = {
    "images": [{"id": 1, "file_name": "7.jpg"}, {"id": 2, "file_name": "8.jpg"}],
    "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
         "iscrowd": 0},
        {"id": 2, "image_id": 2, "category_id": 2, "bbox": [0, 0, 10, 10], "area": 100,
         "iscrowd": 0},
    ],
}  # fmt: skip


def _pred(image, cat, score=0.9):
    return {"image_id": image, "category_id": cat, "bbox": [0, 0, 10, 10], "score": score}


def test_a_coco_id_is_not_joined_to_a_file_stem(write_json):
    """Image id 7 is not in the ground truth; the image called 7.jpg has id 1."""
    preds = [_pred(1, 1), _pred(7, 2)]
    r = evaluate(write_json("gt.json", GT), write_json("p.json", preds))
    assert r.inputs["predictions"]["unknown_image_boxes"] == 1
    assert r.inputs["image_match"] == "id"
    assert any("not in the ground truth" in w and "7" in w for w in r.warnings), r.warnings
    per_image = {row["image_id"]: row for row in r.images.records()}
    assert per_image[1]["predictions"] == 1 and per_image[1]["FP"] == 0


def test_a_predictions_dict_still_joins_by_its_file_names(write_json):
    """A COCO predictions dict numbers its own images: its file names join them."""
    preds = {
        "images": [{"id": 70, "file_name": "8.jpg"}],
        "annotations": [{**_pred(70, 2), "id": 1}],
        "categories": [],
    }
    r = evaluate(write_json("gt.json", GT), write_json("p.json", preds))
    assert r.inputs["predictions"]["unknown_image_boxes"] == 0
    assert r.inputs["image_match"] == "file name"


def test_a_category_id_spelled_as_text_joins_with_a_warning(write_json):
    preds = [_pred(1, "1"), _pred(2, 2), _pred(2, "1", 0.5)]
    r = evaluate(write_json("gt.json", GT), write_json("p.json", preds))
    row = {x["class"]: x for x in r.classes.records()}
    assert row["cat"]["predictions"] == 2 and row["cat"]["TP"] == 1
    said = [w for w in r.warnings if "pycocotools" in w and "category" in w]
    assert len(said) == 1, r.warnings
    assert "2 prediction(s)" in said[0] and "'1'" in said[0]


def test_pycocotools_leaves_those_predictions_out(write_json):
    """The warning's claim, checked: pycocotools scores the cat as missed."""
    preds = [_pred(1, "1"), _pred(2, 2)]
    ref = run_pycocotools(GT, preds, as_given=True)
    assert ref["precision"][0, 0, 0, 0, -1] == 0.0  # no cat prediction reached pycocotools


@pytest.mark.parametrize("cat", [1, 2])
def test_categories_spelled_as_the_ground_truth_spells_them_give_no_warning(cat, write_json):
    r = evaluate(write_json("gt.json", GT), write_json("p.json", [_pred(1, cat)]))
    assert not [w for w in r.warnings if "category" in w], r.warnings


def test_a_text_id_in_the_ground_truth_and_a_number_in_the_predictions(write_json):
    gt = {**GT, "categories": [{"id": "1", "name": "cat"}, {"id": "2", "name": "dog"}]}
    r = evaluate(write_json("gt.json", gt), write_json("p.json", [_pred(1, 1), _pred(2, "2")]))
    said = [w for w in r.warnings if "pycocotools" in w and "category" in w]
    assert len(said) == 1 and "1 prediction(s)" in said[0], r.warnings


def test_the_spelling_survives_the_chunked_reading_of_a_large_file(write_json, monkeypatch):
    import iou_eval.io.loaders.coco as coco

    monkeypatch.setattr(coco, "_CHUNK_BYTES", 300)
    preds = [_pred(1 + i % 2, "1" if i % 7 == 0 else 1 + i % 2, 0.01 * i) for i in range(60)]
    r = evaluate(write_json("gt.json", GT), write_json("p.json", preds))
    said = [w for w in r.warnings if "pycocotools" in w and "category" in w]
    assert len(said) == 1 and "9 prediction(s)" in said[0], r.warnings
