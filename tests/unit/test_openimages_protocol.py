"""``--protocol openimages`` on tiny hand-built scenes, with numbers worked out by hand.

Boxes are ``(xmin, xmax, ymin, ymax)`` fractions of the image, as the
challenge's CSV files give them.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.data.hierarchy import hierarchy_from_tree
from iou_eval.errors import InputError, UsageError

from ..parity.openimages_files import write_scene

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

CLASSES = ["/m/dog", "/m/cat", "/m/bird", "/m/animal"]
TREE = {
    "LabelName": "/m/0bl9f",
    "Subcategory": [
        {
            "LabelName": "/m/animal",
            "Subcategory": [{"LabelName": "/m/dog"}, {"LabelName": "/m/cat"}],
        },
        {"LabelName": "/m/bird"},
    ],
}


def run(tmp_path, boxes, labels, preds, tree=None, **options):
    gt, pred, opts = write_scene(tmp_path, boxes, labels, preds, CLASSES, tree)
    return evaluate(gt, pred, **opts, **options)


def row(result, name: str) -> dict:
    table = result.per_class
    return table[table["category_id"] == name].iloc[0].to_dict()


def test_group_of_box_counts_once_scored_by_its_highest_prediction(tmp_path):
    """One image, class dog::

        A = [0, .5] x [0, .5] (a box)      G = [.5, 1] x [0, 1] (group-of)
        p1 .9 = A          true positive
        p2 .8 = A          A taken: false positive (outside G)
        p3 .7, p4 .6 inside G: one hit of G at score .7; p4 ignored

    Entries .9 TP, .8 FP, .7 TP over 2 ground truths: precision 1, 1/2,
    2/3 at recall 1/2, 1/2, 1 -> AP = 1/2 * 1 + 1/2 * 2/3 = 5/6.
    """
    boxes = [("img", "/m/dog", 0.0, 0.5, 0.0, 0.5, 0), ("img", "/m/dog", 0.5, 1.0, 0.0, 1.0, 1)]
    preds = [
        ("img", "/m/dog", 0.9, 0.0, 0.5, 0.0, 0.5),
        ("img", "/m/dog", 0.8, 0.0, 0.5, 0.0, 0.5),
        ("img", "/m/dog", 0.7, 0.6, 0.7, 0.1, 0.2),
        ("img", "/m/dog", 0.6, 0.8, 0.9, 0.5, 0.6),
    ]
    r = run(tmp_path, boxes, [("img", "/m/dog", 1)], preds)
    dog = row(r, "/m/dog")
    assert dog["AP"] == pytest.approx(5 / 6, abs=1e-15)
    assert (dog["gt"], dog["TP"], dog["FP"], dog["FN"]) == (2, 2, 1, 0)
    image = r.per_image.iloc[0].to_dict()
    assert (image["TP"], image["FP"], image["ignored"]) == (2, 1, 1)
    assert r.summary["mAP"] == pytest.approx(5 / 6, abs=1e-15)


def test_unverified_class_left_out_negative_label_verifies_a_class_without_ground_truth(tmp_path):
    """A dog box found (AP 1); a cat prediction where cat is verified absent is a false
    positive of a class without ground truth (AP null, not in the mAP); a bird prediction
    where bird is not verified is left out."""
    boxes = [("img", "/m/dog", 0.1, 0.4, 0.1, 0.4, 0)]
    labels = [("img", "/m/dog", 1), ("img", "/m/cat", 0)]
    preds = [
        ("img", "/m/dog", 0.9, 0.1, 0.4, 0.1, 0.4),
        ("img", "/m/cat", 0.8, 0.5, 0.9, 0.5, 0.9),
        ("img", "/m/bird", 0.7, 0.5, 0.9, 0.5, 0.9),
    ]
    r = run(tmp_path, boxes, labels, preds)
    # The summary holds each class of the list: Dog scored, Bird and Cat without ground truth.
    assert r.summary == {"mAP": 1.0, "AP[Bird]": None, "AP[Cat]": None, "AP[Dog]": 1.0}
    cat, bird = row(r, "/m/cat"), row(r, "/m/bird")
    assert cat["AP"] is None or np.isnan(cat["AP"])
    assert (cat["predictions"], cat["FP"]) == (1, 1)
    assert (bird["predictions"], bird["FP"]) == (0, 0)
    assert any("1 prediction(s) of classes neither verified nor boxed" in w for w in r.warnings)
    doc = r.to_dict()
    assert {c["category_id"]: c["AP"] for c in doc["per_class"]}["/m/cat"] is None


def test_hierarchy_expands_boxes_up_and_negative_labels_down(tmp_path):
    """img1: a dog box; predictions animal .9 and dog .8 on it.  img2: no box, animal
    verified absent; a dog prediction .95 there.

    With the hierarchy the dog box is an animal box too (animal AP 1), and
    "no animal" means "no dog": the dog prediction on img2 is a false positive
    ranked first (dog: FP .95, TP .8 -> AP 1/2).  mAP = 3/4.  Without it,
    animal has no box, img1 does not verify animal (its prediction is left
    out), img2 does not verify dog: dog AP 1, mAP 1.
    """
    boxes = [("img1", "/m/dog", 0.2, 0.6, 0.2, 0.6, 0)]
    labels = [("img1", "/m/dog", 1), ("img2", "/m/animal", 0)]
    preds = [
        ("img1", "/m/animal", 0.9, 0.2, 0.6, 0.2, 0.6),
        ("img1", "/m/dog", 0.8, 0.2, 0.6, 0.2, 0.6),
        ("img2", "/m/dog", 0.95, 0.1, 0.3, 0.1, 0.3),
    ]
    expanded = run(tmp_path, boxes, labels, preds, TREE)
    assert row(expanded, "/m/animal")["AP"] == 1.0
    assert row(expanded, "/m/dog")["AP"] == 0.5
    assert expanded.summary["mAP"] == 0.75
    assert expanded.inputs["ground_truth"]["images"] == 2  # img2 has labels only
    plain = run(tmp_path, boxes, labels, preds)
    assert row(plain, "/m/dog")["AP"] == 1.0
    assert plain.summary["mAP"] == 1.0


def test_a_prediction_whose_best_box_is_taken_is_a_false_positive(tmp_path):
    """A = [0, .5], B = [.1, .6] (full height).  p1 .9 = A: TP.  p2 .8 = [.04, .54] overlaps
    A most (IoU .852; B .786): A is taken, so p2 is a false positive even though B
    is free.  AP = 1/2 * 1 = 1/2."""
    boxes = [("img", "/m/dog", 0.0, 0.5, 0.0, 1.0, 0), ("img", "/m/dog", 0.1, 0.6, 0.0, 1.0, 0)]
    preds = [
        ("img", "/m/dog", 0.9, 0.0, 0.5, 0.0, 1.0),
        ("img", "/m/dog", 0.8, 0.04, 0.54, 0.0, 1.0),
    ]
    r = run(tmp_path, boxes, [], preds)
    assert row(r, "/m/dog")["AP"] == 0.5


def test_tied_scores_in_the_order_the_api_sorts_them(tmp_path):
    """A = [0, 1] x [0, .5]; G = [0, 1] x [.2, 1] (group-of).  Two predictions scored .5:
    p1 = [0, 1] x [0, .3] (IoU with A .6, inside G .33) and p2 = [0, 1] x [.2, .5]
    (IoU .6, inside G 1), in that file order.

    The API orders them ``np.argsort([.5, .5])[::-1]``: [p2, p1] where that
    sort keeps equal values in place.  p2 takes A, p1 (not inside G) is a
    false positive, G is missed; the class's entries (.5 TP, .5 FP) are sorted
    the same way again: FP first, AP = 1/2 * 1/2 = 1/4.  Were p1 first (a
    stable descending sort), p2 would fall inside G: AP 1.
    """
    boxes = [("img", "/m/dog", 0.0, 1.0, 0.0, 0.5, 0), ("img", "/m/dog", 0.0, 1.0, 0.2, 1.0, 1)]
    preds = [("img", "/m/dog", 0.5, 0.0, 1.0, 0.0, 0.3), ("img", "/m/dog", 0.5, 0.0, 1.0, 0.2, 0.5)]
    r = run(tmp_path, boxes, [], preds)
    in_place = np.argsort(np.array([0.5, 0.5])).tolist() == [0, 1]
    assert row(r, "/m/dog")["AP"] == (0.25 if in_place else 1.0)


def test_class_with_ground_truth_and_no_prediction_counts_zero(tmp_path):
    boxes = [("img", "/m/dog", 0.1, 0.4, 0.1, 0.4, 0), ("img", "/m/bird", 0.5, 0.9, 0.5, 0.9, 0)]
    preds = [("img", "/m/dog", 0.9, 0.1, 0.4, 0.1, 0.4)]
    r = run(tmp_path, boxes, [], preds)
    assert row(r, "/m/bird")["AP"] == 0.0
    assert r.summary["mAP"] == 0.5


def test_group_of_box_scored_zero_is_missed_and_low_scores_left_out(tmp_path):
    """A group-of box with one prediction inside at score 0: the API's box score starts at 0,
    so it is no hit (AP 0, the prediction ignored).  A prediction at -11 is dropped."""
    boxes = [("img", "/m/dog", 0.0, 1.0, 0.0, 1.0, 1)]
    preds = [
        ("img", "/m/dog", 0.0, 0.1, 0.2, 0.1, 0.2),
        ("img", "/m/dog", -11.0, 0.3, 0.4, 0.3, 0.4),
    ]
    r = run(tmp_path, boxes, [], preds)
    dog = row(r, "/m/dog")
    assert (dog["AP"], dog["TP"], dog["FP"], dog["predictions"]) == (0.0, 0, 0, 1)
    assert any("scored -10 or lower" in w for w in r.warnings)


def test_no_prediction_no_ground_truth_gives_null_map(tmp_path):
    r = run(tmp_path, [], [("img", "/m/dog", 0)], [("img", "/m/dog", 0.5, 0.1, 0.2, 0.1, 0.2)])
    assert r.summary["mAP"] is None
    assert r.to_dict()["summary"]["mAP"] is None


def test_hierarchy_walk_keeps_repeats_as_the_script_does():
    tree = {
        "LabelName": "/m/root",
        "Subcategory": [
            {"LabelName": "/m/a", "Subcategory": [{"LabelName": "/m/x"}]},
            {"LabelName": "/m/b", "Subcategory": [{"LabelName": "/m/x"}]},
        ],
    }
    h = hierarchy_from_tree(tree, "h.json")
    assert h.ancestors["/m/x"] == ("/m/a", "/m/b")
    assert h.descendants["/m/a"] == ("/m/x",)
    assert "/m/root" not in h.ancestors


@pytest.mark.parametrize(
    "tree, where",
    [
        ([], "$"),
        ({"LabelName": "/m/r", "Subcategory": [{"Label": "x"}]}, "$.Subcategory[0]"),
        ({"LabelName": "/m/r", "Subcategory": {"LabelName": "/m/a"}}, "$"),
    ],
)
def test_malformed_hierarchy_is_an_error_naming_the_node(tree, where):
    with pytest.raises(InputError) as e:
        hierarchy_from_tree(tree, "h.json")
    assert e.value.where == where and "h.json" in str(e.value)


def test_class_missing_from_the_hierarchy_is_an_error_naming_the_line(tmp_path):
    boxes = [("img", "/m/dog", 0.1, 0.4, 0.1, 0.4, 0), ("img", "/m/fish", 0.5, 0.9, 0.5, 0.9, 0)]
    with pytest.raises(InputError) as e:
        run(tmp_path, boxes, [], [], TREE)
    assert str(e.value).startswith(f"{tmp_path / 'validation-annotations-bbox.csv'}:3:")
    assert "/m/fish" in str(e.value)


def test_bad_confidence_is_an_error_naming_the_line(tmp_path):
    with pytest.raises(InputError) as e:
        run(tmp_path, [], [("img", "/m/dog", 1), ("img", "/m/dog", 2)], [])
    assert (
        ":3:" in str(e.value) and "expected Confidence 1" in str(e.value) and "'2'" in str(e.value)
    )


def test_options_of_the_protocol_are_refused_without_it(tmp_path):
    gt, pred, _ = write_scene(tmp_path, [("img", "/m/dog", 0.1, 0.4, 0.1, 0.4, 0)], [], [], CLASSES)
    with pytest.raises(UsageError, match="--oi-hierarchy apply to --protocol openimages"):
        evaluate(gt, pred, oi_hierarchy="h.json")
    with pytest.raises(UsageError, match="--class-agnostic does not apply"):
        evaluate(gt, pred, protocol="openimages", class_agnostic=True)


def test_unknown_group_of_flag_is_noted(tmp_path):
    gt, pred, _ = write_scene(
        tmp_path, [("img", "/m/dog", 0.1, 0.4, 0.1, 0.4, -1)], [], [], CLASSES
    )
    r = evaluate(gt, pred, protocol="openimages")
    assert any("1 box(es) have IsGroupOf -1 (unknown)" in w for w in r.warnings)
