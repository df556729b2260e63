"""The numpy run kernel for mask overlaps, kept for the benchmark only.

Measured against pycocotools' ``iou`` per group (see bench_mask_kernel.py):
equal bit for bit, but slower end to end (each mask's compressed string is
decoded to runs in numpy, about 10x slower than pycocotools' C decoder) and
holding 16 bytes per run (some 130 MB per 1,000 COCO-like images, against
18 MB of strings).
``iou_eval.geometry.masks`` therefore calls pycocotools; this module documents the
alternative so that the figures can be measured again.

A mask's foreground is a sorted list of runs ``[start, start + length)`` of
pixels numbered column by column.  :class:`MaskRuns` holds the runs of ``N``
masks in flat columns, each mask's runs shifted by a row base (``base[i] =
sum of (h * w + 1)`` over the rows before it) so that one ``searchsorted``
serves every mask at once.  For a pair, the prediction's runs within the
ground truth's span are looked up in the ground truth's runs: with ``F(x)``
the ground-truth pixels below ``x``, a run ``[s, e)`` shares ``F(e) - F(s)``
pixels with it.  pycocotools' walk stops early where both masks hold a
zero-length run at the same pixel; this kernel does not mirror that (only
hand-written counts have them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.geometry.rle import _decode

_CHUNK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class MaskRuns:
    """The foreground runs of ``N`` masks (``R`` runs in all).

    Attributes:
        start: ``[R]`` int64 first pixel of each run plus its row's base.
        length: ``[R]`` int64 pixels in each run (> 0).
        offsets: ``[N + 1]`` int64, row ``i``'s runs are ``offsets[i]:offsets[i + 1]``.
        base: ``[N]`` int64 row bases, ``sum of (h * w + 1)`` of the rows before.
        height, width: ``[N]`` int64.
        pixels: ``[N]`` int64 foreground pixels (pycocotools' ``rleArea``).
        first, stop: ``[N]`` int64 the first foreground pixel and one past
            the last (not rebased); ``first = stop = 0`` for an empty mask.
        zero_run: ``[N]`` bool, the counts hold a zero-length run after the
            first count and before the last pixel (pycocotools' ``rleIou``
            walk can stop early on those: see ``masks.mask_pair_overlaps``).
    """

    start: np.ndarray
    length: np.ndarray
    offsets: np.ndarray
    base: np.ndarray
    height: np.ndarray
    width: np.ndarray
    pixels: np.ndarray
    first: np.ndarray
    stop: np.ndarray
    zero_run: np.ndarray

    def __len__(self) -> int:
        return len(self.base)

    def take(self, rows: np.ndarray) -> MaskRuns:
        """The runs of ``rows`` (an integer index), rebased."""
        rows = np.asarray(rows, dtype=np.int64)
        n_runs = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(n_runs, out=offsets[1:])
        pick = np.repeat(self.offsets[rows] - offsets[:-1], n_runs) + np.arange(offsets[-1])
        height, width = self.height[rows], self.width[rows]
        base = _bases(height, width)
        shift = np.repeat(base - self.base[rows], n_runs)
        return MaskRuns(
            start=self.start[pick] + shift,
            length=self.length[pick],
            offsets=offsets,
            base=base,
            height=height,
            width=width,
            pixels=self.pixels[rows],
            first=self.first[rows],
            stop=self.stop[rows],
            zero_run=self.zero_run[rows],
        )


def _bases(height: np.ndarray, width: np.ndarray) -> np.ndarray:
    """``[N]`` row bases: each mask's pixels, plus one, after the previous ones."""
    size = height.astype(np.int64) * width.astype(np.int64) + 1
    return np.cumsum(size) - size


def decode_runs(rle: np.ndarray, height: np.ndarray, width: np.ndarray) -> MaskRuns:
    """:class:`MaskRuns` of compressed strings (checked as :func:`decode_counts` says)."""
    n = len(rle)
    height = np.asarray(height, dtype=np.int64)
    width = np.asarray(width, dtype=np.int64)
    cnts, offsets, _ = _decode(rle, height, width)
    prefix = np.zeros(len(cnts) + 1, dtype=np.int64)
    np.cumsum(cnts, out=prefix[1:])
    per_row = np.diff(offsets)
    # Odd places are foreground (pycocotools' counts start with background):
    # a count's place parity is its position's parity, flipped on odd rows starts.
    odd = (np.arange(len(cnts)) & 1).astype(bool)
    odd ^= np.repeat((offsets[:-1] & 1).astype(bool), per_row)
    fg = odd & (cnts > 0)
    n_runs = np.add.reduceat(fg.view(np.int8), offsets[:-1], dtype=np.int64) if n else per_row
    n_runs[per_row == 0] = 0
    run_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_runs, out=run_off[1:])
    at = np.flatnonzero(fg)
    length = cnts[at]
    row_start = prefix[offsets[:-1]]
    # Rebase: start + base - (pixels of all earlier rows' counts).
    start = prefix[at] + np.repeat(_bases(height, width) - row_start, n_runs)
    total = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=total[1:])
    has = n_runs > 0
    first = np.where(has, prefix[at[np.minimum(run_off[:-1], len(at) - 1)]] - row_start, 0)
    last = np.maximum(run_off[1:] - 1, 0)
    stop = np.where(has, prefix[at[last] + 1] - row_start, 0) if len(at) else first
    return MaskRuns(
        start=start,
        length=length,
        offsets=run_off,
        base=_bases(height, width),
        height=height,
        width=width,
        pixels=total[run_off[1:]] - total[run_off[:-1]],
        first=first,
        stop=stop,
        zero_run=_zero_runs(cnts, offsets, prefix, height * width),
    )


