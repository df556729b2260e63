"""Open Images' other challenge files: verified image-level labels, the class hierarchy.

* Image labels (``*-annotations-human-imagelabels*.csv``)::

      ImageID,Source,LabelName,Confidence
      0001eeaf4aed83f9,verification,/m/0cmf2,1

  Columns found by name (any case, any order); ``Confidence`` is 1 (the
  class is there) or 0 (it is not; ``1.0`` and ``0.0`` are read too).
  Found beside the boxes file (a CSV with those columns and no ``XMin``; of
  several, the one whose name shares the longest start with the boxes
  file's) unless ``--oi-image-labels`` names it.
* The hierarchy (``bbox_labels_600_hierarchy.json``): a tree of
  ``{"LabelName": ..., "Subcategory": [...]}`` (:mod:`iou_eval.data.hierarchy`).
* Class descriptions beside the boxes file (``LabelName,DisplayName``, two
  columns), for the class list's order and the names of ancestor classes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from iou_eval.data.dataset import Dataset
from iou_eval.data.hierarchy import Hierarchy, expand_boxes, hierarchy_from_tree
from iou_eval.data.image_labels import ImageLabels, expand_labels, with_label_images
from iou_eval.errors import InputError
from iou_eval.io.compiled import csv_reader
from iou_eval.io.loaders.common import read_bytes
from iou_eval.io.loaders.openimages import (
    _check_width,
    _csv_files,
    _first_row,
    _names_from_options,
    _read_table,
    read_class_descriptions,
)
from iou_eval.io.loaders.scan import SKIP, TEXT, scan_csv
from iou_eval.io.loaders.source import read_file_bytes
from iou_eval.io.source import decode_text
from iou_eval.numbers import quote_token

LABEL_COLUMNS = ("ImageID", "LabelName", "Confidence")
_TRUE = frozenset({"1", "1.0"})
_FALSE = frozenset({"0", "0.0"})


def read_image_labels(path: str) -> ImageLabels:
    """The rows of an image-labels CSV; errors cite ``file:line``."""
    data = read_file_bytes(path)
    scanned = _scanned_labels(path, data)
    if scanned is not None:
        return scanned
    table = _read_table(path, data=data)
    cols = {c: table.column(c) for c in LABEL_COLUMNS}
    missing = [c for c, i in cols.items() if i is None]
    if missing:
        raise InputError(
            path,
            f"expected the image-label columns {', '.join(LABEL_COLUMNS)}; "
            f"missing {', '.join(missing)}",
            where=1,
        )
    _check_width(table)
    i_img, i_lab, i_conf = (int(cols[c]) for c in LABEL_COLUMNS)  # type: ignore[arg-type]
    image_ids = np.array([row[i_img] for row in table.rows], dtype=object)
    label_ids = np.array([row[i_lab] for row in table.rows], dtype=object)
    confidence = np.array([row[i_conf] for row in table.rows], dtype=object)
    positive = np.isin(confidence, list(_TRUE))
    bad = ~positive & ~np.isin(confidence, list(_FALSE))
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InputError(
            path,
            f"expected Confidence 1 (verified present) or 0 (verified absent), "
            f"got {quote_token(str(confidence[r]))}",
            where=table.lines[r],
        )
    empty = (image_ids == "") | (label_ids == "")
    if empty.any():
        r = int(np.flatnonzero(empty)[0])
        what = "ImageID" if image_ids[r] == "" else "LabelName"
        raise InputError(path, f"expected a {what}, got an empty cell", where=table.lines[r])
    return ImageLabels.of_texts(
        path,
        image_ids.tolist(),
        label_ids.tolist(),
        positive,
        np.asarray(table.lines, dtype=np.int64),
    )


def _scanned_labels(path: str, data: bytes) -> ImageLabels | None:
    """The compiled reader's image labels, or None (not built, switched off, or the file is
    one the Python path must read or refuse)."""
    if csv_reader() is None:
        return None
    wanted = [c.lower() for c in LABEL_COLUMNS]

    def kinds(header: list[str]) -> str | None:
        lowered = [h.lower() for h in header]
        if any(c not in lowered for c in wanted):
            return None
        at = {lowered.index(c) for c in wanted}
        return "".join(TEXT if i in at else SKIP for i in range(len(header)))

    scanned = scan_csv(data, kinds)
    if scanned is None:
        return None
    lowered = [h.lower() for h in scanned.header]
    image, label, confidence = (scanned.codes(lowered.index(c)) for c in wanted)
    values = np.array(confidence.values, dtype=object)
    if not np.isin(values, [*_TRUE, *_FALSE]).all() or "" in image.values or "" in label.values:
        return None  # a bad row: the Python path names it
    return ImageLabels(
        source=path,
        image_codes=image.codes,
        image_values=tuple(image.values),
        label_codes=label.codes,
        label_values=tuple(label.values),
        positive=np.isin(values, list(_TRUE))[confidence.codes],
        lines=scanned.lines,
    )


def read_hierarchy(path: str) -> Hierarchy:
    """The class hierarchy JSON; a malformed file is an error at its line and column."""
    text = decode_text(read_bytes(path), path)
    try:
        tree = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"malformed JSON: {exc.msg}", where=f"{exc.lineno}:{exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(path, "the hierarchy is nested too deeply to read") from None
    return hierarchy_from_tree(tree, path)


def _folder_of(path: str) -> str | None:
    if path == "-":
        return None
    if os.path.isdir(path):
        return path
    return os.path.dirname(os.path.abspath(path))


def _shared_start(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _closest(files: list[str], boxes: str) -> list[str]:
    """The files whose names share the longest start with ``boxes``'s name."""
    name = os.path.basename(boxes)
    scores = [_shared_start(os.path.basename(f), name) for f in files]
    best = max(scores, default=0)
    return [f for f, s in zip(files, scores, strict=True) if s == best]


