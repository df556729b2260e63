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
  area (a given box notwithstanding) and, without a ``bbox``, its box the
  mask's bounds (``toBbox``).  A ``bbox``-only run reads such results the
  same way (:func:`boxes_from_masks`).
* a result's own ``area``, ``id`` and ``iscrowd`` are never read.

Ground truth keeps its ``area`` field for the area ranges, as COCO does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.data.dataset import Dataset
from iou_eval.data.reconcile import Alignment
from iou_eval.engine.memory import release_free_memory


@dataclass(frozen=True)
class PendingMasks:
    """Segmentations of ``[N]`` rows as the file gave them, not yet rasterised.

    Attributes:
        segs: ``[N]`` object: polygon lists, RLE dicts, ``[]``, or None (none given).
        has_bbox: ``[N]`` bool, the row gave a ``bbox`` (predictions).
        path, origins, origin_label: where each row came from, for messages.
        checked: compressed RLEs the loader read and checked already
            (:class:`~iou_eval.geometry.masks.CheckedRles`; their ``segs`` are None), or None.
        encoded: ``(MaskColumn[N], warnings, height[N], width[N])`` when the
            loader encoded the masks already, at those sizes (see
            :func:`encode_early`); ``segs`` then only tell which rows had one.
        polygons: the rows' polygons as flat columns
            (:class:`~iou_eval.geometry.masks.FlatPolygons`; their ``segs`` are
            True), or None.
    """

    segs: np.ndarray
    has_bbox: np.ndarray
    path: str
    origins: np.ndarray
    origin_label: str = "annotations"
    checked: Any = None
    encoded: tuple | None = None
    polygons: Any = None

    def take(self, rows: np.ndarray) -> PendingMasks:
        encoded = self.encoded
        if encoded is not None:
            column, notes, height, width = encoded
            encoded = (column.take(rows), notes, height[rows], width[rows])
        return replace(
            self,
            segs=self.segs[rows],
            has_bbox=self.has_bbox[rows],
            origins=self.origins[rows],
            checked=None if self.checked is None else self.checked.take(rows),
            encoded=encoded,
            polygons=None if self.polygons is None else self.polygons.take(rows),
        )

    def missing(self) -> np.ndarray:
        """``[N]`` bool, the rows that give no segmentation."""
        rows = (
            np.arange(len(self.segs))
            if self.checked is None
            else np.flatnonzero(~self.checked.present)
        )
        # A checked string's row holds None in segs: only the other rows are read.
        none = np.zeros(len(self.segs), dtype=bool)
        segs = self.segs
        none[rows] = np.fromiter(
            (segs[r] is None for r in rows.tolist()), dtype=bool, count=len(rows)
        )
        return none

    def encode(self, height: np.ndarray, width: np.ndarray) -> tuple[Any, list[str]]:
        """``(MaskColumn[N], warnings)`` at each row's image size ``height[N]``, ``width[N]``."""
        from iou_eval.geometry.masks import encode_segmentations

        # pycocotools keeps an RLE at its own size when it differs from the
        # image's (acceptance case 10g scores such masks): warn, don't refuse.
        # An object array reads as the sequence of its values.
        return encode_segmentations(
            list(self.segs), height, width, path=self.path, origins=self.origins,
            origin_label=self.origin_label, size_mismatch="warn", checked=self.checked,
            polygons=self.polygons,
        )  # fmt: skip


