"""Open Images CSV (format ``openimages``).

Ground truth (``*-annotations-bbox.csv``)::

    ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside
    000026e7ee790996,xclick,/m/07j7r,1,0.071905,0.145346,0.206591,0.391306,0,1,1,0,0

Predictions::

    ImageID,LabelName,Score,XMin,XMax,YMin,YMax

Choices:

- Columns are found by their header names (any case, any order); note the
  order ``XMin, XMax, YMin, YMax``.  Coordinates are fractions of the image
  in [0, 1] (1 % tolerance).  No image sizes are known: boxes stay
  fractions of a 1 x 1 image (``width = height = 1``).  IoU does not change
  when an image's axes are scaled, so AP and AR need no sizes; the area
  ranges (small/medium/large) need pixel sizes: without them the six
  numbers that read them are undefined (a note says so).  Sizes come from
  ``--images DIR`` or an ``images/`` folder beside the CSV
  (:func:`iou_eval.io.inputs.load_input`).
- ``IsGroupOf = 1`` marks a group box: a crowd region under the COCO
  rules.  The other flags are not read.  Flags are 1, 0 or -1 (unknown,
  read as 0); an empty flag is 0.
- Image ids are kept as written; the category id is ``LabelName`` (a MID
  such as ``/m/07j7r``), its name the display name from the class
  descriptions (``LabelName,DisplayName``, with or without a header).
- ``path`` may be a folder: its boxes CSV, and beside it an image list (a
  CSV with an ``ImageID`` column and no boxes, such as
  ``*-images-with-rotation.csv``: every image listed is an image, with or
  without boxes) and the class descriptions CSV.  ``options.names`` may
  also hold class-description lines (``/m/07j7r,Tree``), as ``--names``
  passes a file's lines.
- The delimiter is the header's most frequent of tab, ``;`` and ``,``.  A
  decimal comma (``0,358``) is read where it is unambiguous: in ``;`` or
  tab separated files, and in quoted cells of a comma separated file.  An
  unquoted decimal comma in a comma separated file splits the cell: that
  row is refused, located.
- UTF-8 (a byte-order mark is fine), CRLF line ends, ``.gz`` files.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, assemble
from iou_eval.errors import InputError
from iou_eval.escape import excerpt, quoted
from iou_eval.io.compiled import csv_reader
from iou_eval.io.loaders.common import LoadOptions, strict_floats
from iou_eval.io.loaders.scan import FLAG, NUMBER, SKIP, TEXT, Codes, scan_csv
from iou_eval.io.loaders.source import decode_file_text, read_file_bytes, read_text_file
from iou_eval.io.source import read_head
from iou_eval.numbers import is_number_token, quote_token

GT_COLUMNS = ("ImageID", "LabelName", "XMin", "XMax", "YMin", "YMax")
PRED_COLUMNS = ("ImageID", "LabelName", "Score", "XMin", "XMax", "YMin", "YMax")
_COORD_MIN, _COORD_MAX = -0.01, 1.01
# Said when the boxes stay fractions of a 1 x 1 image (no sizes known).
UNIT_NOTE = "Open Images boxes are fractions of unknown image sizes"
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+(?:[eE][-+]?\d+)?\s*$", re.ASCII)


def looks_like_openimages(path: str) -> bool:
    """Whether ``path`` (a CSV, or a folder holding one) has Open Images' box header.

    Never standard input: the registry judges that from its bytes.
    """
    for file in _csv_files(path):
        try:
            head = read_head(file, 1024)
        except InputError:
            continue
        if openimages_head(head):
            return True
    return False


def openimages_head(head: bytes) -> bool:
    """Whether a file's first bytes (decompressed, no BOM) are an Open Images boxes header."""
    first = head.lstrip(b" \t\r\n").split(b"\n", 1)[0].lower()
    return all(c in first for c in (b"imageid", b"xmin", b"xmax", b"ymin"))


def _csv_files(path: str) -> list[str]:
    if path == "-":
        return []
    if os.path.isfile(path):
        return [path]
    if os.path.isdir(path):
        found = glob.glob(os.path.join(path, "*.csv")) + glob.glob(os.path.join(path, "*.csv.gz"))
        return sorted(found)
    return []


@dataclass
class _Table:
    """A CSV read whole: header cells (stripped), rows of cells, each row's line."""

    file: str
    header: list[str]
    rows: list[list[str]]
    lines: list[int]
    delimiter: str

    def column(self, name: str) -> int | None:
        lowered = [h.lower() for h in self.header]
        return lowered.index(name.lower()) if name.lower() in lowered else None


