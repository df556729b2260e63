"""Boundary IoU (Cheng et al., CVPR 2021): instance masks compared along their outlines.

The rule is boundary-iou-api's (``mask_to_boundary`` and its COCOeval), which
faster-coco-eval's ``iouType="boundary"`` follows:

- a mask's *boundary* is the mask less its erosion by a ``(2d + 1) x (2d +
  1)`` square (a 3 x 3 square ``d`` times), pixels outside the image counting
  as background (the API pads the mask with one row and column of zeros
  before eroding): a mask cut by the image border has boundary along it;
- ``d = max(1, round(dilation_ratio * sqrt(h**2 + w**2)))`` pixels for an
  ``h x w`` image, with Python's ``round`` (halves to even: 1.5 gives 2, 2.5
  gives 2).  faster-coco-eval rounds every ``k + 0.5`` down (1.5 gives 1):
  its numbers differ there, and iou-eval follows the API;
- a pair's overlap is ``min(mask IoU, boundary IoU)``, both as
  ``pycocotools.mask.iou`` computes them; against a crowd region it is the
  plain mask overlap with the crowd rule (intersection over the
  prediction's area), as both references keep it.

Masks stay compressed RLE columns: the boundaries of the masks a group of
pairs needs are made as a :class:`~iou_eval.geometry.masks.MaskColumn` of
their own, by the compiled kernel (``boundaries`` in ``_rlekernel.c``) or by
the numpy path here, which is the reference: the same strings either way.
The numpy path decodes each mask inside its box only (outside it there is
nothing to erode), many masks per array, and erodes with a separable
running-sum window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from iou_eval.data.ordering import offsets_of
from iou_eval.geometry.kernel import compiled
from iou_eval.geometry.masks import (
    MaskColumn,
    MaskGeometry,
    Strings,
    mask_pair_overlaps,
    overlap_bounds,
)
from iou_eval.geometry.pairs import candidate_pairs, join_pairs
from iou_eval.geometry.rle import decode_joined, encode_counts, odd_sums

# boundary-iou-api's default: 2% of the image diagonal.
DEFAULT_DILATION_RATIO = 0.02
# Masks decoded at a time by the numpy path (bounds the counts' arrays) ...
_CHUNK_ROWS = 1 << 11
# ... and pixels of box-sized arrays eroded at a time (a few int32 temporaries each).
_BATCH_PIXELS = 1 << 22
_PAIR_CHUNK = 1 << 16


def dilation_pixels(height: Any, width: Any, dilation_ratio: float) -> np.ndarray:
    """``[N]`` int64 the erosion depth ``d`` of masks of ``height[N] x width[N]`` images.

    ``max(1, round(dilation_ratio * sqrt(h**2 + w**2)))`` in float64, halves
    to even as Python's ``round`` (and ``np.rint``) rounds them.
    """
    h = np.asarray(height, dtype=np.int64)
    w = np.asarray(width, dtype=np.int64)
    diagonal = np.sqrt((h * h + w * w).astype(np.float64))
    d = np.rint(float(dilation_ratio) * diagonal).astype(np.int64)
    return np.maximum(d, 1)


# --------------------------------------------------------------- dense masks


def _erode_axis(a: np.ndarray, d: int, axis: int) -> np.ndarray:
    """``a`` bool eroded along ``axis`` by a window of ``2d + 1``, zeros beyond its ends.

    A pixel stays set when the ``2d + 1`` pixels centred on it are all set: a
    running sum along the axis (in place, whichever axis it is: numpy adds
    whole rows at a time), read ``2d + 1`` apart.
    """
    n = a.shape[axis]
    k = 2 * d + 1
    out = np.zeros(a.shape, dtype=bool)
    if n < k:
        return out

    def along(part: slice) -> tuple[slice, ...]:
        return tuple(part if i == axis % a.ndim else slice(None) for i in range(a.ndim))

    shape = list(a.shape)
    shape[axis] = n + 1
    total = np.zeros(shape, dtype=np.int16 if n < 1 << 15 else np.int32)
    np.cumsum(a, axis=axis, dtype=total.dtype, out=total[along(slice(1, None))])
    window = total[along(slice(k, None))] - total[along(slice(None, n + 1 - k))]
    out[along(slice(d, n - d))] = window == k
    return out


def erode(masks: np.ndarray, d: int) -> np.ndarray:
    """``masks[..., H, W]`` bool eroded by a ``(2d + 1)``-square, pixels outside counting as 0.

    The same as ``d`` erosions by a 3 x 3 square of the mask padded with
    zeros (boundary-iou-api's ``cv2.erode``): a square window is a window
    along one axis, then along the other.
    """
    m = np.asarray(masks, dtype=bool)
    return _erode_axis(_erode_axis(m, d, -1), d, -2)


def boundary_masks(masks: np.ndarray, d: int) -> np.ndarray:
    """``masks[..., H, W]`` bool less their erosion by ``d`` (see :func:`erode`): their boundaries."""
    m = np.asarray(masks, dtype=bool)
    return m & ~erode(m, d)


# ------------------------------------------------------- RLE columns (numpy)


def _pieces(
    cnts: np.ndarray, offsets: np.ndarray, height: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The foreground of decoded masks as column pieces ``(row, x, y0, y1)``, each ``[P]``.

    Row ``row``'s pixels ``y0 <= y < y1`` of column ``x`` are set; pieces are
    in row order, then in pixel order.  A run down several columns is one
    piece per column.
    """
    per_row = np.diff(offsets)
    row_of = np.repeat(np.arange(len(per_row), dtype=np.int64), per_row)
    place = np.arange(len(cnts), dtype=np.int64) - offsets[:-1][row_of]
    end = np.cumsum(cnts)
    end -= np.concatenate(([0], end))[offsets[:-1]][row_of]  # from each row's first pixel
    fg = np.flatnonzero((place % 2 == 1) & (cnts > 0))
    row, stop = row_of[fg], end[fg]
    start = stop - cnts[fg]
    h = height[row]
    x_first, x_last = start // h, (stop - 1) // h
    n = x_last - x_first + 1
    first_piece = offsets_of(n)[:-1]
    run = np.repeat(np.arange(len(fg)), n)
    x = x_first[run] + np.arange(int(n.sum()), dtype=np.int64) - first_piece[run]
    top = x * h[run]
    y0 = np.maximum(start[run] - top, 0)
    y1 = np.minimum(stop[run] - top, h[run])
    return row[run], x, y0, y1


@dataclass(frozen=True)
class _Batch:
    """Masks eroded together: their rows, boxes and the shape of the array holding them."""

    rows: np.ndarray  # [B] rows of the chunk
    x0: np.ndarray  # [B] each box's first column and row
    y0: np.ndarray
    cols: int  # the array's columns and rows (the largest box's)
    lines: int


def _batches(box: np.ndarray, d: np.ndarray) -> list[_Batch]:
    """Masks with pixels grouped by depth ``d`` and box size, each group's arrays bounded.

    Boxes go to buckets by their columns and rows rounded up to a power of
    sqrt(2), so that an array sized for its largest box wastes at most half
    its pixels; a bucket is cut into arrays of at most ``_BATCH_PIXELS``.
    """
    has = np.flatnonzero(box[:, 2] >= box[:, 0])
    cols = box[has, 2] - box[has, 0] + 1
    lines = box[has, 3] - box[has, 1] + 1
    key_c = np.ceil(2 * np.log2(cols)).astype(np.int64)
    key_l = np.ceil(2 * np.log2(lines)).astype(np.int64)
    order = np.lexsort((key_l, key_c, d[has]))
    keys = np.stack([d[has], key_c, key_l])[:, order]
    change = np.flatnonzero((keys[:, 1:] != keys[:, :-1]).any(axis=0)) + 1
    bounds = [0, *change.tolist(), len(order)]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        size = int(cols[order[a:b]].max()) * int(lines[order[a:b]].max())
        step = max(1, _BATCH_PIXELS // size)
        for lo in range(a, b, step):
            part = order[lo : min(b, lo + step)]
            rows = has[part]
            c, ln = int(cols[part].max()), int(lines[part].max())
            out.append(_Batch(rows, box[rows, 0], box[rows, 1], c, ln))
    return out


def _paint(batch: _Batch, pieces: tuple[np.ndarray, ...], piece_off: np.ndarray) -> np.ndarray:
    """``[B, cols, lines]`` bool the batch's masks inside their boxes, column by column."""
    row, x, y0, y1 = pieces
    n = piece_off[batch.rows + 1] - piece_off[batch.rows]
    which = np.repeat(np.arange(len(batch.rows)), n)
    at = (
        np.repeat(piece_off[batch.rows], n)
        + np.arange(int(n.sum()))
        - np.repeat(offsets_of(n)[:-1], n)
    )
    shape = (len(batch.rows), batch.cols, batch.lines + 1)
    rise = np.zeros(shape, dtype=np.int8)
    fall = np.zeros(shape, dtype=np.int8)
    xc = x[at] - batch.x0[which]
    rise[which, xc, y0[at] - batch.y0[which]] = 1
    fall[which, xc, y1[at] - batch.y0[which]] = 1
    # Pieces of one column are apart, so the running sum is 0 or 1.
    return np.cumsum(rise - fall, axis=2, dtype=np.int8)[:, :, :-1].astype(bool)


def _runs(batch: _Batch, edge: np.ndarray, height: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(row[R], start[R], stop[R])`` the runs of the batch's boundary pixels, image pixels."""
    flat = np.flatnonzero(edge)
    per_mask = batch.cols * batch.lines
    b = flat // per_mask
    x, y = np.divmod(flat - b * per_mask, batch.lines)
    h = height[batch.rows][b]
    pixel = (batch.x0[b] + x) * h + batch.y0[b] + y
    new = np.ones(len(pixel), dtype=bool)
    new[1:] = (b[1:] != b[:-1]) | (pixel[1:] != pixel[:-1] + 1)
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(pixel)] - 1
    return batch.rows[b[first]], pixel[first], pixel[last] + 1


def _counts_of_runs(
    row: np.ndarray, start: np.ndarray, stop: np.ndarray, hw: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, offsets)`` of ``N = len(hw)`` masks from their runs (sorted by row, then pixel).

    pycocotools' ``rleEncode`` counts: background first (0 when the first
    pixel is set), runs alternating, the last run's count last (no
    trailing 0); a mask with no pixel is ``[h * w]``.
    """
    n = len(hw)
    r_per = np.bincount(row, minlength=n).astype(np.int64)
    r_off = offsets_of(r_per)
    last_stop = np.zeros(n, dtype=np.int64)
    has = r_per > 0
    last_stop[has] = stop[r_off[1:][has] - 1]
    tail = (~has) | (last_stop < hw)
    per = 2 * r_per + tail
    off = offsets_of(per)
    cnts = np.zeros(int(off[-1]), dtype=np.int64)
    k = np.arange(len(row), dtype=np.int64) - r_off[:-1][row]
    prev_stop = np.zeros(len(row), dtype=np.int64)
    later = k > 0
    prev_stop[later] = stop[np.flatnonzero(later) - 1]
    cnts[off[:-1][row] + 2 * k] = start - prev_stop
    cnts[off[:-1][row] + 2 * k + 1] = stop - start
    cnts[off[1:][tail] - 1] = hw[tail] - last_stop[tail]
    return cnts, off


def _piece_boxes(pieces: tuple[np.ndarray, ...], piece_off: np.ndarray) -> np.ndarray:
    """``[N, 4]`` int64 tight inclusive boxes ``x0, y0, x1, y1`` of the pieces' rows (``x1 < x0``: none)."""
    row, x, y0, y1 = pieces
    n = len(piece_off) - 1
    box = np.zeros((n, 4), dtype=np.int64)
    box[:, 2:] = -1
    has = np.flatnonzero(piece_off[1:] > piece_off[:-1])
    at = piece_off[has]
    box[has, 0] = x[at]
    box[has, 2] = x[piece_off[has + 1] - 1]
    box[has, 1] = np.minimum.reduceat(y0, at)
    box[has, 3] = np.maximum.reduceat(y1, at) - 1
    return box


