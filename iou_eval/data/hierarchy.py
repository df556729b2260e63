"""Open Images' class hierarchy, and the ground truth expanded along it.

The challenge scores a box of "Dog" as a box of "Dog", "Carnivore",
"Mammal" and "Animal" too: its expansion script copies every ground-truth
box (and every positive image-level label) once for each ancestor of its
class, and every negative image-level label once for each descendant.  This
module reads the hierarchy as that script reads it and makes the same
copies, in the same order (each row, then its copies).

The hierarchy is a tree of ``{"LabelName": ..., "Subcategory": [...]}``
nodes; its root (``/m/0bl9f``, "Entity") gathers the classes and is no class
of its own.  A class listed under several parents has the ancestors of every
place it is listed, in the order the script collects them (repeats kept:
the script keeps them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset
from iou_eval.data.ordering import narrow_index
from iou_eval.errors import InputError
from iou_eval.escape import excerpt


@dataclass(frozen=True)
class Hierarchy:
    """Each class's ancestors and descendants, as the expansion script lists them.

    Attributes:
        source: the file.
        ancestors: label -> its ancestors, nearest first (the root excluded).
        descendants: label -> every class below it, depth first.
    """

    source: str
    ancestors: dict[str, tuple[str, ...]]
    descendants: dict[str, tuple[str, ...]]


def _merge(into: dict[str, list[str]], more: dict[str, list[str]]) -> None:
    """A subtree's lists joined to its siblings': a label seen again extends its list."""
    for key, values in more.items():
        if key in into:
            into[key].extend(values)
        else:
            into[key] = values


def _node(value: Any, source: str, where: str) -> tuple[str, list[Any]]:
    """A node's label and subcategories, checked."""
    if not isinstance(value, dict):
        raise InputError(
            source, f'expected a node {{"LabelName": ...}}, got {excerpt(repr(value))}', where=where
        )
    label = value.get("LabelName")
    if not isinstance(label, str) or not label.strip():
        raise InputError(
            source, f"expected a LabelName string, got {excerpt(repr(label))}", where=where
        )
    subs = value.get("Subcategory", [])
    if not isinstance(subs, list):
        raise InputError(
            source, f"expected Subcategory to be a list, got {type(subs).__name__}", where=where
        )
    return label, subs


def hierarchy_from_tree(tree: Any, source: str) -> Hierarchy:
    """:class:`Hierarchy` of a parsed hierarchy JSON (errors name the node's path).

    Walks the tree without recursion (a deep file cannot exhaust the stack):
    a node's lists are complete once all its subcategories are.
    """
    root_label, root_subs = _node(tree, source, "$")
    # Frames: (label, subcategories, next index, path, descendants, ancestors, listing).
    stack: list[list[Any]] = [[root_label, root_subs, 0, "$", {}, {}, []]]
    while True:
        frame = stack[-1]
        label, subs, i, path, desc, anc, listing = frame
        if i < len(subs):
            frame[2] = i + 1
            where = f"{path}.Subcategory[{i}]"
            sub_label, sub_subs = _node(subs[i], source, where)
            stack.append([sub_label, sub_subs, 0, where, {}, {}, []])
            continue
        stack.pop()
        if not stack:  # the root: no class of its own
            frozen_anc = {k: tuple(v) for k, v in anc.items()}
            return Hierarchy(source, frozen_anc, {k: tuple(v) for k, v in desc.items()})
        desc[label] = listing
        for key in anc:
            anc[key].append(label)
        anc[label] = []
        parent = stack[-1]
        _merge(parent[4], desc)
        _merge(parent[5], anc)
        parent[6].extend([label, *listing])


def _not_in_hierarchy(ds: Dataset, row: int, label: str, h: Hierarchy) -> InputError:
    file, place = ds.where(row)
    return InputError(
        file,
        f"class {excerpt(label)} is not in the hierarchy {h.source}",
        where=place,
        hint="the hierarchy must list every class of the ground truth (its root is no class)",
    )


def expansion(codes: np.ndarray, lists: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """Each row followed by one copy per entry of its code's list.

    Args:
        codes: ``[N]`` int64 a code per row.
        lists: per code, the codes its copies get.

    Returns:
        ``(rows[M], codes[M])``: the source row and the code of each output
        row; a row's own code first, then its list's, in order.
    """
    lengths = np.array([len(x) for x in lists], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter((c for x in lists for c in x), dtype=np.int64, count=int(offsets[-1]))
    counts = 1 + lengths[codes]
    rows = np.repeat(np.arange(len(codes)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    k = np.arange(len(rows)) - first
    own = codes[rows]
    if not len(flat):  # nothing to copy: every row is its own
        return rows, own
    copy = flat[np.where(k > 0, offsets[own] + k - 1, 0)]
    return rows, np.where(k == 0, own, copy)


def expand_boxes(gt: Dataset, h: Hierarchy, names: dict[str, str] | None = None) -> Dataset:
    """The ground truth with each box copied once per ancestor of its class.

    New classes (ancestors no box had) are added after the file's, named
    from ``names`` (class descriptions) where it knows them.  The copies keep
    their box's flags and place in the file; annotation ids are renumbered.
    """
    ids = [str(k) for k in gt.categories.ids]
    used = np.bincount(gt.category_idx, minlength=len(ids)) > 0
    for c in np.flatnonzero(used).tolist():
        if ids[c] not in h.ancestors:
            row = int(np.flatnonzero(gt.category_idx == c)[0])
            raise _not_in_hierarchy(gt, row, ids[c], h)
    vocab = {k: i for i, k in enumerate(ids)}
    new_ids = list(ids)
    lists: list[tuple[int, ...]] = []
    for k in ids:
        codes = []
        for a in h.ancestors.get(k, ()):
            if a not in vocab:
                vocab[a] = len(new_ids)
                new_ids.append(a)
            codes.append(vocab[a])
        lists.append(tuple(codes))
    rows, cats = expansion(gt.category_idx.astype(np.int64), lists)
    known = names or {}
    added = new_ids[len(ids) :]
    categories = CategoryTable(
        gt.categories.ids + tuple(added),
        gt.categories.names + tuple(known.get(a, a) for a in added),
    )
    out = gt.take(rows)
    return replace(
        out,
        categories=categories,
        category_idx=narrow_index(cats),
        ann_id=narrow_index(np.arange(1, len(rows) + 1, dtype=np.int64)),
    )
