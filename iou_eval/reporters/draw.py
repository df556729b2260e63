"""Boxes drawn on images (Pillow, optional extra ``draw``), and which images to draw.

Ground truths in one colour, predictions in another (dashed when false
positives), each labelled: the class, and for a prediction its score and
the IoU of its pair.  Mask outlines (polygons) are drawn when given.  The
picture keeps the size and file format of its source, which is only ever
read.  Pillow is imported inside :func:`draw_image`, so :func:`worst_images`
(numpy) works without it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.errors import InputError, UsageError
from iou_eval.reporters.files import write_whole
from iou_eval.reporters.view import View, image_order

if TYPE_CHECKING:  # pragma: no cover
    from PIL import ImageDraw, ImageFont

# Okabe-Ito bluish green and orange: apart for colour-blind readers too.
GT_COLOUR = (0, 158, 115)
PRED_COLOUR = (230, 159, 0)

Polygon = Sequence[float] | np.ndarray  # flat [x1, y1, x2, y2, ...] or [N, 2]


def worst_images(fp: Sequence[int] | np.ndarray, fn: Sequence[int] | np.ndarray, n: int | None,
                 recall: Sequence[float | None] | np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Positions of the ``n`` images with the most errors, worst first (None: all).

    Args:
        fp, fn: ``[I]`` false positives and misses per image.
        recall: ``[I]`` per-image recall (None/NaN: undefined), to break ties.

    Errors are FP + FN, most first; ties by lower recall, undefined recall
    last, then image order: the per-image table's ``--sort errors``.
    """
    fp_a = np.asarray(fp, dtype=np.int64)
    fn_a = np.asarray(fn, dtype=np.int64)
    if fp_a.shape != fn_a.shape or fp_a.ndim != 1:
        raise UsageError(f"fp and fn must be [I] of one length, got {fp_a.shape} and {fn_a.shape}")
    if recall is None:
        rec = np.full(len(fp_a), np.nan)
    else:
        rec = np.array([np.nan if r is None else r for r in recall], dtype=np.float64)
    if n is not None and n < 0:
        raise UsageError(f"the number of worst images must be >= 0, got {n}")
    cols = Columns({"FP": fp_a, "FN": fn_a, "recall": rec})
    return image_order(cols, View(sort="errors", worst=n))


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:
        raise UsageError(
            "drawing boxes needs Pillow, which is not installed",
            hint="pip install 'iou-eval[draw]'",
        ) from exc
    return Image


def require_pillow() -> None:
    """Raise the UsageError that says how to install Pillow when it is missing."""
    _pillow()


def _boxes(name: str, boxes: Any, n: int | None = None) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4) if len(boxes) else np.zeros((0, 4))
    if n is not None and len(b) != n:
        raise UsageError(f"{name} must have {n} rows, got {len(b)}")
    return b


