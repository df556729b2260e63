"""Per-image dicts of a training or inference loop as numpy columns: what ``Evaluator.update`` reads.

One image is a dict as torchmetrics' ``MeanAveragePrecision`` takes it:

- predictions ``{"boxes": [N, 4], "scores": [N], "labels": [N]}``, targets
  ``{"boxes": [N, 4], "labels": [N]}`` with optional ``"iscrowd"`` (0/1)
  and ``"area"`` (used where > 0; 0, torchmetrics' default, or NaN: the
  mask's area when masks are kept, else the box's ``w * h``);
- ``"masks"``: ``[N, H, W]`` bool (or 0/1 integers), or ``N`` pycocotools
  RLE dicts ``{"size": [h, w], "counts": ...}``; read only when masks are
  scored (``segm`` or ``boundary``), and kept as compressed RLE strings;
- ``"image_id"`` (targets or predictions): an int or a str (a one-element
  array is fine); an image without one gets the next integer.

Instead of a dict an image may be a supervision ``Detections`` (``xyxy``,
``confidence``, ``class_id``, ``mask``) or an Ultralytics ``Results``
(``boxes.xyxy``, ``boxes.conf``, ``boxes.cls``; an oriented-box model's
``obb.xywhr``, ``obb.conf``, ``obb.cls``): their boxes are ``xyxy``.

Arrays may be numpy or anything with ``__dlpack__`` or ``__array__``
(torch tensors on the CPU or a GPU, jax, cupy): :func:`as_numpy` converts
one array in one call, never a Python loop per box, and never imports torch.

Boxes are kept as COCO writes them, ``[x, y, w, h]`` in float64 (``xyxy``:
``w = x2 - x1``), so that the state is exactly the COCO files it stands for.

A field is one entry of :data:`FIELDS` (how a value becomes a column) and
one column of the state: ``keypoints`` or ``obb`` are such entries.  Every
check runs before anything is kept; a bad value is an
:class:`~iou_eval.errors.InputError` naming the image, the field and the
place (``preds[3].boxes[2]``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Key, normalize_id
from iou_eval.errors import InputError

# How errors name the stream (the place follows: ``update():preds[3].boxes: ...``).
SOURCE = "update()"
SIDES = {"pred": "preds", "gt": "targets"}


def as_numpy(value: Any) -> np.ndarray:
    """``value`` as a numpy array: numpy as it is, ``__dlpack__`` without a copy where the
    array lives in host memory, a device array copied to the host, else ``__array__``.

    Never imports torch: a tensor is read through the protocols it implements
    (``detach`` first where it has one, as a tensor that requires grad has).
    """
    if isinstance(value, np.ndarray):
        return value
    detach = getattr(value, "detach", None)
    if callable(detach) and not isinstance(value, np.generic):
        value = detach()
    if hasattr(value, "__dlpack__"):
        for copy in (False, True):
            try:
                # A device array needs copying to the host (numpy >= 2.1 asks for it).
                return (
                    np.from_dlpack(value, device="cpu", copy=True)
                    if copy
                    else np.from_dlpack(value)
                )
            except (BufferError, RuntimeError, TypeError, ValueError, NotImplementedError):
                continue
        for host in ("cpu", "get"):  # torch, cupy: to host memory, then as numpy
            move = getattr(value, host, None)
            if callable(move):
                return as_numpy(move())
    return np.asarray(value)


@dataclass(frozen=True)
class Place:
    """One image of a batch, for errors: its side, position and id."""

    side: str
    index: int
    image: Key | None

    def error(self, field: str, message: str, row: int | None = None) -> InputError:
        where = f"{SIDES[self.side]}[{self.index}].{field}" + ("" if row is None else f"[{row}]")
        who = f"image {self.image!r}" if self.image is not None else "image"
        return InputError(SOURCE, f"{who}: {field} {message}", where=where)


def _array(value: Any, place: Place, field: str) -> np.ndarray:
    try:
        return as_numpy(value)
    except (TypeError, ValueError, RuntimeError, BufferError) as exc:
        raise place.error(field, f"is not an array ({exc})") from None


# A row shape's dimension that any size fits (the K of ``keypoints [N, K, 3]``).
ANY = -1


def _fits(shape: tuple[int, ...], tail: tuple[int, ...]) -> bool:
    """Whether a row shape ``shape`` is ``tail`` (``ANY`` fits any size)."""
    return len(shape) == len(tail) and all(t in (ANY, s) for s, t in zip(shape, tail, strict=True))


def _empty(tail: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of no rows of ``tail`` (an ``ANY`` dimension 0)."""
    return (0, *(max(t, 0) for t in tail))


def _rows(arr: np.ndarray, place: Place, field: str, n: int | None, tail: tuple[int, ...]):
    """``arr`` as ``[n, *tail]`` (an empty array of any shape: no rows); a located error else."""
    shape = arr.shape
    if len(shape) == 1 + len(tail) and _fits(shape[1:], tail) and (n is None or shape[0] == n):
        return arr
    if arr.size == 0 and n in (None, 0):
        return arr.reshape(_empty(tail))
    want = ("N" if n is None else str(n),) + tuple("K" if t == ANY else str(t) for t in tail)
    raise place.error(field, f"must be [{', '.join(want)}], got shape {list(shape)}")


def numbers(arr: np.ndarray, place: Any, field: str) -> np.ndarray:
    """A float64 copy of a column ``[N, ...]``, each number finite."""
    if arr.dtype.kind not in "iufb":
        raise place.error(field, f"must hold numbers, got {arr.dtype}")
    out = arr.astype(np.float64)
    finite = np.isfinite(out)
    if not finite.all():
        r = int(np.flatnonzero(~finite.reshape(len(out), -1).all(axis=1))[0])
        raise place.error(field, f"must be finite numbers, got {out[r].tolist()}", r)
    return out


