"""Label Studio's JSON export (format ``labelstudio``): a list of tasks.

Each task is one image::

    {"id": 1, "data": {"image": "/data/upload/3/1a2b3c4d-street_01.jpg"},
     "annotations": [{"id": 7, "was_cancelled": false, "created_at": "...",
                      "result": [{"id": "r1", "type": "rectanglelabels",
                                  "from_name": "label", "to_name": "image",
                                  "original_width": 640, "original_height": 480,
                                  "value": {"x": 6.25, "y": 45.8, "width": 34.4,
                                            "height": 33.3, "rotation": 0,
                                            "rectanglelabels": ["car"]}}]}],
     "predictions": [{"model_version": "v1", "score": 0.8, "result": [...]}]}

Choices:

- The image is ``data.image`` (else the task's first text value); its file
  name is the last part of the path or URL (a ``?d=`` local-files path
  too), with Label Studio's upload prefix removed: ``/data/upload/3/
  1a2b3c4d-street_01.jpg`` is ``street_01.jpg`` (the 8 hex characters and
  the dash Label Studio puts before an uploaded file's name).  The image id
  is that file name; its size ``original_width`` / ``original_height`` of
  its results, else ``data.width`` / ``data.height`` (as some exporters
  write it), else unknown.
- Ground truth: of a task's annotations, the latest by ``created_at`` that
  is not cancelled (``was_cancelled`` or ``skipped``) counts, as Label
  Studio's own converters take the last completion that was not skipped
  (equal or missing times: the later in the list); a note counts the tasks
  that had several.  A task without one is not an image of the ground truth
  (a note counts them); an annotation with an empty ``result`` is an image
  without objects.
- Predictions: every ``predictions[]`` entry's results; a result's
  ``score`` wins over its prediction's ``score``; a result without either
  is an error.
- ``rectanglelabels``: ``x, y, width, height`` are percentages of the
  image size (pixels = value * original size / 100, as Label Studio's
  converters compute them); a ``rotation`` (degrees, clockwise about the
  top-left corner) gives an oriented box when the file has no polygons,
  else a 4-point polygon.  ``polygonlabels``: ``points`` in percentages,
  a polygon whose box is its bounds.  Other result types are skipped with
  a note, except per-region ``choices`` (the result with the region's
  ``id``) whose ``from_name`` or choice says ``crowd`` / ``iscrowd`` /
  ``is_crowd`` (a crowd region) or ``difficult`` (ignore).
- Categories are the label names, in first-seen order unless ``--names``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import numpy as np

from iou_eval.data.dataset import Dataset, ImageTable, assemble
from iou_eval.errors import InputError
from iou_eval.escape import quoted
from iou_eval.io.loaders.common import LoadOptions, decode_json
from iou_eval.io.loaders.shapes import ShapeReader, pending_outlines
from iou_eval.io.loaders.source import read_file_bytes

_UPLOAD = re.compile(r"^[0-9a-fA-F]{8}-(.+)$")
_CROWD = {"crowd", "iscrowd", "is_crowd"}
_SHAPES = ("rectanglelabels", "polygonlabels")


_RESULT_KEY = re.compile(rb'"result"\s*:\s*\[')
_TASK_KEY = re.compile(rb'"(annotations|predictions|completions)"\s*:\s*\[')


def labelstudio_head(head: bytes) -> bool:
    """Whether a file's first bytes open a Label Studio export: tasks whose annotations
    or predictions hold ``"result": [...]`` lists (a key no COCO file has)."""
    head = head.lstrip(b" \t\r\n")
    found = _RESULT_KEY.search(head) and _TASK_KEY.search(head)
    return head[:1] in (b"[", b"{") and bool(found)


def image_name(data: Any) -> str | None:
    """The image file name of a task's ``data`` (upload prefix and folders removed)."""
    if not isinstance(data, dict):
        return None
    ref = data.get("image")
    if not isinstance(ref, str):
        ref = next((v for v in data.values() if isinstance(v, str)), None)
    if not ref:
        return None
    url = urlparse(ref)
    path = parse_qs(url.query).get("d", [url.path])[0]
    name = unquote(path).replace("\\", "/").rsplit("/", 1)[-1]
    m = _UPLOAD.match(name)
    if m and "/upload/" in unquote(url.path):
        name = m.group(1)
    return name or None


def _stamp(annotation: dict[str, Any]) -> str:
    value = annotation.get("created_at")
    return value if isinstance(value, str) else ""


