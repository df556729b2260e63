"""Reading the text and XML files of the detector-training formats.

One place for what every such file may be: gzip-compressed (a ``.gz`` name
or the gzip magic bytes), with a UTF-8 byte-order mark, with Windows (CRLF)
line ends, and no larger than the input limit once decompressed (a gzip
bomb stops there; see :mod:`iou_eval.source`, which reads them).  Errors
name the file, and for bytes that are not UTF-8 the line.
"""

from __future__ import annotations

from ..errors import InputError

UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"


def strip_gz(name: str) -> str:
    """``name`` without a trailing ``.gz`` (``a.json.gz`` -> ``a.json``)."""
    return name[:-3] if name.lower().endswith(".gz") else name


def read_file_bytes(path: str, max_bytes: int | None = None) -> bytes:
    """The file's bytes, decompressed if gzip, without a UTF-8 byte-order mark.

    Read by :func:`iou_eval.source.read_input` (``max_bytes``: its limit,
    by default the input limit).  Raises :class:`InputError` for a missing
    path, a folder, a device, an unreadable, corrupt or too large file.  An
    empty file gives ``b""``.
    """
    from ..source import read_input

    return read_input(path, limit_bytes=max_bytes, empty_ok=True)


def read_text_file(path: str, max_bytes: int | None = None) -> str:
    """The file as text with ``\\n`` line ends (see :func:`read_file_bytes`).

    A CRLF pair becomes ``\\n``; a lone ``\\r`` is kept (splitting on it
    would shift line numbers away from what an editor shows).  Bytes that
    are not UTF-8 raise an :class:`InputError` citing the line.
    """
    data = read_file_bytes(path, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            path, f"expected UTF-8 text, found the byte 0x{data[exc.start]:02x}", where=line
        ) from None
    return text.replace("\r\n", "\n") if "\r" in text else text