def labels(
    arr: np.ndarray, place: Any, class_names: Sequence[str] | None, field: str = "labels"
) -> np.ndarray:
    """``[N]`` int64 labels: category ids, or indices into ``class_names`` when given."""
    if arr.dtype.kind == "f":
        whole = np.isfinite(arr) & (arr == np.floor(arr))
        if not whole.all():
            r = int(np.flatnonzero(~whole)[0])
            raise place.error(field, f"must be whole numbers, got {arr[r]!r}", r)
    elif arr.dtype.kind not in "iu":
        raise place.error(field, f"must be integers, got {arr.dtype}")
    out = arr.astype(np.int64)
    if class_names is not None and len(out):
        bad = (out < 0) | (out >= len(class_names))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise place.error(
                field,
                f"{int(out[r])} is not in class_names (indices 0 to {len(class_names) - 1})",
                r,
            )
    return out


def xywh_boxes(arr: np.ndarray, place: Any, fmt: BoxFormat) -> np.ndarray:
    """``[N, 4]`` boxes in ``fmt`` as COCO's ``[x, y, w, h]`` float64 (``w, h >= 0``)."""
    b = numbers(arr, place, "boxes")
    if fmt is BoxFormat.XYXY:
        out = np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])
    elif fmt is BoxFormat.CXCYWH:
        out = np.column_stack([b[:, 0] - b[:, 2] / 2.0, b[:, 1] - b[:, 3] / 2.0, b[:, 2], b[:, 3]])
    else:
        out = b
    if (out[:, 2:] < 0).any():
        r = int(np.flatnonzero((out[:, 2:] < 0).any(axis=1))[0])
        what = "x2 < x1 or y2 < y1" if fmt is BoxFormat.XYXY else "a negative width or height"
        raise place.error("boxes", f"has {what}: {b[r].tolist()} read as {fmt.value}", r)
    return out


def flags(arr: np.ndarray, place: Any, field: str) -> np.ndarray:
    """``[N]`` bool from 0/1 or booleans."""
    if arr.dtype.kind in "iufb" and ((arr == 0) | (arr == 1)).all():
        return arr.astype(bool)
    out = numbers(arr, place, field)
    bad = (out != 0) & (out != 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise place.error(field, f"must be 0 or 1, got {out[r]:g}", r)
    return out.astype(bool)


def given_area(arr: np.ndarray, place: Any) -> np.ndarray:
    """``[N]`` areas; NaN where not given (0, torchmetrics' default, counts as not given)."""
    if arr.dtype.kind not in "iufb":
        raise place.error("area", f"must hold numbers, got {arr.dtype}")
    out = arr.astype(np.float64)
    # fmin and fmax pass over NaN (an area not given): one reduction each, no temporaries.
    if len(out) and (np.fmin.reduce(out) < 0 or np.fmax.reduce(out) == np.inf):
        r = int(np.flatnonzero(np.isinf(out) | (out < 0))[0])
        raise place.error("area", f"must be a finite number >= 0, got {out[r]!r}", r)
    return np.where(out > 0, out, np.nan)


@dataclass(frozen=True)
class BatchPlace:
    """One side of a batch, for errors on its joined columns: a row is found in its image.

    Attributes:
        side: ``"pred"`` or ``"gt"``; ids: ``[I]`` the images' ids;
        counts: ``[I]`` each image's rows, in column order.
    """

    side: str
    ids: list[Key | None]
    counts: Sequence[int]

    def error(self, field: str, message: str, row: int | None = None) -> InputError:
        if row is None:
            return Place(self.side, 0, None).error(field, message)
        offsets = np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)])
        i = int(np.searchsorted(offsets, row, side="right") - 1)
        return Place(self.side, i, self.ids[i]).error(field, message, row - int(offsets[i]))


# ---------------------------------------------------------------------- fields


@dataclass(frozen=True)
class Field:
    """How one per-image field becomes a column of ``N`` rows.

    Each image's value is checked for its shape (``[N, *tail]``) where it is
    read; the batch's values are joined and checked as one column
    (``check``), and a bad row is named in its image.

    Attributes:
        key: the dict key (``boxes``, ``scores``...).
        column: the state's column name.
        sides: ``{"pred", "gt"}`` or one of them.
        check: ``(joined[N, ...], place, reader) -> column[N, ...]`` (or
            several columns by name, a ragged buffer and its lengths).
        default: the column where the field is absent (``n -> array``), or
            None: the field is required.
        tail: each row's shape.
        iou_type: the iou type that reads the field (it is read only when
            that type is scored, as masks are); None: always read.
    """

    key: str
    column: str
    sides: frozenset[str]
    check: Callable[[np.ndarray, Any, BatchReader], np.ndarray | dict[str, np.ndarray]]
    default: Callable[[int], np.ndarray] | None = None
    tail: tuple[int, ...] = ()
    iou_type: str | None = None


def oriented_rows(arr: np.ndarray, place: Any) -> np.ndarray:
    """``[N, 5]`` oriented boxes ``cx, cy, w, h, angle`` (Ultralytics' ``xywhr``) as float64:
    finite, with a positive width and height."""
    out = numbers(arr, place, "obb")
    flat = (out[:, 2] <= 0) | (out[:, 3] <= 0)
    if flat.any():
        r = int(np.flatnonzero(flat)[0])
        raise place.error(
            "obb",
            f"needs a positive width and height, got {out[r].tolist()} (cx, cy, w, h, angle)",
            r,
        )
    return out


