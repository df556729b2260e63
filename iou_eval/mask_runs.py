"""Masks as runs of pixels, and the mask overlap kernel (pure numpy).

A mask of an ``h x w`` image is a set of pixels numbered column by column
(``x * h + y``), as pycocotools' RLE numbers them.  Its foreground is a
sorted list of runs ``[start, start + length)``.  :class:`MaskRuns` holds the
runs of ``N`` masks in flat columns, each mask's runs shifted by a row base
(``base[i] = sum of (h * w + 1)`` over the rows before it) so that one
``searchsorted`` can serve every mask at once.

The compressed strings are pycocotools' ``rleToString`` format: each count
is a little-endian sequence of 6-bit characters (``chr(48 + c)``), 5 bits of
value each, ``0x20`` = another character follows, ``0x10`` in the last
character = negative; from the fourth count on, a count is stored as the
difference to the count two places before.  :func:`decode_counts` reads any
number of them in one pass of array operations.

The overlap of two masks is computed as pycocotools' ``rleIou`` does:
``i / u`` in double from integer pixel counts, ``u`` the union, or the
prediction's area when the ground truth is a crowd region; exactly 0 when
they share no pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# pycocotools reads a count with ``x |= (c & 0x1f) << 5*k`` on a C int: a 7th
# character would shift past 31 bits.  Six characters hold |count| < 2**29.
MAX_CHARS_PER_COUNT = 6

# Pairs expanded at a time in the overlap kernel (prediction runs).
_CHUNK_ELEMENTS = 1 << 21


class BadRle(ValueError):
    """A compressed string that is not a valid mask of its size.

    Attributes:
        row: the first offending row; reason: what is wrong, for the user.
    """

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


def _row_of(positions: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Row of each position given ``offsets[N + 1]`` of row starts."""
    return np.searchsorted(offsets, positions, side="right") - 1


