"""Instance masks: COCO segmentations to compressed RLE columns, and mask IoU / IoF.

Masks are encoded exactly as pycocotools' ``COCO.annToRLE`` / ``loadRes``
encode them, with pycocotools' own C rasteriser (``pycocotools._mask``), so
the compressed strings, areas and boxes are byte for byte the reference's.
Overlaps are computed by the numpy run kernel of :mod:`iou_eval.mask_runs`,
equal bit for bit to ``pycocotools.mask.iou(dt, gt, iscrowd)``.

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
  width; uncompressed counts that are not non-negative integers adding up to
  ``h * w``; a compressed string that does not decode to such counts; any
  other type.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from pycocotools import _mask

from .errors import InputError
from .mask_runs import (
    BadRle,
    MaskRuns,
    decode_runs,
    overlaps_from_counts,
    pair_intersections,
    spans_meet,
)

# Polygon coordinates beyond this many pixels are refused (see the module notes).
COORD_LIMIT = 1.0e6


@dataclass(frozen=True)
class MaskColumn:
    """The masks of ``N`` rows, each a compressed RLE of its image's size.

    Attributes:
        rle: ``[N]`` object array of ``bytes``, pycocotools' compressed counts.
        height, width: ``[N]`` int64 the mask's (its image's) size.
        area: ``[N]`` float64 foreground pixels (``pycocotools.mask.area``).

    The decoded runs (:attr:`runs`) are computed once, on first use, and
    travel with :meth:`take`.
    """

    rle: np.ndarray
    height: np.ndarray
    width: np.ndarray
    area: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.rle)
        expect = {
            "rle": (np.object_, (n,)),
            "height": (np.int64, (n,)),
            "width": (np.int64, (n,)),
            "area": (np.float64, (n,)),
        }
        for name, (dtype, shape) in expect.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape != shape:
                found = (
                    f"{arr.dtype}{arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
                )
                raise ValueError(
                    f"MaskColumn.{name}: expected {np.dtype(dtype)}{shape}, found {found}"
                )

    def __len__(self) -> int:
        return len(self.rle)

    @cached_property
    def runs(self) -> MaskRuns:
        """The foreground runs of every row, decoded from :attr:`rle`."""
        try:
            return decode_runs(self.rle, self.height, self.width)
        except BadRle as exc:
            raise ValueError(f"MaskColumn row {exc.row}: {exc.reason}") from exc

    def take(self, rows: np.ndarray) -> MaskColumn:
        """The rows selected by an integer or boolean index."""
        rows = np.asarray(rows)
        if rows.dtype == np.bool_:
            rows = np.flatnonzero(rows)
        out = MaskColumn(self.rle[rows], self.height[rows], self.width[rows], self.area[rows])
        if "runs" in self.__dict__:
            # Seed the new column's cache: decoding is the costly step.
            out.__dict__["runs"] = self.runs.take(rows)
        return out

    def rle_dicts(self, rows: np.ndarray | None = None) -> list[dict[str, Any]]:
        """pycocotools RLE dicts ``{"size": [h, w], "counts": bytes}`` of ``rows`` (default all)."""
        idx = range(len(self)) if rows is None else np.asarray(rows).tolist()
        return [
            {"size": [int(self.height[i]), int(self.width[i])], "counts": self.rle[i]} for i in idx
        ]


def column_from_rles(rle: Sequence[bytes], height: np.ndarray, width: np.ndarray) -> MaskColumn:
    """A :class:`MaskColumn` of compressed RLEs (decoded once, areas from the runs).

    Raises:
        BadRle: a string that is not a mask of its size (the first bad row).
    """
    arr = np.empty(len(rle), dtype=object)
    arr[:] = list(rle)
    h = np.asarray(height, dtype=np.int64)
    w = np.asarray(width, dtype=np.int64)
    runs = decode_runs(arr, h, w)
    col = MaskColumn(arr, h, w, runs.pixels.astype(np.float64))
    col.__dict__["runs"] = runs
    return col


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


def _rasterise(parts: list[np.ndarray], h: np.ndarray, w: np.ndarray) -> list[bytes]:
    """Compressed RLEs of polygon ``parts[P]`` at sizes ``h[P]``, ``w[P]``.

    One ``frPoly`` call per image size: the C loop then runs over all the
    parts of that size.
    """
    out: list[bytes] = [b""] * len(parts)
    if not parts:
        return out
    key = h * (int(w.max()) + 1) + w
    order = np.argsort(key, kind="stable")
    _, first, count = np.unique(key[order], return_index=True, return_counts=True)
    for a, c in zip(first.tolist(), count.tolist(), strict=True):
        idx = order[a : a + c].tolist()
        rles = _mask.frPoly([parts[i] for i in idx], int(h[idx[0]]), int(w[idx[0]]))
        for i, r in zip(idx, rles, strict=True):
            out[i] = r["counts"]
    return out


def _first_bad_part(
    lens: np.ndarray, flat: np.ndarray, part_off: np.ndarray, short_ok: bool = False
) -> tuple[int, str]:
    """The first polygon part that is an error, and why; ``(-1, "")`` if none.

    Parts of fewer than 3 points are errors unless ``short_ok``, except
    4-number parts (the caller gives those no pixels).
    """
    nonfinite = ~np.isfinite(flat)
    far = np.abs(np.where(nonfinite, 0.0, flat)) > COORD_LIMIT
    n_bad = np.add.reduceat(np.concatenate([nonfinite | far, [False]]), part_off[:-1])
    n_bad = np.where(lens > 0, n_bad, 0)
    short = (lens < 6) & (lens != 4) & (not short_ok)
    bad = (lens % 2 == 1) | short | (n_bad > 0)
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
    try:
        return np.fromiter(
            itertools.chain.from_iterable(parts), dtype=np.float64, count=int(lens.sum())
        )
    except (TypeError, ValueError):
        for i, p in enumerate(parts):
            try:
                np.fromiter(p, dtype=np.float64, count=len(p))
            except (TypeError, ValueError):
                return i
        raise


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
    part_off = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lens, out=part_off[1:])
    flat = _flat_numbers(parts, lens)
    if isinstance(flat, int):
        raise places.error(
            int(part_row[flat]),
            "polygon coordinates must be numbers",
            f".segmentation[{int(part_k[flat])}]",
        )
    return parts, part_row, part_k, lens, flat, part_off


def _encode_polygons(
    segs: Sequence[Any], rows: np.ndarray, h: np.ndarray, w: np.ndarray, places: _Places
) -> tuple[np.ndarray, list[str]]:
    """Compressed RLEs ``[M]`` of the polygon rows ``rows[M]``, and warnings.

    Each part is rasterised by ``frPoly`` at its image's size; a row of
    several parts is their union (``annToRLE``: ``merge(frPyObjects(...))``).
    """
    _, part_row, part_k, lens, flat, part_off = _polygon_parts(segs, rows, places)
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
    rles = _rasterise(
        [flat[part_off[i] : part_off[i + 1]] for i in keep.tolist()], h[kept_row], w[kept_row]
    )
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


def _rle_size(seg: dict, row: int, h: np.ndarray, w: np.ndarray, places: _Places) -> None:
    """Check an RLE's ``size`` against its image; fill in an unknown image size."""
    size = seg.get("size")
    ok = isinstance(size, (list, tuple)) and len(size) == 2
    if ok:
        try:
            vals = [float(v) for v in size]
        except (TypeError, ValueError):
            ok = False
        else:
            ok = all(v > 0 and v.is_integer() for v in vals) and not any(
                isinstance(v, bool) for v in size
            )
    if not ok:
        raise places.error(
            row,
            f"an RLE's size must be [height, width], two positive integers, got {size!r}",
            ".segmentation.size",
        )
    sh, sw = int(size[0]), int(size[1])
    if h[row] <= 0 or w[row] <= 0:
        h[row], w[row] = sh, sw
    elif (sh, sw) != (h[row], w[row]):
        raise places.error(
            row,
            f"the mask does not fit its image: RLE size [{sh}, {sw}], "
            f"image height {int(h[row])} and width {int(w[row])}",
            ".segmentation.size",
        )


