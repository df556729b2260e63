"""pycocotools' compressed RLE strings, read with numpy: checks and areas.

A mask of an ``h x w`` image is numbered column by column (pixel ``x * h +
y``) and stored as run lengths, background first.  pycocotools compresses
the counts to a string (``rleToString``): each count is a little-endian
sequence of 6-bit characters (``chr(48 + c)``), 5 bits of value each,
``0x20`` = another character follows, ``0x10`` in the last character =
negative; from the fourth count on, a count is stored as the difference to
the count two places before.

pycocotools reads such strings without a single check (``rleFrString``):
a stray character, a string cut short or counts that do not cover the image
give garbage or out-of-bounds reads later.  :func:`check_compressed` reads
any number of strings in a few passes of array operations, refuses those,
and returns each mask's area on the way.  Where the compiled kernel
(:mod:`iou_eval.geometry.kernel`) is built, it makes the same checks in one pass
over each string; the numpy reader then says what is wrong with a bad one.
"""

from __future__ import annotations

import numpy as np

from iou_eval.data.ordering import offsets_of
from iou_eval.geometry.kernel import compiled

# pycocotools reads a count with ``x |= (c & 0x1f) << 5*k`` on a C int: a 7th
# character would shift past 31 bits.  Six characters hold |count| < 2**29.
MAX_CHARS_PER_COUNT = 6

# Strings decoded at a time: bounds the temporary arrays (about 150 counts
# of 8 bytes per COCO-sized mask, a few arrays of them).  Small enough that
# a chunk's arrays stay in the processor's cache: four times as many rows
# take twice the time per row.
_CHUNK_ROWS = 1 << 10


class BadRle(ValueError):
    """A compressed string that is not a valid mask of its size.

    Attributes:
        row: the first offending row; reason: what is wrong, for the user.
    """

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


def _row_of(position: int, offsets: np.ndarray) -> int:
    """Row of ``position`` given ``offsets[N + 1]`` of row starts."""
    return int(np.searchsorted(offsets, position, side="right") - 1)


