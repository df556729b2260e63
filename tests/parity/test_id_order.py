"""Image and category order as pycocotools orders the ground truth's own ids.

pycocotools sorts ``imgIds`` and ``catIds`` as the file gives them: numbers
numerically, strings as text ("10" before "9").  Image order decides how
tied scores are ranked (per-image results are concatenated in ``imgIds``
order before the stable score sort); category order decides the order of
boxes inside an image when categories are ignored, and the order in which
per-category values are averaged.  Ids still join across files by value:
"2299" is image 2299.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.data.dataset import normalize_id
from iou_eval.data.reconcile import id_order

from .synth import make_scene, run_pycocotools
from .test_coco_parity import assert_same


def spelled_as_text(gt: dict, preds: list, images: bool = True, categories: bool = False):
    """The scene with image (and/or category) ids written as numeric strings everywhere."""
    gt, preds = copy.deepcopy(gt), copy.deepcopy(preds)
    if images:
        for im in gt["images"]:
            im["id"] = str(im["id"])
        for a in gt["annotations"] + preds:
            a["image_id"] = str(a["image_id"])
    if categories:
        for c in gt["categories"]:
            c["id"] = str(c["id"])
        for a in gt["annotations"] + preds:
            a["category_id"] = str(a["category_id"])
    return gt, preds


def text_order_differs(ids) -> bool:
    return sorted(ids) != sorted(ids, key=str)


@pytest.mark.parametrize("seed", range(1000, 1006))
def test_numeric_string_image_ids_are_ordered_as_text(seed, write_json):
    gt, preds = spelled_as_text(*make_scene(seed, tie_decimals=1))
    assert text_order_differs([int(im["id"]) for im in gt["images"]])
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    assert_same(ours, run_pycocotools(gt, preds, as_given=True), f"seed {seed}")


@pytest.mark.parametrize("seed", range(1010, 1014))
def test_numeric_string_category_ids_are_ordered_as_text(seed, write_json):
    gt, preds = spelled_as_text(*make_scene(seed, n_categories=12, tie_decimals=1), images=False,
                                categories=True)  # fmt: skip
    assert text_order_differs([int(c["id"]) for c in gt["categories"]])
    files = write_json("gt.json", gt), write_json("p.json", preds)
    assert_same(evaluate(*files), run_pycocotools(gt, preds, as_given=True), f"seed {seed}")
    agnostic = evaluate(*files, class_agnostic=True)
    ref = run_pycocotools(gt, preds, as_given=True, useCats=0)
    assert_same(agnostic, ref, f"seed {seed}, class-agnostic")


def test_string_ids_in_the_ground_truth_join_integer_predictions(write_json):
    """Predictions that spell the ids as numbers score as if they spelled them as text."""
    gt, preds = spelled_as_text(*make_scene(1020, tie_decimals=1))
    as_text = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    numbers = [{**p, "image_id": int(p["image_id"])} for p in preds]
    as_numbers = evaluate(write_json("gt.json", gt), write_json("p2.json", numbers))
    assert as_numbers.inputs["predictions"]["unknown_image_boxes"] == 0
    assert as_numbers.summary == as_text.summary
    assert np.array_equal(as_numbers.primary.arrays.precision, as_text.primary.arrays.precision)


def test_ids_are_reported_as_the_ground_truth_spells_them(write_json):
    gt, preds = spelled_as_text(*make_scene(1021, n_images=8), categories=True)
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    assert list(r.images["image_id"]) == sorted(im["id"] for im in gt["images"])
    assert list(r.classes["category_id"]) == sorted(c["id"] for c in gt["categories"])


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ([10, 9, 100], [9, 10, 100]),
        (["10", "9", "100"], ["10", "100", "9"]),
        (["b", "a10", "a9"], ["a10", "a9", "b"]),
        # A mix pycocotools cannot sort (it raises): numbers by value, then text.
        ([10, "9", "x", 2, "abc"], [2, "9", 10, "abc", "x"]),
        ([], []),
    ],
)
def test_id_order(ids, expected):
    assert [ids[i] for i in id_order(ids)] == expected


def test_mixed_ids_keep_the_documented_order(write_json):
    """Integers and strings in one ground truth: pycocotools cannot sort them; iou-eval can."""
    gt, preds = make_scene(1022, n_images=10)
    for im in gt["images"][::2]:
        im["id"] = str(im["id"])
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    shown = list(r.images["image_id"])
    assert sorted(shown, key=lambda k: normalize_id(k)) == shown
    assert {type(k) for k in shown} == {int, str}