def _encode_uncompressed(
    segs: Sequence[Any], rows: np.ndarray, h: np.ndarray, w: np.ndarray, places: _Places
) -> np.ndarray:
    """``[M]`` compressed RLEs of uncompressed RLE rows (``frUncompressedRLE``)."""
    lists = [segs[r]["counts"] for r in rows.tolist()]
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = _flat_numbers(lists, lens)
    if isinstance(flat, int):
        raise places.error(
            int(rows[flat]), "uncompressed RLE counts must be integers", ".segmentation.counts"
        )
    off = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    bad = ~np.isfinite(flat) | (flat < 0) | (flat != np.floor(flat))
    if bad.any():
        i = int(np.searchsorted(off, np.flatnonzero(bad)[0], side="right") - 1)
        v = flat[np.flatnonzero(bad)[0]]
        raise places.error(
            int(rows[i]),
            f"uncompressed RLE counts must be non-negative integers, got {v}",
            ".segmentation.counts",
        )
    total = np.zeros(len(flat) + 1)
    np.cumsum(flat, out=total[1:])
    sums = total[off[1:]] - total[off[:-1]]
    hw = h[rows] * w[rows]
    if (sums != hw).any():
        i = int(np.flatnonzero(sums != hw)[0])
        raise places.error(
            int(rows[i]),
            f"uncompressed RLE counts add up to {sums[i]:.0f}, expected height * width = "
            f"{int(h[rows[i]])} * {int(w[rows[i]])} = {int(hw[i])}",
            ".segmentation.counts",
        )
    counts = flat.astype(np.uint32)
    objs = [
        {"counts": counts[off[i] : off[i + 1]], "size": [int(h[r]), int(w[r])]}
        for i, r in enumerate(rows.tolist())
    ]
    out = np.empty(len(rows), dtype=object)
    out[:] = [o["counts"] for o in _mask.frUncompressedRLE(objs, 0, 0)]
    return out