@dataclass(frozen=True)
class PendingPolygons:
    """One polygon per row as a flat float array (YOLO-seg, LabelMe, CVAT), not yet rasterised.

    Attributes:
        polygons: ``[N]`` object: float64 ``[2P]`` arrays ``x1, y1, x2, y2, ...``
            in pixels, or in fractions of the image size (``fractions``).
        fractions: the coordinates are fractions: ``x * width``, ``y * height``
            of the row's image when encoded.
        files: the files the rows came from; ``origin_file[N]`` int32 into it.
        origins: ``[N]`` each row's line (or shape index), ``origin_label``
            what it counts.
        column: an encoding already made at the image sizes ``column.height``,
            ``column.width`` (a YOLO ground truth's masks give its areas), reused
            when the sizes asked for are the same.
        area_from_mask: a ground truth's ``area`` becomes the mask area when
            encoded (LabelMe, CVAT: as labelme2coco writes ``area``).
    """

    polygons: np.ndarray
    fractions: bool
    files: tuple[str, ...]
    origin_file: np.ndarray
    origins: np.ndarray
    origin_label: str = "line"
    column: Any = None
    area_from_mask: bool = False

    def take(self, rows: np.ndarray) -> PendingPolygons:
        return replace(
            self, polygons=self.polygons[rows], origin_file=self.origin_file[rows],
            origins=self.origins[rows], column=None if self.column is None else self.column.take(rows),
        )  # fmt: skip

    def where(self, row: int) -> tuple[str, str]:
        """``(file, place)`` of row ``row``."""
        f = self.files[int(self.origin_file[row])] if self.files else ""
        o = int(self.origins[row])
        return f, str(o) if self.origin_label == "line" else f"{self.origin_label}[{o}]"

    def encode(self, height: np.ndarray, width: np.ndarray) -> tuple[Any, list[str]]:
        """``(MaskColumn[N], warnings)`` at each row's image size ``height[N]``, ``width[N]``.

        As :func:`~iou_eval.geometry.masks.polygon_rles` rasterises one polygon per
        row; a contour of 1 or 2 points has no pixels, with a warning that
        names the first file and place; errors name the row's file and place.
        """
        from iou_eval.errors import InputError
        from iou_eval.geometry.masks import polygon_rles

        h = np.asarray(height, dtype=np.float64)
        w = np.asarray(width, dtype=np.float64)
        c = self.column
        if c is not None and np.array_equal(c.height, h) and np.array_equal(c.width, w):
            return c, []
        n = len(self.polygons)
        known = np.isfinite(h) & np.isfinite(w)
        polygons = (
            scaled_polygons(self.polygons, np.where(known, w, 0.0), np.where(known, h, 0.0))
            if self.fractions
            else list(self.polygons)
        )
        try:
            # Rows are numbered 0..N-1 here, so that an error finds its row.
            column, _ = polygon_rles(polygons, h, w, origins=np.arange(n), origin_label="line")
        except InputError as exc:
            file, place = self.where(int(str(exc.where)))
            raise InputError(file, exc.message, where=place, hint=exc.hint) from None
        lens = np.fromiter((len(p) for p in polygons), dtype=np.int64, count=n)
        short = np.flatnonzero(lens < 6)
        warnings = []
        if len(short):
            file, place = self.where(int(short[0]))
            warnings.append(
                f"{len(short)} polygon(s) of 1 or 2 points have no pixels (first: {file}:{place})"
            )
        return column, warnings


def scaled_polygons(
    polygons: np.ndarray, width: np.ndarray, height: np.ndarray
) -> list[np.ndarray]:
    """Fractional flat polygons ``[N]`` in pixels: x times ``width[N]``, y times ``height[N]``.

    One multiplication over all coordinates (no per-row Python arithmetic).
    """
    n = len(polygons)
    if not n:
        return []
    lens = np.fromiter((len(p) for p in polygons), dtype=np.int64, count=n)
    flat = np.concatenate([np.asarray(p, dtype=np.float64) for p in polygons])
    row = np.repeat(np.arange(n), lens)
    odd = (np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)) % 2 == 1
    flat = flat * np.where(odd, height[row], width[row])
    return np.split(flat, np.cumsum(lens)[:-1])


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
    if isinstance(pending, PendingPolygons):
        column, notes = pending.encode(*_row_sizes(gt))
        area = column.area.copy() if pending.area_from_mask else gt.area
        return replace(gt, masks=column, area=area), [f"{gt.source}: {n}" for n in notes]
    if not isinstance(pending, PendingMasks):
        raise _no_masks(gt)
    missing = np.flatnonzero(pending.missing())
    warnings: list[str] = []
    if len(missing):
        file, place = gt.where(int(missing[0]))
        warnings.append(
            f"{file}: {len(missing)} ground truth(s) have no 'segmentation' (first: {place}); "
            "scored as empty masks"
        )
    height, width = _row_sizes(gt)
    if pending.encoded is not None:
        column, notes, at_h, at_w = pending.encoded
        # Known image sizes never change in the alignment (reconcile fills
        # unknown ones only), so masks encoded at the loader's sizes stand.
        if not (np.array_equal(at_h, height) and np.array_equal(at_w, width)):
            raise RuntimeError("ground-truth masks were encoded at other image sizes")
    else:
        column, notes = pending.encode(height, width)
    return replace(gt, masks=column), warnings + notes


