"""COCO JSON: ground-truth datasets and detection results.

Decoded with msgspec into slotted records that skip every field the
evaluation does not read (segmentations above all), then turned into columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from itertools import chain
from operator import attrgetter
from typing import Annotated, Any

import msgspec
import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import (
    CategoryTable,
    Dataset,
    ImageTable,
    Key,
    assemble,
    integer_ids,
    normalize_id,
    sort_key,
)
from iou_eval.data.doubts import doubt
from iou_eval.data.ordering import dense_codes, distinct
from iou_eval.data.reconcile import id_order
from iou_eval.errors import InputError
from iou_eval.escape import excerpt, quoted
from iou_eval.io.loaders.common import JSON_ERRORS, LoadOptions, json_error, read_bytes
from iou_eval.io.loaders.json_decode import chunked_results, quiet_decode, threaded_results
from iou_eval.io.loaders.lvis_lists import federated_extras

Bbox = Annotated[list[float], msgspec.Meta(min_length=4, max_length=4)]
# pycocotools takes 1.0 for 1 (a dict key equal to it): pandas writes ids so.
Id = int | str | float


class _Image(msgspec.Struct, gc=False):
    id: Id
    file_name: str | None = None
    width: float | None = None
    height: float | None = None
    # LVIS: categories verified absent, and categories not labelled exhaustively.
    neg_category_ids: Any = None
    not_exhaustive_category_ids: Any = None


class _Category(msgspec.Struct, gc=False):
    id: Id
    name: str | None = None
    # LVIS: "r" (rare), "c" (common) or "f" (frequent).
    frequency: Any = None


class _Annotation(msgspec.Struct, gc=False):
    image_id: Id
    category_id: Id
    bbox: Bbox | None = None
    id: Id | None = None
    area: float | None = None
    iscrowd: int | bool = 0
    ignore: int | bool | None = None
    score: float | None = None


class _Document(msgspec.Struct, gc=False):
    images: list[_Image] | None = None
    annotations: list[_Annotation] | None = None
    categories: list[_Category] | None = None


class _MaskAnnotation(_Annotation, gc=False):
    # Polygons, RLE dicts or []: decoded only when masks are scored.
    segmentation: Any = None


class _MaskDocument(msgspec.Struct, gc=False):
    images: list[_Image] | None = None
    annotations: list[_MaskAnnotation] | None = None
    categories: list[_Category] | None = None


class _CompressedRle(msgspec.Struct, gc=False):
    size: tuple[int, int]
    counts: str


class _RleResult(_Annotation, gc=False):
    # What detectors' evaluation hooks write (detectron2, mmdetection): every
    # segmentation a compressed RLE.  A chunk with anything else is decoded
    # with the generic decoder.
    segmentation: _CompressedRle | None = None


class _KeypointAnnotation(_Annotation, gc=False):
    # Read with --iou-type keypoints only (io/loaders/coco_keypoints.py).
    keypoints: list[float] | None = None
    num_keypoints: int | None = None


class _KeypointDocument(msgspec.Struct, gc=False):
    images: list[_Image] | None = None
    annotations: list[_KeypointAnnotation] | None = None
    categories: list[_Category] | None = None


_DECODER = msgspec.json.Decoder(_Document | list[_Annotation])
_KEYPOINT_DECODER = msgspec.json.Decoder(_KeypointDocument | list[_KeypointAnnotation])
_MASK_DECODER = msgspec.json.Decoder(_MaskDocument | list[_MaskAnnotation])
_RLE_DECODER = msgspec.json.Decoder(list[_RleResult])


def _id_key(value: object) -> Key:
    """:func:`normalize_id`, refusing an empty or blank string: such an id names nothing.

    Raises ``ValueError`` (the caller says where).
    """
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"expected an integer or a non-empty string, got {quoted(value)}")
    return normalize_id(value)


# The key a score goes under in some writers' results, read when 'score' is absent.
CONFIDENCE = "confidence"


@cache
def _scored_decoder(key: str, masks: bool, keypoints: bool) -> msgspec.json.Decoder:
    """A decoder like :func:`_decode`'s that reads each annotation's score from ``key``."""
    base = _KeypointAnnotation if keypoints else _MaskAnnotation if masks else _Annotation
    ann = msgspec.defstruct(
        "_Scored" + base.__name__.lstrip("_"),
        [("score", float | None, None)],
        bases=(base,),
        rename={"score": key},
        gc=False,
    )
    doc = msgspec.defstruct(
        "_ScoredDocument",
        [("annotations", list[ann] | None, None)],  # type: ignore[valid-type]
        bases=(_KeypointDocument if keypoints else _MaskDocument if masks else _Document,),
        gc=False,
    )
    return msgspec.json.Decoder(doc | list[ann])  # type: ignore[valid-type]


def _ids(raw: list, path: str, where: str) -> np.ndarray | list[Key]:
    """A column of ids: int64 when every one is an integer or a numeric string.

    Otherwise a list of normalized ids (see :func:`normalize_id`); an id that
    is neither an integer nor a string is a located error.  An integral float
    (``1.0``) is that integer; any other float (``1.5``) a located error.
    """
    if float in set(map(type, raw)):
        raw = _whole_floats(raw, path, where)
    try:
        return np.fromiter(raw, dtype=np.int64, count=len(raw))
    except (TypeError, ValueError, OverflowError):
        out: list[Key] = []
        for i, v in enumerate(raw):
            try:
                out.append(_id_key(v))
            except ValueError as exc:
                raise InputError(path, str(exc), where=where.format(i)) from None
        return out


def _whole_floats(raw: list, path: str, where: str) -> list:
    """``raw`` with each integral float as its integer; a located error for any other float."""
    out = list(raw)
    for i, v in enumerate(out):
        if type(v) is float:
            if not (math.isfinite(v) and v.is_integer()):
                raise InputError(
                    path,
                    f"expected a whole number or a string as id, got {v!r}",
                    where=where.format(i),
                )
            out[i] = int(v)
    return out


def _all_int(values: list) -> bool:
    """Whether every value (an int or a str, as decoded) is an int.

    ``sum`` is CPython's fastest pass over a list of ints; a string stops it.
    """
    try:
        sum(values)
    except TypeError:
        return False
    return True


def _positions(keys: np.ndarray | list[Key], vocab: tuple[Key, ...]) -> np.ndarray:
    """``[N]`` index of each key in ``vocab``, -1 where absent."""
    # An id beyond 64 bits (allowed for images and categories) takes the dict below.
    v = integer_ids(vocab) if isinstance(keys, np.ndarray) else None
    if v is not None:
        by_value = np.argsort(v, kind="stable")
        sorted_v = v[by_value]
        i = np.minimum(np.searchsorted(sorted_v, keys), max(len(v) - 1, 0))
        if not len(v):
            return np.full(len(keys), -1, dtype=np.int64)
        return np.where(sorted_v[i] == keys, by_value[i], -1).astype(np.int64)
    table = {k: i for i, k in enumerate(vocab)}
    seq = keys.tolist() if isinstance(keys, np.ndarray) else keys
    return np.fromiter((table.get(k, -1) for k in seq), dtype=np.int64, count=len(seq))


def _vocab(keys: np.ndarray | list[Key]) -> tuple[Key, ...]:
    """The distinct ids of a column, sorted as pycocotools sorts them."""
    if isinstance(keys, np.ndarray):
        return tuple(distinct(keys).tolist())
    return tuple(sorted(dict.fromkeys(keys), key=sort_key))


def _decode(path: str, data: bytes, masks: bool = False, keypoints: bool = False):
    decoder = _KEYPOINT_DECODER if keypoints else _MASK_DECODER if masks else _DECODER
    try:
        return quiet_decode(decoder, data)
    except JSON_ERRORS as exc:
        raise json_error(path, data, exc) from None


def _mask_columns(anns: list) -> dict:
    """The mask columns of masks mode.

    ``segmentation[N]`` (object: the values as decoded; None where absent
    or where the string is in the RLE columns), ``has_bbox[N]`` bool, and
    compressed RLEs read and checked already (see :func:`_rle_columns`).
    """
    n = len(anns)
    has_bbox = np.fromiter((a.bbox is not None for a in anns), dtype=bool, count=n)
    if n and type(anns[0]) is _RleResult:
        return {**_rle_columns(anns), "has_bbox": has_bbox}
    segs = np.empty(n, dtype=object)
    for i, a in enumerate(anns):
        segs[i] = a.segmentation
    return {"segmentation": segs, **_no_rle(n), "has_bbox": has_bbox}


def _no_rle(n: int) -> dict:
    """The RLE columns of ``n`` rows of which none has a checked string."""
    return {
        "rle_data": np.zeros(0, dtype=np.uint8),
        "rle_length": np.zeros(n, dtype=np.int64),
        "rle_size": np.zeros((n, 2), dtype=np.int64),
        "rle_area": np.zeros(n, dtype=np.float64),
        "rle_box": np.zeros((n, 4), dtype=np.int64),
    }


def _compiled_polygon_columns(read: dict, data: Any) -> dict | None:
    """The mask columns of a ground truth the compiled reader read with its polygons, or None.

    Polygons stay flat (``polygons``, a
    :class:`~iou_eval.geometry.masks.FlatPolygons`; ``segmentation`` True
    there); any other value (an RLE dict above all) is decoded from its
    place in the file, as :data:`_MASK_DECODER` decodes it.  None where
    such a value is a non-empty list (not polygons: msgspec's path says why).
    """
    from iou_eval.geometry.masks import FlatPolygons

    n = read["n"]
    parts = np.frombuffer(read["seg_parts"], dtype=np.int64)
    segs = np.empty(n, dtype=object)
    segs[parts > 0] = True
    for i in np.flatnonzero(parts == 0).tolist():
        segs[i] = []
    other = np.flatnonzero(parts == -2)
    if len(other):
        spans = np.frombuffer(read["seg_other"], dtype=np.int64).reshape(-1, 2).tolist()
        view = memoryview(data)
        for i, (at, length) in zip(other.tolist(), spans, strict=True):
            try:
                value = msgspec.json.decode(view[at : at + length])
            except msgspec.DecodeError:
                return None
            if isinstance(value, list) and value:
                return None
            segs[i] = value
    polygons = FlatPolygons(
        values=np.frombuffer(read["poly_values"], dtype=np.float64),
        lengths=np.frombuffer(read["poly_length"], dtype=np.int64),
        parts=np.maximum(parts, 0),
    )
    return {
        "segmentation": segs,
        "polygons": polygons,
        **_no_rle(n),
        "has_bbox": np.frombuffer(read["has_bbox"], dtype=bool),
    }


class _NotChecked(Exception):
    """A compressed RLE the fast path leaves to the generic one (which says what is wrong)."""


def _rle_columns(anns: list) -> dict:
    """Compressed RLE columns of results decoded with :data:`_RLE_DECODER`.

    See :func:`_checked_rle_columns`.

    Raises:
        _NotChecked: a string that is not ASCII, or as :func:`_checked_rle_columns`.
    """
    n = len(anns)
    segs = [a.segmentation for a in anns]
    has = np.fromiter((s is not None for s in segs), dtype=bool, count=n)
    rles = [s for s in segs if s is not None]
    size = np.zeros((n, 2), dtype=np.int64)
    size[has] = np.array([s.size for s in rles], dtype=np.int64).reshape(-1, 2)
    lengths = np.zeros(n, dtype=np.int64)
    lengths[has] = np.fromiter(map(len, (s.counts for s in rles)), dtype=np.int64, count=len(rles))
    try:
        data = "".join([s.counts for s in rles]).encode("ascii")
    except UnicodeEncodeError:
        raise _NotChecked from None
    return _checked_rle_columns(has, size, lengths, data)


def _checked_rle_columns(
    has: np.ndarray, size: np.ndarray, lengths: np.ndarray, data: bytes | bytearray
) -> dict:
    """The RLE columns of ``N`` results, their strings checked.

    Args:
        has: ``[N]`` bool, the result has a segmentation.
        size: ``[N, 2]`` int64 its ``[h, w]`` (zeros where none).
        lengths: ``[N]`` int64 its string's length (0 where none).
        data: the strings back to back.

    Returns:
        ``rle_data[B]`` uint8 the strings, ``rle_length[N]``, ``rle_size[N, 2]``,
        ``rle_area[N]`` float64 its pixels, ``rle_box[N, 4]`` int64 a box that
        holds them (:func:`iou_eval.geometry.rle.column_boxes`), and ``segmentation[N]``
        all None.  Each string is checked here (in the worker that decoded
        it) as :func:`iou_eval.geometry.rle.check_compressed` checks it.

    Raises:
        _NotChecked: a size that is not positive, or a string that is not a
            mask of its size.
    """
    from iou_eval.geometry.rle import BadRle, check_joined

    n = len(has)
    if (size[has] <= 0).any():
        raise _NotChecked
    buf = np.frombuffer(data, dtype=np.uint8)
    every = bool(has.all())  # what detectors write: no row to spread out
    box_has = np.zeros((int(has.sum()), 4), dtype=np.int64)
    try:
        if every:
            area_has = check_joined(buf, lengths, size[:, 0], size[:, 1], box_has)
        else:
            area_has = check_joined(buf, lengths[has], size[has, 0], size[has, 1], box_has)
    except BadRle:
        raise _NotChecked from None
    if every:
        area, box = area_has.astype(np.float64), box_has
    else:
        area = np.zeros(n, dtype=np.float64)
        box = np.zeros((n, 4), dtype=np.int64)
        area[has], box[has] = area_has, box_has
    # The checked buffer itself: no Python object per mask.
    return {
        "segmentation": np.empty(n, dtype=object),
        "rle_data": buf,
        "rle_length": lengths,
        "rle_size": size,
        "rle_area": area,
        "rle_box": box,
    }


def _read_rle_results(chunk: bytearray) -> dict | None:
    """The columns of a chunk of RLE results read by the compiled reader, or None.

    The columns :func:`annotation_columns` gives for the same results decoded
    with :data:`_RLE_DECODER` (role ``pred``, masks).  None where the reader
    is not built or gives up on the chunk (see ``iou_eval/io/_cocojson.c``).

    Raises:
        _NotChecked: as :func:`_checked_rle_columns`.
    """
    from iou_eval.io.compiled import json_reader

    reader = json_reader()
    read = reader.results(chunk, reader.MASKS) if reader is not None else None
    if read is None:
        return None
    n = read["n"]
    lengths = np.frombuffer(read["seg_length"], dtype=np.int64)
    has = lengths >= 0
    sizes = np.frombuffer(read["size"], dtype=np.int64).reshape(n, 2)
    return {
        **_checked_rle_columns(has, sizes, np.where(has, lengths, 0), read["counts"]),
        "has_bbox": np.frombuffer(read["has_bbox"], dtype=bool),
        **_compiled_box_columns(read),
    }


def _compiled_box_columns(read: dict) -> dict:
    """``boxes``, ``score``, ``image_id`` and ``category_id`` of what the compiled reader read."""
    n = read["n"]
    cols = {
        "boxes": np.frombuffer(read["bbox"], dtype=np.float64).reshape(n, 4),
        "score": np.frombuffer(read["score"], dtype=np.float64) if "score" in read else None,
        "image_id": np.frombuffer(read["image_id"], dtype=np.int64),
        "category_id": np.frombuffer(read["category_id"], dtype=np.int64),
    }
    return cols


def read_box_results(data: Any, start: int = 0, end: int = -1, bare: bool = False) -> dict | None:
    """The columns of a results list with boxes (no masks) read by the compiled reader, or None.

    ``data[start:end]``: the list, or with ``bare`` a run of its elements
    (cut at element boundaries).  The columns :func:`annotation_columns`
    gives for the same results decoded with :data:`_DECODER` (role
    ``pred``); None where the reader is not built or gives up (see
    ``iou_eval/io/_cocojson.c``).  The file is read with the GIL released.
    """
    from iou_eval.io.compiled import json_reader

    reader = json_reader()
    if reader is None:
        return None
    read = reader.results(data, reader.BARE if bare else 0, start, end)
    return None if read is None else _compiled_box_columns(read)


def _compiled_keypoint_columns(read: dict) -> dict:
    """The keypoint columns (:func:`.coco_keypoints.keypoint_columns`) the compiled reader read."""
    return {
        "kp_x": np.frombuffer(read["kp_x"], dtype=np.float64),
        "kp_y": np.frombuffer(read["kp_y"], dtype=np.float64),
        "kp_visible": np.frombuffer(read["kp_visible"], dtype=bool),
        "kp_length": np.frombuffer(read["kp_length"], dtype=np.int64),
        "num_keypoints": np.frombuffer(read["num_keypoints"], dtype=np.int64),
        "has_bbox": np.frombuffer(read["has_bbox"], dtype=bool),
    }


def read_keypoint_results(
    data: Any, start: int = 0, end: int = -1, bare: bool = False
) -> dict | None:
    """The columns of a results list with keypoints read by the compiled reader, or None.

    ``data[start:end]`` as for :func:`read_box_results`.  The columns
    :func:`annotation_columns` gives for the same results decoded with
    :data:`_KEYPOINT_DECODER` (role ``pred``, ``keypoints``); None where the
    reader is not built or gives up.
    """
    from iou_eval.io.compiled import json_reader

    reader = json_reader()
    if reader is None:
        return None
    read = reader.results(data, reader.KEYPOINTS | (reader.BARE if bare else 0), start, end)
    if read is None:
        return None
    return {**_compiled_box_columns(read), **_compiled_keypoint_columns(read)}


def _read_compiled_dataset(
    data: bytes, path: str, keypoints: bool = False, polygons: bool = False
) -> _Read | None:
    """A ground truth with boxes read by the compiled reader, or None (not built, or not sure).

    The columns and lists :func:`_read` gives for the same file decoded
    with :data:`_DECODER` (``keypoints``: :data:`_KEYPOINT_DECODER`;
    ``polygons``: :data:`_MASK_DECODER`, the polygons kept flat, see
    :func:`_compiled_polygon_columns`).
    """
    from iou_eval.io.compiled import json_reader

    reader = json_reader()
    if reader is None:
        return None
    flags = reader.KEYPOINTS if keypoints else reader.POLYGONS if polygons else 0
    read = reader.dataset(data, flags)
    if read is None:
        return None
    masks = _compiled_polygon_columns(read, data) if polygons else {}
    if masks is None:
        return None
    n = read["n"]
    ids = np.frombuffer(read["id"], dtype=np.int64)
    cols = {
        **masks,
        **_compiled_box_columns(read),
        **(_compiled_keypoint_columns(read) if keypoints else {}),
        "area": np.frombuffer(read["area"], dtype=np.float64),
        "iscrowd": np.frombuffer(read["iscrowd"], dtype=bool),
        "ignore": np.frombuffer(read["ignore"], dtype=bool),
        "id_source": None,
    }
    if not np.frombuffer(read["has_id"], dtype=bool).all():
        # pycocotools cannot index annotations without ids; number them.
        cols["id"] = np.arange(1, n + 1, dtype=np.int64)
    else:
        cols["id"] = ids
        if n > 1 and (np.diff(np.sort(ids)) == 0).any():
            cols["raw_ids"] = ids.tolist()
            cols["id_source"] = last_with_same_id(cols["raw_ids"])
    image_extra, category_extra = federated_extras(read)
    images = _Listed(
        ids=np.frombuffer(read["image.id"], dtype=np.int64).tolist(),
        names=read["image.file_name"],
        width=np.frombuffer(read["image.width"], dtype=np.float64),
        height=np.frombuffer(read["image.height"], dtype=np.float64),
        extra=image_extra,
    )
    categories = _Listed(
        ids=np.frombuffer(read["category.id"], dtype=np.int64).tolist(),
        names=read["category.name"],
        extra=category_extra,
    )
    return _Read(cols, images, categories, "annotations[{}]")


def checked_rles(cols: dict, rows) -> Any:
    """The :class:`~iou_eval.geometry.masks.CheckedRles` of ``rows`` from :func:`_mask_columns`'
    columns, or None when no row has one."""
    from iou_eval.geometry.masks import CheckedRles, Strings

    size = cols["rle_size"]
    if not (size[:, 0] > 0).any():
        return None
    length = cols["rle_length"]
    start = cols.get("rle_start")
    if start is None:  # the strings back to back
        start = np.cumsum(length) - length
    strings = Strings(cols["rle_data"], start, length)
    return CheckedRles(strings, size, cols["rle_area"], cols["rle_box"]).take(rows)


# The error for an annotation without a box; a result that gives a mask instead
# is read again with its mask (load_coco), as pycocotools' loadRes reads it.
NO_BBOX = "annotation has no 'bbox'"


def _boxes(anns: list, path: str, label: str, offset: int, masks: bool) -> np.ndarray:
    """``[N, 4]`` the ``bbox`` numbers; in masks mode a missing box is zeros (from the mask later)."""
    n = len(anns)
    try:
        return np.fromiter(
            chain.from_iterable(map(attrgetter("bbox"), anns)), dtype=np.float64, count=4 * n
        ).reshape(n, 4)
    except (TypeError, ValueError):
        if masks:
            return np.array(
                [a.bbox if a.bbox is not None else (0.0, 0.0, 0.0, 0.0) for a in anns],
                dtype=np.float64,
            ).reshape(n, 4)
        first = next(i for i, a in enumerate(anns) if a.bbox is None)
        raise InputError(
            path,
            NO_BBOX,
            where=label.format(offset + first),
            hint="every ground-truth annotation needs its box [x, y, w, h] (a result may "
            "give a mask instead)",
        ) from None


def annotation_columns(
    anns: list,
    path: str,
    label: str,
    role: str,
    offset: int = 0,
    masks: bool = False,
    keypoints: bool = False,
) -> dict:
    """Columns of decoded annotations ``[N]``: boxes, scores, ids (and ground-truth fields).

    ``offset`` is the index of ``anns[0]`` in the file, for error places;
    ``masks``: the annotations carry ``segmentation`` (see :func:`_mask_columns`);
    ``keypoints``: they carry ``keypoints`` (see :mod:`.coco_keypoints`), and a
    result may lack its ``bbox`` (``loadRes``' keypoints branch).
    """
    n = len(anns)
    boxes = _boxes(anns, path, label, offset, masks or (keypoints and role == "pred"))
    raw_cats = list(map(attrgetter("category_id"), anns))
    cols: dict = {
        **(_mask_columns(anns) if masks else {}),
        **(_keypoint_columns(anns, path, label, role, offset) if keypoints else {}),
        "boxes": boxes,
        "score": None,
        "image_id": _ids(list(map(attrgetter("image_id"), anns)), path, label + ".image_id"),
        "category_id": _ids(raw_cats, path, label + ".category_id"),
    }
    if role == "pred" and isinstance(cols["category_id"], np.ndarray) and not _all_int(raw_cats):
        # Numeric strings: pycocotools compares category ids exactly ("1" is
        # not 1), so the spelling is kept for the join to report.
        cols["category_id"] = raw_cats
    if role == "pred":
        # A missing score reads as NaN (JSON itself cannot hold NaN).
        score = np.fromiter(map(attrgetter("score"), anns), dtype=np.float64, count=n)
        missing = np.flatnonzero(np.isnan(score))
        if len(missing):
            raise InputError(
                path,
                "prediction has no 'score'",
                where=label.format(offset + int(missing[0])),
                hint="predictions need a confidence score (--score-column NAME reads it under "
                "another key); is this the ground-truth file?",
            )
        cols["score"] = score
    else:
        cols["area"] = np.array(
            [np.nan if a.area is None else a.area for a in anns], dtype=np.float64
        )
        cols["iscrowd"] = np.array([bool(a.iscrowd) for a in anns], dtype=bool)
        cols["ignore"] = np.array([bool(a.ignore) for a in anns], dtype=bool)
        raw_ids = [a.id for a in anns]
        cols["id_source"] = None
        if any(v is None for v in raw_ids):
            # pycocotools cannot index annotations without ids; number them.
            cols["id"] = np.arange(1, n + 1, dtype=np.int64)
        else:
            ids = _ids(raw_ids, path, label + ".id")
            numeric = isinstance(ids, np.ndarray)
            if not numeric:
                # Non-numeric annotation ids: only their being 0 matters.
                _check_id_range(list(ids), path, label + ".id")
                ids = np.array(
                    [v if isinstance(v, int) else i + 1 for i, v in enumerate(ids)], dtype=np.int64
                )
            cols["id"] = ids
            if not numeric or (n > 1 and (np.diff(np.sort(ids)) == 0).any()):
                cols["id_source"] = last_with_same_id(raw_ids)
                cols["raw_ids"] = raw_ids
    return cols


_INT64 = (-(2**63), 2**63 - 1)


def _keypoint_columns(anns: list, path: str, label: str, role: str, offset: int) -> dict:
    from iou_eval.io.loaders.coco_keypoints import keypoint_columns

    has_bbox = np.fromiter((a.bbox is not None for a in anns), dtype=bool, count=len(anns))
    return {**keypoint_columns(anns, path, label, role, offset), "has_bbox": has_bbox}


def _check_id_range(ids: list[Key], path: str, where: str) -> None:
    """Annotation ids are a 64-bit column: a larger integer is a located error."""
    for i, v in enumerate(ids):
        if isinstance(v, int) and not _INT64[0] <= v <= _INT64[1]:
            raise InputError(
                path,
                f"annotation id {excerpt(str(v))} does not fit in 64 bits",
                where=where.format(i),
                hint="annotation ids are 64-bit integers (image and category ids may be larger)",
            )


def last_with_same_id(raw_ids: list) -> np.ndarray | None:
    """``[N]`` the position of the last annotation with each one's id; None if ids are distinct.

    pycocotools' ``createIndex`` keeps one annotation per id (``anns[id] =
    ann``, the last one wins), keyed by the id as the file spells it (5 and
    "5" are two ids).
    """
    last = dict(zip(raw_ids, range(len(raw_ids)), strict=True))
    if len(last) == len(raw_ids):
        return None
    return np.fromiter(map(last.__getitem__, raw_ids), dtype=np.int64, count=len(raw_ids))


def indexed_by_id(
    source: np.ndarray,
    raw_ids: list,
    listed: np.ndarray,
    image_idx: np.ndarray,
    images: ImageTable,
    path: str,
) -> tuple[np.ndarray, str]:
    """The rows pycocotools evaluates when annotations share ids, and a warning.

    ``COCOeval`` collects the ids of the annotations listed under each image
    (images in sorted-id order, annotations in file order) and loads them
    from the id index: each listed annotation is replaced by ``source[i]``,
    the last one with its id, box, category and image included.  One whose
    own image or category is unknown is not listed; one replaced by such an
    annotation is not evaluated.

    Args:
        source: ``[N]`` from :func:`last_with_same_id`; raw_ids: ``[N]`` the ids as given.
        listed: ``[N]`` bool, the annotation's image and category are known.
        image_idx: ``[N]`` the image each annotation is listed under.

    Returns:
        ``[N']`` annotation positions whose content each evaluated row takes,
        in pycocotools' order of the listed annotations, and the warning.
    """
    rows = np.flatnonzero(listed & listed[source])
    if (image_idx[source[rows]] != image_idx[rows]).any():
        # A box that moves to another image joins it where its own image
        # stands in pycocotools' image order.
        rank = np.empty(len(images), dtype=np.int64)
        rank[id_order(images.ids)] = np.arange(len(images))
        rows = rows[np.argsort(rank[image_idx[rows]], kind="stable")]
    replaced = np.flatnonzero(source != np.arange(len(source)))
    first = int(replaced[0])
    last = int(source[first])
    n_ids = len(np.unique(source[replaced]))
    note = (
        f"{path}: annotation id {quoted(raw_ids[first])} is shared by annotations[{first}] and "
        f"annotations[{last}] ({n_ids} id(s) shared by several annotations); like "
        f"pycocotools, which indexes annotations by id, each such annotation is evaluated "
        f"as the last one with its id ({len(replaced)} annotation(s) replaced)"
    )
    return source[rows], note


# Chunk size for decoding a large results file in parts.
_CHUNK_BYTES = 4 << 20


def _chunk_columns(
    chunk: bytearray, at: int, sink: Any, path: str, masks: bool = False
) -> dict | None:
    """The columns of one chunk of a results list (``[`` elements ``]``), or None if unsure.

    In masks mode, results whose segmentations are all compressed RLEs are
    decoded into RLE columns (:func:`_rle_columns`), others as they come.
    With a ``sink`` (see :func:`~.json_decode.chunked_results`) the chunk's
    strings go there, from ``at`` on, and ``rle_start[N]`` says where each
    one starts in it (instead of ``rle_data``).
    """
    cols = _chunk_columns_here(chunk, path, masks)
    if cols is not None and sink is not None and "rle_data" in cols:
        data = cols.pop("rle_data")
        sink[at : at + len(data)] = data
        length = cols["rle_length"]
        cols["rle_start"] = at + np.cumsum(length) - length
    return cols


def _chunk_columns_here(chunk: bytearray, path: str, masks: bool) -> dict | None:
    if masks:
        try:
            cols = _read_rle_results(chunk)
        except _NotChecked:
            cols = None
        if cols is not None:
            return cols
        try:
            anns = quiet_decode(_RLE_DECODER, chunk)
            cols = annotation_columns(anns, path, "[{}]", "pred", masks=True)
        except (msgspec.ValidationError, _NotChecked):
            pass
        else:
            if all(isinstance(cols[k], np.ndarray) for k in ("image_id", "category_id")):
                return cols
            return None
    anns = quiet_decode(_MASK_DECODER if masks else _DECODER, chunk)
    if not isinstance(anns, list):
        return None
    cols = annotation_columns(anns, path, "[{}]", "pred", masks=masks)
    if not all(isinstance(cols[k], np.ndarray) for k in ("image_id", "category_id")):
        return None
    return cols


def chunked_columns(
    path: str, workers: int = 1, masks: bool = False, executor: Any = None
) -> dict | None:
    """Columns of a large results list decoded in chunks (in ``workers`` processes
    or by ``executor``'s workers), or None."""
    columns = partial(_chunk_columns, path=path, masks=masks)
    sink_key = "rle_data" if masks else None
    return chunked_results(path, columns, workers, _CHUNK_BYTES, executor, sink_key)


@dataclass(frozen=True)
class _Listed:
    """A file's ``images`` or ``categories`` list as columns.

    ``ids[N]`` as the file spells them; ``names[N]`` the file names or
    category names (None where absent); ``width[N]``, ``height[N]`` float64
    (NaN where absent; images only); ``extra``: LVIS's fields as decoded,
    one value per row (images: ``neg_category_ids``,
    ``not_exhaustive_category_ids``; categories: ``frequency``), absent
    where no row has them; a tuple (or None) where the compiled reader has
    already checked and normalized them (:mod:`.lvis_lists`).
    """

    ids: list
    names: list
    width: Any = None
    height: Any = None
    extra: dict[str, list] = field(default_factory=dict)

    @staticmethod
    def of_images(images: list[_Image] | None) -> _Listed | None:
        if images is None:
            return None
        lists = ("neg_category_ids", "not_exhaustive_category_ids")
        return _Listed(
            ids=[im.id for im in images],
            names=[im.file_name for im in images],
            width=[np.nan if im.width is None else im.width for im in images],
            height=[np.nan if im.height is None else im.height for im in images],
            extra={name: [getattr(im, name) for im in images] for name in lists},
        )

    @staticmethod
    def of_categories(categories: list[_Category] | None) -> _Listed | None:
        if categories is None:
            return None
        return _Listed(
            ids=[c.id for c in categories],
            names=[c.name for c in categories],
            extra={"frequency": [c.frequency for c in categories]},
        )


@dataclass
class _Read:
    """What one COCO file gave: annotation columns and the lists it had, if any.

    ``label`` formats an annotation's place (``annotations[{}]`` in a dataset
    dict, ``[{}]`` in a results list).
    """

    cols: dict
    images: _Listed | None
    categories: _Listed | None
    label: str
    notes: list[str] = field(default_factory=list)


def _read(path: str, role: str, options: LoadOptions, data: bytes | None = None) -> _Read:
    """Decode the file (in parts when it is a large results list) into columns.

    ``data``: the JSON itself (an in-memory input named ``path``), not read from disk.
    The compiled reader reads what it is sure of; msgspec reads the rest
    and says what is wrong with a bad file.
    """
    masks, keypoints = options.masks, options.keypoints
    key = options.score_column if role == "pred" else None
    if key is not None and key != "score":
        raw = read_bytes(path) if data is None else data
        return _read_decoded(path, role, options, _scored_decoder_doc(path, raw, key, options))
    chunked = role == "pred" and data is None and not keypoints
    boxes_only = not masks and not keypoints
    if chunked and boxes_only and options.executor is None:
        cols = threaded_results(path, read_box_results, options.workers)
        if cols is not None:
            return _Read(cols, None, None, "[{}]")
    if role == "pred" and data is None and keypoints and not masks and options.executor is None:
        cols = threaded_results(path, read_keypoint_results, options.workers)
        if cols is not None:
            return _Read(cols, None, None, "[{}]")
    cols = chunked_columns(path, options.workers, masks, options.executor) if chunked else None
    if cols is not None:
        return _Read(cols, None, None, "[{}]")
    raw = read_bytes(path) if data is None else data
    if not masks:  # what the compiled reader reads: boxes, or boxes and keypoints
        fast = _read_compiled_dataset(raw, path, keypoints) if role == "gt" else None
        if fast is not None:
            return fast
        read_results = read_keypoint_results if keypoints else read_box_results
        if role == "pred" and (cols := read_results(raw)) is not None:
            return _Read(cols, None, None, "[{}]")
    elif role == "gt" and not keypoints:  # masks: polygons kept flat
        fast = _read_compiled_dataset(raw, path, polygons=True)
        if fast is not None:
            return fast
    doc = _decode(path, raw, masks, keypoints)
    if role == "pred" and _unscored(doc) and f'"{CONFIDENCE}"'.encode() in raw:
        r = _read_decoded(path, role, options, _scored_decoder_doc(path, raw, CONFIDENCE, options))
        r.notes.append(f"{path}: no 'score' key: the score read from '{CONFIDENCE}'")
        return r
    return _read_decoded(path, role, options, doc)


def _scored_decoder_doc(path: str, raw: bytes, key: str, options: LoadOptions) -> Any:
    try:
        return quiet_decode(_scored_decoder(key, options.masks, options.keypoints), raw)
    except JSON_ERRORS as exc:
        raise json_error(path, raw, exc) from None


def _unscored(doc: Any) -> bool:
    """Whether a decoded file's first annotation has no score."""
    anns = doc if isinstance(doc, list) else doc.annotations
    return bool(anns) and anns[0].score is None


def _read_decoded(path: str, role: str, options: LoadOptions, doc: Any) -> _Read:
    """Columns of a decoded COCO file (a results list or a dataset dict)."""
    masks, keypoints = options.masks, options.keypoints
    if isinstance(doc, list):
        if role == "gt":
            raise InputError(
                path,
                "ground truth must be a COCO dataset (an object with images, annotations, "
                "categories), found a results list",
                hint="did you swap the ground-truth and prediction files?",
            )
        cols = annotation_columns(doc, path, "[{}]", role, masks=masks, keypoints=keypoints)
        return _Read(cols, None, None, "[{}]")
    if doc.annotations is None:
        raise InputError(path, "expected an 'annotations' list, found none", where="$")
    if role == "gt" and doc.images is None:
        raise InputError(path, "expected an 'images' list in the ground truth, found none")
    if role == "gt" and doc.categories is None:
        raise InputError(path, "expected a 'categories' list in the ground truth, found none")
    label = "annotations[{}]"
    cols = annotation_columns(doc.annotations, path, label, role, masks=masks, keypoints=keypoints)
    return _Read(cols, _Listed.of_images(doc.images), _Listed.of_categories(doc.categories), label)


def _image_table(
    images_in: _Listed | None, img_keys: np.ndarray | list[Key], path: str
) -> tuple[ImageTable, np.ndarray]:
    """The image table and each annotation's image (-1 where the table lacks it)."""
    if images_in is None:
        if isinstance(img_keys, np.ndarray):
            # A results list names its images by id only: sorted ids, one pass.
            uniq, image_idx = dense_codes(img_keys)
            return ImageTable.build(uniq.tolist()), image_idx
        images = ImageTable.build(_vocab(img_keys))
        return images, _positions(img_keys, images.ids)
    # The table keeps the ids as the file spells them (pycocotools orders
    # "10" and 10 differently); annotations join them by value.
    ids = _image_ids(images_in.ids, path)
    if len(set(ids)) != len(ids):
        seen: dict = {}
        for i, k in enumerate(ids):
            if k in seen:
                raise InputError(
                    path,
                    f"image id {quoted(k)} appears twice (images[{seen[k]}] and images[{i}])",
                    where=f"images[{i}].id",
                )
            seen[k] = i
    images = ImageTable.build(images_in.ids, images_in.names, images_in.width, images_in.height)
    images = replace(
        images,
        negative=_category_lists(images_in, "neg_category_ids", path),
        not_exhaustive=_category_lists(images_in, "not_exhaustive_category_ids", path),
    )
    return images, _positions(img_keys, tuple(ids))


def _image_ids(raw: Sequence[Any], path: str) -> list[Key]:
    """The images' ids as :func:`_id_key` reads them (integers, the common case, as they are)."""
    if integer_ids(raw) is not None:
        return list(raw)
    ids = []
    for i, value in enumerate(raw):
        try:
            ids.append(_id_key(value))
        except ValueError as exc:
            raise InputError(path, f"image id: {exc}", where=f"images[{i}].id") from None
    return ids


def _category_lists(images_in: _Listed, name: str, path: str) -> tuple[tuple[Key, ...], ...] | None:
    """Each image's LVIS list ``name`` as normalized category ids; None when no image has one.

    An image without the list has none (an empty tuple).
    """
    lists = images_in.extra.get(name)
    if isinstance(lists, tuple):  # the compiled reader's, normalized
        return lists
    if lists is None or all(raw is None for raw in lists):
        return None
    out: list[tuple[Key, ...]] = []
    for i, raw in enumerate(lists):
        if raw is None:
            out.append(())
            continue
        if not isinstance(raw, list):
            raise InputError(
                path,
                f"{name} must be a list of category ids, got {type(raw).__name__}",
                where=f"images[{i}].{name}",
            )
        try:
            out.append(tuple(normalize_id(v) for v in raw))
        except ValueError as exc:
            raise InputError(path, f"{name}: {exc}", where=f"images[{i}].{name}") from None
    return tuple(out)


FREQUENCIES = ("r", "c", "f")


def _frequencies(categories_in: _Listed, path: str) -> tuple[str | None, ...] | None:
    """Each category's LVIS ``frequency`` (``r``, ``c`` or ``f``); None when no category has one."""
    frequencies = categories_in.extra.get("frequency")
    if isinstance(frequencies, tuple):  # the compiled reader's, checked
        return frequencies
    if frequencies is None or all(f is None for f in frequencies):
        return None
    for i, f in enumerate(frequencies):
        if f is not None and f not in FREQUENCIES:
            raise InputError(
                path,
                f"frequency must be one of r, c, f (rare, common, frequent), got "
                f"{excerpt(repr(f))}",
                where=f"categories[{i}].frequency",
            )
    return tuple(frequencies)


def _category_table(
    categories_in: _Listed | None, cat_keys: np.ndarray | list[Key], role: str, path: str
) -> tuple[CategoryTable, np.ndarray]:
    """The category table and each annotation's category (-1 where the table lacks it)."""
    if categories_in is None or (role == "pred" and not categories_in.ids):
        if isinstance(cat_keys, np.ndarray):
            uniq_c, category_idx = dense_codes(cat_keys)
            cvocab = tuple(uniq_c.tolist())
            return CategoryTable(cvocab, tuple(str(k) for k in cvocab)), category_idx
        cvocab = _vocab(cat_keys)
        categories = CategoryTable(cvocab, tuple(str(k) for k in cvocab))
        return categories, _positions(cat_keys, categories.ids)
    # As for images: ids as spelled in the table, joined by value.
    cids, raw_cids, cnames = [], [], []
    for i, (raw, name) in enumerate(zip(categories_in.ids, categories_in.names, strict=True)):
        try:
            cid = _id_key(raw)
        except ValueError as exc:
            raise InputError(path, f"category id: {exc}", where=f"categories[{i}].id") from None
        if cid in cids:
            raise InputError(
                path, f"category id {quoted(cid)} appears twice", where=f"categories[{i}].id"
            )
        cids.append(cid)
        raw_cids.append(raw)
        cnames.append(name if name is not None else str(raw))
    if role == "pred":
        # Result categories that the file's own list lacks are still kept.
        for k in _vocab(cat_keys):
            if k not in cids:
                cids.append(k)
                raw_cids.append(k)
                cnames.append(str(k))
    frequency = _frequencies(categories_in, path) if role == "gt" else None
    table = CategoryTable(tuple(raw_cids), tuple(cnames), frequency)
    return table, _positions(cat_keys, tuple(cids))


def _shown(key: object) -> str:
    """An id of an id column for a message: ``7`` (not ``np.int64(7)``), ``'cat'``."""
    return quoted(key.item() if isinstance(key, np.generic) else key)


def _unknown_notes(
    image_idx: np.ndarray, category_idx: np.ndarray, r: _Read, path: str
) -> list[str]:
    """Warnings for annotations whose image or category the file's lists lack."""
    out: list[str] = []
    bad_img = int((image_idx < 0).sum())
    bad_cat = int(((category_idx < 0) & (image_idx >= 0)).sum())
    if bad_img:
        first = int(np.flatnonzero(image_idx < 0)[0])
        # pycocotools drops them too, but a ground truth that loses objects (or
        # predictions that lose detections) may be scored wrong: a doubt.
        out.append(
            doubt(
                f"{path}: {bad_img} annotation(s) refer to images not in 'images' (first: "
                f"{r.label.format(first)} image_id {_shown(r.cols['image_id'][first])}); ignored"
            )
        )
    if bad_cat:
        first = int(np.flatnonzero((category_idx < 0) & (image_idx >= 0))[0])
        out.append(
            f"{path}: {bad_cat} annotation(s) refer to categories not in 'categories' "
            f"(first: {r.label.format(first)} category_id "
            f"{_shown(r.cols['category_id'][first])}); "
            "ignored"
        )
    return out


def _read_boxes_or_masks(
    path: str, role: str, options: LoadOptions, data: bytes | None
) -> tuple[_Read, LoadOptions]:
    """:func:`_read`; results that give masks without boxes are read again with their masks.

    Their boxes (and maybe areas) come from the masks once the image sizes
    are known (:func:`iou_eval.geometry.segm.boxes_from_masks`), as
    pycocotools' ``loadRes`` reads them.  Returns the read and the options it used.
    """
    try:
        return _read(path, role, options, data), options
    except InputError as exc:
        if role != "pred" or options.masks or exc.message != NO_BBOX:
            raise
    options = replace(options, masks=True)
    r = _read(path, role, options, data)
    _check_mask_or_box(r, path)
    return r, options


def _check_mask_or_box(r: _Read, path: str) -> None:
    """Every result of a masks re-read gives a ``bbox`` or a ``segmentation`` (located error)."""
    cols = r.cols
    present = np.fromiter((s is not None for s in cols["segmentation"]), dtype=bool)
    present |= cols["rle_size"][:, 0] > 0
    neither = ~cols["has_bbox"] & ~present
    if neither.any():
        raise InputError(
            path,
            "result has neither a 'bbox' nor a 'segmentation'",
            where=r.label.format(int(np.flatnonzero(neither)[0])),
            hint="every result needs [x, y, w, h], or a mask that gives its box",
        )


def _pending_masks(cols: dict, rows, path: str, ds: Dataset) -> Any:
    """The :class:`~iou_eval.geometry.segm.PendingMasks` of the rows ``rows`` of the columns."""
    from iou_eval.geometry.segm import PendingMasks

    return PendingMasks(
        segs=cols["segmentation"][rows],
        has_bbox=cols["has_bbox"][rows],
        path=path,
        origins=ds.origin,
        origin_label=ds.origin_label,  # "" for a results list: places read "[12].segmentation"
        checked=checked_rles(cols, rows),
        polygons=cols["polygons"].take(rows) if "polygons" in cols else None,
    )


def load_coco(path: str, role: str, options: LoadOptions, *, data: bytes | None = None) -> Dataset:
    """Read a COCO ground-truth dataset or a COCO results file.

    ``role`` is ``"gt"`` or ``"pred"``.  Ground truth must be a dict with
    ``images``, ``annotations`` and ``categories``; predictions may be a
    results list or such a dict whose annotations carry a ``score``.
    Image and category ids may be integers or numeric strings.  With
    ``options.masks`` the segmentations come along (``Dataset.masks``).
    ``data``: the JSON itself (an in-memory input named ``path``), not read from disk.
    """
    r, options = _read_boxes_or_masks(path, role, options, data)
    cols = r.cols
    images, image_idx = _image_table(r.images, cols["image_id"], path)
    categories, category_idx = _category_table(r.categories, cols["category_id"], role, path)
    r.images = r.categories = None  # the decoded records are no longer needed
    keep = (image_idx >= 0) & (category_idx >= 0)
    warnings = r.notes + ([] if keep.all() else _unknown_notes(image_idx, category_idx, r, path))
    gt = role == "gt"
    if gt and (no_area := int(np.isnan(cols["area"]).sum())):
        warnings.append(
            f"{path}: {no_area} annotation(s) have no 'area'; using the box's w*h "
            "for the area ranges"
        )
    # Views, not copies, when every row stays (the usual case).
    origin = np.flatnonzero(keep)
    rows: slice | np.ndarray = slice(None) if len(origin) == len(keep) else origin
    if gt and cols["id_source"] is not None:
        origin, note = indexed_by_id(
            cols["id_source"], cols["raw_ids"], keep, image_idx, images, path
        )
        rows = origin
        warnings.append(note)

    def pick(name: str) -> np.ndarray | None:
        col = cols.get(name)
        return None if col is None else col[rows]

    ds = assemble(
        source=path,
        fmt="coco",
        images=images,
        categories=categories,
        image_idx=image_idx[rows],
        category_idx=category_idx[rows],
        boxes=cols["boxes"][rows],
        box_format=options.box_format or BoxFormat.XYWH,
        normalized=options.normalized,
        score=pick("score"),
        area=pick("area"),
        is_crowd=pick("iscrowd"),
        ignore=pick("ignore"),
        ann_id=pick("id"),
        origin=origin,
        files=(path,),
        origin_label="annotations" if r.label.startswith("annotations") else "",
        warnings=warnings,
    )
    if options.keypoints:
        from iou_eval.io.loaders.coco_keypoints import attach_keypoints

        ds = attach_keypoints(ds, cols, rows, role, path)
    if not options.masks:
        return ds
    ds = replace(ds, masks=_pending_masks(cols, rows, path, ds))
    if role == "gt":
        from iou_eval.geometry.segm import encode_early

        ds = encode_early(ds)
    return ds