def keypoint_rows(arr: np.ndarray, place: Any) -> dict[str, np.ndarray]:
    """``[N, K, 3]`` keypoints ``(x, y, v)`` as COCO's ``keypoints`` lists are kept:
    ``kp_values[N * 3K]`` float64 back to back (each number finite), ``kp_length[N]`` 3K."""
    out = numbers(arr, place, "keypoints")
    return {
        "kp_values": out.reshape(-1),
        "kp_length": np.full(len(out), out[0].size if len(out) else 0, dtype=np.int64),
    }


def keypoint_counts(arr: np.ndarray, place: Any) -> np.ndarray:
    """``[N]`` int64 ``num_keypoints`` (0: the ground truth is ignored); -1 where not given."""
    out = labels(arr, place, None, "num_keypoints")
    if (out < -1).any():
        r = int(np.flatnonzero(out < -1)[0])
        raise place.error("num_keypoints", f"must be a count >= 0, got {int(out[r])}", r)
    return out


BOTH = frozenset({"pred", "gt"})
FIELDS: tuple[Field, ...] = (
    Field("scores", "score", frozenset({"pred"}), lambda a, p, r: numbers(a, p, "scores")),
    Field("labels", "label", BOTH, lambda a, p, r: labels(a, p, r.class_names)),
    Field(
        "iscrowd", "iscrowd", frozenset({"gt"}), lambda a, p, r: flags(a, p, "iscrowd"),
        default=lambda n: np.zeros(n, dtype=bool),
    ),
    Field(
        "area", "given_area", frozenset({"gt"}), lambda a, p, r: given_area(a, p),
        default=lambda n: np.full(n, np.nan),
    ),
    Field("obb", "xywhr", BOTH, lambda a, p, r: oriented_rows(a, p), tail=(5,), iou_type="obb"),
    Field(
        "keypoints", "keypoints", BOTH, lambda a, p, r: keypoint_rows(a, p), tail=(ANY, 3),
        iou_type="keypoints",
    ),
    Field(
        "num_keypoints", "num_keypoints", frozenset({"gt"}),
        lambda a, p, r: keypoint_counts(a, p), default=lambda n: np.full(n, -1),
        iou_type="keypoints",
    ),
)  # fmt: skip


# ----------------------------------------------------------------------- masks


@dataclass(frozen=True)
class MaskRows:
    """Compressed RLE masks of ``N`` rows, checked (the columns a COCO results reader keeps).

    Attributes:
        data: ``[B]`` uint8 the strings back to back; length: ``[N]`` int64.
        size: ``[N, 2]`` int64 ``[h, w]``; area: ``[N]`` float64 pixels;
        box: ``[N, 4]`` int64 a box holding the pixels (the matcher's bounds).
    """

    data: np.ndarray
    length: np.ndarray
    size: np.ndarray
    area: np.ndarray
    box: np.ndarray

    @staticmethod
    def empty() -> MaskRows:
        z = np.zeros
        return MaskRows(
            z(0, np.uint8), z(0, np.int64), z((0, 2), np.int64), z(0), z((0, 4), np.int64)
        )

    @staticmethod
    def concat(parts: Sequence[MaskRows]) -> MaskRows:
        if not parts:
            return MaskRows.empty()
        if len(parts) == 1:
            return parts[0]
        return MaskRows(*(np.concatenate([getattr(p, f) for p in parts]) for f in _MASK_FIELDS))

    def columns(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}{f}": getattr(self, f) for f in _MASK_FIELDS}


_MASK_FIELDS = ("data", "length", "size", "area", "box")


def _encode_bitmaps(arr: np.ndarray, place: Place, n: int) -> MaskRows:
    """``[n, H, W]`` bool (or 0/1) masks as pycocotools' compressed RLE, checked."""
    from iou_eval.geometry.masks import encode_bitmaps

    if arr.ndim != 3 or len(arr) != n:
        raise place.error("masks", f"must be [{n}, H, W], got shape {list(arr.shape)}")
    ints = arr.dtype.kind in "iu"
    if arr.dtype != np.bool_ and (not ints or (arr.size and ((arr != 0) & (arr != 1)).any())):
        raise place.error("masks", f"must be bool (or 0/1), got {arr.dtype}")
    h, w = arr.shape[1:]
    if n == 0:
        return MaskRows.empty()
    return _checked(encode_bitmaps(arr), np.tile([h, w], (n, 1)).astype(np.int64), place)


def _checked(strings: list[bytes], size: np.ndarray, place: Place) -> MaskRows:
    from iou_eval.geometry.rle import BadRle, check_joined

    length = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    data = np.frombuffer(b"".join(strings), dtype=np.uint8)
    box = np.zeros((len(strings), 4), dtype=np.int64)
    try:
        area = check_joined(data, length, size[:, 0], size[:, 1], box)
    except BadRle as exc:
        raise place.error("masks", exc.reason, exc.row) from None
    return MaskRows(data, length, size, area.astype(np.float64), box)


def _encode_dicts(value: Sequence[Any], place: Place, n: int) -> MaskRows:
    """``n`` pycocotools RLE dicts (compressed or not) as checked compressed strings."""
    from iou_eval.geometry.masks import encode_segmentations

    if len(value) != n:
        raise place.error("masks", f"must be {n} masks, got {len(value)}")
    sizes = []
    for r, d in enumerate(value):
        size = d.get("size") if isinstance(d, Mapping) else None
        if not isinstance(d, Mapping) or not isinstance(size, (list, tuple)) or len(size) != 2:
            raise place.error(
                "masks", "must be bool arrays or RLE dicts {'size': [h, w], 'counts': ...}", r
            )
        sizes.append(size)
    try:
        hw = np.array(sizes, dtype=np.int64).reshape(n, 2)
    except (TypeError, ValueError, OverflowError):
        raise place.error("masks", f"RLE sizes must be two integers, got {sizes}") from None
    if (hw <= 0).any():
        r = int(np.flatnonzero((hw <= 0).any(axis=1))[0])
        raise place.error("masks", f"RLE size must be positive, got {hw[r].tolist()}", r)
    try:
        column, _ = encode_segmentations(
            list(value), hw[:, 0], hw[:, 1], path=SOURCE, origins=np.arange(n),
            origin_label=f"{SIDES[place.side]}[{place.index}].masks",
        )  # fmt: skip
    except InputError as exc:
        raise InputError(
            SOURCE, f"image {place.image!r}: masks {exc.message}", where=exc.where, hint=exc.hint
        ) from None
    data, length = column.strings.joined()
    return MaskRows(data, length, hw, column.area, column.boxes)


