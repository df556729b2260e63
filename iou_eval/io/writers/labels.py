"""One input read for conversion: what a writer receives.

The input is read as the evaluation reads it (:mod:`iou_eval.io.inputs`):
the read options apply, fractions are scaled to pixels, and predictions
given with their ground truth (``--gt REF``) are joined to its images and
classes (:func:`~iou_eval.data.reconcile.align`), so that a writer names
them as the converted ground truth does.  The rows keep the order the
evaluation sorts images and classes in, so that the converted files score
the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable
from iou_eval.data.plausibility import layout_doubts
from iou_eval.data.reconcile import align, canonical, scale_fractions
from iou_eval.errors import InputError, IouEvalError, UsageError
from iou_eval.io.inputs import (
    detect_pred_format,
    finish_loaded,
    load_options,
    pair_doubts,
    prepare_pair,
)
from iou_eval.io.loaders import detect_format
from iou_eval.io.loaders import load as load_path
from iou_eval.io.loaders.registry import find as find_format
from iou_eval.options import ReadOptions


@dataclass(frozen=True)
class Labels:
    """The rows of one input, ready to be written.

    Attributes:
        role: ``"gt"`` or ``"pred"``.
        source: the input path; ``fmt`` its format.
        rows: the dataset, boxes in pixels (``xyxy``), ``image_idx`` and
            ``category_idx`` into ``images`` and ``categories`` (for
            predictions given ``--gt``: the ground truth's, its ``K``
            classes first, then classes only in the predictions).
        n_categories: ``K``, the categories of the class list (the ground truth's).
        polygons: ``[N]`` per row a list of flat float64 ``[x1, y1, ...]``
            parts in pixels, or None (a box); None: the input holds none.
        rles: ``[N]`` per row a COCO RLE dict (a mask given as a run-length
            encoding), or None; None: the input holds none.
        corners: ``[N, 4, 2]`` oriented boxes in pixels, or None.
        notes: what reading said (warnings, doubts).
        joined: predictions joined to their ground truth (``--gt``).
        class_order: the ``K`` classes in the class list's own order (``--names``,
            the file's list, or first seen), as positions in ``categories``;
            empty: their order in ``categories``.
    """

    role: str
    source: str
    fmt: str
    rows: Dataset
    n_categories: int
    polygons: list[list[np.ndarray] | None] | None = None
    rles: list[dict[str, Any] | None] | None = None
    corners: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    joined: bool = False
    class_order: tuple[int, ...] = ()

    @property
    def images(self) -> ImageTable:
        return self.rows.images

    @property
    def categories(self) -> CategoryTable:
        return self.rows.categories

    @property
    def is_prediction(self) -> bool:
        return self.role == "pred"

    def image_name(self, i: int) -> str:
        """The image's file name (the id where the input names none)."""
        name = self.images.file_names[i]
        return str(name) if name else str(self.images.ids[i])


def _load(path: str, role: str, fmt: str, read: ReadOptions, masks: bool) -> Dataset:
    how = replace(load_options(read, role, fmt), masks=masks)
    return finish_loaded(load_path(path, role, fmt, how), role, read, path)


def _read_side(path: str, role: str, fmt: str | None, read: ReadOptions) -> tuple[Dataset, str]:
    """One file read as the evaluation reads it (boxes), with the polygons its format has.

    The polygons come from a second read that keeps them (a loader reads
    them only for masks); when that read fails, the boxes are written alone.
    """
    fmt = fmt or detect_format(path)
    ds = _load(path, role, fmt, read, masks=False)
    spec = find_format(fmt)
    if spec is None or not spec.polygons:
        return ds, fmt
    try:
        shaped = _load(path, role, fmt, read, masks=True)
    except IouEvalError as exc:
        message = exc.format().splitlines()[0]
        if "box row" in message:  # a YOLO dataset of boxes: nothing to keep
            return ds, fmt
        note = f"{path}: outlines not kept, boxes only ({message})"
        return replace(ds, warnings=(*ds.warnings, note)), fmt
    if len(shaped) != len(ds) or ds.oriented is not None:
        return ds, fmt  # an oriented box's outline is its corners, kept as such
    return replace(ds, masks=shaped.masks), fmt


def guess_role(path: str, fmt: str | None, read: ReadOptions) -> str:
    """``"pred"`` when ``path`` reads as predictions (scores present), else ``"gt"``."""
    try:
        _load(path, "pred", fmt or detect_format(path), read, masks=False)
    except (InputError, UsageError):
        return "gt"
    return "pred"


def read_labels(path: str, role: str, read: ReadOptions, gt_ref: str | None = None) -> Labels:
    """``path`` read as ``role`` (``gt``/``pred``), joined to ``gt_ref`` when given.

    Raises:
        InputError / UsageError: as the evaluation's reading raises them.
    """
    if role == "gt" or gt_ref is None:
        fmt = read.gt_format if role == "gt" else read.pred_format
        ds, fmt = _read_side(path, role, fmt, read)
        shapes = _outlines(ds, path, fmt)
        own = ds.categories.ids
        ds = scale_fractions(ds, read.image_size)
        ds = canonical(ds) if role == "gt" else ds
        notes = [*ds.warnings, *layout_doubts(ds, role), *_unit_note(ds)]
        position = {k: i for i, k in enumerate(ds.categories.ids)}
        labels = _labels(role, path, fmt, ds, len(ds.categories), notes, shapes)
        return replace(labels, class_order=tuple(position[k] for k in own))
    gt, gt_fmt = _read_side(gt_ref, "gt", read.gt_format, read)
    pred_fmt, note = read.pred_format, None
    if pred_fmt is None:
        pred_fmt, note = detect_pred_format(path, gt_fmt)
    pred, pred_fmt = _read_side(path, "pred", pred_fmt, read)
    shapes = _outlines(pred, path, pred_fmt)
    gt, pred, shifted = prepare_pair(gt, pred, read)
    alignment = align(gt, pred, read.image_size)
    notes = [*([note] if note else []), *alignment.warnings, *_unit_note(gt)]
    notes += pair_doubts(alignment, shifted, read)
    kept = _kept_rows(pred, alignment)
    labels = _labels(
        "pred", path, pred_fmt, alignment.pred, alignment.n_categories, notes, shapes, kept
    )
    return replace(labels, joined=True, class_order=alignment.class_order)


def _unit_note(ds: Dataset) -> list[str]:
    """A note when the boxes are fractions of images of unknown size (Open Images without sizes)."""
    from iou_eval.io.inputs import unsized

    if not unsized(ds):
        return []
    return [
        f"{ds.source}: the image sizes are unknown: boxes are written as fractions of a "
        "1 x 1 image (pass --images DIR for pixels)"
    ]


def _kept_rows(pred: Dataset, alignment: Any) -> np.ndarray:
    """``[N']`` the rows of ``pred`` the alignment kept (those on ground-truth images)."""
    from iou_eval.data.reconcile import image_map

    img_map, _ = image_map(alignment.gt.images, pred.images, key_is_name=not pred.traits.coco_ids)
    if not len(pred):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(img_map[pred.image_idx] >= 0)


def _labels(
    role: str,
    path: str,
    fmt: str,
    rows: Dataset,
    k: int,
    notes: list[str],
    shapes: tuple[list | None, list | None, bool],
    kept: np.ndarray | None = None,
) -> Labels:
    """The record; ``shapes``: the loaded rows' outlines (see :func:`_outlines`), rows ``kept``."""
    polygons, rles, fractions = shapes
    if kept is not None:
        polygons = None if polygons is None else [polygons[i] for i in kept]
        rles = None if rles is None else [rles[i] for i in kept]
    if fractions and polygons is not None:
        polygons = _scaled(polygons, rows)
    corners = None if rows.oriented is None else np.asarray(rows.oriented.corners, np.float64)
    return Labels(
        role=role, source=path, fmt=fmt, rows=replace(rows, masks=None, warnings=()),
        n_categories=k, polygons=polygons, rles=rles, corners=corners, notes=tuple(notes),
    )  # fmt: skip


def _outlines(ds: Dataset, path: str, fmt: str) -> tuple[list | None, list | None, bool]:
    """``(polygons[N], rles[N], fractions)`` of the rows as the file gave them."""
    spec = find_format(fmt)
    if spec is not None and (
        spec.coco_ids or (spec.ultralytics_dataset and path.lower().endswith(".json"))
    ):
        return (*_coco_segmentations(ds, path), False)
    masks = ds.masks
    polys = getattr(masks, "polygons", None)
    if polys is None:
        return None, None, False
    rect = np.stack([ds.xyxy[:, i] for i in (0, 1, 2, 1, 2, 3, 0, 3)], axis=1)
    fractions = bool(getattr(masks, "fractions", False))
    out: list[list[np.ndarray] | None] = []
    for i, p in enumerate(polys):
        flat = np.asarray(p, dtype=np.float64).reshape(-1)
        # The loader gives a box row its rectangle as the outline: a box again.
        box = len(flat) == 8 and np.array_equal(flat, rect[i])
        out.append(None if box or len(flat) < 6 else [flat])
    if all(p is None for p in out):
        return None, None, False
    return out, None, fractions


def _scaled(polygons: list, rows: Dataset) -> list:
    """Polygons in fractions of their image's size, in pixels of ``rows``' images."""
    w = rows.images.width[rows.image_idx]
    h = rows.images.height[rows.image_idx]
    out: list[list[np.ndarray] | None] = []
    for i, parts in enumerate(polygons):
        if parts is None:
            out.append(None)
            continue
        scaled = []
        for flat in parts:
            q = flat.copy()
            q[0::2] *= w[i]
            q[1::2] *= h[i]
            scaled.append(q)
        out.append(scaled)
    return out


def _coco_segmentations(ds: Dataset, path: str) -> tuple[list | None, list | None]:
    """The ``segmentation`` of each row of a COCO file: polygon parts or an RLE dict."""
    from iou_eval.io.source import read_input

    try:
        doc = json.loads(read_input(path))
    except (ValueError, IouEvalError):
        return None, None
    anns = doc.get("annotations") if isinstance(doc, dict) else doc
    if not isinstance(anns, list):
        return None, None
    polygons: list[list[np.ndarray] | None] = []
    rles: list[dict[str, Any] | None] = []
    for o in ds.origin.tolist():
        seg = anns[o].get("segmentation") if 0 <= o < len(anns) else None
        if isinstance(anns[o], dict) and isinstance(seg, list) and seg:
            parts = [np.asarray(p, dtype=np.float64) for p in seg if isinstance(p, list)]
            polygons.append([p for p in parts if len(p) >= 6] or None)
            rles.append(None)
        elif isinstance(seg, dict) and "counts" in seg:
            polygons.append(None)
            rles.append(seg)
        else:
            polygons.append(None)
            rles.append(None)
    has_poly = any(p is not None for p in polygons)
    has_rle = any(r is not None for r in rles)
    return (polygons if has_poly else None), (rles if has_rle else None)
