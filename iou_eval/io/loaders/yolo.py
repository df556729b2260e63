"""YOLO / Ultralytics datasets and predictions (format ``yolo``).

Ground truth — what ``path`` may be:

- a ``data.yaml`` (or a folder holding one), read as Ultralytics'
  ``check_det_dataset`` reads it, without ever running its ``download:``
  block.  The dataset root is ``path:`` (relative to the current folder, as
  Ultralytics takes it; failing that, relative to the yaml's folder, with a
  warning), else the yaml's own folder.  The split ``options.split``
  (default ``val``; a missing ``val`` falls back to ``validation``) is a
  folder, a list file, or a list of them; a ``../x`` that does not exist
  falls back to ``x`` (Roboflow exports).  A folder gives its images
  recursively; a list file gives one image per line, ``./x`` relative to
  the list file's folder.  ``names`` is a list or a mapping ``{0: name}``;
  ``nc`` alone names the classes ``class_0``...
- a labels folder with its images folder beside it (``.../labels/val``
  and ``.../images/val``), or a dataset folder holding ``images/`` and
  ``labels/``.  Names come from ``options.names``, else from a
  ``classes.txt`` in the labels folder (never read as an image), else the
  class numbers.

Every image of the split is an image of the ground truth, in sorted path
order, with id its file stem.  Its label file is Ultralytics'
``img2label_paths``: the last ``/images/`` of the image path becomes
``/labels/`` and the extension ``.txt``; a missing or empty label file is an
image without objects.  Image sizes come from the image headers
(:mod:`.image_header`), EXIF orientations 5-8 swapping width and height.
An image that cannot be read is left out with a warning, as Ultralytics
leaves out a corrupt image.

Label lines: ``class cx cy w h`` (fractions of the upright image) or a
polygon ``class x1 y1 x2 y2 ...`` (3 points or more, one polygon per line;
its box is its bounds, the polygon is kept).  Exact duplicate lines of an
image are dropped with a warning, as Ultralytics drops them.  A pose dataset
(``kpt_shape`` in data.yaml) is read by :mod:`.yolo_pose`.

Predictions — ``predict(save_txt=True, save_conf=True)`` output: a folder
of ``<image stem>.txt`` (or the run folder holding ``labels/``), lines
``class cx cy w h conf`` or ``class x1 y1 ... conf``, confidence last; no
file for an image without detections.  A 6-number line could also be
``class score cx cy w h`` (the ``txt`` format's order, Padilla's relative
layout): the columns of all files decide (:func:`guess_score_column`), with
a warning when they leave a doubt.  Image sizes: the images Ultralytics
saves beside ``labels/``, else the ground truth's.  A ``.json`` file is
``val(save_json=True)``'s ``predictions.json`` and read as COCO results
(see :mod:`.class_shift` for its three class numberings).

Categories: ids are the class numbers (``0..nc-1``), names the dataset's
names, so that a COCO ``predictions.json`` with its numeric
``category_id`` can be compared and its numbering shift detected.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, assemble
from iou_eval.errors import InputError
from iou_eval.escape import quoted
from iou_eval.io.loaders.common import KEYPOINT_HINT, LoadOptions, strict_floats
from iou_eval.io.loaders.image_header import image_size
from iou_eval.io.loaders.scan import MISSING_EMPTY, NO_COMMENTS, NUMBER, scan_text_files
from iou_eval.io.loaders.shapes import box_outlines, object_column, scale_polygons
from iou_eval.io.loaders.source import read_text_file, strip_gz
from iou_eval.io.source import list_folder
from iou_eval.numbers import is_number_token, quote_token

# More classes than any dataset has (ImageNet-21k: ~21,000); a larger nc is a typo or hostile.
MAX_CLASSES = 1_000_000

# Ultralytics' IMG_FORMATS (ultralytics/data/utils.py).
IMG_FORMATS = frozenset(
    {"bmp", "dng", "jpeg", "jpg", "mpo", "png", "tif", "tiff", "webp", "pfm", "heic"}
)
YAML_NAMES = ("data.yaml", "data.yml", "dataset.yaml", "dataset.yml")
CLASSES_FILE = "classes.txt"
# Ultralytics refuses label coordinates beyond these (1 % tolerance).
_COORD_MIN, _COORD_MAX = -0.01, 1.01


# --------------------------------------------------------------------------- detection


def looks_like_yolo(path: str) -> bool:
    """Whether ``path`` reads like a YOLO dataset or an Ultralytics predictions folder.

    Judged from names only: a ``.yaml`` file, a folder holding a data.yaml,
    ``images/`` + ``labels/``, a labels folder mirrored by an images folder,
    or a folder named ``labels``.
    """
    if os.path.isfile(path):
        return strip_gz(path).lower().endswith((".yaml", ".yml"))
    if not os.path.isdir(path):
        return False
    try:
        entries = set(list_folder(path))
    except InputError:
        return False
    if any(n in entries for n in YAML_NAMES):
        return True
    if "labels" in entries and ("images" in entries or any(_is_image(e) for e in entries)):
        return True  # a dataset folder, or a `predict` run folder (labels/ + the images)
    if "labels" in entries and is_predict_run(path, entries):
        return True  # a `predict` run folder whose images were not saved
    if _images_beside(path) is not None:
        return True
    if os.path.basename(os.path.normpath(path)) == "labels":
        # `predict` saves the images beside labels/; a bare folder of .txt is the txt format's.
        parent = os.path.dirname(os.path.abspath(path))
        try:
            siblings = list_folder(parent)
        except InputError:
            return False
        return any(_is_image(e) for e in siblings) or find_data_yaml(parent) is not None
    return False


# Files whose presence says a folder holds another format's data itself.
_DATA_EXTS = (".txt", ".json", ".xml", ".csv", ".tsv", ".yaml", ".yml")
# Lines a content check reads at most: enough to judge, bounded on a large run.
_SNIFF_LINES = 2000


def is_predict_run(path: str, entries: set[str] | None = None) -> bool:
    """Whether ``path`` is an Ultralytics ``predict`` run folder: ``labels/`` of ``.txt`` inside.

    The folder holds no data files of its own (its images may be there or
    not: ``save=False`` saves none).
    """
    try:
        names = entries if entries is not None else set(list_folder(path))
        if "labels" not in names or any(strip_gz(e.lower()).endswith(_DATA_EXTS) for e in names):
            return False
        inside = list_folder(os.path.join(path, "labels"))
    except InputError:
        return False
    return any(strip_gz(e.lower()).endswith(".txt") for e in inside)


def ultralytics_prediction_lines(path: str, obb: bool = False) -> bool:
    """Whether the ``.txt`` files of ``path`` (or of its ``labels/``) read as ``predict`` output.

    Every line read (the first :data:`_SNIFF_LINES` lines of the files, in
    name order) is ``class cx cy w h conf`` (6 numbers) or a polygon
    ``class x1 y1 ... conf`` (an even count from 8) or a pose line (``6 + 3K``
    numbers: keypoints of ``x y conf``), the class a whole number
    and every other number in [0, 1] (1 % tolerance); one line at least.
    ``obb``: every line is an oriented box, ``class x1 y1 ... x4 y4 conf``
    (10 numbers).
    """
    return _every_line(path, _obb_prediction_line if obb else _prediction_line)


def task1_lines(path: str) -> bool:
    """Whether every line read of the ``.txt`` files of ``path`` is a DOTA task-1 result line,
    ``image score x1 y1 ... x4 y4`` (an image, then 9 numbers), and one of them at least."""
    return _every_line(path, _task1_line)


def _every_line(path: str, judge: Any) -> bool:
    """Whether ``judge(tokens)`` holds for every line read of the ``.txt`` files of ``path``
    (or of its ``labels/``): the first :data:`_SNIFF_LINES` lines in name order, one at least."""
    folder = os.path.join(path, "labels") if is_predict_run(path) else path
    try:
        names = sorted(list_folder(folder)) if os.path.isdir(folder) else []
    except InputError:
        return False
    files = [os.path.join(folder, e) for e in names if strip_gz(e.lower()).endswith(".txt")
             and e != CLASSES_FILE and not e.startswith(".")]  # fmt: skip
    seen = 0
    for file in files:
        try:
            text = read_text_file(file)
        except InputError:
            return False
        for raw in text.split("\n"):
            tokens = raw.split()
            if not tokens:
                continue
            if not judge(tokens):
                return False
            seen += 1
            if seen >= _SNIFF_LINES:
                return True
    return seen > 0


def _prediction_line(tokens: list[str]) -> bool:
    """One line of ``predict`` output: a whole class, then numbers in [0, 1]."""
    k = len(tokens)
    # A pose line (class, box, K keypoints of x y conf, conf) is 6 + 3K numbers.
    if not (k == 6 or (k >= 8 and k % 2 == 0) or (k >= 9 and k % 3 == 0)):
        return False
    if not all(is_number_token(t) for t in tokens):
        return False
    values = [float(t) for t in tokens]
    c = values[0]
    return c >= 0 and c == int(c) and all(_COORD_MIN <= v <= _COORD_MAX for v in values[1:])


def _obb_prediction_line(tokens: list[str]) -> bool:
    """One line of ``predict`` output of an OBB model: ``class x1 y1 ... x4 y4 conf``."""
    return len(tokens) == 10 and _prediction_line(tokens)


def _task1_line(tokens: list[str]) -> bool:
    """``image score x1 y1 ... x4 y4``: any image token, then nine numbers."""
    return len(tokens) == 10 and all(is_number_token(t) for t in tokens[1:])


def _images_beside(labels_dir: str) -> str | None:
    """The images folder mirroring a labels folder (last ``labels`` part -> ``images``)."""
    parts = os.path.normpath(os.path.abspath(labels_dir)).split(os.sep)
    if "labels" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("labels")
    candidate = os.sep.join([*parts[:i], "images", *parts[i + 1 :]])
    return candidate if os.path.isdir(candidate) else None


# --------------------------------------------------------------------------- data.yaml


@dataclass(frozen=True)
class DataYaml:
    """What a data.yaml says, its paths resolved.

    Attributes:
        path: the yaml file.
        root: the dataset root folder.
        names: class names by index.
        data: the parsed mapping.
        warnings: how the root was found, when not the Ultralytics way.
    """

    path: str
    root: str
    names: tuple[str, ...]
    data: dict[str, Any]
    warnings: tuple[str, ...] = ()


def find_data_yaml(folder: str) -> str | None:
    """The data.yaml of a dataset folder: a known name, else its only ``.yaml``."""
    for name in YAML_NAMES:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    found = sorted(
        glob.glob(os.path.join(folder, "*.yaml")) + glob.glob(os.path.join(folder, "*.yml"))
    )
    return found[0] if len(found) == 1 else None


def read_data_yaml(path: str, split: str = "val") -> DataYaml:
    """Parse a data.yaml (PyYAML ``safe_load``: no code runs) and resolve its root for ``split``."""
    import yaml

    text = read_text_file(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(
            path, f"malformed YAML: {problem}", where=None if mark is None else mark.line + 1
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            path, f"expected a mapping with 'val' and 'names', found {type(data).__name__}"
        )
    names = _names(data, path)
    root, warnings = _dataset_root(data, path, split)
    return DataYaml(path, root, names, data, tuple(warnings))


def _names(data: dict[str, Any], path: str) -> tuple[str, ...]:
    """Class names by index from ``names`` (list or mapping) or ``nc``."""
    names, nc = data.get("names"), data.get("nc")
    if names is None and nc is None:
        raise InputError(path, "data.yaml has neither 'names' nor 'nc'")
    if names is None:
        if not isinstance(nc, int) or isinstance(nc, bool) or not 0 <= nc <= MAX_CLASSES:
            raise InputError(
                path,
                f"'nc' must be a whole number up to {MAX_CLASSES:,}, got {quoted(nc)}",
                where="nc",
            )
        return tuple(f"class_{i}" for i in range(nc))  # as Ultralytics names them
    if isinstance(names, dict):
        by_index: dict[int, str] = {}
        for key, value in names.items():
            try:
                i = int(key)
            except (TypeError, ValueError):
                raise InputError(
                    path, f"'names' keys must be class numbers, got {quoted(key)}", where="names"
                ) from None
            by_index[i] = str(value)
        if sorted(by_index) != list(range(len(by_index))):
            raise InputError(
                path,
                f"'names' keys must be 0..{len(by_index) - 1}, got {sorted(by_index)}",
                where="names",
            )
        out = tuple(by_index[i] for i in range(len(by_index)))
    elif isinstance(names, list):
        out = tuple(str(n) for n in names)
    else:
        raise InputError(
            path, f"'names' must be a list or a mapping, got {type(names).__name__}", where="names"
        )
    if nc is not None and nc != len(out):
        raise InputError(
            path, f"'names' has {len(out)} entries but 'nc' is {quoted(nc)}", where="nc"
        )
    return out


def _split_value(data: dict[str, Any], split: str, path: str) -> Any:
    value = data.get(split)
    if value is None and split == "val":
        value = data.get("validation")  # Ultralytics renames it to 'val'
    if not value:
        present = [k for k in ("train", "val", "validation", "test", "minival") if data.get(k)]
        raise InputError(
            path,
            f"data.yaml has no '{split}' split",
            hint=f"splits present: {', '.join(present) or 'none'} (choose one with the split option)",
        )
    if not isinstance(value, (str, list)) or (
        isinstance(value, list) and not all(isinstance(v, str) for v in value)
    ):
        raise InputError(
            path, f"'{split}' must be a path or a list of paths, got {quoted(value)}", where=split
        )
    return value


def _resolve_entries(root: str, value: str | list[str]) -> list[str]:
    """The split's paths under ``root`` (Ultralytics' rules, ``../`` fallback for a string)."""
    if isinstance(value, str):
        x = os.path.normpath(os.path.join(root, value))
        if not os.path.exists(x) and value.startswith("../"):
            x = os.path.normpath(os.path.join(root, value[3:]))  # Roboflow exports
        return [x]
    return [os.path.normpath(os.path.join(root, v)) for v in value]


def _dataset_root(data: dict[str, Any], path: str, split: str) -> tuple[str, list[str]]:
    """The root under which the split's paths exist, and a warning if not Ultralytics' own."""
    here = os.path.dirname(os.path.abspath(path))
    given = data.get("path")
    value = _split_value(data, split, path)
    if given:
        given = str(given)
        first = os.path.abspath(given)  # relative to the current folder, as Ultralytics has it
        candidates = [first]
        if not os.path.isabs(given):
            candidates.append(os.path.normpath(os.path.join(here, given)))
        candidates.append(here)
    else:
        candidates = [here]
    for root in dict.fromkeys(candidates):
        if all(os.path.exists(e) for e in _resolve_entries(root, value)):
            warnings = []
            if root != candidates[0]:
                warnings.append(
                    f"{path}: 'path: {given}' does not hold the '{split}' split from the current "
                    f"folder; using {root}"
                )
            return root, warnings
    missing = next(e for e in _resolve_entries(candidates[0], value) if not os.path.exists(e))
    hint = f"looked under: {', '.join(dict.fromkeys(candidates))}"
    if data.get("download"):
        hint += "; the dataset may not be downloaded (iou-eval never runs the 'download:' block)"
    raise InputError(path, f"the '{split}' split is not there: {missing}", where=split, hint=hint)


# --------------------------------------------------------------------------- images


def _is_image(name: str) -> bool:
    return name.rpartition(".")[-1].lower() in IMG_FORMATS


def split_images(entries: Sequence[str], source: str) -> list[str]:
    """The sorted image paths of split entries: folders (recursive), list files, images."""
    found: list[str] = []
    for entry in entries:
        if os.path.isdir(entry):
            found += glob.glob(os.path.join(entry, "**", "*.*"), recursive=True)
        elif os.path.isfile(entry) and _is_image(entry):
            found.append(entry)
        elif os.path.isfile(entry):
            found += _list_file(entry)
        else:
            raise InputError(source, f"split entry not found: {entry}")
    images = sorted(os.path.normpath(f) for f in found if _is_image(f))
    if not images:
        raise InputError(
            source,
            "no images in the split",
            hint=f"looked in: {', '.join(entries)}; image files end in {', '.join(sorted(IMG_FORMATS))}",
        )
    return images


def _list_file(path: str) -> list[str]:
    """Image paths of a list file: ``./x`` relative to its folder, others as written."""
    folder = os.path.dirname(os.path.abspath(path))
    out = []
    for line in read_text_file(path).split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("./"):
            out.append(os.path.join(folder, line[2:]))
        elif os.path.isabs(line) or os.path.exists(line):
            out.append(line)  # Ultralytics keeps other lines relative to the current folder
        else:
            out.append(os.path.join(folder, line))
    return out


def img2label_path(image: str) -> str:
    """Ultralytics' ``img2label_paths``: the last ``/images/`` -> ``/labels/``, extension -> ``.txt``."""
    sa, sb = f"{os.sep}images{os.sep}", f"{os.sep}labels{os.sep}"
    return sb.join(image.rsplit(sa, 1)).rsplit(".", 1)[0] + ".txt"


