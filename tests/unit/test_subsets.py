"""Id lists, slices files, selecting an alignment, and the ground truth's own image order."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval.api import load
from iou_eval.data.reconcile import align
from iou_eval.data.subsets import select, slice_weights, slices_from_pairs
from iou_eval.errors import InputError, UsageError
from iou_eval.io.option_files import id_tuple, read_id_list, read_slices, resolve
from iou_eval.options import AnalysisOptions, EvalOptions

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

SCENE = {
    "images": [
        {"id": 30, "width": 100, "height": 100, "file_name": "c.jpg"},
        {"id": 10, "width": 100, "height": 100, "file_name": "a.jpg"},
        {"id": 20, "width": 100, "height": 100, "file_name": "b.jpg"},
    ],
    "annotations": [
        {"id": i + 1, "image_id": img, "category_id": cat, "bbox": [i, i, 10, 10], "area": 100,
         "iscrowd": 0}
        for i, (img, cat) in enumerate([(10, 7), (20, 5), (30, 7), (30, 9)])
    ],
    "categories": [{"id": 9, "name": "z"}, {"id": 5, "name": "x"}, {"id": 7, "name": "y"}],
}  # fmt: skip
PREDS = [
    {"image_id": 30, "category_id": 9, "bbox": [3, 3, 10, 10], "score": 0.9},
    {"image_id": 10, "category_id": 7, "bbox": [0, 0, 10, 10], "score": 0.8},
    {"image_id": 20, "category_id": 4, "bbox": [1, 1, 10, 10], "score": 0.7},
]


@pytest.fixture
def aligned(write_json):
    return align(load(write_json("g.json", SCENE), "gt"), load(write_json("p.json", PREDS), "pred"))


def test_the_ground_truths_own_image_order_is_kept(aligned):
    """Images are scored in id order; the file listed 30, 10, 20."""
    assert aligned.gt.images.ids == (10, 20, 30)
    assert aligned.image_rank.tolist() == [1, 2, 0]


def test_id_lists_from_text_and_files(tmp_path):
    assert read_id_list("1, 2,abc,2", "--img-ids") == (1, 2, "abc")
    f = tmp_path / "ids.txt"
    f.write_text("\ufeff# chosen\n12\n\n 7 # why\nx.jpg\n")
    assert read_id_list(f"@{f}", "--img-ids") == (12, 7, "x.jpg")
    with pytest.raises(UsageError, match="expected at least one id"):
        read_id_list(" , ", "--cat-ids")
    assert id_tuple([3, "4"], "--img-ids") == (3, 4)
    assert resolve(EvalOptions.of(cat_ids="5,x")).analysis.cat_ids == (5, "x")
    assert resolve(EvalOptions(analysis=AnalysisOptions(img_ids=[3, "4"]))).analysis.img_ids == (
        3,
        4,
    )


def test_select_keeps_the_named_images_and_categories_in_order(aligned):
    sel, warnings = select(aligned, ("a.jpg", 30, 99), (7, "z", "nope"))
    assert warnings[0].startswith("--img-ids: 1 id(s)") and "99" in warnings[0]
    assert "'nope'" in warnings[1]
    assert sel.gt.images.ids == (10, 30)
    assert sel.gt.categories.ids == (7, 9) and sel.n_categories == 2
    # The file's category order (9, 5, 7) among the kept: 9, then 7.
    assert [sel.gt.categories.ids[i] for i in sel.class_order] == [9, 7]
    assert sel.image_rank.tolist() == [1, 0]
    rows = sorted(
        (sel.gt.images.ids[i], sel.gt.categories.ids[c])
        for i, c in zip(sel.gt.image_idx.tolist(), sel.gt.category_idx.tolist(), strict=True)
    )
    assert rows == [(10, 7), (30, 7), (30, 9)]
    assert len(sel.pred) == 2 and sel.pred.scores.tolist() == [0.9, 0.8]


def test_prediction_only_categories_can_be_selected(aligned):
    sel, _ = select(aligned, None, (5, 4))
    assert sel.gt.categories.ids == (5, 4) and sel.n_categories == 1
    assert len(sel.pred) == 1 and sel.pred.category_idx.tolist() == [1]


def test_nothing_selected_is_a_usage_error(aligned):
    with pytest.raises(UsageError, match="--img-ids: none of 1, 2"):
        select(aligned, (1, 2), None)
    with pytest.raises(UsageError, match="--cat-ids: none of"):
        select(aligned, None, ("q",))


def test_no_selection_is_the_alignment_itself(aligned):
    assert select(aligned, None, None) == (aligned, [])


def test_slices_files(tmp_path):
    csv = tmp_path / "s.csv"
    csv.write_text("slice,image_id\nnight,10\nnight,10\nday,20\nnight,c.jpg\n")
    s = read_slices(str(csv))
    assert s.names == ("night", "day") and s.members == ((10, "c.jpg"), (20,))
    js = tmp_path / "s.json"
    js.write_text(json.dumps({"10": ["night", "rain"], "20": "day"}))
    s = read_slices(str(js))
    assert s.names == ("night", "rain", "day") and s.members == ((10,), (10,), (20,))
    empty = tmp_path / "e.csv"
    empty.write_text("image_id,slice\n\n")
    with pytest.raises(InputError, match="no slices"):
        read_slices(str(empty))


def test_slice_weights_mark_each_slices_images(aligned):
    s = slices_from_pairs([(10, "a"), ("c.jpg", "a"), (20, "b"), (77, "b")], "s.csv")
    w, warnings = slice_weights(aligned, s)
    assert w.tolist() == [[1, 0, 1], [0, 1, 0]]
    assert warnings == [
        "s.csv: 1 image id(s) are not among the scored images (77); left out of their slices"
    ]
    assert np.issubdtype(w.dtype, np.integer)