def _column(name: str, values: Any, n: int, dtype: Any = None) -> np.ndarray:
    a = np.asarray(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
    if a.shape != (n,):
        raise UsageError(f"{name} must be [{n}] (one per box), got shape {list(a.shape)}")
    return a


def line_width(width: int, height: int) -> int:
    """Stroke width in pixels: visible on a thumbnail, not heavy on a large photo."""
    return max(2, round(max(width, height) / 400))


def dash_pattern(width: int) -> tuple[float, float]:
    """``(dash, gap)`` lengths in pixels for a stroke ``width`` wide."""
    return 3.0 * width + 3, 2.0 * width + 3


def _segments(points: np.ndarray, closed: bool, dash: float | None, gap: float) -> list:
    """The strokes of a polyline ``points[N, 2]``: whole edges, or dashes along each edge."""
    pts = np.asarray(points, dtype=np.float64)
    if closed:
        pts = np.vstack([pts, pts[:1]])
    out = []
    for p0, p1 in zip(pts[:-1], pts[1:], strict=True):
        length = float(np.hypot(*(p1 - p0)))
        if dash is None or length == 0:
            out.append((tuple(p0), tuple(p1)))
            continue
        # Dashes restart at every corner, so each corner is drawn.
        starts = np.arange(0.0, length, dash + gap)
        ends = np.minimum(starts + dash, length)
        unit = (p1 - p0) / length
        for s, e in zip(starts, ends, strict=True):
            out.append((tuple(p0 + s * unit), tuple(p0 + e * unit)))
    return out


def stroke(draw: ImageDraw.ImageDraw, points: np.ndarray, colour: tuple, width: int,
           dashed: bool, closed: bool = True) -> None:  # fmt: skip
    """A closed polyline ``points[N, 2]``, solid or dashed, centred on its path."""
    dash, gap = dash_pattern(width) if dashed else (None, 0.0)
    for a, b in _segments(points, closed, dash, gap):
        draw.line([a, b], fill=colour, width=width)
    if not dashed:  # square corners: fill the notch where two thick edges meet
        half = (width - 1) / 2
        for x, y in np.asarray(points, dtype=np.float64):
            draw.rectangle([x - half, y - half, x + half, y + half], fill=colour)


def box_points(b: np.ndarray) -> np.ndarray:
    """The corners ``[4, 2]`` of an xyxy box, clockwise from the top left."""
    x1, y1, x2, y2 = b
    return np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ValueError, OSError, ImportError):  # Pillow without FreeType
        return ImageFont.load_default()


def _text_colour(bg: tuple) -> tuple:
    """Black or white, whichever reads better on ``bg`` (relative luminance)."""
    r, g, b = (c / 255 for c in bg[:3])
    return (0, 0, 0) if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else (255, 255, 255)


def _overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label(draw: ImageDraw.ImageDraw, text: str, box: np.ndarray, colour: tuple, font: Any,
          below: bool, size: tuple[int, int], placed: list[tuple]) -> None:  # fmt: skip
    """``text`` on a tag of ``colour`` above the box (ground truth) or below it (prediction).

    A tag that would leave the image goes inside the box instead; one that
    would cover a tag already ``placed`` moves away from the box, a tag's
    height at a time (at most a few times).  The tag's rectangle is added
    to ``placed``.
    """
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    w, h, pad = right - left, bottom - top, 2
    tw, th = w + 2 * pad, h + 2 * pad
    x = min(max(0.0, float(box[0])), max(0.0, size[0] - tw))
    y = float(box[3]) if below else float(box[1]) - th
    if y < 0 or y + th > size[1]:
        y = float(box[3]) - th if below else float(box[1])
    step = th if below else -th
    for _ in range(4):
        rect = (x, y, x + tw, y + th)
        if not any(_overlaps(rect, other) for other in placed):
            break
        if not 0 <= y + step <= size[1] - th:
            step = -step
        y += step
    rect = (x, y, x + tw, y + th)
    placed.append(rect)
    draw.rectangle(rect, fill=colour)
    draw.text((x + pad - left, y + pad - top), text, fill=_text_colour(colour), font=font)


def pred_text(name: Any, score: float, iou: float, is_fp: bool) -> str:
    """``person 0.87 IoU 0.72``; a false positive says so (with its IoU when it overlaps)."""
    text = f"{name} {score:.2f}"
    overlaps = math.isfinite(iou) and iou > 0
    if is_fp:
        return text + (f" FP IoU {iou:.2f}" if overlaps else " FP")
    return text + (f" IoU {iou:.2f}" if overlaps else "")


def _polygons(item: Any) -> list[np.ndarray]:
    """One object's outline: a polygon or a list of polygons -> ``[N, 2]`` arrays (>= 2 points)."""
    if item is None:
        return []
    if isinstance(item, np.ndarray) and item.ndim == 2 and item.shape[1] == 2:
        return [item.astype(np.float64)]
    polys = item if len(item) and not np.isscalar(item[0]) else [item]
    out = []
    for poly in polys:
        pts = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
        if len(pts) >= 2:
            out.append(pts)
    return out