def _read_table(file: str, header: bool = True, data: bytes | None = None) -> _Table:
    text = read_text_file(file) if data is None else decode_file_text(file, data)
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    counts = {d: first.count(d) for d in ("\t", ";", ",")}
    delimiter = max(counts, key=lambda d: counts[d]) if max(counts.values()) else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows: list[list[str]] = []
    lines: list[int] = []
    head: list[str] | None = None
    try:
        for row in reader:
            if not any(c.strip() for c in row):
                continue
            if header and head is None:
                head = [c.strip() for c in row]
                continue
            rows.append([c.strip() for c in row])
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputError(file, f"malformed CSV: {exc}", where=reader.line_num) from None
    return _Table(file, head or [], rows, lines, delimiter)


def _numbers(table: _Table, col: int, name: str, rows: Sequence[int] | None = None) -> np.ndarray:
    """The column's numbers ``[R]`` float64; decimal commas where unambiguous; errors located."""
    idx = range(len(table.rows)) if rows is None else rows
    cells = [table.rows[r][col] for r in idx]
    try:
        return strict_floats(cells)
    except ValueError:
        pass
    out = np.empty(len(cells), dtype=np.float64)
    for i, (r, cell) in enumerate(zip(idx, cells, strict=True)):
        if is_number_token(cell):  # float() alone would also read '١٠' and '1_0'
            out[i] = float(cell)
            continue
        # The delimiter is never a comma inside an unquoted cell: a comma
        # here was quoted (or the file uses ';' or tabs), so it is a decimal comma.
        if _DECIMAL_COMMA.match(cell):
            out[i] = float(cell.replace(",", "."))
            continue
        raise InputError(
            table.file,
            f"expected a number for {name}, got {quote_token(cell)}",
            where=table.lines[r],
        )
    return out


def _check_width(table: _Table) -> None:
    n = len(table.header)
    for r, row in enumerate(table.rows):
        extra = row[n:]
        if len(row) < n or any(c for c in extra):
            hint = None
            if table.delimiter == "," and len(row) > n:
                hint = (
                    "an unquoted decimal comma splits a number in two: quote such numbers "
                    "(\"0,358\") or separate the columns with ';'"
                )
            raise InputError(
                table.file,
                f"expected {n} cells as in the header, found {len(row)}",
                where=table.lines[r],
                hint=hint,
            )


def _flag(table: _Table, col: int | None) -> np.ndarray:
    """``[R]`` bool: 1 is True; 0, -1 (unknown) and empty are False."""
    if col is None:
        return np.zeros(len(table.rows), dtype=bool)
    out = np.zeros(len(table.rows), dtype=bool)
    for r, row in enumerate(table.rows):
        cell = row[col]
        if cell in ("", "0", "-1"):
            continue
        if cell == "1":
            out[r] = True
            continue
        raise InputError(
            table.file,
            f"expected 1, 0 or -1 for {table.header[col]}, got {quoted(cell)}",
            where=table.lines[r],
        )
    return out


def read_class_descriptions(path: str) -> dict[str, str]:
    """``LabelName -> DisplayName`` from a class-descriptions CSV (header optional)."""
    table = _read_table(path, header=False)
    return class_descriptions(table.rows, path, table.lines)


def class_descriptions(
    rows: Sequence[Sequence[str]], source: str, lines: Sequence[int] | None = None
) -> dict[str, str]:
    """``LabelName -> DisplayName`` from rows of two cells; a ``LabelName`` header row skipped."""
    out: dict[str, str] = {}
    for i, row in enumerate(rows):
        if len(row) < 2 or not row[0].strip():
            raise InputError(
                source,
                f"expected 'LabelName,DisplayName', got {excerpt(','.join(row))}",
                where=None if lines is None else lines[i],
            )
        if i == 0 and row[0].strip().lower() == "labelname":
            continue
        out[row[0].strip()] = row[1].strip()
    return out


def _names_from_options(names: Sequence[str] | None) -> dict[str, str]:
    """Class descriptions passed as ``--names`` lines (``/m/07j7r,Tree``); plain names map to themselves."""
    if not names:
        return {}
    rows = []
    for n in names:
        try:
            rows.append(next(csv.reader([n]), [n]) or [n])
        except csv.Error:  # a quote or line break the csv module will not take: one name
            rows.append([n])
    return class_descriptions([r if len(r) >= 2 else [r[0], r[0]] for r in rows], "--names")


def _folder_parts(path: str, role: str) -> tuple[str, str | None, dict[str, str]]:
    """The boxes CSV, the image list (or None) and the class descriptions of a folder."""
    boxes: list[str] = []
    image_list: str | None = None
    descriptions: dict[str, str] = {}
    want = "score" if role == "pred" else None
    for file in _csv_files(path):
        head = [c.strip().lower() for c in _first_row(file)]
        if "imageid" in head and "xmin" in head:
            if want is None and "score" in head:
                continue
            if want == "score" and "score" not in head:
                continue
            boxes.append(file)
        elif "imageid" in head:
            image_list = image_list or file
        elif len(head) == 2:
            descriptions = read_class_descriptions(file)
    if len(boxes) != 1:
        raise InputError(
            path,
            f"expected one Open Images boxes CSV in this folder, found {len(boxes)}",
            hint=", ".join(os.path.basename(b) for b in boxes) or None,
        )
    return boxes[0], image_list, descriptions


