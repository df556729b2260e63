"""What the loaders share: options, reading files, locating parse errors."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Key, normalize_id
from iou_eval.errors import InputError
from iou_eval.escape import excerpt
from iou_eval.numbers import first_loose_number


@dataclass(frozen=True)
class LoadOptions:
    """How to read a file beyond what its content says.

    Attributes:
        box_format: layout of box numbers; None for the format's own default.
        normalized: box numbers are fractions of the image size.
        names: class names by index, for files that give class indices.
        workers: processes a large file's decoding may be shared among.
        split: the data.yaml split a YOLO dataset is read from (None: ``val``), or
            the image set of a VOCdevkit folder (None: ``test`` when there is one).
        masks: read instance masks too (``segmentation``, polygons) for ``segm``.
        keypoints: read keypoints too (``keypoints``, pose label lines) for ``keypoints``.
        executor: a :class:`~iou_eval.protocols.partition.PartExecutor` (a Dask
            cluster) whose workers may decode a large file's chunks.
        angle_unit: ``rad`` or ``deg``, the unit of an angle column (oriented
            boxes given as ``cx, cy, w, h, angle``).
        score_column: the predictions' score under another name (a CSV column,
            a JSON key); None: ``score`` and its usual names.
    """

    box_format: BoxFormat | None = None
    normalized: bool = False
    names: tuple[str, ...] | None = None
    workers: int = 1
    split: str | None = None
    masks: bool = False
    executor: Any = None
    angle_unit: str = "rad"
    keypoints: bool = False
    score_column: str | None = None


# How a hint or a note points at keypoints left unscored.
KEYPOINT_HINT = "score them with --iou-type keypoints"

_FLAG_WORDS = {"": False, "0": False, "false": False, "no": False,
               "1": True, "true": True, "yes": True}  # fmt: skip


def parse_flag(text: str | None, numeric: bool = True) -> bool | None:
    """A 0/1 flag as files write it: 0/1, true/false, yes/no, blank (False); None if unreadable.

    ``numeric``: any other ASCII number counts, non-zero as True (VOC XML
    and CSV writers put ``0.0``); per-image text files take the words only.
    """
    value = (text or "").strip().lower()
    word = _FLAG_WORDS.get(value)
    if word is not None or not numeric or not value.isascii():
        return word
    try:
        return float(value.replace(",", ".")) != 0.0
    except ValueError:
        return None


def strict_floats(tokens: Sequence[str]) -> np.ndarray:
    """``tokens`` as ``[N]`` float64, as numpy reads them, but ASCII only.

    Raises ``ValueError`` (as numpy does for ``'abc'``) also for the tokens
    numpy and ``float()`` read but a data file does not mean: Unicode digits
    (``'١٠'``, ``'１0'``), underscores (``'1_0'``), non-ASCII spaces.  Use
    :func:`iou_eval.numbers.is_number_token` to find the token to name.
    """
    values = np.array(tokens, dtype=np.float64)
    if first_loose_number(tokens) >= 0:
        raise ValueError("not an ASCII number")
    return values


def read_bytes(path: str) -> bytes:
    """The file's bytes, read by :func:`iou_eval.io.source.read_input`.

    Bounded (a device such as ``/dev/zero`` is refused, a gzip bomb stops
    at the input limit), gzip decompressed, a UTF-8 byte-order mark
    dropped; a clear error for a missing path, a folder or an empty file.
    """
    from iou_eval.io.source import read_input

    return read_input(path)


def line_col(data: bytes, offset: int) -> str:
    """``line:column`` (1-based) of a byte offset."""
    offset = max(0, min(offset, len(data)))
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"{line}:{col}"


_BYTE = re.compile(r"\(byte (\d+)\)")
_AT = re.compile(r" - at `\$(.*)`$")


def json_error(path: str, data: bytes, exc: Exception) -> InputError:
    """Turn a JSON decoding error (msgspec's, or the recursion and UTF-8 errors of any
    decoder) into a located :class:`InputError`."""
    if isinstance(exc, UnicodeDecodeError):
        # msgspec says where inside one string; find the byte in the file.
        from iou_eval.io.source import invalid_utf8

        located = invalid_utf8(data, path)
        return located or InputError(path, f"not valid UTF-8: {exc.reason}")
    if isinstance(exc, RecursionError):
        return nesting_error(path, data)
    text = str(exc)
    if isinstance(exc, msgspec.ValidationError):
        where = None
        m = _AT.search(text)
        if m:
            where = m.group(1).lstrip(".") or "$"
            text = text[: m.start()]
        text = text.replace("Expected `array` of length >= 4", "expected 4 box numbers, got fewer")
        text = text.replace("Expected `array` of length <= 4", "expected 4 box numbers, got more")
        text = text.replace("Object missing required field", "missing required key")
        text = text.replace("Expected", "expected")
        return InputError(path, text, where=where)
    m = _BYTE.search(text)
    if m:
        where = line_col(data, int(m.group(1)))
        msg = "malformed JSON: " + text[: m.start()].replace("JSON is malformed: ", "").strip()
        hint = None
        if (
            data[int(m.group(1)) : int(m.group(1)) + 3] in (b"NaN", b"Inf")
            or data[int(m.group(1)) : int(m.group(1)) + 4] == b"-Inf"
        ):
            hint = "NaN and Infinity are not valid JSON numbers"
        return InputError(path, msg, where=where, hint=hint)
    if "truncated" in text:
        return InputError(
            path,
            "malformed JSON: the file ends in the middle of a value",
            where=line_col(data, len(data)),
        )
    return InputError(path, f"malformed JSON: {text}")


# JSON errors that are not msgspec's own: every decoder raises these.
JSON_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError)
# Deeper than this, a JSON value is refused (the decoders recurse, and stop
# near Python's recursion limit of 1000); no format nests beyond a dozen.
MAX_JSON_DEPTH = 512
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def nesting_error(path: str, data: bytes) -> InputError:
    """The error for JSON nested too deeply, at the first place deeper than MAX_JSON_DEPTH."""
    depth = 0
    at = len(data)
    for m in _JSON_TOKEN.finditer(data):
        c = m.group()[:1]
        if c in (b"[", b"{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                at = m.start()
                break
        elif c in (b"]", b"}"):
            depth -= 1
    return InputError(
        path,
        f"JSON nested too deeply: more than {MAX_JSON_DEPTH} levels of arrays and objects",
        where=line_col(data, at),
        hint="no detection format nests values this deep; is the file damaged?",
    )


def decode_json(data: bytes, path: str) -> Any:
    """Any JSON document (untyped: dicts, lists, str, int, float, bool, None), errors located."""
    try:
        return msgspec.json.decode(data)
    except JSON_ERRORS as exc:
        raise json_error(path, data, exc) from None


def folder_files(path: str, ext: str, what: str) -> list[str]:
    """The sorted ``*ext`` (and ``*ext.gz``) files of a folder (hidden ones skipped), or ``[path]``.

    ``what`` names the expected files in the error for a folder with none.
    """
    if path == "-":
        return [path]  # standard input: one file
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if not os.path.isdir(path):
        return [path]
    from iou_eval.io.source import list_folder

    entries = sorted(list_folder(path))
    files = [
        os.path.join(path, e)
        for e in entries
        if e.lower().removesuffix(".gz").endswith(ext)
        and not e.startswith(".")
        and os.path.isfile(os.path.join(path, e))
    ]
    if not files:
        raise InputError(
            path,
            f"expected {what} in this folder, found none",
            hint=f"found: {', '.join(entries[:5]) or 'nothing'}",
        )
    return files


class ClassVocabulary:
    """A file's categories: classes in first-seen order, or the given names in order.

    With names, an integer class is an index into them (0-based) and a word
    must be one of them; without, integer classes are normalized ids.
    """

    def __init__(self, names: tuple[str, ...] | None) -> None:
        self.names = names
        self.vocab: dict[Key, int] = {n: i for i, n in enumerate(dict.fromkeys(names or ()))}
        self.cache: dict[str, int] = {}

    def lookup(self, token: str, file: str, line: int | str | None, source: str = "") -> int:
        """The category index of class ``token``; ``source`` says where it came from."""
        j = self.cache.get(token)
        if j is None:
            j = self.cache[token] = self._resolve(token, file, line, source)
        return j

    def _known(self) -> str:
        names = self.names or ()
        shown = ", ".join(excerpt(n, 40)[1:-1] for n in names[:10]) + (
            ", ..." if len(names) > 10 else ""
        )
        return f"known: {shown}"

    def _resolve(self, token: str, file: str, line: int | str | None, source: str) -> int:
        key = normalize_id(token)  # never raises for a non-empty string
        if self.names is None:
            return self.vocab.setdefault(key, len(self.vocab))
        if isinstance(key, int):
            if not 0 <= key < len(self.names):
                raise InputError(
                    file,
                    f"class index {key}{source} is out of range: {len(self.names)} names "
                    f"were given (0..{len(self.names) - 1})",
                    where=line,
                    hint=self._known(),
                )
            return self.vocab[self.names[key]]
        j = self.vocab.get(token)
        if j is None:
            raise InputError(
                file,
                f"class {excerpt(token)}{source} is not among the given names ({self._known()})",
                where=line,
            )
        return j

    def table(self) -> CategoryTable:
        ids = tuple(self.vocab)
        return CategoryTable(ids, tuple(str(k) for k in ids))
