"""LVIS's federated fields as the compiled COCO reader gives them: columns to the loader's tuples.

An LVIS ground truth is a COCO one whose images carry two lists of category
ids (``neg_category_ids``: verified absent; ``not_exhaustive_category_ids``:
not labelled exhaustively) and whose categories carry a ``frequency``
(``r``, ``c``, ``f``).  The compiled reader (``iou_eval/io/_cocojson.c``)
reads the lists as a length per image (``-1``: null or absent) and the ids
back to back, and the frequency as a code per category; it gives up on
anything else (a string id, a float, another frequency), which msgspec's
path then reads, normalizes or refuses.  Here the columns become what that
path gives: ``[I]`` tuples of ids (``()`` where an image has none), or None
when no image has the list; ``[K]`` frequencies (None where absent), or
None when no category has one.
"""

from __future__ import annotations

import numpy as np

# The reader's frequency codes 0, 1, 2; -1 (absent) indexes the last: None.
_FREQUENCY_OF_CODE = ("r", "c", "f", None)


def id_lists(lengths: np.ndarray, ids: np.ndarray) -> tuple[tuple[int, ...], ...] | None:
    """``[I]`` tuples of the ids of each image (``lengths[I]`` int64, -1 for none;
    ``ids`` int64, the lists back to back), or None when no image has a list."""
    if not (lengths >= 0).any():
        return None
    ends = np.cumsum(np.maximum(lengths, 0)).tolist()
    values = ids.tolist()
    return tuple(tuple(values[a:b]) for a, b in zip([0, *ends[:-1]], ends, strict=True))


def frequencies(codes: np.ndarray) -> tuple[str | None, ...] | None:
    """``[K]`` the frequency of each category from its code (``int8[K]``), or None when none has one."""
    if not (codes >= 0).any():
        return None
    return tuple(_FREQUENCY_OF_CODE[c] for c in codes.tolist())


def federated_extras(read: dict) -> tuple[dict, dict]:
    """The images' and categories' LVIS fields of a compiled read, checked and normalized.

    ``({"neg_category_ids": lists, "not_exhaustive_category_ids": lists},
    {"frequency": frequencies})``, each value as :func:`id_lists` and
    :func:`frequencies` give it.
    """

    def lists(name: str) -> tuple[tuple[int, ...], ...] | None:
        lengths = np.frombuffer(read[f"image.{name}_length"], dtype=np.int64)
        return id_lists(lengths, np.frombuffer(read[f"image.{name}_ids"], dtype=np.int64))

    images = {
        "neg_category_ids": lists("neg"),
        "not_exhaustive_category_ids": lists("not_exhaustive"),
    }
    codes = np.frombuffer(read["category.frequency"], dtype=np.int8)
    return images, {"frequency": frequencies(codes)}
