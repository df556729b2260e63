"""The one seam where a run picks its overlaps: boxes, or masks through the same interface.

:func:`geometry_for` builds the :class:`~iou_eval.geometry.pairs.Geometry`
of an aligned pair of datasets for an iou type; one module per geometry
(:mod:`.boxes`, :mod:`.masks`) implements it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iou_eval.geometry.boxes import BoxGeometry
from iou_eval.geometry.pairs import Geometry


class IouType:
    """The geometries a run can score, as the command line names them."""

    BBOX = "bbox"
    SEGM = "segm"
    ALL = (BBOX, SEGM)


def _boxes(gt, pred) -> Geometry:
    # A prediction's area is its box's w * h, unless loadRes set it from
    # its mask (results without boxes): ``area`` holds either.
    range_area = None if pred.area is pred.bbox_area else pred.area
    return BoxGeometry(pred.xyxy, pred.bbox_area, gt.xyxy, gt.bbox_area, gt.is_crowd, range_area)


def _masks(gt, pred) -> Geometry:
    from iou_eval.geometry.masks import MaskGeometry  # pycocotools only where masks are scored

    return MaskGeometry.of(gt, pred)


# iou type -> the builder of its geometry over an aligned (gt, pred) pair.
# A new geometry is one module implementing Geometry plus one line here.
GEOMETRIES: dict[str, Callable[[Any, Any], Geometry]] = {
    IouType.BBOX: _boxes,
    IouType.SEGM: _masks,
}


def geometry_for(gt, pred, iou_type: str = IouType.BBOX) -> Geometry:
    """The geometry of an aligned pair of datasets for ``iou_type`` (a key of :data:`GEOMETRIES`)."""
    build = GEOMETRIES.get(iou_type)
    if build is None:
        raise ValueError(f"unknown iou type {iou_type!r} (known: {', '.join(GEOMETRIES)})")
    return build(gt, pred)