def read_masks(value: Any, place: Place, n: int) -> MaskRows:
    """An image's masks: ``[n, H, W]`` bitmaps or ``n`` RLE dicts."""
    if isinstance(value, (list, tuple)) and (not value or isinstance(value[0], Mapping)):
        return _encode_dicts(value, place, n)
    return _encode_bitmaps(_array(value, place, "masks"), place, n)


# ---------------------------------------------------------------------- images


def as_image_dict(entry: Any, place: Place) -> tuple[Mapping[str, Any], BoxFormat | None]:
    """A per-image entry as a dict, and the layout its boxes come in (None: the evaluator's).

    supervision ``Detections`` and Ultralytics ``Results`` are read by their
    attributes (boxes ``xyxy``); a dict as it is.
    """
    if isinstance(entry, Mapping):
        return entry, None
    if hasattr(entry, "xyxy") and hasattr(entry, "class_id"):  # supervision Detections
        out = {"boxes": entry.xyxy, "labels": entry.class_id}
        if getattr(entry, "confidence", None) is not None:
            out["scores"] = entry.confidence
        if getattr(entry, "mask", None) is not None:
            out["masks"] = entry.mask
        return out, BoxFormat.XYXY
    boxes = getattr(entry, "boxes", None)
    if boxes is not None and hasattr(boxes, "xyxy") and hasattr(boxes, "cls"):  # Ultralytics
        return {"boxes": boxes.xyxy, "scores": boxes.conf, "labels": boxes.cls}, BoxFormat.XYXY
    obb = getattr(entry, "obb", None)
    if obb is not None and hasattr(obb, "xywhr") and hasattr(obb, "cls"):  # Ultralytics OBB
        return {"obb": obb.xywhr, "scores": obb.conf, "labels": obb.cls}, BoxFormat.XYXY
    raise place.error("", f"expected a dict of arrays per image, got {type(entry).__name__}")


def image_id(pred: Mapping[str, Any], gt: Mapping[str, Any], place: Place) -> Key | None:
    """The image's id as its dicts give it (targets first), or None."""
    ids = []
    for side, d in (("gt", gt), ("pred", pred)):
        v = d.get("image_id")
        if v is None:
            continue
        if type(v) is int or type(v) is str:  # the usual case, without an array
            ids.append(normalize_id(v))
            continue
        p = Place(side, place.index, None)
        arr = _array(v, p, "image_id")
        if arr.size != 1:
            raise p.error("image_id", f"must be one id, got shape {list(arr.shape)}")
        try:
            ids.append(normalize_id(arr.reshape(()).item()))
        except ValueError as exc:
            raise p.error("image_id", str(exc)) from None
    if len(ids) == 2 and ids[0] != ids[1]:
        raise Place("pred", place.index, ids[0]).error(
            "image_id", f"{ids[1]!r} differs from the target's {ids[0]!r}"
        )
    return ids[0] if ids else None


@dataclass
class Pieces:
    """One side of a batch before its values are checked: each field joined over the images.

    Attributes:
        counts: ``[I]`` each image's rows; fmts: ``[I]`` the layout of each image's boxes.
        raw: field key -> ``[N, *tail]`` the images' values joined as given (a
            field an image lacks: its default; boxes: zeros where none).
        boxes: ``[I]`` each image's ``[n, 4]`` boxes as given (images of
            several layouts are converted one by one).
        has_box: ``[N]`` bool; masks: the images' masks, None where no masks are scored.
    """

    counts: list[int]
    fmts: list[BoxFormat]
    raw: dict[str, np.ndarray]
    boxes: list[np.ndarray]
    has_box: np.ndarray
    masks: MaskRows | None = None


class _Unusual(Exception):
    """An image's value is not a plain array of the expected shape: the batch is walked."""


def _joined(values: list[Any], tail: tuple[int, ...], counts: list[int] | None):
    """``(column[N, *tail], arrays[I])``: the images' values as arrays and joined.

    Raises _Unusual unless each is an array of numbers ``[counts[i], *tail]``
    (any ``[n, *tail]`` where ``counts`` is None; an ``ANY`` dimension of one
    size in the batch); an empty array of another shape is read as no rows,
    as :func:`_rows` reads it.
    """
    try:
        arrs = [v if type(v) is np.ndarray else as_numpy(v) for v in values]
    except (TypeError, ValueError, RuntimeError, BufferError):
        raise _Unusual from None
    try:
        joined = np.concatenate(arrs)
    except (TypeError, ValueError):  # of other dimensions (or none: a scalar, None)
        joined = None
    if (
        joined is None
        or not _fits(joined.shape[1:], tail)
        or joined.dtype.kind not in "iufb"
        or (counts is not None and [len(a) for a in arrs] != counts)
    ):
        want = (0, *_sizes(arrs, tail))
        empty = [
            a.size == 0 and a.shape != want and (counts is None or counts[i] == 0)
            for i, a in enumerate(arrs)
        ]
        if not any(empty):
            raise _Unusual
        return _joined(
            [a.reshape(want) if e else a for a, e in zip(arrs, empty, strict=True)], tail, counts
        )
    return joined, arrs