def _open(src: Path) -> tuple[Any, str]:
    """The upright image in a drawable mode, and its file format."""
    Image = _pillow()
    from PIL import ImageOps, UnidentifiedImageError

    try:
        with Image.open(src) as im:
            fmt = im.format
            # Box coordinates refer to the upright image (EXIF orientation applied).
            img = ImageOps.exif_transpose(im)
            img.load()
    except FileNotFoundError as exc:
        raise InputError(str(src), "image not found") from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise InputError(str(src), f"cannot read the image: {exc}") from exc
    alpha = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
    img = img.convert("RGBA" if alpha and fmt != "JPEG" else "RGB")
    return img, fmt


def _save(img: Any, dst: Path, fmt: str, info: dict) -> None:
    """Save in ``fmt`` through a temporary file renamed over ``dst``."""
    params: dict[str, Any] = {}
    if info.get("icc_profile"):
        params["icc_profile"] = info["icc_profile"]
    if fmt == "JPEG":
        params.update(quality=95, subsampling=0)
    write_whole(dst, lambda fh: img.save(fh, format=fmt, **params))


def _outline_lists(
    outlines: dict[str, Sequence[Any]] | None, g: int, d: int
) -> tuple[list[Any], list[Any]]:
    """One outline item (or None) per ground truth ``[G]`` and per prediction ``[D]``."""
    shapes = outlines or {}
    gt_outlines = list(shapes.get("gt") or [None] * g)
    pred_outlines = list(shapes.get("pred") or [None] * d)
    if len(gt_outlines) != g or len(pred_outlines) != d:
        raise UsageError(
            f"outlines need one item per box: {g} for gt and {d} for pred, "
            f"got {len(gt_outlines)} and {len(pred_outlines)}"
        )
    return gt_outlines, pred_outlines


def _strokes(
    draw: Any, boxes: np.ndarray, outlines: list[Any], colour: Any, w: int, dashed: np.ndarray,
    corners: np.ndarray | None = None,
) -> None:  # fmt: skip
    """Each row's mask outlines (a pixel thinner), then its box (its ``corners[N, 4, 2]``
    when oriented); ``dashed[N]`` per row."""
    for i in range(len(boxes)):
        for poly in _polygons(outlines[i]):
            stroke(draw, poly, colour, max(1, w - 1), dashed=bool(dashed[i]))
        shape = box_points(boxes[i]) if corners is None else corners[i]
        stroke(draw, shape, colour, w, dashed=bool(dashed[i]))


def _corner_arrays(corners: dict[str, Any] | None, g: int, d: int) -> tuple[Any, Any]:
    """The oriented boxes' corners ``[G, 4, 2]`` and ``[D, 4, 2]`` (None, None: axis-aligned)."""
    if corners is None:
        return None, None
    gt = np.asarray(corners.get("gt"), dtype=np.float64).reshape(-1, 4, 2)
    pred = np.asarray(corners.get("pred"), dtype=np.float64).reshape(-1, 4, 2)
    if len(gt) != g or len(pred) != d:
        raise UsageError(
            f"corners need one box per row: {g} for gt and {d} for pred, got {len(gt)} and {len(pred)}"
        )
    return gt, pred


