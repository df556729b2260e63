"""Radix-based orderings equal numpy's stable sorts."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.ordering import group_score_order, radix_argsort


@pytest.mark.parametrize("seed", range(5))
def test_radix_argsort_is_a_stable_sort(seed):
    rng = np.random.default_rng(seed)
    key = rng.integers(0, [10, 70_000, 2**40, 1, 300][seed], size=5_000)
    assert np.array_equal(radix_argsort(key), np.argsort(key, kind="stable"))


@pytest.mark.parametrize("seed", range(5))
def test_group_score_order_equals_lexsort_with_ties(seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 50, size=4_000)
    score = np.round(rng.random(4_000), 1)  # many ties
    score[:10] = -0.0
    score[10:20] = 0.0
    assert np.array_equal(group_score_order(group, score), np.lexsort((-score, group)))


def test_empty_input():
    assert len(group_score_order(np.zeros(0, np.int64), np.zeros(0))) == 0
