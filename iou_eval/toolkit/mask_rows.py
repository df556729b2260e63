"""COCO run-length encoding read in numpy, and pixel counts of mask pairs.

A COCO RLE ``{"size": [H, W], "counts": ...}`` lists alternating runs of 0s
and 1s (starting with 0s) over the pixels in column-major order.  Compressed
counts are pycocotools' ``rleToString`` text: each count in 5-bit groups
(``chr(48 + group)``, bit 0x20 = more groups follow, bit 0x10 of the last
group = negative), counts from the third on stored as the difference to the
count two places before.  Decoded here without pycocotools, which the
package does not import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iou_eval.errors import ArgumentError

# Pixels per step of the pairwise counts: (N + M) * chunk float32 values at a
# time, and float32 sums of 0/1 stay exact below 2**24 per step.
PAIR_BUDGET = 1 << 26
MAX_CHUNK = 1 << 22


def decode_counts(text: str | bytes, where: str) -> np.ndarray:
    """Compressed COCO counts -> run lengths ``[R]`` int64 (pycocotools' ``rleFrString``)."""
    raw = text.encode("ascii") if isinstance(text, str) else bytes(text)
    c = np.frombuffer(raw, dtype=np.uint8).astype(np.int64) - 48
    if len(c) == 0:
        return np.zeros(0, dtype=np.int64)
    if c.min() < 0 or c.max() > 63:
        raise ArgumentError(f"{where}: counts is not a COCO compressed RLE string")
    more = (c & 0x20) != 0
    if more[-1]:
        raise ArgumentError(f"{where}: counts ends in the middle of a number")
    last = np.flatnonzero(~more)  # the last 5-bit group of each count
    first = np.concatenate(([0], last[:-1] + 1))
    k = np.arange(len(c)) - np.repeat(first, last - first + 1)
    values = np.add.reduceat((c & 0x1F) << (5 * k), first)
    # Sign extension: the top bit (0x10) of a count's last group.
    negative = (c[last] & 0x10) != 0
    values[negative] -= np.int64(1) << (5 * (k[last][negative] + 1))
    # From the third count on, each is stored as the difference to the count
    # two places before: a running sum over every other count from there.
    values[3::2] = np.cumsum(values[1::2])[1:]
    values[2::2] = np.cumsum(values[2::2])
    return values


def _rle_row(obj: dict, where: str) -> tuple[np.ndarray, tuple[int, int]]:
    """One RLE dict -> its pixels ``[H * W]`` bool (column-major) and ``(H, W)``."""
    size, counts = obj.get("size"), obj.get("counts")
    if not isinstance(size, (list, tuple)) or len(size) != 2 or counts is None:
        raise ArgumentError(f"{where}: an RLE is {{'size': [H, W], 'counts': ...}}")
    try:
        h, w = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ArgumentError(
            f"{where}: RLE size must be two integers [H, W], got {size!r}"
        ) from None
    if isinstance(counts, (str, bytes)):
        runs = decode_counts(counts, where)
    else:
        runs = np.asarray(counts, dtype=np.int64).reshape(-1)
    if (runs < 0).any():
        raise ArgumentError(f"{where}: RLE counts must not be negative")
    if int(runs.sum()) != h * w:
        raise ArgumentError(
            f"{where}: RLE counts cover {int(runs.sum())} pixels, size {h}x{w} has {h * w}"
        )
    on = (np.arange(len(runs)) % 2).astype(bool)  # runs alternate 0s, 1s, 0s, ...
    return np.repeat(on, runs), (h, w)


def _binary_rows(arr: np.ndarray, name: str) -> tuple[np.ndarray, tuple[int, int], bool]:
    """Binary masks ``[H, W]`` / ``[N, H, W]`` -> ``[N, H * W]`` bool in column-major order."""
    single = arr.ndim == 2
    stack = arr[None] if single else arr
    if stack.ndim != 3:
        raise ArgumentError(
            f"{name}: expected a mask [H, W], masks [N, H, W] or COCO RLE, "
            f"got an array of shape {list(arr.shape)}"
        )
    if stack.dtype != bool:
        n, h, w = stack.shape  # (no -1 in the shape: an empty stack has no size to infer)
        bad = ~((stack == 0) | (stack == 1)).reshape(n, h * w).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ArgumentError(f"{name}[{i}]: a binary mask holds only 0 and 1 (or bool)")
    n, h, w = stack.shape
    # RLE runs go down the columns first: the same pixel order for both kinds.
    return stack.astype(bool).transpose(0, 2, 1).reshape(n, h * w), (h, w), single


def mask_rows(x: Any, name: str) -> tuple[np.ndarray, tuple[int, int] | None, bool]:
    """Masks or RLEs -> ``(rows[N, H * W] bool, (H, W) or None when N = 0, single)``."""
    if isinstance(x, dict):
        row, size = _rle_row(x, f"{name}[0]")
        return row[None], size, True
    if isinstance(x, (list, tuple)) and (len(x) == 0 or isinstance(x[0], dict)):
        rows: list[np.ndarray] = []
        sizes: set[tuple[int, int]] = set()
        for i, obj in enumerate(x):
            if not isinstance(obj, dict):
                raise ArgumentError(f"{name}[{i}]: expected an RLE dict like the others")
            row, size = _rle_row(obj, f"{name}[{i}]")
            if sizes and size not in sizes:
                (first,) = sizes
                raise ArgumentError(
                    f"{name}[{i}]: size {size[0]}x{size[1]}, the first is {first[0]}x{first[1]}"
                )
            sizes.add(size)
            rows.append(row)
        if not rows:
            return np.zeros((0, 0), dtype=bool), None, False
        return np.stack(rows), sizes.pop(), False
    return _binary_rows(np.asarray(x), name)


def pair_counts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixels set in both, ``[N, M]`` float64, for rows ``a[N, P]`` and ``b[M, P]`` bool.

    A matrix product of 0/1 float32 blocks of columns: exact (each block's
    sums stay below 2**24) and BLAS-fast, with memory bounded by the block.
    """
    n, m = len(a), len(b)
    out = np.zeros((n, m), dtype=np.float64)
    if n == 0 or m == 0:
        return out
    pixels = a.shape[1]
    chunk = int(min(MAX_CHUNK, max(1024, PAIR_BUDGET // (n + m))))
    for start in range(0, pixels, chunk):
        cols = slice(start, start + chunk)
        out += a[:, cols].astype(np.float32) @ b[:, cols].astype(np.float32).T
    return out