def _parse_numbers(buf: np.ndarray, str_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The raw numbers of concatenated compressed strings.

    Args:
        buf: ``[B]`` uint8, all strings back to back; str_off: ``[N + 1]``.

    Returns:
        ``x[C]`` int64 the signed numbers (before the delta rule) and
        ``per_row[N]`` how many numbers each string holds.
    """
    c = buf - np.uint8(48)  # wraps below '0': then > 63 as well
    if len(c) and c.max() > 63:
        p = int(np.flatnonzero(c > 63)[0])
        raise BadRle(_row_of(p, str_off), f"character {bytes([buf[p]])!r} is outside '0'..'o'")
    ends = c < 0x20  # no continuation bit: the number's last character
    lens = np.diff(str_off)
    last = str_off[1:][lens > 0] - 1
    if not ends[last].all():
        row = _row_of(int(last[~ends[last]][0]), str_off)
        raise BadRle(row, "the string ends in the middle of a number")
    end = np.flatnonzero(ends)
    n_chars = end.copy()
    n_chars[1:] -= end[:-1]
    n_chars[:1] += 1
    if len(end) and n_chars.max() > MAX_CHARS_PER_COUNT:
        p = int(end[np.argmax(n_chars > MAX_CHARS_PER_COUNT)])
        raise BadRle(_row_of(p, str_off), f"a number longer than {MAX_CHARS_PER_COUNT} characters")
    # The last character holds the top 5 bits, sign included (rleFrString:
    # x |= -1 << 5*K when its 0x10 bit is set): a signed 5-bit value.
    x = (((c[end] & 0x1F) ^ 0x10).view(np.int8) - np.int8(0x10)).astype(np.int64)
    # Character k of a longer number holds bits 5k..5k+4 (x |= ... << 5*k);
    # most numbers have one or two characters.
    multi = np.flatnonzero(n_chars > 1)
    if len(multi):
        k_top = n_chars[multi] - 1
        xm = x[multi] << (5 * k_top)
        start = end[multi] - k_top
        for k in range(int(k_top.max())):
            sel = np.flatnonzero(k_top > k)
            xm[sel] |= (c[start[sel] + k] & 0x1F).astype(np.int64) << (5 * k)
        x[multi] = xm
    # Numbers per string: its characters that end a number (every string
    # ends with one, checked above).
    per_row = np.diff(np.searchsorted(end, str_off))
    return x, per_row


def _undo_deltas(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Counts from stored numbers: ``cnts[j] = x[j] + cnts[j - 2]`` for ``j > 2``.

    A count is then the sum of its number and those two, four, ... places
    before it in its string, down to place 1 (odd places) or 2 (even
    places).  Over all strings at once: a running sum over every other
    element (``x[0::2]``, ``x[1::2]``), restarted at each string's places
    0, 1 and 2, which are the only places that do not add to an earlier one.
    """
    per_row = np.diff(offsets)
    restart = np.zeros(len(x), dtype=bool)
    for place in (0, 1, 2):
        restart[offsets[:-1][per_row > place] + place] = True
    cnts = np.empty_like(x)
    for parity in (0, 1):
        xs = x[parity::2]
        heads = np.flatnonzero(restart[parity::2])
        if len(heads) == 0:
            continue
        # The first element of each half is a restart place, so heads[0] == 0.
        y = xs.copy()
        y[heads[1:]] -= np.add.reduceat(xs, heads)[:-1]
        np.cumsum(y, out=cnts[parity::2])
    return cnts


def _place_sums(cnts: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``([N], [N])`` each row's sum of counts at even places and at odd places.

    From two running sums, over the counts at even and at odd positions of
    the flat array: a row's odd places are its odd positions when the row
    starts at an even position, its even positions otherwise.
    """
    on_even = np.zeros((len(cnts) + 1) // 2 + 1, dtype=np.int64)
    on_odd = np.zeros(len(cnts) // 2 + 1, dtype=np.int64)
    np.cumsum(cnts[0::2], out=on_even[1:])
    np.cumsum(cnts[1::2], out=on_odd[1:])
    a, b = offsets[:-1], offsets[1:]
    even = on_even[(b + 1) // 2] - on_even[(a + 1) // 2]
    odd = on_odd[b // 2] - on_odd[a // 2]
    starts_even = (a & 1) == 0
    return np.where(starts_even, even, odd), np.where(starts_even, odd, even)


def odd_sums(cnts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``[N]`` each row's sum of counts at odd places: its foreground pixels (``rleArea``)."""
    return _place_sums(cnts, offsets)[1]


def _decode(rle: np.ndarray, height: np.ndarray, width: np.ndarray):
    """Counts of compressed strings, checked: ``(cnts[C], offsets[N + 1], area[N])``."""
    n = len(rle)
    lens = np.fromiter(map(len, rle), dtype=np.int64, count=n)
    str_off = offsets_of(lens)
    buf = np.frombuffer(b"".join(rle), dtype=np.uint8)
    return _decode_joined(buf, str_off, height, width)


def _decode_joined(
    buf: np.ndarray, str_off: np.ndarray, height: np.ndarray, width: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_decode` of strings back to back in ``buf[B]`` uint8, row ``i`` at
    ``buf[str_off[i]:str_off[i + 1]]``."""
    x, per_row = _parse_numbers(buf, str_off)
    offsets = np.zeros(len(str_off), dtype=np.int64)
    np.cumsum(per_row, out=offsets[1:])
    cnts = _undo_deltas(x, offsets)
    if len(cnts) and cnts.min() < 0:
        row = _row_of(int(np.argmax(cnts < 0)), offsets)
        raise BadRle(row, "a negative run length")
    background, area = _place_sums(cnts, offsets)
    sums = background + area
    hw = height.astype(np.int64) * width.astype(np.int64)
    if (sums != hw).any():
        r = int(np.flatnonzero(sums != hw)[0])
        raise BadRle(
            r,
            f"run lengths add up to {int(sums[r])}, expected height * width = "
            f"{int(height[r])} * {int(width[r])} = {int(hw[r])}",
        )
    return cnts, offsets, area


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
    cnts, offsets, _ = _decode(rle, height, width)
    return cnts, offsets


def check_compressed(
    rle: np.ndarray, height: np.ndarray, width: np.ndarray, boxes: np.ndarray | None = None
) -> np.ndarray:
    """Check compressed strings are masks of their sizes; return their areas.

    Args:
        rle: ``[N]`` object array of ``bytes``; height, width: ``[N]`` int64.
        boxes: ``[N, 4]`` int64 to fill with :func:`foreground_boxes`, or None.

    Returns:
        ``area[N]`` int64 foreground pixels (pycocotools' ``rleArea``: the
        sum of the counts at odd places).

    Raises:
        BadRle: as :func:`decode_counts` says, for the first bad row.
    """
    lengths = np.fromiter(map(len, rle), dtype=np.int64, count=len(rle))
    buf = np.frombuffer(b"".join(rle), dtype=np.uint8)
    return check_joined(buf, lengths, height, width, boxes, tight=True)


def foreground_boxes(cnts: np.ndarray, offsets: np.ndarray, height: np.ndarray) -> np.ndarray:
    """``[N, 4]`` int64 inclusive pixel boxes ``x0, y0, x1, y1`` of checked counts.

    Each box holds every foreground pixel of its mask (pixel ``p`` is at
    column ``p // h``, row ``p % h``); a mask without one has ``x1 < x0``.
    A run that goes on into the next column covers that column's top and
    the previous one's bottom, so its rows are all of them.

    Args:
        cnts: ``[C]`` counts, offsets: ``[N + 1]`` as :func:`decode_counts` gives them;
        height: ``[N]`` each mask's height.
    """
    n = len(offsets) - 1
    box = np.zeros((n, 4), dtype=np.int64)
    box[:, 2:] = -1
    if not len(cnts):
        return box
    per_row = np.diff(offsets)
    row_of = np.repeat(np.arange(n, dtype=np.int32), per_row)
    # Foreground runs are at odd places: odd positions of rows that start
    # at an even position, even ones of the others.
    odd = np.zeros(len(cnts), dtype=bool)
    odd[1::2] = True
    odd ^= np.repeat((offsets[:-1] & 1).astype(bool), per_row)
    odd &= cnts > 0
    fg = np.flatnonzero(odd)
    if not len(fg):
        return box
    total = np.zeros(len(cnts) + 1, dtype=np.int64)
    np.cumsum(cnts, out=total[1:])
    row = row_of[fg]
    # Each run's first and last pixel, counted from its row's start.
    last = total[fg + 1] - total[offsets[:-1]][row] - 1
    first = last - cnts[fg] + 1
    h = height[row]
    x0, x1 = _floor_div(first, h), _floor_div(last, h)
    y0, y1 = first - x0 * h, last - x1 * h
    spans = x1 > x0
    y0[spans] = 0
    y1[spans] = h[spans] - 1
    starts = np.searchsorted(row, np.arange(n + 1))
    has = np.flatnonzero(starts[1:] > starts[:-1])
    at = starts[has]
    box[has, 0] = x0[at]
    box[has, 2] = x1[starts[has + 1] - 1]
    box[has, 1] = np.minimum.reduceat(y0, at)
    box[has, 3] = np.maximum.reduceat(y1, at)
    return box


def column_boxes(
    cnts: np.ndarray, offsets: np.ndarray, height: np.ndarray, width: np.ndarray
) -> np.ndarray:
    """``[N, 4]`` boxes as :func:`foreground_boxes` gives them, but rows ``0 .. h - 1``.

    The first and last columns come from the first and last foreground
    pixels alone (a few values per mask, where the exact rows need every
    run): the box still holds every foreground pixel.  A mask whose first
    or last foreground run is empty (pycocotools never writes one) is read
    run by run.
    """
    n = len(offsets) - 1
    box = np.zeros((n, 4), dtype=np.int64)
    box[:, 2:] = -1
    a, b = offsets[:-1], offsets[1:]
    k = b - a
    some = k >= 2
    hw = height.astype(np.int64) * width.astype(np.int64)
    first = np.zeros(n, dtype=np.int64)
    last = np.zeros(n, dtype=np.int64)
    first[some] = cnts[a[some]]
    # An even number of counts ends in foreground, an odd one in background.
    ends_fg = some & (k % 2 == 0)
    ends_bg = some & (k % 2 == 1)
    last[ends_fg] = hw[ends_fg] - 1
    last[ends_bg] = hw[ends_bg] - cnts[b[ends_bg] - 1] - 1
    plain = np.ones(n, dtype=bool)
    plain[some] = cnts[a[some] + 1] > 0
    plain[ends_fg] &= cnts[b[ends_fg] - 1] > 0
    plain[ends_bg] &= cnts[b[ends_bg] - 2] > 0
    if not plain.all():
        return foreground_boxes(cnts, offsets, height)
    rows = np.flatnonzero(some)
    h = height[rows].astype(np.int64)
    box[rows, 0] = first[rows] // h
    box[rows, 2] = last[rows] // h
    box[rows, 3] = h - 1
    return box


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a // b`` of non-negative int64 ``a`` and positive ``b`` (below 2**52), through
    floating point (several times faster than integer division), corrected to exact."""
    q = (a / b).astype(np.int64)
    r = a - q * b
    q -= r < 0
    q += r >= b
    return q


def check_joined(
    buf: np.ndarray,
    lengths: np.ndarray,
    height: np.ndarray,
    width: np.ndarray,
    boxes: np.ndarray | None = None,
    tight: bool = False,
) -> np.ndarray:
    """:func:`check_compressed` of strings stored back to back.

    Args:
        buf: ``[B]`` uint8, the strings one after the other.
        lengths: ``[N]`` int each string's length (they add up to ``B``).
        height, width: ``[N]`` int64 each mask's size.
        boxes: ``[N, 4]`` int64 to fill with :func:`column_boxes` (``tight``:
            :func:`foreground_boxes`), or None.

    Returns:
        ``area[N]`` int64.

    Raises:
        BadRle: as :func:`decode_counts` says, for the first bad row.
    """
    n = len(lengths)
    str_off = offsets_of(lengths)
    kernel = compiled()
    if kernel is not None:
        return _check_compiled(kernel, buf, str_off, height, width, boxes)
    area = np.zeros(n, dtype=np.int64)
    for lo in range(0, n, _CHUNK_ROWS):
        hi = min(n, lo + _CHUNK_ROWS)
        part = str_off[lo : hi + 1]
        try:
            cnts, offsets, area[lo:hi] = _decode_joined(
                buf[part[0] : part[-1]], part - part[0], height[lo:hi], width[lo:hi]
            )
        except BadRle as exc:
            raise BadRle(exc.row + lo, exc.reason) from None
        if boxes is not None and tight:
            boxes[lo:hi] = foreground_boxes(cnts, offsets, height[lo:hi])
        elif boxes is not None:
            boxes[lo:hi] = column_boxes(cnts, offsets, height[lo:hi], width[lo:hi])
    return area


def _check_compiled(
    kernel, buf: np.ndarray, str_off: np.ndarray, height, width, boxes: np.ndarray | None
) -> np.ndarray:
    """:func:`check_joined` by the compiled kernel: one pass over each string.

    Its boxes are the tight ones of :func:`foreground_boxes` (a box that
    holds every foreground pixel, as ``boxes`` asks).  A bad row is read
    again by the numpy reader alone, which says what is wrong with it.
    """
    n = len(str_off) - 1
    h = np.ascontiguousarray(height, dtype=np.int64)
    w = np.ascontiguousarray(width, dtype=np.int64)
    area = np.zeros(n, dtype=np.int64)
    out = np.zeros((n, 4), dtype=np.int64)
    data = np.ascontiguousarray(buf, dtype=np.uint8)
    bad = kernel.check(data, str_off, h, w, area, out)
    if bad >= 0:
        a, b = int(str_off[bad]), int(str_off[bad + 1])
        one = np.array([0, b - a], dtype=np.int64)
        try:
            _decode_joined(data[a:b], one, h[bad : bad + 1], w[bad : bad + 1])
        except BadRle as exc:
            raise BadRle(bad, exc.reason) from None
        raise BadRle(bad, f"not a mask of {int(h[bad])} x {int(w[bad])} pixels")
    if boxes is not None:
        boxes[...] = out
    return area


def decode_joined(
    buf: np.ndarray, lengths: np.ndarray, height: np.ndarray, width: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(counts[C], offsets[N + 1])`` of strings stored back to back, checked.

    As :func:`decode_counts`, for ``N`` strings one after the other in
    ``buf[B]`` uint8, string ``i`` ``lengths[i]`` bytes long.

    Raises:
        BadRle: as :func:`decode_counts` says, for the first bad row.
    """
    cnts, offsets, _ = _decode_joined(buf, offsets_of(lengths), height, width)
    return cnts, offsets


def encode_counts(cnts: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pycocotools' compressed strings (``rleToString``) of ``N`` masks' counts, in one pass.

    Args:
        cnts: ``[C]`` int64 run lengths, background first; offsets: ``[N + 1]``,
            row ``i``'s counts are ``cnts[offsets[i]:offsets[i + 1]]``.

    Returns:
        ``(buf[B], lengths[N])``: uint8 the strings back to back, and each one's length.

    From a row's fourth count on, the number stored is the difference to the
    count two places before; each number takes as many 5-bit characters as
    a signed number of that many bits needs (``0x20``: another follows).
    """
    n = len(offsets) - 1
    x = np.asarray(cnts, dtype=np.int64).copy()
    place = np.arange(len(x), dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
    later = np.flatnonzero(place > 2)
    x[later] -= np.asarray(cnts, dtype=np.int64)[later - 2]
    # Characters per number: the fewest k with -2**(5k-1) <= x < 2**(5k-1).
    k = np.ones(len(x), dtype=np.int64)
    for bits in range(4, 63, 5):
        wider = (x < -(1 << bits)) | (x >= (1 << bits))
        if not wider.any():
            break
        k += wider
    char_off = offsets_of(k)
    number = np.repeat(np.arange(len(x)), k)
    j = np.arange(int(char_off[-1]), dtype=np.int64) - char_off[:-1][number]
    c = (x[number] >> (5 * j)) & 0x1F
    c |= np.where(j < k[number] - 1, 0x20, 0)
    buf = (c + 48).astype(np.uint8)
    lengths = char_off[offsets[1:]] - char_off[offsets[:-1]] if n else np.zeros(0, np.int64)
    return buf, lengths
