"""Box layouts as files write them, and their conversion to ``xyxy`` (pure numpy).

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
    if fmt is BoxFormat.XYWH:
        w, h = b[:, 2], b[:, 3]
        # w + x and h + y (the same sums as x + w, y + h) added in place to a copy,
        # one column at a time: numpy runs a column of N in one loop, where an
        # [N, 2] block costs it a short loop per row.
        out = b.copy()
        out[:, 2] += b[:, 0]
        out[:, 3] += b[:, 1]
    elif fmt is BoxFormat.XYXY:
        out = b.copy()
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    elif fmt is BoxFormat.CXCYWH:
        out = np.empty_like(b)
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
