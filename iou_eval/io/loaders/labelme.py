"""LabelMe JSON: a folder of per-image files, or one file (format ``labelme``).

Each file describes one image::

    {"version": "5.5.0", "flags": {},
     "shapes": [{"label": "dog", "points": [[263, 211], [324, 339]],
                 "group_id": null, "description": "", "shape_type": "rectangle",
                 "flags": {}}],
     "imagePath": "000005.jpg", "imageData": null,
     "imageHeight": 375, "imageWidth": 500}

Choices:

- A folder is read in sorted file-name order: ``*.json`` and ``*.json.gz``
  (names starting with ``.`` skipped).  The image id is the file's stem
  (``000005.json`` -> ``"000005"``); ``imagePath``'s base name is the
  image's file name; ``imageWidth``/``imageHeight`` its size (unknown when
  absent: LabelMe coordinates are pixels, so none is needed).
- ``rectangle``: the two corners in drawing order (any order: min/max are
  taken; extra points count too); ``polygon`` (also a missing
  ``shape_type``, as LabelMe reads it): its box is its bounds and the
  polygon is kept.  Other shape types (``circle``, ``point``, ``line``,
  ``linestrip``, ``mask``, X-AnyLabeling's ``rotation``...) are skipped with
  a warning naming file and shape index.
- ``group_id`` is not read: each shape is one object (labelme2coco merges
  the shapes of one ``label`` and ``group_id`` into one instance).
- ``"difficult": true`` on a shape (X-AnyLabeling and LabelMe forks write
  it) becomes ``ignore``.
- Predictions need a score per shape.  Where labelme-based tools put it:
  ``"score"`` on the shape (X-AnyLabeling, AnyLabeling; null for a hand-drawn
  shape), else a number in ``flags`` under ``score``/``confidence``/``conf``,
  else the ``description`` holding a number (``"0.87"``, ``"score: 0.87"``,
  ``"conf=0.87"``).  A shape without any of these is an error.
- A file without shapes is an image without objects.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

import numpy as np

from iou_eval.data.dataset import Dataset, ImageTable, assemble
from iou_eval.errors import InputError
from iou_eval.escape import excerpt, quoted
from iou_eval.io.loaders.common import LoadOptions, decode_json
from iou_eval.io.loaders.shapes import ShapeReader, pending_outlines
from iou_eval.io.loaders.source import read_file_bytes, strip_gz
from iou_eval.io.source import list_folder, read_head
from iou_eval.numbers import is_number_token

_BOXES = {"rectangle"}
_POLYGONS = {"polygon", None}
_SCORE_FLAGS = ("score", "confidence", "conf")
_DESCRIBED_SCORE = re.compile(
    r"^\s*(?:(?:score|conf|confidence)\s*[:=]\s*)?([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$",
    re.IGNORECASE,
)


def looks_like_labelme(path: str) -> bool:
    """Whether ``path`` is a LabelMe file or folder: a JSON object with ``shapes`` near its top.

    Reads the first 4 KiB of one file (decompressed); never standard input.
    """
    files = _json_files(path, quiet=True)
    if not files:
        return False
    try:
        head = read_head(files[0])
    except InputError:
        return False
    return labelme_head(head)


def labelme_head(head: bytes) -> bool:
    """Whether a file's first bytes (decompressed, no BOM) open a LabelMe document."""
    head = head.lstrip(b" \t\r\n")
    return head[:1] == b"{" and b'"shapes"' in head and b'"annotations"' not in head


def _json_files(path: str, quiet: bool = False) -> list[str]:
    if path == "-":
        return [] if quiet else [path]  # standard input: one file, read by the loader only
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        if quiet:
            return []
        raise InputError(path, "no such file or folder")
    try:
        entries = sorted(list_folder(path))
    except InputError:
        if quiet:
            return []
        raise
    files = [
        os.path.join(path, e)
        for e in entries
        if strip_gz(e.lower()).endswith(".json")
        and not e.startswith(".")
        and os.path.isfile(os.path.join(path, e))
    ]
    if not files and not quiet:
        raise InputError(
            path,
            "expected LabelMe .json files in this folder, found none",
            hint=f"found: {', '.join(entries[:5]) or 'nothing'}",
        )
    return files


def _parse(file: str) -> dict[str, Any]:
    doc = decode_json(read_file_bytes(file), file)
    if not isinstance(doc, dict) or not isinstance(doc.get("shapes", []), list):
        raise InputError(file, "expected a LabelMe object with a 'shapes' list")
    return doc


def _size(doc: dict[str, Any], file: str) -> tuple[float, float]:
    out = []
    for key in ("imageWidth", "imageHeight"):
        v = doc.get(key)
        if v is None:
            out.append(np.nan)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < _float(v) < np.inf:
            raise InputError(file, f"{key} must be a positive number, got {quoted(v)}", where=key)
        out.append(float(v))
    return out[0], out[1]


def _float(v: int | float) -> float:
    """``float(v)``; an integer beyond any float is infinite (with its sign), which checks refuse."""
    try:
        return float(v)
    except OverflowError:
        return np.inf if v > 0 else -np.inf


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return _float(value)
    if isinstance(value, str):
        m = _DESCRIBED_SCORE.match(value)
        return float(m.group(1)) if m and is_number_token(m.group(1)) else None
    return None


