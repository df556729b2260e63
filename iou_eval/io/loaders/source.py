"""Reading the text and XML files of the detector-training formats.

A thin layer over :mod:`iou_eval.io.source`, the one reader of every input:
``-`` is standard input (read once, its bytes kept), gzip data is
decompressed (a ``.gz`` name or the magic bytes; a bomb stops at the input
limit), a UTF-8 byte-order mark is dropped, and CRLF line ends become
``\\n`` here.  Errors name the file, and for bytes that are not UTF-8 the
line.
"""

from __future__ import annotations

from iou_eval.errors import InputError
from iou_eval.io.source import STDIN, display_name, read_source

UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"


def strip_gz(name: str) -> str:
    """``name`` without a trailing ``.gz`` (``a.json.gz`` -> ``a.json``)."""
    return name[:-3] if name.lower().endswith(".gz") else name


def read_file_bytes(path: str, max_bytes: int | None = None) -> bytes:
    """The file's bytes, decompressed if gzip, without a UTF-8 byte-order mark.

    ``-`` reads standard input.  Raises :class:`InputError` for a missing
    path, a folder, an unreadable, corrupt or too large file
    (``max_bytes``; default: the input limit of :mod:`iou_eval.io.source`).
    An empty file gives ``b""``.
    """
    return read_source(path, limit_bytes=max_bytes, empty_ok=True).data


def read_text_file(path: str, max_bytes: int | None = None) -> str:
    """The file as text with ``\\n`` line ends (see :func:`read_file_bytes`).

    A CRLF pair becomes ``\\n``; a lone ``\\r`` is kept (splitting on it
    would shift line numbers away from what an editor shows).  Bytes that
    are not UTF-8 raise an :class:`InputError` citing the line.
    """
    return decode_file_text(path, read_file_bytes(path, max_bytes))


def decode_file_text(path: str, data: bytes) -> str:
    """A file's bytes (read by :func:`read_file_bytes`) as :func:`read_text_file` gives them."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            display_name(path),
            f"expected UTF-8 text, found the byte 0x{data[exc.start]:02x}",
            where=line,
        ) from None
    return text.replace("\r\n", "\n") if "\r" in text else text


__all__ = [
    "GZIP_MAGIC",
    "STDIN",
    "UTF8_BOM",
    "decode_file_text",
    "read_file_bytes",
    "read_text_file",
    "strip_gz",
]