def _compressed(segs: Sequence[Any], rows: np.ndarray, places: _Places) -> np.ndarray:
    """``[M]`` the compressed strings of compressed RLE rows, as bytes (used as they are)."""
    out = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows.tolist()):
        c = segs[r]["counts"]
        if isinstance(c, str):
            try:
                c = c.encode("ascii")
            except UnicodeEncodeError:
                raise places.error(
                    r,
                    "compressed RLE counts must be ASCII characters '0'..'o'",
                    ".segmentation.counts",
                ) from None
        out[i] = c
    return out


# ------------------------------------------------------------------- encoding

_EMPTY, _POLY, _UNCOMPRESSED, _COMPRESSED = 0, 1, 2, 3


def _classify(segs: Sequence[Any], places: _Places) -> np.ndarray:
    """``[N]`` int8: how each segmentation is written (empty, polygons, RLE)."""
    kind = []
    for i, seg in enumerate(segs):
        if isinstance(seg, list):
            kind.append(_POLY if seg else _EMPTY)
        elif isinstance(seg, dict):
            c = seg.get("counts")
            if isinstance(c, list):
                kind.append(_UNCOMPRESSED)
            elif isinstance(c, (str, bytes)):
                kind.append(_COMPRESSED)
            else:
                got = "no 'counts'" if c is None else f"counts of type {type(c).__name__}"
                raise places.error(
                    i,
                    f"an RLE segmentation needs 'counts' (a list of integers or a string), got {got}",
                    ".segmentation",
                )
        elif seg is None:
            kind.append(_EMPTY)
        else:
            raise places.error(
                i,
                "segmentation must be a list of polygons or an RLE dict {counts, size}, "
                f"got {type(seg).__name__}",
                ".segmentation",
            )
    return np.asarray(kind, dtype=np.int8)


