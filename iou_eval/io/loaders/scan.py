"""Tables read by the compiled column reader (``iou_eval/io/_csvscan.c``), when it is built.

The reader gives up (None here) on anything it is not sure of; the caller
then reads the file with its Python path, the reference, which also says
what is wrong with a bad file.  Where it gives columns, they equal the
Python path's bit for bit (``tests/unit/test_csv_scan.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iou_eval.io.compiled import csv_reader
from iou_eval.io.source import STDIN, input_limit, read_source

# What a column is read as: skipped, float64, a text (int64 codes into its
# distinct values), a flag (1, 0, -1 or empty, as int8).
SKIP, NUMBER, TEXT, FLAG = ".", "f", "s", "g"

# How whitespace text is read (:func:`scan_text_files`): lines whose first token is
# ``imagesource:`` or ``gsd:`` read over (DOTA); a line starting with ``#`` is a row like
# any other (not read over); a path that is not a regular file is an image without lines.
DOTA_HEADER, NO_COMMENTS, MISSING_EMPTY = 1, 2, 4


@dataclass(frozen=True)
class Codes:
    """A text column: ``codes[R]`` int64 into ``values``, the distinct texts in order of first appearance."""

    codes: np.ndarray
    values: list[str]


class _ColumnsByIndex:
    """Columns asked for by their index (a header cell's, or a kind letter's), each
    checked for what it was read as: numbers or flags (an array) or text (:class:`Codes`)."""

    columns: Any  # dict[int, ...] or list[...]: indexed by int

    def array(self, i: int) -> np.ndarray:
        """Column ``i`` read as numbers (float64) or flags and integers (int8, uint8)."""
        col = self.columns[i]
        if not isinstance(col, np.ndarray):
            raise TypeError(f"column {i} was read as text")
        return col

    def codes(self, i: int) -> Codes:
        """Column ``i`` read as text."""
        col = self.columns[i]
        if not isinstance(col, Codes):
            raise TypeError(f"column {i} was not read as text")
        return col


@dataclass(frozen=True)
class ScannedTable(_ColumnsByIndex):
    """A CSV read into columns: the header (cells stripped), the delimiter, each row's line
    ``[R]`` int64, and the columns asked for by their header index."""

    header: list[str]
    delimiter: str
    lines: np.ndarray
    columns: dict[int, np.ndarray | Codes]


def _column(kind: str, value: Any) -> np.ndarray | Codes:
    if kind == TEXT:
        block, values = value
        return Codes(np.frombuffer(block, dtype=np.int64), values)
    return np.frombuffer(value, dtype=np.float64 if kind == NUMBER else np.int8)


def scan_csv(data: bytes, kinds: Callable[[list[str]], str | None]) -> ScannedTable | None:
    """``data`` (a CSV's bytes, without a byte-order mark) read into columns, or None.

    ``kinds(header)`` gives a letter per header cell (:data:`SKIP`,
    :data:`NUMBER`, :data:`TEXT`, :data:`FLAG`), or None to leave the file to
    the Python path.  None also when the reader is not built, is switched
    off (``IOU_EVAL_NO_KERNEL=1``), or gives up on the file.
    """
    reader = csv_reader()
    if reader is None:
        return None
    head = reader.header(data)
    if head is None:
        return None
    delimiter, header, offset, line = head
    wanted = kinds(header)
    if wanted is None or len(wanted) != len(header) or not wanted:
        return None
    scanned = reader.columns(data, delimiter, offset, line, wanted)
    if scanned is None:
        return None
    lines, _, values = scanned
    asked = [(i, k) for i, k in enumerate(wanted) if k != SKIP]
    columns = {i: _column(k, v) for (i, k), v in zip(asked, values, strict=True)}
    return ScannedTable(header, delimiter, np.frombuffer(lines, dtype=np.int64), columns)


@dataclass(frozen=True)
class TextRows(_ColumnsByIndex):
    """Whitespace-separated rows of several files: each row's ``lines[R]`` int64 and
    ``file_of[R]`` int64 (the file's index), and one entry per kind letter (``[R]`` float64,
    :class:`Codes` for a text, ``[R]`` uint8 for an integer read as whether it is not 0)."""

    lines: np.ndarray
    file_of: np.ndarray
    columns: list[np.ndarray | Codes]


def _text_column(kind: str, value: Any) -> np.ndarray | Codes:
    if kind == TEXT:
        block, values = value
        return Codes(np.frombuffer(block, dtype=np.int64), values)
    return np.frombuffer(value, dtype=np.float64 if kind == NUMBER else np.uint8)


def scan_text_files(
    files: Sequence[str], kinds: str, min_cells: int, options: int = 0
) -> TextRows | None:
    """The rows of ``files`` (whitespace-separated text) read by the compiled reader, or None.

    Each row has ``min_cells`` to ``len(kinds)`` cells, read as ``kinds`` says
    (:data:`NUMBER`, :data:`TEXT`, ``"i"``); blank lines and (unless
    :data:`NO_COMMENTS`) lines whose first token starts with ``#`` are read
    over.  The files are opened and read in C with the GIL released (as
    :func:`~iou_eval.io.source.read_source` reads them: a byte-order mark
    dropped); standard input and ``.gz`` names are read here first.  None when
    the reader is not built, is switched off, or gives up on a file (the
    caller's Python path then reads them all and names what is wrong).
    """
    reader = csv_reader()
    if reader is None:
        return None
    if os.name != "nt" and not any(f == STDIN or f.lower().endswith(".gz") for f in files):
        limit = input_limit()
        got = reader.text_paths([os.fsencode(f) for f in files], kinds, min_cells, options, limit)
    elif options & MISSING_EMPTY:
        return None
    else:
        datas = [read_source(f, empty_ok=True).data for f in files]
        got = reader.text_files(datas, kinds, min_cells, options)
    if got is None:
        return None
    lines, file_of, values = got
    read = [k for k in kinds if k != SKIP]
    columns = [_text_column(k, v) for k, v in zip(read, values, strict=True)]
    return TextRows(
        np.frombuffer(lines, dtype=np.int64), np.frombuffer(file_of, dtype=np.int64), columns
    )