def _sizes(arrs: list[np.ndarray], tail: tuple[int, ...]) -> tuple[int, ...]:
    """``tail`` with each ``ANY`` dimension the size of the first image with rows that fits."""
    if ANY not in tail:
        return tail
    for a in arrs:
        if a.size and a.ndim == 1 + len(tail) and _fits(a.shape[1:], tail):
            return tuple(a.shape[1:])
    return _empty(tail)[1:]


@dataclass
class BatchReader:
    """Reads batches of per-image dicts with the evaluator's settings.

    Attributes:
        box_format: the layout of dict boxes.
        class_names: labels are indices into it; None: labels are category ids.
        masks: keep masks (``segm`` or ``boundary`` is scored).
        boxes_required: the sides whose rows each need a box (both when
            ``bbox`` is scored; the targets when ``keypoints`` are).
    """

    box_format: BoxFormat
    class_names: tuple[str, ...] | None
    masks: bool
    boxes_required: frozenset[str]
    iou_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._fields = {
            side: tuple(
                f
                for f in FIELDS
                if side in f.sides and (f.iou_type is None or f.iou_type in self.iou_types)
            )
            for side in SIDES
        }

    def fields(self, side: str) -> tuple[Field, ...]:
        """The :data:`FIELDS` read on ``side`` (those of the iou types scored)."""
        return self._fields[side]

    def gathered(self, dicts: list[Mapping[str, Any]], fmts: list[Any], side: str) -> Pieces:
        """One side's values joined field by field, shapes checked on the joined columns.

        Raises _Unusual where an image's value is missing, not an array of
        numbers or of another shape: :meth:`side` then walks the batch image by
        image, and names the first bad value (or reads an unusual good one).
        """
        labels, each = _joined([d.get("labels") for d in dicts], (), None)
        counts = [len(a) for a in each]
        raw = {"labels": labels}
        given = [d.get("boxes") for d in dicts]
        has = [v is not None for v in given]
        if not all(has):
            if side in self.boxes_required:
                raise _Unusual
            given = [
                v if h else np.zeros((n, 4)) for v, h, n in zip(given, has, counts, strict=True)
            ]
        raw["boxes"], boxes = _joined(given, (4,), counts)
        for f in self.fields(side):
            if f.key == "labels":
                continue
            values = [d.get(f.key) for d in dicts]
            if any(v is None for v in values):
                if f.default is None:
                    raise _Unusual
                values = [
                    f.default(n) if v is None else v for v, n in zip(values, counts, strict=True)
                ]
            raw[f.key] = _joined(values, f.tail, counts)[0]
        has_box = np.repeat(has, counts) if not all(has) else np.ones(len(labels), dtype=bool)
        fmts = [f or self.box_format for f in fmts]
        return Pieces(counts, fmts, raw, boxes, has_box)

    def side(self, d: Mapping[str, Any], fmt: BoxFormat | None, place: Place) -> dict[str, Any]:
        """One image's rows on one side: its values shaped (checked for shape only), its masks."""
        n = self._count(d, place)
        raw: dict[str, np.ndarray] = {}
        if d.get("boxes") is not None:
            raw["boxes"] = _rows(_array(d["boxes"], place, "boxes"), place, "boxes", n, (4,))
            if raw["boxes"].dtype.kind not in "iufb":
                raise place.error("boxes", f"must hold numbers, got {raw['boxes'].dtype}")
        elif place.side in self.boxes_required:
            scored = "bbox" if "bbox" in self.iou_types else "keypoints"
            raise place.error("boxes", f"are missing ({scored} is scored)")
        for f in self.fields(place.side):
            value = d.get(f.key)
            if value is None and f.default is None:
                raise place.error(f.key, "are missing")
            if value is not None:
                arr = _rows(_array(value, place, f.key), place, f.key, n, f.tail)
                if arr.dtype.kind not in "iufb":
                    raise place.error(f.key, f"must hold numbers, got {arr.dtype}")
                raw[f.key] = arr
        part: dict[str, Any] = {"n": n, "raw": raw, "fmt": fmt or self.box_format}
        if self.masks:
            part.update(self.image_masks(d, place, n))
        return part

    def image_masks(self, d: Mapping[str, Any], place: Place, n: int) -> dict[str, Any]:
        """``{"masks": MaskRows}`` of one image's ``n`` rows (and the size an empty array tells)."""
        value = d.get("masks")
        if value is None and n:
            raise place.error("masks", "are missing (masks are scored: segm or boundary)")
        part: dict[str, Any] = {
            "masks": MaskRows.empty() if n == 0 else read_masks(value, place, n)
        }
        if n == 0 and value is not None:
            part["empty_size"] = _empty_size(value)
        return part

    def joined(self, pieces: Pieces, place: BatchPlace) -> dict[str, np.ndarray]:
        """One side's images as checked columns: each field checked once, on its joined column."""
        cols: dict[str, np.ndarray] = {
            "image": np.repeat(np.arange(len(pieces.counts), dtype=np.int64), pieces.counts)
        }
        cols["xywh"], cols["has_box"] = self._xywh(pieces, place), pieces.has_box
        for f in self.fields(place.side):
            out = f.check(pieces.raw[f.key], place, self)
            cols.update(out if isinstance(out, dict) else {f.column: out})
        if pieces.masks is not None:
            cols.update(pieces.masks.columns("mask_"))
        return cols

    def _xywh(self, pieces: Pieces, place: BatchPlace) -> np.ndarray:
        """``[N, 4]`` the boxes as COCO's xywh, each image's read in its layout (zeros where none)."""
        fmts = set(pieces.fmts)
        if len(fmts) == 1:
            return xywh_boxes(pieces.raw["boxes"], place, fmts.pop())
        out = []
        for i, (n, b, fmt) in enumerate(zip(pieces.counts, pieces.boxes, pieces.fmts, strict=True)):
            out.append(xywh_boxes(b, BatchPlace(place.side, place.ids[i : i + 1], [n]), fmt))
        return _join(out, (4,))

    def _count(self, d: Mapping[str, Any], place: Place) -> int:
        """``N``: the rows the image's labels (else boxes) give."""
        key = "labels" if d.get("labels") is not None else "boxes"
        if d.get(key) is None:
            raise place.error("labels", "are missing")
        arr = _array(d[key], place, key)
        if key == "boxes":
            return len(_rows(arr, place, key, None, (4,)))
        return len(_rows(arr, place, key, None, ()))