def _sizes(images: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[tuple[str, str]]]:
    """Width and height ``[I]`` of each image (NaN where unreadable) and the failures."""
    w = np.full(len(images), np.nan)
    h = np.full(len(images), np.nan)
    failed: list[tuple[str, str]] = []
    for i, p in enumerate(images):
        try:
            w[i], h[i] = image_size(p)
        except InputError as exc:
            failed.append((p, exc.message))
    return w, h, failed


# --------------------------------------------------------------------------- label lines


@dataclass
class _Rows:
    """Label lines read from several files, before numbers are parsed."""

    classes: list[str]
    file_of: list[int]
    line_of: list[int]
    box_cells: list[str]  # 4 (gt) or 5 (pred) tokens per box row
    box_rows: list[int]  # the row numbers of box rows
    polygons: dict[int, np.ndarray]  # row -> flat coordinates (fractions)
    poly_scores: dict[int, float]
    # Read by the compiled column reader: [N, 5] (gt) or [N, 6] (pred) numbers, the class
    # first; every row a box row, classes checked (classes and box_cells are then left empty).
    numbers: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.classes) if self.numbers is None else len(self.numbers)


def _read_label_lines(files: Sequence[str | None], role: str, nc: int | None = None) -> _Rows:
    """Every data line of ``files`` (None: no label file), checked for its shape.

    The compiled column reader reads them when it can (box rows only, classes whole
    numbers in ``0..nc-1``); else, or on anything it is not sure of, the lines are read
    here, which also says what is wrong.
    """
    scanned = _scanned_label_lines(files, role, nc)
    if scanned is not None:
        return scanned
    pred = role == "pred"
    rows = _Rows([], [], [], [], [], {}, {})
    for fi, file in enumerate(files):
        if file is None or (not pred and not os.path.isfile(file)):
            continue
        for number, raw in enumerate(read_text_file(file).split("\n"), 1):
            tokens = raw.split()
            if not tokens:
                continue
            _check_shape(len(tokens), pred, file, number)
            r = len(rows.classes)
            rows.classes.append(tokens[0])
            rows.file_of.append(fi)
            rows.line_of.append(number)
            if len(tokens) == (6 if pred else 5):
                rows.box_cells.extend(tokens[1:])
                rows.box_rows.append(r)
                continue
            coords = tokens[1:-1] if pred else tokens[1:]
            rows.polygons[r] = _floats(coords, file, number, "polygon coordinate")
            if pred:
                rows.poly_scores[r] = float(_floats(tokens[-1:], file, number, "confidence")[0])
    return rows


