"""Ultralytics pose datasets and predictions (format ``yolo``, keypoints).

The ``yolo`` format's reader: a dataset whose data.yaml has ``kpt_shape`` is
read here, any other YOLO input by :mod:`.yolo`; so are ``predict`` text
files when keypoints are scored.

Ground truth: ``kpt_shape: [K, D]`` (``D`` 2 or 3) in data.yaml, label lines
``class cx cy w h x1 y1 [v1] ... xK yK [vK]``: ``5 + K * D`` numbers, fractions
of the upright image.  A line of another length is an error naming the file
and the line.  As Ultralytics reads them (``verify_image_label``):

* ``D = 3``: a keypoint is labelled when ``v > 0``; ``D = 2``: unless ``x`` or
  ``y`` is negative;
* labelled coordinates lie within Ultralytics' 1 % tolerance of [0, 1];
* exact duplicate lines of an image are dropped, with a warning.

With keypoints scored, each object's ``area`` (the OKS scale, and what the
area ranges test) is ``0.53 * w * h`` of its box in pixels, as Ultralytics'
``PoseValidator`` scales OKS (COCO's ``area``, a segmentation's, is about
0.53 of a person's box); its ``num_keypoints`` is its labelled keypoints
(0: ignored, as COCO ignores such a person), and its box serves the
enlarged-box rule of an object without labelled keypoints.  Scoring boxes
only, the area is the box's ``w * h``, as for a detection dataset.

Predictions, keypoints scored: ``predict(save_txt=True, save_conf=True)``
writes ``class cx cy w h x1 y1 [c1] ... xK yK [cK] conf``, fractions,
confidence last; each line's keypoints are read once the ground truth says
its category's K (:func:`iou_eval.geometry.keypoints.with_keypoints`).
``val(save_json=True)``'s ``predictions.json`` is read as COCO results.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from iou_eval.data.dataset import Dataset, ImageTable
from iou_eval.errors import InputError
from iou_eval.geometry.keypoints import KeypointColumn, PendingKeypoints
from iou_eval.io.loaders.common import LoadOptions, strict_floats
from iou_eval.io.loaders.source import read_text_file, strip_gz
from iou_eval.io.loaders.yolo import (
    _COORD_MAX,
    _COORD_MIN,
    _assemble,
    _categories,
    _check_fractions,
    _check_unique,
    _class_column,
    _ground_truth_files,
    _prediction_files,
    _prediction_sizes,
    _Rows,
    _sizes,
    find_data_yaml,
    load_yolo,
    read_data_yaml,
)
from iou_eval.numbers import is_number_token, quote_token

# Ultralytics' PoseValidator: OKS area = the box's w * h * 0.53.
AREA_OF_BOX = 0.53


def load_yolo_or_pose(path: str, role: str, options: LoadOptions) -> Dataset:
    """The ``yolo`` format's reader: pose datasets (and, keypoints scored, ``predict``
    text) here, everything else by :func:`iou_eval.io.loaders.yolo.load_yolo`."""
    is_json = os.path.isfile(path) and strip_gz(path).lower().endswith(".json")
    if role == "pred":
        if options.keypoints and not is_json:
            return _load_predictions(path, options)
        return load_yolo(path, role, options)
    shape = kpt_shape(path, options)
    if shape is None:
        return load_yolo(path, role, options)
    return _load_ground_truth(path, options, shape)


def carries_keypoints(path: str, role: str) -> bool:
    """Whether a YOLO ground truth is a pose dataset (its data.yaml has ``kpt_shape``);
    prediction files are not looked at."""
    return role == "gt" and kpt_shape(path, LoadOptions()) is not None


def kpt_shape(path: str, options: LoadOptions) -> tuple[int, int] | None:
    """The ``kpt_shape`` ``(K, D)`` of the dataset's data.yaml, or None (not a pose dataset)."""
    if os.path.isfile(path):
        yaml_path: str | None = path if strip_gz(path).lower().endswith((".yaml", ".yml")) else None
    else:
        yaml_path = find_data_yaml(path) if os.path.isdir(path) else None
    if yaml_path is None:
        return None
    data = read_data_yaml(yaml_path, options.split or "val").data
    if "kpt_shape" not in data:
        return None
    shape = data["kpt_shape"]
    ok = (
        isinstance(shape, list)
        and len(shape) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in shape)
        and 1 <= shape[0] <= 10_000
        and shape[1] in (2, 3)
    )
    if not ok:
        raise InputError(
            yaml_path,
            f"'kpt_shape' must be [K, 2] or [K, 3] (K keypoints of x y, or x y visible), got {shape!r}",
            where="kpt_shape",
        )
    return int(shape[0]), int(shape[1])


# --------------------------------------------------------------------------- ground truth