def walked_pieces(
    parts: list[dict[str, Any]], side: str, reader: BatchReader, ids: list[Key | None]
) -> Pieces:
    """A side's images read one by one (:meth:`BatchReader.side`) as joined pieces."""
    counts = [p["n"] for p in parts]
    boxes = [p["raw"].get("boxes", np.zeros((p["n"], 4))) for p in parts]
    raw = {"boxes": _join(boxes, (4,))}
    for f in reader.fields(side):
        fill = f.default or np.zeros  # every image has the required fields
        values = [p["raw"][f.key] if f.key in p["raw"] else fill(p["n"]) for p in parts]
        try:
            raw[f.key] = _joined(values, f.tail, counts)[0]
        except _Unusual:  # each image's shape fits: an ANY dimension differs between images
            raise _other_size(values, f, side, ids) from None
    has_box = np.repeat(np.array([("boxes" in p["raw"]) for p in parts], dtype=bool), counts)
    mask_rows = MaskRows.concat([p["masks"] for p in parts]) if reader.masks else None
    return Pieces(counts, [p["fmt"] for p in parts], raw, boxes, has_box, mask_rows)


def _other_size(values: list[np.ndarray], f: Field, side: str, ids: list[Key | None]):
    """The error of the first image whose ``ANY`` dimension differs from the batch's first."""
    sizes = _sizes(values, f.tail)
    i = next(i for i, a in enumerate(values) if a.size and a.shape[1:] != sizes)
    want = ", ".join(map(str, (len(values[i]), *sizes)))
    return Place(side, i, ids[i]).error(
        f.key,
        f"must be [{want}] as in the batch's first image with rows (one size a batch), "
        f"got shape {list(values[i].shape)}",
    )


def _empty_size(value: Any) -> tuple[int, int] | None:
    """The ``[H, W]`` a ``[0, H, W]`` bitmap array tells, if any."""
    if isinstance(value, (list, tuple)):
        return None
    try:
        shape = as_numpy(value).shape
    except (TypeError, ValueError, RuntimeError, BufferError):
        return None
    return (int(shape[1]), int(shape[2])) if len(shape) == 3 and min(shape[1:]) > 0 else None


def keep_top(
    image: np.ndarray, label: np.ndarray, score: np.ndarray, cap: int, per_class: bool
) -> np.ndarray:
    """``[N]`` bool: the ``cap`` highest-scored rows of each image (and label, ``per_class``).

    Equal scores keep the order given, as pycocotools' stable sort of
    ``-score`` keeps it: exactly the rows its ``maxDets`` cap ever reads.
    """
    per_image = np.bincount(image)
    if not len(per_image) or per_image.max() <= cap:  # no image holds more: every row stays
        return np.ones(len(image), dtype=bool)
    keys = (-score, label, image) if per_class else (-score, image)
    order = np.lexsort(keys)
    img = image[order]
    same = img[1:] == img[:-1]
    if per_class:
        lab = label[order]
        same &= lab[1:] == lab[:-1]
    starts = np.flatnonzero(np.concatenate([[True], ~same]))
    sizes = np.diff(np.append(starts, len(order)))
    rank = np.arange(len(order)) - np.repeat(starts, sizes)
    keep = np.zeros(len(order), dtype=bool)
    keep[order[rank < cap]] = True
    return keep


# --------------------------------------------------------------------- batches


@dataclass(frozen=True)
class Batch:
    """The images and rows of one ``update()``, checked.

    Attributes:
        ids: ``[I]`` the images' ids, None where not given.
        height, width: ``[I]`` float64 the images' size (their masks'), NaN unknown.
        gt, pred: column name -> ``[N, ...]`` array; ``image`` ``[N]`` int64 is
            the row's image (its position in the batch); ``mask_*`` columns
            hold the masks (:class:`MaskRows`) where masks are scored.
        lists: the targets' per-image category lists (:data:`IMAGE_LISTS`)
            that any image of the batch gives: name -> ``(labels[M], counts[I])``.
    """

    ids: list[Key | None]
    height: np.ndarray
    width: np.ndarray
    gt: dict[str, np.ndarray]
    pred: dict[str, np.ndarray]
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = dataclass_field(default_factory=dict)


def _image_size(gt: dict[str, Any], pred: dict[str, Any], place: Place) -> tuple[float, float]:
    """The image's ``(height, width)`` from its masks (all of one size), NaN where none tell."""
    sides = [(s, c["masks"].size) for s, c in (("gt", gt), ("pred", pred)) if "masks" in c]
    ref = next((tuple(size[0].tolist()) for _, size in sides if len(size)), None)
    if ref is None:
        ref = next((c["empty_size"] for c in (gt, pred) if c.get("empty_size")), None)
    if ref is None:
        return np.nan, np.nan
    for side, size in sides:
        bad = (size != np.asarray(ref)).any(axis=1)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise Place(side, place.index, place.image).error(
                "masks",
                f"are {size[r, 0]}x{size[r, 1]} pixels, other masks of the image "
                f"{ref[0]}x{ref[1]} (height x width)",
                r,
            )
    return float(ref[0]), float(ref[1])