def encode_early(gt: Dataset) -> Dataset:
    """``gt`` with its masks encoded now, when every row's image has a known size.

    The ground truth is read in a worker process while the predictions are
    read: rasterising its polygons there takes that work off the main
    process's path.  The polygons are dropped once encoded (their memory is
    the largest part of a COCO ground truth's).  Unchanged when a size is
    unknown (it may come from the predictions' side or ``--image-size``).
    """
    pending = gt.masks
    if not isinstance(pending, PendingMasks) or pending.encoded is not None:
        return gt
    height, width = gt.images.height[gt.image_idx], gt.images.width[gt.image_idx]
    if not (np.isfinite(height).all() and np.isfinite(width).all()):
        return gt
    column, notes = pending.encode(height, width)
    # The masks' boxes (which spare the matcher most overlaps) are computed
    # here too, and travel back with the column.
    column.boxes  # noqa: B018
    given = np.empty(len(pending.segs), dtype=object)
    given[~pending.missing()] = True  # which rows gave a segmentation, for the warning
    encoded = (column, notes, height, width)
    return replace(gt, masks=replace(pending, segs=given, encoded=encoded, polygons=None))


def _pred_masks(pred: Dataset, segm: bool = True) -> tuple[Dataset, list[str]]:
    """The predictions' masks encoded, and their boxes and areas as ``loadRes`` gives them.

    ``segm``: masks are scored (the note on box areas concerns their area ranges).
    """
    from iou_eval.geometry.masks import mask_boxes

    pending = pred.masks
    if isinstance(pending, PendingPolygons):
        return _pred_polygon_masks(pred, pending)
    if not isinstance(pending, PendingMasks):
        raise _no_masks(pred)
    warnings: list[str] = []
    bbox_branch = bool(len(pending.has_bbox)) and bool(pending.has_bbox[0])
    no_seg = np.flatnonzero(pending.missing())
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
    # A result without a box takes the mask's (toBbox); in the segm branch every
    # result's area is its mask's, a given box notwithstanding (loadRes keeps the box).
    box_from_mask = ~pending.has_bbox
    area_from_mask = box_from_mask if bbox_branch else np.ones(len(pred), dtype=bool)
    if bbox_branch and box_from_mask.any():
        file, place = pred.where(int(np.flatnonzero(box_from_mask)[0]))
        warnings.append(
            f"{file}: {int(box_from_mask.sum())} result(s) have no 'bbox' although the first "
            f"one has (first: {place}); pycocotools would stop there: their boxes and areas "
            "come from their masks"
        )
    if bbox_branch and segm:
        warnings.append(box_area_note(pred.source, int((~box_from_mask).sum()), len(pred)))
    xyxy, bbox_area, area = pred.xyxy.copy(), pred.bbox_area.copy(), pred.bbox_area.copy()
    rows = np.flatnonzero(box_from_mask)
    if len(rows):
        xywh = mask_boxes(column.take(rows))
        xyxy[rows] = np.column_stack([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]])
        bbox_area[rows] = xywh[:, 2] * xywh[:, 3]
    area[area_from_mask] = column.area[area_from_mask]
    return replace(pred, masks=column, xyxy=xyxy, bbox_area=bbox_area, area=area), warnings