def _pose_lines(files: list[str], width: int, shape: tuple[int, int]) -> tuple[_Rows, list[str]]:
    """Every data line of ``files`` of exactly ``width`` numbers: rows and their number tokens."""
    rows = _Rows([], [], [], [], [], {}, {})
    cells: list[str] = []
    k, d = shape
    for fi, file in enumerate(files):
        if not os.path.isfile(file):
            continue
        for number, raw in enumerate(read_text_file(file).split("\n"), 1):
            tokens = raw.split()
            if not tokens:
                continue
            if len(tokens) != width:
                what = "x y" if d == 2 else "x y v"
                raise InputError(
                    file,
                    f"expected {width} numbers ('class cx cy w h' and {k} keypoints '{what}', "
                    f"kpt_shape [{k}, {d}] in data.yaml), got {len(tokens)}",
                    where=number,
                )
            rows.classes.append(tokens[0])
            rows.file_of.append(fi)
            rows.line_of.append(number)
            cells.extend(tokens[1:])
    return rows, cells


def _numbers(rows: _Rows, cells: list[str], files: list[str], per_row: int) -> np.ndarray:
    """``[N, per_row]`` float64 of the rows' number tokens; a bad token is a located error."""
    n = len(rows.classes)
    try:
        values = strict_floats(cells).reshape(n, per_row)
    except ValueError:
        i = next(i for i, t in enumerate(cells) if not is_number_token(t))
        r = i // per_row
        raise InputError(
            files[rows.file_of[r]], f"expected a number, got {quote_token(cells[i])}",
            where=rows.line_of[r],
        ) from None  # fmt: skip
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InputError(files[rows.file_of[r]], "expected finite numbers", where=rows.line_of[r])
    return values


def _labels(kp: np.ndarray, d: int) -> np.ndarray:
    """``[N, K]`` bool labelled: ``v > 0`` (D = 3); ``x, y >= 0`` (D = 2), as Ultralytics masks them."""
    if d == 3:
        return kp[:, :, 2] > 0
    return (kp[:, :, 0] >= 0) & (kp[:, :, 1] >= 0)


def _check_keypoint_fractions(
    kp: np.ndarray, labelled: np.ndarray, rows: _Rows, files: list[str]
) -> None:
    """Labelled keypoints lie within Ultralytics' tolerance of [0, 1] (they are fractions)."""
    xy = kp[:, :, :2]
    out = labelled & ((xy < _COORD_MIN) | (xy > _COORD_MAX)).any(axis=2)
    if out.any():
        r, j = (int(v[0]) for v in np.nonzero(out))
        raise InputError(
            files[rows.file_of[r]],
            f"keypoint {j + 1} at {kp[r, j, 0]:g} {kp[r, j, 1]:g} is not a fraction of the image "
            "size in [0, 1]",
            where=rows.line_of[r],
            hint="Ultralytics leaves such an image out as corrupt",
        )


