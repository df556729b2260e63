"""Open Images ids held as codes into their distinct texts, and the id rules' short cuts."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, ImageTable, assemble, normalize_id
from iou_eval.data.hierarchy import hierarchy_from_tree
from iou_eval.data.image_labels import ImageLabels, expand_labels, text_codes, with_label_images
from iou_eval.data.reconcile import _base, _stem, value_order
from iou_eval.errors import InputError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("000026e7ee790996", "000026e7ee790996"),  # a hex id: text
        ("0123456789012345", 123456789012345),  # a hex id of digits only: a number
        ("Ⅻ", "Ⅻ"),  # a numeric letter, not a digit: text
        ("١٠", "١٠"),  # digits, not ASCII: text
        (" 12 ", 12),
        ("+5", 5),
        ("a b", "a b"),
    ],
)
def test_letters_and_digits_id_normalized_as_the_full_rules_say(value, expected):
    got = normalize_id(value)
    assert got == expected and type(got) is type(expected)


def test_text_ids_ordered_as_text_and_numeric_ids_first():
    assert value_order(["b", "a", "c"]) == [1, 0, 2]
    assert value_order(["b", "10", "9", "a"]) == [2, 1, 3, 0]


@pytest.mark.parametrize(
    ("name", "base", "stem"),
    [("abc", "abc", "abc"), ("d/b.jpg", "b.jpg", "b"), (".hidden", ".hidden", ".hidden"),
     ("a.b.png", "a.b.png", "a.b"), ("d/", "", "")],
)  # fmt: skip
def test_plain_name_is_its_own_base_and_stem(name, base, stem):
    assert (_base(name), _stem(name)) == (base, stem)


def _labels(images, labels, positive):
    n = len(images)
    return ImageLabels.of_texts(
        "labels.csv", images, labels, np.array(positive, dtype=bool), np.arange(2, n + 2)
    )


def test_labels_hold_each_distinct_id_once_in_order_of_appearance():
    lab = _labels(["b", "a", "b"], ["/m/x", "/m/x", "/m/y"], [1, 0, 1])
    assert lab.image_values == ("b", "a") and lab.image_codes.tolist() == [0, 1, 0]
    assert lab.label_values == ("/m/x", "/m/y") and lab.label_codes.tolist() == [0, 0, 1]
    assert lab.image_ids.tolist() == ["b", "a", "b"] and lab.image_ids.dtype == object
    assert lab.label_ids.tolist() == ["/m/x", "/m/x", "/m/y"]
    assert text_codes([])[0].dtype == np.int64 and len(_labels([], [], [])) == 0


_TREE = {
    "LabelName": "/m/root",
    "Subcategory": [{"LabelName": "/m/a", "Subcategory": [{"LabelName": "/m/b"}]}],
}


def test_expanded_labels_keep_their_images_and_lines():
    h = hierarchy_from_tree(_TREE, "h.json")
    lab = expand_labels(_labels(["i1", "i2"], ["/m/b", "/m/a"], [1, 0]), h)
    assert lab.image_ids.tolist() == ["i1", "i1", "i2", "i2"]
    assert lab.label_ids.tolist() == ["/m/b", "/m/a", "/m/a", "/m/b"]
    assert lab.positive.tolist() == [True, True, False, False]
    assert lab.lines.tolist() == [2, 2, 3, 3]


def test_label_missing_from_the_hierarchy_names_its_line():
    h = hierarchy_from_tree(_TREE, "h.json")
    with pytest.raises(InputError) as exc:
        expand_labels(_labels(["i1", "i2"], ["/m/a", "/m/zz"], [1, 1]), h)
    assert "'/m/zz' is not in the hierarchy h.json" in str(exc.value)
    assert str(exc.value.where) == "3"


def test_images_only_the_labels_name_are_added_in_the_order_of_their_ids():
    gt = assemble(
        source="gt.csv",
        fmt="openimages",
        images=ImageTable.build(["m"], None, np.ones(1), np.ones(1)),
        categories=CategoryTable(("/m/a",), ("a",)),
        image_idx=np.zeros(1, dtype=np.int64),
        category_idx=np.zeros(1, dtype=np.int64),
        boxes=np.array([[0.1, 0.1, 0.5, 0.5]]),
        box_format=BoxFormat.XYXY,
        normalized=True,
    )
    out = with_label_images(gt, _labels(["z", "m", "c", "z"], ["/m/a"] * 4, [1, 1, 1, 0]))
    assert out.images.ids == ("m", "c", "z")
    assert out.images.width.tolist() == [1.0, 1.0, 1.0]
    assert out.xyxy.tolist() == [[0.1, 0.1, 0.5, 0.5]]


def test_fractions_of_unit_images_are_their_own_pixels():
    boxes = np.array([[0.1, 0.2, 0.3, 0.7], [-0.0, 0.0, 1e-300, 1.0]])

    def read(normalized: bool, width: float):
        return assemble(
            source="gt.csv",
            fmt="openimages",
            images=ImageTable.build(["m"], None, np.full(1, width), np.ones(1)),
            categories=CategoryTable(("/m/a",), ("a",)),
            image_idx=np.zeros(2, dtype=np.int64),
            category_idx=np.zeros(2, dtype=np.int64),
            boxes=boxes,
            box_format=BoxFormat.XYXY,
            normalized=normalized,
        )

    unit, plain, wide = read(True, 1.0), read(False, 1.0), read(True, 2.0)
    assert unit.xyxy.tobytes() == plain.xyxy.tobytes() == boxes.tobytes()
    assert unit.bbox_area.tobytes() == plain.bbox_area.tobytes()
    assert unit.fraction_boxes is None
    assert wide.xyxy[:, 0].tolist() == [0.2, -0.0]


@pytest.mark.parametrize(
    ("box", "bad"),
    [([0.5, 0.1, 0.4, 0.2], True), ([0.1, 0.5, 0.2, 0.4], True), ([-0.0, 0.0, 0.0, -0.0], False),
     ([0.1, 0.1, 0.1, 0.1], False), ([5e-324, 0, 0, 0], True)],
)  # fmt: skip
def test_corner_boxes_refused_exactly_where_a_corner_comes_first(box, bad):
    def read():
        return assemble(
            source="gt.csv",
            fmt="openimages",
            images=ImageTable.build(["m"], None, np.ones(1), np.ones(1)),
            categories=CategoryTable(("/m/a",), ("a",)),
            image_idx=np.zeros(2, dtype=np.int64),
            category_idx=np.zeros(2, dtype=np.int64),
            boxes=np.array([[0.0, 0.0, 1.0, 1.0], box]),
            box_format=BoxFormat.XYXY,
            origin=np.array([2, 3]),
        )

    if not bad:
        assert len(read()) == 2
        return
    with pytest.raises(InputError, match="x2 < x1 or y2 < y1") as exc:
        read()
    assert str(exc.value.where) == "3"