def chosen_annotation(task: dict[str, Any]) -> tuple[dict[str, Any] | None, int]:
    """The annotation that counts (see the module docstring) and how many were not cancelled."""
    anns = task.get("annotations") or task.get("completions") or []
    live = [
        a for a in anns
        if isinstance(a, dict) and not (a.get("was_cancelled") or a.get("skipped"))
    ]  # fmt: skip
    if not live:
        return None, 0
    latest = max(range(len(live)), key=lambda i: (_stamp(live[i]), i))
    return live[latest], len(live)


def _number(value: Any, what: str, file: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(file, f"{what} must be a number, got {quoted(value)}", where=where)
    return float(value)


def _flags(results: list[Any]) -> dict[str, set[str]]:
    """Region id -> the flags its per-region ``choices`` set (``crowd``, ``difficult``)."""
    out: dict[str, set[str]] = {}
    for r in results:
        if not isinstance(r, dict) or r.get("type") != "choices":
            continue
        value = r.get("value") if isinstance(r.get("value"), dict) else {}
        words = {str(r.get("from_name", "")).lower()}
        words |= {str(c).lower() for c in (value or {}).get("choices", []) or []}
        flags = set()
        if words & _CROWD:
            flags.add("crowd")
        if "difficult" in words:
            flags.add("difficult")
        if flags and r.get("id") is not None:
            out.setdefault(str(r["id"]), set()).update(flags)
    return out


class _Reader(ShapeReader):
    """The rows of the chosen annotations (or the predictions) of every task."""

    def __init__(self, role: str, options: LoadOptions) -> None:
        super().__init__(role, options)
        self.crowd: list[bool] = []
        self.corners: list[np.ndarray | None] = []
        self.skipped: dict[str, int] = {}
        self.sizes: dict[int, tuple[float, float]] = {}

    def read(self, results: Any, ti: int, file: str, where: str, score: Any) -> None:
        if not isinstance(results, list):
            raise InputError(file, "'result' must be a list", where=where)
        flags = _flags(results)
        for ri, r in enumerate(results):
            if not isinstance(r, dict):
                raise InputError(file, "a result must be an object", where=f"{where}.result[{ri}]")
            kind = r.get("type")
            if kind not in _SHAPES:
                if kind != "choices":
                    self.skipped[str(kind)] = self.skipped.get(str(kind), 0) + 1
                continue
            self._shape(r, ti, file, f"{where}.result[{ri}]", score, flags.get(str(r.get("id"))))

    def _size(self, r: dict[str, Any], ti: int, file: str, where: str) -> tuple[float, float]:
        w = _number(r.get("original_width"), "original_width", file, where)
        h = _number(r.get("original_height"), "original_height", file, where)
        if w <= 0 or h <= 0:
            raise InputError(file, f"image size must be positive, got {w} x {h}", where=where)
        self.sizes.setdefault(ti, (w, h))
        return w, h

    def _shape(self, r: dict, ti: int, file: str, where: str, score: Any, flags: Any) -> None:
        given = r.get("value")
        value: dict[str, Any] = given if isinstance(given, dict) else {}
        kind = r["type"]
        names = value.get(kind)
        if not isinstance(names, list) or not names or not isinstance(names[0], str):
            raise InputError(file, f"value.{kind} must name a label", where=where)
        w, h = self._size(r, ti, file, where)
        corners = None
        if kind == "rectanglelabels":
            x, y, bw, bh = (
                _number(value.get(k), f"value.{k}", file, where) * s / 100
                for k, s in (("x", w), ("y", h), ("width", w), ("height", h))
            )
            angle = _number(value.get("rotation", 0) or 0, "value.rotation", file, where)
            if angle % 360:
                corners = _rotated(x, y, bw, bh, angle)
                self.rows.add_polygon(corners.reshape(-1))
            else:
                self.rows.add_box(x, y, x + bw, y + bh)
        else:
            points = value.get("points")
            if not isinstance(points, list) or len(points) < 3:
                raise InputError(file, "value.points needs 3 points or more", where=where)
            flat = [
                _number(p[i], "a point", file, where) * (w if i == 0 else h) / 100
                for p in points for i in (0, 1)
            ] if all(isinstance(p, list) and len(p) == 2 for p in points) else None  # fmt: skip
            if flat is None:
                raise InputError(file, "value.points must be [x, y] pairs", where=where)
            self.rows.add_polygon(np.asarray(flat, dtype=np.float64))
        self.corners.append(corners)
        if self.pred:
            s = r.get("score", score)
            if s is None:
                raise InputError(file, "prediction has no score", where=where,
                                 hint="give 'score' on the result or on its prediction")  # fmt: skip
            self.scores.append(_number(s, "score", file, where))
        self.crowd.append("crowd" in (flags or ()))
        self.ignore.append("difficult" in (flags or ()))
        self.category_idx.append(self.classes.lookup(names[0].strip(), file, where))
        self.image_idx.append(ti)
        self.origin.append(ti)


def _rotated(x: float, y: float, w: float, h: float, degrees: float) -> np.ndarray:
    """``[4, 2]`` corners of a rectangle turned ``degrees`` clockwise about its top-left (x, y)."""
    t = math.radians(degrees)
    c, s = math.cos(t), math.sin(t)
    return np.array(
        [[x, y], [x + w * c, y + w * s], [x + w * c - h * s, y + w * s + h * c], [x - h * s, y + h * c]],
        dtype=np.float64,
    )  # fmt: skip


def _data_size(reader: _Reader, ti: int, data: Any) -> None:
    """The image's size from the task's ``data.width`` / ``data.height`` when no result gave it."""
    if ti in reader.sizes or not isinstance(data, dict):
        return
    w, h = data.get("width"), data.get("height")
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (w, h))
    if numbers and 0 < float(w) < math.inf and 0 < float(h) < math.inf:  # type: ignore[arg-type]
        reader.sizes[ti] = (float(w), float(h))  # type: ignore[arg-type]


