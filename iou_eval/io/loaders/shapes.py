"""Rows that are boxes or polygons: the box columns plus the polygons kept aside.

Loaders of formats that hold polygons (YOLO-seg, LabelMe, CVAT) evaluate
boxes today: a polygon's box is its bounds.  The polygons themselves are
kept, one flat float64 array ``[x1, y1, x2, y2, ...]`` per row (None for a
box row), so that a mask column can take them later without re-reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.geometry.segm import PendingPolygons
from iou_eval.io.loaders.common import ClassVocabulary, LoadOptions

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.data.dataset import Dataset


class ShapeRows:
    """Collects rows one shape at a time; :meth:`columns` gives the arrays.

    Coordinates are whatever the loader gives (pixels or fractions), the
    same for every row of one collection.
    """

    def __init__(self) -> None:
        self._boxes: list[Sequence[float]] = []
        self._polygons: list[np.ndarray | None] = []

    def __len__(self) -> int:
        return len(self._boxes)

    def add_box(self, x1: float, y1: float, x2: float, y2: float) -> None:
        """A box by its corners, in any order: the row's box is their min/max."""
        self._boxes.append((min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)))
        self._polygons.append(None)

    def add_polygon(self, flat: np.ndarray) -> None:
        """A polygon ``[2P]`` (x, y pairs); the row's box is its bounds."""
        flat = np.asarray(flat, dtype=np.float64).reshape(-1)
        self._boxes.append(polygon_bounds(flat))
        self._polygons.append(flat)

    def columns(self) -> tuple[np.ndarray, list[np.ndarray | None]]:
        """``xyxy[N, 4]`` float64 and the ``N`` polygons (None for box rows)."""
        n = len(self._boxes)
        return np.asarray(self._boxes, dtype=np.float64).reshape(n, 4), list(self._polygons)


class ShapeReader:
    """The columns a reader of labelled shapes (LabelMe, CVAT) fills one shape at a time.

    Subclasses read their format and append to these lists; :meth:`columns`
    gives what :func:`~iou_eval.io.loaders.common.assemble` takes of them.
    """

    def __init__(self, role: str, options: LoadOptions) -> None:
        self.pred = role == "pred"
        self.classes = ClassVocabulary(options.names)
        self.rows = ShapeRows()
        self.category_idx: list[int] = []
        self.image_idx: list[int] = []
        self.scores: list[float] = []
        self.ignore: list[bool] = []
        self.origin: list[int] = []

    def columns(self) -> tuple[dict[str, Any], list[np.ndarray | None]]:
        """``assemble`` keywords of the rows read (``xyxy`` boxes), and each row's polygon."""
        xyxy, polygons = self.rows.columns()
        return {
            "categories": self.classes.table(),
            "image_idx": np.asarray(self.image_idx, dtype=np.int64),
            "category_idx": np.asarray(self.category_idx, dtype=np.int64),
            "boxes": xyxy,
            "box_format": BoxFormat.XYXY,
            "score": np.asarray(self.scores, dtype=np.float64) if self.pred else None,
            "ignore": np.asarray(self.ignore, dtype=bool),
            "origin": np.asarray(self.origin, dtype=np.int64),
        }, polygons


def polygon_bounds(flat: np.ndarray) -> tuple[float, float, float, float]:
    """``(x1, y1, x2, y2)``: min and max of a flat ``[x, y, x, y, ...]`` polygon."""
    xs, ys = flat[0::2], flat[1::2]
    return float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())


def scale_polygons(
    polygons: Sequence[np.ndarray | None], width: np.ndarray, height: np.ndarray
) -> list[np.ndarray | None]:
    """Fractional polygons in pixels: x times ``width[N]``, y times ``height[N]`` of each row."""
    out: list[np.ndarray | None] = []
    for p, w, h in zip(polygons, width, height, strict=True):
        if p is None:
            out.append(None)
            continue
        q = p.copy()
        q[0::2] *= w
        q[1::2] *= h
        out.append(q)
    return out


def object_column(items: Sequence[object]) -> np.ndarray:
    """``[N]`` object array holding ``items`` (arrays of equal length stay separate items)."""
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


def box_outlines(
    polygons: Sequence[np.ndarray | None], xyxy: np.ndarray
) -> tuple[list[np.ndarray], int]:
    """Every row's outline for a mask: its polygon, or its box ``xyxy[N, 4]`` as a rectangle.

    Returns the ``N`` flat outlines and how many rows were boxes.  A box
    becomes ``[x1, y1, x2, y1, x2, y2, x1, y2]``, as pycocotools' ``loadRes``
    gives a result without a segmentation its box as a polygon.
    """
    x1, y1, x2, y2 = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4).T
    rect = np.stack([x1, y1, x2, y1, x2, y2, x1, y2], axis=1)
    out: list[np.ndarray] = []
    boxed = 0
    for i, p in enumerate(polygons):
        if p is None:
            out.append(rect[i])
            boxed += 1
        else:
            out.append(p)
    return out, boxed


def pending_outlines(
    dataset: Dataset, polygons: list[np.ndarray | None], role: str
) -> PendingPolygons:
    """In ``segm`` mode: every row's outline in pixels (a box as its rectangle), to rasterise.

    A ground truth's area is then its mask's (LabelMe and CVAT give none).
    """
    outlines, _ = box_outlines(polygons, dataset.xyxy)
    return PendingPolygons(
        polygons=object_column(outlines),
        fractions=False,
        files=dataset.files,
        origin_file=dataset.origin_file,
        origins=dataset.origin,
        origin_label=dataset.origin_label,
        area_from_mask=role == "gt",
    )
