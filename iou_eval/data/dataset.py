"""The columnar tables every loader produces and every later stage reads.

A :class:`Dataset` holds equal-length numpy columns, one row per box.  User
identifiers (image ids, file names, category ids and names) live in the
:class:`ImageTable` and :class:`CategoryTable` vocabularies; inside the core
everything is a dense integer ``_idx`` into them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat, box_sizes, to_xyxy
from iou_eval.data.ordering import narrow_index
from iou_eval.data.traits import FormatTraits, traits_of
from iou_eval.errors import InputError

Key = int | str


def normalize_id(value: Any) -> Key:
    """An image or category id as iou-eval compares it.

    ``2299``, ``"2299"`` and ``2299.0`` are the same image: numeric strings
    and integral floats become ``int``; any other string stays a string.
    Raises ``ValueError`` for anything else (lists, None, booleans, NaN).
    """
    # Letters and digits, not all digits (a hex image id): no space to strip,
    # no sign, not a number; the text as it is, without the checks below.
    if type(value) is str and value.isalnum() and not value.isdigit():
        return value
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected an integer or a string, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if math.isfinite(value) and float(value).is_integer():
            return int(value)
        raise ValueError(f"expected an integer id, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        # ASCII digits only: '1²' and '١٠' pass str.isdigit() but are names, not
        # numbers; beyond 4,000 digits int() refuses (Python's own limit): a name too.
        numeric = text.isdigit() or (text[:1] in ("+", "-") and text[1:].isdigit())
        if numeric and text.isascii() and len(text) <= 4000:
            return int(text)
        return value
    raise ValueError(f"expected an integer or a string, got {type(value).__name__}")


def integer_ids(ids: Sequence[Any]) -> np.ndarray | None:
    """``[N]`` int64 of ``ids`` when every one is a Python ``int`` within 64 bits, else None.

    Such ids are what :func:`normalize_id` returns them as, so a caller may
    compare them as one column; anything else (strings, floats, booleans,
    numpy scalars, an id beyond 64 bits, no ids at all) is for the general
    path, one id at a time.
    """
    if set(map(type, ids)) != {int}:
        return None
    try:
        return np.array(ids, dtype=np.int64)
    except OverflowError:
        return None


def sort_key(key: Key) -> tuple[int, int | str]:
    """Order ids as pycocotools does (numerically), strings after integers."""
    return (0, key) if isinstance(key, int) else (1, key)


@dataclass(frozen=True)
class ImageTable:
    """The images of one file: ``I`` rows.

    Attributes:
        ids: user image ids (int or str), unique.
        file_names: file name per image, or None.
        width, height: ``[I]`` float64 pixels, NaN where unknown.
        negative, not_exhaustive: an LVIS ground truth's per-image
            ``neg_category_ids`` and ``not_exhaustive_category_ids`` (category
            ids as the file gives them, normalized), ``[I]`` tuples; None when
            the file has no such lists.
    """

    ids: tuple[Key, ...]
    file_names: tuple[str | None, ...]
    width: np.ndarray
    height: np.ndarray
    negative: tuple[tuple[Key, ...], ...] | None = None
    not_exhaustive: tuple[tuple[Key, ...], ...] | None = None

    @property
    def federated(self) -> bool:
        """Whether the images carry LVIS's per-image category lists."""
        return self.negative is not None or self.not_exhaustive is not None

    def __len__(self) -> int:
        return len(self.ids)

    @staticmethod
    def build(
        ids: Sequence[Key],
        file_names: Sequence[str | None] | None = None,
        width: Sequence[float] | np.ndarray | None = None,
        height: Sequence[float] | np.ndarray | None = None,
    ) -> ImageTable:
        n = len(ids)
        return ImageTable(
            ids=tuple(ids),
            file_names=tuple(file_names) if file_names is not None else (None,) * n,
            width=np.asarray(width if width is not None else np.full(n, np.nan), dtype=np.float64),
            height=np.asarray(
                height if height is not None else np.full(n, np.nan), dtype=np.float64
            ),
        )

    def select(self, keep: np.ndarray) -> ImageTable:
        """The images at integer positions ``keep``."""

        rows = np.asarray(keep).tolist()  # Python ints: one C-level pass per column below

        def pick(col: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(map(col.__getitem__, rows))

        def lists(col: tuple[tuple[Key, ...], ...] | None) -> tuple[tuple[Key, ...], ...] | None:
            return None if col is None else pick(col)

        return ImageTable(
            ids=pick(self.ids),
            file_names=pick(self.file_names),
            width=self.width[keep],
            height=self.height[keep],
            negative=lists(self.negative),
            not_exhaustive=lists(self.not_exhaustive),
        )


@dataclass(frozen=True)
class CategoryTable:
    """The categories of one file: ``K`` rows.

    Attributes:
        ids: user category ids (int or str); for files that name classes only,
            the id is the name.
        names: display names.
        frequency: an LVIS ground truth's ``frequency`` of each category
            (``"r"``, ``"c"``, ``"f"``; None where a category has none), or
            None when no category has one.
    """

    ids: tuple[Key, ...]
    names: tuple[str, ...]
    frequency: tuple[str | None, ...] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def select(self, keep: Sequence[int] | np.ndarray) -> CategoryTable:
        """The categories at integer positions ``keep``, in that order."""
        pos = [int(i) for i in keep]
        freq = self.frequency
        return CategoryTable(
            tuple(self.ids[i] for i in pos),
            tuple(self.names[i] for i in pos),
            None if freq is None else tuple(freq[i] for i in pos),
        )

    def extended(self, ids: Sequence[Key], names: Sequence[str]) -> CategoryTable:
        """These categories, then ``ids`` / ``names`` appended (without a frequency)."""
        freq = self.frequency
        return CategoryTable(
            self.ids + tuple(ids),
            self.names + tuple(names),
            None if freq is None else freq + (None,) * len(ids),
        )


@dataclass(frozen=True)
class Dataset:
    """Boxes of one file (ground truth or predictions) as ``N`` parallel columns.

    Attributes:
        source: the path the user gave.
        format: the detected or requested format name (``coco``, ``voc-xml``...).
        images, categories: the vocabularies the ``_idx`` columns point into.
        image_idx, category_idx: ``[N]`` int64.
        xyxy: ``[N, 4]`` float64 absolute pixels.
        bbox_area: ``[N]`` float64 ``w * h`` of the box as given.
        area: ``[N]`` float64 the annotation's ``area`` field (COCO area
            ranges use it); ``bbox_area`` where the file has none.
        is_crowd, ignore: ``[N]`` bool (``ignore`` holds VOC ``difficult``).
        ann_id: ``[N]`` int64 annotation ids (ground truth), else row numbers + 1.
        score: ``[N]`` float64 for predictions, None for ground truth.
        origin: ``[N]`` int64 where each row came from in its file (a line
            number, an element index): cited by later errors.
        origin_file: ``[N]`` int32 index into ``files``.
        files: the files the rows were read from.
        origin_label: what ``origin`` counts: ``"line"``, ``"annotations"`` (a
            JSON list index) or ``"object"`` (an XML element index).
        warnings: things the loader noticed and the user should hear about.
    """

    source: str
    format: str
    images: ImageTable
    categories: CategoryTable
    image_idx: np.ndarray
    category_idx: np.ndarray
    xyxy: np.ndarray
    bbox_area: np.ndarray
    area: np.ndarray
    is_crowd: np.ndarray
    ignore: np.ndarray
    ann_id: np.ndarray
    score: np.ndarray | None
    origin: np.ndarray
    origin_file: np.ndarray
    files: tuple[str, ...]
    origin_label: str = "line"
    warnings: tuple[str, ...] = field(default=())
    fraction_boxes: np.ndarray | None = None
    fraction_format: BoxFormat | None = None
    masks: Any = None
    # Keypoints (iou_eval.geometry.keypoints: a KeypointColumn, or keypoints
    # waiting for their images' sizes); None: the file gave none or none were asked for.
    keypoints: Any = None
    # The layout the file's box numbers were read in (plausibility checks ask
    # whether another layout fits the images better); None: not recorded.
    box_format: BoxFormat | None = None
    # Oriented boxes (:class:`~iou_eval.data.oriented.OrientedBoxes`): their
    # corners, whose enclosing boxes ``xyxy`` holds; None: axis-aligned boxes.
    oriented: Any = None

    @property
    def traits(self) -> FormatTraits:
        """What its format says of it (:mod:`iou_eval.data.traits`)."""
        return traits_of(self.format)

    @property
    def fractions(self) -> bool:
        """The boxes are fractions of their image's size, waiting for the sizes to scale them."""
        return self.fraction_boxes is not None

    def __post_init__(self) -> None:
        n = len(self.image_idx)
        # Index columns are int32 where their values fit (ordering.narrow_index),
        # else int64: at ten million rows each int64 column is 80 MB.
        index = (np.int32, np.int64)
        expect: dict[str, tuple[tuple[type, ...], tuple[int, ...]]] = {
            "image_idx": (index, (n,)),
            "category_idx": (index, (n,)),
            "xyxy": ((np.float64,), (n, 4)),
            "bbox_area": ((np.float64,), (n,)),
            "area": ((np.float64,), (n,)),
            "is_crowd": ((np.bool_,), (n,)),
            "ignore": ((np.bool_,), (n,)),
            "ann_id": (index, (n,)),
            "origin": (index, (n,)),
            "origin_file": ((np.int32,), (n,)),
        }
        if self.score is not None:
            expect["score"] = ((np.float64,), (n,))
        for name, (dtypes, shape) in expect.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.dtype not in dtypes or arr.shape != shape:
                found = (
                    f"{arr.dtype}{arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
                )
                wanted = " or ".join(str(np.dtype(d)) for d in dtypes)
                raise ValueError(f"Dataset.{name}: expected {wanted}{shape}, found {found}")

    def __len__(self) -> int:
        return len(self.image_idx)

    @property
    def is_prediction(self) -> bool:
        return self.score is not None

    @property
    def scores(self) -> np.ndarray:
        """``[N]`` scores of a prediction dataset (ground truth has none)."""
        if self.score is None:
            raise ValueError(f"{self.source}: ground truth has no scores")
        return self.score

    def where(self, row: int) -> tuple[str, str]:
        """``(file, place)`` of row ``row`` for error messages."""
        f = self.files[int(self.origin_file[row])] if self.files else self.source
        o = int(self.origin[row])
        if self.origin_label == "line":
            return f, str(o)
        return f, f"{self.origin_label}[{o}]"

    def take(self, rows: np.ndarray) -> Dataset:
        """The rows selected by an integer or boolean index (vocabularies kept)."""
        return self._take(rows, lambda column: column[rows], share_area=False)

    def take_scored(self, rows: np.ndarray) -> Dataset:
        """The rows selected (an integer index), with only the columns a scoring reads.

        Geometry (boxes, masks, keypoints, oriented boxes), image, category,
        score and area are taken as :meth:`take` takes them; ``ann_id``,
        ``is_crowd``, ``ignore`` and the origins, which a scoring never
        reads of predictions, are zeros that hold no memory; an ``area`` that
        is the boxes' own (``area is bbox_area``) stays one column.  For a
        subset that is scored, then reported as rows of the whole dataset.
        """
        n = len(rows)
        return self._take(
            rows, lambda column: np.broadcast_to(np.zeros(1, column.dtype), (n,)), share_area=True
        )

    def _take(
        self, rows: np.ndarray, other: Callable[[np.ndarray], np.ndarray], share_area: bool
    ) -> Dataset:
        """The rows selected; the columns no scoring reads by ``other``."""
        bbox_area = self.bbox_area[rows]
        shared = share_area and self.area is self.bbox_area
        return replace(
            self,
            image_idx=self.image_idx[rows],
            category_idx=self.category_idx[rows],
            xyxy=np.take(self.xyxy, rows, axis=0),  # 4x faster than xyxy[rows]
            bbox_area=bbox_area,
            area=bbox_area if shared else self.area[rows],
            is_crowd=other(self.is_crowd),
            ignore=other(self.ignore),
            ann_id=other(self.ann_id),
            score=None if self.score is None else self.score[rows],
            origin=other(self.origin),
            origin_file=other(self.origin_file),
            masks=None if self.masks is None else self.masks.take(rows),
            oriented=None if self.oriented is None else self.oriented.take(rows),
            keypoints=None if self.keypoints is None else self.keypoints.take(rows),
            fraction_boxes=(
                None if self.fraction_boxes is None else np.take(self.fraction_boxes, rows, axis=0)
            ),
        )

    def scaled(self, width: np.ndarray, height: np.ndarray) -> Dataset:
        """Fractional boxes (``fractions``) scaled to pixels by ``width[I]``, ``height[I]``.

        The numbers as the file gave them are scaled, then converted, as a
        file with known sizes is read.  Areas that were the boxes' own are
        recomputed; an area the file gave scales with its image.
        """
        if self.fraction_boxes is None or self.fraction_format is None:
            return self
        image_wh = np.stack([width[self.image_idx], height[self.image_idx]], axis=1)
        xyxy, bbox_area = to_xyxy(self.fraction_boxes, self.fraction_format, image_wh)
        if self.area is self.bbox_area:
            area = bbox_area
        else:
            area = self.area * image_wh[:, 0] * image_wh[:, 1]
        images = replace(self.images, width=width, height=height)
        oriented = None if self.oriented is None else self.oriented.scaled(image_wh)
        return replace(
            self, images=images, xyxy=xyxy, bbox_area=bbox_area, area=area, fraction_boxes=None,
            fraction_format=None, oriented=oriented,
        )  # fmt: skip


@dataclass(frozen=True)
class _Locator:
    """Builds an :class:`InputError` that cites a row's file and place."""

    files: tuple[str, ...]
    origin: np.ndarray
    origin_file: np.ndarray
    origin_label: str

    def __call__(self, row: int, message: str, hint: str | None = None) -> InputError:
        f = self.files[int(self.origin_file[row])]
        o = int(self.origin[row])
        place = str(o) if self.origin_label == "line" else f"{self.origin_label}[{o}]"
        return InputError(f, message, where=place, hint=hint)


def _check_boxes(boxes: np.ndarray, box_format: BoxFormat, fail: _Locator) -> None:
    """Four finite numbers with non-negative extents; the first bad row is cited."""
    # Whole-array checks first (cheap); rows are located only on failure.
    if not np.isfinite(boxes).all():
        r = int(np.flatnonzero(~np.isfinite(boxes).all(axis=1))[0])
        raise fail(r, f"box numbers must be finite, got {boxes[r].tolist()}")
    # Where the extents are numbers of the file, none negative among all the numbers
    # (one pass; finite here, so no NaN hides one) is the usual case, settled at once.
    stated = box_format is not BoxFormat.XYXY
    if not stated:
        # x2 - x1 < 0 exactly where x2 < x1 (finite numbers): compared, no [N, 2] of sizes.
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        negative = bool((b[:, 2] < b[:, 0]).any() or (b[:, 3] < b[:, 1]).any())
    else:
        negative = bool(len(boxes) and boxes.min() < 0)
    if negative and ((sizes := box_sizes(boxes, box_format)) < 0).any():
        r = int(np.flatnonzero((sizes < 0).any(axis=1))[0])
        what = "x2 < x1 or y2 < y1" if box_format is BoxFormat.XYXY else "negative width or height"
        raise fail(
            r,
            f"box has {what}: {boxes[r].tolist()} read as {box_format.value}",
            hint="check --box-format" if box_format is not BoxFormat.XYWH else None,
        )


def _area_column(area: np.ndarray | None, bbox_area: np.ndarray, fail: _Locator) -> np.ndarray:
    """The file's areas ``[N]``, the box's ``w * h`` where it gives none."""
    if area is None:
        return bbox_area  # one array for both: neither is ever written
    area_col = np.asarray(area, dtype=np.float64).copy()
    missing = np.isnan(area_col)
    area_col[missing] = bbox_area[missing]
    bad = ~np.isfinite(area_col) | (area_col < 0)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise fail(r, f"area must be a finite non-negative number, got {float(area_col[r])}")
    return area_col


def _origins(
    n: int, origin: np.ndarray | None, origin_file: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``[N]`` each row's place in its file (default its row number) and its file's index."""
    place = narrow_index(
        np.arange(n, dtype=np.int64) if origin is None else np.asarray(origin, dtype=np.int64)
    )
    file = np.zeros(n, dtype=np.int32) if origin_file is None else origin_file.astype(np.int32)
    return place, file


def _scale_of(
    boxes: np.ndarray, normalized: bool, images: ImageTable, image_idx: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(image_wh[N, 2], None)`` to scale normalized boxes by, or ``(None, boxes)``
    when some size is unknown: the boxes stay fractions for the alignment."""
    if not normalized:
        return None, None
    if len(images) and (images.width == 1).all() and (images.height == 1).all():
        return None, None  # x * 1.0 is x: fractions of 1 x 1 images are their own pixels
    w = images.width[image_idx]
    h = images.height[image_idx]
    if (np.isfinite(w) & np.isfinite(h)).all():
        return np.stack([w, h], axis=1), None
    return None, boxes


def _score_column(score: np.ndarray | None, fail: _Locator) -> np.ndarray | None:
    """``[N]`` float64 scores, each finite, or None."""
    if score is None:
        return None
    score = np.asarray(score, dtype=np.float64)
    if not np.isfinite(score).all():
        r = int(np.flatnonzero(~np.isfinite(score))[0])
        raise fail(r, f"score must be a finite number, got {float(score[r])}")
    return score


def assemble(
    *,
    source: str,
    fmt: str,
    images: ImageTable,
    categories: CategoryTable,
    image_idx: np.ndarray,
    category_idx: np.ndarray,
    boxes: np.ndarray,
    box_format: BoxFormat,
    normalized: bool = False,
    score: np.ndarray | None = None,
    area: np.ndarray | None = None,
    is_crowd: np.ndarray | None = None,
    ignore: np.ndarray | None = None,
    ann_id: np.ndarray | None = None,
    origin: np.ndarray | None = None,
    origin_file: np.ndarray | None = None,
    files: Sequence[str] = (),
    origin_label: str = "line",
    warnings: Sequence[str] = (),
) -> Dataset:
    """Validate raw columns and build a :class:`Dataset`.

    Every loader ends here, so the checks live in one place: boxes must be
    four finite numbers with non-negative width and height, scores finite,
    areas finite.  Errors cite the row's file and place.

    Args:
        boxes: ``[N, 4]`` float64 in ``box_format``; normalized boxes are
            scaled by the image's width and height when the file gives every
            size, else kept as fractions (``Dataset.fractions``) for the
            alignment to scale by the ground truth's sizes.
        area: ``[N]`` the file's area field, NaN where absent (then ``w * h``).
        others: ``[N]`` columns as in :class:`Dataset`; None means the default
            (False, row number + 1, row number).
    """
    n = len(image_idx)
    boxes = np.asarray(boxes, dtype=np.float64).reshape(n, 4)
    origin, origin_file = _origins(n, origin, origin_file)
    files = tuple(files) or (source,)
    fail = _Locator(files, origin, origin_file, origin_label)
    _check_boxes(boxes, box_format, fail)
    image_wh, fractions = _scale_of(boxes, normalized, images, image_idx)
    xyxy, bbox_area = to_xyxy(boxes, box_format, image_wh)
    score = _score_column(score, fail)
    area_col = _area_column(area, bbox_area, fail)

    def flags(col: np.ndarray | None) -> np.ndarray:
        return np.zeros(n, dtype=bool) if col is None else np.asarray(col, dtype=bool)

    return Dataset(
        source=source,
        format=fmt,
        images=images,
        categories=categories,
        image_idx=narrow_index(np.asarray(image_idx, dtype=np.int64)),
        category_idx=narrow_index(np.asarray(category_idx, dtype=np.int64)),
        xyxy=xyxy,
        bbox_area=bbox_area,
        area=area_col,
        is_crowd=flags(is_crowd),
        ignore=flags(ignore),
        ann_id=(
            narrow_index(np.arange(1, n + 1, dtype=np.int64))
            if ann_id is None
            else np.asarray(ann_id, dtype=np.int64)
        ),
        score=score,
        origin=origin,
        origin_file=origin_file,
        files=files,
        origin_label=origin_label,
        warnings=tuple(warnings),
        fraction_boxes=fractions,
        fraction_format=None if fractions is None else box_format,
        box_format=box_format,
    )
