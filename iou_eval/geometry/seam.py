"""The one seam where a run picks its overlaps: boxes, masks, boundaries or keypoints through one interface.

:func:`geometry_for` builds the :class:`~iou_eval.geometry.pairs.Geometry`
of an aligned pair of datasets for an iou type; one module per geometry
(:mod:`.boxes`, :mod:`.masks`, :mod:`.boundary`, :mod:`.obb`) implements it.
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
    BOUNDARY = "boundary"
    OBB = "obb"
    KEYPOINTS = "keypoints"
    ALL = (BBOX, SEGM, BOUNDARY, OBB, KEYPOINTS)
    # The iou types that score instance masks (the files' masks must be read).
    MASKS = (SEGM, BOUNDARY)


def _boxes(gt, pred, **_params: Any) -> Geometry:
    # A prediction's area is its box's w * h, unless loadRes set it from
    # its mask (results without boxes): ``area`` holds either.
    range_area = None if pred.area is pred.bbox_area else pred.area
    return BoxGeometry(pred.xyxy, pred.bbox_area, gt.xyxy, gt.bbox_area, gt.is_crowd, range_area)


def _masks(gt, pred, **_params: Any) -> Geometry:
    from iou_eval.geometry.masks import MaskGeometry  # pycocotools only where masks are scored

    return MaskGeometry.of(gt, pred)


def _boundaries(gt, pred, dilation_ratio: float | None = None, **_params: Any) -> Geometry:
    from iou_eval.geometry.boundary import DEFAULT_DILATION_RATIO, BoundaryGeometry

    ratio = DEFAULT_DILATION_RATIO if dilation_ratio is None else dilation_ratio
    return BoundaryGeometry.of(gt, pred, ratio)


def _oriented(gt, pred, **_params: Any) -> Geometry:
    from iou_eval.geometry.obb import OrientedGeometry

    return OrientedGeometry.of(gt, pred)


def _keypoints(gt, pred, **_params: Any) -> Geometry:
    from iou_eval.geometry.keypoints import KeypointGeometry

    return KeypointGeometry.of(gt, pred)


# iou type -> the builder of its geometry over an aligned (gt, pred) pair and
# the protocol's geometry parameters (keywords a builder reads or leaves).
# A new geometry is one module implementing Geometry plus one line here.
GEOMETRIES: dict[str, Callable[..., Geometry]] = {
    IouType.BBOX: _boxes,
    IouType.SEGM: _masks,
    IouType.BOUNDARY: _boundaries,
    IouType.OBB: _oriented,
    IouType.KEYPOINTS: _keypoints,
}


def geometry_for(gt, pred, iou_type: str = IouType.BBOX, **params: Any) -> Geometry:
    """The geometry of an aligned pair of datasets for ``iou_type`` (a key of :data:`GEOMETRIES`).

    ``params``: what a protocol sets of the geometry (``dilation_ratio`` of
    ``boundary``; see ``Protocol.geometry_params``).
    """
    build = GEOMETRIES.get(iou_type)
    if build is None:
        raise ValueError(f"unknown iou type {iou_type!r} (known: {', '.join(GEOMETRIES)})")
    return build(gt, pred, **params)
