"""LVIS's (image, category) pairs: list ids to category positions, and membership flags.

:func:`iou_eval.protocols.lvis._positions` looks integer ids up at once and
any other id one by one; both give the position a dict of the normalized
category ids gives.  :func:`_pair_flags` gives the same bits from one table
of flags as from a search of each sorted list.
"""

from __future__ import annotations

import numpy as np
import pytest

import iou_eval.protocols.lvis as lvis


def _by_dict(ids: list, categories: tuple) -> list[int]:
    pos = {lvis._norm(c): i for i, c in enumerate(categories)}
    return [pos.get(c, -1) for c in ids]


@pytest.mark.parametrize(
    ("ids", "categories"),
    [
        ([3, 1, 7, 3, -2, 0], (1, 3, 5)),  # integers: looked up at once
        ([3, 1, 7], (5, "3", 1)),  # a category id spelled as a string: normalized
        (["cat", 1], (1, "cat")),  # a string id in a list
        ([1, 2], (2, 1, 2)),  # two categories of the same id: the last one counts
        ([], (1, 2)),
        ([1, 2], ()),
        ([2**70, 1], (1, 2)),  # beyond int64
        ([5], ("x", "y")),
    ],
)
def test_list_ids_find_their_category_as_a_dict_finds_it(ids, categories):
    got = lvis._positions(ids, categories)
    assert got.dtype == np.int64
    assert got.tolist() == _by_dict(ids, categories)


def test_random_integer_ids_find_their_categories():
    rng = np.random.default_rng(0)
    categories = tuple(int(v) for v in rng.permutation(2000)[:1203])
    ids = [int(v) for v in rng.integers(-5, 2100, 5000)]
    assert lvis._positions(ids, categories).tolist() == _by_dict(ids, categories)


def test_pair_flags_from_one_table_equal_a_search_of_each_list(monkeypatch):
    rng = np.random.default_rng(1)
    n_pairs = 5000
    tables = (rng.integers(0, n_pairs, 800), rng.integers(0, n_pairs, 300))  # unsorted, repeats
    keys = rng.integers(0, n_pairs, 4000)
    dense = lvis._pair_flags(keys, tables, n_pairs)
    monkeypatch.setattr(lvis, "DENSE_PAIRS", 0)
    sparse = lvis._pair_flags(keys, tables, n_pairs)
    want = np.isin(keys, tables[0]).astype(np.uint8) | (
        np.isin(keys, tables[1]).astype(np.uint8) << 1
    )
    assert dense.tolist() == want.tolist() == sparse.tolist()


def test_pair_flags_of_no_key_or_empty_lists():
    empty = np.zeros(0, dtype=np.int64)
    assert lvis._pair_flags(empty, (np.array([1]),), 10).tolist() == []
    assert lvis._pair_flags(np.array([1, 2]), (empty, empty), 10).tolist() == [0, 0]
