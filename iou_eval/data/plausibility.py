"""Plausibility checks of what was read: doubts about the numbers, said as warnings.

Each check looks at whole columns (no per-box Python loops) and returns
:class:`~iou_eval.data.doubts.Doubt` messages that name the problem and, where an
option fixes it, the option spelled so it can be pasted:

- :func:`layout_doubts`: boxes that fall outside their image under the
  layout they were read in, but all (or nearly all) fit under another
  (xyxy, xywh, cxcywh): an ``x1 y1 x2 y2`` file read as ``x y w h`` is the
  classic; and most boxes outside their image under every layout (the
  image sizes or the scale are wrong).
- :func:`scale_doubts`: box numbers all in [0, 1] read as pixels, or
  numbers well above 1 read as fractions (``--normalized`` given for both
  files when only one holds fractions).
- :func:`fraction_doubts`: most box numbers in [0, 1] (a few past 1) read
  as pixels, the boxes a pixel wide against ground truths or images tens
  of pixels wide; the flag named is checked to read them sensibly.
- :func:`class_shift_doubt`: prediction class ids that become the ground
  truth's under an offset or the COCO-80 map
  (:mod:`iou_eval.data.class_shift`).
- :func:`class_coverage_doubts`: most predictions in classes the ground
  truth does not have; class numbers against a ground truth that names its
  classes (``--names`` missing).

Predictions on images the ground truth does not list are a doubt of the
alignment itself (:mod:`iou_eval.data.reconcile`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from iou_eval.data.box_format import BoxFormat, to_xyxy
from iou_eval.data.dataset import Dataset
from iou_eval.data.doubts import Doubt

# Numbers read as fractions may exceed 1 by an exporter's rounding, never by this.
NORMALIZED_MAX = 1.5
# A box may overhang its image by 1 % of the side or 1 pixel (rounding, clipping).
_OVERHANG = 0.01
# Rows looked at first, where a few rows can settle a check over all of them.
_HEAD_ROWS = 4096


def from_xyxy(xyxy: np.ndarray, fmt: BoxFormat) -> np.ndarray:
    """``[N, 4]`` the numbers that :func:`~iou_eval.data.box_format.to_xyxy` reads as ``xyxy[N, 4]`` in ``fmt``."""
    x1, y1, x2, y2 = xyxy.T
    if fmt is BoxFormat.XYXY:
        return xyxy
    if fmt is BoxFormat.XYWH:
        out = np.array(xyxy, dtype=np.float64)  # x2 - x1, y2 - y1 in place, a column at a time
        out[:, 2] -= x1
        out[:, 3] -= y1
        return out
    return np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], axis=1)


def fits(xyxy: np.ndarray, width: np.ndarray, height: np.ndarray) -> np.ndarray:
    """``[N]`` whether each box has non-negative extents and lies within its image.

    ``width[N]``, ``height[N]``: the image of each row; an overhang of 1 %
    of the side (at least one pixel) is tolerated.
    """
    tw = np.maximum(1.0, _OVERHANG * width)
    th = np.maximum(1.0, _OVERHANG * height)
    # Columns side by side (a copy): the tests then run on contiguous numbers.
    x1, y1, x2, y2 = np.ascontiguousarray(xyxy.T)
    # The six tests joined in place into one array (no temporary per join).
    ok = x2 >= x1
    ok &= y2 >= y1
    ok &= x1 >= -tw
    ok &= y1 >= -th
    ok &= x2 <= width + tw
    ok &= y2 <= height + th
    return ok


# Rows a chunked pass looks at together: its temporaries stay in the cache.
_CHUNK_ROWS = 1 << 14


def _known_chunks(ds: Dataset, first: int = _CHUNK_ROWS) -> Iterator[tuple[np.ndarray, ...]]:
    """``(rows, xyxy, width, height)`` of each slice of rows whose image has a size.

    ``rows[n]`` the rows of ``ds`` (ascending), ``xyxy[n, 4]`` their boxes,
    ``width[n]``, ``height[n]`` their image's; the first slice has ``first``
    rows, the next ones four times as many (up to :data:`_CHUNK_ROWS`).
    """
    width, height = ds.images.width, ds.images.height
    lo, step = 0, first
    while lo < len(ds):
        hi = min(lo + step, len(ds))
        img = ds.image_idx[lo:hi]
        w, h = width[img], height[img]
        known = np.isfinite(w) & np.isfinite(h) & (w > 0) & (h > 0)
        if known.all():
            yield np.arange(lo, hi), ds.xyxy[lo:hi], w, h
        else:
            yield lo + np.flatnonzero(known), ds.xyxy[lo:hi][known], w[known], h[known]
        lo, step = hi, min(4 * step, _CHUNK_ROWS)


def _outside(ds: Dataset) -> tuple[int, int, int]:
    """``(outside, known, first)``: boxes with a known image size that fall outside it
    (:func:`fits`), boxes with a known size, and the first outside row (-1: none).

    One pass a slice of rows at a time: no column of the whole is copied.
    """
    n_out, n_known, first = 0, 0, -1
    for rows, xyxy, w, h in _known_chunks(ds):
        n_known += len(rows)
        out = np.flatnonzero(~fits(xyxy, w, h))
        if len(out) and first < 0:
            first = int(rows[out[0]])
        n_out += len(out)
    return n_out, n_known, first


def _unit_numbers(ds: Dataset, fmt: BoxFormat, step: int = 1 << 16) -> int:
    """How many of the box numbers as the file wrote them (``fmt``) lie in [0, 1], a slice
    of rows at a time."""
    count = 0
    for lo in range(0, len(ds), step):
        raw = from_xyxy(ds.xyxy[lo : lo + step], fmt)
        count += int(np.count_nonzero((raw >= 0) & (raw <= 1)))
    return count


def _misfits(ds: Dataset, chosen: BoxFormat, alt: BoxFormat, n_out: int) -> int:
    """Boxes with a known image size that do not fit it when the numbers the file wrote
    (in ``chosen``) are read as ``alt``, counted exactly while the count can still matter
    (at most ``n_out // 4``); past that, a count above it.

    :func:`layout_doubts` only asks whether another layout fits every box, or
    all but a quarter of the ones the chosen layout leaves out; when most
    boxes are read right, the first rows already fail another layout that often.
    """
    bound = n_out // 4
    misfits = 0
    for _, xyxy, w, h in _known_chunks(ds, _HEAD_ROWS):
        raw = from_xyxy(xyxy, chosen)
        misfits += int(np.count_nonzero(~fits(to_xyxy(raw, alt)[0], w, h)))
        if misfits > bound:
            return misfits
    return misfits


def _row_sizes(ds: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's image ``width[N]``, ``height[N]`` and whether both are known ``[N]``."""
    w = ds.images.width[ds.image_idx]
    h = ds.images.height[ds.image_idx]
    return w, h, np.isfinite(w) & np.isfinite(h) & (w > 0) & (h > 0)


def _flag(side: str, name: str) -> str:
    return f"--{'gt' if side == 'gt' else 'pred'}-{name}"


def _what(side: str) -> str:
    return "ground-truth" if side == "gt" else "prediction"


def layout_doubts(ds: Dataset, side: str) -> list[str]:
    """Boxes outside their image as read that (nearly) all fit under another layout.

    Args:
        ds: a dataset in pixels whose images have sizes (after the alignment:
            the predictions carry the ground truth's images).
        side: ``"gt"`` or ``"pred"``, for the flag the message names.
    """
    chosen = ds.box_format
    if not ds.traits.layout_open or chosen is None or not len(ds):
        return []
    n_out, n_known, r = _outside(ds)
    if not n_out:
        return []
    others = [(_misfits(ds, chosen, alt, n_out), alt) for alt in BoxFormat if alt is not chosen]
    n_alt, alt = min(others, key=lambda o: o[0])
    # Another layout must fit every box, or nearly (a detector's unclipped
    # overhang), where the chosen one leaves several out.
    file, place = ds.where(r)
    numbers = " ".join(f"{v:g}" for v in from_xyxy(ds.xyxy[r : r + 1], chosen)[0])
    if not (n_alt == 0 or (n_out >= 2 and 4 * n_alt <= n_out)):
        if 2 * n_out <= n_known:
            return []
        # No layout fits: the sizes (or the scale) the boxes are measured against are wrong.
        return [
            Doubt(
                f"{ds.source}: {n_out} of {n_known} {_what(side)} boxes fall outside "
                f"their image under every box layout (first: {file}:{place}: {numbers}): are the "
                "image sizes and the scale right? (--images DIR, --normalized, --image-size WxH)"
            )
        ]
    fit = "every one fits" if n_alt == 0 else f"only {n_alt} do"
    head = (
        f"{ds.source}: {n_out} of {n_known} {_what(side)} boxes fall outside their image "
        f"read as {chosen.value} (first: {file}:{place}: {numbers}), but {fit} read as "
        f"{alt.value}: the box layout is in doubt"
    )
    if ds.traits.option_layout:
        return [
            Doubt(
                f"{head}; if the numbers are {alt.value}, pass {_flag(side, 'box-format')} {alt.value}"
            )
        ]
    return [Doubt(f"{head}; COCO's bbox is [x, y, width, height]: convert the file")]


def scale_doubts(ds: Dataset, side: str, normalized: bool, shared: bool) -> list[str]:
    """Box numbers whose scale contradicts how they were read.

    Args:
        ds: a dataset as loaded (before the alignment scales fractions).
        side: ``"gt"`` or ``"pred"``.
        normalized: the numbers were read as fractions of the image size.
        shared: ``normalized`` came from the shared ``--normalized`` flag.
    """
    if not len(ds) or not ds.traits.layout_open:
        return []
    if normalized and ds.traits.option_layout:
        return _above_one(ds, side, shared)
    if normalized or ds.box_format is None:
        return []
    # A number outside [0, 1] among the first rows settles it (pixel boxes:
    # at once) before every row's numbers are computed.
    head = from_xyxy(ds.xyxy[:_HEAD_ROWS], ds.box_format)
    if head.min() < 0 or head.max() > 1:
        return []
    raw = from_xyxy(ds.xyxy, ds.box_format)
    if raw.min() < 0 or raw.max() > 1 or not (raw != np.floor(raw)).any():
        return []
    fix = (
        f"pass {_flag(side, 'normalized')} (or --normalized when both files hold fractions)"
        if ds.traits.option_layout
        else "COCO boxes are pixels: scale them by the image sizes"
    )
    return [
        Doubt(
            f"{ds.source}: every {_what(side)} box number lies in [0, 1]: they look like "
            f"fractions of the image size, read as pixels; {fix}"
        )
    ]


# A file whose box numbers lie in [0, 1] this often holds fractions, however
# far a few of them pass 1 (an exporter's unclipped box: h = 1.0157).
FRACTION_SHARE = 0.9
# Fractions read as pixels make boxes about a pixel wide: a median side up to
# TINY_SIDE pixels, against ground-truth boxes (or images) at least
# REFERENCE_SIDE wide, is no pixel file.
TINY_SIDE = 2.0
REFERENCE_SIDE = 16.0


def _median_side(xyxy: np.ndarray) -> float:
    """The median of each box's larger side, ``xyxy[N, 4]`` (N > 0)."""
    return float(np.median(np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])))