def draw_image(
    src_path: str | os.PathLike,
    dst_path: str | os.PathLike,
    gt_boxes: np.ndarray,
    gt_labels: Sequence[Any],
    pred_boxes: np.ndarray,
    pred_labels: Sequence[Any],
    pred_scores: np.ndarray,
    pred_iou: np.ndarray,
    pred_is_fp: np.ndarray,
    outlines: dict[str, Sequence[Any]] | None = None,
    max_side: int | None = None,
    fmt: str | None = None,
    corners: dict[str, Any] | None = None,
) -> Path:
    """Draw ground truths and predictions on a copy of an image; returns ``dst_path``.

    Args:
        src_path: the image (read only; never written).
        dst_path: where the picture goes, in the source's format (JPEG stays
            JPEG, PNG stays PNG) and size; written whole (temporary file,
            then renamed).  Must differ from ``src_path``.
        gt_boxes: ``[G, 4]`` xyxy pixels of the upright image; ``gt_labels[G]``.
        pred_boxes: ``[D, 4]`` xyxy; ``pred_labels[D]``, ``pred_scores[D]``;
            ``pred_iou[D]`` the IoU with its pair (0 or NaN: none);
            ``pred_is_fp[D]`` bool, drawn dashed.
        outlines: ``{"gt": [G], "pred": [D]}`` mask outlines, each item a
            polygon (flat ``[x1, y1, ...]`` or ``[N, 2]``), a list of them,
            or None.
        max_side: scale the picture down so that its longer side is at most
            this many pixels (a page's copy); None keeps the size.
        fmt: the copy's file format (Pillow's name, e.g. ``PNG``); None: the source's.
        corners: ``{"gt": [G, 4, 2], "pred": [D, 4, 2]}`` oriented boxes, drawn
            instead of the axis-aligned ``*_boxes`` (which still place the tags).

    Raises:
        InputError: the source cannot be read as an image.
        UsageError: Pillow is missing, shapes disagree, or ``dst`` is ``src``.
    """
    src, dst = _paths(src_path, dst_path)
    gt = _boxes("gt_boxes", gt_boxes)
    pred = _boxes("pred_boxes", pred_boxes)
    g, d = len(gt), len(pred)
    gt_names = _column("gt_labels", list(gt_labels), g, object)
    pred_names = _column("pred_labels", list(pred_labels), d, object)
    scores = _column("pred_scores", pred_scores, d, np.float64)
    ious = _column("pred_iou", pred_iou, d, np.float64)
    is_fp = _column("pred_is_fp", pred_is_fp, d, bool)
    gt_outlines, pred_outlines = _outline_lists(outlines, g, d)
    gt_corners, pred_corners = _corner_arrays(corners, g, d)
    img, src_fmt = _open(src)
    info = dict(img.info)
    if max_side is not None and max(img.size) > max_side:
        img, factor = _shrink(img, max_side)
        gt, pred = gt * factor, pred * factor
        gt_outlines = [_scaled(o, factor) for o in gt_outlines]
        pred_outlines = [_scaled(o, factor) for o in pred_outlines]
        if gt_corners is not None:
            gt_corners, pred_corners = gt_corners * factor, pred_corners * factor
    from PIL import ImageDraw

    draw = ImageDraw.Draw(img)
    w = line_width(*img.size)
    font = _font(max(11, round(min(img.size) / 40)))
    _strokes(draw, gt, gt_outlines, GT_COLOUR, w, np.zeros(g, dtype=bool), gt_corners)
    _strokes(draw, pred, pred_outlines, PRED_COLOUR, w, is_fp, pred_corners)
    # Tags last, so no box is drawn over a tag.
    placed: list[tuple] = []
    for i in range(g):
        label(draw, str(gt_names[i]), gt[i], GT_COLOUR, font, False, img.size, placed)
    for j in range(d):
        text = pred_text(pred_names[j], float(scores[j]), float(ious[j]), bool(is_fp[j]))
        label(draw, text, pred[j], PRED_COLOUR, font, True, img.size, placed)
    out_fmt = (fmt or src_fmt).upper()
    if out_fmt == "JPEG" and img.mode != "RGB":
        img = img.convert("RGB")
    _save(img, dst, out_fmt, info)
    return dst


def _paths(src_path: str | os.PathLike, dst_path: str | os.PathLike) -> tuple[Path, Path]:
    """The source and the drawing's paths; a drawing never overwrites its source."""
    src, dst = Path(src_path), Path(dst_path)
    if src.resolve() == dst.resolve() or (dst.exists() and src.exists() and src.samefile(dst)):
        raise UsageError(
            f"{dst}: the drawing would overwrite its source image; choose another path"
        )
    return src, dst


def _shrink(img: Any, max_side: int) -> tuple[Any, float]:
    """``img`` scaled down to ``max_side`` on its longer side, and the scale factor."""
    from PIL import Image

    factor = max_side / max(img.size)
    size = (max(1, round(img.width * factor)), max(1, round(img.height * factor)))
    return img.resize(size, Image.Resampling.LANCZOS), factor


def _scaled(item: Any, factor: float) -> list[np.ndarray]:
    return [p * factor for p in _polygons(item)]