def box_area_note(source: str, boxed: int, total: int) -> str:
    """The note that pycocotools' first-result rule gave ``boxed`` of ``total`` results box areas.

    ``loadRes`` looks at the first result only: when it has a ``bbox``, every
    result's ``area`` is its box's ``w * h``, and under ``segm`` that area,
    not the mask's, places the result in the area ranges.
    """
    return (
        f"{source}: the first result has a 'bbox', so, as in pycocotools' loadRes, the area of "
        f"{boxed} of {total} results is their box's w*h, not their mask's pixel count: the area "
        "ranges of segm (APs, APm, APl, ARs, ARm, ARl) place them by their boxes; for mask "
        "areas, write the results without 'bbox'"
    )


def _pred_polygon_masks(pred: Dataset, pending: PendingPolygons) -> tuple[Dataset, list[str]]:
    """Predictions given as polygons (no bbox): pycocotools' segm branch of ``loadRes``.

    Box and area come from the mask (``toBbox``, ``area``), as for a COCO
    result that gives a segmentation and no ``bbox``.
    """
    from iou_eval.geometry.masks import mask_boxes

    column, notes = pending.encode(*_row_sizes(pred))
    xywh = mask_boxes(column)
    xyxy = np.column_stack([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]]).reshape(-1, 4)
    bbox_area = xywh[:, 2] * xywh[:, 3]
    return (
        replace(pred, masks=column, xyxy=xyxy, bbox_area=bbox_area, area=column.area.copy()),
        [f"{pred.source}: {n}" for n in notes],
    )


def _no_masks(ds: Dataset):
    from iou_eval.errors import UsageError

    return UsageError(
        f"--iou-type segm/boundary: {ds.source} ({ds.format}) gives no masks",
        hint="masks are read from COCO segmentations and from polygon formats",
    )


def with_masks(alignment: Alignment) -> Alignment:
    """The alignment with both sides' masks encoded (``Dataset.masks`` a MaskColumn)."""
    gt, gt_notes = _gt_masks(alignment.gt)
    pred, pred_notes = _pred_masks(alignment.pred)
    # Reading hundreds of thousands of mask strings leaves freed decoding
    # memory that glibc keeps; return it before the matching workers fork.
    release_free_memory()
    return replace(
        alignment, gt=gt, pred=pred, warnings=(*alignment.warnings, *gt_notes, *pred_notes)
    )


def boxes_from_masks(alignment: Alignment) -> Alignment:
    """A ``bbox``-only run whose results give masks without boxes, scored as ``loadRes`` reads them.

    The COCO loader keeps the masks of such results (:class:`PendingMasks`);
    here they give each result without a ``bbox`` its box (``toBbox``) and,
    when the first result has no box, every result its mask's area (the
    area ranges read it).  The masks are dropped once read.  Any other
    alignment comes back unchanged.
    """
    pred = alignment.pred
    if not isinstance(pred.masks, PendingMasks):
        return alignment
    scored, notes = _pred_masks(pred, segm=False)
    unboxed = int((~pred.masks.has_bbox).sum())
    first = "" if pred.masks.has_bbox[:1].all() else (
        " and, as the first result has no 'bbox', every result's area is its mask's pixel count"
    )  # fmt: skip
    notes.append(
        f"{pred.source}: {unboxed} result(s) give a mask and no 'bbox': as pycocotools' loadRes "
        f"does, their box is the mask's bounds (toBbox){first}"
    )
    release_free_memory()
    return replace(
        alignment, pred=replace(scored, masks=None), warnings=(*alignment.warnings, *notes)
    )


def boxes_view(plain: Alignment, masked: Alignment) -> Alignment:
    """What a ``bbox`` protocol scores in a run that scores masks too (``--iou-type bbox,segm``).

    Polygon formats (YOLO-seg, LabelMe, CVAT) keep their polygons' bounds
    and areas, as a ``bbox``-only run reads them (CONVENTIONS, YOLO-seg
    input); COCO results keep ``loadRes``'s boxes and areas, which the masks
    may have given.
    """
    gt = plain.gt if isinstance(plain.gt.masks, PendingPolygons) else masked.gt
    pred = plain.pred if isinstance(plain.pred.masks, PendingPolygons) else masked.pred
    return replace(masked, gt=gt, pred=pred)
