"""The DOTA devkit's polygon IoU (its ``polyiou.iou_poly``), operation for operation, in numpy.

The devkit does not clip one box by the other.  It splits each polygon into
the triangles that its edges make with the origin ``(0, 0)`` and adds the
signed areas of the 16 triangle-triangle intersections, each triangle of
the ground truth clipped by the three sides of a triangle of the
prediction.  Its comparisons allow 1e-8: a point within 1e-8 of a cutting
line is on it, two points within 1e-8 on both axes are one.  The sums are
taken in its order, so that the IoU is the devkit's to the last bit (an IoU
of exactly 0.5, or two equal IoUs, decide the same way), on a machine that
rounds each operation as IEEE double does (x86-64: no fused multiply-add).

One place where the devkit reads memory it never wrote is settled: when an
edge crosses a cutting line while one of its ends lies within 1e-8 of it and
the two ends' distances differ by no more than 1e-8, the devkit's
``lineCross`` leaves the crossing point unwritten and the polygon takes
whatever an earlier cut left in that slot; here it takes that end point.

Pairs are computed a chunk at a time, all 16 triangle pairs of a chunk at
once, vertices in fixed slots: the result of a pair never depends on its
neighbours.  The compiled kernel ``_polykernel.c`` does the same operations
in the same order (the same bits, about a hundred times faster); this numpy
path is the reference, and the one a run takes without the kernel or with
``IOU_EVAL_NO_KERNEL=1``.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from iou_eval.engine.compiled import load

EPS = 1e-8
# Box pairs per chunk (each is 16 triangle pairs of up to ~8 vertices).
_CHUNK = 1 << 13


def compiled() -> ModuleType | None:
    """The polygon IoU kernel, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.geometry._polykernel")


def _sig(d: np.ndarray) -> np.ndarray:
    """The devkit's ``sig``: 1 above 1e-8, -1 below -1e-8, else 0 (NaN too)."""
    return (d > EPS).astype(np.int8) - (d < -EPS).astype(np.int8)


