"""CSV and TSV tables: one row per box, a header row naming the columns.

Reading:

- UTF-8 (a byte-order mark is fine).  The delimiter is whichever of tab,
  comma and semicolon occurs most often in the header line (ties in that
  order).  With ``;`` a decimal comma is accepted in numbers (``12,5``).
- Blank lines (and rows whose cells are all blank, as spreadsheets export
  them) are skipped; cells are stripped of surrounding spaces; a trailing
  delimiter (extra cells that are all empty) is tolerated.  Quotes follow
  the ``csv`` module (``"a,1.jpg"`` is one cell).
- Header names are compared case-insensitively, with spaces and hyphens
  read as underscores (``Image ID`` is ``image_id``).  Unknown columns are
  ignored.

Columns (aliases):

- image: ``image``, ``image_id``, ``img``, ``img_id`` (an id) or
  ``filename``, ``file_name``, ``file``, ``image_name``, ``path``,
  ``image_path`` (a file name).  With one of each, the first gives the id and
  the second the file name.
- label: ``label``, ``class``, ``category``, ``cls``, ``category_id``,
  ``class_id``, ``label_id`` (an id) or ``class_name``, ``category_name``,
  ``label_name``, ``name`` (a name).  With one of each, ids and names come
  from their own columns; so they do from two id-like columns of which one
  ends in ``_id`` (``category_id`` beside ``category``, ``image_id`` beside
  ``image``).  Other pairs are refused as ambiguous.
- score (required for predictions): ``score``, ``confidence``, ``conf``,
  ``prob``, ``probability``.
- optional: ``iscrowd`` / ``crowd`` / ``is_crowd``; ``difficult`` /
  ``ignore`` / ``is_difficult`` (0/1, true/false; empty is 0); ``area``
  (empty: the box's ``w * h``); ``id`` / ``ann_id`` / ``annotation_id``
  (integers); image size ``img_width`` / ``image_width`` / ``img_w`` /
  ``image_w`` and the matching heights.

The box layout follows the names; the first complete set wins, in this order:

1. ``xyxy``: ``x1 y1 x2 y2``, ``xmin ymin xmax ymax``, ``x_min y_min x_max
   y_max``, ``left top right bottom``.  In such a table plain ``width`` and
   ``height`` columns are the *image's* size (the TensorFlow object-detection
   CSV: ``filename,width,height,class,xmin,ymin,xmax,ymax``), unless they
   equal the boxes' own width and height on every row.
2. ``cxcywh``: a centre (``cx cy``, ``xc yc``, ``x_center y_center``,
   ``center_x center_y``) with ``w h`` or ``width height``.
3. ``xywh``: a corner (``xmin ymin``, ``x_min y_min``, ``x1 y1``, ``left
   top``) with ``w h`` or ``width height``.
4. ``x y w h`` / ``x y width height``: ambiguous (COCO puts the top-left
   corner in ``x, y``, YOLO-style tables the centre).  Read as ``xywh``
   unless ``options.box_format`` says ``cxcywh``.

``options.box_format``, when given, always decides how the four columns are
read (an explicit choice beats a guess from names); when it contradicts
unambiguous names, the dataset carries a warning.

Ids: image values are strings; a purely numeric one becomes an integer
(``"2299"`` -> ``2299``, matching a COCO ground truth), others stay strings
and also serve as the file name.  Labels likewise: integers or names; with
``options.names`` an integer label is an index into the names.

A row with an image but empty label and box cells declares an image without
boxes, so that false positives on it count.

``origin`` is the 1-based line number: errors read ``preds.csv:7: ...``.

Two readers give the same table.  A file without quotes whose every row has
as many cells as the header is parsed by pandas' C reader, its line numbers
found with numpy (about 2 s for a million rows).  Anything else -- quotes, a
ragged row, a cell pandas cannot parse, a missing number -- is read again
with the ``csv`` module row by row, which accepts the irregular but valid
and locates the error in the invalid.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from operator import itemgetter

import numpy as np
import pandas as pd

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, Key, assemble, normalize_id
from iou_eval.errors import InputError
from iou_eval.escape import excerpt
from iou_eval.io.loaders.common import ClassVocabulary, LoadOptions, parse_flag, read_bytes
from iou_eval.numbers import is_number_token, quote_token

IMAGE_ID = ("image", "image_id", "img", "img_id")
IMAGE_FILE = ("filename", "file_name", "file", "image_name", "path", "image_path")
LABEL_ID = ("label", "class", "category", "cls", "category_id", "class_id", "label_id")
LABEL_NAME = ("class_name", "category_name", "label_name", "name")
SCORE = ("score", "confidence", "conf", "prob", "probability")
CROWD = ("iscrowd", "crowd", "is_crowd")
IGNORE = ("difficult", "ignore", "is_difficult")
AREA = ("area",)
ANN_ID = ("id", "ann_id", "annotation_id")
IMAGE_WIDTH = ("img_width", "image_width", "img_w", "image_w")
IMAGE_HEIGHT = ("img_height", "image_height", "img_h", "image_h")
# Oriented boxes: cx, cy, w, h and this angle (Ultralytics' xywhr), see .oriented_table.
ANGLE = ("angle", "theta", "rotation")

_CORNERS = (
    ("x1", "y1", "x2", "y2"),
    ("xmin", "ymin", "xmax", "ymax"),
    ("x_min", "y_min", "x_max", "y_max"),
    ("left", "top", "right", "bottom"),
)
_CENTRES = (("cx", "cy"), ("xc", "yc"), ("x_center", "y_center"), ("center_x", "center_y"))
_TOP_LEFTS = (("xmin", "ymin"), ("x_min", "y_min"), ("x1", "y1"), ("left", "top"))
_SIZES = (("w", "h"), ("width", "height"))

# (layout, the four column names, whether the names leave the layout open)
BOX_COLUMNS: tuple[tuple[BoxFormat, tuple[str, str, str, str], bool], ...] = (
    *((BoxFormat.XYXY, c, False) for c in _CORNERS),
    *((BoxFormat.CXCYWH, (*c, *s), False) for c in _CENTRES for s in _SIZES),
    *((BoxFormat.XYWH, (*c, *s), False) for c in _TOP_LEFTS for s in _SIZES),
    *((BoxFormat.XYWH, ("x", "y", *s), True) for s in _SIZES),
)


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


EXPECTED_BOXES = (
    "xmin,ymin,xmax,ymax | x1,y1,x2,y2 | left,top,right,bottom (xyxy); "
    "x,y,w,h | xmin,ymin,width,height (xywh); cx,cy,w,h | x_center,y_center,width,height (cxcywh)"
)


def _sniff_delimiter(header: str) -> str:
    counts = {d: header.count(d) for d in ("\t", ",", ";")}
    best = max(counts.values())
    return next(d for d, c in counts.items() if c == best) if best else ","


class _Irregular(Exception):
    """The fast reader met something only the careful reader can judge."""


def _read_text(path: str) -> tuple[bytes, str]:
    data = read_bytes(path)
    try:
        return data, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            path,
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
            where=data.count(b"\n", 0, exc.start) + 1,
            hint="save the file as UTF-8",
        ) from exc


class _Header:
    """The header row: its cells, its 1-based line and the file's delimiter."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        # The header is the first line holding more than whitespace and delimiters.
        # Lines end at \n, \r\n or \r, as the careful reader counts them.
        lines = enumerate(io.StringIO(text, newline=None), start=1)
        found = next(((n, ln) for n, ln in lines if ln.strip(" \t\r\n,;")), None)
        if found is None:
            raise InputError(path, "file is empty")
        self.line, line = found
        self.delimiter = _sniff_delimiter(line)
        self.decimal_comma = self.delimiter == ";"
        try:
            cells = next(csv.reader([line], delimiter=self.delimiter, skipinitialspace=True))
        except csv.Error as exc:  # a cell beyond the csv module's field limit
            raise InputError(
                path, f"cannot read the header as CSV: {exc}", where=self.line
            ) from None
        cells = [c.strip() for c in cells]
        while cells and not cells[-1]:
            cells.pop()  # a trailing delimiter
        self.cells = cells

    def __len__(self) -> int:
        return len(self.cells)


