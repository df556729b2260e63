"""DOTA: its ground truth (``labelTxt/``) and the devkit's task-1 results (``Task1_<class>.txt``).

Ground truth (format ``dota``): one text file per image, named by the
image's stem (``P0003.txt`` is the image ``P0003``); ``path`` is one such
file, a folder of them, or a folder holding ``labelTxt/``.  Lines:

- ``imagesource:GoogleEarth`` and ``gsd:0.146`` (optional, first) are read
  over;
- ``x1 y1 x2 y2 x3 y3 x4 y4 class difficult``: the four corners in pixels,
  the class name, and ``difficult`` (an integer, not 0: difficult; the
  field may be left out, as the devkit allows).

A file without objects is an image without objects.  Categories are the
class names, in the DOTA devkit's order when every name is in one of its
lists (DOTA-v1.0's 15 classes, v1.5, v2.0; its mAP is summed in that
order), else sorted; ``--names`` gives the list instead.

Predictions (format ``dota-results``): the devkit's task-1 files, one per
class, ``Task1_<class>.txt``, lines ``image score x1 y1 x2 y2 x3 y3 x4 y4``;
``path`` is one file or a folder of them.

Corners go round the box in either winding, from any corner; corners in a
crossing order are put in order with a warning; corners that do not make a
convex quadrilateral are an error naming the file and line
(:mod:`iou_eval.data.oriented`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np

from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, normalize_id
from iou_eval.data.oriented import DOTA_CLASS_LISTS, assemble_oriented
from iou_eval.errors import InputError
from iou_eval.escape import quoted
from iou_eval.io.loaders.common import LoadOptions, folder_files
from iou_eval.io.loaders.scan import DOTA_HEADER, Codes, scan_text_files
from iou_eval.io.loaders.text import _lines as data_lines
from iou_eval.io.loaders.text import _located_numbers as located_numbers

LABEL_DIR = "labelTxt"
_HEADER = re.compile(r"^(imagesource|gsd)\s*:", re.IGNORECASE)
_TASK1 = re.compile(r"^Task1_(.+)\.txt$", re.IGNORECASE)
_CORNERS = ("x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4")
_GT_LINE = "'x1 y1 x2 y2 x3 y3 x4 y4 class difficult' (10 fields, difficult optional)"


# --------------------------------------------------------------------------- detection


def _first_data_line(head: bytes) -> list[str] | None:
    """The tokens of the first line of ``head`` that is neither blank nor a header (None: none)."""
    text = head.decode("utf-8", "replace")
    for line in text.split("\n")[:-1] if len(head) >= 4096 else text.split("\n"):
        tokens = line.split()
        if tokens and not _HEADER.match(line.strip()):
            return tokens
    return None


def _is_number(token: str) -> bool:
    from iou_eval.numbers import is_number_token

    return is_number_token(token)


def _is_integer(token: str) -> bool:
    # One sign at most, as int() takes it: "+-1" is not an integer.
    t = token[1:] if token[:1] in ("+", "-") else token
    return t.isascii() and t.isdigit()


def dota_head(head: bytes) -> bool:
    """Whether the first bytes of a text file read like a DOTA label file."""
    tokens = _first_data_line(head)
    if tokens is None:
        return bool(_HEADER.match(head.decode("utf-8", "replace").strip()))
    if len(tokens) not in (9, 10) or not all(_is_number(t) for t in tokens[:8]):
        return False
    return not _is_number(tokens[8]) and (len(tokens) == 9 or _is_integer(tokens[9]))


def looks_like_dota(path: str) -> bool:
    """A DOTA label file, a folder of them, or a folder holding ``labelTxt/`` (judged by content)."""
    from iou_eval.io.source import read_head

    folder = _label_folder(path) if os.path.isdir(path) else None
    if os.path.isdir(path) and folder is None:
        return False
    files = [path] if folder is None else _txt_in(folder)[:8]
    for f in files:
        try:
            head = read_head(f)
        except (OSError, InputError):
            return False
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text:
            return dota_head(text)
    return False


def looks_like_task1(name: str) -> bool:
    """Whether a file name reads like the devkit's ``Task1_<class>.txt``."""
    return _TASK1.match(os.path.basename(name).removesuffix(".gz")) is not None


