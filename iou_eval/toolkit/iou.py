"""IoU of anything: boxes, masks, polygons, intervals, label sets and label maps.

Every pairwise function takes one item or a stack on each side and returns a
float when both sides are single items, else an ``[N, M]`` float64 array:
one row per item of ``a``, one column per item of ``b``.  Pairs are computed
by broadcasting (a block of rows at a time, so ``[10000, 10000]`` stays within
a few hundred megabytes of temporaries), never by a Python loop per pair.

Usage::

    from iou_eval import iou
    iou.boxes([10, 10, 50, 50], [20, 20, 60, 60])          # 0.391304...
    iou.boxes(pred_xywh, gt_xywh, box_format="xywh", kind="giou")   # [N, M]
    iou.masks(rles_a, rles_b)                               # == pycocotools maskUtils.iou
    iou.boundary(gt_masks, dt_masks)                        # Boundary IoU (boundary-iou-api)
    iou.oriented_boxes(corners_a, xywhr_b)                  # [N, 4, 2] corners or [N, 5] xywhr
    iou.label_maps(gt_maps, pred_maps, num_classes=19)      # {"per_class", "mean", ...}
    iou.oks(gt_keypoints, pred_keypoints, areas)            # == pycocotools computeOks (transposed)

A malformed argument raises :class:`ArgumentError`, an ``InputError`` that is
also a ``ValueError``, naming the argument and the index (``a[3]``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat, to_xyxy
from iou_eval.errors import ArgumentError, InputError  # noqa: F401  (iou.InputError, as before)

__all__ = [
    "ArgumentError",
    "boxes",
    "iof",
    "masks",
    "boundary",
    "polygons",
    "oriented_boxes",
    "intervals",
    "label_sets",
    "label_maps",
    "oks",
]

KINDS = ("iou", "giou", "diou", "ciou")
AVERAGES = ("macro", "micro", "samples", None)
# torchvision.ops' default ``eps`` of distance_box_iou / complete_box_iou.
TORCHVISION_EPS = 1e-7
# Pair elements computed per block of rows: bounds the temporaries (each
# float64 block is 16 MiB) whatever the size of the [N, M] result.
BLOCK_ELEMENTS = 1 << 21


# --------------------------------------------------------------------------- boxes


def _as_rows(x: Any, name: str, width: int, what: str) -> tuple[np.ndarray, bool]:
    """``[width]`` or ``[N, width]`` numbers -> ``([N, width] float64, single)``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(
            f"{name}: expected {what} as numbers, [{width}] or [N, {width}], "
            f"got {type(x).__name__} that is not a rectangular array of numbers"
        ) from None
    single = arr.ndim == 1 and arr.shape[0] == width
    if single or (arr.ndim == 1 and arr.shape[0] == 0):
        arr = arr.reshape(-1, width)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ArgumentError(
            f"{name}: expected {what} of shape [{width}] or [N, {width}], got {list(arr.shape)}"
        )
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(f"{name}[{i}]: {what} needs finite numbers, got {arr[i].tolist()}")
    return arr, single


def _check_extents(arr: np.ndarray, fmt: BoxFormat, name: str) -> None:
    """Refuse inverted boxes: x2 < x1 / y2 < y1 (xyxy) or a negative width / height."""
    if fmt is BoxFormat.XYXY:
        bad = (arr[:, 2] < arr[:, 0]) | (arr[:, 3] < arr[:, 1])
        rule = "x2 >= x1 and y2 >= y1"
    else:
        bad = (arr[:, 2] < 0) | (arr[:, 3] < 0)
        rule = "width >= 0 and height >= 0"
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(
            f"{name}[{i}]: inverted box {arr[i].tolist()} in {fmt.value}: expected {rule}",
            hint="check the box format: xywh is the top-left corner and size, cxcywh the centre and size",
        )


def _box_format(box_format: str | BoxFormat) -> BoxFormat:
    try:
        return BoxFormat(box_format)
    except ValueError:
        choices = ", ".join(f.value for f in BoxFormat)
        raise ArgumentError(f"box_format: expected one of {choices}, got {box_format!r}") from None