def _unique_lines(file_of: np.ndarray, classes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``keep[N]``: False for a repeat of an earlier line of the same image (Ultralytics drops it)."""
    keep = np.ones(len(classes), dtype=bool)
    if not len(classes):
        return keep
    key = np.column_stack([file_of, classes, values])
    _, first = np.unique(key, axis=0, return_index=True)
    keep[:] = False
    keep[first] = True
    return keep


def _load_ground_truth(path: str, options: LoadOptions, shape: tuple[int, int]) -> Dataset:
    images, names, label_files, warnings, root = _ground_truth_files(path, options)
    width, height, failed = _sizes(images)
    if failed:
        keep = np.isfinite(width)
        warnings.append(
            f"{path}: {len(failed)} image(s) could not be read and are left out, as Ultralytics "
            f"leaves out corrupt images (first: {failed[0][0]}: {failed[0][1]})"
        )
        images = [p for p, k in zip(images, keep, strict=True) if k]
        label_files = [f for f, k in zip(label_files, keep, strict=True) if k]
        width, height = width[keep], height[keep]
    ids = [os.path.splitext(os.path.basename(p))[0] for p in images]
    _check_unique(ids, images)
    k, d = shape
    rows, cells = _pose_lines(label_files, 5 + k * d, shape)
    classes = _class_column(rows, label_files, None if names is None else len(names))
    values = _numbers(rows, cells, label_files, 4 + k * d)
    cx, cy, w, h = values[:, :4].T
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    rows.box_rows.extend(range(len(classes)))  # every pose line is a box row
    warnings += _check_fractions(
        xyxy, rows, label_files, [None] * len(classes), values[:, :4], path
    )
    kp = values[:, 4:].reshape(-1, k, d)
    labelled = _labels(kp, d)
    _check_keypoint_fractions(kp, labelled, rows, label_files)
    file_of = np.asarray(rows.file_of, dtype=np.int64)
    keep = _unique_lines(file_of, classes, values)
    if not keep.all():
        r = int(np.flatnonzero(~keep)[0])
        warnings.append(
            f"{path}: {int((~keep).sum())} duplicate label line(s) dropped, as Ultralytics drops "
            f"them (first: {label_files[rows.file_of[r]]}:{rows.line_of[r]})"
        )
    sel = np.flatnonzero(keep)
    file_names = [os.path.relpath(p, root) if p.startswith(root) else p for p in images]
    table = ImageTable.build(ids, file_names, width, height)
    lines = np.asarray(rows.line_of, dtype=np.int64)[sel]
    ds = _assemble(
        path, table, _categories(names, classes), file_of[sel], classes[sel], xyxy[sel], None,
        lines, file_of[sel], label_files, warnings,
    )  # fmt: skip
    if not options.keypoints:
        return ds
    return _with_keypoints(ds, kp[sel], labelled[sel], width[file_of[sel]], height[file_of[sel]])


def _with_keypoints(
    ds: Dataset, kp: np.ndarray, labelled: np.ndarray, width: np.ndarray, height: np.ndarray
) -> Dataset:
    """The ground truth with its keypoints in pixels and Ultralytics' OKS area."""
    x = np.where(labelled, kp[:, :, 0] * width[:, None], 0.0)
    y = np.where(labelled, kp[:, :, 1] * height[:, None], 0.0)
    box = np.column_stack([ds.xyxy[:, :2], ds.xyxy[:, 2:] - ds.xyxy[:, :2]])
    column = KeypointColumn(
        x=x, y=y, count=np.full(len(ds), kp.shape[1], dtype=np.int64), visible=labelled,
        num_keypoints=labelled.sum(axis=1).astype(np.int64), box=box,
    )  # fmt: skip
    return replace(ds, keypoints=column, area=ds.bbox_area * AREA_OF_BOX)


# --------------------------------------------------------------------------- predictions


def _prediction_lines(files: list[str]) -> tuple[_Rows, list[str], list[str], list[int]]:
    """Pose prediction lines: rows, box and confidence tokens (5 a row), keypoint tokens, counts."""
    rows = _Rows([], [], [], [], [], {}, {})
    box_cells: list[str] = []
    kp_cells: list[str] = []
    counts: list[int] = []
    for fi, file in enumerate(files):
        for number, raw in enumerate(read_text_file(file).split("\n"), 1):
            tokens = raw.split()
            if not tokens:
                continue
            if len(tokens) < 8:
                raise InputError(
                    file,
                    f"expected a pose line 'class cx cy w h x1 y1 [c1] ... conf', got {len(tokens)} "
                    "numbers" + (" (a box without keypoints)" if len(tokens) == 6 else ""),
                    where=number,
                    hint="keypoints come from predict(save_txt=True, save_conf=True) of a pose model",
                )
            rows.classes.append(tokens[0])
            rows.file_of.append(fi)
            rows.line_of.append(number)
            box_cells.extend((*tokens[1:5], tokens[-1]))
            kp_cells.extend(tokens[5:-1])
            counts.append(len(tokens) - 6)
    return rows, box_cells, kp_cells, counts


def _load_predictions(path: str, options: LoadOptions) -> Dataset:
    folder = path
    labels = os.path.join(path, "labels")
    if os.path.isdir(labels) and not any(e.lower().endswith(".txt") for e in os.listdir(path)):
        folder = labels  # the run folder of `predict`: its labels/ holds the files
    files = _prediction_files(folder)
    rows, box_cells, kp_cells, counts = _prediction_lines(files)
    names = tuple(options.names) if options.names else None
    classes = _class_column(rows, files, None if names is None else len(names))
    values = _numbers(rows, box_cells, files, 5)
    length = np.asarray(counts, dtype=np.int64)
    start = np.cumsum(length) - length
    kp_rows = _Rows(
        [rows.classes[r] for r in np.repeat(np.arange(len(length)), length)],
        list(np.repeat(rows.file_of, length)), list(np.repeat(rows.line_of, length)),
        [], [], {}, {},
    )  # fmt: skip
    kp_values = _numbers(kp_rows, kp_cells, files, 1).reshape(-1) if kp_cells else np.zeros(0)
    cx, cy, w, h, score = values.T
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    rows.box_rows.extend(range(len(classes)))  # every pose line is a box row
    notes = _check_fractions(xyxy, rows, files, [None] * len(classes), values[:, :4], path)
    ids = [os.path.splitext(strip_gz(os.path.basename(f)))[0] for f in files]
    width, height = _prediction_sizes(folder, ids, options)
    file_of = np.asarray(rows.file_of, dtype=np.int64)
    table = ImageTable.build(ids, [strip_gz(os.path.basename(f)) for f in files], width, height)
    lines = np.asarray(rows.line_of, dtype=np.int64)
    ds = _assemble(
        path, table, _categories(names, classes), file_of, classes, xyxy, score.copy(), lines,
        file_of, files, notes,
    )  # fmt: skip
    pending = PendingKeypoints(
        kp_values, start, length, tuple(files), file_of.astype(np.int32), lines
    )
    return replace(ds, keypoints=pending)