class _Rows:
    """The data rows: cells by column, and the line each row is on.

    ``lines[i]`` is the 1-based line of row ``i``.  Subclasses provide the
    raw cells (``_raw``) and ``numbers``.
    """

    header: _Header
    lines: np.ndarray
    _factorized: dict[int, tuple[np.ndarray, list[str]]]

    def __len__(self) -> int:
        return len(self.lines)

    def fail(self, row: int, message: str, hint: str | None = None) -> InputError:
        return InputError(self.header.path, message, where=int(self.lines[row]), hint=hint)

    def _raw(self, j: int) -> np.ndarray:
        """``[n]`` object: column ``j`` as read (str, or NaN where blank)."""
        raise NotImplementedError

    def numbers(self, j: int, rows: np.ndarray, empty: float | None = None) -> np.ndarray:
        """Column ``j`` at ``rows`` as float64; blank cells are ``empty``, or an error if None."""
        raise NotImplementedError

    def factorize(self, j: int) -> tuple[np.ndarray, list[str]]:
        """Column ``j`` as ``codes[n]`` into its distinct stripped values (first-seen order).

        Text columns repeat a few values many times: they are stripped and
        parsed once per distinct value.  Two codes may share a stripped value.
        """
        if j not in self._factorized:
            codes, distinct = pd.factorize(self._raw(j), use_na_sentinel=False)
            values = [v.strip() if isinstance(v, str) else "" for v in distinct]
            self._factorized[j] = (codes.astype(np.int64), values)
        return self._factorized[j]

    def cell(self, j: int, row: int) -> str:
        codes, values = self.factorize(j)
        return values[codes[row]]

    def blank(self, j: int) -> np.ndarray:
        """``[n]`` bool: column ``j`` is blank."""
        codes, values = self.factorize(j)
        return np.array([v == "" for v in values], dtype=bool)[codes]

    def flags(self, j: int, rows: np.ndarray) -> np.ndarray:
        """Column ``j`` at ``rows`` as bool (0/1, true/false, yes/no; blank is False)."""
        codes, values = self.factorize(j)
        picked = codes[rows]
        meaning = np.zeros(len(values), dtype=bool)
        for k in pd.unique(picked).tolist():
            flag = parse_flag(values[k])
            if flag is None:
                r = int(rows[np.flatnonzero(picked == k)[0]])
                raise self.fail(
                    r, f"{_name(self.header.cells[j])} must be 0 or 1, got {excerpt(values[k])}"
                )
            meaning[k] = flag
        return meaning[picked]


