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

import csv
import io
import json
from dataclasses import dataclass, replace

import numpy as np

from .dataset import CategoryTable, Dataset, Key, normalize_id
from .errors import InputError, UsageError
from .reconcile import Alignment, ImageMatcher


def _key(text: str) -> Key:
    try:
        return normalize_id(text.strip())
    except ValueError:
        return text.strip()


def read_id_list(text: str, flag: str) -> tuple[Key, ...]:
    """``"1,2,3"`` or ``"@FILE"`` (one id per line; blank lines and ``#`` comments skipped)."""
    from .loaders.common import read_bytes

    if text.startswith("@"):
        path = text[1:]
        lines = read_bytes(path).decode("utf-8-sig", errors="replace").splitlines()
        items = [ln.split("#", 1)[0].strip() for ln in lines]
        where = f"{flag} {path}"
    else:
        items = [p.strip() for p in text.split(",")]
        where = flag
    ids = tuple(dict.fromkeys(_key(i) for i in items if i))
    if not ids:
        raise UsageError(f"{where}: expected at least one id, got {text!r}")
    return ids


def id_tuple(value, flag: str) -> tuple[Key, ...] | None:
    """An option's ids as a tuple, from text (see :func:`read_id_list`) or any iterable of ids."""
    if value is None:
        return None
    if isinstance(value, str):
        return read_id_list(value, flag)
    ids = tuple(dict.fromkeys(_key(str(v)) if not isinstance(v, int) else v for v in value))
    if not ids:
        raise UsageError(f"{flag}: expected at least one id")
    return ids


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


def read_slices(path: str) -> Slices:
    """A slices file: CSV ``image_id,slice`` (one row per pair) or JSON ``{"<image_id>": [slice, ...]}``."""
    from .loaders.common import read_bytes

    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    json_like = text.lstrip()[:1] in ("{", "[")
    pairs = _json_pairs(path, text) if json_like else _csv_pairs(path, text)
    return slices_from_pairs(pairs, path)


def slices_from_pairs(pairs, source: str = "<memory>") -> Slices:
    """:class:`Slices` from ``(image_id, slice name)`` pairs (repeats kept once)."""
    members: dict[str, dict[Key, None]] = {}
    for image, name in pairs:
        members.setdefault(str(name), {})[image] = None
    if not members:
        raise InputError(source, "no slices: expected rows image_id,slice")
    return Slices(source, tuple(members), tuple(tuple(m) for m in members.values()))


def slices_value(value) -> Slices | None:
    """An option's slices: a path, a :class:`Slices`, or a mapping ``{image_id: [slice, ...]}``."""
    if value is None or isinstance(value, Slices):
        return value
    if isinstance(value, str):
        return read_slices(value)
    if isinstance(value, dict):
        return slices_from_pairs(_mapping_pairs("<memory>", value))
    raise UsageError(f"slices: expected a file path or a mapping, got {type(value).__name__}")


def _json_pairs(path: str, text: str) -> list[tuple[Key, str]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"malformed JSON: {exc.msg}", where=f"{exc.lineno}:{exc.colno}"
        ) from exc
    return _mapping_pairs(path, doc)


def _mapping_pairs(path: str, doc) -> list[tuple[Key, str]]:
    if not isinstance(doc, dict):
        raise InputError(path, 'expected a JSON object {"<image_id>": ["slice", ...]}')
    pairs = []
    for image, names in doc.items():
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise InputError(
                path,
                f"image {image!r}: expected a list of slice names, got {json.dumps(names)[:60]}",
                where=f"[{json.dumps(str(image))}]",
            )
        pairs += [(_key(str(image)), n) for n in names]
    return pairs


def _csv_pairs(path: str, text: str) -> list[tuple[Key, str]]:
    rows = list(csv.reader(io.StringIO(text)))
    header = [c.strip().lower() for c in rows[0]] if rows else []
    if "image_id" not in header or "slice" not in header:
        raise InputError(
            path,
            f"expected a CSV header with image_id and slice, got {','.join(header) or 'nothing'}",
            where=1,
            hint='or a JSON object {"<image_id>": ["slice", ...]}',
        )
    i, s = header.index("image_id"), header.index("slice")
    pairs = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(i, s) or not row[i].strip() or not row[s].strip():
            raise InputError(path, f"expected image_id,slice, got {','.join(row)!r}", where=line)
        pairs.append((_key(row[i]), row[s].strip()))
    return pairs


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
    cats = CategoryTable(
        tuple(gt.categories.ids[i] for i in keep_cat),
        tuple(gt.categories.names[i] for i in keep_cat),
    )

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
    )
    return selected, warnings


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