def _same(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The devkit's ``Point ==``: within 1e-8 on both axes."""
    return (_sig(p[..., 0] - q[..., 0]) == 0) & (_sig(p[..., 1] - q[..., 1]) == 0)


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The devkit's ``cross(o, a, b)``: ``(a - o) x (b - o)``, broadcast over leading axes."""
    return (a[..., 0] - o[..., 0]) * (b[..., 1] - o[..., 1]) - (b[..., 0] - o[..., 0]) * (
        a[..., 1] - o[..., 1]
    )


def _ring_area(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The devkit's ``area(p, n)``: half the shoelace sum of ``p[R, C, 2]``'s first ``n[R]`` points,
    added from the first point on, the last joined to the first."""
    r, c = p.shape[:2]
    rows = np.arange(r)
    total = np.zeros(r)
    for k in range(c):
        live = k < n
        if not live.any():
            break
        j = np.where(k + 1 < n, k + 1, 0)
        term = p[:, k, 0] * p[rows, j, 1] - p[:, k, 1] * p[rows, j, 0]
        total = np.where(live, total + term, total)
    return total / 2.0


def _compact(q: np.ndarray, emit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``q[R, S, 2]`` where ``emit[R, S]``, moved to the front in order."""
    r, s = emit.shape
    counts = emit.sum(axis=1)
    width = max(int(counts.max()) if r else 0, 1)
    out = np.zeros((r, width, 2))
    pos = np.cumsum(emit, axis=1) - 1
    row = np.broadcast_to(np.arange(r)[:, None], (r, s))
    out[row[emit], pos[emit]] = q[emit]
    return out, counts.astype(np.int64)


def _cut(
    p: np.ndarray, n: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The devkit's ``polygon_cut``: what of ``p[R, C, 2]`` (``n[R]`` points) lies left of ``a -> b``.

    Going round, a point strictly left (beyond 1e-8) is kept and where the
    side changes the crossing point follows it; then points equal to the one
    before them go, and so do last points equal to the first.
    """
    r, c = p.shape[:2]
    slot = np.arange(c)
    valid = slot[None, :] < n[:, None]
    nxt_slot = np.where(slot[None, :] + 1 < n[:, None], slot[None, :] + 1, 0)
    val = _cross(a[:, None, :], b[:, None, :], p)
    val_next = np.take_along_axis(val, nxt_slot, axis=1)
    sg, sg_next = _sig(val), _sig(val_next)
    keep = valid & (sg > 0)
    cross = valid & (sg != sg_next)
    nxt = np.take_along_axis(p, nxt_slot[..., None], axis=1)
    point = np.zeros_like(p)
    if cross.any():
        s1, s2 = val[cross], val_next[cross]
        c0, d0 = p[cross], nxt[cross]
        den = s2 - s1
        computed = _sig(den) != 0
        safe = np.where(computed, den, 1.0)
        px = (c0[:, 0] * s2 - d0[:, 0] * s1) / safe
        py = (c0[:, 1] * s2 - d0[:, 1] * s1) / safe
        # lineCross leaves its point unwritten here: take the end that lies on the line.
        end = np.where((sg[cross] == 0)[:, None], c0, d0)
        point[cross] = np.where(computed[:, None], np.stack([px, py], axis=1), end)
    # Each slot emits its own point, then its crossing point: interleaved in that order.
    q = np.stack([p, point], axis=2).reshape(r, 2 * c, 2)
    emit = np.stack([keep, cross], axis=2).reshape(r, 2 * c)
    pp, m = _compact(q, emit)
    # Consecutive duplicates (as emitted) are dropped.
    prev = np.concatenate([pp[:, :1], pp[:, :-1]], axis=1)
    first = np.arange(pp.shape[1])[None, :] == 0
    live = np.arange(pp.shape[1])[None, :] < m[:, None]
    out, n2 = _compact(pp, live & (first | ~_same(pp, prev)))
    # Then last points equal to the first.
    rows = np.arange(r)
    for _ in range(out.shape[1]):
        last = out[rows, np.maximum(n2 - 1, 0)]
        drop = (n2 > 1) & _same(last, out[:, 0])
        if not drop.any():
            break
        n2 = n2 - drop
    return out, n2


def _triangle_overlaps(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The devkit's ``intersectArea(a, b, c, d)``: the signed overlap of triangles ``o a b`` and ``o c d``.

    All ``[R, 2]``; returns ``[R]``.
    """
    r = len(a)
    o = np.zeros((r, 2))
    s1 = _sig(_cross(o, a, b))
    s2 = _sig(_cross(o, c, d))
    live = (s1 != 0) & (s2 != 0)
    flip1 = (s1 == -1)[:, None]
    flip2 = (s2 == -1)[:, None]
    a, b = np.where(flip1, b, a), np.where(flip1, a, b)
    c, d = np.where(flip2, d, c), np.where(flip2, c, d)
    p = np.stack([o, a, b], axis=1)
    n = np.where(live, 3, 0).astype(np.int64)
    p, n = _cut(p, n, o, c)
    p, n = _cut(p, n, c, d)
    p, n = _cut(p, n, d, o)
    res = np.abs(_ring_area(p, n))
    res = np.where(s1 * s2 == -1, -res, res)
    return np.where(live, res, 0.0)


def _devkit_winding(ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ps[P, 4, 2]`` reversed where its area is negative, as the devkit does, and that area."""
    four = np.full(len(ps), 4, dtype=np.int64)
    flip = _ring_area(ps, four) < 0
    out = np.where(flip[:, None, None], ps[:, ::-1], ps)
    return out, np.abs(_ring_area(out, four))


def iou_poly(gt: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """``[P]`` the devkit's ``iou_poly(gt, dt)`` of aligned pairs of quadrilaterals ``[P, 4, 2]``.

    The corners as the files give them: the devkit reverses a polygon whose
    area is negative, and takes the rest as it comes.
    """
    gt = np.ascontiguousarray(gt, dtype=np.float64).reshape(-1, 4, 2)
    dt = np.ascontiguousarray(dt, dtype=np.float64).reshape(-1, 4, 2)
    out = np.empty(len(gt))
    kernel = compiled()
    if kernel is not None:
        kernel.iou_poly(gt, dt, out)
        return out
    for lo in range(0, len(gt), _CHUNK):
        out[lo : lo + _CHUNK] = _iou_chunk(gt[lo : lo + _CHUNK], dt[lo : lo + _CHUNK])
    return out


def _iou_chunk(gt: np.ndarray, dt: np.ndarray) -> np.ndarray:
    p = len(gt)
    ps1, area1 = _devkit_winding(gt)
    ps2, area2 = _devkit_winding(dt)
    i = np.repeat(np.arange(4), 4)  # ground-truth edge, the outer loop
    j = np.tile(np.arange(4), 4)  # prediction edge, the inner loop
    a, b = ps1[:, i], ps1[:, (i + 1) % 4]
    c, d = ps2[:, j], ps2[:, (j + 1) % 4]
    parts = _triangle_overlaps(
        a.reshape(-1, 2), b.reshape(-1, 2), c.reshape(-1, 2), d.reshape(-1, 2)
    ).reshape(p, 16)
    inter = np.zeros(p)
    for k in range(16):  # res += ... in the devkit's order
        inter = inter + parts[:, k]
    union = area1 + area2 - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / union