class _ParsedRows(_Rows):
    """Rows read by the ``csv`` module, one by one: exact about quotes and errors."""

    def __init__(self, header: _Header, text: str) -> None:
        self.header = header
        # newline=None: a lone \r (old Mac files) ends a line too.
        source = io.StringIO(text, newline=None)
        reader = csv.reader(source, delimiter=header.delimiter, skipinitialspace=True)
        rows: list[list[str]] = []
        lines: list[int] = []
        try:
            for row in reader:
                if reader.line_num <= header.line or not any(c.strip(" \t\r") for c in row):
                    continue  # the header, the lines before it, blank rows
                rows.append(row)
                lines.append(reader.line_num)
        except csv.Error as exc:
            raise InputError(
                header.path, f"cannot read as CSV: {exc}", where=reader.line_num
            ) from exc
        self.rows = rows
        self.lines = np.asarray(lines, dtype=np.int64)
        self._factorized = {}
        self._check_cells()

    def _check_cells(self) -> None:
        n = len(self.header)
        lens = np.fromiter(map(len, self.rows), dtype=np.int64, count=len(self.rows))
        short = np.flatnonzero(lens < n).tolist()
        # Extra cells are fine when empty: a trailing delimiter.
        long = [i for i in np.flatnonzero(lens > n) if any(c.strip() for c in self.rows[i][n:])]
        bad = sorted(short + long)
        if bad:
            i = bad[0]
            raise self.fail(
                i,
                f"expected {n} cells as in the header, found {lens[i]}",
                hint=f"a cell holding the delimiter {self.header.delimiter!r} needs quotes"
                if lens[i] > n
                else None,
            )

    def _raw(self, j: int) -> np.ndarray:
        out = np.empty(len(self.rows), dtype=object)
        out[:] = list(map(itemgetter(j), self.rows))
        return out

    def numbers(self, j: int, rows: np.ndarray, empty: float | None = None) -> np.ndarray:
        name = self.header.cells[j]
        codes, values = self.factorize(j)
        out = np.empty(len(rows), dtype=np.float64)
        for i, r in enumerate(rows.tolist()):
            v = values[codes[r]]
            if not v:
                if empty is None:
                    raise self.fail(r, f"{name} is empty, expected a number")
                out[i] = empty
                continue
            token = v.replace(",", ".") if self.header.decimal_comma else v
            # float() also reads '١٠' and '1_0'; a number in a file is ASCII.
            if not is_number_token(token):
                raise self.fail(r, f"{_name(name)} must be a number, got {quote_token(v)}")
            out[i] = float(token)
        return out


