"""Per-category means of pycocotools' arrays computed for every category at once equal
``np.mean`` of each category's valid entries (numpy's pairwise sum) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.protocols.counts import _mean_valid, row_means


def _same(got, want):
    np.testing.assert_array_equal(np.asarray(got).view(np.int64), np.asarray(want).view(np.int64))


def _reference(rows):
    return np.array([_mean_valid(r) for r in rows])


# Row lengths around the pairwise sum's unrolling (8) and block (128) sizes, and
# pycocotools' 101 recall points times 1 or 10 thresholds.
LENGTHS = [1, 2, 7, 8, 9, 10, 16, 17, 101, 127, 128, 129, 130, 256, 257, 1010, 1011, 3001]


@pytest.mark.parametrize("n", LENGTHS)
def test_whole_rows_of_every_length_give_np_mean_of_each_row(n):
    rng = np.random.default_rng(n)
    rows = rng.random((int(rng.integers(1, 40)), n)) * 10.0 ** rng.integers(-6, 6, (1, n))
    _same(row_means(rows), _reference(rows))


@pytest.mark.parametrize("seed", range(20))
def test_rows_with_some_entries_at_minus_one_give_np_mean_of_the_rest(seed):
    """Each row keeps a random number of its entries (none, some, all); the means are
    those of the compressed rows, not of rows padded with zeros."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(1, 60)), int(rng.choice(LENGTHS))
    rows = np.round(rng.random((k, n)), int(rng.integers(1, 4)))
    keep = rng.random((k, 1)) * 1.2
    rows[rng.random((k, n)) > keep] = -1.0
    rows[0] = -1.0  # a category without ground truth
    _same(row_means(rows), _reference(rows))


def test_strided_rows_give_the_same_means_as_contiguous_ones():
    """A transposed view (pycocotools' recall[T, K] read by category) reads the same values."""
    rng = np.random.default_rng(3)
    recall = rng.random((10, 300))
    recall[:, ::7] = -1.0
    _same(row_means(recall.T), _reference(np.ascontiguousarray(recall.T)))


def test_no_rows_give_no_means():
    assert row_means(np.zeros((0, 5))).shape == (0,)