def _reference(ds: Dataset, gt: Dataset | None) -> tuple[float, str] | None:
    """The scale the boxes should have: the ground truth's boxes, else the image sizes."""
    if gt is not None and len(gt) and not gt.fractions:
        keep = ~gt.is_crowd
        if keep.any():
            return _median_side(gt.xyxy[keep]), "ground-truth boxes"
    w, h, known = _row_sizes(ds)
    if known.any():
        return float(np.median(np.maximum(w[known], h[known]))), "images"
    return None


def _fraction_reading(
    ds: Dataset, raw: np.ndarray, prefer: BoxFormat
) -> tuple[BoxFormat, int, int] | None:
    """The layout in which ``raw[N, 4]`` read as fractions fits the images best.

    Returns ``(layout, boxes that fit, boxes whose image has a size)``, or None
    without sizes.  ``prefer`` (the layout the flag reads) wins when half fit.
    """
    w, h, known = _row_sizes(ds)
    if not known.any():
        return None
    scale = np.stack([w, h], axis=1)[known]
    best: tuple[BoxFormat, int, int] | None = None
    for fmt in (prefer, *(f for f in BoxFormat if f is not prefer)):
        xyxy = to_xyxy(raw[known], fmt, scale)[0]
        n_fit = int(fits(xyxy, w[known], h[known]).sum())
        if fmt is prefer and 2 * n_fit >= int(known.sum()):
            return fmt, n_fit, int(known.sum())
        if best is None or n_fit > best[1]:
            best = (fmt, n_fit, int(known.sum()))
    return best