def _entries(value: Any, side: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise InputError(
            SOURCE,
            f"{SIDES[side]} must be a list with one dict per image, got {type(value).__name__}",
            hint="update(preds, targets): lists of dicts (or two DataFrames, one row per box)",
        )
    return value


def _join(pieces: list[np.ndarray], tail: tuple[int, ...]) -> np.ndarray:
    """The images' arrays as one column (a new array: nothing of the caller's is kept)."""
    if not pieces:
        return np.zeros((0, *tail))
    return np.concatenate(pieces)


def _with_area(gt: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Ground-truth ``area``: as given where > 0, else the mask's (masks kept) or ``w * h``."""
    given = gt.pop("given_area", None)
    if given is None:
        return gt
    xywh = gt["xywh"]
    own = gt["mask_area"] if "mask_area" in gt else xywh[:, 2] * xywh[:, 3]
    gt["area"] = np.where(np.isnan(given), own, given)
    return gt


def _image_dicts(entries: Sequence[Any], side: str) -> tuple[list[Mapping[str, Any]], list[Any]]:
    """The entries as dicts, and each one's box layout (None: the evaluator's)."""
    if set(map(type, entries)) == {dict}:
        return list(entries), [None] * len(entries)
    pairs = [as_image_dict(e, Place(side, i, None)) for i, e in enumerate(entries)]
    return [d for d, _ in pairs], [f for _, f in pairs]


def _quick_id(pred: Mapping[str, Any], gt: Mapping[str, Any], index: int) -> Key | None:
    """:func:`image_id`, without building a place for the usual ids (an int, or none)."""
    g, p = gt.get("image_id"), pred.get("image_id")
    if p is None and (g is None or type(g) is int):
        return g
    return image_id(pred, gt, Place("pred", index, None))


Read = tuple[list[Key | None], np.ndarray, dict[str, Pieces], list[Mapping[str, Any]]]


def _gathered_batch(preds: Sequence[Any], targets: Sequence[Any], reader: BatchReader) -> Read:
    """``(ids, sizes[I, 2], pieces per side)``, each field read for all images at once.

    Raises _Unusual or an InputError where an image is not as usual: the
    batch is then walked image by image (:func:`_walked_batch`), which names
    the first bad value as the image-by-image reading order meets it.
    """
    pdicts, pfmts = _image_dicts(preds, "pred")
    gdicts, gfmts = _image_dicts(targets, "gt")
    ids = [_quick_id(p, g, i) for i, (p, g) in enumerate(zip(pdicts, gdicts, strict=True))]
    pieces = {
        "gt": reader.gathered(gdicts, gfmts, "gt"),
        "pred": reader.gathered(pdicts, pfmts, "pred"),
    }
    sizes = np.full((len(ids), 2), np.nan)
    if reader.masks:
        found: dict[str, list[MaskRows]] = {"gt": [], "pred": []}
        for i, key in enumerate(ids):
            g = reader.image_masks(gdicts[i], Place("gt", i, key), pieces["gt"].counts[i])
            p = reader.image_masks(pdicts[i], Place("pred", i, key), pieces["pred"].counts[i])
            sizes[i] = _image_size(g, p, Place("pred", i, key))
            found["gt"].append(g["masks"])
            found["pred"].append(p["masks"])
        for side, rows in found.items():
            pieces[side].masks = MaskRows.concat(rows)
    return ids, sizes, pieces, gdicts


def _walked_batch(preds: Sequence[Any], targets: Sequence[Any], reader: BatchReader) -> Read:
    """:func:`_gathered_batch`'s answer, image by image: the first bad value raises, named."""
    ids: list[Key | None] = []
    sizes = np.full((len(preds), 2), np.nan)
    parts: dict[str, list[dict[str, Any]]] = {"gt": [], "pred": []}
    gdicts = []
    for i, (p, t) in enumerate(zip(preds, targets, strict=True)):
        pd_, pfmt = as_image_dict(p, Place("pred", i, None))
        gd, gfmt = as_image_dict(t, Place("gt", i, None))
        key = image_id(pd_, gd, Place("pred", i, None))
        gcols = reader.side(gd, gfmt, Place("gt", i, key))
        pcols = reader.side(pd_, pfmt, Place("pred", i, key))
        sizes[i] = _image_size(gcols, pcols, Place("pred", i, key))
        ids.append(key)
        gdicts.append(gd)
        parts["gt"].append(gcols)
        parts["pred"].append(pcols)
    return ids, sizes, {s: walked_pieces(parts[s], s, reader, ids) for s in parts}, gdicts


def read_batch(preds: Any, targets: Any, reader: BatchReader) -> Batch:
    """Check and convert one ``update(preds, targets)`` (lists of per-image dicts, or frames).

    Each field is joined over the batch's images and checked once; where an
    image is not as usual the batch is read again image by image to name it.
    """
    if is_frame(preds) or is_frame(targets):
        preds, targets = frame_images(preds, targets, reader.box_format)
    preds, targets = _entries(preds, "pred"), _entries(targets, "gt")
    if len(preds) != len(targets):
        raise InputError(
            SOURCE,
            f"preds and targets must hold one dict per image each, got {len(preds)} and "
            f"{len(targets)}",
        )
    if not len(preds):
        return Batch([], np.zeros(0), np.zeros(0), {}, {})
    try:
        ids, sizes, pieces, gdicts = _gathered_batch(preds, targets, reader)
    except (_Unusual, InputError):
        ids, sizes, pieces, gdicts = _walked_batch(preds, targets, reader)
    gt, pred = (
        reader.joined(pieces[s], BatchPlace(s, ids, pieces[s].counts)) for s in ("gt", "pred")
    )
    lists = image_lists(gdicts, ids, reader.class_names)
    return Batch(ids, sizes[:, 0].copy(), sizes[:, 1].copy(), _with_area(gt), pred, lists)


# LVIS's federated labels: per image (targets), the categories verified absent and
# those not labelled exhaustively; labels as ``labels`` are (ids, or indices into
# ``class_names``).  The state keeps them as the COCO images' lists of the same names.
IMAGE_LISTS = ("neg_category_ids", "not_exhaustive_category_ids")


def image_lists(
    dicts: list[Mapping[str, Any]], ids: list[Key | None], class_names: Sequence[str] | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The targets' per-image category lists any image gives: name -> ``(labels[M], counts[I])``.

    An image without the list has none (an empty list), as in a COCO file.
    """
    out = {}
    for key in IMAGE_LISTS:
        values = [d.get(key) for d in dicts]
        if all(v is None for v in values):
            continue
        arrs = []
        for i, v in enumerate(values):
            place = Place("gt", i, ids[i])
            arr = np.zeros(0, np.int64) if v is None else _array(v, place, key)
            arrs.append(_rows(arr, place, key, None, ()))
        counts = [len(a) for a in arrs]
        rows = BatchPlace("gt", ids, counts)
        out[key] = (labels(_join(arrs, ()), rows, class_names, key), np.array(counts, np.int64))
    return out


# ------------------------------------------------------------------ DataFrames

_FRAME_BOXES = {
    BoxFormat.XYXY: (("x1", "y1", "x2", "y2"), ("xmin", "ymin", "xmax", "ymax")),
    BoxFormat.XYWH: (("x", "y", "w", "h"), ("x", "y", "width", "height")),
    BoxFormat.CXCYWH: (("cx", "cy", "w", "h"), ("cx", "cy", "width", "height")),
}
_FRAME_FIELDS = {
    "labels": ("labels", "label", "category_id", "class_id"),
    "scores": ("scores", "score", "confidence"),
    "iscrowd": ("iscrowd",),
    "area": ("area",),
}


def is_frame(obj: Any) -> bool:
    """A pandas DataFrame, judged by its class (pandas is not imported here)."""
    return any(
        c.__name__ == "DataFrame" and c.__module__.startswith("pandas") for c in type(obj).__mro__
    )


def _frame_dicts(frame: Any, side: str, fmt: BoxFormat) -> dict[Key, dict[str, Any]]:
    """Image id -> its per-image dict, from a frame of one row per box (rows kept in order)."""
    name = SIDES[side]
    columns = {str(c).strip().lower(): c for c in frame.columns}
    if "image_id" not in columns:
        raise InputError(SOURCE, f"{name} DataFrame needs an image_id column", where=name)
    box_cols = next((b for b in _FRAME_BOXES[fmt] if all(c in columns for c in b)), None)
    if box_cols is None:
        raise InputError(
            SOURCE,
            f"{name} DataFrame needs the box columns {', '.join(_FRAME_BOXES[fmt][0])} "
            f"(box_format {fmt.value})",
            where=name,
        )
    raw = frame[columns["image_id"]].to_numpy()
    uniq, first, codes = np.unique(raw.astype(str), return_index=True, return_inverse=True)
    order = np.argsort(codes.reshape(-1), kind="stable")  # rows by image, in row order
    bounds = np.r_[0, np.cumsum(np.bincount(codes.reshape(-1), minlength=len(uniq)))]
    boxes = np.column_stack([frame[columns[c]].to_numpy() for c in box_cols])
    fields: dict[str, np.ndarray] = {}
    for key, aliases in _FRAME_FIELDS.items():
        hit = next((a for a in aliases if a in columns), None)
        if hit is not None:
            fields[key] = frame[columns[hit]].to_numpy()
    out: dict[Key, dict[str, Any]] = {}
    for j in np.argsort(first, kind="stable").tolist():  # images in order of first row
        rows = order[bounds[j] : bounds[j + 1]]
        try:
            image = normalize_id(raw[rows[0]])
        except ValueError as exc:
            raise InputError(
                SOURCE, f"{name} DataFrame image_id: {exc}", where=f"{name}.row[{rows[0]}]"
            ) from None
        out[image] = {"image_id": image, "boxes": boxes[rows]}
        out[image].update((k, v[rows]) for k, v in fields.items())
    return out


def frame_images(preds: Any, targets: Any, fmt: BoxFormat) -> tuple[list, list]:
    """Two frames (one row per box, an ``image_id`` column) as aligned lists of per-image dicts.

    The images are those either frame names (targets' first, in order of
    first appearance); an image one frame lacks has no rows there.
    """
    for obj, side in ((preds, "pred"), (targets, "gt")):
        if not is_frame(obj):
            raise InputError(
                SOURCE,
                f"{SIDES[side]} must be a DataFrame when the other is, got {type(obj).__name__}",
            )
    p, g = _frame_dicts(preds, "pred", fmt), _frame_dicts(targets, "gt", fmt)
    keys = list(dict.fromkeys([*g, *p]))

    def empty(key: Key, side: str) -> dict[str, Any]:
        base = {"image_id": key, "boxes": np.zeros((0, 4)), "labels": np.zeros(0, np.int64)}
        return {**base, "scores": np.zeros(0)} if side == "pred" else base

    return [p.get(k) or empty(k, "pred") for k in keys], [g.get(k) or empty(k, "gt") for k in keys]
