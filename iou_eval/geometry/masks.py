"""Instance masks: COCO segmentations to compressed RLE columns, and mask IoU / IoF.

Masks are encoded exactly as pycocotools' ``COCO.annToRLE`` / ``loadRes``
encode them, with pycocotools' own C rasteriser (``pycocotools._mask``), so
the compressed strings, areas and boxes are byte for byte the reference's;
overlaps are the numbers of ``pycocotools.mask.iou(dt, gt, iscrowd)``,
computed once per group (one image and category) by the compiled kernel
(:mod:`iou_eval.geometry.kernel`) or, without it, by pycocotools itself.  User
strings are checked by :mod:`iou_eval.geometry.rle` first (pycocotools checks
nothing).

Reading rules for COCO ``segmentation`` values (each is tested):

- A list of polygons (``[[x1, y1, x2, y2, ...], ...]``) is rasterised at its
  image's height and width, clipped there, each part with pycocotools'
  ``frPoly`` and the parts merged by union (``annToRLE``).
- A polygon part of exactly 4 numbers has no pixels, with a warning.
  pycocotools reads a *first* such part as a box ``[x, y, w, h]`` (and
  fails on the list), a later one as a 2-point outline with no pixels; one
  rule for every position keeps a mask independent of the parts' order.
- ``segmentation: []`` (and a missing one, ``None``) is an empty mask of the
  image's size (pycocotools fails on ``[]``).
- An uncompressed RLE (``{"counts": [ints], "size": [h, w]}``) is
  compressed with ``frUncompressedRLE``; a compressed one (``counts`` a
  ``str`` or ``bytes``) is used as it is.
- Errors (:class:`~iou_eval.errors.InputError` naming the file, the place
  such as ``annotations[12].segmentation[1]``, what was expected and found):
  a part with an odd count of numbers; a part of fewer than 3 points other
  than the 4-number case; numbers that are not finite or lie beyond
  ``COORD_LIMIT`` pixels (pycocotools converts ``5 * x`` to a C int and
  allocates the outline at 1/5 pixel: a far point is undefined behaviour or
  gigabytes); an RLE whose ``size`` differs from its image's height and
  width (pycocotools keeps such a mask at its own size: ``size_mismatch=
  "warn"`` does too, with a warning); uncompressed counts that are not non-negative integers adding up to
  ``h * w``; a compressed string that does not decode to such counts; any
  other type.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from pycocotools import _mask

from iou_eval.data.ordering import offsets_of
from iou_eval.errors import InputError
from iou_eval.escape import quoted
from iou_eval.geometry.kernel import compiled
from iou_eval.geometry.pairs import pairs_in_threads, thread_cuts
from iou_eval.geometry.rle import BadRle, check_compressed, check_joined, odd_sums

# Polygon coordinates beyond this many pixels are refused (see the module notes).
COORD_LIMIT = 1.0e6
# An RLE's height or width beyond this is refused (pycocotools counts pixels in 32 bits).
MAX_SIDE = 2**31 - 1


@dataclass(frozen=True)
class Strings:
    """``N`` byte strings kept in one buffer: no Python object per string.

    A forked worker that read a ``bytes`` object per mask would write each
    one's reference count, and so copy every page that holds one; reading a
    buffer copies nothing.  Columns taken from a column share its buffer.

    Attributes:
        data: ``[B]`` uint8; start, length: ``[N]`` int64, string ``i`` is
            ``data[start[i]:start[i] + length[i]]``.
    """

    data: np.ndarray
    start: np.ndarray
    length: np.ndarray

    @staticmethod
    def of(values: Sequence[bytes]) -> Strings:
        """The strings ``values`` joined into one buffer."""
        length = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        data = np.frombuffer(b"".join(values), dtype=np.uint8)
        return Strings(data, offsets_of(length)[:-1], length)

    def __len__(self) -> int:
        return len(self.start)

    def take(self, rows: np.ndarray) -> Strings:
        return Strings(self.data, self.start[rows], self.length[rows])

    def values(self, rows: np.ndarray | None = None) -> list[bytes]:
        """``bytes`` of ``rows`` (default all), made when asked."""
        view = memoryview(self.data.data)
        start = self.start if rows is None else self.start[rows]
        end = start + (self.length if rows is None else self.length[rows])
        return [bytes(view[a:b]) for a, b in zip(start.tolist(), end.tolist(), strict=True)]

    def joined(self) -> tuple[np.ndarray, np.ndarray]:
        """``(buffer[B'], lengths[N])``: the strings back to back, in row order."""
        n = len(self.start)
        contiguous = n == 0 or (
            self.start[0] == 0
            and np.array_equal(self.start[1:], np.cumsum(self.length[:-1]))
            and int(self.start[-1] + self.length[-1]) == len(self.data)
        )
        if contiguous:
            return self.data, self.length
        return np.frombuffer(b"".join(self.values()), dtype=np.uint8), self.length


@dataclass(frozen=True)
class MaskColumn:
    """The masks of ``N`` rows, each a compressed RLE of its image's size.

    Attributes:
        strings: pycocotools' compressed counts of each row, in one buffer.
        height, width: ``[N]`` int64 the mask's (its image's) size.
        area: ``[N]`` float64 foreground pixels (``pycocotools.mask.area``).
        box: ``[N, 4]`` int64 inclusive pixel boxes ``x0, y0, x1, y1`` that
            hold every foreground pixel (``x1 < x0``: none), when the loader
            had them; else :attr:`boxes` computes them on first use.
    """

    strings: Strings
    height: np.ndarray
    width: np.ndarray
    area: np.ndarray
    box: np.ndarray | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def of(
        rle: Sequence[bytes] | np.ndarray,
        height: np.ndarray,
        width: np.ndarray,
        area: np.ndarray,
        box: np.ndarray | None = None,
    ) -> MaskColumn:
        """A column of the strings ``rle[N]`` (``bytes``), joined into one buffer."""
        return MaskColumn(Strings.of(list(rle)), height, width, area, box)

    def __post_init__(self) -> None:
        n = len(self.strings)
        st = self.strings
        if st.data.dtype != np.uint8 or st.data.ndim != 1:
            raise ValueError(f"MaskColumn.strings.data: expected uint8[B], found {st.data.dtype}")
        expect = {
            "start": (st.start, np.int64, (n,)),
            "length": (st.length, np.int64, (n,)),
            "height": (self.height, np.int64, (n,)),
            "width": (self.width, np.int64, (n,)),
            "area": (self.area, np.float64, (n,)),
        }
        for name, (arr, dtype, shape) in expect.items():
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape != shape:
                found = (
                    f"{arr.dtype}{arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
                )
                raise ValueError(
                    f"MaskColumn.{name}: expected {np.dtype(dtype)}{shape}, found {found}"
                )
        if self.box is not None and (self.box.dtype != np.int64 or self.box.shape != (n, 4)):
            raise ValueError(
                f"MaskColumn.box: expected int64({n}, 4), found {self.box.dtype}{self.box.shape}"
            )

    def __len__(self) -> int:
        return len(self.strings)

    @property
    def rle(self) -> np.ndarray:
        """``[N]`` object array of ``bytes``, made when asked (a few rows: take them first)."""
        out = np.empty(len(self), dtype=object)
        out[:] = self.strings.values()
        return out

    @cached_property
    def boxes(self) -> np.ndarray:
        """``[N, 4]`` int64 boxes that hold every foreground pixel (see ``box``)."""
        if self.box is not None:
            return self.box
        box = np.zeros((len(self), 4), dtype=np.int64)
        buf, lengths = self.strings.joined()
        check_joined(buf, lengths, self.height, self.width, box, tight=True)
        return box

    def take(self, rows: np.ndarray) -> MaskColumn:
        """The rows selected by an integer or boolean index."""
        rows = np.asarray(rows)
        if rows.dtype == np.bool_:
            rows = np.flatnonzero(rows)
        box = self.__dict__.get("boxes", self.box)  # boxes computed already travel along
        return MaskColumn(
            self.strings.take(rows), self.height[rows], self.width[rows], self.area[rows],
            None if box is None else box[rows],
        )  # fmt: skip

    def rle_dicts(self, rows: np.ndarray | None = None) -> list[dict[str, Any]]:
        """pycocotools RLE dicts ``{"size": [h, w], "counts": bytes}`` of ``rows`` (default all).

        Built when asked, and only for those rows: the column keeps only the
        compressed strings (a dict per mask would cost about 300 bytes).
        """
        idx = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64)
        counts = self.strings.values(idx)
        sizes = np.stack([self.height[idx], self.width[idx]], axis=1).tolist()
        return [{"size": s, "counts": c} for s, c in zip(sizes, counts, strict=True)]


@dataclass(frozen=True)
class CheckedRles:
    """Compressed RLE strings a loader read and checked already (:func:`~iou_eval.geometry.rle.check_joined`).

    Attributes:
        strings: each row's string (length 0 where the row has none: its
            segmentation, if any, is elsewhere).
        size: ``[N, 2]`` int64 each string's own ``[height, width]``.
        area: ``[N]`` float64 its foreground pixels.
        box: ``[N, 4]`` int64 boxes holding its foreground (see :class:`MaskColumn`).
    """

    strings: Strings
    size: np.ndarray
    area: np.ndarray
    box: np.ndarray

    def take(self, rows) -> CheckedRles:
        return CheckedRles(
            self.strings.take(rows), self.size[rows], self.area[rows], self.box[rows]
        )

    @property
    def present(self) -> np.ndarray:
        """``[N]`` bool, the rows that have a string."""
        return self.size[:, 0] > 0


@dataclass(frozen=True)
class FlatPolygons:
    """Polygon segmentations as flat columns (no Python object per number).

    What the compiled reader gives for a ground truth's polygons.

    Attributes:
        values: float64 every polygon's numbers ``x1, y1, x2, y2, ...`` back to back.
        lengths: ``[P]`` int64 each polygon's count of numbers.
        parts: ``[N]`` int64 each row's count of polygons (0 where the row's
            mask is not given as polygons: its value is elsewhere).
    """

    values: np.ndarray
    lengths: np.ndarray
    parts: np.ndarray

    @property
    def present(self) -> np.ndarray:
        """``[N]`` bool, the rows whose mask is polygons."""
        return self.parts > 0

    def take(self, rows) -> FlatPolygons:
        """The rows ``rows`` (an index array, a mask or a slice), in that order."""
        if isinstance(rows, slice) and rows == slice(None):
            return self
        rows = np.arange(len(self.parts))[rows]
        counts = self.parts[rows]
        first_part = offsets_of(self.parts)[rows]
        new_start = offsets_of(counts)
        # Each kept polygon's index: its row's first, plus its place in the row.
        part = np.repeat(first_part - new_start[:-1], counts) + np.arange(int(new_start[-1]))
        lengths = self.lengths[part]
        new_off = offsets_of(lengths)
        at = np.repeat(offsets_of(self.lengths)[part] - new_off[:-1], lengths)
        at += np.arange(int(new_off[-1]))
        return FlatPolygons(self.values[at], lengths, counts)

    def parts_of(self, rows: np.ndarray):
        """As :func:`_polygon_parts` gives them for ``rows[M]`` (rows with polygons, ascending).

        Returns ``part_row[P]``, ``part_k[P]``, ``lens[P]``, ``flat``, ``part_off[P + 1]``.
        """
        taken = self.take(rows)
        counts = taken.parts
        part_row = np.repeat(rows, counts)
        part_k = np.arange(len(part_row)) - np.repeat(offsets_of(counts)[:-1], counts)
        return part_row, part_k, taken.lengths, taken.values, offsets_of(taken.lengths)


def column_from_rles(rle: Sequence[bytes], height: np.ndarray, width: np.ndarray) -> MaskColumn:
    """A :class:`MaskColumn` of compressed RLEs, checked, areas computed.

    Raises:
        BadRle: a string that is not a mask of its size (the first bad row).
    """
    strings = Strings.of(list(rle))
    h = np.asarray(height, dtype=np.int64)
    w = np.asarray(width, dtype=np.int64)
    area = check_joined(strings.data, strings.length, h, w).astype(np.float64)
    return MaskColumn(strings, h, w, area)


def encode_bitmaps(bitmaps: np.ndarray) -> list[bytes]:
    """The compressed RLE strings of ``[N, H, W]`` 0/1 masks, as ``pycocotools.mask.encode``
    makes them (one call for all ``N``, column-major as COCO counts pixels)."""
    rles = _mask.encode(np.asfortranarray(bitmaps.transpose(1, 2, 0), dtype=np.uint8))
    return [r["counts"] for r in rles]


# --------------------------------------------------------------------- places


@dataclass(frozen=True)
class _Places:
    """Where row ``i`` came from, for errors and warnings."""

    path: str | None
    origins: np.ndarray
    label: str

    def where(self, row: int, suffix: str = "") -> str:
        o = int(self.origins[row])
        if self.label == "line":
            return str(o)
        return f"{self.label}[{o}]{suffix}"

    def error(self, row: int, message: str, suffix: str = "", hint: str | None = None):
        return InputError(self.path, message, where=self.where(row, suffix), hint=hint)

    def file(self) -> str:
        return f"{self.path}: " if self.path else ""


def _places(path: str | None, origins: np.ndarray | None, label: str, n: int) -> _Places:
    origins = np.arange(n, dtype=np.int64) if origins is None else np.asarray(origins)
    return _Places(path, origins, label)


def _image_sizes(height, width, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``[N]`` int64 image heights and widths; 0 where unknown (NaN or <= 0)."""
    out = []
    for name, v in (("height", height), ("width", width)):
        a = np.broadcast_to(np.asarray(v, dtype=np.float64), (n,))
        known = np.isfinite(a) & (a > 0)
        if (a[known] != np.floor(a[known])).any():
            raise ValueError(f"image {name}s must be whole numbers of pixels")
        out.append(np.where(known, a, 0).astype(np.int64))
    return out[0], out[1]


@lru_cache(maxsize=256)
def _empty_rle(h: int, w: int) -> bytes:
    """The compressed RLE of an ``h x w`` mask with no pixels."""
    return _mask.frUncompressedRLE([{"counts": [h * w], "size": [h, w]}], h, w)[0]["counts"]


# ------------------------------------------------------------------- polygons


def _rasterise(flat: np.ndarray, off: np.ndarray, h: np.ndarray, w: np.ndarray) -> list[bytes]:
    """Compressed RLEs of the ``P`` polygon parts ``flat[off[i]:off[i + 1]]`` at sizes ``h[P]``, ``w[P]``.

    Args:
        flat: float64 the parts' numbers ``x1, y1, x2, y2, ...`` back to back.
        off: ``[P + 1]`` int64 where each part starts (and the end).

    The compiled kernel rasterises every part in one call, by ``frPoly``'s
    rule, byte for byte; without it, one ``frPoly`` call per image size.
    """
    n = len(off) - 1
    out: list[bytes] = [b""] * n
    if n == 0:
        return out
    kernel = compiled()
    if kernel is not None:
        # The same strings from the compiled kernel, every part in one call.
        lengths = np.zeros(n, dtype=np.int64)
        data = kernel.polygons(
            np.ascontiguousarray(flat, dtype=np.float64), np.ascontiguousarray(off, dtype=np.int64),
            np.ascontiguousarray(h, dtype=np.int64), np.ascontiguousarray(w, dtype=np.int64),
            lengths,
        )  # fmt: skip
        ends = np.cumsum(lengths).tolist()
        return [data[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    key = h * (int(w.max()) + 1) + w
    order = np.argsort(key, kind="stable")
    _, first, count = np.unique(key[order], return_index=True, return_counts=True)
    for a, c in zip(first.tolist(), count.tolist(), strict=True):
        idx = order[a : a + c].tolist()
        parts = [flat[off[i] : off[i + 1]] for i in idx]
        rles = _mask.frPoly(parts, int(h[idx[0]]), int(w[idx[0]]))
        for i, r in zip(idx, rles, strict=True):
            out[i] = r["counts"]
    return out


def _select_parts(
    flat: np.ndarray, off: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(flat', off')`` of the parts ``keep[K]`` alone (see :func:`_rasterise`)."""
    if len(keep) == len(off) - 1:
        return flat, off
    lens = off[keep + 1] - off[keep]
    new_off = offsets_of(lens)
    # Each kept number's position in flat: its part's start, plus its place in the part.
    at = np.repeat(off[keep] - new_off[:-1], lens) + np.arange(int(new_off[-1]))
    return flat[at], new_off


def _first_bad_part(
    lens: np.ndarray, flat: np.ndarray, part_off: np.ndarray, short_ok: bool = False
) -> tuple[int, str]:
    """The first polygon part that is an error, and why; ``(-1, "")`` if none.

    Parts of fewer than 3 points are errors unless ``short_ok``, except
    4-number parts (the caller gives those no pixels).
    """
    # NaN compares false: not within the limit, as an infinity is not.
    bad_value = ~(np.abs(flat) <= COORD_LIMIT)
    short = (lens < 6) & (lens != 4) & (not short_ok)
    bad = (lens % 2 == 1) | short
    if bad_value.any():
        n_bad = np.add.reduceat(np.concatenate([bad_value, [False]]), part_off[:-1])
        bad |= np.where(lens > 0, n_bad, 0) > 0
    if not bad.any():
        return -1, ""
    p = int(np.flatnonzero(bad)[0])
    n = int(lens[p])
    if n % 2 == 1:
        return p, f"a polygon needs an even count of numbers (x, y pairs), got {n}"
    if n < 6 and not short_ok:
        return p, f"a polygon needs at least 3 points (6 numbers), got {n} numbers"
    vals = flat[part_off[p] : part_off[p + 1]]
    v = vals[~np.isfinite(vals) | (np.abs(vals) > COORD_LIMIT)][0]
    if not np.isfinite(v):
        return p, f"polygon coordinates must be finite numbers, got {v}"
    return p, f"polygon coordinate {v} is beyond +-{COORD_LIMIT:g} pixels"


def _flat_numbers(parts: list, lens: np.ndarray) -> np.ndarray | int:
    """All numbers of ``parts`` as one float64 array, or the index of the first unreadable part."""
    kernel = compiled()
    if kernel is not None and isinstance(parts, list):
        # Lists of floats and ints (what JSON gives) read in C; anything
        # else is left to the loop below.
        flat = np.empty(int(lens.sum()), dtype=np.float64)
        if kernel.flatten(parts, flat) < 0:
            return flat
    try:
        return np.fromiter(
            itertools.chain.from_iterable(parts), dtype=np.float64, count=int(lens.sum())
        )
    except OverflowError:  # an integer beyond any float: infinite, which the checks refuse
        return np.fromiter(
            map(_float_or_inf, itertools.chain.from_iterable(parts)),
            dtype=np.float64,
            count=int(lens.sum()),
        )
    except (TypeError, ValueError):
        for i, p in enumerate(parts):
            try:
                np.fromiter(map(_float_or_inf, p), dtype=np.float64, count=len(p))
            except (TypeError, ValueError):
                return i
        raise


def _float_or_inf(v: Any) -> float:
    """``float(v)``; an integer too large for a float is infinite (with its sign)."""
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _polygon_parts(segs: Sequence[Any], rows: np.ndarray, places: _Places):
    """The parts of the polygon rows ``rows[M]``, checked for type.

    Returns:
        ``parts[P]`` (the lists as given), ``part_row[P]``, ``part_k[P]``
        (index within its segmentation), ``lens[P]``, ``flat`` float64 all
        numbers, ``part_off[P + 1]`` into ``flat``.
    """
    n_parts = np.fromiter((len(segs[r]) for r in rows), dtype=np.int64, count=len(rows))
    parts = list(itertools.chain.from_iterable(segs[r] for r in rows))
    part_row = np.repeat(rows, n_parts)
    part_k = np.arange(len(parts)) - np.repeat(np.cumsum(n_parts) - n_parts, n_parts)
    if not all(isinstance(p, (list, tuple, np.ndarray)) for p in parts):
        i = next(i for i, p in enumerate(parts) if not isinstance(p, (list, tuple, np.ndarray)))
        flat_list = isinstance(parts[i], (int, float))
        raise places.error(
            int(part_row[i]),
            "segmentation polygons must be lists of numbers [x1, y1, x2, y2, ...], got "
            + ("a list of numbers" if flat_list else f"a {type(parts[i]).__name__}"),
            ".segmentation",
            hint="one polygon is written [[x1, y1, x2, y2, ...]]" if flat_list else None,
        )
    lens = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    part_off = offsets_of(lens)
    flat = _flat_numbers(parts, lens)
    if isinstance(flat, int):
        raise places.error(
            int(part_row[flat]),
            "polygon coordinates must be numbers",
            f".segmentation[{int(part_k[flat])}]",
        )
    return parts, part_row, part_k, lens, flat, part_off


def _encode_polygons(
    segs: Sequence[Any],
    rows: np.ndarray,
    h: np.ndarray,
    w: np.ndarray,
    places: _Places,
    polygons: FlatPolygons | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Compressed RLEs ``[M]`` of the polygon rows ``rows[M]``, and warnings.

    Each part is rasterised by ``frPoly`` at its image's size; a row of
    several parts is their union (``annToRLE``: ``merge(frPyObjects(...))``).
    With ``polygons`` the rows' numbers are there (not in ``segs``).
    """
    if polygons is None:
        _, part_row, part_k, lens, flat, part_off = _polygon_parts(segs, rows, places)
    else:
        part_row, part_k, lens, flat, part_off = polygons.parts_of(rows)
    p, why = _first_bad_part(lens, flat, part_off)
    if p >= 0:
        raise places.error(int(part_row[p]), why, f".segmentation[{int(part_k[p])}]")
    if (h[rows] <= 0).any() or (w[rows] <= 0).any():
        r = int(rows[(h[rows] <= 0) | (w[rows] <= 0)][0])
        raise places.error(r, "a polygon mask needs its image's height and width", ".segmentation")
    warnings = []
    box_like = lens == 4
    if box_like.any():
        first = int(np.flatnonzero(box_like)[0])
        where = places.where(int(part_row[first]), f".segmentation[{int(part_k[first])}]")
        warnings.append(
            f"{places.file()}{int(box_like.sum())} polygon part(s) of 4 numbers have no pixels "
            f"(first: {where}); pycocotools reads a first part of 4 numbers as a box"
        )
    keep = np.flatnonzero(~box_like)
    kept_row = part_row[keep]
    rles = _rasterise(*_select_parts(flat, part_off, keep), h[kept_row], w[kept_row])
    return _merge_parts(rows, kept_row, rles, h, w), warnings


def _merge_parts(
    rows: np.ndarray, kept_row: np.ndarray, rles: list[bytes], h: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """``[M]`` one RLE per row of ``rows``: its only part, the union of several, or empty."""
    out = np.empty(len(rows), dtype=object)
    pos = np.searchsorted(rows, kept_row)
    n = np.bincount(pos, minlength=len(rows))
    start = np.cumsum(n) - n
    single = np.flatnonzero(n == 1)
    if len(single):
        arr = np.empty(len(rles), dtype=object)
        arr[:] = rles
        out[single] = arr[start[single]]
    for i in np.flatnonzero(n != 1).tolist():
        r = int(rows[i])
        hw = [int(h[r]), int(w[r])]
        if n[i] == 0:
            out[i] = _empty_rle(*hw)
        else:
            parts = [{"size": hw, "counts": c} for c in rles[start[i] : start[i] + n[i]]]
            out[i] = _mask.merge(parts, 0)["counts"]
    return out


# ------------------------------------------------------------------------ RLE


def _given_sizes(segs: Sequence[Any], rows: np.ndarray, places) -> np.ndarray:
    """``[M, 2]`` int64 the ``size`` of the RLE rows ``rows[M]``, each checked."""
    sizes = [segs[r].get("size") for r in rows.tolist()]
    wh = None
    # Fast path: every size a pair of Python ints (not bools), all positive.
    if all(type(v) is list and len(v) == 2 for v in sizes) and set(
        map(type, itertools.chain.from_iterable(sizes))
    ) <= {int}:
        try:
            wh = np.array(sizes, dtype=np.int64).reshape(-1, 2)
        except OverflowError:  # a size beyond 64 bits: refused below, with its place
            wh = None
    if wh is None or (wh <= 0).any() or (wh > MAX_SIDE).any():
        for r, size in zip(rows.tolist(), sizes, strict=True):
            _check_size(size, r, places)
        wh = np.array([[int(v) for v in size] for size in sizes], dtype=np.int64).reshape(-1, 2)
    return wh


def _fit_sizes(
    rows: np.ndarray, wh: np.ndarray, h: np.ndarray, w: np.ndarray, places, mismatch: str
) -> list[str]:
    """Compare RLE sizes ``wh[M, 2]`` of ``rows[M]`` (ascending) with their images'.

    A size that differs from a known image size is an error, or with
    ``mismatch="warn"`` a warning, the mask keeping its own size (as
    pycocotools keeps it: such a mask then overlaps masks of another size
    by -1).  Unknown image sizes are filled in from the RLEs.
    """
    known = (h[rows] > 0) & (w[rows] > 0)
    off = known & ((wh[:, 0] != h[rows]) | (wh[:, 1] != w[rows]))
    warnings = []
    if off.any():
        i = int(np.flatnonzero(off)[0])
        r = int(rows[i])
        what = f"RLE size [{wh[i, 0]}, {wh[i, 1]}], image height {int(h[r])} and width {int(w[r])}"
        if mismatch == "error":
            raise places.error(r, f"the mask does not fit its image: {what}", ".segmentation.size")
        warnings.append(
            f"{places.file()}{int(off.sum())} RLE mask(s) differ in size from their image "
            f"(first: {places.where(r, '.segmentation.size')}: {what}); they keep their own "
            "size and overlap masks of another size by -1, as in pycocotools"
        )
    take = ~known | off
    h[rows[take]] = wh[take, 0]
    w[rows[take]] = wh[take, 1]
    return warnings


def _check_size(size: Any, row: int, places: _Places) -> None:
    """Refuse an RLE ``size`` that is not two positive whole numbers."""
    ok = isinstance(size, (list, tuple)) and len(size) == 2
    ok = ok and all(
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and 0 < v <= MAX_SIDE
        and float(v).is_integer()
        for v in size
    )
    if not ok:
        raise places.error(
            row,
            f"an RLE's size must be [height, width], two positive integers up to {MAX_SIDE}, "
            f"got {quoted(size)}",
            ".segmentation.size",
        )


def _encode_uncompressed(
    segs: Sequence[Any], rows: np.ndarray, h: np.ndarray, w: np.ndarray, places: _Places
) -> tuple[np.ndarray, np.ndarray]:
    """Compressed RLEs ``[M]`` of uncompressed RLE rows (``frUncompressedRLE``) and areas ``[M]``."""
    lists = [segs[r]["counts"] for r in rows.tolist()]
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = _flat_numbers(lists, lens)
    if isinstance(flat, int):
        raise places.error(
            int(rows[flat]), "uncompressed RLE counts must be integers", ".segmentation.counts"
        )
    off = offsets_of(lens)
    bad = ~np.isfinite(flat) | (flat < 0) | (flat != np.floor(flat)) | (flat >= 2**32)
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        raise places.error(
            int(rows[np.searchsorted(off, p, side="right") - 1]),
            f"uncompressed RLE counts must be non-negative integers, got {flat[p]}",
            ".segmentation.counts",
        )
    counts = flat.astype(np.int64)
    total = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=total[1:])
    sums = total[off[1:]] - total[off[:-1]]
    hw = h[rows] * w[rows]
    if (sums != hw).any():
        i = int(np.flatnonzero(sums != hw)[0])
        raise places.error(
            int(rows[i]),
            f"uncompressed RLE counts add up to {int(sums[i])}, expected height * width = "
            f"{int(h[rows[i]])} * {int(w[rows[i]])} = {int(hw[i])}",
            ".segmentation.counts",
        )
    c32 = counts.astype(np.uint32)
    objs = [
        {"counts": c32[off[i] : off[i + 1]], "size": [int(h[r]), int(w[r])]}
        for i, r in enumerate(rows.tolist())
    ]
    out = np.empty(len(rows), dtype=object)
    out[:] = [o["counts"] for o in _mask.frUncompressedRLE(objs, 0, 0)]
    return out, odd_sums(counts, off).astype(np.float64)


def _compressed(segs: Sequence[Any], rows: np.ndarray, places: _Places) -> np.ndarray:
    """``[M]`` the compressed strings of compressed RLE rows, as bytes (used as they are)."""
    counts = [segs[r]["counts"] for r in rows.tolist()]
    out = np.empty(len(rows), dtype=object)
    try:
        out[:] = [c.encode("ascii") if type(c) is str else c for c in counts]
    except UnicodeEncodeError:
        for r, c in zip(rows.tolist(), counts, strict=True):
            if isinstance(c, str) and not c.isascii():
                raise places.error(
                    r,
                    "compressed RLE counts must be ASCII characters '0'..'o'",
                    ".segmentation.counts",
                ) from None
        raise
    return out


# ------------------------------------------------------------------- encoding

_EMPTY, _POLY, _UNCOMPRESSED, _COMPRESSED, _CHECKED = 0, 1, 2, 3, 4


def _classify(segs: Sequence[Any], places: _Places) -> np.ndarray:
    """``[N]`` int8: how each segmentation is written (empty, polygons, RLE)."""
    kind = []
    for i, seg in enumerate(segs):
        t = type(seg)
        if t is dict:
            tc = type(seg.get("counts"))
            if tc is str or tc is bytes:
                kind.append(_COMPRESSED)
                continue
            if tc is list:
                kind.append(_UNCOMPRESSED)
                continue
        elif t is list:
            kind.append(_POLY if seg else _EMPTY)
            continue
        kind.append(_classify_slowly(seg, i, places))
    return np.asarray(kind, dtype=np.int8)


def _classify_slowly(seg: Any, i: int, places: _Places) -> int:
    """The kind of a segmentation of a less common type (subclasses, None), or the error."""
    if isinstance(seg, list):
        return _POLY if seg else _EMPTY
    if isinstance(seg, dict):
        c = seg.get("counts")
        if isinstance(c, list):
            return _UNCOMPRESSED
        if isinstance(c, (str, bytes)):
            return _COMPRESSED
        got = "no 'counts'" if c is None else f"counts of type {type(c).__name__}"
        raise places.error(
            i,
            f"an RLE segmentation needs 'counts' (a list of integers or a string), got {got}",
            ".segmentation",
        )
    if seg is None:
        return _EMPTY
    raise places.error(
        i,
        "segmentation must be a list of polygons or an RLE dict {counts, size}, "
        f"got {type(seg).__name__}",
        ".segmentation",
    )


def _kinds(
    segs: Sequence[Any],
    checked: CheckedRles | None,
    places: _Places,
    polygons: FlatPolygons | None = None,
) -> np.ndarray:
    """``[N]`` int8 how each row's mask is given; rows of ``checked`` (or ``polygons``) first."""
    if polygons is not None:
        kind = np.full(len(segs), _POLY, dtype=np.int8)
        rest = np.flatnonzero(~polygons.present)
        if len(rest):
            sub = _places(places.path, places.origins[rest], places.label, len(rest))
            kind[rest] = _classify([segs[r] for r in rest.tolist()], sub)
            if (kind[rest] == _POLY).any():
                raise ValueError("polygons given both flat and as values")
        return kind
    if checked is None:
        return _classify(segs, places)
    present = checked.present
    kind = np.full(len(segs), _CHECKED, dtype=np.int8)
    rest = np.flatnonzero(~present)
    if len(rest):
        sub = _places(places.path, places.origins[rest], places.label, len(rest))
        kind[rest] = _classify([segs[r] for r in rest.tolist()], sub)
    return kind


def _all_rle_sizes(
    segs: Sequence[Any],
    kind: np.ndarray,
    checked: CheckedRles | None,
    h: np.ndarray,
    w: np.ndarray,
    places: _Places,
    mismatch: str,
) -> list[str]:
    """:func:`_fit_sizes` over every RLE row, those given as dicts and the checked ones."""
    rows = np.flatnonzero((kind == _UNCOMPRESSED) | (kind == _COMPRESSED))
    if checked is None:
        return _fit_sizes(rows, _given_sizes(segs, rows, places), h, w, places, mismatch)
    done = np.flatnonzero(kind == _CHECKED)
    if not len(rows):  # only the loader's strings (rows ascending already)
        return _fit_sizes(done, checked.size[done], h, w, places, mismatch)
    wh = np.concatenate([_given_sizes(segs, rows, places), checked.size[done]])
    rows = np.concatenate([rows, done])
    order = np.argsort(rows, kind="stable")
    return _fit_sizes(rows[order], wh[order], h, w, places, mismatch)


def _fill_empty(rle: np.ndarray, rows: np.ndarray, h, w, places: _Places) -> None:
    """Empty masks of their images' sizes for ``rows``."""
    unknown = (h[rows] <= 0) | (w[rows] <= 0)
    if unknown.any():
        r = int(rows[unknown][0])
        raise places.error(r, "an empty mask needs its image's height and width", ".segmentation")
    for r in rows.tolist():
        rle[r] = _empty_rle(int(h[r]), int(w[r]))


def _encode_compressed(
    segs: Sequence[Any], rows: np.ndarray, h: np.ndarray, w: np.ndarray, places: _Places
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compressed RLE rows ``rows[M]`` checked: strings ``[M]``, areas ``[M]``, boxes ``[M, 4]``."""
    rle = _compressed(segs, rows, places)
    box = np.zeros((len(rows), 4), dtype=np.int64)
    try:
        area = check_compressed(rle, h[rows], w[rows], box)
    except BadRle as exc:
        r = int(rows[exc.row])
        raise places.error(
            r,
            f"compressed RLE counts are not a mask of size [{int(h[r])}, {int(w[r])}]: "
            f"{exc.reason}",
            ".segmentation.counts",
        ) from None
    return rle, area, box


def encode_segmentations(
    segs: Sequence[Any],
    height: np.ndarray,
    width: np.ndarray,
    *,
    path: str | None = None,
    origins: np.ndarray | None = None,
    origin_label: str = "annotations",
    size_mismatch: str = "error",
    checked: CheckedRles | None = None,
    polygons: FlatPolygons | None = None,
) -> tuple[MaskColumn, list[str]]:
    """Encode COCO ``segmentation`` values as pycocotools' ``annToRLE`` does.

    Args:
        segs: ``[N]`` values as decoded from JSON: polygon lists, RLE dicts,
            ``[]`` or ``None`` (no mask: empty).
        height, width: ``[N]`` each row's image size in pixels; NaN or 0 for
            unknown (then an RLE's own ``size`` is taken, and a polygon or an
            empty mask is an error).
        path, origins, origin_label: where rows came from, for messages:
            row ``i`` is ``f"{origin_label}[{origins[i]}]"`` of ``path``.
        size_mismatch: ``"error"`` (default): an RLE whose ``size`` is not
            its image's is an InputError; ``"warn"``: a warning, and the mask
            keeps its own size, as pycocotools keeps it.
        checked: compressed RLEs the loader read and checked for the rows
            where ``checked.present`` (their ``segs`` are not read); their
            sizes are compared with the images' as any RLE's.
        polygons: the polygons of the rows where ``polygons.present`` as
            flat columns (their ``segs`` are not read); not with ``checked``.

    Returns:
        ``(MaskColumn[N], warnings)``.  See the module notes for the rules and
        the errors (:class:`~iou_eval.errors.InputError`).
    """
    if size_mismatch not in ("error", "warn"):
        raise ValueError(f"size_mismatch must be 'error' or 'warn', got {size_mismatch!r}")
    n = len(segs)
    h, w = _image_sizes(height, width, n)
    places = _places(path, origins, origin_label, n)
    kind = _kinds(segs, checked, places, polygons)
    warnings = _all_rle_sizes(segs, kind, checked, h, w, places, size_mismatch)
    if checked is not None and (kind == _CHECKED).all():
        # Every mask is one of the loader's strings: its buffer, as it is.
        area = checked.area.astype(np.float64)
        return MaskColumn(checked.strings, h, w, area, checked.box), warnings
    rle = np.empty(n, dtype=object)
    area = np.zeros(n, dtype=np.float64)
    box = np.zeros((n, 4), dtype=np.int64)
    rows = np.flatnonzero(kind == _CHECKED)
    if checked is not None and len(rows):
        rle[rows] = checked.strings.values(rows)
        area[rows], box[rows] = checked.area[rows], checked.box[rows]
    poly = np.flatnonzero(kind == _POLY)
    if len(poly):
        rle[poly], poly_warnings = _encode_polygons(segs, poly, h, w, places, polygons)
        warnings += poly_warnings
    rows = np.flatnonzero(kind == _UNCOMPRESSED)
    if len(rows):
        rle[rows], area[rows] = _encode_uncompressed(segs, rows, h, w, places)
    rows = np.flatnonzero(kind == _COMPRESSED)
    if len(rows):
        rle[rows], area[rows], box[rows] = _encode_compressed(segs, rows, h, w, places)
    _fill_empty(rle, np.flatnonzero(kind == _EMPTY), h, w, places)
    # The strings pycocotools made: their boxes (the matcher's bounds), and
    # the polygons' areas (rleArea) on the way.
    made = np.flatnonzero((kind == _POLY) | (kind == _UNCOMPRESSED) | (kind == _EMPTY))
    if len(made):
        made_box = np.zeros((len(made), 4), dtype=np.int64)
        made_area = check_compressed(rle[made], h[made], w[made], made_box)
        box[made] = made_box
        is_poly = kind[made] == _POLY
        area[made[is_poly]] = made_area[is_poly]
    return MaskColumn.of(rle, h, w, area, box), warnings


def polygon_rles(
    polygons: Sequence[np.ndarray],
    height: np.ndarray,
    width: np.ndarray,
    *,
    path: str | None = None,
    origins: np.ndarray | None = None,
    origin_label: str = "line",
) -> tuple[MaskColumn, list[str]]:
    """Masks of one polygon per row (YOLO-seg), rasterised as pycocotools does.

    Args:
        polygons: ``[N]`` float64 flat arrays ``x1, y1, x2, y2, ...`` in
            absolute pixels of the upright image.
        height, width: ``[N]`` each row's image size.
        path, origins, origin_label: where rows came from (line numbers).

    Returns:
        ``(MaskColumn[N], warnings)``.  A contour of 0, 1 or 2 points has no
        pixels (one warning names the count and the first place); an odd
        count of numbers, a non-finite number, a coordinate beyond
        ``COORD_LIMIT`` or an image without a size is an InputError.
    """
    n = len(polygons)
    h, w = _image_sizes(height, width, n)
    places = _places(path, origins, origin_label, n)
    parts = [np.asarray(p, dtype=np.float64).reshape(-1) for p in polygons]
    lens = np.fromiter(map(len, parts), dtype=np.int64, count=n)
    off = offsets_of(lens)
    flat = np.concatenate(parts) if n else np.zeros(0)
    p, why = _first_bad_part(lens, flat, off, short_ok=True)
    if p >= 0:
        raise places.error(p, why)
    if ((h <= 0) | (w <= 0)).any():
        raise places.error(int(np.flatnonzero((h <= 0) | (w <= 0))[0]), "the image has no size")
    short = lens < 6
    warnings = []
    if short.any():
        first = int(np.flatnonzero(short)[0])
        warnings.append(
            f"{places.file()}{int(short.sum())} polygon(s) of fewer than 3 points have no pixels "
            f"(first: {places.where(first)})"
        )
    rle = np.empty(n, dtype=object)
    keep = np.flatnonzero(~short)
    rle[keep] = _rasterise(*_select_parts(flat, off, keep), h[keep], w[keep])
    _fill_empty(rle, np.flatnonzero(short), h, w, places)
    # Areas (pycocotools' rleArea) and boxes, read from the strings at once.
    box = np.zeros((n, 4), dtype=np.int64)
    area = check_compressed(rle, h, w, box).astype(np.float64)
    return MaskColumn.of(rle, h, w, area, box), warnings


def mask_boxes(column: MaskColumn) -> np.ndarray:
    """``[N, 4]`` float64 ``xywh`` boxes of the masks, as ``pycocotools.mask.toBbox`` gives them.

    (``loadRes`` gives a mask result without a ``bbox`` this box.)  The
    areas are ``column.area``, as ``pycocotools.mask.area`` gives them.
    """
    if len(column) == 0:
        return np.zeros((0, 4), dtype=np.float64)
    kernel = compiled()
    if kernel is not None:
        out = np.zeros((len(column), 4), dtype=np.float64)
        kernel.bboxes(*_kernel_side(column), out)
        return out
    return np.asarray(_mask.toBbox(column.rle_dicts()), dtype=np.float64).reshape(-1, 4)


def _kernel_side(column: MaskColumn) -> tuple[np.ndarray, ...]:
    """``(buffer, start, length, height, width)`` of a column, as the compiled kernel reads them."""
    st = column.strings
    return tuple(
        np.ascontiguousarray(a, dtype=t)
        for a, t in (
            (st.data, np.uint8), (st.start, np.int64), (st.length, np.int64),
            (column.height, np.int64), (column.width, np.int64),
        )
    )  # fmt: skip


# -------------------------------------------------------------------- overlap
#
# Overlaps are computed a group (one image and category) at a time: each
# string of the group is read once for the group's whole [D, G] matrix, or
# for its listed pairs.  The compiled kernel (iou_eval/geometry/_rlekernel.c) reads
# the strings and walks the runs itself, with pycocotools' arithmetic (its
# 32-bit counts, its box test first, -1 for masks of different sizes); where
# it is not built, pycocotools' ``iou`` is called once per group (a call per
# prediction would pay its Python overhead hundreds of thousands of times).


def _iou(dt: list, gt: list, crowd: np.ndarray) -> np.ndarray:
    """``[D, G]`` ``pycocotools.mask.iou`` (which gives ``[]`` for an empty side)."""
    if not dt or not gt:
        return np.zeros((len(dt), len(gt)), dtype=np.float64)
    return _mask.iou(dt, gt, crowd)


def mask_overlaps(pred: MaskColumn, gt: MaskColumn, gt_crowd: np.ndarray) -> np.ndarray:
    """``[D, G]`` float64 overlaps of every prediction with every ground truth.

    ``pycocotools.mask.iou(dt_rles, gt_rles, gt_crowd)``: intersection over
    union of the pixel counts, or over the prediction's area for a crowd
    ground truth (IoF); exactly 0 when the masks' boxes are apart; -1 for a
    pair of masks of different sizes (not one image).  A ``[D, G]`` array
    also when ``D`` or ``G`` is 0 (pycocotools gives ``[]``).
    """
    crowd = np.asarray(gt_crowd, dtype=np.uint8).reshape(-1)
    return _iou(pred.rle_dicts(), gt.rle_dicts(), crowd)


def mask_overlaps_batched(
    pred: MaskColumn,
    gt: MaskColumn,
    gt_crowd: np.ndarray,
    pred_rows: np.ndarray,
    pred_starts: np.ndarray,
    gt_rows: np.ndarray,
    gt_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``[D_k, G_k]`` overlap matrices of ``K`` groups, one pycocotools call each.

    Args:
        pred, gt: the columns the rows index; gt_crowd: ``[len(gt)]`` bool.
        pred_rows: rows of ``pred``, group by group; pred_starts: ``[K + 1]``
            offsets, group ``k`` is ``pred_rows[pred_starts[k]:pred_starts[k + 1]]``.
        gt_rows, gt_starts: the same for the ground truth.

    Returns:
        ``(values, offsets[K + 1])`` float64 and int64: group ``k``'s matrix is
        ``values[offsets[k]:offsets[k + 1]].reshape(D_k, G_k)`` (row-major),
        equal to :func:`mask_overlaps` of its rows.
    """
    ps = np.asarray(pred_starts, dtype=np.int64)
    gs = np.asarray(gt_starts, dtype=np.int64)
    offsets = np.zeros(len(ps), dtype=np.int64)
    np.cumsum(np.diff(ps) * np.diff(gs), out=offsets[1:])
    values = np.zeros(int(offsets[-1]), dtype=np.float64)
    dt_objects, gt_objects = pred.rle_dicts, gt.rle_dicts
    d_arr = np.ascontiguousarray(pred_rows, dtype=np.int64)
    g_arr = np.ascontiguousarray(gt_rows, dtype=np.int64)
    kernel = compiled()
    if kernel is not None:
        # The same matrices from the compiled kernel: every pair of each
        # group listed, row-major, all groups in one call.
        group = np.repeat(np.arange(len(ps) - 1), np.diff(offsets))
        local = np.arange(len(values)) - offsets[group]
        width = np.diff(gs)[group]
        kernel.pair_ious(
            *_kernel_side(pred), *_kernel_side(gt), np.ascontiguousarray(gt_crowd, dtype=np.uint8),
            d_arr, ps, g_arr, gs, offsets, local // np.maximum(width, 1), local % np.maximum(width, 1),
            values,
        )  # fmt: skip
        return values, offsets
    crowd = np.asarray(gt_crowd, dtype=np.uint8)[g_arr]
    ps_l, gs_l, off_l = ps.tolist(), gs.tolist(), offsets.tolist()
    for k in np.flatnonzero(offsets[1:] > offsets[:-1]).tolist():
        a, b, c, e = ps_l[k], ps_l[k + 1], gs_l[k], gs_l[k + 1]
        m = _mask.iou(dt_objects(d_arr[a:b]), gt_objects(g_arr[c:e]), crowd[c:e])
        values[off_l[k] : off_l[k + 1]] = m.ravel()
    return values, offsets


def mask_pair_overlaps(
    pred: MaskColumn,
    gt: MaskColumn,
    gt_crowd: np.ndarray,
    pred_rows: np.ndarray,
    gt_rows: np.ndarray,
    pair_group: np.ndarray | None = None,
) -> np.ndarray:
    """``[P]`` float64 overlaps of the aligned pairs ``pred_rows[P]``, ``gt_rows[P]``.

    Each value is ``pycocotools.mask.iou([dt], [gt], [crowd])[0, 0]`` (see
    :func:`mask_overlaps`).  Pairs are computed a block at a time: the
    matrix of a block's distinct predictions by its distinct ground truths,
    one pycocotools call per block.

    Args:
        gt_crowd: ``[len(gt)]`` bool crowd flag of every ground-truth row.
        pair_group: ``[P]`` int, the block of each pair (such as the image
            both masks belong to); None: one block per distinct prediction.
    """
    d = np.asarray(pred_rows, dtype=np.int64)
    g = np.asarray(gt_rows, dtype=np.int64)
    if not len(d):
        return np.zeros(0, dtype=np.float64)
    block = d if pair_group is None else np.asarray(pair_group, dtype=np.int64)
    # Distinct (block, row) keys, sorted by block: each block's rows.
    d_keys, d_inv = np.unique(block * len(pred) + d, return_inverse=True)
    g_keys, g_inv = np.unique(block * len(gt) + g, return_inverse=True)
    blocks = np.unique(block)
    d_starts = np.searchsorted(d_keys // len(pred), blocks).tolist() + [len(d_keys)]
    g_starts = np.searchsorted(g_keys // len(gt), blocks).tolist() + [len(g_keys)]
    k = np.searchsorted(blocks, block)
    d_local = d_inv.reshape(-1) - np.asarray(d_starts)[k]
    g_local = g_inv.reshape(-1) - np.asarray(g_starts)[k]
    kernel = compiled()
    if kernel is not None:
        # The listed pairs only, each block's masks decoded once.
        order = np.argsort(k, kind="stable")
        p_starts = np.searchsorted(k[order], np.arange(len(blocks) + 1))
        out = np.zeros(len(d), dtype=np.float64)
        kernel.pair_ious(
            *_kernel_side(pred), *_kernel_side(gt), np.ascontiguousarray(gt_crowd, dtype=np.uint8),
            d_keys % len(pred), np.asarray(d_starts, dtype=np.int64),
            g_keys % len(gt), np.asarray(g_starts, dtype=np.int64),
            p_starts.astype(np.int64), d_local[order], g_local[order], out,
        )  # fmt: skip
        values = np.empty_like(out)
        values[order] = out
        return values
    values, offsets = mask_overlaps_batched(
        pred, gt, gt_crowd, d_keys % len(pred), d_starts, g_keys % len(gt), g_starts
    )
    width = np.diff(g_starts)[k]
    return values[offsets[k] + d_local * width + g_local]


_MASK_PAIR_CHUNK = 1 << 16


def overlap_bounds(
    dt: MaskColumn, gt: MaskColumn, gt_crowd: np.ndarray, dt_rows: np.ndarray, gt_rows: np.ndarray
) -> np.ndarray:
    """``[P]`` float64 an upper bound of each pair's :func:`mask_overlaps` value.

    The intersection is at most the smaller area and the area where the
    masks' boxes meet (``I``); the union at least ``a_dt + a_gt - I``, or
    ``a_dt`` for a crowd region.  pycocotools divides the true counts, which
    are below these, and rounding keeps the order: a pair whose bound is
    under a threshold has an overlap under it.

    Args:
        dt_rows, gt_rows: ``[P]`` the pairs' rows; gt_crowd: ``[len(gt)]`` bool.
    """
    bd, bg = dt.boxes, gt.boxes
    width = np.minimum(bd[dt_rows, 2], bg[gt_rows, 2]) - np.maximum(bd[dt_rows, 0], bg[gt_rows, 0])
    height = np.minimum(bd[dt_rows, 3], bg[gt_rows, 3]) - np.maximum(bd[dt_rows, 1], bg[gt_rows, 1])
    meet = (np.maximum(width + 1, 0) * np.maximum(height + 1, 0)).astype(np.float64)
    a_dt, a_gt = dt.area[dt_rows], gt.area[gt_rows]
    inter = np.minimum(np.minimum(a_dt, a_gt), meet)
    union = np.where(gt_crowd[gt_rows], a_dt, a_dt + a_gt - inter)
    bound = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=bound, where=union > 0)
    return bound


@dataclass(frozen=True)
class MaskGeometry:
    """Instance masks, overlaps as pycocotools' ``maskUtils.iou`` (IoF for crowd regions).

    Attributes:
        dt, gt: the predictions' ``[D]`` and ground truths' ``[G]`` masks.
        gt_crowd: ``[G]`` bool.
        dt_area_col: ``[D]`` each prediction's ``area`` as ``loadRes`` sets it
            (see :mod:`iou_eval.geometry.segm`).
        dt_image: ``[D]`` int each prediction's image, or None: pairs of one
            image are then computed together (:meth:`pair`).
        threads: threads that share :meth:`pairs` with the compiled kernel
            (it releases the GIL); the pairs are the same for any number.
    """

    dt: MaskColumn
    gt: MaskColumn
    gt_crowd: np.ndarray
    dt_area_col: np.ndarray
    name: str = "segm"
    dt_image: np.ndarray | None = None
    threads: int = 1

    @staticmethod
    def of(gt: Any, pred: Any) -> MaskGeometry:
        """The geometry of an aligned pair whose masks :func:`iou_eval.geometry.segm.with_masks` encoded."""
        if not isinstance(gt.masks, MaskColumn) or not isinstance(pred.masks, MaskColumn):
            raise ValueError("segm needs both datasets' masks encoded (segm.with_masks)")
        # Boxes computed here, once, before any worker is forked.
        gt.masks.boxes, pred.masks.boxes  # noqa: B018
        return MaskGeometry(pred.masks, gt.masks, gt.is_crowd, pred.area, dt_image=pred.image_idx)

    @property
    def dt_area(self) -> np.ndarray:
        return self.dt_area_col

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Same-group pairs whose overlap reaches ``floor`` (see :class:`~iou_eval.geometry.seam.Geometry`)."""
        from iou_eval.geometry.pairs import candidate_pairs, join_pairs

        kernel = compiled()
        if kernel is not None:
            return _kernel_pairs(kernel, self, d_groups, gt_sorted, g_starts, dt_rows, floor)
        parts_d, parts_g, parts_iou = [], [], []
        for lo in range(0, len(d_groups), _MASK_PAIR_CHUNK):
            groups = d_groups[lo : lo + _MASK_PAIR_CHUNK]
            pd, pg = candidate_pairs(groups, g_starts)
            pg = gt_sorted[pg]
            pr = dt_rows[lo : lo + _MASK_PAIR_CHUNK][pd]
            if floor > 0:
                # Most pairs of a group are far apart: only those whose
                # bound reaches the floor are handed to pycocotools.
                near = overlap_bounds(self.dt, self.gt, self.gt_crowd, pr, pg) >= floor
                pd, pg, pr = pd[near], pg[near], pr[near]
            # One pycocotools call per group, over its predictions and
            # ground truths that are in some pair.
            iou = mask_pair_overlaps(self.dt, self.gt, self.gt_crowd, pr, pg, groups[pd])
            keep = iou >= floor
            parts_d.append(pd[keep] + lo)
            parts_g.append(pg[keep])
            parts_iou.append(iou[keep])
        return join_pairs(parts_d, parts_g, parts_iou)

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        """``[P]`` overlaps of the aligned pairs, the pairs of one image in one call."""
        if not len(dt_rows):
            return np.zeros(0, dtype=np.float64)
        image = None if self.dt_image is None else self.dt_image[dt_rows]
        return mask_pair_overlaps(self.dt, self.gt, self.gt_crowd, dt_rows, gt_rows, image)

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> MaskGeometry:
        return MaskGeometry(
            self.dt.take(dt_rows), self.gt.take(gt_rows), self.gt_crowd[gt_rows],
            self.dt_area_col[dt_rows], self.name,
            None if self.dt_image is None else self.dt_image[dt_rows], self.threads,
        )  # fmt: skip

    def with_threads(self, threads: int) -> MaskGeometry:
        """This geometry, its pairs found by ``threads`` threads (see ``threads``)."""
        return replace(self, threads=max(1, int(threads)))


# Below this many candidate pairs a second thread costs more than it saves.
_THREAD_MIN_PAIRS = 200_000


def _kernel_pairs(
    kernel: Any,
    geo: MaskGeometry,
    d_groups: np.ndarray,
    gt_sorted: np.ndarray,
    g_starts: np.ndarray,
    dt_rows: np.ndarray,
    floor: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`MaskGeometry.pairs` by the compiled kernel: one call per run of predictions.

    The kernel lists each group's pairs whose bound (:func:`overlap_bounds`)
    reaches ``floor``, decodes the strings they need once, and keeps the
    overlaps that reach it: the pairs, in the order, of the numpy path.  The
    predictions are cut into ``geo.threads`` runs of about as many candidate
    pairs, each run in a thread; their pairs are joined in run order.
    """
    starts = np.ascontiguousarray(g_starts, dtype=np.int64)
    groups = np.ascontiguousarray(d_groups)
    rows = np.ascontiguousarray(dt_rows)
    if groups.dtype not in (np.int32, np.int64):
        groups = groups.astype(np.int64)
    if rows.dtype not in (np.int32, np.int64):
        rows = rows.astype(np.int64)
    fixed = (
        *_kernel_side(geo.dt), *_kernel_side(geo.gt), np.ascontiguousarray(geo.gt_crowd, dtype=np.uint8),
        np.ascontiguousarray(geo.dt.boxes, dtype=np.int64), np.ascontiguousarray(geo.dt.area),
        np.ascontiguousarray(geo.gt.boxes, dtype=np.int64), np.ascontiguousarray(geo.gt.area),
    )  # fmt: skip
    sorted_rows = np.ascontiguousarray(gt_sorted, dtype=np.int64)

    def pairs_of(lo: int, hi: int) -> tuple:
        return kernel.group_pairs(
            *fixed, groups[lo:hi], rows[lo:hi], sorted_rows, starts, float(floor)
        )

    found = pairs_in_threads(pairs_of, groups, starts, geo.threads, _THREAD_MIN_PAIRS)
    assert found is not None  # group_pairs raises rather than give None
    return found


def _thread_cuts(groups: np.ndarray, g_starts: np.ndarray, threads: int) -> list[int]:
    """``[0, ..., D]``: where the runs of :func:`_kernel_pairs` start, about equal in candidate pairs."""
    return thread_cuts(groups, g_starts, threads, _THREAD_MIN_PAIRS)
