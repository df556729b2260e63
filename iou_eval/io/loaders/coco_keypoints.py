"""COCO keypoints: the ``keypoints`` of ground truths and results as a keypoint column.

Read with ``--iou-type keypoints`` (``LoadOptions.keypoints``), as
``COCO.loadRes`` and ``COCOeval(iouType="keypoints")`` read them:

* ``keypoints`` is ``[x1, y1, v1, x2, y2, v2, ...]``: a multiple of 3 numbers,
  every one finite.  A ground truth's labels are ``v > 0``; a result's third
  numbers (confidences) are read and never used.
* A ground truth needs ``keypoints``; its ``num_keypoints`` (0: ignored) is
  counted from its labels where the file gives none, with a note.  Every
  ground truth of one category has the same number of keypoints.
* Results: the FIRST result decides the ``loadRes`` branch.  With a ``bbox``,
  every result needs one and its area is that box's ``w * h``; without one,
  each result's box is the extent of all its keypoints (unlabelled ``(0, 0)``
  points included, as pycocotools takes them) and its area that box's
  ``w * h``, whatever box a later result gives.  A result's own ``area`` is
  never read.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from iou_eval.data.dataset import Dataset
from iou_eval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.geometry.keypoints import KeypointColumn


def carries_keypoints(path: str, role: str) -> bool:
    """Whether a COCO file carries keypoints: a ground truth's annotations count them
    (``num_keypoints``), a results list holds them in its first megabyte."""
    from iou_eval.io.source import file_holds

    if role == "gt":
        return file_holds(path, b'"num_keypoints"')
    return file_holds(path, b'"keypoints"', limit=1 << 20)


def split_triplets(values: np.ndarray) -> dict:
    """``kp_x``, ``kp_y`` ``[B / 3]`` float64 and ``kp_visible`` ``[B / 3]`` bool (``v > 0``)
    of ``[x1, y1, v1, x2, ...]`` triplets back to back."""
    trip = values.reshape(-1, 3)
    return {"kp_x": trip[:, 0].copy(), "kp_y": trip[:, 1].copy(), "kp_visible": trip[:, 2] > 0}


def keypoint_columns(anns: list, path: str, label: str, role: str, offset: int = 0) -> dict:
    """``kp_x``, ``kp_y``, ``kp_visible`` (:func:`split_triplets`), ``kp_length[N]`` int64
    (3 numbers a keypoint), ``num_keypoints[N]`` (-1: absent).

    ``anns`` decoded with ``keypoints`` and ``num_keypoints`` fields; errors
    name ``label.format(offset + i)``.
    """
    n = len(anns)
    raw = list(map(attrgetter("keypoints"), anns))
    missing = [i for i, k in enumerate(raw) if k is None]
    if missing:
        what = "ground truth" if role == "gt" else "result"
        raise InputError(
            path,
            f"{what} has no 'keypoints' (scored with --iou-type keypoints)",
            where=label.format(offset + missing[0]),
            hint="keypoints are [x1, y1, v1, x2, y2, v2, ...] triplets",
        )
    length = np.fromiter(map(len, raw), dtype=np.int64, count=n)
    bad = np.flatnonzero((length % 3 != 0) | ((length == 0) & (role == "pred")))
    if len(bad):
        i = int(bad[0])
        raise InputError(
            path,
            f"'keypoints' needs x, y, v triplets (a positive multiple of 3 numbers), got "
            f"{int(length[i])}",
            where=label.format(offset + i) + ".keypoints",
        )
    values = np.fromiter(chain.from_iterable(raw), dtype=np.float64, count=int(length.sum()))
    if not np.isfinite(values).all():
        row = int(
            np.searchsorted(np.cumsum(length), np.flatnonzero(~np.isfinite(values))[0], "right")
        )
        raise InputError(
            path, "keypoint numbers must be finite", where=label.format(offset + row) + ".keypoints"
        )
    num = [a.num_keypoints for a in anns]
    return {
        **split_triplets(values),
        "kp_length": length,
        "num_keypoints": np.array([-1 if v is None else v for v in num], dtype=np.int64),
    }


def _row_points(cols: dict, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x, y, visible, count)``: the keypoints of ``rows`` (a slice or positions) of ``cols``.

    ``cols`` holds ``kp_x``, ``kp_y``, ``kp_visible`` (the compiled reader's
    layout) or ``kp_values`` triplets, and ``kp_length`` (numbers of each row).
    """
    if "kp_x" not in cols:
        cols = {**cols, **split_triplets(cols["kp_values"])}
    count = cols["kp_length"] // 3
    x, y, visible = cols["kp_x"], cols["kp_y"], cols["kp_visible"]
    if isinstance(rows, slice):
        return x, y, visible, count
    start = np.cumsum(count) - count
    picked = count[rows]
    index = np.repeat(start[rows] - (np.cumsum(picked) - picked), picked) + np.arange(picked.sum())
    return x[index], y[index], visible[index], picked


def attach_keypoints(ds: Dataset, cols: dict, rows, role: str, path: str) -> Dataset:
    """``ds`` (the rows ``rows`` of ``cols``) with its keypoint column, and for results the
    boxes and areas of ``loadRes``' branch."""
    from iou_eval.geometry.keypoints import KeypointColumn  # (only a keypoint run reads them)

    points = _row_points(cols, rows)
    if role == "gt":
        return _ground_truth(ds, points, cols["num_keypoints"][rows], cols["boxes"][rows])
    column = KeypointColumn.of_points(*points, gt=False)
    has_bbox = cols["has_bbox"][rows]
    if not len(has_bbox) or has_bbox[0]:
        if not has_bbox.all():
            r = int(np.flatnonzero(~has_bbox)[0])
            raise InputError(
                path,
                "result has no 'bbox' while the first has one: pycocotools' loadRes reads "
                "every result as the first (the bbox branch)",
                where=ds.where(r)[1],
                hint="give every result a bbox, or none (boxes are then the keypoints' extent)",
            )
        return replace(ds, keypoints=column)
    return _extent_boxes(replace(ds, keypoints=column), column)


def _extent_boxes(ds: Dataset, column: KeypointColumn) -> Dataset:
    """Results of ``loadRes``' keypoints branch: box = the keypoints' extent, area its ``w * h``."""
    x0, x1 = np.nanmin(column.x, axis=1), np.nanmax(column.x, axis=1)
    y0, y1 = np.nanmin(column.y, axis=1), np.nanmax(column.y, axis=1)
    xyxy = np.stack([x0, y0, x1, y1], axis=1)
    area = (x1 - x0) * (y1 - y0)
    return replace(ds, xyxy=xyxy, bbox_area=area, area=area)


def _ground_truth(
    ds: Dataset,
    points: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    num: np.ndarray,
    box: np.ndarray,
) -> Dataset:
    """The ground truth's keypoint column: labels, ``num_keypoints``, the boxes as given."""
    from iou_eval.geometry.keypoints import KeypointColumn

    column = KeypointColumn.of_points(
        *points, gt=True, num_keypoints=np.zeros(len(num), dtype=np.int64), box=box.copy()
    )
    absent = num < 0
    notes = []
    if absent.any():
        notes.append(
            f"{ds.source}: {int(absent.sum())} ground truth(s) have no 'num_keypoints'; counted "
            f"from their labels (v > 0) (first: {ds.where(int(np.flatnonzero(absent)[0]))[1]})"
        )
    labelled = column.visible.sum(axis=1)  # type: ignore[union-attr]
    column = replace(column, num_keypoints=np.where(absent, labelled, num).astype(np.int64))
    return replace(ds, keypoints=column, warnings=(*ds.warnings, *notes))