def _scanned_label_lines(files: Sequence[str | None], role: str, nc: int | None) -> _Rows | None:
    """:func:`_read_label_lines` by the compiled column reader (files opened and read in C,
    the GIL released), or None: not built, switched off, a polygon row, a class that is not
    a class index, or anything else it is not sure of."""
    if not files or any(f is None for f in files):
        return None
    pred = role == "pred"
    k = 6 if pred else 5
    # Ultralytics reads '#' as a token like any other; a ground truth's missing label file
    # is an image without objects.
    options = NO_COMMENTS | (0 if pred else MISSING_EMPTY)
    got = scan_text_files([str(f) for f in files], NUMBER * k, k, options)
    if got is None:
        return None
    numbers = np.column_stack([got.array(i) for i in range(k)])
    classes = numbers[:, 0]
    bad = (classes != np.floor(classes)) | (classes < 0)  # finite: the reader gives up on others
    if nc is not None:
        bad |= classes >= nc
    if bad.any():
        return None  # the Python path names the line
    rows = np.arange(len(numbers), dtype=np.int64)
    return _Rows([], got.file_of, got.lines, [], rows, {}, {}, numbers)  # type: ignore[arg-type]


def _check_shape(k: int, pred: bool, file: str, line: int) -> None:
    if pred:
        # A 1-point contour (class x y conf) is a polygon without pixels, warned about.
        if k == 6 or k == 4 or (k >= 8 and k % 2 == 0):
            return
        hint = (
            f"a pose line (keypoints)? {KEYPOINT_HINT}"
            if k >= 9 and k % 3 == 0
            else "predictions need a confidence last; is this the ground truth?"
            if k == 5 or (k >= 7 and k % 2 == 1)
            else None
        )
        expected = "'class cx cy w h conf' (6 numbers) or 'class x1 y1 ... xn yn conf'"
    else:
        if k == 5 or k == 3 or (k >= 7 and k % 2 == 1):
            return
        hint = (
            "6 numbers look like a prediction 'class cx cy w h conf'; is this the predictions folder?"
            if k == 6
            else "a polygon needs x y pairs of at least 3 points"
        )
        expected = "'class cx cy w h' (5 numbers) or a polygon 'class x1 y1 x2 y2 x3 y3 ...'"
    raise InputError(file, f"expected {expected}, got {k} numbers", where=line, hint=hint)