def _first_row(file: str) -> list[str]:
    """The first row of a CSV (read from its first 64 KiB), for telling the files apart."""
    try:
        head = read_head(file, 65536)
    except InputError:
        return []
    line = head.decode("utf-8", "replace").split("\n", 1)[0]
    counts = {d: line.count(d) for d in ("\t", ";", ",")}
    delimiter = max(counts, key=lambda d: counts[d]) if max(counts.values()) else ","
    try:
        return next(csv.reader([line.rstrip("\r")], delimiter=delimiter), [])
    except csv.Error:  # not a CSV header: the file is told apart as no kind
        return []


def _unknown_group_of(path: str, group_of: np.ndarray | None) -> list[str]:
    """A note when ``IsGroupOf`` is -1 (unknown) somewhere: read as 0 here, a group-of box
    for the TensorFlow API's challenge evaluator (``astype(bool)``)."""
    n = 0 if group_of is None else int(np.count_nonzero(group_of == -1))
    if not n:
        return []
    return [
        f"{path}: {n} box(es) have IsGroupOf -1 (unknown), read as not group-of; the "
        "TensorFlow API's Open Images evaluator counts them as group-of boxes"
    ]


def read_image_list(path: str) -> list[str]:
    """The ``ImageID`` column of an image list CSV."""
    table = _read_table(path)
    col = table.column("ImageID")
    if col is None:
        raise InputError(path, "expected an 'ImageID' column in the image list")
    return [row[col] for row in table.rows if len(row) > col and row[col]]


def load_openimages(
    path: str, role: str, options: LoadOptions, *, images: str | None = None
) -> Dataset:
    """Read Open Images boxes (ground truth) or predictions.

    Args:
        path: a boxes CSV, or a folder with it, an image list and class
            descriptions (see the module docstring).
        role: ``"gt"`` or ``"pred"``.
        options: ``names``: class-description lines, ``LabelName,DisplayName``.
        images: an image list CSV (``ImageID`` column): images without boxes.

    Returns:
        A :class:`Dataset` of 1 x 1 images, boxes in fractions; errors cite
        ``file:line``.
    """
    descriptions = _names_from_options(options.names)
    file = path
    if path != "-" and os.path.isdir(path):
        file, found_list, found_names = _folder_parts(path, role)
        images = images or found_list
        descriptions = {**found_names, **descriptions}
    pred = role == "pred"
    data = read_file_bytes(file)
    columns = _scanned_columns(file, data, pred)
    if columns is None:
        columns = _table_columns(_read_table(file, data=data), file, pred)
    del data  # the columns hold what is needed: the bytes go before the dataset is built
    return _assemble(path, file, columns, pred, descriptions, images)


@dataclass(frozen=True)
class _Columns:
    """The boxes CSV as columns, by the compiled reader or from a :class:`_Table`."""

    lines: np.ndarray  # [R] int64, each row's line
    xyxy: np.ndarray  # [R, 4] float64 fractions, checked in range
    score: np.ndarray | None  # [R] float64 (predictions)
    image: Codes  # ImageID
    label: Codes  # LabelName
    group_of: np.ndarray | None  # [R] int8 IsGroupOf: 1, 0 (also empty) or -1 (ground truth)


def _table_columns(table: _Table, file: str, pred: bool) -> _Columns:
    """The Python path: the header checked, then each column, errors located."""
    columns = PRED_COLUMNS if pred else GT_COLUMNS
    missing = [c for c in columns if table.column(c) is None]
    if missing:
        hint = None
        if pred and missing == ["Score"]:
            hint = "predictions need a Score column; is this the ground truth?"
        raise InputError(
            file,
            f"expected the Open Images columns {', '.join(columns)}; missing {', '.join(missing)}",
            where=1,
            hint=hint,
        )
    _check_width(table)
    # Every required column is there; Score only in predictions.
    col = {c: i for c in PRED_COLUMNS if (i := table.column(c)) is not None}
    lines = np.asarray(table.lines, dtype=np.int64)
    xmin, xmax, ymin, ymax = (_numbers(table, col[c], c) for c in ("XMin", "XMax", "YMin", "YMax"))
    xyxy = _checked_boxes(file, np.stack([xmin, ymin, xmax, ymax], axis=1).reshape(-1, 4), lines)
    score = _numbers(table, col["Score"], "Score") if pred else None
    group_of = None
    if not pred:
        flags = _flag(table, table.column("IsGroupOf")).astype(np.int8)
        g = table.column("IsGroupOf")
        if g is not None:
            flags[[r for r, row in enumerate(table.rows) if row[g] == "-1"]] = -1
        group_of = flags
    return _Columns(
        lines,
        xyxy,
        score,
        _codes([row[col["ImageID"]] for row in table.rows]),
        _codes([row[col["LabelName"]] for row in table.rows]),
        group_of,
    )