def _parse_numbers(buf: np.ndarray, str_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The raw numbers of concatenated compressed strings.

    Args:
        buf: ``[B]`` uint8, all strings back to back; str_off: ``[N + 1]``.

    Returns:
        ``x[C]`` int64 the signed numbers (before the delta rule) and
        ``start[C]`` the position of each number's first character.
    """
    c = buf.astype(np.int64) - 48
    bad = (c < 0) | (c > 63)
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        row = int(_row_of(np.array([p]), str_off)[0])
        raise BadRle(row, f"character {bytes([buf[p]])!r} is outside '0'..'o'")
    more = (c & 0x20) != 0
    lens = np.diff(str_off)
    last = str_off[1:][lens > 0] - 1
    if more[last].any():
        row = int(_row_of(last[more[last]][:1], str_off)[0])
        raise BadRle(row, "the string ends in the middle of a number")
    end = np.flatnonzero(~more)
    start = np.empty_like(end)
    start[:1] = 0
    start[1:] = end[:-1] + 1
    n_chars = end - start + 1
    if (n_chars > MAX_CHARS_PER_COUNT).any():
        row = int(_row_of(start[n_chars > MAX_CHARS_PER_COUNT][:1], str_off)[0])
        raise BadRle(row, f"a number longer than {MAX_CHARS_PER_COUNT} characters")
    if len(end) == 0:
        return np.zeros(0, np.int64), start
    # Character k of a number holds bits 5k..5k+4 (rleFrString's x |= ... << 5*k).
    k = np.arange(len(c)) - np.repeat(start, n_chars)
    x = np.add.reduceat((c & 0x1F) << (5 * k), start)
    # Sign extension from the last character: x |= -1 << 5*K.
    x -= np.where((c[end] & 0x10) != 0, np.left_shift(1, 5 * n_chars), 0)
    return x, start


def _undo_deltas(x: np.ndarray, j: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Counts from stored numbers: ``cnts[j] = x[j] + cnts[j - 2]`` for ``j > 2``.

    So a count is the sum of its number and those two, four, ... places
    before it, down to place 1 (odd places) or place 2 (even places).
    """
    cnts = x.copy()
    for parity in (0, 1):
        sel = np.flatnonzero((j % 2 == parity) & (j >= 1))
        if len(sel) == 0:
            continue
        xs = x[sel]
        cs = np.cumsum(xs)
        r = row[sel]
        first = np.ones(len(sel), dtype=bool)
        first[1:] = r[1:] != r[:-1]
        head = np.maximum.accumulate(np.where(first, np.arange(len(sel)), 0))
        cnts[sel] = cs - (cs[head] - xs[head])
    return cnts


def decode_counts(
    rle: np.ndarray, height: np.ndarray, width: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Decode compressed RLE strings to their counts, checking each is a mask of its size.

    Args:
        rle: ``[N]`` object array of ``bytes`` (pycocotools' compressed counts).
        height, width: ``[N]`` int64 each mask's size.

    Returns:
        ``counts[C]`` int64 and ``offsets[N + 1]``: row ``i``'s counts are
        ``counts[offsets[i]:offsets[i + 1]]``, alternating background and
        foreground, background first.

    Raises:
        BadRle: a character outside ``'0'..'o'``, a string that stops inside a
        number, a number over six characters, a negative count, or counts
        that do not add up to ``h * w`` (pycocotools reads all of these
        without a word and then reads or writes out of bounds).
    """
    n = len(rle)
    lens = np.fromiter(map(len, rle), dtype=np.int64, count=n)
    str_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=str_off[1:])
    buf = np.frombuffer(b"".join(rle), dtype=np.uint8)
    x, start = _parse_numbers(buf, str_off)
    row = _row_of(start, str_off)
    per_row = np.bincount(row, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_row, out=offsets[1:])
    j = np.arange(len(x)) - offsets[row]
    cnts = _undo_deltas(x, j, row)
    if (cnts < 0).any():
        raise BadRle(int(row[np.flatnonzero(cnts < 0)[0]]), "a negative run length")
    total = np.zeros(len(cnts) + 1, dtype=np.int64)
    np.cumsum(cnts, out=total[1:])
    sums = total[offsets[1:]] - total[offsets[:-1]]
    hw = height.astype(np.int64) * width.astype(np.int64)
    if (sums != hw).any():
        r = int(np.flatnonzero(sums != hw)[0])
        raise BadRle(
            r,
            f"run lengths add up to {int(sums[r])}, expected height * width = "
            f"{int(height[r])} * {int(width[r])} = {int(hw[r])}",
        )
    return cnts, offsets


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
        bounds: ``[N, 4]`` int64 tight pixel bounds ``x0, y0, x1, y1``
            (inclusive); an empty mask has ``x0 > x1``.
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
    bounds: np.ndarray
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
            bounds=self.bounds[rows],
            zero_run=self.zero_run[rows],
        )


def _bases(height: np.ndarray, width: np.ndarray) -> np.ndarray:
    """``[N]`` row bases: each mask's pixels, plus one, after the previous ones."""
    size = height.astype(np.int64) * width.astype(np.int64) + 1
    return np.cumsum(size) - size


def runs_from_counts(
    cnts: np.ndarray, offsets: np.ndarray, height: np.ndarray, width: np.ndarray
) -> MaskRuns:
    """:class:`MaskRuns` of decoded counts (as :func:`decode_counts` returns them)."""
    n = len(offsets) - 1
    height = height.astype(np.int64)
    width = width.astype(np.int64)
    per_row = np.diff(offsets)
    row = np.repeat(np.arange(n), per_row)
    j = np.arange(len(cnts)) - offsets[row]
    prefix = np.zeros(len(cnts) + 1, dtype=np.int64)
    np.cumsum(cnts, out=prefix[1:])
    local = prefix[:-1] - prefix[offsets[:-1]][row]
    # Odd places are foreground (pycocotools' counts start with background).
    fg = (j % 2 == 1) & (cnts > 0)
    zero = (j >= 1) & (cnts == 0) & (local < (height * width)[row])
    run_row = row[fg]
    n_runs = np.bincount(run_row, minlength=n)
    run_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_runs, out=run_off[1:])
    base = _bases(height, width)
    length = cnts[fg]
    return MaskRuns(
        start=local[fg] + base[run_row],
        length=length,
        offsets=run_off,
        base=base,
        height=height,
        width=width,
        pixels=np.bincount(run_row, weights=length, minlength=n).astype(np.int64),
        bounds=_bounds(local[fg], length, run_row, run_off, height),
        zero_run=np.bincount(row[zero], minlength=n) > 0,
    )


def _bounds(
    local: np.ndarray, length: np.ndarray, run_row: np.ndarray, run_off: np.ndarray, h: np.ndarray
) -> np.ndarray:
    """``[N, 4]`` inclusive pixel bounds ``x0, y0, x1, y1`` of each mask's runs."""
    n = len(run_off) - 1
    hr = h[run_row]
    last = local + length - 1
    x0, y0 = np.divmod(local, hr)
    x1, y1 = np.divmod(last, hr)
    # A run that wraps to the next column covers every row of the image.
    wraps = x1 > x0
    y0 = np.where(wraps, 0, y0)
    y1 = np.where(wraps, hr - 1, y1)
    out = np.empty((n, 4), dtype=np.int64)
    out[:, 0:2] = np.iinfo(np.int64).max
    out[:, 2:4] = -1
    full = np.flatnonzero(run_off[1:] > run_off[:-1])
    if len(full):
        at = run_off[full]
        out[full, 0] = np.minimum.reduceat(x0, at)
        out[full, 1] = np.minimum.reduceat(y0, at)
        out[full, 2] = np.maximum.reduceat(x1, at)
        out[full, 3] = np.maximum.reduceat(y1, at)
    return out


def bounds_meet(dr: MaskRuns, d: np.ndarray, gr: MaskRuns, g: np.ndarray) -> np.ndarray:
    """``[P]`` bool: the pixel bounds of masks ``d[P]`` and ``g[P]`` share a pixel."""
    bd = dr.bounds[d]
    bg = gr.bounds[g]
    return (
        (np.maximum(bd[:, 0], bg[:, 0]) <= np.minimum(bd[:, 2], bg[:, 2]))
        & (np.maximum(bd[:, 1], bg[:, 1]) <= np.minimum(bd[:, 3], bg[:, 3]))
    )


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
    # Sentinel run at -1 so that every key finds a run at or before it.
    g_start = np.concatenate([[-1], gr.start])
    g_len = np.concatenate([[0], gr.length])
    g_cum = np.concatenate([[0], np.cumsum(gr.length)]) - g_len
    d_end = dr.start + dr.length
    g_has = gr.offsets[g + 1] > gr.offsets[g]
    g_first = gr.start[np.minimum(gr.offsets[g], len(gr.start) - 1)] - gr.base[g]
    g_stop = _stop_of(gr, g) - gr.base[g]
    lo = np.searchsorted(d_end, dr.base[d] + g_first, side="right")
    hi = np.searchsorted(dr.start, dr.base[d] + g_stop, side="left")
    n_el = np.where(g_has, np.maximum(hi - lo, 0), 0)
    bounds = np.searchsorted(np.cumsum(n_el), np.arange(0, int(n_el.sum()), _CHUNK_ELEMENTS))
    cuts = np.unique(np.concatenate([[0], bounds, [len(d)]]))
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        out[a:b] = _chunk_intersections(dr, gr, d, g, lo, n_el, a, b, (g_start, g_len, g_cum))
    return out


def _stop_of(runs: MaskRuns, rows: np.ndarray) -> np.ndarray:
    """``[P]`` one past the last foreground pixel of ``rows`` (rebased); base if empty."""
    last = runs.offsets[rows + 1] - 1
    safe = np.maximum(last, 0)
    end = runs.start[safe] + runs.length[safe] if len(runs.start) else runs.base[rows]
    return np.where(last >= runs.offsets[rows], end, runs.base[rows])


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

    def below(key: np.ndarray) -> np.ndarray:
        k = np.searchsorted(g_start, key, side="right") - 1
        return g_cum[k] + np.clip(key - g_start[k], 0, g_len[k])

    shared = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(below(e) - below(s), out=shared[1:])
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