def looks_like_task1_folder(path: str) -> bool:
    """A folder whose text files are all ``Task1_<class>.txt``."""
    files = _txt_in(path)
    return bool(files) and all(looks_like_task1(f) for f in files)


def _txt_in(folder: str) -> list[str]:
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        os.path.join(folder, e)
        for e in entries
        if e.lower().removesuffix(".gz").endswith(".txt") and not e.startswith(".")
    ]


def _label_folder(path: str) -> str | None:
    """The folder of label files: ``path/labelTxt`` if there is one, else ``path`` if it holds .txt."""
    inner = os.path.join(path, LABEL_DIR)
    if os.path.isdir(inner):
        return inner
    return path if _txt_in(path) else None


# --------------------------------------------------------------------------- ground truth


def _categories(seen: Sequence[str], names: tuple[str, ...] | None) -> CategoryTable:
    """The classes: ``names``, else the seen ones in the devkit's list order (when they are in
    one of its lists), else sorted."""
    if names:
        order = list(dict.fromkeys(names))
    else:
        listed = next((lst for lst in DOTA_CLASS_LISTS.values() if set(seen) <= set(lst)), None)
        order = [c for c in listed if c in set(seen)] if listed else sorted(set(seen))
    return CategoryTable(tuple(order), tuple(order))


def _read_labels(
    files: Sequence[str],
) -> tuple[list[str], list[str], list[int], list[int], list[int], list[str]]:
    """Every object line: corner tokens, classes, difficult flags, file and line of each."""
    cells: list[str] = []
    classes: list[str] = []
    difficult: list[int] = []
    file_of: list[int] = []
    line_of: list[int] = []
    for fi, file in enumerate(files):
        for line, tokens in data_lines(file):
            if _HEADER.match(tokens[0]):
                continue
            if len(tokens) not in (9, 10):
                raise InputError(file, f"expected {_GT_LINE}, got {len(tokens)}", where=line)
            cells.extend(tokens[:8])
            classes.append(tokens[8])
            flag = tokens[9] if len(tokens) == 10 else "0"
            if not _is_integer(flag):
                raise InputError(
                    file, f"difficult must be an integer (0 or 1), got {quoted(flag)}", where=line
                )
            difficult.append(int(flag) != 0)
            file_of.append(fi)
            line_of.append(line)
    return cells, classes, difficult, file_of, line_of, list(files)