class _FastRows(_Rows):
    """Rows read by pandas' C reader: for files without quotes or ragged rows.

    ``numbers`` raises :class:`_Irregular` where a required number is blank;
    the careful reader then reads the file again and judges.
    """

    def __init__(self, header: _Header, frame: pd.DataFrame, lines: np.ndarray) -> None:
        self.header = header
        self.frame = frame
        self.lines = lines
        self._factorized = {}

    @classmethod
    def read(
        cls, header: _Header, data: bytes, text: str, used: set[int], numeric: set[int]
    ) -> _FastRows | None:
        """The rows, or None when the file needs the careful reader."""
        if '"' in text or "\x00" in text or text.count("\r") != text.count("\r\n"):
            return None
        n_delims, blank = _line_shapes(data, header.delimiter)
        n_delims, blank = n_delims[header.line :], blank[header.line :]
        if (n_delims[~blank] + 1 != len(header)).any():
            return None  # a ragged row: the careful reader says which
        dtypes = {j: (np.float64 if j in numeric else str) for j in used}
        try:
            frame = pd.read_csv(
                io.StringIO(text),
                sep=header.delimiter,
                header=None,
                names=list(range(len(header))),
                usecols=sorted(used),
                dtype=dtypes,
                skiprows=header.line,
                keep_default_na=False,
                na_values=[""],
                skip_blank_lines=False,  # one row per line, so rows map to lines
                quoting=csv.QUOTE_NONE,
                skipinitialspace=True,
                decimal="," if header.decimal_comma else ".",
                index_col=False,
                engine="c",
            )
        except (ValueError, IndexError, pd.errors.ParserError):
            # A cell that is not a number, or worse (pandas fails with IndexError
            # on a header without a line end and no rows).
            return None
        if len(frame) != len(blank):
            return None
        keep = np.flatnonzero(~blank)
        if len(keep) != len(frame):
            frame = frame.iloc[keep].reset_index(drop=True)
        return cls(header, frame, (keep + header.line + 1).astype(np.int64))

    def _raw(self, j: int) -> np.ndarray:
        return self.frame[j].to_numpy(dtype=object)

    def numbers(self, j: int, rows: np.ndarray, empty: float | None = None) -> np.ndarray:
        out = self.frame[j].to_numpy(dtype=np.float64)[rows]
        missing = np.isnan(out)
        if missing.any():
            if empty is None:
                raise _Irregular(j)
            out[missing] = empty
        return out

    def blank(self, j: int) -> np.ndarray:
        col = self.frame[j]
        if col.dtype == np.float64:
            return np.isnan(col.to_numpy())
        return super().blank(j)


def _line_shapes(data: bytes, delimiter: str) -> tuple[np.ndarray, np.ndarray]:
    """Per physical line: ``n_delimiters[L]`` and ``blank[L]`` (only whitespace and delimiters)."""
    b = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(b == 10)  # where each line stops (its newline, or the end)
    if len(b) and b[-1] != 10:
        ends = np.append(ends, len(b))
    starts = np.concatenate([[0], ends[:-1] + 1])

    def per_line(mask: np.ndarray) -> np.ndarray:
        at = np.flatnonzero(mask)
        return np.searchsorted(at, ends) - np.searchsorted(at, starts)

    is_delim = b == ord(delimiter)
    n_delims = per_line(is_delim)
    n_filler = per_line(is_delim | (b == 32) | (b == 9) | (b == 13))
    return n_delims, n_filler == ends - starts


