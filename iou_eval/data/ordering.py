"""Stable orderings of large integer and score columns (pure numpy).

numpy sorts 16-bit integers with a radix sort, which beats comparison sorts
on millions of rows; these helpers reduce the orderings the evaluation
needs to such passes.
"""

from __future__ import annotations

import numpy as np


def radix_argsort(key: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative integers ``[N]``, 16 bits per pass.

    The order is carried as int32 when ``N`` fits (tens of millions of match
    records are sorted this way): half the memory of numpy's int64 indices.
    """
    order = np.arange(len(key), dtype=np.int32 if len(key) < 2**31 else np.int64)
    top = int(key.max()) if len(key) else 0
    shift = 0
    while True:
        digit = ((key[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
        if top >> shift == 0:
            return order


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """``[N + 1]`` int64 where each of ``N`` pieces of ``lengths[N]`` starts, back to back, and the end."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def run_bounds(values: np.ndarray) -> list[int]:
    """Where the runs of equal values of ``values[N]`` start, and ``N`` last (``[0, N]`` if empty)."""
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1], True]).tolist()


def score_rank(score: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense rank ``[N]`` of scores, highest first (equal scores share a rank), and the rank count.

    Sorting by rank is sorting by descending score; a rank computed once
    serves every later ordering of these rows or of a subset of them.
    """
    levels, rank = np.unique(-score, return_inverse=True)
    return rank, len(levels)


def group_score_order(
    group: np.ndarray, score: np.ndarray, rank: tuple[np.ndarray, int] | None = None
) -> np.ndarray:
    """Stable order ``[N]`` by group ascending, then score descending.

    Rows equal in both keep their input order, as a stable sort would keep
    them (pycocotools' mergesort does).  Scores are replaced by their dense
    rank, so one integer key sorts both; ``rank`` is :func:`score_rank` of
    ``score`` (or any order-preserving integer coding of it), when known.
    """
    if not len(group):
        return np.zeros(0, dtype=np.int64)
    r, n_levels = score_rank(score) if rank is None else rank
    key = group.astype(np.int64) * n_levels + r
    return radix_argsort(key)


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of ``values[N]``.

    As ``np.unique(values)``, which in numpy 2 imports ``numpy.ma`` (a
    noticeable part of a short run's start-up) to ask whether its input is masked.
    """
    s = np.sort(np.ravel(values))
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def dense_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values ``[U]`` of integers ``keys[N]``, and each key's index among them.

    Equal to ``np.unique(keys, return_inverse=True)``, without its sort when
    the values span a range not much wider than their count, as ids usually
    do: a presence table and its running count give both in two passes.
    """
    if not len(keys):
        return np.unique(keys, return_inverse=True)
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo + 1 > 4 * len(keys) + (1 << 16):
        return np.unique(keys, return_inverse=True)
    offset = keys - lo
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[offset] = True
    code = np.cumsum(seen, dtype=np.int64) - 1
    return (np.flatnonzero(seen) + lo).astype(keys.dtype), code[offset]


def narrow_index(index: np.ndarray) -> np.ndarray:
    """An integer index column as int32 when its values fit (half the memory), else as it is.

    Below 2**31 - 1, so that ``index + 1`` (a group's end) still fits.  Code
    that multiplies such a column (group keys) widens it to int64 first.
    """
    if index.dtype == np.int32 or (len(index) and int(index.max()) >= 2**31 - 1):
        return index
    if len(index) and int(index.min()) < -(2**31):
        return index
    return index.astype(np.int32)