def fraction_doubts(
    ds: Dataset, side: str, fix_layout: BoxFormat, gt: Dataset | None = None
) -> list[str]:
    """Fractions read as pixels although a few numbers pass 1.

    The loaders' own test (every number in [0, 1]) falls to one outlier; here
    a share of the numbers decides, with the boxes' scale: read as pixels,
    fractions are about a pixel wide, against ground truths (or images)
    tens or hundreds wide.  The fix named is checked first: read as
    fractions in ``fix_layout`` (what ``--pred-normalized`` reads), half the
    boxes at least must fit their image; another layout is named with it when
    only that one fits.

    Args:
        ds: an aligned dataset whose numbers were read as pixels (its images
            carry the ground truth's sizes).
        side: ``"gt"`` or ``"pred"``.
        fix_layout: the layout the file's numbers take with ``--{side}-normalized``.
        gt: for predictions, the aligned ground truth, whose boxes show the
            scale; else (and for the ground truth itself) the image sizes do.
    """
    if not ds.traits.layout_open or ds.box_format is None or not len(ds) or ds.fractions:
        return []
    # The usual case (pixels), settled a slice at a time: below the share by
    # more than a number, the mean below is certain.
    if _unit_numbers(ds, ds.box_format) + 1 < FRACTION_SHARE * 4 * len(ds):
        return []
    raw = from_xyxy(ds.xyxy, ds.box_format)
    unit = (raw >= 0) & (raw <= 1)
    if unit.all() or unit.mean() < FRACTION_SHARE or (raw == np.floor(raw)).all():
        return []  # all in [0, 1]: the loaders' and scale_doubts' case; else pixels
    tiny = _median_side(ds.xyxy)
    ref = _reference(ds, gt)
    if tiny > TINY_SIDE or ref is None or ref[0] < REFERENCE_SIDE:
        return []
    r = int(np.flatnonzero(~unit.all(axis=1))[0])
    file, place = ds.where(r)
    outside = int((~unit).sum())
    head = (
        f"{ds.source}: {int(unit.sum())} of {unit.size} {_what(side)} box numbers lie in [0, 1] "
        f"({outside} outside, first: {file}:{place}: {' '.join(f'{v:g}' for v in raw[r])}), and "
        f"read as pixels the boxes are {tiny:.3g} pixels wide (median) against {ref[1]} "
        f"{ref[0]:.0f} wide: they look like fractions of the image size"
    )
    return [Doubt(head + _fraction_fix(ds, raw, side, fix_layout))]