def _prepare_boxes(
    x: Any, name: str, fmt: BoxFormat, one: float
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Checked boxes -> ``(xyxy[N, 4], area[N], single)`` under the pixel rule ``one``."""
    arr, single = _as_rows(x, name, 4, "a box")
    _check_extents(arr, fmt, name)
    xyxy, area = to_xyxy(arr, fmt)
    if one:
        # VOC devkit: a box covers the pixels x1..x2 inclusive.
        area = (xyxy[:, 2] - xyxy[:, 0] + one) * (xyxy[:, 3] - xyxy[:, 1] + one)
    return xyxy, area, single


def _blocks(n: int, m: int) -> Iterable[slice]:
    rows = max(1, BLOCK_ELEMENTS // max(m, 1))
    for start in range(0, n, rows):
        yield slice(start, min(start + rows, n))


def _overlap(a: np.ndarray, b: np.ndarray, one: float) -> np.ndarray:
    """Intersection area ``[n, m]`` of xyxy boxes; each side clamped at 0 on its own.

    Clamping width and height separately is what keeps two negative extents
    (boxes apart on both axes) from multiplying into a positive "overlap";
    ``+ one`` before the clamp is the devkit's ``min(x2) - max(x1) + 1``.
    """
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    if one:
        iw += one
        ih += one
    np.maximum(iw, 0.0, out=iw)
    np.maximum(ih, 0.0, out=ih)
    iw *= ih
    return iw


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (a zero-area pair has IoU 0, never NaN)."""
    out = np.zeros(np.broadcast_shapes(num.shape, den.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _enclosing(a: np.ndarray, b: np.ndarray, one: float) -> tuple[np.ndarray, np.ndarray]:
    """Width and height ``[n, m]`` of the smallest box enclosing each pair."""
    cw = np.maximum(a[:, None, 2], b[None, :, 2]) - np.minimum(a[:, None, 0], b[None, :, 0])
    ch = np.maximum(a[:, None, 3], b[None, :, 3]) - np.minimum(a[:, None, 1], b[None, :, 1])
    return cw + one, ch + one


def _diou_penalty(a: np.ndarray, b: np.ndarray, cw: np.ndarray, ch: np.ndarray) -> np.ndarray:
    """torchvision's ``centres_distance² / (enclosing diagonal² + eps)``."""
    ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    bx, by = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    dist2 = (ax[:, None] - bx[None, :]) ** 2 + (ay[:, None] - by[None, :]) ** 2
    return dist2 / (cw**2 + ch**2 + TORCHVISION_EPS)


def _aspect_angle(xyxy: np.ndarray, one: float) -> tuple[np.ndarray, np.ndarray]:
    """``atan(w / h)`` per box (pi/2 for h = 0) and whether the box is a point (w = h = 0)."""
    w = xyxy[:, 2] - xyxy[:, 0] + one
    h = xyxy[:, 3] - xyxy[:, 1] + one
    with np.errstate(divide="ignore", invalid="ignore"):
        angle = np.arctan(w / h)
    point = np.isnan(angle)
    return np.where(point, 0.0, angle), point


def _block_kind(
    a: np.ndarray, b: np.ndarray, a_area: np.ndarray, b_area: np.ndarray, kind: str, one: float
) -> np.ndarray:
    """One block of rows ``[n, m]`` of IoU / GIoU / DIoU / CIoU, torchvision's formulas."""
    inter = _overlap(a, b, one)
    union = a_area[:, None] + b_area[None, :] - inter
    iou = _ratio(inter, union)
    if kind == "iou":
        return iou
    cw, ch = _enclosing(a, b, one)
    if kind == "giou":
        # generalized_box_iou: iou - (C - union) / C; a pair enclosed by a
        # zero-area box has union 0 too, so its penalty is 0 (torchvision: NaN).
        area_c = cw * ch
        return iou - _ratio(area_c - union, area_c)
    diou = iou - _diou_penalty(a, b, cw, ch)
    if kind == "diou":
        return diou
    # complete_box_iou: v = 4/pi² (atan(wa/ha) - atan(wb/hb))², alpha = v / (1 - iou + v + eps).
    # A point box (w = h = 0) has no aspect ratio: its pairs get v = 0 (torchvision: NaN).
    ang_a, pt_a = _aspect_angle(a, one)
    ang_b, pt_b = _aspect_angle(b, one)
    v = (4 / math.pi**2) * (ang_a[:, None] - ang_b[None, :]) ** 2
    v[pt_a[:, None] | pt_b[None, :]] = 0.0
    alpha = v / (1 - iou + v + TORCHVISION_EPS)
    return diou - alpha * v


def _pairwise(a: np.ndarray, b: np.ndarray, fill) -> np.ndarray:
    """``[N, M]`` float64 filled a block of rows at a time by ``fill(rows) -> [n, M]``."""
    out = np.empty((len(a), len(b)), dtype=np.float64)
    for rows in _blocks(len(a), len(b)):
        out[rows] = fill(rows)
    return out


def _result(out: np.ndarray, single: bool) -> float | np.ndarray:
    return float(out[0, 0]) if single else out


def boxes(
    a: Any,
    b: Any,
    box_format: str | BoxFormat = "xyxy",
    kind: str = "iou",
    plus_one: bool = False,
) -> float | np.ndarray:
    """IoU (or GIoU, DIoU, CIoU) of every box of ``a`` with every box of ``b``.

    Args:
        a, b: one box ``[4]`` or boxes ``[N, 4]`` / ``[M, 4]`` in ``box_format``:
            ``xyxy`` (corners), ``xywh`` (top-left corner, width, height — COCO)
            or ``cxcywh`` (centre, width, height — YOLO).
        kind: ``iou``; ``giou`` (Rezatofighi et al. 2019); ``diou`` or ``ciou``
            (Zheng et al. 2020), each with the formula of torchvision.ops
            (``box_iou``, ``generalized_box_iou``, ``distance_box_iou``,
            ``complete_box_iou``, eps 1e-7 where torchvision adds it), in float64.
        plus_one: the Pascal VOC devkit's pixel-inclusive rule: a box spans
            ``x2 - x1 + 1`` pixels, for areas, intersections and enclosing boxes.

    Returns:
        a float when both are single boxes, else ``[N, M]`` float64.  A pair
        whose union is empty (two zero-area boxes) has IoU 0, never NaN; GIoU
        and CIoU stay finite where torchvision would divide 0 by 0.  The IoU
        of continuous boxes matches pycocotools and torchvision; ``xywh`` areas
        are ``w * h`` as given, as pycocotools computes them.

    Raises:
        ArgumentError: a wrong shape, a non-finite number, or an inverted box
            (``x2 < x1``, negative width or height), naming ``a[i]`` / ``b[i]``.
    """
    fmt = _box_format(box_format)
    if kind not in KINDS:
        raise ArgumentError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    one = 1.0 if plus_one else 0.0
    a_xyxy, a_area, a_single = _prepare_boxes(a, "a", fmt, one)
    b_xyxy, b_area, b_single = _prepare_boxes(b, "b", fmt, one)
    out = _pairwise(
        a_xyxy,
        b_xyxy,
        lambda r: _block_kind(a_xyxy[r], b_xyxy, a_area[r], b_area, kind, one),
    )
    return _result(out, a_single and b_single)


def iof(
    a: Any, b: Any, box_format: str | BoxFormat = "xyxy", plus_one: bool = False
) -> float | np.ndarray:
    """Intersection over the area of ``a`` (the prediction): the crowd-region rule.

    pycocotools matches a prediction to a crowd ground truth by this overlap
    (``iou(dt, gt, iscrowd=[1])``).  Shapes and errors as :func:`boxes`;
    a zero-area box of ``a`` has IoF 0.

    Returns:
        a float for two single boxes, else ``[N, M]`` float64.
    """
    fmt = _box_format(box_format)
    one = 1.0 if plus_one else 0.0
    a_xyxy, a_area, a_single = _prepare_boxes(a, "a", fmt, one)
    b_xyxy, _, b_single = _prepare_boxes(b, "b", fmt, one)
    out = _pairwise(
        a_xyxy,
        b_xyxy,
        lambda r: _ratio(_overlap(a_xyxy[r], b_xyxy, one), a_area[r, None]),
    )
    return _result(out, a_single and b_single)


# ------------------------------------------------------------------- keypoints


def _keypoint_rows(x: Any, name: str) -> tuple[np.ndarray, bool]:
    """``[K, 2|3]`` or ``[N, K, 2|3]`` numbers -> ``([N, K, 3] float64, single)`` (v = 2 when absent)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(
            f"{name}: expected keypoints as numbers, [K, 3] or [N, K, 3], got {type(x).__name__} "
            "that is not a rectangular array of numbers"
        ) from None
    single = arr.ndim == 2
    if single:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[2] not in (2, 3) or arr.shape[1] == 0:
        raise ArgumentError(
            f"{name}: expected keypoints of shape [K, 3] or [N, K, 3] (x, y, v), got {list(np.shape(x))}"
        )
    bad = ~np.isfinite(arr).all(axis=(1, 2))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(f"{name}[{i}]: keypoints need finite numbers")
    if arr.shape[2] == 2:
        arr = np.concatenate([arr, np.full(arr.shape[:2] + (1,), 2.0)], axis=2)
    return arr, single


def _oks_inputs(gt: np.ndarray, areas: Any, sigmas: Any, gt_boxes: Any) -> tuple[np.ndarray, ...]:
    """``(areas[N], sigmas[K], boxes[N, 4])`` checked against ``gt[N, K, 3]``."""
    n, k = gt.shape[:2]
    area = np.broadcast_to(np.asarray(areas, dtype=np.float64), (n,)) if np.ndim(areas) == 0 else (
        np.asarray(areas, dtype=np.float64)
    )  # fmt: skip
    if area.shape != (n,) or not (np.isfinite(area) & (area >= 0)).all():
        raise ArgumentError(
            f"areas: expected {n} finite non-negative numbers, got {np.shape(areas)}"
        )
    if sigmas is None:
        from iou_eval.geometry.keypoints import COCO_SIGMAS

        if k != len(COCO_SIGMAS):
            raise ArgumentError(f"sigmas: needed for {k} keypoints (the default is COCO's 17)")
        sig = COCO_SIGMAS
    else:
        sig = np.asarray(sigmas, dtype=np.float64).reshape(-1)
        if sig.shape != (k,) or not (np.isfinite(sig) & (sig > 0)).all():
            raise ArgumentError(
                f"sigmas: expected {k} positive numbers, got {list(np.shape(sigmas))}"
            )
    unlabelled = ~(gt[:, :, 2] > 0).any(axis=1)
    if gt_boxes is None:
        if unlabelled.any():
            i = int(np.flatnonzero(unlabelled)[0])
            raise ArgumentError(
                f"gt_keypoints[{i}]: no labelled keypoint (v > 0): its distances are measured to "
                "its box, pass gt_boxes [N, 4] (x, y, w, h)"
            )
        boxes = np.zeros((n, 4))
    else:
        boxes, _ = _as_rows(gt_boxes, "gt_boxes", 4, "a box")
        if len(boxes) != n:
            raise ArgumentError(f"gt_boxes: expected {n} boxes, got {len(boxes)}")
    return area, sig, boxes


def oks(
    gt_keypoints: Any,
    dt_keypoints: Any,
    areas: Any,
    sigmas: Any = None,
    gt_boxes: Any = None,
) -> float | np.ndarray:
    """Object keypoint similarity of every ground truth with every prediction.

    pycocotools' ``COCOeval.computeOks``, bit for bit (transposed: one row per
    ground truth): over a ground truth's labelled keypoints (``v > 0``),
    ``mean(exp(-d^2 / (2 * area * (2 * sigma)^2)))``; a ground truth without
    one measures each predicted keypoint's distance to its box enlarged by
    its width and height on every side (``gt_boxes`` needed then).

    Args:
        gt_keypoints: ``[K, 3]`` or ``[N, K, 3]`` (x, y, v); ``[.., 2]``: all labelled.
        dt_keypoints: ``[K, 2|3]`` or ``[M, K, 2|3]``; a third column is not read.
        areas: ``[N]`` (or one number) the ground truths' areas, the OKS scale.
        sigmas: ``[K]`` per-keypoint sigmas; default COCO's 17.
        gt_boxes: ``[N, 4]`` ``x, y, w, h`` of the ground truths.

    Returns:
        a float when both are single, else ``[N, M]`` float64.
    """
    from iou_eval.geometry.keypoints import KeypointColumn, oks_matrix

    gt, gt_single = _keypoint_rows(gt_keypoints, "gt_keypoints")
    dt, dt_single = _keypoint_rows(dt_keypoints, "dt_keypoints")
    if dt.shape[1] != gt.shape[1]:
        raise ArgumentError(
            f"dt_keypoints: {dt.shape[1]} keypoints, gt_keypoints have {gt.shape[1]}"
        )
    area, sig, boxes = _oks_inputs(gt, areas, sigmas, gt_boxes)
    n, k = gt.shape[:2]
    g_col = KeypointColumn(
        x=np.ascontiguousarray(gt[:, :, 0]), y=np.ascontiguousarray(gt[:, :, 1]),
        count=np.full(n, k, dtype=np.int64), visible=gt[:, :, 2] > 0,
        num_keypoints=np.ones(n, dtype=np.int64), box=boxes, sigmas=sig[None, :],
    )  # fmt: skip
    d_col = KeypointColumn(
        x=np.ascontiguousarray(dt[:, :, 0]), y=np.ascontiguousarray(dt[:, :, 1]),
        count=np.full(len(dt), k, dtype=np.int64),
    )  # fmt: skip
    category = np.zeros(n, dtype=np.int64)
    out = np.empty((n, len(dt)), dtype=np.float64)
    for rows in _blocks(n, len(dt) * k):
        r = np.arange(n)[rows]
        out[rows] = oks_matrix(g_col.take(r), area[r], category[r], d_col)
    return _result(out, gt_single and dt_single)


# ------------------------------------------------------------------- intervals


def intervals(a: Any, b: Any) -> float | np.ndarray:
    """Temporal IoU of 1-D segments ``[start, end]`` (action detection, video moments).

    Args:
        a, b: one segment ``[2]`` or segments ``[N, 2]`` / ``[M, 2]``.

    Returns:
        a float for two single segments, else ``[N, M]`` float64; touching
        segments give 0, and two zero-length segments give 0.

    Raises:
        ArgumentError: ``end < start``, a non-finite number or a wrong shape.
    """
    a_arr, a_single = _as_rows(a, "a", 2, "a segment")
    b_arr, b_single = _as_rows(b, "b", 2, "a segment")
    for name, arr in (("a", a_arr), ("b", b_arr)):
        bad = arr[:, 1] < arr[:, 0]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ArgumentError(
                f"{name}[{i}]: inverted segment {arr[i].tolist()}: expected end >= start"
            )
    a_len = a_arr[:, 1] - a_arr[:, 0]
    b_len = b_arr[:, 1] - b_arr[:, 0]

    def fill(r: slice) -> np.ndarray:
        s, e = a_arr[r, 0, None], a_arr[r, 1, None]
        inter = np.minimum(e, b_arr[None, :, 1]) - np.maximum(s, b_arr[None, :, 0])
        np.maximum(inter, 0.0, out=inter)
        return _ratio(inter, a_len[r, None] + b_len[None, :] - inter)

    return _result(_pairwise(a_arr, b_arr, fill), a_single and b_single)


# ----------------------------------------------------------------------- masks


def masks(a: Any, b: Any) -> float | np.ndarray:
    """Mask IoU, equal to pycocotools' ``maskUtils.iou(a_rles, b_rles, [0] * len(b))``.

    Args:
        a, b: binary masks ``[N, H, W]`` or one ``[H, W]`` (bool, or 0/1
            numbers), or COCO RLE: one dict ``{"size": [H, W], "counts": ...}``
            or a list of them, with compressed (str / bytes) or uncompressed
            (list of run lengths) counts.  Each side may be either kind; every
            mask of both sides must have the same ``H x W``.

    Returns:
        a float for two single masks, else ``[N, M]`` float64: pixels in both
        over pixels in either, 0 where the union is empty.  Unlike
        pycocotools (which returns -1 for pairs of different sizes and ``[]``
        for an empty side), sizes that differ raise, and an empty side gives
        an ``[0, M]`` / ``[N, 0]`` array.

    Raises:
        ArgumentError: a mask that is not binary, a malformed RLE, or sizes that differ.
    """
    from iou_eval.toolkit.mask_rows import pair_counts

    a_rows, b_rows, _, single = _mask_pair(a, b, "a", "b")
    inter = pair_counts(a_rows, b_rows)
    union = a_rows.sum(axis=1, dtype=np.float64)[:, None] + b_rows.sum(axis=1, dtype=np.float64)
    return _result(_ratio(inter, union - inter), single)


def _mask_pair(
    a: Any, b: Any, a_name: str, b_name: str
) -> tuple[np.ndarray, np.ndarray, tuple[int, int] | None, bool]:
    """Both sides' masks as rows ``[N, H * W]``, ``[M, H * W]`` bool, checked to be of one size."""
    from iou_eval.toolkit.mask_rows import mask_rows

    a_rows, a_size, a_single = mask_rows(a, a_name)
    b_rows, b_size, b_single = mask_rows(b, b_name)
    if a_size is not None and b_size is not None and a_size != b_size:
        raise ArgumentError(
            f"{b_name}: masks are {b_size[0]}x{b_size[1]} (H x W) but {a_name}'s are "
            f"{a_size[0]}x{a_size[1]}; IoU needs masks of the same size"
        )
    return a_rows, b_rows, a_size or b_size, a_single and b_single


def _boundary_rows(rows: np.ndarray, size: tuple[int, int] | None, ratio: float) -> np.ndarray:
    """The boundaries of masks ``rows[N, H * W]`` (column-major), as rows again."""
    from iou_eval.geometry.boundary import boundary_masks, dilation_pixels

    if size is None or not len(rows):
        return rows
    h, w = size
    d = int(dilation_pixels(h, w, ratio))
    out = np.empty_like(rows)
    # Column-major rows are the masks transposed; a square erodes the same either way.
    step = max(1, (1 << 24) // max(h * w, 1))
    for lo in range(0, len(rows), step):
        block = rows[lo : lo + step].reshape(-1, w, h)
        out[lo : lo + step] = boundary_masks(block, d).reshape(-1, h * w)
    return out


def boundary(gt_masks: Any, dt_masks: Any, dilation_ratio: float = 0.02) -> float | np.ndarray:
    """Boundary IoU (Cheng et al., CVPR 2021) as boundary-iou-api computes it.

    Each mask's boundary is the mask less its erosion by ``d`` pixels (a
    ``(2d + 1)``-square; pixels outside the image count as background, so
    a mask cut by the border has boundary along it), ``d = max(1,
    round(dilation_ratio * sqrt(H**2 + W**2)))`` with Python's ``round``;
    the Boundary IoU of two masks is their boundaries' IoU.  COCO's boundary
    evaluation (``--iou-type boundary``) matches on ``min(mask IoU, boundary
    IoU)``: ``np.minimum(iou.masks(a, b), iou.boundary(a, b))``.

    Args:
        gt_masks, dt_masks: binary masks ``[N, H, W]`` or one ``[H, W]``, or
            COCO RLE (a dict or a list of them), as :func:`masks` takes them;
            every mask of both sides of one ``H x W``.
        dilation_ratio: the boundary's width as a fraction of the image
            diagonal, in [0, 1] (boundary-iou-api's default 0.02).

    Returns:
        a float for two single masks, else ``[N, M]`` float64 (one row per
        ``gt_masks`` item), 0 where both boundaries are empty.

    Raises:
        ArgumentError: a mask that is not binary, a malformed RLE, sizes that
            differ, or a ratio outside [0, 1].
    """
    ratio = dilation_ratio
    if (
        isinstance(ratio, bool)
        or not isinstance(ratio, (int, float, np.integer, np.floating))
        or not 0 <= float(ratio) <= 1
    ):
        raise ArgumentError(f"dilation_ratio: expected a number in [0, 1], got {ratio!r}")
    from iou_eval.toolkit.mask_rows import pair_counts

    a_rows, b_rows, size, single = _mask_pair(gt_masks, dt_masks, "gt_masks", "dt_masks")
    a_edge = _boundary_rows(a_rows, size, float(ratio))
    b_edge = _boundary_rows(b_rows, size, float(ratio))
    inter = pair_counts(a_edge, b_edge)
    union = a_edge.sum(axis=1, dtype=np.float64)[:, None] + b_edge.sum(axis=1, dtype=np.float64)
    return _result(_ratio(inter, union - inter), single)


# -------------------------------------------------------------------- polygons


def _import_shapely():
    try:
        import shapely
    except ImportError:
        from iou_eval.errors import UsageError

        raise UsageError(
            "polygon IoU needs shapely 2", hint="pip install 'iou-eval[polygons]'"
        ) from None
    return shapely


def _depth(x: Any) -> int:
    """0 for a number, 1 for a sequence of numbers, 2 for a sequence of those..."""
    d = 0
    while isinstance(x, (Sequence, np.ndarray)) and not isinstance(x, (str, bytes)):
        if len(x) == 0:
            return d + 1
        x, d = x[0], d + 1
    return d


def _polygon_items(x: Any) -> tuple[list[Any], bool]:
    """One polygon (flat ``[x1, y1, ...]`` or points ``[[x, y], ...]``) or a list of them."""
    if isinstance(x, np.ndarray):
        single = x.ndim == 1 or (x.ndim == 2 and x.shape[1] == 2)
        return ([x] if single else list(x)), single
    items = list(x)
    if not items:
        return [], False
    first = _depth(items[0])
    # A number first: one flat polygon; a pair first: one polygon of points
    # (a list of flat polygons would need 1-point "polygons" to look alike).
    single = first == 0 or (first == 1 and len(items[0]) == 2)
    return ([items] if single else items), single


def _polygon_coords(poly: Any, where: str) -> np.ndarray:
    """``[K, 2]`` float64 points of one polygon."""
    try:
        arr = np.asarray(poly, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(
            f"{where}: a polygon is [x1, y1, x2, y2, ...] or [[x, y], ...]"
        ) from None
    if arr.ndim == 1:
        if arr.size % 2:
            raise ArgumentError(
                f"{where}: a flat polygon needs an even count of numbers, got {arr.size}"
            )
        arr = arr.reshape(-1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ArgumentError(f"{where}: expected points [K, 2], got shape {list(arr.shape)}")
    if not np.isfinite(arr).all():
        raise ArgumentError(f"{where}: a polygon needs finite coordinates")
    return arr


def _polygon_array(x: Any, name: str) -> tuple[np.ndarray, bool]:
    """``[N]`` shapely polygons (empty where degenerate) and whether ``x`` was one polygon."""
    shapely = _import_shapely()
    items, single = _polygon_items(x)
    coords = [_polygon_coords(p, f"{name}[{i}]") for i, p in enumerate(items)]
    geoms = np.empty(len(coords), dtype=object)
    for i, c in enumerate(coords):  # one shapely object per polygon, not per pair
        geoms[i] = shapely.polygons(c) if len(c) >= 3 else shapely.Polygon()
    if len(geoms):
        # Collinear points enclose nothing: an empty polygon (IoU 0), as a
        # rasteriser would paint no pixel; any other invalid ring crosses itself.
        flat = shapely.area(shapely.convex_hull(geoms)) == 0
        geoms[flat] = shapely.Polygon()
        bad = ~shapely.is_valid(geoms)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ArgumentError(
                f"{name}[{i}]: the polygon is not simple: {shapely.is_valid_reason(geoms[i])}",
                hint="its outline crosses itself; shapely.make_valid() can split it into parts",
            )
    return geoms, single


def polygons(a: Any, b: Any) -> float | np.ndarray:
    """Exact area IoU of simple polygons (shapely 2, vectorised; not rasterised).

    Args:
        a, b: one polygon as ``[x1, y1, x2, y2, ...]`` or ``[[x, y], ...]``
            (or an ndarray ``[2K]`` / ``[K, 2]``), or a list of such polygons
            (or an ndarray ``[N, K, 2]``).  A polygon with fewer than 3 points,
            or with collinear points, is empty (area 0).

    Returns:
        a float for two single polygons, else ``[N, M]`` float64:
        ``area(a ∩ b) / (area(a) + area(b) - area(a ∩ b))``, 0 where the union is empty.

    Raises:
        ArgumentError: an odd count of coordinates, a non-finite number, or an
            outline that crosses itself (not simple), naming ``a[i]`` / ``b[i]``.
        UsageError: shapely is not installed (``pip install 'iou-eval[polygons]'``).
    """
    a_geo, a_single = _polygon_array(a, "a")
    b_geo, b_single = _polygon_array(b, "b")
    import shapely

    a_area = shapely.area(a_geo)
    b_area = shapely.area(b_geo)

    def fill(r: slice) -> np.ndarray:
        # The union's area as area(A) + area(B) - area(A ∩ B): one overlay per
        # pair instead of two, and equal for simple polygons.
        inter = shapely.area(shapely.intersection(a_geo[r, None], b_geo[None, :]))
        return _ratio(inter, a_area[r, None] + b_area[None, :] - inter)

    return _result(_pairwise(a_geo, b_geo, fill), a_single and b_single)


# ------------------------------------------------------------------ oriented boxes


def _oriented_array(x: Any, name: str, angle_unit: str) -> tuple[np.ndarray, bool]:
    """Oriented boxes -> ``(corners[N, 4, 2], single)``.

    Accepts corners ``[4, 2]`` / ``[8]`` / ``[N, 4, 2]`` / ``[N, 8]`` or
    ``cx, cy, w, h, angle`` ``[5]`` / ``[N, 5]``.
    """
    from iou_eval.data.oriented import check_xywhr, checked_corners, corners_from_xywhr

    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(
            f"{name}: expected oriented boxes as numbers: corners [N, 4, 2] or cx, cy, w, h, "
            f"angle [N, 5], got {type(x).__name__} that is not a rectangular array of numbers"
        ) from None
    single = arr.shape in ((4, 2), (8,), (5,))
    if single:
        arr = arr.reshape(1, *arr.shape)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, 4, 2)
    if arr.ndim == 2 and arr.shape[1] == 8:
        arr = arr.reshape(-1, 4, 2)

    def fail(i: int, message: str) -> ArgumentError:
        return ArgumentError(f"{name}[{i}]: {message}")

    if arr.ndim == 2 and arr.shape[1] == 5:
        check_xywhr(arr, fail)
        return corners_from_xywhr(arr, angle_unit), single
    if arr.ndim != 3 or arr.shape[1:] != (4, 2):
        raise ArgumentError(
            f"{name}: expected corners [N, 4, 2] (or [N, 8]) or cx, cy, w, h, angle [N, 5], "
            f"got shape {list(arr.shape)}"
        )
    return checked_corners(arr, fail)[0], single


def oriented_boxes(a: Any, b: Any, angle_unit: str = "rad") -> float | np.ndarray:
    """Exact IoU of oriented boxes (the area of the overlap of two convex quadrilaterals).

    Args:
        a, b: one box or ``N`` boxes each, as four corners (``[4, 2]``,
            ``[8]``, ``[N, 4, 2]`` or ``[N, 8]``, in any order round the box,
            either winding) or as ``cx, cy, w, h, angle`` (``[5]``,
            ``[N, 5]``: Ultralytics' ``xywhr``).
        angle_unit: ``rad`` (default) or ``deg``.

    Returns:
        a float for two single boxes, else ``[N, M]`` float64: the overlay
        of the two polygons (never a rasterisation), equal to shapely's
        ``intersection(a, b).area / (area(a) + area(b) - intersection)``.

    Raises:
        ArgumentError: a wrong shape, a non-finite number, a width or height
            that is not positive, or corners that do not make a convex
            quadrilateral, naming ``a[i]`` / ``b[i]``.
    """
    if angle_unit not in ("rad", "deg"):
        raise ArgumentError(f"angle_unit: expected rad or deg, got {angle_unit!r}")
    from iou_eval.geometry.obb import iou_matrix, quad_area

    ca, a_single = _oriented_array(a, "a", angle_unit)
    cb, b_single = _oriented_array(b, "b", angle_unit)
    out = iou_matrix(ca, cb, quad_area(ca), quad_area(cb))
    return _result(out, a_single and b_single)


# ------------------------------------------------------------------ label sets


def _indicator(gt: Any, pred: Any, labels: Sequence[Hashable] | None) -> tuple[np.ndarray, ...]:
    """Both sides as indicator matrices ``[S, C]`` bool, columns in ``labels`` order."""
    matrices = [isinstance(x, np.ndarray) and x.ndim == 2 for x in (gt, pred)]
    if any(matrices) and not all(matrices):
        raise ArgumentError(
            "gt, pred: an indicator matrix [S, C] on one side needs one on the other; "
            "or give both as collections of labels"
        )
    if all(matrices):
        if gt.shape != pred.shape:
            raise ArgumentError(
                f"pred: indicator matrix of shape {list(pred.shape)}, gt's is {list(gt.shape)}"
            )
        for name, arr in (("gt", gt), ("pred", pred)):
            if not np.isin(arr, (0, 1)).all():
                raise ArgumentError(f"{name}: an indicator matrix holds only 0 and 1 (or bool)")
        cols = np.arange(gt.shape[1]) if labels is None else np.asarray(labels, dtype=np.intp)
        return gt.astype(bool)[:, cols], pred.astype(bool)[:, cols]
    gt_sets, pred_sets = list(gt), list(pred)
    if len(gt_sets) != len(pred_sets):
        raise ArgumentError(f"pred: {len(pred_sets)} samples, gt has {len(gt_sets)}")
    if labels is None:
        seen = {x for s in gt_sets + pred_sets for x in s}
        try:
            labels = sorted(seen)  # scikit-learn's MultiLabelBinarizer sorts the classes
        except TypeError:
            raise ArgumentError(
                "labels: the labels mix types that do not sort; give labels=[...] in order"
            ) from None
    column = {x: j for j, x in enumerate(labels)}
    out = []
    for sets in (gt_sets, pred_sets):
        m = np.zeros((len(sets), len(column)), dtype=bool)
        for i, s in enumerate(sets):  # one row per sample, not per pair
            m[i, [column[x] for x in s if x in column]] = True
        out.append(m)
    return out[0], out[1]


def label_sets(
    gt: Any,
    pred: Any,
    labels: Sequence[Hashable] | None = None,
    average: str | None = "macro",
    zero_division: float = 0.0,
) -> float | np.ndarray:
    """Jaccard index of multi-label sets, as scikit-learn's ``jaccard_score``.

    Args:
        gt, pred: one collection of labels per sample (``[{"cat"}, {"cat", "dog"}]``),
            or two ``numpy`` indicator matrices ``[S, C]`` (0/1 or bool).
        labels: the classes and their order (default: every label seen, sorted;
            for indicator matrices, column indices).  Labels outside it are ignored.
        average: ``macro`` (mean of the per-class scores), ``micro`` (pooled
            counts), ``samples`` (mean over samples of each sample's set IoU), or
            ``None`` for the per-class array ``[C]``.
        zero_division: the score of a class (or sample, or pooled total) whose
            union is empty — no true and no predicted label: 0.0 by default,
            as scikit-learn's default ``zero_division="warn"`` sets it (without
            the warning), or 1.0.  Such classes still count in the macro mean.

    Returns:
        a float, or ``[C]`` float64 when ``average`` is None.
    """
    if average not in AVERAGES:
        raise ArgumentError(f"average: expected macro, micro, samples or None, got {average!r}")
    if zero_division not in (0, 1) or isinstance(zero_division, bool):
        raise ArgumentError(f"zero_division: expected 0.0 or 1.0, got {zero_division!r}")
    zd = float(zero_division)
    g, p = _indicator(gt, pred, labels)
    axis = 1 if average == "samples" else 0
    inter = (g & p).sum(axis=axis).astype(np.float64)
    union = (g | p).sum(axis=axis).astype(np.float64)
    if average == "micro":
        inter, union = inter.sum(keepdims=True), union.sum(keepdims=True)
    score = np.full(inter.shape, zd)
    np.divide(inter, union, out=score, where=union > 0)
    if average is None:
        return score
    return float(score.mean()) if score.size else float("nan")


# ------------------------------------------------------------------ label maps


def _label_map_pairs(gt: Any, pred: Any) -> Iterable[tuple[Any, Any]]:
    """``(gt[H, W], pred[H, W])`` pairs from two maps, two stacks or two iterables."""
    if isinstance(gt, np.ndarray) and gt.ndim == 2:
        return [(gt, pred)]
    if isinstance(gt, np.ndarray) and gt.ndim == 3:
        if not isinstance(pred, np.ndarray) or pred.shape != gt.shape:
            shape = list(np.shape(pred))
            raise ArgumentError(f"pred: expected a stack of shape {list(gt.shape)}, got {shape}")
        return zip(gt, pred, strict=True)
    return _zip_checked(gt, pred)


_END = object()


def _zip_checked(gt: Iterable[Any], pred: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    """``zip`` that names the longer side instead of stopping early."""
    gi, pi = iter(gt), iter(pred)
    n = 0
    while True:
        g = next(gi, _END)
        p = next(pi, _END)
        if g is _END and p is _END:
            return
        if g is _END or p is _END:
            longer = "pred" if g is _END else "gt"
            raise ArgumentError(f"{longer}: more label maps than the other side ({n} paired)")
        yield g, p
        n += 1


def label_maps(
    gt: Any, pred: Any, num_classes: int, ignore_index: int | None = 255
) -> dict[str, Any]:
    """Semantic-segmentation IoU over label images, as mmsegmentation's ``IoUMetric``.

    Args:
        gt, pred: integer label maps ``[H, W]``, stacks ``[N, H, W]``, or two
            iterables of ``[H, W]`` maps (read lazily: one image in memory at a time).
        num_classes: C; labels are ``0 .. C-1``.
        ignore_index: ground-truth pixels with this value are left out (and
            the prediction there is not looked at); None: no such value.

    Returns:
        ``{"per_class": [C] float64, "mean": float, "pixel_accuracy": float}``:
        per-class IoU = |gt ∩ pred| / |gt ∪ pred| over the non-ignored pixels,
        NaN for a class absent from both; ``mean`` is the mean over the other
        classes (mmsegmentation's ``nanmean``; a class only predicted counts
        with 0); ``pixel_accuracy`` = correct pixels / non-ignored pixels.
        Accumulated into one ``[C, C]`` confusion matrix with one
        ``np.bincount`` per image, so memory does not grow with the number of images.

    Raises:
        ArgumentError: maps of different sizes, non-integer maps, or a label
            outside ``0 .. C-1`` that is not ``ignore_index``, naming ``gt[i]`` / ``pred[i]``.
    """
    from iou_eval.toolkit.labelmaps import ConfusionAccumulator

    acc = ConfusionAccumulator(num_classes, ignore_index)
    for i, (g, p) in enumerate(_label_map_pairs(gt, pred)):
        acc.add(g, p, where=f"[{i}]")
    s = acc.scores()
    return {"per_class": s.iou, "mean": s.mean_iou, "pixel_accuracy": s.pixel_accuracy}