def _codes(cells: list[str]) -> Codes:
    vocab = {k: i for i, k in enumerate(dict.fromkeys(cells))}
    return Codes(np.array([vocab[k] for k in cells], dtype=np.int64), list(vocab))


def _checked_boxes(file: str, xyxy: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """``xyxy[R, 4]`` as given, or an error at the first box outside [0, 1] (1 % tolerance)."""
    if len(xyxy) and xyxy.min() >= _COORD_MIN and xyxy.max() <= _COORD_MAX:
        return xyxy  # every number in range (two passes, no [R, 4] temporaries)
    bad = ((xyxy < _COORD_MIN) | (xyxy > _COORD_MAX)).any(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InputError(
            file,
            "Open Images coordinates are fractions of the image in [0, 1], got "
            + " ".join(f"{v:g}" for v in xyxy[r]),
            where=int(lines[r]),
        )
    return xyxy


def _scanned_columns(file: str, data: bytes, pred: bool) -> _Columns | None:
    """The compiled reader's columns, or None (not built, switched off, or not sure of the file)."""
    if csv_reader() is None:
        return None
    wanted = {c.lower(): kind for c, kind in _KINDS.items() if pred or c != "Score"}
    if not pred:
        wanted["isgroupof"] = FLAG

    def kinds(header: list[str]) -> str | None:
        lowered = [h.lower() for h in header]
        found = {name: lowered.index(name) for name in wanted if name in lowered}
        if any(name not in found for name in wanted if name != "isgroupof"):
            return None  # a required column missing: the Python path says so
        letters = [SKIP] * len(header)
        for name, i in found.items():
            letters[i] = wanted[name]
        return "".join(letters)

    scanned = scan_csv(data, kinds)
    if scanned is None:
        return None
    lowered = [h.lower() for h in scanned.header]
    at = {name: lowered.index(name) for name in wanted if name in lowered}
    n = len(scanned.lines)
    xyxy = np.stack([scanned.array(at[c]) for c in ("xmin", "ymin", "xmax", "ymax")], axis=1)
    group_of = None
    if not pred:
        group_of = scanned.array(at["isgroupof"]) if "isgroupof" in at else np.zeros(n, np.int8)
    return _Columns(
        scanned.lines,
        _checked_boxes(file, xyxy.reshape(n, 4), scanned.lines),
        scanned.array(at["score"]) if pred else None,
        scanned.codes(at["imageid"]),
        scanned.codes(at["labelname"]),
        group_of,
    )


_KINDS = {
    "ImageID": TEXT,
    "LabelName": TEXT,
    "Score": NUMBER,
    "XMin": NUMBER,
    "XMax": NUMBER,
    "YMin": NUMBER,
    "YMax": NUMBER,
}


def _assemble(
    path: str,
    file: str,
    columns: _Columns,
    pred: bool,
    descriptions: dict[str, str],
    image_list: str | None,
) -> Dataset:
    listed = read_image_list(image_list) if image_list else []
    image_vocab = {k: i for i, k in enumerate(dict.fromkeys([*listed, *columns.image.values]))}
    remap = np.array([image_vocab[k] for k in columns.image.values], dtype=np.int64)
    ids = tuple(columns.label.values)
    categories = CategoryTable(ids, tuple(descriptions.get(k, k) for k in ids))
    m = len(image_vocab)
    warnings = []
    if not pred:
        warnings.append(
            f"{path}: {UNIT_NOTE}: AP and AR need none, but the area ranges do: APs, APm, APl, "
            "ARs, ARm and ARl are left undefined (null); pass --images DIR, or put the images "
            "in an images/ folder beside the CSV"
        )
        warnings += _unknown_group_of(path, columns.group_of)
    return assemble(
        source=path,
        fmt="openimages",
        images=ImageTable.build(list(image_vocab), None, np.ones(m), np.ones(m)),
        categories=categories,
        image_idx=remap[columns.image.codes] if len(remap) else np.zeros(0, dtype=np.int64),
        category_idx=columns.label.codes,
        boxes=columns.xyxy,
        box_format=BoxFormat.XYXY,
        normalized=True,
        score=columns.score,
        is_crowd=None if columns.group_of is None else columns.group_of == 1,
        origin=columns.lines,
        files=[file],
        origin_label="line",
        warnings=warnings,
    )
