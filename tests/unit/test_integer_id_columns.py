"""Integer ids handled as whole columns give what the per-id rules give.

The common case (every image id a Python int) joins prediction images to
ground-truth images with one sort; whatever that join leaves (an id no image
has, a file name, a string, a repeated id, an id beyond 64 bits) goes through
:class:`~iou_eval.data.reconcile.ImageMatcher` as before.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.columns import Columns
from iou_eval.data.dataset import ImageTable, integer_ids
from iou_eval.data.reconcile import ImageMatcher, image_map


def _one_by_one(gt: ImageTable, pred: ImageTable, key_is_name: bool):
    """The per-image rule every prediction image went through before: the reference."""
    matcher = ImageMatcher(gt)
    out, how = [], {"id": 0, "file name": 0, "file stem": 0}
    for key, name in zip(pred.ids, pred.file_names, strict=True):
        j, h = matcher.find(key, name, key_is_name)
        out.append(j)
        if h:
            how[h] += 1
    return out, how, matcher.ambiguous


@pytest.mark.parametrize(
    "ids, expected",
    [
        ((3, 1, 2), [3, 1, 2]),
        ((-(2**63), 2**63 - 1), [-(2**63), 2**63 - 1]),
        ((1, 2**64), None),  # beyond 64 bits
        ((1, "2"), None),  # a string
        ((1, True), None),  # a boolean is no id
        ((1, 2.0), None),  # a float
        ((np.int64(1), 2), None),  # a numpy scalar
        ((), None),
    ],
)
def test_integer_ids_only_for_python_ints_within_64_bits(ids, expected):
    got = integer_ids(ids)
    if expected is None:
        assert got is None
    else:
        assert got is not None and got.dtype == np.int64 and got.tolist() == expected


GT = ImageTable.build((30, 10, 20, 40), ("a.jpg", "b.jpg", "7.jpg", None))


@pytest.mark.parametrize(
    "pred, key_is_name",
    [
        # Every id known: all joined by id.
        (ImageTable.build((20, 10, 30, 40, 10)), False),
        # An id no image has, as a COCO image_id (an integer never names a file).
        (ImageTable.build((20, 99)), False),
        # An id no image has, where a key may be a name: 7 is the stem of 7.jpg.
        (ImageTable.build((7, 10)), True),
        # A file name wins over the id: the whole-column join steps aside.
        (ImageTable.build((10, 20), ("a.jpg", None)), True),
        # A string id: the per-id rules.
        (ImageTable.build(("20", 10)), True),
        # An id beyond 64 bits: the per-id rules.
        (ImageTable.build((2**70, 30)), False),
        (ImageTable.build(()), True),
    ],
)
def test_image_map_joins_as_the_per_image_rules(pred, key_is_name):
    ambiguous: dict = {}
    got, how = image_map(GT, pred, key_is_name, ambiguous)
    want, want_how, want_ambiguous = _one_by_one(GT, pred, key_is_name)
    assert got.dtype == np.int64
    assert got.tolist() == want
    assert how == want_how
    assert ambiguous == want_ambiguous


def test_image_map_with_a_repeated_ground_truth_id_keeps_the_matchers_choice():
    gt = ImageTable.build((5, 6, 5))
    pred = ImageTable.build((5, 6))
    got, how = image_map(gt, pred, False)
    want, want_how, _ = _one_by_one(gt, pred, False)
    assert got.tolist() == want and how == want_how


def test_columns_records_pass_ids_and_names_through_and_clean_the_rest():
    cols = Columns(
        {
            "image_id": (3, "x", None),
            "flag": (True, np.bool_(False), 1),
            "n": (np.int64(2), 1, 0),
            "v": [1.5, float("nan"), float("inf")],
        }
    )
    rows = cols.records()
    assert rows == [
        {"image_id": 3, "flag": True, "n": 2, "v": 1.5},
        {"image_id": "x", "flag": False, "n": 1, "v": None},
        {"image_id": None, "flag": 1, "n": 0, "v": None},
    ]
    assert [type(r["flag"]) for r in rows] == [bool, bool, int]
    assert type(rows[0]["n"]) is int


def test_columns_take_picks_list_and_array_rows_in_order():
    cols = Columns({"id": (5, 6, 7), "score": np.array([0.5, 0.6, 0.7])})
    taken = cols.take(np.array([2, 0]))
    assert taken["id"] == [7, 5]
    assert taken["score"].tolist() == [0.7, 0.5]


def test_float_array_columns_give_none_for_nan_and_inf_and_floats_as_they_are():
    finite = Columns({"v": np.array([0.25, 1e300, -0.0])}).records()
    assert finite == [{"v": 0.25}, {"v": 1e300}, {"v": -0.0}]
    assert all(type(r["v"]) is float for r in finite)
    mixed = Columns({"v": np.array([0.5, np.nan, np.inf, -np.inf])}).records()
    assert [r["v"] for r in mixed] == [0.5, None, None, None]