def _fraction_fix(ds: Dataset, raw: np.ndarray, side: str, fix_layout: BoxFormat) -> str:
    """How a fraction doubt ends: the flag that reads the file, checked against the image sizes."""
    flag = _flag(side, "normalized")
    reading = _fraction_reading(ds, raw, fix_layout)
    if not ds.traits.option_layout:
        if reading is not None and reading[0] is BoxFormat.XYWH and 2 * reading[1] >= reading[2]:
            return "; COCO boxes are pixels: scale them by the image sizes"
        return "; COCO boxes are pixels: check how the file was written"
    if reading is None:
        return f"; pass {flag} with --image-size WxH (the ground truth gives no image sizes)"
    fmt, n_fit, n = reading
    if 2 * n_fit < n:
        return (
            f"; but read as fractions only {n_fit} of {n} fit their image under any layout: "
            "check how the file was written"
        )
    fix = flag if fmt is fix_layout else f"{flag} {_flag(side, 'box-format')} {fmt.value}"
    return f"; read so ({fmt.value}), {n_fit} of {n} fit their image: pass {fix}"


def _above_one(ds: Dataset, side: str, shared: bool) -> list[str]:
    if ds.fractions and ds.fraction_boxes is not None:
        frac = np.abs(ds.fraction_boxes)
    else:
        w, h, known = _row_sizes(ds)
        scale = np.stack([w, h, w, h], axis=1)
        frac = np.where(known[:, None], np.abs(ds.xyxy) / np.where(scale > 0, scale, 1.0), 0.0)
    big = (frac > NORMALIZED_MAX).any(axis=1)
    if not big.any():
        return []
    r = int(np.flatnonzero(big)[0])
    file, place = ds.where(r)
    other = "pred" if side == "gt" else "gt"
    fix = (
        f"--normalized applies to both files: if only the {_what(other)} numbers are fractions, "
        f"pass {_flag(other, 'normalized')} instead"
        if shared
        else f"drop {_flag(side, 'normalized')} if they are pixels"
    )
    return [
        Doubt(
            f"{ds.source}: read as fractions of the image size, but {int(big.sum())} "
            f"{_what(side)} box(es) have numbers above 1 (first: {file}:{place}); are they "
            f"pixels? {fix}"
        )
    ]