def load_dota(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read DOTA label files as ground truth (format ``dota``; rules in the module docstring).

    Args:
        path: a ``.txt`` file, a folder of them, or a folder holding ``labelTxt/``.
        role: ``"gt"``; as predictions, each box needs a score (``dota-results``).
        options: ``names`` (the class list, in order).

    Returns:
        A :class:`Dataset` of oriented boxes (pixels), one image per file.
    """
    if role != "gt":
        raise InputError(
            path,
            "DOTA label files hold ground truth (no scores)",
            hint="give predictions as the devkit's Task1_<class>.txt files (dota-results), "
            "YOLO-OBB .txt files or a CSV with cx, cy, w, h, angle, score",
        )
    folder = _label_folder(path) if os.path.isdir(path) else path
    files = folder_files(folder or path, ".txt", "DOTA label files (<image>.txt)")
    values, classes, difficult, origin_file, origin = _scanned_labels(files) or _label_rows(files)
    categories = _categories(classes.values, options.names)
    index = {c: i for i, c in enumerate(categories.ids)}
    class_idx = np.array([index.get(c, -1) for c in classes.values], dtype=np.int64)
    unknown = next((k for k, c in enumerate(classes.values) if c not in index), None)
    if unknown is not None:
        row = int(np.flatnonzero(classes.codes == unknown)[0])  # the first row of that class
        raise InputError(
            files[int(origin_file[row])],
            f"class {quoted(classes.values[unknown])} is not among the given names",
            where=int(origin[row]),
            hint=f"known: {', '.join(map(str, categories.ids[:10]))}",
        )
    stems = [os.path.splitext(os.path.basename(f).removesuffix(".gz"))[0] for f in files]
    ids = [normalize_id(s) for s in stems]
    _check_unique(ids, files)
    images = ImageTable.build(ids)
    return assemble_oriented(
        corners=values.reshape(-1, 4, 2), images=images,
        image_idx=origin_file.astype(np.int64), source=path, fmt="dota",
        categories=categories, category_idx=class_idx[classes.codes],
        ignore=difficult, origin=origin, origin_file=origin_file, files=files,
    )  # fmt: skip


_Rows = tuple[np.ndarray, Codes, np.ndarray, np.ndarray, np.ndarray]
_Task1Rows = tuple[np.ndarray, Codes, Codes, np.ndarray, np.ndarray]


def _label_rows(files: Sequence[str]) -> _Rows:
    """The Python path: corners ``[N, 8]``, classes, difficult ``[N]`` bool, each row's file
    ``[N]`` int32 and line ``[N]`` int64; errors located."""
    cells, classes, difficult, file_of, line_of, _ = _read_labels(files)
    values, origin_file, origin, _ = located_numbers(cells, _CORNERS, files, file_of, line_of)
    vocab = {c: i for i, c in enumerate(dict.fromkeys(classes))}
    codes = np.fromiter((vocab[c] for c in classes), np.int64, len(classes))
    return values, Codes(codes, list(vocab)), np.asarray(difficult, dtype=bool), origin_file, origin


def _scanned_labels(files: Sequence[str]) -> _Rows | None:
    """:func:`_label_rows` by the compiled reader, or None (not built, switched off, or a
    file it is not sure of: the Python path reads them all)."""
    got = scan_text_files(files, "f" * 8 + "si", 9, DOTA_HEADER)
    if got is None:
        return None
    values = np.stack([got.array(i) for i in range(8)], axis=1)
    flags = got.array(9).astype(bool)
    return values.reshape(-1, 8), got.codes(8), flags, got.file_of.astype(np.int32), got.lines


def _check_unique(ids: list, files: Sequence[str]) -> None:
    seen: dict = {}
    for key, f in zip(ids, files, strict=True):
        if key in seen:
            raise InputError(
                f, f"image id {quoted(key)} (the file stem) is also the id of {seen[key]}"
            )
        seen[key] = f


# --------------------------------------------------------------------------- task-1 results


def _task1_class(file: str, plain: bool = False) -> str:
    """The class a results file holds: ``Task1_<class>.txt``'s, or (``plain``) the file's stem."""
    if plain:
        return class_stem(file)
    m = _TASK1.match(os.path.basename(file).removesuffix(".gz"))
    if m is None or not m.group(1):
        raise InputError(
            file,
            "expected the class in the file name, as the devkit names it: Task1_<class>.txt",
        )
    return m.group(1)


def class_stem(file: str) -> str:
    """The stem of a results file named by its class alone (``ship.txt``: ``ship``)."""
    return os.path.splitext(os.path.basename(file).removesuffix(".gz"))[0]


def plain_named(ds: Dataset) -> bool:
    """Whether the task-1 results ``ds`` were read from files named by their class alone."""
    return ds.format == "dota-results" and not any(looks_like_task1(f) for f in ds.files)


def load_task1(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read the DOTA devkit's task-1 results (format ``dota-results``).

    Args:
        path: a folder of ``Task1_<class>.txt`` files, or one such file.
        role: must be ``"pred"``.
        options: ``names`` (the class list, in order).

    Returns:
        A :class:`Dataset` of oriented boxes with scores; images in order of
        first appearance, one category per file.
    """
    if role != "pred":
        raise InputError(
            path,
            "Task1 results hold detections (image score x1 y1 ... x4 y4), not ground truth",
            hint="give the ground truth as DOTA label files (labelTxt/)",
        )
    all_files = folder_files(path, ".txt", "the devkit's task-1 results (Task1_<class>.txt)")
    files = [f for f in all_files if looks_like_task1(f)]
    # Files named by their class alone (ship.txt): the class is the stem, said in a note.
    plain = not files and os.path.isdir(path)
    files = files or all_files
    rows = _scanned_task1(files, plain) or _task1_rows(files, plain)
    values, image, classes, origin_file, origin = rows
    categories = _categories(classes.values, options.names)
    index = {c: i for i, c in enumerate(categories.ids)}
    missing = next((k for k, c in enumerate(classes.values) if c not in index), None)
    if missing is not None:
        row = int(np.flatnonzero(classes.codes == missing)[0])
        raise InputError(
            files[int(origin_file[row])],
            f"class {quoted(classes.values[missing])} (from the file name) is not among the given names",
        )
    ids: dict = {}
    remap = np.array(
        [ids.setdefault(normalize_id(t), len(ids)) for t in image.values], dtype=np.int64
    )
    class_idx = np.array([index[c] for c in classes.values], dtype=np.int64)
    return assemble_oriented(
        corners=values[:, 1:].reshape(-1, 4, 2), images=ImageTable.build(list(ids)),
        image_idx=remap[image.codes] if len(remap) else np.zeros(0, np.int64),
        source=path, fmt="dota-results", categories=categories,
        category_idx=class_idx[classes.codes] if len(class_idx) else np.zeros(0, np.int64),
        score=values[:, 0], origin=origin, origin_file=origin_file, files=files,
        warnings=[_plain_note(path)] if plain else [],
    )  # fmt: skip


def _plain_note(path: str) -> str:
    return (
        f"{path}: read as the DOTA devkit's task-1 results ('image score x1 y1 ... x4 y4'), one "
        "file per class named by the class alone (the devkit names them Task1_<class>.txt)"
    )


def _task1_rows(files: Sequence[str], plain: bool = False) -> _Task1Rows:
    """The Python path: numbers ``[N, 9]`` (score, corners), image tokens as written, classes
    (from the file names), each row's file ``[N]`` int32 and line ``[N]`` int64; errors located."""
    raw: dict[str, int] = {}  # image tokens as written; "7" and "007" are one image later
    cells: list[str] = []
    classes: list[str] = []
    image_idx: list[int] = []
    file_of: list[int] = []
    line_of: list[int] = []
    for fi, file in enumerate(files):
        name = _task1_class(file, plain)
        for line, tokens in data_lines(file):
            if len(tokens) != 10:
                raise InputError(
                    file,
                    f"expected 'image score x1 y1 x2 y2 x3 y3 x4 y4' (10 fields), got {len(tokens)}",
                    where=line,
                )
            image_idx.append(raw.setdefault(tokens[0], len(raw)))
            cells.extend(tokens[1:])
            classes.append(name)
            file_of.append(fi)
            line_of.append(line)
    fields = ("score", *_CORNERS)
    values, origin_file, origin, _ = located_numbers(cells, fields, files, file_of, line_of)
    vocab = {c: i for i, c in enumerate(dict.fromkeys(classes))}
    codes = np.fromiter((vocab[c] for c in classes), np.int64, len(classes))
    image = Codes(np.asarray(image_idx, dtype=np.int64), list(raw))
    return values, image, Codes(codes, list(vocab)), origin_file, origin


def _scanned_task1(files: Sequence[str], plain: bool = False) -> _Task1Rows | None:
    """:func:`_task1_rows` by the compiled reader, or None (not built, switched off, or a
    file it is not sure of: the Python path reads them all and names what is wrong)."""
    got = scan_text_files(files, "s" + "f" * 9, 10)
    if got is None:
        return None
    names = [_task1_class(f, plain) for f in files]
    file_idx = got.file_of
    used = np.bincount(file_idx, minlength=len(files)) > 0
    vocab = {
        n: i for i, n in enumerate(dict.fromkeys(n for n, u in zip(names, used, strict=True) if u))
    }
    per_file = np.array([vocab.get(n, -1) for n in names], dtype=np.int64)
    values = np.stack([got.array(i) for i in range(1, 10)], axis=1)
    return (
        values.reshape(-1, 9),
        got.codes(0),
        Codes(per_file[file_idx] if len(per_file) else np.zeros(0, np.int64), list(vocab)),
        file_idx.astype(np.int32),
        got.lines,
    )