class _Columns:
    """Which header cell plays which part; raises for a header that cannot be read."""

    def __init__(
        self,
        header: _Header,
        role: str,
        box_format: BoxFormat | None,
        score_column: str | None = None,
    ) -> None:
        self.header = header
        self.warnings: list[str] = []
        self.position: dict[str, int] = {}
        for j, k in enumerate(_key(h) for h in header.cells):
            if k in self.position:
                raise InputError(
                    header.path,
                    f"column {excerpt(header.cells[j])} appears twice "
                    f"(columns {self.position[k] + 1} and {j + 1})",
                    where=header.line,
                )
            if k:
                self.position[k] = j
        self._check_not_data()

        self.image_id, self.image_file = self._id_and_name(IMAGE_ID, IMAGE_FILE, "image")
        image = self.image_id if self.image_id is not None else self.image_file
        if image is None:
            raise self._missing("an image column", ", ".join(IMAGE_ID + IMAGE_FILE))
        self.image = image
        self.label_id, self.label_name = self._id_and_name(LABEL_ID, LABEL_NAME, "label")
        label = self.label_id if self.label_id is not None else self.label_name
        if label is None:
            raise self._missing("a label column", ", ".join(LABEL_ID + LABEL_NAME))
        self.label = label

        found = next((b for b in BOX_COLUMNS if all(c in self.position for c in b[1])), None)
        if found is None:
            raise self._missing("the four box columns", EXPECTED_BOXES)
        named_fmt, names, ambiguous = found
        self.box = [self.position[c] for c in names]
        self.box_format = box_format or named_fmt
        if box_format is not None and box_format is not named_fmt and not ambiguous:
            self.warnings.append(
                f"{header.path}: columns {', '.join(header.cells[j] for j in self.box)} are "
                f"read as {box_format.value} as asked, although their names say {named_fmt.value}"
            )

        self.score = self._score(role, score_column)
        if role == "pred" and self.score is None:
            raise self._missing(
                "a score column for predictions",
                ", ".join(SCORE) + " (--score-column NAME names another); "
                "is this the ground-truth file?",
            )
        if role == "gt" and self.score is not None:
            self.warnings.append(
                f"{header.path}: the ground truth has a {excerpt(header.cells[self.score])} column; "
                "it is not read (is this the predictions file?)"
            )
            self.score = None
        self.crowd = self._one(CROWD, "crowd flag")
        self.ignore = self._one(IGNORE, "difficult flag")
        self.area = self._one(AREA, "area")
        self.ann_id = self._one(ANN_ID, "annotation id")
        self.width = self._one(IMAGE_WIDTH, "image width")
        self.height = self._one(IMAGE_HEIGHT, "image height")
        self.angle = self._one(ANGLE, "angle")
        # Plain width/height beside corner columns are the image's size, as in
        # the TensorFlow object-detection CSV; beside w/h layouts they are the box's.
        self.plain_size = (
            named_fmt is BoxFormat.XYXY
            and self.width is None
            and self.height is None
            and "width" in self.position
            and "height" in self.position
        )
        if self.plain_size:
            self.width, self.height = self.position["width"], self.position["height"]

    def numeric(self) -> set[int]:
        """The columns read as numbers."""
        cols = [*self.box, self.score, self.area, self.ann_id, self.width, self.height, self.angle]
        return {j for j in cols if j is not None}

    def used(self) -> set[int]:
        """Every column read."""
        cols = [self.image, self.image_file, self.label, self.label_name, self.crowd, self.ignore]
        return self.numeric() | {j for j in cols if j is not None}

    def _id_and_name(
        self, id_aliases: Sequence[str], name_aliases: Sequence[str], what: str
    ) -> tuple[int | None, int | None]:
        """The id column and the name column of an image or a label, either may be None.

        Two id-like columns of which one ends in ``_id`` (``category_id`` and
        ``category``) are an id and a name.
        """
        ids = [a for a in id_aliases if a in self.position]
        names = [a for a in name_aliases if a in self.position]
        if len(ids) == 2 and not names and sum(a.endswith("_id") for a in ids) == 1:
            ids.sort(key=lambda a: not a.endswith("_id"))
            return self.position[ids[0]], self.position[ids[1]]
        return self._one(id_aliases, f"{what} id"), self._one(name_aliases, f"{what} name")

    def _score(self, role: str, score_column: str | None) -> int | None:
        """The score column: ``score_column`` (``--score-column``) for predictions, else an alias."""
        if score_column is None or role != "pred":
            return self._one(SCORE, "score")
        j = self.position.get(_key(score_column))
        if j is None:
            raise self._missing(
                f"the score column {excerpt(score_column)} (--score-column)",
                f"a column named {excerpt(score_column)}",
            )
        return j

    def _one(self, aliases: Sequence[str], what: str) -> int | None:
        hits = [a for a in aliases if a in self.position]
        if len(hits) > 1:
            cols = " and ".join(repr(self.header.cells[self.position[a]]) for a in hits)
            raise InputError(
                self.header.path,
                f"columns {cols} could each be the {what}; keep one",
                where=self.header.line,
            )
        return self.position[hits[0]] if hits else None

    def _missing(self, what: str, expected: str) -> InputError:
        cells = self.header.cells
        hint = f"expected {expected}"
        if len(cells) == 1 and " " in cells[0]:
            hint += "; columns must be separated by commas, tabs or semicolons"
        return InputError(
            self.header.path,
            f"cannot find {what} in the header (found: {_name(', '.join(cells), 200) if cells else 'nothing'})",
            where=self.header.line,
            hint=hint,
        )

    def _check_not_data(self) -> None:
        cells = [c for c in self.header.cells if c]
        numeric = 0
        for c in cells:
            try:
                float(c.replace(",", "."))
                numeric += 1
            except ValueError:
                pass
        if numeric * 2 >= len(cells):
            raise InputError(
                self.header.path,
                "expected a header line naming the columns, found data: "
                f"{excerpt(self.header.delimiter.join(cells))}",
                where=self.header.line,
                hint="add a header line such as image,label,xmin,ymin,xmax,ymax,score",
            )


