"""In-memory inputs of the Python API: what ``evaluate()`` and ``load()`` take besides paths.

- a COCO dict (``{"images", "annotations", "categories"}``, or a results
  dict): read by the COCO loader with the same rules and errors
  (``<COCO dict>:annotations[3].bbox: ...``);
- a list of records ``{"image_id", "category_id", "bbox", "score"}``: a COCO
  results list (``<records>:[3].bbox: ...``).  As ground truth (records
  without ``score``) its images and categories are those the records name;
- a pandas DataFrame: the CSV rules and column aliases
  (:func:`~iou_eval.io.loaders.table.load_frame`; ``<DataFrame>:row[3]: ...``);
- per-image numpy arrays ``{image_id: (boxes[N, 4], category_ids[N],
  scores[N])}`` (ground truth: ``(boxes, category_ids)``), boxes in the
  layout ``box_format`` (default ``xyxy``); the class column holds the
  ground truth's category ids, as a results list does.  An image with
  empty arrays has no boxes; an image missing from the dict none either
  (for predictions: no detections).

COCO data always holds ``[x, y, w, h]``: ``box_format`` applies to
DataFrames and arrays only.  Rows keep the order given (records of a list,
rows of a DataFrame, images of the dict then entries of their arrays), so
equal scores rank as given, as pycocotools keeps file order.  Inputs are
never modified: what is kept is copied.  A malformed input raises an
:class:`~iou_eval.errors.InputError` naming the place (record index, image
id, column).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, Key, assemble, normalize_id
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import LoadOptions

COCO_DICT = "<COCO dict>"
RECORDS = "<records>"
DATAFRAME = "<DataFrame>"
ARRAYS = "<arrays>"
_COCO_KEYS = frozenset({"images", "annotations", "categories"})


def in_memory_format(obj: Any) -> str:
    """``coco`` (a dict or records), ``dataframe`` or ``arrays``; a clear error for anything else."""
    if _is_frame(obj):
        return "dataframe"
    if isinstance(obj, Mapping):
        return "coco" if _COCO_KEYS & set(map(str, obj)) else "arrays"
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return "coco"
    raise InputError(
        None,
        f"cannot read a {type(obj).__name__} as detections",
        hint="give a path, a COCO dict, a list of records {image_id, category_id, bbox, score}, "
        "a pandas DataFrame, or {image_id: (boxes[N, 4], category_ids[N], scores[N])}",
    )


def _is_frame(obj: Any) -> bool:
    # Judged by the class (no pandas import here: table.py reads the frame).
    return any(
        c.__name__ == "DataFrame" and c.__module__.startswith("pandas") for c in type(obj).__mro__
    )


def load_object(obj: Any, role: str, options: LoadOptions) -> Dataset:
    """Read an in-memory input (see the module docstring) as ground truth or predictions."""
    if isinstance(obj, Dataset):
        return obj
    kind = in_memory_format(obj)
    if kind == "dataframe":
        from iou_eval.io.loaders.table import load_frame

        return load_frame(obj, role, options, DATAFRAME)
    if kind == "arrays":
        return load_arrays(obj, role, options)
    return _load_json_like(obj, role, options)


def _json_value(v: Any) -> Any:
    """numpy scalars and arrays as JSON values (msgspec's ``enc_hook``)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot read a {type(v).__name__} as a JSON value")


def _load_json_like(obj: Any, role: str, options: LoadOptions) -> Dataset:
    """A COCO dict or a list of records through the COCO loader (its rules and errors)."""
    import msgspec

    from iou_eval.io.loaders.coco import load_coco

    name = COCO_DICT if isinstance(obj, Mapping) else RECORDS
    if name == RECORDS and role == "gt":
        obj = _records_as_dataset(obj)
    try:
        data = msgspec.json.encode(obj, enc_hook=_json_value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(name, f"not JSON-like data: {exc}") from None
    # COCO data always holds [x, y, w, h] in pixels: the layout options are for arrays.
    plain = dataclasses.replace(options, box_format=None, normalized=False)
    return load_coco(name, role, plain, data=data)


def _records_as_dataset(records: Sequence[Any]) -> dict[str, Any]:
    """Ground-truth records as a COCO dataset of the images and categories they name."""
    images: dict[Any, None] = {}
    categories: dict[Any, None] = {}
    for i, r in enumerate(records):
        if not isinstance(r, Mapping) or "image_id" not in r or "category_id" not in r:
            raise InputError(
                RECORDS, "expected a record with image_id, category_id and bbox", where=f"[{i}]"
            )
        images.setdefault(_json_key(r["image_id"]), None)
        categories.setdefault(_json_key(r["category_id"]), None)
    return {
        "images": [{"id": k} for k in images],
        "annotations": [
            {**{k: v for k, v in r.items() if k != "score"}, "id": i + 1}
            for i, r in enumerate(records)
        ],
        "categories": [{"id": k} for k in categories],
    }


def _json_key(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


# ----------------------------------------------------------------------- arrays


def _column(value: Any, image: Key, what: str, shape: tuple[int, ...]) -> np.ndarray:
    """One float64 array of one image as ``shape`` (-1: any length), copied."""
    try:
        arr = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(ARRAYS, f"{what} of image {image!r}: not numbers ({exc})") from None
    return _shaped(arr, image, what, shape)


def _shaped(arr: np.ndarray, image: Key, what: str, shape: tuple[int, ...]) -> np.ndarray:
    if arr.size == 0:
        arr = arr.reshape((0, *shape[1:]))
    if arr.ndim != len(shape) or any(
        s not in (-1, a) for s, a in zip(shape, arr.shape, strict=True)
    ):
        want = "[N, 4]" if len(shape) == 2 else "[N]"
        raise InputError(
            ARRAYS, f"{what} of image {image!r} must be {want}, got shape {list(arr.shape)}"
        )
    return arr


def _classes(value: Any, image: Key, n: int) -> np.ndarray:
    """An image's class ids ``[N]``: int64 when they are whole numbers, else text (object)."""
    arr = np.array(value, copy=True)
    arr = _shaped(arr, image, "category_ids", (n,))
    if arr.dtype.kind in "iub":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        whole = np.isfinite(arr) & (arr == np.floor(arr))
        if not whole.all():
            bad = float(arr[~whole][0])
            raise InputError(ARRAYS, f"category_ids of image {image!r}: {bad:g} is not a class id")
        return arr.astype(np.int64)
    return arr.astype(str).astype(object)


def _entry(key: Key, value: Any, pred: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(boxes[N, 4], category ids[N], scores[N] or None)`` of one image, checked."""
    parts = 3 if pred else 2
    if not isinstance(value, (tuple, list)) or len(value) != parts:
        want = "(boxes, category_ids, scores)" if pred else "(boxes, category_ids)"
        raise InputError(
            ARRAYS, f"image {key!r}: expected a tuple {want}, got {type(value).__name__}"
        )
    boxes = _column(value[0], key, "boxes", (-1, 4))
    n = len(boxes)
    cats = _classes(value[1], key, n)
    scores = _column(value[2], key, "scores", (n,)) if pred else None
    return boxes, cats, scores


def _category_keys(
    parts: list[np.ndarray], owner: np.ndarray, keys: list[Key]
) -> tuple[tuple[Key, ...], np.ndarray]:
    """The distinct category ids (numbers before text, by value) and each row's index ``[N]``."""
    if not parts:
        return (), np.zeros(0, dtype=np.int64)
    if all(p.dtype == np.int64 for p in parts):
        uniq, inverse = np.unique(np.concatenate(parts), return_inverse=True)
        return tuple(uniq.tolist()), inverse.astype(np.int64).reshape(-1)
    text = np.concatenate([p.astype(str).astype(object) for p in parts])
    uniq, inverse = np.unique(text.astype(str), return_inverse=True)
    ids: list[Key] = []
    for u in uniq.tolist():
        k = normalize_id(u) if u.strip() else None
        if k is None:
            r = int(np.flatnonzero(text == u)[0])
            raise InputError(ARRAYS, f"category_ids of image {keys[owner[r]]!r}: an empty class id")
        ids.append(k)
    order = sorted(range(len(ids)), key=lambda i: (isinstance(ids[i], str), ids[i]))
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    vocab = tuple(ids[i] for i in order)
    if len(set(vocab)) != len(vocab):
        raise InputError(ARRAYS, "category_ids spell one class two ways (e.g. 1 and '1')")
    return vocab, rank[inverse.reshape(-1)].astype(np.int64)


def load_arrays(arrays: Mapping[Any, Any], role: str, options: LoadOptions) -> Dataset:
    """Per-image arrays ``{image_id: (boxes[N, 4], category_ids[N], scores[N])}`` as a Dataset.

    ``options.box_format`` is the boxes' layout (default ``xyxy``);
    ``options.normalized``: fractions of the image size (scaled by the ground
    truth's sizes at the alignment).
    """
    pred = role == "pred"
    keys: list[Key] = []
    seen: dict[Key, Any] = {}
    parts = []
    for key, value in arrays.items():
        try:
            k = normalize_id(_json_key(key))
        except ValueError as exc:
            raise InputError(ARRAYS, f"image id {key!r}: {exc}") from None
        if k in seen:
            raise InputError(ARRAYS, f"image id {key!r} is also given as {seen[k]!r}")
        seen[k] = key
        keys.append(k)
        parts.append(_entry(key, value, pred))
    counts = np.array([len(p[0]) for p in parts], dtype=np.int64)
    owner = np.repeat(np.arange(len(parts)), counts)
    boxes = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 4))
    vocab, category_idx = _category_keys([p[1] for p in parts], owner, keys)
    origin = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return assemble(
        source=ARRAYS,
        fmt="arrays",
        images=ImageTable.build([seen[k] if isinstance(seen[k], str) else k for k in keys]),
        categories=CategoryTable(vocab, tuple(str(k) for k in vocab)),
        image_idx=owner.astype(np.int64),
        category_idx=category_idx,
        boxes=boxes.reshape(-1, 4),
        box_format=options.box_format or BoxFormat.XYXY,
        normalized=options.normalized,
        score=np.concatenate([p[2] for p in parts])
        if pred and parts
        else (np.zeros(0) if pred else None),
        origin=origin,
        origin_file=owner.astype(np.int32),
        files=[f"{ARRAYS}[{seen[k]!r}]" for k in keys] or [ARRAYS],
        origin_label="row",
    )