def _fill_empty(rle: np.ndarray, rows: np.ndarray, h, w, places: _Places) -> None:
    """Empty masks of their images' sizes for ``rows``."""
    unknown = (h[rows] <= 0) | (w[rows] <= 0)
    if unknown.any():
        r = int(rows[unknown][0])
        raise places.error(r, "an empty mask needs its image's height and width", ".segmentation")
    for r in rows.tolist():
        rle[r] = _empty_rle(int(h[r]), int(w[r]))


def encode_segmentations(
    segs: Sequence[Any],
    height: np.ndarray,
    width: np.ndarray,
    *,
    path: str | None = None,
    origins: np.ndarray | None = None,
    origin_label: str = "annotations",
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

    Returns:
        ``(MaskColumn[N], warnings)``.  See the module notes for the rules and
        the errors (:class:`~iou_eval.errors.InputError`).
    """
    n = len(segs)
    h, w = _image_sizes(height, width, n)
    places = _places(path, origins, origin_label, n)
    kind = _classify(segs, places)
    rle = np.empty(n, dtype=object)
    warnings: list[str] = []
    for r in np.flatnonzero(kind >= _UNCOMPRESSED).tolist():
        _rle_size(segs[r], r, h, w, places)
    rows = np.flatnonzero(kind == _POLY)
    if len(rows):
        rle[rows], warnings = _encode_polygons(segs, rows, h, w, places)
    rows = np.flatnonzero(kind == _UNCOMPRESSED)
    if len(rows):
        rle[rows] = _encode_uncompressed(segs, rows, h, w, places)
    rows = np.flatnonzero(kind == _COMPRESSED)
    if len(rows):
        rle[rows] = _compressed(segs, rows, places)
    _fill_empty(rle, np.flatnonzero(kind == _EMPTY), h, w, places)
    try:
        return column_from_rles(rle, h, w), warnings
    except BadRle as exc:
        raise places.error(
            exc.row,
            f"compressed RLE counts are not a mask of size [{int(h[exc.row])}, "
            f"{int(w[exc.row])}]: {exc.reason}",
            ".segmentation.counts",
        ) from None


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
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
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
    rle[keep] = _rasterise([parts[i] for i in keep.tolist()], h[keep], w[keep])
    _fill_empty(rle, np.flatnonzero(short), h, w, places)
    return column_from_rles(rle, h, w), warnings


def mask_boxes(column: MaskColumn) -> np.ndarray:
    """``[N, 4]`` float64 ``xywh`` boxes of the masks, as ``pycocotools.mask.toBbox`` gives them.

    (``loadRes`` gives a mask result without a ``bbox`` this box.)  The
    areas are ``column.area``, as ``pycocotools.mask.area`` gives them.
    """
    if len(column) == 0:
        return np.zeros((0, 4), dtype=np.float64)
    return np.asarray(_mask.toBbox(column.rle_dicts()), dtype=np.float64).reshape(-1, 4)


# -------------------------------------------------------------------- overlap


def mask_pair_overlaps(
    pred: MaskColumn,
    gt: MaskColumn,
    gt_crowd: np.ndarray,
    pred_rows: np.ndarray,
    gt_rows: np.ndarray,
) -> np.ndarray:
    """``[P]`` float64 overlaps of the aligned pairs ``pred_rows[P]``, ``gt_rows[P]``.

    Each value is ``pycocotools.mask.iou([dt], [gt], [crowd])`` bit for bit:
    intersection over union of the pixel counts, or intersection over the
    prediction's area when ``gt_crowd[gt_row]`` (IoF), and exactly 0 when
    the masks share no pixel.  Both masks of a pair must have the same size
    (one image); pycocotools would give -1 there, here it is a ValueError.

    Args:
        gt_crowd: ``[len(gt)]`` bool crowd flag of every ground-truth row.
    """
    d = np.asarray(pred_rows, dtype=np.int64)
    g = np.asarray(gt_rows, dtype=np.int64)
    dr, gr = pred.runs, gt.runs
    if ((dr.height[d] != gr.height[g]) | (dr.width[d] != gr.width[g])).any():
        raise ValueError("mask_pair_overlaps: a pair of masks of different sizes")
    crowd = np.asarray(gt_crowd, dtype=bool)[g]
    # Masks whose pixel spans are apart share nothing: 0, as rleIou's box check gives.
    meet = np.flatnonzero(spans_meet(dr, d, gr, g))
    inter = np.zeros(len(d), dtype=np.int64)
    inter[meet] = pair_intersections(dr, d[meet], gr, g[meet])
    out = overlaps_from_counts(inter, dr.pixels[d], gr.pixels[g], crowd)
    # rleIou's run walk stops early where both masks hold a zero-length run at
    # the same pixel (only hand-written counts have those): ask pycocotools.
    odd = meet[dr.zero_run[d[meet]] & gr.zero_run[g[meet]]]
    for p in odd.tolist():
        dd, gg = pred.rle_dicts([d[p]]), gt.rle_dicts([g[p]])
        out[p] = _mask.iou(dd, gg, [int(crowd[p])])[0, 0]
    return out


def mask_overlaps(pred: MaskColumn, gt: MaskColumn, gt_crowd: np.ndarray) -> np.ndarray:
    """``[D, G]`` float64 overlaps of every prediction with every ground truth.

    Equal bit for bit to ``pycocotools.mask.iou(dt_rles, gt_rles, gt_crowd)``
    (which returns ``[]`` when ``D`` or ``G`` is 0; here a ``[D, G]`` array).
    """
    D, G = len(pred), len(gt)
    d = np.repeat(np.arange(D), G)
    g = np.tile(np.arange(G), D)
    return mask_pair_overlaps(pred, gt, gt_crowd, d, g).reshape(D, G)


def mask_overlaps_batched(
    pred: MaskColumn,
    gt: MaskColumn,
    gt_crowd: np.ndarray,
    pred_rows: np.ndarray,
    pred_starts: np.ndarray,
    gt_rows: np.ndarray,
    gt_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``[D_k, G_k]`` overlap matrices of ``K`` groups in one call.

    Args:
        pred, gt: the columns the rows index; gt_crowd: ``[len(gt)]`` bool.
        pred_rows: rows of ``pred``, group by group; pred_starts: ``[K + 1]``
            offsets, group ``k`` is ``pred_rows[pred_starts[k]:pred_starts[k + 1]]``.
        gt_rows, gt_starts: the same for the ground truth.

    Returns:
        ``(values, offsets[K + 1])``: group ``k``'s matrix is
        ``values[offsets[k]:offsets[k + 1]].reshape(D_k, G_k)`` (row-major),
        equal to ``mask_overlaps`` of its rows.
    """
    pred_starts = np.asarray(pred_starts, dtype=np.int64)
    gt_starts = np.asarray(gt_starts, dtype=np.int64)
    n_d = np.diff(pred_starts)
    n_g = np.diff(gt_starts)
    offsets = np.zeros(len(n_d) + 1, dtype=np.int64)
    np.cumsum(n_d * n_g, out=offsets[1:])
    # Pairs prediction-major within each group (as candidate_pairs orders them).
    group = np.repeat(np.arange(len(n_d)), n_d)
    per = n_g[group]
    d_pos = np.repeat(np.arange(len(group)), per)
    shift = gt_starts[group] - (np.cumsum(per) - per)
    g_pos = np.repeat(shift, per) + np.arange(int(per.sum()))
    d = np.asarray(pred_rows, dtype=np.int64)[d_pos]
    g = np.asarray(gt_rows, dtype=np.int64)[g_pos]
    return mask_pair_overlaps(pred, gt, gt_crowd, d, g), offsets
