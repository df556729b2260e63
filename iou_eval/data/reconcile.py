"""Reconcile image and category identities between ground truth and predictions.

Images are matched by id, else by file name, else by file stem; categories
by id, else by name.  Ids join by value ("2299" is 2299).  The ground
truth's vocabularies are put in canonical order (a COCO file's ids sorted as
pycocotools sorts them, see :func:`id_order`) and the predictions
re-indexed into them.  Prediction-only categories are appended after the ground
truth's ``K`` categories; predictions on unknown images are set aside.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from iou_eval.data.dataset import (
    CategoryTable,
    Dataset,
    ImageTable,
    Key,
    integer_ids,
    normalize_id,
    sort_key,
)
from iou_eval.data.doubts import Doubt, declare_hint
from iou_eval.data.ordering import distinct, narrow_index
from iou_eval.errors import InputError
from iou_eval.escape import quoted


def _norm(key: Key) -> Key:
    try:
        return normalize_id(key)
    except ValueError:
        return key


def _base(name: str) -> str:
    """``os.path.basename``; a name without a separator is its own."""
    if os.sep == "/" and os.altsep is None and "/" not in name:
        return name
    return os.path.basename(name)


def _stem(name: str) -> str:
    """The file name without its folder and its extension."""
    base = _base(name)
    return os.path.splitext(base)[0] if "." in base else base


class ImageMatcher:
    """Find a ground-truth image for a key: by id, then file name, then file stem."""

    def __init__(self, images: ImageTable) -> None:
        self.images = images
        self.by_id = {_norm(k): i for i, k in enumerate(images.ids)}
        # Keys that named a stem two images share: key -> those two images.
        self.ambiguous: dict[Key, tuple[int, int]] = {}

    @cached_property
    def _names(self) -> tuple[dict[str, int], dict[str, int], dict[str, tuple[int, int]]]:
        # Built on first need: predictions that name images by id never need them.
        by_name: dict[str, int] = {}
        stems: dict[str, int] = {}
        clashes: dict[str, tuple[int, int]] = {}
        for i, name in enumerate(self.images.file_names):
            for nm in filter(None, (name, str(self.images.ids[i]))):
                by_name.setdefault(_base(nm), i)
                s = _stem(nm)
                first = stems.setdefault(s, i)
                if first != i:
                    clashes.setdefault(s, (first, i))
        unique = {s: i for s, i in stems.items() if s not in clashes}
        return by_name, unique, clashes

    @property
    def by_name(self) -> dict[str, int]:
        return self._names[0]

    @property
    def by_stem(self) -> dict[str, int]:
        return self._names[1]

    def find(
        self, key: Key, file_name: str | None = None, key_is_name: bool = True
    ) -> tuple[int, str]:
        """``(index, how)``; index -1 when nothing matches.

        A file name the prediction file gives for its image (or its stem) wins
        over its id: a COCO predictions dict numbers its own images, and a
        per-image text file "00001.txt" means the picture "00001.jpg", not
        whatever image has id 1.  ``key_is_name=False``: the key is an id
        (a COCO ``image_id``), compared with file names only when it is text
        that no image has as id (Ultralytics writes the file stem there).
        A stem two images share joins neither (:attr:`ambiguous` keeps it).
        """
        if file_name:
            j = self.by_name.get(os.path.basename(file_name))
            if j is None:
                j = self.by_stem.get(_stem(file_name))
            if j is not None:
                return j, "file name"
        j = self.by_id.get(_norm(key))
        if j is not None:
            return j, "id"
        if not key_is_name and not isinstance(_norm(key), str):
            return -1, ""
        names = [n for n in (file_name, str(key)) if n] if key_is_name else [str(key)]
        for name in names:
            j = self.by_name.get(os.path.basename(name))
            if j is not None:
                return j, "file name"
        for name in names:
            j = self.by_stem.get(_stem(name))
            if j is not None:
                return j, "file stem"
        for name in names:
            pair = self._names[2].get(_stem(name))
            if pair is not None:
                self.ambiguous[key] = pair
                break
        return -1, ""


@dataclass(frozen=True)
class VerifiedLabels:
    """Image-level labels verified by people (Open Images), in an alignment's vocabularies.

    An image is scored on a class only where the class is verified there
    (a positive or a negative label) or boxed there.

    Attributes:
        image_idx, category_idx: ``[L]`` int64.
        positive: ``[L]`` bool (``Confidence`` 1; 0 is a negative label).
        class_list: category ids in the class list's order (the class
            descriptions, the label map the challenge is scored with);
            empty when none was given.
        source: the labels file (None: none was read).
    """

    image_idx: np.ndarray
    category_idx: np.ndarray
    positive: np.ndarray
    class_list: tuple[Key, ...] = ()
    source: str | None = None

    def __len__(self) -> int:
        return len(self.image_idx)

    def take(self, keep: np.ndarray) -> VerifiedLabels:
        """The labels at ``keep`` (a boolean or integer index)."""
        return replace(
            self,
            image_idx=self.image_idx[keep],
            category_idx=self.category_idx[keep],
            positive=self.positive[keep],
        )


@dataclass(frozen=True)
class Alignment:
    """Ground truth and predictions in one vocabulary.

    Attributes:
        gt, pred: datasets sharing ``images`` and ``categories``.
        n_categories: ``K``, the ground truth's categories (the first ``K``).
        image_match, category_match: how identities were matched, e.g. ``"id"``.
        unknown_image_rows: prediction rows whose image is not in the ground truth.
        unknown_image_keys: a few of those images' ids, for the report.
        warnings: messages for the user.
        class_order: ``[K]`` the ground truth's categories in its own order (the
            class list: ``--names``, the file's category list, or first seen),
            as positions in ``gt.categories``; empty: that order itself.
        image_rank: ``[I]`` each image's position in the ground truth's own
            order (a COCO file's ``images`` list), which :func:`canonical`
            replaced by id order; tools that visit images in file order
            (tidecv) break ties by it.  None: id order.
        verified: Open Images' verified image-level labels, when read.
    """

    gt: Dataset
    pred: Dataset
    n_categories: int
    image_match: str
    category_match: str
    unknown_image_rows: int
    unknown_image_keys: tuple[Key, ...]
    warnings: tuple[str, ...] = field(default=())
    class_order: tuple[int, ...] = field(default=())
    image_rank: np.ndarray | None = None
    verified: VerifiedLabels | None = None

    @property
    def pred_only_categories(self) -> list[int]:
        return list(range(self.n_categories, len(self.gt.categories)))

    def unpredicted_images(self) -> tuple[int, int]:
        """``(N, M)``: of the ``M`` images that hold ground-truth objects (crowd regions
        aside), the ``N`` on which no prediction lies.

        Images without objects are left out: a detector rightly predicts
        nothing there.
        """
        n_img = len(self.gt.images)
        real = ~np.asarray(self.gt.is_crowd, dtype=bool)
        holds = np.bincount(self.gt.image_idx[real], minlength=n_img) > 0
        predicted = np.bincount(self.pred.image_idx, minlength=n_img) > 0
        return int((holds & ~predicted).sum()), int(holds.sum())


def unpredicted_text(n: int, m: int) -> str:
    """How reports say :meth:`Alignment.unpredicted_images`."""
    return f"{n} of {m} ground-truth images with objects have no predictions"


def value_order(ids: Sequence[Key]) -> list[int]:
    """Positions of ``ids`` ordered by value: numbers (numeric strings too), then text."""
    keys = [_norm(k) for k in ids]
    if all(type(k) is str for k in keys):  # all text: ordered as text
        return sorted(range(len(keys)), key=keys.__getitem__)
    ranked = [sort_key(k) for k in keys]
    return sorted(range(len(keys)), key=ranked.__getitem__)


def id_order(ids: Sequence[Key]) -> list[int]:
    """Positions of ``ids[N]`` in pycocotools' order: ``sorted()`` of the ids as given.

    pycocotools sorts ``imgIds`` and ``catIds`` as the file spells them:
    integers numerically, strings as text ("10" before "9").  That order
    decides how tied scores rank (per-image results are concatenated in it
    before the stable score sort).  A mix of integers and strings makes
    pycocotools' ``sorted`` raise; it is ordered by value instead.
    """
    kinds = {type(k) for k in ids}
    if kinds == {int} or kinds == {str}:
        return sorted(range(len(ids)), key=ids.__getitem__)
    return value_order(ids)


def canonical(gt: Dataset) -> Dataset:
    """The ground truth with images and categories sorted by id.

    A COCO file's ids in pycocotools' order (:func:`id_order`); other
    formats' keys (file stems, class names) by value.
    """
    order = id_order if gt.traits.coco_ids else value_order
    img_order = order(gt.images.ids)
    cat_order = order(gt.categories.ids)
    img_new = np.empty(len(img_order), dtype=np.int64)
    img_new[img_order] = np.arange(len(img_order))
    cat_new = np.empty(len(cat_order), dtype=np.int64)
    cat_new[cat_order] = np.arange(len(cat_order))
    cats = gt.categories.select(cat_order)
    return replace(
        gt,
        images=gt.images.select(np.asarray(img_order, dtype=np.int64)),
        categories=cats,
        image_idx=narrow_index(img_new[gt.image_idx]),
        category_idx=narrow_index(cat_new[gt.category_idx]),
    )


def _how(counts: dict[str, int]) -> str:
    used = [k for k, v in counts.items() if v]
    return " + ".join(used) if used else "none"


def _respelled_warning(
    source: str, pred: Dataset, cats: list[int], cat_map: np.ndarray, gt_cats: CategoryTable
) -> list[str]:
    """Predictions whose category id equals a ground-truth id in value only ("1" for 1)."""
    per_cat = np.bincount(pred.category_idx, minlength=len(pred.categories))
    n = int(per_cat[cats].sum())
    if not n:
        return []
    j = next(c for c in cats if per_cat[c])
    return [
        f"{source}: {n} prediction(s) give a category id spelled otherwise than the ground "
        f"truth spells it (e.g. category_id {quoted(pred.categories.ids[j])} for "
        f"{quoted(gt_cats.ids[cat_map[j]])}); joined by value, but pycocotools compares ids exactly "
        "and would leave them out"
    ]


def image_map(
    gt: ImageTable,
    pred: ImageTable,
    key_is_name: bool = True,
    ambiguous: dict[Key, tuple[int, int]] | None = None,
) -> tuple[np.ndarray, dict[str, int]]:
    """``[I_pred]`` position of each prediction image among ``gt`` (-1: none), and how many
    were joined each way (id, file name, file stem).

    ``key_is_name``: a prediction image's id may also be its file name (a
    COCO ``image_id`` only when it is text no image has as id).
    ``ambiguous``: filled with the prediction images whose name is a stem
    two ground-truth images share (key -> those two images).
    """
    img_map = np.full(len(pred), -1, dtype=np.int64)
    img_how = {"id": 0, "file name": 0, "file stem": 0}
    rest: Sequence[int] = range(len(pred))
    by_id = _integer_join(gt, pred)
    if by_id is not None:
        joined = by_id >= 0
        img_map[joined] = by_id[joined]
        img_how["id"] = int(joined.sum())
        rest = np.flatnonzero(~joined).tolist()
    if not rest:
        return img_map, img_how
    matcher = ImageMatcher(gt)
    known, names = matcher.by_id, pred.file_names
    for j in rest:
        # An image without a file name found by its id (find's first rule then), at once.
        i = None if names[j] else known.get(_norm(pred.ids[j]))
        if i is not None:
            img_map[j] = i
            img_how["id"] += 1
            continue
        img_map[j], how = matcher.find(pred.ids[j], names[j], key_is_name)
        if how:
            img_how[how] += 1
    if ambiguous is not None:
        ambiguous.update(matcher.ambiguous)
    return img_map, img_how


def _integer_join(gt: ImageTable, pred: ImageTable) -> np.ndarray | None:
    """``[I_pred]`` position among ``gt`` of each prediction image its id finds (-1: none),
    as whole columns; None unless every id of both is an integer, each ground-truth id
    once, and no prediction image gives a file name (which would win over its id).

    The images it leaves at -1 go through :meth:`ImageMatcher.find`'s other rules.
    """
    if any(pred.file_names):
        return None
    gt_ids, pred_ids = integer_ids(gt.ids), integer_ids(pred.ids)
    if gt_ids is None or pred_ids is None:
        return None
    order = np.argsort(gt_ids, kind="stable")
    ranked = gt_ids[order]
    if len(ranked) > 1 and (ranked[1:] == ranked[:-1]).any():
        return None  # the same id twice: the matcher's table says which one joins
    at = np.minimum(np.searchsorted(ranked, pred_ids), len(ranked) - 1)
    return np.where(ranked[at] == pred_ids, order[at], -1)


def _image_label(images: ImageTable, i: int) -> str:
    return images.file_names[i] or str(images.ids[i])


def image_join_warnings(
    source: str,
    gt_images: ImageTable,
    is_coco: bool,
    img_how: dict[str, int],
    ambiguous: dict[Key, tuple[int, int]],
) -> list[str]:
    """A note when a COCO ``image_id`` joined by file name, a doubt per shared stem."""
    out: list[str] = []
    by_name = img_how["file name"] + img_how["file stem"]
    if is_coco and by_name:
        out.append(
            f"{source}: {by_name} image_id(s) that no ground-truth image has as id joined to "
            "the image of that file name or stem (Ultralytics' val(save_json=True) writes the "
            "file stem as image_id)"
        )
    for key, (a, b) in list(ambiguous.items())[:5]:
        out.append(Doubt(
            f"{source}: image {quoted(key)} could be either of two ground-truth images with "
            f"that file stem ({quoted(_image_label(gt_images, a))}, "
            f"{quoted(_image_label(gt_images, b))}); its predictions are not scored; "
            "name the image by its id or its whole file name"
        ))  # fmt: skip
    return out


def _size_error(ds: Dataset, image: int, why: str) -> InputError:
    """A located error for a fractional box whose image has no known size."""
    row = int(np.flatnonzero(ds.image_idx == image)[0])
    file, place = ds.where(row)
    return InputError(
        file,
        f"normalized box needs the size of image {quoted(ds.images.ids[image])}: {why}",
        where=place,
        hint="pass --image-size WxH or give sizes in the ground truth",
    )


def _known(width: np.ndarray, height: np.ndarray) -> np.ndarray:
    return np.isfinite(width) & np.isfinite(height)


def scale_fractions(
    ds: Dataset,
    image_size: tuple[float, float] | None,
    ref: ImageTable | None = None,
    img_map: np.ndarray | None = None,
) -> Dataset:
    """``ds`` in pixels when its boxes are fractions of the image size.

    Each image's size is its own (from its file), else its ground-truth
    image's (``ref`` with ``img_map[I]`` positions, -1 where absent), else
    ``image_size``; a box on an image of no known size is a located error.
    """
    if not ds.fractions:
        return ds
    width, height = ds.images.width.copy(), ds.images.height.copy()
    unknown = ~_known(width, height)
    if ref is not None and img_map is not None:
        j = np.where(unknown & (img_map >= 0), img_map, -1)
        take = j >= 0
        width[take], height[take] = ref.width[j[take]], ref.height[j[take]]
    if image_size is not None:
        still = ~_known(width, height)
        width[still], height[still] = image_size
    used = np.zeros(len(width), dtype=bool)
    used[ds.image_idx] = True
    missing = np.flatnonzero(used & ~_known(width, height))
    if len(missing):
        i = int(missing[0])
        if ref is None:
            why = "no size is known"
        elif img_map is not None and img_map[i] < 0:
            why = "the ground truth has no such image"
        else:
            why = "the ground truth gives no size for it"
        raise _size_error(ds, i, why)
    return ds.scaled(width, height)


def _category_map(
    gt_categories: CategoryTable, pred: Dataset
) -> tuple[np.ndarray, dict[str, int], list[Key], list[str], list[int]]:
    """``[K_pred]`` each prediction category's ground-truth position (new ones appended).

    Returns the map, how many joined by id and by name, the ids and names
    of categories only in the predictions, and the prediction categories
    whose id equals a ground-truth id in value only (``"1"`` for ``1``).
    """
    gt_cat_by_id = {_norm(k): i for i, k in enumerate(gt_categories.ids)}
    gt_cat_by_name = {n: i for i, n in enumerate(gt_categories.names)}
    cat_map = np.empty(len(pred.categories), dtype=np.int64)
    cat_how = {"id": 0, "name": 0}
    extra_ids: list[Key] = []
    extra_names: list[str] = []
    respelled: list[int] = []  # prediction categories whose id joined by value only
    for j, key in enumerate(pred.categories.ids):
        name = pred.categories.names[j]
        # A name of its own (not just the id spelled out) comes from the
        # prediction file's category list, whose ids are its own: trust it first.
        i = gt_cat_by_name.get(name) if name != str(key) else None
        if i is not None:
            cat_how["name"] += 1
        else:
            i = gt_cat_by_id.get(_norm(key))
            if i is not None:
                cat_how["id"] += 1
                if key != gt_categories.ids[i]:
                    respelled.append(j)
            else:
                i = gt_cat_by_name.get(name)
                if i is not None:
                    cat_how["name"] += 1
        if i is None:
            i = len(gt_categories) + len(extra_ids)
            extra_ids.append(key)
            extra_names.append(pred.categories.names[j])
        cat_map[j] = i

    return cat_map, cat_how, extra_ids, extra_names, respelled


def align(gt: Dataset, pred: Dataset, image_size: tuple[float, float] | None = None) -> Alignment:
    """Re-index ``pred`` into the (canonical) vocabularies of ``gt``.

    Boxes that are fractions of the image size (``Dataset.fractions``) are
    scaled here: the ground truth's by its own sizes or ``image_size``, the
    predictions' by their own, else their ground-truth image's, else
    ``image_size``.
    """
    own_order = gt.categories.ids
    file_images = {k: i for i, k in enumerate(gt.images.ids)}
    gt = canonical(scale_fractions(gt, image_size))
    image_rank = np.fromiter(
        (file_images[k] for k in gt.images.ids), dtype=np.int64, count=len(gt.images)
    )
    position = {k: i for i, k in enumerate(gt.categories.ids)}
    warnings: list[str] = list(gt.warnings) + list(pred.warnings)
    ambiguous: dict[Key, tuple[int, int]] = {}
    is_coco = pred.traits.coco_ids
    img_map, img_how = image_map(gt.images, pred.images, not is_coco, ambiguous)
    warnings += image_join_warnings(pred.source, gt.images, is_coco, img_how, ambiguous)
    pred = scale_fractions(pred, image_size, gt.images, img_map)

    cat_map, cat_how, extra_ids, extra_names, respelled = _category_map(gt.categories, pred)
    n_cat = len(gt.categories)
    pred_image = img_map[pred.image_idx] if len(pred) else np.zeros(0, dtype=np.int64)
    known = pred_image >= 0
    unknown_rows = int((~known).sum())
    unknown_keys: tuple[Key, ...] = ()
    if unknown_rows:
        bad = distinct(pred.image_idx[~known])
        unknown_keys = tuple(pred.images.ids[i] for i in bad[:5])
        # A doubt: were those images empty ground-truth images, their false
        # positives would count (``--strict`` fails on it).
        warnings.append(Doubt(
            f"{pred.source}: {unknown_rows} prediction(s) on {len(bad)} image(s) "
            f"that are not in the ground truth (e.g. {', '.join(repr(k) for k in unknown_keys)}); "
            f"not scored; {declare_hint(gt.traits.declares_empty_image)}"
        ))  # fmt: skip
    categories = gt.categories.extended(extra_ids, extra_names)
    if extra_ids:
        warnings.append(
            f"{pred.source}: {len(extra_ids)} categor{'y' if len(extra_ids) == 1 else 'ies'} "
            f"only in the predictions ({', '.join(map(str, extra_names[:5]))}); "
            "their boxes count as false positives in the per-class and per-image tables"
        )
    # Every column is copied only when some rows go (a COCO-sized table is
    # hundreds of megabytes).
    kept = pred if unknown_rows == 0 else pred.take(np.flatnonzero(known))
    kept_image = pred_image if unknown_rows == 0 else pred_image[known]
    pred2 = replace(
        kept,
        images=gt.images,
        categories=categories,
        image_idx=narrow_index(kept_image),
        category_idx=narrow_index(
            cat_map[kept.category_idx] if len(kept) else np.zeros(0, np.int64)
        ),
        warnings=(),
    )
    # Only two COCO files are something pycocotools would read.
    if respelled and len(kept) and gt.traits.coco_ids and pred.traits.coco_ids:
        warnings.extend(_respelled_warning(pred.source, kept, respelled, cat_map, gt.categories))
    gt2 = replace(gt, categories=categories, warnings=())
    return Alignment(
        gt=gt2,
        pred=pred2,
        n_categories=n_cat,
        image_match=_how(img_how),
        category_match=_how(cat_how),
        unknown_image_rows=unknown_rows,
        unknown_image_keys=unknown_keys,
        warnings=tuple(warnings),
        class_order=tuple(position[k] for k in own_order),
        image_rank=image_rank,
    )
