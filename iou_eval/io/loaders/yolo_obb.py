"""Ultralytics OBB: oriented boxes in YOLO label files and in ``predictions.json``.

Labels (format ``yolo``, read by :mod:`.yolo`): an OBB dataset's lines are
``class x1 y1 x2 y2 x3 y3 x4 y4`` (fractions of the image size), its
predictions ``class x1 y1 ... x4 y4 conf`` (``save_txt`` of an OBB model).
A YOLO file set whose every line is a polygon of exactly four points is
read as oriented boxes (:func:`oriented`): the four points are the box's
corners, its area the quadrilateral's.  ``--iou-type segm`` still scores
them as masks, and ``bbox`` as their enclosing boxes.

``predictions.json`` (format ``obb-json``): ``val(save_json=True)`` of an
OBB model writes one record per box, ``image_id`` (the image's stem),
``category_id`` (the class index + 1 since December 2024, the index before:
the class-shift check says which), ``score``, ``rbox`` (``cx cy w h angle``,
radians) and ``poly`` (its four corners, which the DOTA submission files
are written from).  ``poly`` is read; a record with ``rbox`` only gives its
corners as ``xywhr`` does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec
import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, normalize_id
from iou_eval.data.oriented import assemble_oriented, corners_from_xywhr, with_corners
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import JSON_ERRORS, LoadOptions, json_error, read_bytes


def oriented(ds: Dataset, polygons: list[np.ndarray | None]) -> Dataset:
    """``ds`` with oriented boxes when every row is a polygon of 4 points, else ``ds`` itself.

    ``polygons[N]``: each row's flat polygon as :func:`~.yolo.read_yolo`
    returns it (pixels where the image's size is known, else fractions).
    """
    if not len(ds) or any(p is None or len(p) != 8 for p in polygons):
        return ds
    flat = np.stack([p for p in polygons if p is not None]).astype(np.float64)
    if ds.fractions:
        # The dataset waits for sizes to scale its boxes: its corners must be
        # fractions too, also where this side knew a size and scaled them.
        w = ds.images.width[ds.image_idx]
        h = ds.images.height[ds.image_idx]
        known = np.isfinite(w) & np.isfinite(h)
        flat[known] /= np.repeat(np.stack([w, h], axis=1)[known], 4, axis=1)
    out = with_corners(ds, flat.reshape(-1, 4, 2))
    if ds.is_prediction:
        return out
    note = (
        f"{ds.source}: read as oriented boxes (every line is 'class x1 y1 x2 y2 x3 y3 x4 y4', "
        "Ultralytics OBB); --iou-type segm scores them as polygons"
    )
    return replace(out, warnings=(*out.warnings, note))


# --------------------------------------------------------------------------- predictions.json


class _Record(msgspec.Struct):
    image_id: int | str
    category_id: int
    score: float
    poly: list[float] | None = None
    rbox: list[float] | None = None
    file_name: str | None = None


_DECODER = msgspec.json.Decoder(list[_Record])


def obb_json_head(head: bytes) -> bool:
    """Whether a JSON file's first bytes read like an OBB ``predictions.json``."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] == b"[" and (b'"poly"' in text or b'"rbox"' in text)


def _corners(records: list[_Record], path: str) -> np.ndarray:
    """``[N, 4, 2]`` each record's ``poly``, else the corners of its ``rbox``."""
    n = len(records)
    out = np.empty((n, 4, 2))
    rbox_rows: list[int] = []
    for i, r in enumerate(records):
        if r.poly is not None:
            if len(r.poly) != 8:
                raise InputError(
                    path,
                    f"poly needs 8 numbers (4 corners), got {len(r.poly)}",
                    where=f"[{i}].poly",
                )
            out[i] = np.asarray(r.poly, dtype=np.float64).reshape(4, 2)
        elif r.rbox is not None:
            if len(r.rbox) != 5:
                raise InputError(
                    path,
                    f"rbox needs 5 numbers (cx cy w h angle), got {len(r.rbox)}",
                    where=f"[{i}].rbox",
                )
            rbox_rows.append(i)
        else:
            raise InputError(path, "a record needs poly or rbox", where=f"[{i}]")
    if rbox_rows:
        boxes = np.asarray([records[i].rbox for i in rbox_rows], dtype=np.float64)
        out[rbox_rows] = corners_from_xywhr(boxes, "rad")
    return out


def load_obb_json(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read an Ultralytics OBB ``predictions.json`` (format ``obb-json``; rules in the module docstring).

    Args:
        path: the file.
        role: ``"pred"``.
        options: ``names``: class names by index; a ``category_id`` is then
            an index into them.
    """
    if role != "pred":
        raise InputError(path, "an OBB predictions.json holds predictions, not ground truth")
    data = read_bytes(path)
    try:
        records = _DECODER.decode(data)
    except JSON_ERRORS as exc:
        raise json_error(path, data, exc) from None
    corners = _corners(records, path)
    ids: dict[Any, int] = {}
    names: list[str | None] = []
    image_idx = np.empty(len(records), dtype=np.int64)
    for i, r in enumerate(records):
        key = normalize_id(r.image_id)
        j = ids.setdefault(key, len(ids))
        if j == len(names):
            names.append(r.file_name)
        image_idx[i] = j
    classes = np.fromiter((r.category_id for r in records), np.int64, len(records))
    categories, category_idx = _categories(classes, options.names)
    return assemble_oriented(
        corners=corners, images=ImageTable.build(list(ids), names), image_idx=image_idx,
        source=path, fmt="obb-json", categories=categories, category_idx=category_idx,
        score=np.fromiter((r.score for r in records), np.float64, len(records)),
        origin_label="annotations",
    )  # fmt: skip


def _categories(
    classes: np.ndarray, names: tuple[str, ...] | None
) -> tuple[CategoryTable, np.ndarray]:
    """Ids are the ``category_id`` numbers; named ``names[id]`` where ``names`` has that index."""
    present = np.unique(classes)
    ids = tuple(int(c) for c in present)
    labels = tuple(names[c] if names is not None and 0 <= c < len(names) else str(c) for c in ids)
    return CategoryTable(ids, labels), np.searchsorted(present, classes).astype(np.int64)
