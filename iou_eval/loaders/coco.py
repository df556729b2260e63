"""COCO JSON: ground-truth datasets and detection results.

Decoded with msgspec into slotted records that skip every field the
evaluation does not read (segmentations above all), then turned into columns.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import numpy as np

from ..boxes import BoxFormat
from ..dataset import CategoryTable, Dataset, ImageTable, assemble, normalize_id, sort_key
from ..errors import InputError
from .common import LoadOptions, json_error, read_bytes

Bbox = Annotated[list[float], msgspec.Meta(min_length=4, max_length=4)]
Id = int | str


class _Image(msgspec.Struct):
    id: Id
    file_name: str | None = None
    width: float | None = None
    height: float | None = None


class _Category(msgspec.Struct):
    id: Id
    name: str | None = None


class _Annotation(msgspec.Struct):
    image_id: Id
    category_id: Id
    bbox: Bbox | None = None
    id: Id | None = None
    area: float | None = None
    iscrowd: int | bool = 0
    ignore: int | bool | None = None
    score: float | None = None


class _Document(msgspec.Struct):
    images: list[_Image] | None = None
    annotations: list[_Annotation] | None = None
    categories: list[_Category] | None = None


_DECODER = msgspec.json.Decoder(_Document | list[_Annotation])


def _int_column(values: list, path: str, what: str) -> tuple[np.ndarray | None, list]:
    """``values`` as int64 when every one is an int, else None and the normalized list."""
    if all(type(v) is int for v in values):
        arr = np.array(values, dtype=np.int64)
        return arr, values
    else:
        out: list = []
        for i, v in enumerate(values):
            try:
                out.append(normalize_id(v))
            except ValueError as exc:
                raise InputError(path, f"{what}: {exc}", where=f"[{i}]") from None
        return None, out


def _lookup(keys: list, vocab: dict) -> np.ndarray:
    """Positions of ``keys`` in ``vocab`` (dict key -> index), -1 when absent."""
    return np.fromiter((vocab.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))


def load_coco(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read a COCO ground-truth dataset or a COCO results file.

    ``role`` is ``"gt"`` or ``"pred"``.  Ground truth must be a dict with
    ``images``, ``annotations`` and ``categories``; predictions may be a
    results list or such a dict whose annotations carry a ``score``.
    Image and category ids may be integers or numeric strings.
    """
    data = read_bytes(path)
    try:
        doc = _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise json_error(path, data, exc) from None

    warnings: list[str] = []
    if isinstance(doc, list):
        if role == "gt":
            raise InputError(
                path,
                "ground truth must be a COCO dataset (an object with images, annotations, "
                "categories), found a results list",
                hint="did you swap the ground-truth and prediction files?",
            )
        anns = doc
        images_in = None
        categories_in = None
        label = "[{}]"
    else:
        if doc.annotations is None:
            raise InputError(path, "expected an 'annotations' list, found none", where="$")
        anns = doc.annotations
        images_in = doc.images
        categories_in = doc.categories
        if role == "gt" and images_in is None:
            raise InputError(path, "expected an 'images' list in the ground truth, found none")
        if role == "gt" and categories_in is None:
            raise InputError(path, "expected a 'categories' list in the ground truth, found none")
        label = "annotations[{}]"

    n = len(anns)
    for i, a in enumerate(anns):
        if a.bbox is None:
            raise InputError(
                path,
                "annotation has no 'bbox'",
                where=label.format(i),
                hint="iou-eval evaluates boxes; every annotation needs [x, y, w, h]",
            )
    boxes = np.array([a.bbox for a in anns], dtype=np.float64).reshape(n, 4)

    score = None
    if role == "pred":
        raw = [a.score for a in anns]
        missing = [i for i, s in enumerate(raw) if s is None]
        if missing:
            raise InputError(
                path,
                "prediction has no 'score'",
                where=label.format(missing[0]),
                hint="predictions need a confidence score; is this the ground-truth file?",
            )
        score = np.array(raw, dtype=np.float64)

    # Images.
    img_keys_raw = [a.image_id for a in anns]
    cat_keys_raw = [a.category_id for a in anns]
    if images_in is not None:
        ids = []
        for i, im in enumerate(images_in):
            try:
                ids.append(normalize_id(im.id))
            except ValueError as exc:
                raise InputError(path, f"image id: {exc}", where=f"images[{i}].id") from None
        seen: dict = {}
        for i, k in enumerate(ids):
            if k in seen:
                raise InputError(
                    path,
                    f"image id {k!r} appears twice (images[{seen[k]}] and images[{i}])",
                    where=f"images[{i}].id",
                )
            seen[k] = i
        images = ImageTable.build(
            ids,
            [im.file_name for im in images_in],
            [np.nan if im.width is None else im.width for im in images_in],
            [np.nan if im.height is None else im.height for im in images_in],
        )
    else:
        images = None

    _, img_keys = _int_column(img_keys_raw, path, "image_id")
    _, cat_keys = _int_column(cat_keys_raw, path, "category_id")
    if images is None:
        vocab = list(dict.fromkeys(img_keys))
        images = ImageTable.build(vocab)
    image_vocab = {k: i for i, k in enumerate(images.ids)}
    image_idx = _lookup(img_keys, image_vocab)

    # Categories.
    if categories_in is not None and (role == "gt" or categories_in):
        cids, cnames = [], []
        for i, c in enumerate(categories_in):
            try:
                cid = normalize_id(c.id)
            except ValueError as exc:
                raise InputError(path, f"category id: {exc}", where=f"categories[{i}].id") from None
            if cid in cids:
                raise InputError(
                    path, f"category id {cid!r} appears twice", where=f"categories[{i}].id"
                )
            cids.append(cid)
            cnames.append(c.name if c.name is not None else str(cid))
        # Result categories that the file's own list lacks are still kept.
        for k in dict.fromkeys(cat_keys):
            if role == "pred" and k not in cids:
                cids.append(k)
                cnames.append(str(k))
        categories = CategoryTable(tuple(cids), tuple(cnames))
    else:
        cvocab = sorted(dict.fromkeys(cat_keys), key=sort_key)
        categories = CategoryTable(tuple(cvocab), tuple(str(k) for k in cvocab))
    cat_vocab = {k: i for i, k in enumerate(categories.ids)}
    category_idx = _lookup(cat_keys, cat_vocab)

    keep = (image_idx >= 0) & (category_idx >= 0)
    if not keep.all():
        bad_img = int((image_idx < 0).sum())
        bad_cat = int(((category_idx < 0) & (image_idx >= 0)).sum())
        if bad_img:
            first = int(np.flatnonzero(image_idx < 0)[0])
            warnings.append(
                f"{path}: {bad_img} annotation(s) refer to images not in 'images' "
                f"(first: {label.format(first)} image_id {img_keys[first]!r}); ignored"
            )
        if bad_cat:
            first = int(np.flatnonzero((category_idx < 0) & (image_idx >= 0))[0])
            warnings.append(
                f"{path}: {bad_cat} annotation(s) refer to categories not in 'categories' "
                f"(first: {label.format(first)} category_id {cat_keys[first]!r}); ignored"
            )

    area = None
    is_crowd = None
    ignore = None
    ann_id = None
    if role == "gt":
        area = np.array([np.nan if a.area is None else a.area for a in anns], dtype=np.float64)
        no_area = int(np.isnan(area).sum())
        if no_area:
            warnings.append(
                f"{path}: {no_area} annotation(s) have no 'area'; using the box's w*h "
                "for the area ranges"
            )
        is_crowd = np.array([bool(a.iscrowd) for a in anns], dtype=bool)
        ignore = np.array([bool(a.ignore) for a in anns], dtype=bool)
        raw_ids = [a.id for a in anns]
        if any(v is None for v in raw_ids):
            # pycocotools cannot index annotations without ids; number them.
            ann_id = np.arange(1, n + 1, dtype=np.int64)
        else:
            col, vals = _int_column(raw_ids, path, "annotation id")
            if col is None:
                col = np.array(
                    [v if isinstance(v, int) else i + 1 for i, v in enumerate(vals)], dtype=np.int64
                )
            ann_id = col

    rows = np.flatnonzero(keep)
    ds = assemble(
        source=path,
        fmt="coco",
        images=images,
        categories=categories,
        image_idx=image_idx[rows],
        category_idx=category_idx[rows],
        boxes=boxes[rows],
        box_format=options.box_format or BoxFormat.XYWH,
        normalized=options.normalized,
        score=None if score is None else score[rows],
        area=None if area is None else area[rows],
        is_crowd=None if is_crowd is None else is_crowd[rows],
        ignore=None if ignore is None else ignore[rows],
        ann_id=None if ann_id is None else ann_id[rows],
        origin=rows.astype(np.int64),
        files=(path,),
        origin_label="" if isinstance(doc, list) else "annotations",
        warnings=warnings,
    )
    return ds
