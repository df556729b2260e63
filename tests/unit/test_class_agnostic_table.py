"""``--class-agnostic``: the per-class table is one row for all classes.

Class-agnostic matching pairs a prediction with a ground truth of any
category, so counting true positives by the prediction's class and ground
truths by their own gives impossible rows (negative misses, recall above
1).  With categories ignored there is one class: every count and AP is of
that one.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate

from ..parity.synth import make_scene, run_pycocotools

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


def _gt(anns):
    return {
        "images": [{"id": 1}, {"id": 2}],
        "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
        "annotations": [
            {"id": i + 1, "image_id": im, "category_id": c, "bbox": b, "area": b[2] * b[3],
             "iscrowd": 0}
            for i, (im, c, b) in enumerate(anns)
        ],
    }  # fmt: skip


def test_a_cat_found_as_a_dog_is_one_true_positive(write_json):
    """Image 1: a cat [0,0,10,10] predicted as a dog; image 2: a dog missed, a stray cat box.

    Per class this used to read cat: gt 1, TP 0, FN 1 and dog: gt 1, TP 1,
    FP 1, FN 0.  Class-agnostic: 2 objects, 1 found, 1 false alarm.
    """
    gt = _gt([(1, 1, [0, 0, 10, 10]), (2, 2, [0, 0, 10, 10])])
    preds = [
        {"image_id": 1, "category_id": 2, "bbox": [0, 0, 10, 10], "score": 0.9},
        {"image_id": 2, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.8},
    ]
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds), class_agnostic=True)
    rows = r.classes.records()
    assert len(rows) == 1
    row = rows[0]
    assert row["class"] == "all classes" and row["category_id"] is None
    assert (row["gt"], row["predictions"], row["TP"], row["FP"], row["FN"]) == (2, 2, 1, 1, 1)
    assert (row["precision"], row["recall"], row["F1"]) == (0.5, 0.5, 0.5)
    assert row["AP"] == r.summary["AP"]
    assert "class-agnostic" in row["note"]


@pytest.mark.parametrize("seed", range(1200, 1206))
def test_counts_are_possible_and_add_up_to_the_images(seed, write_json):
    gt, preds = make_scene(seed)
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds), class_agnostic=True)
    (row,) = r.classes.records()
    img = r.images
    for col in ("gt", "predictions", "TP", "FP", "FN"):
        assert row[col] == int(np.sum(img[col])), col
    assert 0 <= row["TP"] <= row["gt"] and row["FN"] >= 0
    assert 0.0 <= row["recall"] <= 1.0 and 0.0 <= row["F1"] <= 1.0
    ref = run_pycocotools(gt, preds, useCats=0)
    assert row["AP"] == ref["stats"][0]
    assert row["AR100"] == ref["stats"][8]


@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
def test_voc_class_agnostic_row_holds_the_map(protocol, write_json):
    gt, preds = make_scene(1210)
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds), protocol=protocol,
                 class_agnostic=True)  # fmt: skip
    (row,) = r.classes.records()
    assert row["AP"] == r.summary["mAP"]
    assert 0 <= row["TP"] <= row["gt"] and row["FN"] >= 0


def test_bootstrap_per_class_replicates_have_the_one_row(write_json):
    gt, preds = make_scene(1211, n_images=20)
    r = evaluate(write_json("gt.json", gt), write_json("p.json", preds), class_agnostic=True,
                 bootstrap=5)  # fmt: skip
    assert r.primary.bootstrap.class_ap.shape == (5, len(r.classes["class"])) == (5, 1)