def _zero_runs(cnts, offsets, prefix, hw) -> np.ndarray:
    """``[N]`` bool: a zero count after place 0 that starts before the last pixel."""
    n = len(offsets) - 1
    zero = np.flatnonzero(cnts == 0)
    row = np.searchsorted(offsets, zero, side="right") - 1
    keep = (zero > offsets[row]) & (prefix[zero] - prefix[offsets[row]] < hw[row])
    return np.bincount(row[keep], minlength=n) > 0


def spans_meet(dr: MaskRuns, d: np.ndarray, gr: MaskRuns, g: np.ndarray) -> np.ndarray:
    """``[P]`` bool: masks ``d[P]`` and ``g[P]`` are both non-empty and their pixel spans
    (first to last foreground pixel) overlap; if not, they share no pixel."""
    return np.maximum(dr.first[d], gr.first[g]) < np.minimum(dr.stop[d], gr.stop[g])


def pair_intersections(dr: MaskRuns, d: np.ndarray, gr: MaskRuns, g: np.ndarray) -> np.ndarray:
    """``[P]`` int64 pixels shared by masks ``d[P]`` (of ``dr``) and ``g[P]`` (of ``gr``).

    Masks of a pair must have the same size.  For each pair, the prediction's
    runs that fall within the ground truth's first and last pixel are looked
    up in the ground truth's runs: with ``F(x)`` the ground-truth pixels
    below ``x``, a run ``[s, e)`` shares ``F(e) - F(s)`` pixels with it.
    ``F`` of every ground truth is one cumulative function over the flat,
    rebased runs, so a whole batch is two ``searchsorted`` calls.
    """
    out = np.zeros(len(d), dtype=np.int64)
    if len(d) == 0 or len(gr.start) == 0:
        return out
    # Sentinel runs: at -1 so that every key finds a run at or before it,
    # and past every pixel so that a forward step always stops.
    big = np.iinfo(np.int64).max
    g_start = np.concatenate([[-1], gr.start, [big]])
    g_len = np.concatenate([[0], gr.length, [0]])
    g_cum = np.concatenate([[0], np.cumsum(gr.length), [0]]) - g_len
    d_end = dr.start + dr.length
    # The prediction's runs that end after the ground truth's first pixel
    # and start before its last (both searches stay within the row: bases
    # keep the rows apart).
    lo = np.searchsorted(d_end, dr.base[d] + gr.first[g], side="right")
    hi = np.searchsorted(dr.start, dr.base[d] + gr.stop[g], side="left")
    n_el = np.where(gr.stop[g] > gr.first[g], np.maximum(hi - lo, 0), 0)
    bounds = np.searchsorted(np.cumsum(n_el), np.arange(0, int(n_el.sum()), _CHUNK_ELEMENTS))
    cuts = np.unique(np.concatenate([[0], bounds, [len(d)]]))
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        out[a:b] = _chunk_intersections(dr, gr, d, g, lo, n_el, a, b, (g_start, g_len, g_cum))
    return out


def _chunk_intersections(dr, gr, d, g, lo, n_el, a, b, g_cols) -> np.ndarray:
    """Intersections of pairs ``a:b`` (see :func:`pair_intersections`)."""
    g_start, g_len, g_cum = g_cols
    counts = n_el[a:b]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(b - a, dtype=np.int64)
    first = np.cumsum(counts) - counts
    run = np.repeat(lo[a:b] - first, counts) + np.arange(total)
    # Move the prediction's run into the ground truth's frame.
    shift = np.repeat(gr.base[g[a:b]] - dr.base[d[a:b]], counts)
    s = dr.start[run] + shift
    e = s + dr.length[run]

    def below(key: np.ndarray, k: np.ndarray) -> np.ndarray:
        return g_cum[k] + np.clip(key - g_start[k], 0, g_len[k])

    k_s = np.searchsorted(g_start, s, side="right") - 1
    # The run at or before e: a step or two after the one before s, as runs
    # are about as long as the columns they sit in.
    k_e = k_s.copy()
    todo = np.arange(total)
    while len(todo):
        step = g_start[k_e[todo] + 1] <= e[todo]
        todo = todo[step]
        k_e[todo] += 1
    shared = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(below(e, k_e) - below(s, k_s), out=shared[1:])
    ends = np.cumsum(counts)
    return shared[ends] - shared[ends - counts]


def overlaps_from_counts(
    inter: np.ndarray, d_pixels: np.ndarray, g_pixels: np.ndarray, crowd: np.ndarray
) -> np.ndarray:
    """``[P]`` float64 IoU, or IoF for crowd ground truths, as ``rleIou`` divides.

    ``rleIou`` divides two unsigned ints converted to double: ``i / u`` with
    ``u = |d| + |g| - i`` or ``|d|`` for a crowd region, and ``0 / 1`` when
    ``i`` is 0.  Integer counts below 2**53 make the numpy division the same.
    """
    union = np.where(crowd, d_pixels, d_pixels + g_pixels - inter)
    union = np.where(inter == 0, 1, union)
    return inter.astype(np.float64) / union.astype(np.float64)


def pair_overlaps(dr: MaskRuns, gr: MaskRuns, gt_crowd: np.ndarray, d: np.ndarray, g: np.ndarray):
    """``[P]`` overlaps of the aligned pairs ``d[P]``, ``g[P]`` (rows of ``dr``, ``gr``)."""
    meet = np.flatnonzero(spans_meet(dr, d, gr, g))
    inter = np.zeros(len(d), dtype=np.int64)
    inter[meet] = pair_intersections(dr, d[meet], gr, g[meet])
    return overlaps_from_counts(inter, dr.pixels[d], gr.pixels[g], gt_crowd[g])