def _boundary_counts(
    column: MaskColumn, d: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(counts, offsets, box[N, 4])`` of the boundaries of ``column``'s masks (numpy path)."""
    buf, lengths = column.strings.joined()
    h, w = column.height, column.width
    cnts, offsets = decode_joined(buf, lengths, h, w)
    pieces = _pieces(cnts, offsets, h)
    piece_off = offsets_of(np.bincount(pieces[0], minlength=len(column)))
    box = _piece_boxes(pieces, piece_off)
    parts = []
    for batch in _batches(box, d):
        mask = _paint(batch, pieces, piece_off)
        parts.append(_runs(batch, boundary_masks(mask, int(d[batch.rows[0]])), h))
    if parts:
        row, start, stop = (np.concatenate(p) for p in zip(*parts, strict=True))
    else:
        row = start = stop = np.zeros(0, dtype=np.int64)
    # Each mask's runs came from one batch, in order: a stable sort by row keeps them so.
    order = np.argsort(row, kind="stable")
    return (*_counts_of_runs(row[order], start[order], stop[order], h * w), box)


def _numpy_boundaries(column: MaskColumn, d: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(buf, lengths, area, box)`` of the boundaries, a chunk of masks at a time.

    ``buf`` holds the compressed strings back to back, ``lengths[N]`` their
    lengths, ``area[N]`` int64 their pixels, ``box[N, 4]`` their masks' tight boxes.
    """
    bufs, lens, areas, boxes = [], [], [], []
    for lo in range(0, len(column), _CHUNK_ROWS):
        rows = np.arange(lo, min(len(column), lo + _CHUNK_ROWS))
        cnts, offsets, box = _boundary_counts(column.take(rows), d[rows])
        buf, length = encode_counts(cnts, offsets)
        bufs.append(buf)
        lens.append(length)
        areas.append(odd_sums(cnts, offsets))
        boxes.append(box)
    if not bufs:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.uint8), empty, empty, np.zeros((0, 4), dtype=np.int64)
    return np.concatenate(bufs), np.concatenate(lens), np.concatenate(areas), np.concatenate(boxes)


def _compiled_boundaries(kernel, column: MaskColumn, d: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_numpy_boundaries` by the compiled kernel: the same strings, areas and boxes."""
    st = column.strings
    n = len(column)
    lengths = np.zeros(n, dtype=np.int64)
    area = np.zeros(n, dtype=np.int64)
    box = np.zeros((n, 4), dtype=np.int64)
    data = kernel.boundaries(
        np.ascontiguousarray(st.data, dtype=np.uint8), np.ascontiguousarray(st.start, np.int64),
        np.ascontiguousarray(st.length, np.int64), np.ascontiguousarray(column.height, np.int64),
        np.ascontiguousarray(column.width, np.int64), np.ascontiguousarray(d, np.int64),
        lengths, area, box,
    )  # fmt: skip
    return np.frombuffer(data, dtype=np.uint8), lengths, area, box


def boundary_column(
    column: MaskColumn, dilation_ratio: float = DEFAULT_DILATION_RATIO
) -> MaskColumn:
    """The boundaries of ``column``'s ``N`` masks, as a column of compressed RLEs.

    Each boundary has its mask's size and its mask's tight box (a mask's
    outermost pixels are always on its boundary).
    """
    d = dilation_pixels(column.height, column.width, float(dilation_ratio))
    kernel = compiled()
    if kernel is not None and hasattr(kernel, "boundaries"):
        buf, lengths, area, box = _compiled_boundaries(kernel, column, d)
    else:
        buf, lengths, area, box = _numpy_boundaries(column, d)
    strings = Strings(buf, offsets_of(lengths)[:-1], lengths)
    return MaskColumn(strings, column.height, column.width, area.astype(np.float64), box)


# ------------------------------------------------------------------ geometry


@dataclass(frozen=True)
class BoundaryGeometry:
    """Boundary IoU: ``min(mask IoU, boundary IoU)``; against crowd regions the mask's IoF.

    A mask's boundary is computed when one of its pairs needs it: a pair
    whose mask overlap is under the lowest threshold never does (its
    minimum is under it too), nor does a crowd region.  Category parts run
    in worker processes compute their own masks' boundaries there.

    Attributes:
        masks: the masks' geometry (:class:`~iou_eval.geometry.masks.MaskGeometry`).
        dilation_ratio: the boundaries' width as a fraction of the image diagonal.
    """

    masks: MaskGeometry
    dilation_ratio: float = DEFAULT_DILATION_RATIO
    name: str = "boundary"

    @staticmethod
    def of(gt: Any, pred: Any, dilation_ratio: float = DEFAULT_DILATION_RATIO) -> BoundaryGeometry:
        """The geometry of an aligned pair whose masks :func:`~iou_eval.geometry.segm.with_masks` encoded."""
        return BoundaryGeometry(MaskGeometry.of(gt, pred), float(dilation_ratio))

    @property
    def dt_area(self) -> np.ndarray:
        return self.masks.dt_area_col

    def _boundary_ious(
        self, dt_rows: np.ndarray, gt_rows: np.ndarray, group: np.ndarray | None
    ) -> np.ndarray:
        """``[P]`` boundary IoUs of the pairs: each mask's boundary computed once here."""
        d_need, d_pos = np.unique(dt_rows, return_inverse=True)
        g_need, g_pos = np.unique(gt_rows, return_inverse=True)
        dt_edge = boundary_column(self.masks.dt.take(d_need), self.dilation_ratio)
        gt_edge = boundary_column(self.masks.gt.take(g_need), self.dilation_ratio)
        plain = np.zeros(len(g_need), dtype=bool)  # no crowd region among these pairs
        return mask_pair_overlaps(
            dt_edge, gt_edge, plain, d_pos.reshape(-1), g_pos.reshape(-1), group
        )

    def _combined(
        self, dt_rows: np.ndarray, gt_rows: np.ndarray, group: np.ndarray | None, floor: float
    ) -> np.ndarray:
        """``[P]`` overlaps of aligned pairs; a pair whose mask overlap is under ``floor``
        keeps it (its boundary IoU is not computed: the minimum is under ``floor`` either way)."""
        m = self.masks
        iou = mask_pair_overlaps(m.dt, m.gt, m.gt_crowd, dt_rows, gt_rows, group)
        # Crowd regions keep the mask's IoF, as both references do.
        both = np.flatnonzero(~m.gt_crowd[gt_rows] & (iou >= floor))
        if len(both):
            edge = self._boundary_ious(
                dt_rows[both], gt_rows[both], None if group is None else group[both]
            )
            iou[both] = np.minimum(iou[both], edge)
        return iou

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Same-group pairs whose overlap reaches ``floor`` (see :class:`~iou_eval.geometry.pairs.Geometry`)."""
        m = self.masks
        parts_d, parts_g, parts_iou = [], [], []
        for lo in range(0, len(d_groups), _PAIR_CHUNK):
            groups = d_groups[lo : lo + _PAIR_CHUNK]
            pd, pg = candidate_pairs(groups, g_starts)
            pg = gt_sorted[pg]
            pr = dt_rows[lo : lo + _PAIR_CHUNK][pd]
            if floor > 0:
                # The overlap is at most the mask overlap: its bound prunes.
                near = overlap_bounds(m.dt, m.gt, m.gt_crowd, pr, pg) >= floor
                pd, pg, pr = pd[near], pg[near], pr[near]
            iou = self._combined(pr, pg, groups[pd], floor)
            keep = iou >= floor
            parts_d.append(pd[keep] + lo)
            parts_g.append(pg[keep])
            parts_iou.append(iou[keep])
        return join_pairs(parts_d, parts_g, parts_iou)

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        """``[P]`` overlaps of the aligned pairs, the pairs of one image in one call."""
        if not len(dt_rows):
            return np.zeros(0, dtype=np.float64)
        image = None if self.masks.dt_image is None else self.masks.dt_image[dt_rows]
        return self._combined(dt_rows, gt_rows, image, -np.inf)

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> BoundaryGeometry:
        return BoundaryGeometry(self.masks.take(gt_rows, dt_rows), self.dilation_ratio, self.name)