def _floats(tokens: Sequence[str], file: str, line: int, what: str) -> np.ndarray:
    try:
        values = strict_floats(tokens)
    except ValueError:
        bad = next(t for t in tokens if not _is_float(t))
        raise InputError(
            file, f"expected a number for {what}, got {quote_token(bad)}", where=line
        ) from None
    if not np.isfinite(values).all():
        bad = tokens[int(np.flatnonzero(~np.isfinite(values))[0])]
        raise InputError(
            file, f"expected a finite number for {what}, got {quote_token(bad)}", where=line
        )
    return values


def _is_float(token: str) -> bool:
    return is_number_token(token)


def _class_column(rows: _Rows, files: Sequence[str | None], nc: int | None) -> np.ndarray:
    """``[N]`` int64 class numbers; whole numbers in ``0..nc-1`` (when ``nc`` is known)."""
    if rows.numbers is not None:
        return rows.numbers[:, 0].astype(np.int64)
    n = len(rows.classes)

    def where(r: int) -> tuple[str, int]:
        return str(files[rows.file_of[r]]), rows.line_of[r]

    try:
        values = strict_floats(rows.classes).reshape(n)
    except ValueError:
        r = next(i for i, t in enumerate(rows.classes) if not _is_float(t))
        file, line = where(r)
        raise InputError(
            file,
            f"expected a class number first, got {quote_token(rows.classes[r])}",
            where=line,
            hint="YOLO label lines start with the class index (0-based) into the dataset's names",
        ) from None
    bad = ~np.isfinite(values) | (values != np.floor(values)) | (values < 0)
    if nc is not None:
        bad |= values >= nc
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        file, line = where(r)
        known = f" (the dataset has {nc} classes: 0..{nc - 1})" if nc is not None else ""
        raise InputError(
            file, f"class {quote_token(rows.classes[r])} is not a class index{known}", where=line
        )
    return values.astype(np.int64)


