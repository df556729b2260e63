"""Instance masks through the pipeline: encoded once the image sizes are known.

Loaders keep the segmentations as the file gives them (:class:`PendingMasks`
in ``Dataset.masks``).  After the alignment every row's image is a ground
truth image, whose height and width pycocotools rasterises polygons at (a
results file's images are the ground truth's in ``loadRes``), so both sides
are encoded here, and the predictions' boxes and areas follow ``loadRes``:

* the FIRST result decides.  If it has a ``bbox``, every result goes through
  the bbox branch: its area is the given box's ``w * h`` (even when masks are
  scored) and a result without a segmentation gets its box as a polygon.  A
  later result without a ``bbox`` would crash pycocotools: it is scored with
  its mask's area and box, and a warning says so.
* otherwise every result goes through the segm branch: its area is the mask
  area and its box the mask's bounds (``toBbox``), a given box notwithstanding.
* a result's own ``area``, ``id`` and ``iscrowd`` are never read.

Ground truth keeps its ``area`` field for the area ranges, as COCO does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .dataset import Dataset
from .reconcile import Alignment


@dataclass(frozen=True)
class PendingMasks:
    """Segmentations of ``[N]`` rows as the file gave them, not yet rasterised.

    Attributes:
        segs: ``[N]`` object: polygon lists, RLE dicts, ``[]``, or None (none given).
        has_bbox: ``[N]`` bool, the row gave a ``bbox`` (predictions).
        path, origins, origin_label: where each row came from, for messages.
    """

    segs: np.ndarray
    has_bbox: np.ndarray
    path: str
    origins: np.ndarray
    origin_label: str = "annotations"

    def take(self, rows: np.ndarray) -> PendingMasks:
        return replace(
            self, segs=self.segs[rows], has_bbox=self.has_bbox[rows], origins=self.origins[rows]
        )

    def encode(self, height: np.ndarray, width: np.ndarray) -> tuple[Any, list[str]]:
        """``(MaskColumn[N], warnings)`` at each row's image size ``height[N]``, ``width[N]``."""
        from .masks import encode_segmentations

        # pycocotools keeps an RLE at its own size when it differs from the
        # image's (acceptance case 10g scores such masks): warn, don't refuse.
        return encode_segmentations(
            list(self.segs), height, width, path=self.path, origins=self.origins,
            origin_label=self.origin_label, size_mismatch="warn",
        )  # fmt: skip


def _row_sizes(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
    return ds.images.height[ds.image_idx], ds.images.width[ds.image_idx]


def _box_polygons(segs: np.ndarray, xyxy: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``segs`` with rows ``rows`` given their box as a polygon, as ``loadRes`` does."""
    out = segs.copy()
    for r in rows.tolist():
        x1, y1, x2, y2 = (float(v) for v in xyxy[r])
        out[r] = [[x1, y1, x1, y2, x2, y2, x2, y1]]
    return out


def _gt_masks(gt: Dataset) -> tuple[Dataset, list[str]]:
    pending = gt.masks
    if not isinstance(pending, PendingMasks):
        raise _no_masks(gt)
    missing = np.flatnonzero(np.array([s is None for s in pending.segs], dtype=bool))
    warnings: list[str] = []
    if len(missing):
        file, place = gt.where(int(missing[0]))
        warnings.append(
            f"{file}: {len(missing)} ground truth(s) have no 'segmentation' (first: {place}); "
            "scored as empty masks"
        )
    column, notes = pending.encode(*_row_sizes(gt))
    return replace(gt, masks=column), warnings + notes


def _pred_masks(pred: Dataset) -> tuple[Dataset, list[str]]:
    from .masks import mask_boxes

    pending = pred.masks
    if not isinstance(pending, PendingMasks):
        raise _no_masks(pred)
    warnings: list[str] = []
    bbox_branch = bool(len(pending.has_bbox)) and bool(pending.has_bbox[0])
    no_seg = np.flatnonzero(np.array([s is None for s in pending.segs], dtype=bool))
    segs = pending.segs
    if len(no_seg):
        boxed = no_seg[pending.has_bbox[no_seg]]
        segs = _box_polygons(segs, pred.xyxy, boxed)
        if len(boxed) < len(no_seg):
            file, place = pred.where(int(no_seg[~pending.has_bbox[no_seg]][0]))
            warnings.append(
                f"{file}: {len(no_seg) - len(boxed)} result(s) have neither a 'segmentation' "
                f"nor a 'bbox' (first: {place}); scored as empty masks"
            )
    column, notes = replace(pending, segs=segs).encode(*_row_sizes(pred))
    warnings += notes
    # Which rows take their box and area from the mask.
    from_mask = ~pending.has_bbox if bbox_branch else np.ones(len(pred), dtype=bool)
    if bbox_branch and from_mask.any():
        file, place = pred.where(int(np.flatnonzero(from_mask)[0]))
        warnings.append(
            f"{file}: {int(from_mask.sum())} result(s) have no 'bbox' although the first one "
            f"has (first: {place}); pycocotools would stop there: their boxes and areas come "
            "from their masks"
        )
    xyxy, bbox_area, area = pred.xyxy.copy(), pred.bbox_area.copy(), pred.bbox_area.copy()
    rows = np.flatnonzero(from_mask)
    if len(rows):
        xywh = mask_boxes(column.take(rows))
        xyxy[rows] = np.column_stack([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]])
        bbox_area[rows] = xywh[:, 2] * xywh[:, 3]
        area[rows] = column.area[rows]
    return replace(pred, masks=column, xyxy=xyxy, bbox_area=bbox_area, area=area), warnings


def _no_masks(ds: Dataset):
    from .errors import UsageError

    return UsageError(
        f"--iou-type segm: {ds.source} ({ds.format}) gives no masks",
        hint="masks are read from COCO segmentations and from polygon formats",
    )


def with_masks(alignment: Alignment) -> Alignment:
    """The alignment with both sides' masks encoded (``Dataset.masks`` a MaskColumn)."""
    gt, gt_notes = _gt_masks(alignment.gt)
    pred, pred_notes = _pred_masks(alignment.pred)
    return replace(
        alignment, gt=gt, pred=pred, warnings=(*alignment.warnings, *gt_notes, *pred_notes)
    )
