"""Subsets of the images and classes: ``--img-ids``, ``--cat-ids`` and ``--slices``.

* ``--img-ids`` / ``--cat-ids`` keep only those images / categories, as
  pycocotools' ``params.imgIds`` / ``params.catIds``: every match is made
  inside one (image, category) group, so scoring the kept rows alone gives
  pycocotools' numbers with those parameters set (:func:`select`).
* ``--slices`` names subsets of the images (night, rain, ...) and reports a
  summary per slice beside the whole set; a slice's summary is the
  evaluation re-accumulated with weight 1 on its images and 0 elsewhere,
  which is pycocotools' summary with ``params.imgIds`` set to them.

Ids join by value (``"12"`` is 12), then by file name or stem, as the
predictions' images join the ground truth's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, Key, normalize_id
from iou_eval.data.reconcile import Alignment, ImageMatcher, VerifiedLabels
from iou_eval.errors import InputError, UsageError


def _key(text: str) -> Key:
    try:
        return normalize_id(text.strip())
    except ValueError:
        return text.strip()


@dataclass(frozen=True)
class Slices:
    """Named subsets of the images, as a slices file gives them.

    Attributes:
        source: the file (or ``"<memory>"``).
        names: the slice names, in first-seen order.
        members: per slice, the image ids the file lists (joined later).
    """

    source: str
    names: tuple[str, ...]
    members: tuple[tuple[Key, ...], ...]


def slices_from_pairs(pairs, source: str = "<memory>") -> Slices:
    """:class:`Slices` from ``(image_id, slice name)`` pairs (repeats kept once)."""
    members: dict[str, dict[Key, None]] = {}
    for image, name in pairs:
        members.setdefault(str(name), {})[image] = None
    if not members:
        raise InputError(source, "no slices: expected rows image_id,slice")
    return Slices(source, tuple(members), tuple(tuple(m) for m in members.values()))


# -- selecting images and categories ------------------------------------------------


def _image_positions(images, keys: tuple[Key, ...]) -> tuple[np.ndarray, list[Key]]:
    """Positions ``[n]`` of the images ``keys`` name (sorted, unique), and the keys not found."""
    matcher = ImageMatcher(images)
    found, unknown = set(), []
    for key in keys:
        j, _ = matcher.find(key)
        if j < 0:
            unknown.append(key)
        else:
            found.add(j)
    return np.array(sorted(found), dtype=np.int64), unknown


def _category_positions(cats: CategoryTable, keys: tuple[Key, ...]) -> tuple[np.ndarray, list]:
    """Positions of the categories ``keys`` name (by id, else by name), and the keys not found."""
    by_id: dict[Key, int] = {}
    for i, k in enumerate(cats.ids):
        by_id.setdefault(_key(str(k)), i)
    by_name = {n: i for i, n in enumerate(cats.names)}
    found, unknown = set(), []
    for key in keys:
        j = by_id.get(key, by_name.get(str(key)))
        if j is None:
            unknown.append(key)
        else:
            found.add(j)
    return np.array(sorted(found), dtype=np.int64), unknown


def _few(keys: list) -> str:
    return ", ".join(map(repr, keys[:5])) + (", ..." if len(keys) > 5 else "")


def select(
    alignment: Alignment, img_ids: tuple[Key, ...] | None, cat_ids: tuple[Key, ...] | None
) -> tuple[Alignment, list[str]]:
    """The alignment restricted to the images ``img_ids`` and categories ``cat_ids`` (None: all).

    Returns it and warnings for ids that name nothing.  Images keep their
    (id) order, categories theirs, so every tie is broken as before; the
    ground truth's own category and image orders are kept among the rest.
    """
    if img_ids is None and cat_ids is None:
        return alignment, []
    gt, pred = alignment.gt, alignment.pred
    warnings = []
    keep_img = np.arange(len(gt.images))
    keep_cat = np.arange(len(gt.categories))
    if img_ids is not None:
        keep_img, unknown = _image_positions(gt.images, img_ids)
        if not len(keep_img):
            raise UsageError(
                f"--img-ids: none of {_few(list(img_ids))} is an image of the ground truth"
            )
        if unknown:
            warnings.append(
                f"--img-ids: {len(unknown)} id(s) are not images of the ground truth "
                f"({_few(unknown)}); left out"
            )
    if cat_ids is not None:
        keep_cat, unknown = _category_positions(gt.categories, cat_ids)
        if not len(keep_cat):
            known = ", ".join(map(str, gt.categories.ids[:10]))
            raise UsageError(
                f"--cat-ids: none of {_few(list(cat_ids))} is a category (ids: {known}, ...)"
            )
        if unknown:
            warnings.append(
                f"--cat-ids: {len(unknown)} id(s) are not categories of either file "
                f"({_few(unknown)}); left out"
            )
    img_new = np.full(len(gt.images), -1, dtype=np.int64)
    img_new[keep_img] = np.arange(len(keep_img))
    cat_new = np.full(len(gt.categories), -1, dtype=np.int64)
    cat_new[keep_cat] = np.arange(len(keep_cat))
    images = gt.images.select(keep_img)
    cats = gt.categories.select(keep_cat)

    def restrict(ds: Dataset) -> Dataset:
        rows = np.flatnonzero((img_new[ds.image_idx] >= 0) & (cat_new[ds.category_idx] >= 0))
        part = ds.take(rows)
        return replace(
            part,
            images=images,
            categories=cats,
            image_idx=img_new[part.image_idx],
            category_idx=cat_new[part.category_idx],
        )

    rank = alignment.image_rank
    order = [int(cat_new[i]) for i in alignment.class_order if cat_new[i] >= 0]
    selected = replace(
        alignment,
        gt=restrict(gt),
        pred=restrict(pred),
        n_categories=int((keep_cat < alignment.n_categories).sum()),
        class_order=tuple(order),
        image_rank=None if rank is None else np.argsort(np.argsort(rank[keep_img])),
        verified=_restrict_labels(alignment.verified, img_new, cat_new),
    )
    return selected, warnings


def _restrict_labels(
    verified: VerifiedLabels | None, img_new: np.ndarray, cat_new: np.ndarray
) -> VerifiedLabels | None:
    """Verified image labels of the kept images and categories, renumbered (-1: dropped)."""
    if verified is None:
        return None
    kept = verified.take((img_new[verified.image_idx] >= 0) & (cat_new[verified.category_idx] >= 0))
    return replace(kept, image_idx=img_new[kept.image_idx], category_idx=cat_new[kept.category_idx])


def slice_weights(alignment: Alignment, slices: Slices) -> tuple[np.ndarray, list[str]]:
    """``[S, I]`` int64 0/1 weights, slice by slice, of the images of the (selected) ground truth.

    Returns them and a warning naming slice members that are not among those images.
    """
    images = alignment.gt.images
    weights = np.zeros((len(slices.names), len(images)), dtype=np.int64)
    unknown: list[Key] = []
    for s, keys in enumerate(slices.members):
        pos, missing = _image_positions(images, keys)
        weights[s, pos] = 1
        unknown += missing
    unknown = list(dict.fromkeys(unknown))
    warnings = []
    if unknown:
        warnings.append(
            f"{slices.source}: {len(unknown)} image id(s) are not among the scored images "
            f"({_few(unknown)}); left out of their slices"
        )
    return weights, warnings
