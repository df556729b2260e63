"""Oriented boxes in a table: ``cx, cy, w, h`` and an ``angle`` column (Ultralytics' ``xywhr``).

The angle turns the box about its centre as ``ops.xywhr2xyxyxyxy`` turns it
(radians, or degrees with ``--angle-unit deg``); the box's corners follow
(:func:`~iou_eval.data.oriented.corners_from_xywhr`).  The four box columns
must be a centre and a size, in pixels: fractions of the image size are
refused (a turned rectangle in fractions is no rectangle in pixels).  An
``area`` column is not read: the area is the box's ``w * h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Dataset
from iou_eval.data.oriented import assemble_oriented, check_xywhr, corners_from_xywhr
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import LoadOptions


def oriented_rows(
    rows: Any,
    cols: Any,
    box_rows: np.ndarray,
    boxes: np.ndarray,
    options: LoadOptions,
    columns: dict[str, Any],
) -> Dataset:
    """The dataset of a table with an angle column.

    Args:
        rows, cols: the table's rows and the roles of its columns (:mod:`.table`).
        box_rows: ``[N]`` the rows holding a box; boxes: ``[N, 4]`` their four numbers.
        columns: the other columns, as :func:`~iou_eval.data.dataset.assemble` takes them.
    """
    header = cols.header
    angle_name = header.cells[cols.angle]
    if cols.box_format is not BoxFormat.CXCYWH:
        names = ", ".join(header.cells[j] for j in cols.box)
        raise InputError(
            header.path,
            f"an {angle_name} column turns a box about its centre: the box columns must be "
            f"cx, cy, w, h, found {names} ({cols.box_format.value})",
            where=header.line,
            hint="name the columns cx, cy, w, h (Ultralytics' xywhr), or pass --box-format cxcywh",
        )
    if options.normalized:
        raise InputError(
            header.path,
            f"an {angle_name} column needs pixel coordinates, not fractions of the image size "
            "(--normalized)",
            where=header.line,
        )
    angle = rows.numbers(cols.angle, box_rows)
    xywhr = np.column_stack([boxes.reshape(len(box_rows), 4), angle])

    def fail(r: int, message: str) -> InputError:
        return rows.fail(int(box_rows[r]), message)

    # A difficult ground truth of no area is a placeholder (mmrotate writes [0, 0, 0, 0, 0]).
    placeholders = columns.get("ignore") if columns.get("score") is None else None
    check_xywhr(xywhr, fail, placeholders)
    return assemble_oriented(
        corners=corners_from_xywhr(xywhr, options.angle_unit),
        angle_unit=options.angle_unit,
        checked=True,
        **columns,
    )