def _name(cell: str, limit: int = 40) -> str:
    """Header text named in a message: itself when short and plain, else an excerpt."""
    return cell if len(cell) <= limit and cell.isprintable() else excerpt(cell, limit)


def _images(rows: _Rows, cols: _Columns) -> tuple[ImageTable, np.ndarray]:
    """The image vocabulary (first-seen order) and each row's image ``[n]``."""
    codes, values = rows.factorize(cols.image)
    first = np.empty(len(values), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    # "7" and "007" are one image: ids are compared after normalize_id.
    index_of_key: dict[Key, int] = {}
    ids: list[Key] = []
    names: list[str | None] = []
    remap = np.empty(len(values), dtype=np.int64)
    for k, value in enumerate(values):
        if not value:
            raise rows.fail(
                int(first[k]), f"{cols.header.cells[cols.image]} is empty, expected an image"
            )
        key = normalize_id(value)  # "2299" -> 2299; other strings unchanged
        j = index_of_key.get(key)
        if j is None:
            j = index_of_key[key] = len(ids)
            ids.append(key)
            if cols.image_file is not None:
                names.append(rows.cell(cols.image_file, int(first[k])) or None)
            else:
                names.append(value if isinstance(key, str) else None)
        remap[k] = j
    return ImageTable.build(ids, names), remap[codes]


def _categories(
    rows: _Rows, cols: _Columns, box_rows: np.ndarray, names: tuple[str, ...] | None
) -> tuple[CategoryTable, np.ndarray]:
    """The categories (``names`` first, then first-seen) and each box row's category."""
    all_codes, values = rows.factorize(cols.label)
    codes, seen = pd.factorize(all_codes[box_rows])
    first = np.empty(len(seen), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    display_col = cols.label_name if cols.label_id is not None else None
    vocab = ClassVocabulary(names)
    display: dict[int, str] = {j: str(k) for k, j in vocab.vocab.items()}
    remap = np.empty(len(seen), dtype=np.int64)
    for k, code in enumerate(seen.tolist()):
        value = values[code]
        r = int(box_rows[first[k]])
        if not value:
            raise rows.fail(r, f"{cols.header.cells[cols.label]} is empty, expected a class")
        try:
            j = vocab.lookup(value, "", None)
        except InputError as exc:  # the same rule, located in this table
            raise rows.fail(r, exc.message, hint=exc.hint) from None
        if j not in display:
            shown = rows.cell(display_col, r) if display_col is not None else ""
            display[j] = shown or str(normalize_id(value))
        remap[k] = j
    table = vocab.table()
    return CategoryTable(table.ids, tuple(display[j] for j in range(len(table.ids)))), remap[codes]


def _image_sizes(
    rows: _Rows, cols: _Columns, images: ImageTable, row_image: np.ndarray, box_rows: np.ndarray
) -> ImageTable:
    """``images`` with widths and heights from the size columns, if any."""
    if cols.width is None and cols.height is None:
        return images
    if cols.plain_size and len(box_rows):
        # Plain width/height that are the boxes' own sizes are not image sizes.
        x1, y1, x2, y2 = (rows.numbers(j, box_rows) for j in cols.box)
        w = rows.numbers(cols.position["width"], box_rows, empty=np.nan)
        h = rows.numbers(cols.position["height"], box_rows, empty=np.nan)
        if np.array_equal(w, x2 - x1) and np.array_equal(h, y2 - y1):
            return images
    all_rows = np.arange(len(rows))
    sizes = []
    for col, known in ((cols.width, images.width), (cols.height, images.height)):
        if col is None:
            sizes.append(known)
            continue
        per_row = rows.numbers(col, all_rows, empty=np.nan)
        sizes.append(_per_image(rows, per_row, row_image, len(images), cols.header.cells[col]))
    return ImageTable(images.ids, images.file_names, sizes[0], sizes[1])


def _per_image(
    rows: _Rows, per_row: np.ndarray, row_image: np.ndarray, n_images: int, name: str
) -> np.ndarray:
    """``[I]`` one value per image from ``per_row[n]`` (NaN = not given); rows must agree."""
    out = np.full(n_images, np.nan)
    given = np.flatnonzero(~np.isnan(per_row))
    # Reversed, so that each image's first row is written last and wins.
    out[row_image[given][::-1]] = per_row[given][::-1]
    bad = given[per_row[given] != out[row_image[given]]]
    if len(bad):
        r = int(bad[0])
        first = int(given[row_image[given] == row_image[r]][0])
        raise rows.fail(
            r,
            f"{name} {per_row[r]:g} differs from the {out[row_image[r]]:g} given for the same "
            f"image on line {rows.lines[first]}",
        )
    return out


def _dataset(
    rows: _Rows, cols: _Columns, role: str, options: LoadOptions, fmt: str = "csv",
    origin_label: str = "line",
) -> Dataset:  # fmt: skip
    images, row_image = _images(rows, cols)
    # A row with an image and nothing else declares an image without boxes.
    empty = rows.blank(cols.label)
    for j in cols.box:
        empty &= rows.blank(j)
    box_rows = np.flatnonzero(~empty)

    images = _image_sizes(rows, cols, images, row_image, box_rows)
    categories, category_idx = _categories(rows, cols, box_rows, options.names)
    boxes = np.stack([rows.numbers(j, box_rows) for j in cols.box], axis=1)

    score = rows.numbers(cols.score, box_rows) if cols.score is not None else None
    is_crowd = rows.flags(cols.crowd, box_rows) if cols.crowd is not None else None
    ignore = rows.flags(cols.ignore, box_rows) if cols.ignore is not None else None
    area = rows.numbers(cols.area, box_rows, empty=np.nan) if cols.area is not None else None
    ann_id = None
    if cols.ann_id is not None:
        ids = rows.numbers(cols.ann_id, box_rows)
        bad = np.flatnonzero(~np.isfinite(ids) | (ids != np.round(ids)))
        if len(bad):
            r = int(bad[0])
            raise rows.fail(
                int(box_rows[r]),
                f"{cols.header.cells[cols.ann_id]} must be an integer, got {ids[r]:g}",
            )
        ann_id = ids.astype(np.int64)

    columns = dict(
        source=cols.header.path,
        fmt=fmt,
        images=images,
        categories=categories,
        image_idx=row_image[box_rows],
        category_idx=category_idx,
        score=score,
        is_crowd=is_crowd,
        ignore=ignore,
        ann_id=ann_id,
        origin=rows.lines[box_rows],
        files=(cols.header.path,),
        origin_label=origin_label,
        warnings=cols.warnings,
    )
    if cols.angle is not None:
        from iou_eval.io.loaders.oriented_table import oriented_rows

        return oriented_rows(rows, cols, box_rows, boxes, options, columns)
    return assemble(
        boxes=boxes.reshape(len(box_rows), 4),
        box_format=cols.box_format,
        normalized=options.normalized,
        area=area,
        **columns,  # type: ignore[arg-type]
    )


def load_csv(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read a CSV/TSV table of boxes, one row per box, as ground truth or predictions.

    Args:
        path: the file.
        role: ``"gt"`` or ``"pred"`` (predictions need a score column).
        options: ``box_format`` (how the four box columns are read; see the
            module docstring), ``normalized`` (boxes are fractions of the
            image size, taken from size columns, else scaled at alignment),
            ``names`` (integer labels index them).

    Returns:
        A :class:`Dataset`; ``origin`` holds each row's 1-based line number.
    """
    data, text = _read_text(path)
    header = _Header(path, text)
    cols = _Columns(header, role, options.box_format, options.score_column)
    fast = _FastRows.read(header, data, text, cols.used(), cols.numeric())
    if fast is not None:
        try:
            return _dataset(fast, cols, role, options)
        except _Irregular:
            pass  # read again, carefully, to accept or to say exactly what is wrong
    return _dataset(_ParsedRows(header, text), cols, role, options)


# -------------------------------------------------------------------- DataFrame


class _FrameHeader(_Header):
    """The column names of a DataFrame, read as a CSV header."""

    def __init__(self, name: str, columns: Sequence[str]) -> None:
        self.path = name
        self.line = None  # type: ignore[assignment]  # errors name no line
        self.delimiter = ","
        self.decimal_comma = False
        self.cells = [c.strip() for c in columns]


def _cell_text(v: object) -> object:
    """A DataFrame cell as the CSV reader would see it: text, or NaN where blank."""
    if v is None or (isinstance(v, float) and v != v):
        return np.nan
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


class _FrameRows(_Rows):
    """The rows of a pandas DataFrame: cells by column position; places are ``row[i]`` (0-based)."""

    def __init__(self, header: _FrameHeader, frame: pd.DataFrame) -> None:
        self.header = header
        self.frame = frame
        self.lines = np.arange(len(frame), dtype=np.int64)
        self._factorized = {}

    def fail(self, row: int, message: str, hint: str | None = None) -> InputError:
        return InputError(self.header.path, message, where=f"row[{row}]", hint=hint)

    def _raw(self, j: int) -> np.ndarray:
        codes, values = self.factorize(j)
        out = np.empty(len(values), dtype=object)
        out[:] = [v if v else np.nan for v in values]
        return out[codes]

    def factorize(self, j: int) -> tuple[np.ndarray, list[str]]:
        # Distinct values first: a text column repeats few values (no per-row Python).
        if j not in self._factorized:
            col = self.frame.iloc[:, j].to_numpy(dtype=object)
            codes, distinct = pd.factorize(col, use_na_sentinel=False)
            texts = [_cell_text(v) for v in distinct]
            values = [t.strip() if isinstance(t, str) else "" for t in texts]
            self._factorized[j] = (codes.astype(np.int64), values)
        return self._factorized[j]

    def blank(self, j: int) -> np.ndarray:
        col = self.frame.iloc[:, j]
        if col.dtype.kind in "fiub":
            return col.isna().to_numpy(copy=True)  # the caller combines it in place
        return super().blank(j)

    def numbers(self, j: int, rows: np.ndarray, empty: float | None = None) -> np.ndarray:
        name = self.header.cells[j]
        col = self.frame.iloc[:, j]
        if col.dtype.kind in "fiub":
            out = col.to_numpy(dtype=np.float64)[rows]
        else:
            picked = col.iloc[rows]
            out = pd.to_numeric(picked, errors="coerce").to_numpy(dtype=np.float64)
            blank = (picked.isna() | (picked.astype(str).str.strip() == "")).to_numpy()
            bad = np.flatnonzero(np.isnan(out) & ~blank)
            if len(bad):
                raise self.fail(
                    int(rows[bad[0]]), f"{name} must be a number, got {picked.iloc[bad[0]]!r}"
                )
        missing = np.flatnonzero(np.isnan(out))
        if len(missing):
            if empty is None:
                raise self.fail(int(rows[missing[0]]), f"{name} is empty, expected a number")
            out[missing] = empty
        return out


def load_frame(
    frame: pd.DataFrame, role: str, options: LoadOptions, name: str = "<DataFrame>"
) -> Dataset:
    """A pandas DataFrame of boxes, one row per box, read with the CSV rules.

    The column names are read as a CSV header (the same aliases and layout
    rules); ``options.box_format`` reads the four box columns in that
    layout.  Rows keep their order (equal scores keep it, as a file's lines
    do); the frame is never modified.  Errors name the column and the row
    position as ``row[i]`` (0-based).
    """
    if not all(isinstance(c, str) for c in frame.columns):
        raise InputError(
            name,
            "DataFrame columns must be named (image, label, x1, y1, x2, y2, score...), got "
            + ", ".join(repr(c) for c in list(frame.columns)[:8]),
        )
    header = _FrameHeader(name, list(frame.columns))
    cols = _Columns(header, role, options.box_format, options.score_column)
    return _dataset(_FrameRows(header, frame), cols, role, options, "dataframe", "row")