def _box_columns(rows: _Rows, files: Sequence[str | None], pred: bool) -> np.ndarray:
    """The box rows' numbers: ``[B, 4]`` (``cx cy w h``) or ``[B, 5]`` for predictions."""
    if rows.numbers is not None:
        return np.ascontiguousarray(rows.numbers[:, 1:])
    k = 5 if pred else 4
    b = len(rows.box_rows)
    try:
        values = strict_floats(rows.box_cells).reshape(b, k)
    except ValueError:
        i = next(i for i, t in enumerate(rows.box_cells) if not _is_float(t))
        r = rows.box_rows[i // k]
        raise InputError(
            str(files[rows.file_of[r]]),
            f"expected a number, got {quote_token(rows.box_cells[i])}",
            where=rows.line_of[r],
        ) from None
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        r = rows.box_rows[i]
        raise InputError(
            str(files[rows.file_of[r]]),
            f"expected finite numbers, got {' '.join(rows.box_cells[i * k : i * k + k])}",
            where=rows.line_of[r],
        )
    return values


def _xyxy_fractions(rows: _Rows, cxcywh: np.ndarray) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Every row's box as ``xyxy`` fractions ``[N, 4]`` and its polygon (fractions, or None).

    The one place rows become box columns: a box row's corners are
    ``cx -/+ w/2`` (as Ultralytics' ``xywhn2xyxy``), a polygon row's box its bounds.
    """
    n = len(rows)
    xyxy = np.empty((n, 4), dtype=np.float64)
    at = np.asarray(rows.box_rows, dtype=np.int64)
    if len(at):
        cx, cy, w, h = cxcywh.T
        corners = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
        if len(at) == n:  # every row a box row, in order (at is 0..n-1)
            xyxy = corners
        else:
            xyxy[at] = corners
    polygons: list[np.ndarray | None] = [None] * n
    for r, flat in rows.polygons.items():
        xyxy[r] = flat[0::2].min(), flat[1::2].min(), flat[0::2].max(), flat[1::2].max()
        polygons[r] = flat
    return xyxy, polygons


def _scaled(
    rows: _Rows, polygons: list[np.ndarray | None], width: np.ndarray, height: np.ndarray
) -> list[np.ndarray | None]:
    """:func:`scale_polygons`, without a loop over the rows when every row is a box."""
    if rows.polygons:
        return scale_polygons(polygons, width, height)
    return list(polygons)


def _check_fractions(
    xyxy: np.ndarray,
    rows: _Rows,
    files: Sequence[str | None],
    polygons: list,
    cxcywh: np.ndarray,
    source: str,
) -> list[str]:
    """Refuse coordinates that are not fractions; note boxes that run past the image's edge.

    Ultralytics checks a box row's own numbers (``cx cy w h`` in [0, 1]), not
    its corners: ``1 0.95 0.5 0.2 0.3`` reaches x = 1.05 and is accepted,
    read as written.  A row is refused when its numbers and its corners
    both leave [0, 1] by more than 1 %; a polygon's numbers are its corners.

    Args:
        xyxy: ``[N, 4]`` every row's box (fractions).
        cxcywh: ``[B, 4]`` the numbers of the box rows (``rows.box_rows``).

    Returns:
        A note counting the boxes read as written past the edge (or nothing).
    """
    past = ((xyxy < _COORD_MIN) | (xyxy > _COORD_MAX)).any(axis=1)
    numbers_ok = np.zeros(len(xyxy), dtype=bool)
    at = np.asarray(rows.box_rows, dtype=np.int64)
    if len(at):
        numbers_ok[at] = ((cxcywh >= _COORD_MIN) & (cxcywh <= _COORD_MAX)).all(axis=1)
    bad = past & ~numbers_ok
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        what = "polygon" if polygons[r] is not None else "box"
        raise InputError(
            str(files[rows.file_of[r]]),
            f"{what} coordinates must be fractions of the image size in [0, 1], this {what} "
            f"spans {' '.join(f'{v:g}' for v in xyxy[r])}",
            where=rows.line_of[r],
            hint="Ultralytics leaves such an image out as corrupt; pixel coordinates are the "
            "txt format's (--gt-format txt)",
        )
    if not past.any():
        return []
    r = int(np.flatnonzero(past)[0])
    return [
        f"{source}: {int(past.sum())} box(es) run past the image's edge, their numbers in "
        f"[0, 1] (first: {files[rows.file_of[r]]}:{rows.line_of[r]}: x1 y1 x2 y2 = "
        f"{' '.join(f'{v:g}' for v in xyxy[r])}); read as written, as Ultralytics reads them"
    ]


# --------------------------------------------------------------------------- the score column


@dataclass(frozen=True)
class ScoreColumn:
    """Which number of a 6-number prediction line is the confidence.

    Attributes:
        last: True for Ultralytics' ``class cx cy w h conf``; False for
            ``class score cx cy w h`` (the ``txt`` format's order).
        doubt: why the other reading was possible too (None when the
            columns leave no doubt).
        evidence: what decided.
    """

    last: bool
    doubt: str | None
    evidence: str


def _inside(boxes: np.ndarray) -> np.ndarray:
    """``[N]`` whether ``cx cy w h`` fractions lie within the image (1 % tolerance)."""
    cx, cy, w, h = boxes.T
    return (
        (w >= 0)
        & (h >= 0)
        & (cx - w / 2 >= _COORD_MIN)
        & (cx + w / 2 <= _COORD_MAX)
        & (cy - h / 2 >= _COORD_MIN)
        & (cy + h / 2 <= _COORD_MAX)
    )


def _non_increasing(score: np.ndarray, file_of: np.ndarray) -> bool | None:
    """Whether ``score`` never rises within a file; None without two rows in one file."""
    same = file_of[1:] == file_of[:-1]
    if not same.any():
        return None
    return bool((score[1:][same] <= score[:-1][same]).all())


def guess_score_column(values: np.ndarray, file_of: np.ndarray) -> ScoreColumn:
    """Decide from whole columns which of the 2nd and 6th numbers is the confidence.

    Args:
        values: ``[N, 6]`` the numbers of every 6-number line (class first).
        file_of: ``[N]`` the file each line came from (lines in file order).

    A confidence lies in [0, 1]; box fractions keep the box inside the
    image; Ultralytics writes a file's detections by falling confidence;
    a column of 1s is no confidence.  The 6th column wins ties.
    """
    c2, c6 = values[:, 1], values[:, 5]
    ok_last = bool(((c6 >= 0) & (c6 <= 1)).all())
    ok_second = bool(((c2 >= 0) & (c2 <= 1)).all())
    if not ok_second:
        return ScoreColumn(True, None, "the 2nd numbers exceed [0, 1]: they are no score")
    if not ok_last:
        return ScoreColumn(False, None, "the 6th numbers exceed [0, 1]: they are no confidence")
    in_last = int(_inside(values[:, 1:5]).sum())
    in_second = int(_inside(values[:, 2:6]).sum())
    n = len(values)
    if in_last != in_second:
        last = in_last > in_second
        worse = (n - in_second) if last else (n - in_last)
        other = "2nd" if last else "6th"
        return ScoreColumn(
            last,
            None,
            f"read with the {other} number as the score, {worse} of {n} boxes would leave the image",
        )
    mono_last = _non_increasing(c6, file_of)
    mono_second = _non_increasing(c2, file_of)
    if mono_last and not mono_second:
        return ScoreColumn(
            True, None, "the 6th numbers fall within every file, as Ultralytics sorts them"
        )
    if mono_second and not mono_last:
        return ScoreColumn(False, None, "the 2nd numbers fall within every file (sorted scores)")
    if bool((c6 == 1).all()) != bool((c2 == 1).all()):
        last = not bool((c6 == 1).all())
        return ScoreColumn(
            last, None, f"the {'2nd' if last else '6th'} numbers are all 1: no score"
        )
    return ScoreColumn(
        True,
        "both the 2nd and the 6th numbers lie in [0, 1] and either reading keeps every box inside "
        "the image",
        "the Ultralytics order is the default",
    )


def _score_warning(source: str, guess: ScoreColumn) -> list[str]:
    from iou_eval.data.doubts import Doubt

    if guess.last and guess.doubt is None:
        return []
    if guess.last:
        return [
            Doubt(
                f"{source}: read 6-number lines as Ultralytics' 'class cx cy w h conf' (confidence "
                f"last), but {guess.doubt}; if the score is the 2nd number ('class score cx cy w h'), "
                "pass --pred-format txt --normalized"
            )
        ]
    return [
        Doubt(f"{source}: read 6-number lines as 'class score cx cy w h' (score 2nd), not "
              f"Ultralytics' 'class cx cy w h conf', because {guess.evidence}; the txt format reads "
              "this order too (--pred-format txt --normalized)")
    ]  # fmt: skip


# --------------------------------------------------------------------------- loading


def load_yolo(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read a YOLO dataset (ground truth) or Ultralytics predictions (format ``yolo``).

    Args:
        path: ground truth: a data.yaml, a dataset folder, or a labels
            folder with its images beside it; predictions: a folder of
            per-image ``.txt`` files (or the run folder holding ``labels/``),
            or a ``predictions.json`` (read as COCO results).
        role: ``"gt"`` or ``"pred"``.
        options: ``split`` (data.yaml split, default ``val``), ``names``
            (class names by index, for folders without a data.yaml).

    Returns:
        A :class:`Dataset` whose boxes are in pixels of the upright image;
        rules in the module docstring.
    """
    if role == "pred" and os.path.isfile(path) and strip_gz(path).lower().endswith(".json"):
        from iou_eval.io.loaders.coco import load_coco

        return load_coco(path, role, options)
    from iou_eval.io.loaders.yolo_obb import oriented  # OBB: every line a 4-point polygon

    return oriented(*read_yolo(path, role, options))


def read_yolo(
    path: str, role: str, options: LoadOptions
) -> tuple[Dataset, list[np.ndarray | None]]:
    """:func:`load_yolo` (without the JSON case) and each row's polygon.

    Returns:
        The dataset and ``N`` flat float64 polygons ``[x1, y1, x2, y2, ...]``
        in pixels (fractions where an image's size is unknown), None for box rows.
    """
    if role == "pred":
        return _load_predictions(path, options)
    images, names, label_files, source_warnings, root = _ground_truth_files(path, options)
    return _load_ground_truth(
        path, images, names, label_files, source_warnings, root, options.masks
    )


def _ground_truth_files(
    path: str, options: LoadOptions
) -> tuple[list[str], tuple[str, ...] | None, list[str], list[str], str]:
    """Images of the split, class names, label file per image, warnings, and the root."""
    split = options.split or "val"
    yaml_path = None
    if os.path.isfile(path):
        yaml_path = path
    elif os.path.isdir(path):
        yaml_path = find_data_yaml(path)
    else:
        raise InputError(path, "no such file or folder")
    warnings: list[str] = []
    if yaml_path is not None:
        info = read_data_yaml(yaml_path, split)
        warnings += info.warnings
        entries = _resolve_entries(info.root, _split_value(info.data, split, yaml_path))
        images = split_images(entries, yaml_path)
        names: tuple[str, ...] | None = info.names
        if options.names and tuple(options.names) != info.names:
            warnings.append(f"{yaml_path}: --names differs from the data.yaml names; using --names")
            names = tuple(options.names)
        root = info.root
    else:
        images_dir = _images_folder(path)
        images = split_images([images_dir], path)
        names = tuple(options.names) if options.names else _classes_file(path)
        root = os.path.dirname(images_dir)
    return images, names, [img2label_path(p) for p in images], warnings, root


def _images_folder(path: str) -> str:
    if os.path.isdir(os.path.join(path, "images")) and os.path.isdir(os.path.join(path, "labels")):
        return os.path.join(path, "images")
    beside = _images_beside(path)
    if beside is None:
        raise InputError(
            path,
            "YOLO labels need their images (image sizes come from them): no images folder "
            "mirrors this labels folder",
            hint="give the data.yaml, or a folder with images/ and labels/; labels without "
            "images can be read as the txt format with --normalized and --image-size WxH",
        )
    return beside


def _classes_file(labels_dir: str) -> tuple[str, ...] | None:
    for folder in (labels_dir, os.path.join(labels_dir, "labels")):
        f = os.path.join(folder, CLASSES_FILE)
        if os.path.isfile(f):
            return tuple(ln.strip() for ln in read_text_file(f).split("\n") if ln.strip())
    return None


def _load_ground_truth(
    path: str,
    images: list[str],
    names: tuple[str, ...] | None,
    label_files: list[str],
    warnings: list[str],
    root: str,
    masks: bool = False,
) -> tuple[Dataset, list[np.ndarray | None]]:
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
    rows = _read_label_lines(label_files, "gt", None if names is None else len(names))
    classes = _class_column(rows, label_files, None if names is None else len(names))
    boxes = _box_columns(rows, label_files, pred=False)
    xyxy, polygons = _xyxy_fractions(rows, boxes)
    warnings += _check_fractions(xyxy, rows, label_files, polygons, boxes, path)
    file_of = np.asarray(rows.file_of, dtype=np.int64)
    keep_rows, dropped = _unique_rows(file_of, classes, xyxy, polygons)
    if dropped:
        r = int(np.flatnonzero(~keep_rows)[0])
        warnings.append(
            f"{path}: {dropped} duplicate label line(s) dropped, as Ultralytics drops them "
            f"(first: {label_files[rows.file_of[r]]}:{rows.line_of[r]})"
        )
    sel = np.flatnonzero(keep_rows)
    file_names = _relative_names(images, root)
    table = ImageTable.build(ids, file_names, width, height)
    polygons = _scaled(rows, [polygons[i] for i in sel], width[file_of[sel]], height[file_of[sel]])
    lines = np.asarray(rows.line_of, dtype=np.int64)[sel]
    places = _Places(label_files, file_of[sel], lines)
    if masks:
        _refuse_box_rows(polygons, places)
    column, area, notes = _polygon_areas(
        polygons, height[file_of[sel]], width[file_of[sel]], places
    )
    dataset = _assemble(
        path, table, _categories(names, classes), file_of[sel], classes[sel], xyxy[sel], None,
        lines, file_of[sel], label_files, [*warnings, *notes], area=area,
    )  # fmt: skip
    if masks and column is not None and len(column) == len(dataset):
        dataset = replace(dataset, masks=places.pending(polygons, fractions=False, column=column))
    return dataset, polygons


def _relative_names(images: Sequence[str], root: str) -> list[str]:
    """``os.path.relpath(p, root)`` of each image path that starts with ``root`` (else ``p``):
    a path under ``root`` once made absolute is cut after it, the others go to relpath."""
    base = os.path.abspath(root)
    prefix = base.rstrip(os.sep) + os.sep
    out = []
    for p in images:
        if not p.startswith(root):
            out.append(p)
            continue
        a = os.path.abspath(p)
        out.append(a[len(prefix) :] if a.startswith(prefix) else os.path.relpath(p, root))
    return out


@dataclass(frozen=True)
class _Places:
    """Where each row came from: ``files``, ``file_of[N]``, ``lines[N]``."""

    files: Sequence[str]
    file_of: np.ndarray
    lines: np.ndarray

    def at(self, row: int) -> tuple[str, int]:
        return str(self.files[int(self.file_of[row])]), int(self.lines[row])

    def pending(self, polygons: Sequence[np.ndarray | None], fractions: bool, column: Any = None):
        """The rows' polygons as :class:`~iou_eval.geometry.segm.PendingPolygons`."""
        from iou_eval.geometry.segm import PendingPolygons

        return PendingPolygons(
            polygons=object_column(polygons),
            fractions=fractions,
            files=tuple(str(f) for f in self.files),
            origin_file=self.file_of.astype(np.int32),
            origins=self.lines.astype(np.int64),
            origin_label="line",
            column=column,
        )


def _refuse_box_rows(polygons: Sequence[np.ndarray | None], places: _Places) -> None:
    """With masks scored, every object of a segmentation dataset needs its polygon.

    A file that mixes box rows and polygon rows is refused, naming the file
    and the box row (Ultralytics would read its 4 numbers as a 2-point outline).
    """
    is_box = np.array([p is None for p in polygons], dtype=bool)
    if not is_box.any() or is_box.all():
        return  # boxes only: no masks, said when masks are asked for
    r = int(np.flatnonzero(is_box)[0])
    file, line = places.at(r)
    same_file = places.file_of == places.file_of[r]
    mixed = bool((~is_box & same_file).any())
    raise InputError(
        file,
        ("this file mixes box rows and polygon rows" if mixed else "a box row in a dataset of polygons")
        + ": with --iou-type segm every object needs its polygon, this row is 'class cx cy w h'",
        where=line,
        hint="Ultralytics would read its 4 numbers as a 2-point outline; write the object as a polygon "
        "or score boxes (--iou-type bbox)",
    )  # fmt: skip


def _polygon_areas(
    polygons: Sequence[np.ndarray | None], height: np.ndarray, width: np.ndarray, places: _Places
) -> tuple[Any, np.ndarray | None, list[str]]:
    """The masks of the polygon rows at their images' ``height[N] x width[N]`` and the area column.

    A polygon's ``area`` is its pycocotools mask area (CONVENTIONS, YOLO-seg
    input): the one area of the COCO file built from it, serving the area
    ranges of ``bbox`` and ``segm`` alike.  Box rows keep ``w * h`` (NaN here).

    Returns:
        ``(MaskColumn of the polygon rows or None, area[N] or None, warnings)``.
    """
    at = np.flatnonzero(np.array([p is not None for p in polygons], dtype=bool))
    if not len(at):
        return None, None, []
    from iou_eval.geometry.masks import polygon_rles

    polys = [polygons[i] for i in at.tolist()]
    column, _ = polygon_rles(polys, height[at], width[at], origins=at, origin_label="line")
    area = np.full(len(polygons), np.nan)
    area[at] = column.area
    short = [i for i, p in zip(at.tolist(), polys, strict=True) if len(p) < 6]
    notes = []
    if short:
        file, line = places.at(short[0])
        notes.append(
            f"{len(short)} polygon(s) of 1 or 2 points have no pixels (first: {file}:{line})"
        )
    return column, area, notes


def _check_unique(ids: list[str], images: list[str]) -> None:
    seen: dict[str, str] = {}
    for key, p in zip(ids, images, strict=True):
        if key in seen:
            raise InputError(
                p,
                f"image id {quoted(key)} (the file stem) is also the id of {seen[key]}",
                hint="predictions name images by stem: rename one of the images",
            )
        seen[key] = p


def _unique_rows(
    file_of: np.ndarray, classes: np.ndarray, xyxy: np.ndarray, polygons: list
) -> tuple[np.ndarray, int]:
    """``keep[N]``: False for a repeat of an earlier box line of the same image and class."""
    keep = np.ones(len(classes), dtype=bool)
    boxes = np.array([p is None for p in polygons], dtype=bool)
    if not boxes.any():
        return keep, 0
    at = np.flatnonzero(boxes)
    key = np.column_stack([file_of[at], classes[at], xyxy[at]])
    # np.unique's row sort is slow: it runs on the rows whose numbers hash alike, the only
    # ones that can repeat another (+ 0.0: -0.0 and 0.0 are equal numbers, one hash).
    bits = (key + 0.0).view(np.uint64)
    h = np.zeros(len(at), dtype=np.uint64)
    for j in range(bits.shape[1]):
        h = (h ^ bits[:, j]) * np.uint64(0x100000001B3)
    _, inverse, counts = np.unique(h, return_inverse=True, return_counts=True)
    alike = np.flatnonzero(counts[inverse] > 1)
    if not len(alike):
        return keep, 0
    _, first = np.unique(key[alike], axis=0, return_index=True)
    repeat = np.ones(len(alike), dtype=bool)
    repeat[first] = False
    keep[at[alike[repeat]]] = False
    return keep, int(repeat.sum())


def _categories(names: tuple[str, ...] | None, classes: np.ndarray) -> CategoryTable:
    """Ids are class numbers: every named class, else the classes present (sorted)."""
    if names is not None:
        return CategoryTable(tuple(range(len(names))), tuple(names))
    present = sorted({int(c) for c in np.unique(classes)})
    return CategoryTable(tuple(present), tuple(str(c) for c in present))


def _assemble(
    path: str,
    images: ImageTable,
    categories: CategoryTable,
    image_idx: np.ndarray,
    classes: np.ndarray,
    xyxy: np.ndarray,
    score: np.ndarray | None,
    origin: np.ndarray,
    origin_file: np.ndarray,
    files: Sequence[str],
    warnings: Sequence[str],
    area: np.ndarray | None = None,
) -> Dataset:
    # Category ids are sorted class numbers: a row's index is found by bisection.
    ids = np.asarray(categories.ids, dtype=np.int64)
    category_idx = np.searchsorted(ids, classes).astype(np.int64)
    return assemble(
        source=path,
        fmt="yolo",
        images=images,
        categories=categories,
        image_idx=image_idx,
        category_idx=category_idx,
        boxes=xyxy,
        box_format=BoxFormat.XYXY,
        normalized=True,
        score=score,
        # A ground truth's sizes are known: its areas are pixels, as the boxes become.
        area=area,
        origin=origin,
        origin_file=origin_file,
        files=files,
        origin_label="line",
        warnings=warnings,
    )


def _load_predictions(path: str, options: LoadOptions) -> tuple[Dataset, list[np.ndarray | None]]:
    folder = path
    labels = os.path.join(path, "labels")
    if os.path.isdir(labels) and not any(e.lower().endswith(".txt") for e in list_folder(path)):
        folder = labels  # the run folder of `predict`: its labels/ holds the files
    files = _prediction_files(folder)
    names = tuple(options.names) if options.names else None
    rows = _read_label_lines(files, "pred", None if names is None else len(names))
    classes = _class_column(rows, files, None if names is None else len(names))
    values = _box_columns(rows, files, pred=True)
    warnings: list[str] = []
    n = len(rows)
    score = np.empty(n, dtype=np.float64)
    at = np.asarray(rows.box_rows, dtype=np.int64)
    cxcywh = values[:, :4]
    if len(at):
        file_of_boxes = np.asarray(rows.file_of, dtype=np.int64)[at]
        with_class = np.column_stack([np.zeros(len(at)), values])
        guess = guess_score_column(with_class, file_of_boxes)
        if guess.last:
            cxcywh, score[at] = values[:, :4], values[:, 4]
        else:
            cxcywh, score[at] = values[:, 1:5], values[:, 0]
        warnings += _score_warning(path, guess)
    for r, s in rows.poly_scores.items():
        score[r] = s
    xyxy, polygons = _xyxy_fractions(rows, cxcywh)
    warnings += _check_fractions(xyxy, rows, files, polygons, cxcywh, path)
    ids = [os.path.splitext(strip_gz(os.path.basename(f)))[0] for f in files]
    width, height = _prediction_sizes(folder, ids, options)
    file_of = np.asarray(rows.file_of, dtype=np.int64)
    table = ImageTable.build(ids, [strip_gz(os.path.basename(f)) for f in files], width, height)
    known = np.isfinite(width[file_of]) & np.isfinite(height[file_of])
    scaled = _scaled(rows, polygons, np.where(known, width[file_of], 1.0), np.where(known, height[file_of], 1.0))  # fmt: skip
    lines = np.asarray(rows.line_of, dtype=np.int64)
    dataset = _assemble(
        path, table, _categories(names, classes), file_of, classes, xyxy, score,
        lines, file_of, files, warnings,
    )  # fmt: skip
    if options.masks and n:
        outlines, boxed = box_outlines(polygons, xyxy)
        notes = []
        if boxed:
            notes.append(
                f"{path}: {boxed} prediction(s) are boxes, not polygons: scored as masks of "
                "their boxes (as pycocotools' loadRes gives a result without a segmentation)"
            )
        pending = _Places(files, file_of, lines).pending(outlines, fractions=True)
        dataset = replace(dataset, masks=pending, warnings=(*dataset.warnings, *notes))
    return dataset, scaled


def _prediction_files(folder: str) -> list[str]:
    if not os.path.exists(folder):
        raise InputError(folder, "no such file or folder")
    if not os.path.isdir(folder):
        return [folder]
    entries = sorted(list_folder(folder))
    files = [
        os.path.join(folder, e)
        for e in entries
        if strip_gz(e.lower()).endswith(".txt")
        and not e.startswith(".")
        and e != CLASSES_FILE
        and os.path.isfile(os.path.join(folder, e))
    ]
    if not files:
        raise InputError(
            folder,
            "expected Ultralytics prediction files (<image>.txt) in this folder, found none",
            hint=f"found: {', '.join(entries[:5]) or 'nothing'}",
        )
    return files


def _prediction_sizes(
    folder: str, ids: Sequence[str], options: LoadOptions
) -> tuple[np.ndarray, np.ndarray]:
    """``[I]`` sizes: the images Ultralytics saves beside ``labels/``, else the ground truth's.

    Unknown sizes stay NaN: the boxes are then fractions to be scaled by the
    ground truth's sizes when the two are aligned.
    """
    n = len(ids)
    width, height = np.full(n, np.nan), np.full(n, np.nan)
    parent = os.path.dirname(os.path.normpath(os.path.abspath(folder)))
    beside: dict[str, str] = {}
    if os.path.isdir(parent):
        for e in sorted(list_folder(parent)):
            if _is_image(e):
                beside.setdefault(os.path.splitext(e)[0], os.path.join(parent, e))
    for i, key in enumerate(ids):
        if key in beside:
            width[i], height[i] = image_size(beside[key])
    return width, height
