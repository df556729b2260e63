"""Class numberings that differ between ground truth and predictions by a rule.

Ultralytics' ``val(save_json=True)`` writes ``predictions.json`` with
``category_id`` numbered three ways over the years:

- COCO val: ``coco80_to_coco91`` (the 80 class indices to COCO's ids 1..90,
  without 12, 26, 29, 30, 45, 66, 68, 69, 71, 83);
- other datasets since December 2024: ``index + 1``;
- before: the 0-based ``index``.

A YOLO ground truth numbers classes ``0..nc-1``, a COCO one by COCO's ids, so
the predictions may be off by one or in the other COCO numbering.
:func:`detect_class_shift` finds which rule makes the predictions' ids the
ground truth's, with the evidence; :func:`apply_class_map` applies it.  The
warning spells the fix as a flag to paste: ``--class-offset -1``,
``--class-map coco80``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, Key, normalize_id
from iou_eval.errors import UsageError

# Ultralytics' coco80_to_coco91_class(): COCO ids of the 80 class indices.
COCO80_TO_COCO91: tuple[int, ...] = (
    *range(1, 12), *range(13, 26), 27, 28, *range(31, 45), *range(46, 66), 67, 70,
    *range(72, 83), *range(84, 91),
)  # fmt: skip
COCO91_TO_COCO80: dict[int, int] = {c: i for i, c in enumerate(COCO80_TO_COCO91)}
# Predictions must reach this share of ids the ground truth knows for a rule to be named.
_MIN_SHARE = 0.9


@dataclass(frozen=True)
class ClassShift:
    """A rule that turns the predictions' class ids into the ground truth's.

    Attributes:
        kind: ``"none"``, ``"offset"`` or ``"coco80"``.
        offset: the number to add (``kind == "offset"``).
        inverse: for ``coco80``: True maps COCO ids back to indices 0..79.
        known_before, known_after: predictions whose class the ground truth
            has, as given and after the rule.
        total: predictions.
        evidence: the counts and id ranges that decided, in words.
    """

    kind: str
    offset: int = 0
    inverse: bool = False
    known_before: int = 0
    known_after: int = 0
    total: int = 0
    evidence: str = ""

    @property
    def flag(self) -> str:
        """The command-line option that applies the rule (empty for none)."""
        if self.kind == "offset":
            return f"--class-offset {self.offset:+d}".replace("+", "")
        if self.kind == "coco80":
            return "--class-map coco80"
        return ""

    def warning(self, source: str) -> str | None:
        """The message for the user, or None when nothing is shifted."""
        if self.kind == "none":
            return None
        return (
            f"{source}: class ids look shifted: {self.evidence}; pass {self.flag} to "
            "score them as the ground truth numbers them"
        )


def _ints(ids: Sequence[Key]) -> list[int] | None:
    out = []
    for k in ids:
        try:
            v = normalize_id(k)
        except ValueError:
            return None
        if not isinstance(v, int):
            return None
        out.append(v)
    return out


def _span(ids: Sequence[int]) -> str:
    return f"{min(ids)}..{max(ids)}" if ids else "none"


def detect_class_shift(
    gt_category_ids: Sequence[Key],
    pred_category_ids: Sequence[Key],
    pred_counts: Sequence[int] | None = None,
) -> ClassShift:
    """Which rule, if any, maps the predictions' class ids onto the ground truth's.

    Args:
        gt_category_ids: the ground truth's category ids ``[K]``.
        pred_category_ids: the predictions' distinct category ids ``[P]``.
        pred_counts: predictions per id ``[P]`` (default: 1 each).

    Returns:
        A :class:`ClassShift`: ``none`` unless a rule (offset -1 or +1, the
        COCO-80 map either way) makes at least 90 % of the predictions'
        classes known to the ground truth, and more than as given.
    """
    counts = [1] * len(pred_category_ids) if pred_counts is None else [int(c) for c in pred_counts]
    gt, pred = _ints(gt_category_ids), _ints(pred_category_ids)
    total = sum(counts)
    if gt is None or pred is None or not total:
        return ClassShift("none", total=total)
    known = set(gt)

    def reach(mapped: Mapping[int, int] | None, offset: int = 0) -> int:
        if mapped is None:
            return sum(c for p, c in zip(pred, counts, strict=True) if p + offset in known)
        return sum(c for p, c in zip(pred, counts, strict=True) if mapped.get(p, -1) in known)

    before = reach(None)
    forward = dict(enumerate(COCO80_TO_COCO91))
    rules = [
        (reach(None, -1), ClassShift("offset", offset=-1)),
        (reach(None, +1), ClassShift("offset", offset=+1)),
        (reach(forward), ClassShift("coco80", inverse=False)),
        (reach(COCO91_TO_COCO80), ClassShift("coco80", inverse=True)),
    ]
    after, best = max(rules, key=lambda r: r[0])  # first best on ties: offsets before maps
    if after <= before or after < _MIN_SHARE * total:
        return ClassShift("none", known_before=before, known_after=before, total=total)
    how = {
        ("offset", -1): "the predictions number classes from 1, the ground truth from 0",
        ("offset", 1): "the predictions number classes from 0, the ground truth from 1",
        ("coco80", False): "the predictions use the 80 class indices, the ground truth COCO's ids",
        ("coco80", True): "the predictions use COCO's ids 1..90, the ground truth the 80 indices",
    }[(best.kind, best.offset if best.kind == "offset" else best.inverse)]
    evidence = (
        f"{how} (prediction ids {_span(pred)}, ground truth ids {_span(gt)}); "
        f"{before} of {total} predictions have a class the ground truth knows as given, "
        f"{after} after the change"
    )
    return replace(best, known_before=before, known_after=after, total=total, evidence=evidence)


def apply_class_map(
    ids: Sequence[Key],
    *,
    offset: int = 0,
    class_map: str | Mapping[Key, Key] | None = None,
    gt_category_ids: Sequence[Key] | None = None,
) -> tuple[Key, ...]:
    """The class ids ``[P]`` after ``class_map`` (``"coco80"`` or a mapping), then ``offset``.

    ``coco80`` goes toward the ground truth's numbering (see
    :func:`_toward_indices`): to the indices when the ground truth numbers
    by index, to COCO ids when it numbers by COCO id, and where its ids fit
    both, the way that joins more of the predictions.  An id the rule cannot carry raises :class:`UsageError`.
    A mapping (from :func:`read_class_map`) takes each id it lists to its
    value (ids compared by value: ``"3"`` is ``3``); an id it does not list
    stays as it is.
    """
    if isinstance(class_map, Mapping):
        table_map = {normalize_id(k): normalize_id(v) for k, v in class_map.items()}
        mapped = [table_map.get(normalize_id(k), k) for k in ids]
        if not offset:
            return tuple(mapped)
        ids = mapped
        class_map = None
    values = _ints(ids)
    if values is None:
        raise UsageError("class ids must be whole numbers to be shifted or mapped")
    if class_map is None:
        return tuple(v + offset for v in values)
    if class_map != "coco80":
        raise UsageError(f"unknown class map {class_map!r} (known: coco80)")
    gt = _ints(gt_category_ids or ()) or []
    table: Mapping[int, int]
    forward = dict(enumerate(COCO80_TO_COCO91))
    inverse = _toward_indices(gt, values, forward)
    if inverse:
        table, what = (
            COCO91_TO_COCO80,
            "a COCO id (1..90 without 12, 26, 29, 30, 45, 66, 68, 69, 71, 83)",
        )
    else:
        table, what = forward, "a COCO-80 class index (0..79)"
    bad = [v for v in values if v not in table]
    if bad:
        raise UsageError(f"--class-map coco80: class id {bad[0]} is not {what}")
    return tuple(table[v] + offset for v in values)


def _toward_indices(gt: list[int], values: list[int], forward: Mapping[int, int]) -> bool:
    """Whether ``coco80`` maps COCO ids to the 80 indices (else indices to COCO ids).

    A ground truth that has an id no COCO id is (0, 12, 26...) and none above
    79 numbers by index; one with an id above 79 by COCO id.  A ground truth
    that could be either (ids such as 1, 2, 3, 10, 18) is judged by the
    direction that lands more of the predictions' ids among its own; a tie
    goes toward indices.
    """
    if not gt:
        return False
    if all(0 <= g < 80 for g in gt) and any(g not in COCO91_TO_COCO80 for g in gt):
        return True
    if any(g >= 80 for g in gt):
        return False
    known = set(gt)
    reach_fwd = sum(forward.get(v, -1) in known for v in values)
    reach_inv = sum(COCO91_TO_COCO80.get(v, -1) in known for v in values)
    return reach_inv >= reach_fwd


def remap_categories(
    dataset: Dataset,
    *,
    offset: int = 0,
    class_map: str | Mapping[Key, Key] | None = None,
    gt_category_ids: Sequence[Key] | None = None,
) -> Dataset:
    """``dataset`` with its category ids mapped by :func:`apply_class_map`.

    Names that only spelled the old id out are renamed to the new id.
    """
    cats = dataset.categories
    new = apply_class_map(
        cats.ids, offset=offset, class_map=class_map, gt_category_ids=gt_category_ids
    )
    names = tuple(
        str(n2) if name == str(n1) else name
        for n1, n2, name in zip(cats.ids, new, cats.names, strict=True)
    )
    return replace(dataset, categories=CategoryTable(new, names))


def class_counts(dataset: Dataset) -> tuple[tuple[Key, ...], np.ndarray]:
    """The category ids ``[K]`` of a dataset and its rows per category ``[K]``."""
    counts = np.bincount(dataset.category_idx, minlength=len(dataset.categories))
    return dataset.categories.ids, counts


@dataclass(frozen=True)
class UltralyticsNumbering:
    """How Ultralytics numbered the classes of a ``predictions.json`` beside a YOLO dataset.

    Attributes:
        offset: what to add to the file's ids: -1 for ``index + 1`` (since
            December 2024), 0 for the 0-based index (before).
        both_fit: every id fits either numbering (no id 0, none above the
            data.yaml's classes): the reading is the newer one, in doubt.
        message: what was read, for the user.
    """

    offset: int
    both_fit: bool
    message: str


def ultralytics_numbering(
    source: str, gt_category_ids: Sequence[Key], pred_category_ids: Sequence[Key]
) -> UltralyticsNumbering | None:
    """Read the class ids ``[P]`` of Ultralytics' ``val(save_json=True)`` against ``data.yaml``.

    For a dataset other than COCO, Ultralytics writes ``category_id`` as the
    class index + 1 since December 2024, the 0-based index before.  The
    newer numbering is read unless an id fits only the older one (an id 0);
    None when the ids fit neither (or are not whole numbers).
    """
    gt, pred = _ints(gt_category_ids), _ints(pred_category_ids)
    if not gt or not pred:
        return None
    known = set(gt)
    newer = all(p - 1 in known for p in pred)
    older = all(p in known for p in pred)
    span = f"ids {_span(pred)}, data.yaml classes {_span(gt)}"
    if newer:
        text = (
            f"{source}: category_id read as Ultralytics' val(save_json=True) numbers the classes "
            f"of a dataset other than COCO since December 2024, the class index + 1 ({span})"
        )
        if older:
            text += (
                "; the ids also fit the 0-based index it wrote before: pass --class-offset 0 "
                "if an older Ultralytics wrote the file"
            )
        else:
            text += "; --class-offset 0 reads them as given"
        return UltralyticsNumbering(-1, older, text)
    if older:
        text = (
            f"{source}: category_id read as the 0-based class index, as Ultralytics' "
            f"val(save_json=True) wrote it before December 2024 ({span})"
        )
        return UltralyticsNumbering(0, False, text)
    return None
