"""Outlines of instance masks as polygons along the pixel edges (numpy only).

A mask's boundary is made of the unit edges ("cracks") between a
foreground pixel and a background one.  Each crack is directed so that the
foreground lies on its right (image coordinates, y down): the cracks then
join head to tail into closed loops, clockwise around objects and
counter-clockwise around holes.  Where two foreground pixels touch only at
a corner, a loop turns right, so diagonal neighbours get loops of their
own (4-connectivity).  Corners where the direction does not change are
dropped, so a rectangle is 4 points.

Filling the loops with the even-odd rule at pixel centres gives back the
mask exactly (the tests check it), so an outline is the mask, drawn.
"""

from __future__ import annotations

import numpy as np

# Directions of a crack: +x, +y, -x, -y (a quarter turn clockwise each, y down).
_STEP = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=np.int64)


def decode_rle(rle: bytes, height: int, width: int) -> np.ndarray:
    """A compressed COCO RLE (pycocotools' counts string) -> ``mask[height, width]`` bool."""
    from iou_eval.geometry.rle import decode_counts

    strings = np.empty(1, dtype=object)
    strings[0] = bytes(rle)
    counts, _ = decode_counts(
        strings, np.array([height], dtype=np.int64), np.array([width], dtype=np.int64)
    )
    # Runs alternate background and foreground, background first, column by column.
    flat = np.repeat(np.arange(len(counts)) % 2 == 1, counts)
    return flat.reshape(width, height).T


def _cracks(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Directed boundary cracks of ``m[H, W]``: start corners ``x[E]``, ``y[E]`` and direction ``[E]``."""
    p = np.pad(m, 1)
    # Horizontal cracks at y (between pixel rows y-1 and y), x in 0..W-1.
    above, below = p[:-1, 1:-1], p[1:, 1:-1]
    # Vertical cracks at x (between pixel columns x-1 and x), y in 0..H-1.
    left, right = p[1:-1, :-1], p[1:-1, 1:]
    parts = []
    for sel, dx, dy, d in (
        (below & ~above, 0, 0, 0),  # a top edge: +x from its left corner
        (above & ~below, 1, 0, 2),  # a bottom edge: -x from its right corner
        (left & ~right, 0, 0, 1),  # a right edge: +y from its top corner
        (right & ~left, 0, 1, 3),  # a left edge: -y from its bottom corner
    ):
        y, x = np.nonzero(sel)
        parts.append((x + dx, y + dy, np.full(len(x), d, dtype=np.int64)))
    xs, ys, ds = (np.concatenate(c) for c in zip(*parts, strict=True))
    return xs.astype(np.int64), ys.astype(np.int64), ds


def _successors(x: np.ndarray, y: np.ndarray, d: np.ndarray, width: int) -> np.ndarray:
    """``next[E]``: the crack that follows each one (a right turn first, then straight, then left)."""
    stride = width + 1
    key = (y * stride + x) * 4 + d
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    end = (y + _STEP[d, 1]) * stride + (x + _STEP[d, 0])
    nxt = np.full(len(d), -1, dtype=np.int64)
    # Only a corner touched diagonally has two ways on; elsewhere one of these exists.
    for turn in (1, 0, 3):
        want = end * 4 + (d + turn) % 4
        pos = np.minimum(np.searchsorted(sorted_key, want), len(sorted_key) - 1)
        found = (sorted_key[pos] == want) & (nxt < 0)
        nxt[found] = order[pos[found]]
    return nxt


def mask_outlines(mask: np.ndarray) -> list[np.ndarray]:
    """The closed outlines of ``mask[H, W]`` (bool): ``[N, 2]`` float64 corners ``(x, y)`` each.

    Corners are pixel corners: pixel ``(row r, column c)`` spans ``x`` in
    ``[c, c + 1]`` and ``y`` in ``[r, r + 1]``.  Outer outlines run
    clockwise on screen, holes counter-clockwise.  Empty mask: ``[]``.
    """
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"mask must be [H, W], got shape {list(m.shape)}")
    rows = np.flatnonzero(m.any(axis=1))
    cols = np.flatnonzero(m.any(axis=0))
    if not len(rows):
        return []
    # Only the mask's bounding box is traced.
    r0, c0 = int(rows[0]), int(cols[0])
    crop = m[r0 : int(rows[-1]) + 1, c0 : int(cols[-1]) + 1]
    x, y, d = _cracks(crop)
    nxt = _successors(x, y, d, crop.shape[1])
    seen = np.zeros(len(d), dtype=bool)
    loops = []
    for start in range(len(d)):  # one pass per loop; the walk is along its cracks
        if seen[start]:
            continue
        loop = [start]
        seen[start] = True
        e = int(nxt[start])
        while e != start:
            seen[e] = True
            loop.append(e)
            e = int(nxt[e])
        idx = np.asarray(loop)
        turns = d[idx] != d[np.roll(idx, 1)]  # a corner where the direction changes
        pts = np.column_stack([x[idx][turns] + c0, y[idx][turns] + r0]).astype(np.float64)
        loops.append(pts)
    return loops


def rle_outlines(rle: bytes, height: int, width: int) -> list[np.ndarray]:
    """:func:`mask_outlines` of a compressed COCO RLE of an ``height x width`` image."""
    return mask_outlines(decode_rle(rle, height, width))