def shape_score(shape: dict[str, Any]) -> float | None:
    """A prediction's score: ``score``, else ``flags``' score, else the description."""
    s = _number(shape.get("score"))
    if s is not None:
        return s
    flags = shape.get("flags")
    if isinstance(flags, dict):
        for key in _SCORE_FLAGS:
            s = _number(flags.get(key))
            if s is not None:
                return s
    return _number(shape.get("description"))


def _points(shape: dict[str, Any], file: str, where: str) -> np.ndarray:
    pts = shape.get("points")
    try:
        arr = np.asarray(pts, dtype=np.float64)
    except (TypeError, ValueError):
        arr = np.zeros((0, 3))
    except OverflowError:  # an integer beyond any float
        raise InputError(file, "'points' must be finite numbers", where=where) from None
    if arr.ndim != 2 or arr.shape[1] != 2 or not len(arr):
        raise InputError(
            file, f"'points' must be a list of [x, y] pairs, got {quoted(pts)}", where=where
        )
    if not np.isfinite(arr).all():
        raise InputError(file, "'points' must be finite numbers", where=where)
    return arr


class _Reader(ShapeReader):
    """Rows of LabelMe files, built through one :class:`ShapeRows`."""

    def __init__(self, role: str, options: LoadOptions) -> None:
        super().__init__(role, options)
        self.skipped: dict[str, list[str]] = {}

    def read_shape(self, shape: Any, fi: int, si: int, file: str) -> None:
        where = f"shapes[{si}]"
        if not isinstance(shape, dict):
            raise InputError(file, "a shape must be an object", where=where)
        kind = shape.get("shape_type")
        if not isinstance(kind, str) or (kind not in _BOXES and kind not in _POLYGONS):
            # Any other JSON value (a list, a number) is a kind of shape iou-eval does not read.
            self.skipped.setdefault(excerpt(str(kind), 40), []).append(f"{file}:{where}")
            return
        label = shape.get("label")
        if not isinstance(label, str) or not label.strip():
            raise InputError(
                file, f"a shape needs a 'label', got {excerpt(repr(label), 40)}", where=where
            )
        pts = _points(shape, file, where)
        if kind in _BOXES and len(pts) < 2:
            raise InputError(file, "a rectangle needs two corners", where=where)
        if self.pred:
            s = shape_score(shape)
            if s is None:
                raise InputError(
                    file,
                    "prediction has no score",
                    where=where,
                    hint="put it in the shape's 'score' (as X-AnyLabeling does), in 'flags' as "
                    "'score', or as a number in 'description'; is this the ground truth?",
                )
            self.scores.append(s)
        if kind in _BOXES:
            self.rows.add_box(pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
        else:
            self.rows.add_polygon(pts.reshape(-1))
        self.ignore.append(shape.get("difficult") is True)
        self.category_idx.append(self.classes.lookup(label.strip(), file, where))
        self.image_idx.append(fi)
        self.origin.append(si)

    def warnings(self) -> list[str]:
        out = []
        for kind, places in self.skipped.items():
            out.append(
                f"{len(places)} LabelMe shape(s) of type {kind} skipped (only rectangle and "
                f"polygon are boxes; first: {places[0]})"
            )
        return out


def read_labelme(
    path: str, role: str, options: LoadOptions
) -> tuple[Dataset, list[np.ndarray | None]]:
    """:func:`load_labelme` and each row's polygon (``[2P]`` pixels, None for rectangles)."""
    files = _json_files(path)
    reader = _Reader(role, options)
    ids: list[str] = []
    file_names: list[str | None] = []
    widths: list[float] = []
    heights: list[float] = []
    seen: dict[str, str] = {}
    for fi, file in enumerate(files):
        doc = _parse(file)
        stem = os.path.splitext(strip_gz(os.path.basename(file)))[0]
        if stem in seen:
            raise InputError(file, f"image id {quoted(stem)} is also the id of {seen[stem]}")
        seen[stem] = file
        ids.append(stem)
        image_path = doc.get("imagePath")
        # LabelMe on Windows writes backslashes.
        name = str(image_path).replace("\\", "/").rsplit("/", 1)[-1] if image_path else None
        file_names.append(name or None)
        w, h = _size(doc, file)
        widths.append(w)
        heights.append(h)
        for si, shape in enumerate(doc.get("shapes") or []):
            reader.read_shape(shape, fi, si, file)
    columns, polygons = reader.columns()
    dataset = assemble(
        source=path,
        fmt="labelme",
        images=ImageTable.build(ids, file_names, widths, heights),
        **columns,
        origin_file=np.asarray(reader.image_idx, dtype=np.int32),
        files=files,
        origin_label="shapes",
        warnings=[f"{path}: {w}" for w in reader.warnings()],
    )
    if options.masks:
        dataset = replace(dataset, masks=pending_outlines(dataset, polygons, role))
    return dataset, polygons


def load_labelme(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read LabelMe JSON files as ground truth or predictions.

    Args:
        path: a folder of LabelMe ``.json`` files (one per image) or one file.
        role: ``"gt"`` or ``"pred"`` (a score per shape, see the module docstring).
        options: ``names`` (then a numeric label is an index into them).

    Returns:
        A :class:`Dataset` with one image per file (id = the file's stem) and
        one row per rectangle or polygon; errors cite ``file:shapes[i]``.
    """
    return read_labelme(path, role, options)[0]