def image_labels_beside(boxes: str) -> str | None:
    """The image-labels CSV beside a boxes CSV (or in its folder), or None when there is none.

    Several that fit equally well are an error asking for ``--oi-image-labels``.
    """
    folder = _folder_of(boxes)
    if folder is None:
        return None
    found = []
    for file in _csv_files(folder):
        head = [c.strip().lower() for c in _first_row(file)]
        if all(c.lower() in head for c in LABEL_COLUMNS) and "xmin" not in head:
            found.append(file)
    if len(found) > 1:
        found = _closest(found, boxes)
    if len(found) > 1:
        raise InputError(
            folder,
            f"expected one Open Images image-labels CSV beside the boxes, found {len(found)}",
            hint="name one with --oi-image-labels FILE ("
            + ", ".join(os.path.basename(f) for f in found[:4])
            + ")",
        )
    return found[0] if found else None


def class_descriptions_beside(boxes: str) -> dict[str, str]:
    """``LabelName -> DisplayName`` of the class descriptions beside a boxes CSV ({} if none).

    A two-column CSV; of several, the ones named like class descriptions,
    then the one whose name shares the longest start with the boxes file's.
    """
    folder = _folder_of(boxes)
    if folder is None:
        return {}
    found = [f for f in _csv_files(folder) if len(_first_row(f)) == 2]
    if len(found) > 1:
        named = [f for f in found if "descr" in os.path.basename(f).lower()]
        found = _closest(named or found, boxes)
    if len(found) != 1:
        return {}
    return read_class_descriptions(found[0])


@dataclass(frozen=True)
class ChallengeInputs:
    """What the Open Images protocol reads beside the boxes.

    Attributes:
        ground_truth: the boxes, expanded along the hierarchy when one was
            given, with the images only the labels name added.
        labels: the verified image-level labels (expanded likewise), or None.
        names: the class descriptions, ``LabelName -> DisplayName`` in their
            order (the class list; empty: none found).
        notes: what is missing, in words.
    """

    ground_truth: Dataset
    labels: ImageLabels | None
    names: dict[str, str]
    notes: tuple[str, ...]


def challenge_inputs(
    gt_source: object,
    gt: Dataset,
    hierarchy: str | None,
    image_labels: str | None,
    names: tuple[str, ...] | None,
) -> ChallengeInputs:
    """Read the labels, descriptions and hierarchy, and expand the ground truth as the challenge does.

    Args:
        gt_source: the ground truth as the user gave it: a path is searched
            beside for the labels and the class descriptions (for a
            :class:`Dataset` already read, the path it was read from).
        gt: the ground truth read.
        hierarchy, image_labels: the files ``--oi-hierarchy`` and
            ``--oi-image-labels`` name, or None.
        names: ``--names`` lines (``/m/07j7r,Tree``): the class descriptions.
    """
    source = gt_source if isinstance(gt_source, str) else gt.source
    readable = gt.traits.unit_image and source != "-" and os.path.exists(source)
    beside = source if readable else None
    path = image_labels or (image_labels_beside(beside) if beside else None)
    labels = read_image_labels(path) if path else None
    descriptions = _names_from_options(names) or (
        class_descriptions_beside(beside) if beside else {}
    )
    notes = []
    if labels is None:
        notes.append(
            "openimages: no verified image-level labels (--oi-image-labels FILE, or an "
            "image-labels CSV beside the boxes): an image is scored only on the classes boxed in it"
        )
    images = gt.images
    if gt.traits.unit_image and not ((images.width == 1) & (images.height == 1)).all():
        notes.append(
            "openimages: the boxes are scored in pixels (the images' sizes are known); the "
            "challenge scores the fractions, and an overlap may differ from its in the last bit"
        )
    if hierarchy:
        h = read_hierarchy(hierarchy)
        gt = expand_boxes(gt, h, descriptions)
        if labels is not None:
            labels = expand_labels(labels, h)
    else:
        notes.append(
            "openimages: no --oi-hierarchy: boxes and labels count for their own class only "
            "(the challenge expands them along bbox_labels_600_hierarchy.json)"
        )
    if labels is not None:
        gt = with_label_images(gt, labels)
    return ChallengeInputs(gt, labels, descriptions, tuple(notes))