def _numbered(ds: Dataset) -> np.ndarray:
    """``[K]`` whether each category is known by a whole number only (its name is its id)."""
    cats = ds.categories
    return np.array(
        [
            isinstance(k, int) and name == str(k)
            for k, name in zip(cats.ids, cats.names, strict=True)
        ],
        dtype=bool,
    )


def class_shift_doubt(gt: Dataset, pred: Dataset) -> str | None:
    """A doubt naming ``--class-offset N`` / ``--class-map coco80`` when the predictions'
    numbered classes become the ground truth's under that rule, else None.

    Categories the predictions name (a COCO dict's own list) join by name
    and are left out of the evidence.
    """
    numbered = _numbered(pred)
    if not numbered.any() or not len(pred):
        return None
    from iou_eval.data.class_shift import detect_class_shift

    counts = np.bincount(pred.category_idx, minlength=len(pred.categories))
    keep = np.flatnonzero(numbered & (counts > 0))
    shift = detect_class_shift(
        gt.categories.ids, [pred.categories.ids[i] for i in keep], counts[keep].tolist()
    )
    text = shift.warning(pred.source)
    return None if text is None else Doubt(text)


def class_coverage_doubts(gt: Dataset, pred: Dataset, n_categories: int) -> list[str]:
    """Most predictions in classes the ground truth lacks (after the alignment).

    Args:
        gt, pred: the aligned datasets (one category table; the ground
            truth's ``n_categories`` first, prediction-only ones after).
    """
    if not len(pred):
        return []
    extra = pred.category_idx >= n_categories
    n_extra = int(extra.sum())
    if n_extra * 2 <= len(pred):
        return []
    cats = pred.categories
    extra_ids = [cats.ids[i] for i in np.unique(pred.category_idx[extra]).tolist()]
    gt_ids = cats.ids[:n_categories]
    shown = ", ".join(map(str, extra_ids[:5])) + (", ..." if len(extra_ids) > 5 else "")
    head = (
        f"{pred.source}: {n_extra} of {len(pred)} predictions are in classes the ground truth "
        f"does not have ({shown})"
    )
    if all(isinstance(k, int) for k in extra_ids) and not any(isinstance(k, int) for k in gt_ids):
        names = ", ".join(map(str, cats.names[: min(5, n_categories)]))
        names += ", ..." if n_categories > 5 else ""
        return [
            Doubt(
                f"{head}: they number their classes, the ground truth names them ({names}); "
                "pass --names FILE (class names, one per line: line i names class i, from 0)"
            )
        ]
    return [
        Doubt(
            f"{head}; check that both files name or number the classes alike (--names, "
            "--class-offset N, --class-map FILE|coco80)"
        )
    ]
