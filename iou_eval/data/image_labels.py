"""Open Images' verified image-level labels: read rows, expanded, joined to an alignment.

A label says that people checked whether a class is in an image:
``Confidence`` 1, it is; 0, it is not.  Either way the class is *verified*
there, and the challenge scores predictions of that class on that image.
An image that has labels but no box is still an image of the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, Key, normalize_id
from iou_eval.data.hierarchy import Hierarchy, expansion
from iou_eval.data.reconcile import Alignment, VerifiedLabels
from iou_eval.errors import InputError
from iou_eval.escape import excerpt


@dataclass(frozen=True)
class ImageLabels:
    """The rows of an image-labels file, keyed as the file spells them.

    Ids are held as codes into their distinct texts (a file of a million rows
    names some tens of thousands of images and a few hundred classes).

    Attributes:
        source: the file.
        image_codes, label_codes: ``[L]`` int64 into ``image_values`` and
            ``label_values`` (the distinct texts, each once).
        positive: ``[L]`` bool.
        lines: ``[L]`` int64 each row's line in the file.
    """

    source: str
    image_codes: np.ndarray
    image_values: tuple[str, ...]
    label_codes: np.ndarray
    label_values: tuple[str, ...]
    positive: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.image_codes)

    @property
    def image_ids(self) -> np.ndarray:
        """``[L]`` str (an object array): each row's image id."""
        return _spelled(self.image_values, self.image_codes)

    @property
    def label_ids(self) -> np.ndarray:
        """``[L]`` str (an object array): each row's class id."""
        return _spelled(self.label_values, self.label_codes)

    @classmethod
    def of_texts(
        cls,
        source: str,
        image_ids: Sequence[str],
        label_ids: Sequence[str],
        positive: np.ndarray,
        lines: np.ndarray,
    ) -> ImageLabels:
        """Labels from each row's ids as texts."""
        image_codes, image_values = text_codes(image_ids)
        label_codes, label_values = text_codes(label_ids)
        return cls(source, image_codes, image_values, label_codes, label_values, positive, lines)


def _spelled(values: tuple[str, ...], codes: np.ndarray) -> np.ndarray:
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return table[codes]


def text_codes(texts: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """``codes[N]`` int64 into the distinct ``texts`` in order of first appearance."""
    vocab = {k: i for i, k in enumerate(dict.fromkeys(texts))}
    codes = np.fromiter(map(vocab.__getitem__, texts), dtype=np.int64, count=len(texts))
    return codes, tuple(vocab)


def _norm(key: Key) -> Key:
    try:
        return normalize_id(key)
    except ValueError:
        return key


def expand_labels(labels: ImageLabels, h: Hierarchy) -> ImageLabels:
    """Positive labels copied to every ancestor, negative ones to every descendant.

    Each row is followed by its copies, as the challenge's expansion script
    writes them; a class the hierarchy lacks is an error naming the line.
    """
    # Codes: 2 * label + positive; each code's copies are its labels' codes.
    names = list(labels.label_values)
    index = {k: i for i, k in enumerate(names)}
    lists: list[tuple[int, ...]] = []
    listed = np.zeros(2 * len(names), dtype=bool)
    for code in range(2 * len(labels.label_values)):
        label, positive = names[code // 2], bool(code % 2)
        table = h.ancestors if positive else h.descendants
        listed[code] = label in table
        targets = []
        for t in table.get(label, ()):
            if t not in index:
                index[t] = len(names)
                names.append(t)
            targets.append(2 * index[t] + int(positive))
        lists.append(tuple(targets))
    lists += [()] * (2 * len(names) - len(lists))
    codes = 2 * labels.label_codes.astype(np.int64) + labels.positive
    missing = np.flatnonzero(~listed[codes])
    if len(missing):
        r = int(missing[0])
        raise InputError(
            labels.source,
            f"class {excerpt(labels.label_values[labels.label_codes[r]])} is not in the "
            f"hierarchy {h.source}",
            where=int(labels.lines[r]),
        )
    rows, out_codes = expansion(codes, lists)
    return ImageLabels(
        source=labels.source,
        image_codes=labels.image_codes[rows],
        image_values=labels.image_values,
        label_codes=out_codes // 2,
        label_values=tuple(names),
        positive=(out_codes % 2).astype(bool),
        lines=labels.lines[rows],
    )


def with_label_images(gt: Dataset, labels: ImageLabels) -> Dataset:
    """The ground truth with the images that only the labels name added (no boxes on them).

    The challenge scores every image of its labels file: a prediction of a
    verified class on such an image is a false positive.  An added image has
    the unit size of the ground truth's images when all of them have it
    (Open Images without sizes), else no known size.  The added images come
    in the order of their ids.
    """
    have = {_norm(k) for k in gt.images.ids}
    new = sorted(k for k in set(labels.image_values) if _norm(k) not in have)
    if not new:
        return gt
    images = gt.images
    unit = bool(len(images)) and bool((images.width == 1).all() and (images.height == 1).all())
    size = np.full(len(new), 1.0 if unit else np.nan)
    return replace(
        gt,
        images=ImageTable(
            ids=images.ids + tuple(new),
            file_names=images.file_names + (None,) * len(new),
            width=np.r_[images.width, size],
            height=np.r_[images.height, size],
        ),
    )


def with_class_names(alignment: Alignment, names: dict[str, str]) -> Alignment:
    """The alignment's classes named from the class descriptions where a file named them by id only."""
    cats = alignment.gt.categories
    named = tuple(
        names.get(str(k), n) if n == str(k) else n
        for k, n in zip(cats.ids, cats.names, strict=True)
    )
    if named == cats.names:
        return alignment
    table = CategoryTable(cats.ids, named)
    return replace(
        alignment,
        gt=replace(alignment.gt, categories=table),
        pred=replace(alignment.pred, categories=table),
    )


def verified_labels(
    alignment: Alignment, labels: ImageLabels | None, class_list: tuple[Key, ...] = ()
) -> VerifiedLabels:
    """``labels`` in the alignment's vocabularies (rows of unknown images or classes dropped).

    A class neither boxed nor predicted anywhere changes nothing (no
    prediction of it is scored, it has no AP), so its labels are dropped.
    """
    if labels is None:
        empty = np.zeros(0, dtype=np.int64)
        return VerifiedLabels(empty, empty.copy(), np.zeros(0, dtype=bool), class_list, None)
    images = {_norm(k): i for i, k in enumerate(alignment.gt.images.ids)}
    cats = alignment.gt.categories
    by_id = {str(k): i for i, k in enumerate(cats.ids)}
    by_name = {n: i for i, n in enumerate(cats.names)}
    img_map = np.array([images.get(_norm(k), -1) for k in labels.image_values], dtype=np.int64)
    cat_map = np.array(
        [by_id.get(k, by_name.get(k, -1)) for k in labels.label_values], dtype=np.int64
    )
    image_idx = img_map[labels.image_codes] if len(img_map) else np.zeros(0, dtype=np.int64)
    category_idx = cat_map[labels.label_codes] if len(cat_map) else np.zeros(0, dtype=np.int64)
    keep = (image_idx >= 0) & (category_idx >= 0)
    return VerifiedLabels(
        image_idx=image_idx[keep],
        category_idx=category_idx[keep],
        positive=labels.positive[keep],
        class_list=class_list,
        source=labels.source,
    )
