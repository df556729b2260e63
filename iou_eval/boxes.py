"""Box conventions and overlap kernels (pure numpy).

Inside iou-eval every box is ``xyxy`` float64 plus its ``bbox_area``.  The
area is kept separately because pycocotools computes a box's area as
``w * h`` from the numbers in the file, and ``(x + w) - x`` is not always
``w`` in floating point: bit-exact parity needs the original product.
"""

from __future__ import annotations

from enum import Enum

import numpy as np


class BoxFormat(str, Enum):
    """How the four numbers of a box are laid out in a file."""

    XYXY = "xyxy"  # x1, y1, x2, y2
    XYWH = "xywh"  # x, y (top-left), width, height — COCO
    CXCYWH = "cxcywh"  # centre x, centre y, width, height — YOLO


class PixelConvention(str, Enum):
    """How a box's extent is measured."""

    CONTINUOUS = "continuous"  # area = (x2 - x1) * (y2 - y1) — COCO
    PLUS_ONE = "plus-one"  # area = (x2 - x1 + 1) * (y2 - y1 + 1) — VOC devkit


def to_xyxy(
    boxes: np.ndarray,
    fmt: BoxFormat,
    image_wh: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Convert boxes to ``xyxy`` and their ``w * h`` area.

    Args:
        boxes: ``[N, 4]`` float64 in ``fmt``.
        fmt: the layout of the four numbers.
        image_wh: ``[N, 2]`` image width and height when the numbers are
            normalized to [0, 1]; ``None`` for absolute pixels.

    Returns:
        ``xyxy[N, 4]`` and ``bbox_area[N]``, float64.  For ``xywh`` the right
        edge is ``x + w`` and the area ``w * h``, as pycocotools computes them.
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if image_wh is not None:
        scale = np.concatenate([image_wh, image_wh], axis=1)
        b = b * scale
    out = np.empty_like(b)
    if fmt is BoxFormat.XYWH:
        w, h = b[:, 2], b[:, 3]
        out[:, 0] = b[:, 0]
        out[:, 1] = b[:, 1]
        out[:, 2] = b[:, 0] + w
        out[:, 3] = b[:, 1] + h
    elif fmt is BoxFormat.XYXY:
        out[:] = b
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    elif fmt is BoxFormat.CXCYWH:
        w, h = b[:, 2], b[:, 3]
        out[:, 0] = b[:, 0] - w / 2.0
        out[:, 1] = b[:, 1] - h / 2.0
        out[:, 2] = out[:, 0] + w
        out[:, 3] = out[:, 1] + h
    else:  # pragma: no cover - exhaustive over the enum
        raise ValueError(fmt)
    return out, w * h


def box_sizes(boxes: np.ndarray, fmt: BoxFormat) -> np.ndarray:
    """Width and height ``[N, 2]`` as the file states them (for validation; may be a view)."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if fmt is BoxFormat.XYXY:
        return np.stack([b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    return b[:, 2:4]


def pair_iou_columns(
    dt: np.ndarray,
    dt_area: np.ndarray,
    gt: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
) -> np.ndarray:
    """:func:`pair_iou` on boxes given as columns ``[4, P]`` (x1, y1, x2, y2 rows)."""
    iw = np.minimum(dt[2], gt[2]) - np.maximum(dt[0], gt[0])
    ih = np.minimum(dt[3], gt[3]) - np.maximum(dt[1], gt[1])
    hit = (iw > 0) & (ih > 0)
    inter = np.where(hit, iw * ih, 0.0)
    union = np.where(gt_crowd, dt_area, dt_area + gt_area - inter)
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=hit)
    return out


def pair_iou(
    dt_xyxy: np.ndarray,
    dt_area: np.ndarray,
    gt_xyxy: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
) -> np.ndarray:
    """COCO overlap of aligned pairs: IoU, or IoF for crowd ground truths.

    Args:
        dt_xyxy, gt_xyxy: ``[P, 4]`` the two boxes of each pair.
        dt_area, gt_area: ``[P]`` their ``w * h`` areas.
        gt_crowd: ``[P]`` bool; a crowd region is matched by intersection
            over the prediction's area (IoF).

    Returns:
        ``[P]`` float64.  Mirrors pycocotools' ``bbIou`` operation for
        operation — ``min(x2) - max(x1)``, zero unless both sides are
        positive, union ``(da + ga) - i`` — so values that land exactly on a
        threshold land there in both tools.
    """
    return pair_iou_columns(dt_xyxy.T, dt_area, gt_xyxy.T, gt_area, gt_crowd)


def pair_iou_plus_one(dt_xyxy: np.ndarray, gt_xyxy: np.ndarray) -> np.ndarray:
    """VOC devkit overlap of aligned pairs ``[P]`` with +1-pixel extents.

    Follows ``voc_eval``: ``iw = max(min(x2) - max(x1) + 1, 0)``, union
    ``(dt_area + gt_area) - inter`` with areas ``(x2 - x1 + 1) * (y2 - y1 + 1)``.
    """
    iw = np.maximum(
        np.minimum(dt_xyxy[:, 2], gt_xyxy[:, 2]) - np.maximum(dt_xyxy[:, 0], gt_xyxy[:, 0]) + 1.0,
        0.0,
    )
    ih = np.maximum(
        np.minimum(dt_xyxy[:, 3], gt_xyxy[:, 3]) - np.maximum(dt_xyxy[:, 1], gt_xyxy[:, 1]) + 1.0,
        0.0,
    )
    inter = iw * ih
    dt_a = (dt_xyxy[:, 2] - dt_xyxy[:, 0] + 1.0) * (dt_xyxy[:, 3] - dt_xyxy[:, 1] + 1.0)
    gt_a = (gt_xyxy[:, 2] - gt_xyxy[:, 0] + 1.0) * (gt_xyxy[:, 3] - gt_xyxy[:, 1] + 1.0)
    union = dt_a + gt_a - inter
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def pair_iou_continuous(dt_xyxy: np.ndarray, gt_xyxy: np.ndarray) -> np.ndarray:
    """Plain IoU of aligned pairs ``[P]`` with continuous extents (no crowd)."""
    dt_a = (dt_xyxy[:, 2] - dt_xyxy[:, 0]) * (dt_xyxy[:, 3] - dt_xyxy[:, 1])
    gt_a = (gt_xyxy[:, 2] - gt_xyxy[:, 0]) * (gt_xyxy[:, 3] - gt_xyxy[:, 1])
    return pair_iou(dt_xyxy, dt_a, gt_xyxy, gt_a, np.zeros(len(dt_a), dtype=bool))


def iou_matrix(a_xyxy: np.ndarray, b_xyxy: np.ndarray) -> np.ndarray:
    """Continuous IoU of every box of ``a[N, 4]`` with every box of ``b[M, 4]`` -> ``[N, M]``."""
    n, m = len(a_xyxy), len(b_xyxy)
    ia = np.repeat(np.arange(n), m)
    ib = np.tile(np.arange(m), n)
    return pair_iou_continuous(a_xyxy[ia], b_xyxy[ib]).reshape(n, m)