def _tasks(path: str) -> list[Any]:
    doc = decode_json(read_file_bytes(path), path)
    tasks = [doc] if isinstance(doc, dict) else doc
    if not isinstance(tasks, list):
        raise InputError(path, "expected a Label Studio export: a list of tasks")
    return tasks


def load_labelstudio(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read a Label Studio JSON export as ground truth or predictions (rules in the module doc)."""
    tasks = _tasks(path)
    reader = _Reader(role, options)
    ids: list[str] = []
    notes: list[str] = []
    unlabelled = several = 0
    for k, task in enumerate(tasks):
        ti = len(ids)
        where = f"[{k}]"
        if not isinstance(task, dict):
            raise InputError(path, "a task must be an object", where=where)
        name = image_name(task.get("data"))
        if name is None:
            raise InputError(path, "the task names no image (data.image)", where=where)
        if name in ids:
            raise InputError(path, f"image {quoted(name)} is in two tasks", where=where)
        if reader.pred:
            for pi, p in enumerate(task.get("predictions") or []):
                if isinstance(p, dict):
                    res = p.get("result") or []
                    reader.read(res, ti, path, f"{where}.predictions[{pi}]", p.get("score"))
        else:
            ann, live = chosen_annotation(task)
            if ann is None:
                unlabelled += 1
                continue
            several += live > 1
            reader.read(ann.get("result") or [], ti, path, f"{where}.annotations", None)
        _data_size(reader, ti, task.get("data"))
        ids.append(name)
    if unlabelled:
        notes.append(f"{path}: {unlabelled} task(s) without an annotation that counts (none, or "
                     "all cancelled): not images of the ground truth")  # fmt: skip
    if several:
        notes.append(f"{path}: {several} task(s) with several annotations: the latest that is not "
                     "cancelled counts")  # fmt: skip
    for kind, n in reader.skipped.items():
        notes.append(f"{path}: {n} result(s) of type {kind} skipped (rectanglelabels and "
                     "polygonlabels are read)")  # fmt: skip
    return _assembled(path, role, options, reader, ids, notes)


def _assembled(
    path: str, role: str, options: LoadOptions, reader: _Reader, ids: list[str], notes: list[str]
) -> Dataset:
    size = [reader.sizes.get(i, (np.nan, np.nan)) for i in range(len(ids))]
    images = ImageTable.build(ids, ids, [s[0] for s in size], [s[1] for s in size])
    columns, polygons = reader.columns()
    columns["is_crowd"] = np.asarray(reader.crowd, dtype=bool)
    rotated = [c for c in reader.corners if c is not None]
    if rotated and all(
        p is None or c is not None for p, c in zip(polygons, reader.corners, strict=True)
    ):
        from iou_eval.data.oriented import assemble_oriented, corners_of_xyxy

        xyxy = columns.pop("boxes")
        columns.pop("box_format")
        corners = corners_of_xyxy(xyxy)
        for i, c in enumerate(reader.corners):
            if c is not None:
                corners[i] = c
        return assemble_oriented(
            corners=corners, source=path, fmt="labelstudio", images=images, files=(path,),
            origin_label="tasks", warnings=notes, **columns,
        )  # fmt: skip
    dataset = assemble(source=path, fmt="labelstudio", images=images, files=(path,),
                       origin_label="tasks", warnings=notes, **columns)  # fmt: skip
    if options.masks:
        dataset = replace(dataset, masks=pending_outlines(dataset, polygons, role))
    return dataset
