"""Reading the text and XML files of the detector-training formats.

One place for what every such file may be: gzip-compressed (a ``.gz`` name
or the gzip magic bytes), with a UTF-8 byte-order mark, with Windows (CRLF)
line ends, and no larger than :data:`MAX_BYTES` once decompressed (a gzip
bomb stops there).  Errors name the file, and for bytes that are not UTF-8
the line.
"""

from __future__ import annotations

import gzip
import os
import zlib

from ..errors import InputError

# Larger inputs could not be held in memory on a typical machine anyway.
MAX_BYTES = 4 << 30
_CHUNK = 1 << 20
UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"


def strip_gz(name: str) -> str:
    """``name`` without a trailing ``.gz`` (``a.json.gz`` -> ``a.json``)."""
    return name[:-3] if name.lower().endswith(".gz") else name


def read_file_bytes(path: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes, decompressed if gzip, without a UTF-8 byte-order mark.

    Raises :class:`InputError` for a missing path, a folder, an unreadable,
    corrupt or too large file.  An empty file gives ``b""``.
    """
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if os.path.isdir(path):
        raise InputError(path, "expected a file, found a folder")
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(path, data, max_bytes)
    elif len(data) > max_bytes:
        raise _too_large(path, max_bytes)
    return data[3:] if data[:3] == UTF8_BOM else data


def read_text_file(path: str, max_bytes: int = MAX_BYTES) -> str:
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


def _gunzip(path: str, data: bytes, max_bytes: int) -> bytes:
    out = bytearray()
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        rest = data
        while rest:
            out += inflater.decompress(rest, _CHUNK)
            if len(out) > max_bytes:
                raise _too_large(path, max_bytes)
            rest = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:
                # Concatenated gzip members, as `cat a.gz b.gz` makes them.
                rest = inflater.unused_data
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if not inflater.eof:
            raise InputError(path, "truncated gzip file: it ends in the middle of the data")
    except (zlib.error, gzip.BadGzipFile, EOFError) as exc:
        raise InputError(path, f"corrupt gzip data: {exc}") from None
    return bytes(out)


def _too_large(path: str, max_bytes: int) -> InputError:
    return InputError(
        path, f"larger than {max_bytes >> 20} MiB once read; refusing to hold it in memory"
    )
