"""Reading an input file whole, within a bound, with errors that say which file and why.

Rules:

- ``-`` is standard input.  It is read once per process and the bytes are
  kept, so detecting the format and loading both see the same bytes
  (detection works on bytes, never on a stream it would consume).
- gzip data (a ``.gz`` name or the gzip magic bytes ``1f 8b``) is
  decompressed while it is read; the limit applies to the decompressed
  size, so a gzip bomb stops at the limit.
- The limit is ``IOU_EVAL_MAX_INPUT`` (``8G``, ``500M``, ``1048576``) or, by
  default, 8 GiB or the memory available now, whichever is smaller: a file
  beyond it could not be held in memory anyway.  A regular file larger
  than the limit is refused before it is read; a pipe or FIFO is refused
  as soon as it has delivered more.
- Devices (``/dev/zero``, ``/dev/urandom``, a terminal) are refused: they
  never end.  A FIFO or a pipe (``<(zcat …)``) is read like a file.
  A FIFO that nobody writes to blocks, as ``cat`` would.
- A UTF-8 byte-order mark is dropped (``Source.bom_stripped`` says so).
- Missing path, folder, permission denied, empty file: an
  :class:`InputError` naming the file.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from iou_eval.errors import InputError, UsageError

ENV_LIMIT = "IOU_EVAL_MAX_INPUT"
DEFAULT_LIMIT = 8 << 30
STDIN = "-"
STDIN_NAME = "<stdin>"
UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    """An input read whole.

    Attributes:
        path: as given (``-`` for standard input).
        data: the bytes, decompressed, without a UTF-8 byte-order mark.
        bom_stripped: a UTF-8 byte-order mark was dropped.
        gzipped: the bytes were gzip-compressed.
    """

    path: str
    data: bytes
    bom_stripped: bool = False
    gzipped: bool = False

    @property
    def name(self) -> str:
        """The name errors and reports use (``<stdin>`` for ``-``)."""
        return display_name(self.path)

    @property
    def notes(self) -> list[str]:
        """What was done to the bytes, for warnings or the report."""
        out = []
        if self.gzipped:
            out.append(f"{self.name}: gzip-compressed, decompressed")
        if self.bom_stripped:
            out.append(f"{self.name}: a UTF-8 byte-order mark was skipped")
        return out


def display_name(path: str) -> str:
    return STDIN_NAME if path == STDIN else path


def parse_size(text: str, what: str = ENV_LIMIT) -> int:
    """``8G``, ``512M``, ``64KiB``, ``1048576`` -> bytes (binary units)."""
    m = _SIZE.fullmatch(text)
    if not m or int(m.group(1)) == 0:
        raise UsageError(f"{what}: expected a size like 8G, 500M or 1048576, got {text!r}")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def format_size(n: int) -> str:
    """``8 GiB``, ``1.5 MiB``, ``300 bytes``."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def input_limit() -> int:
    """The byte limit of one input: ``IOU_EVAL_MAX_INPUT``, else min(8 GiB, available memory)."""
    env = os.environ.get(ENV_LIMIT, "").strip()
    if env:
        return parse_size(env)
    available = _available_memory()
    return DEFAULT_LIMIT if available is None else min(DEFAULT_LIMIT, available)


# Standard input can be read once; its bytes are kept for the next reader.
_stdin_cache: dict[int, Source] = {}


def read_source(path: str, *, limit_bytes: int | None = None, empty_ok: bool = False) -> Source:
    """Read ``path`` (``-``: standard input) whole within ``limit_bytes``; see the module rules."""
    limit = input_limit() if limit_bytes is None else limit_bytes
    if path == STDIN:
        src = _stdin_cache.get(0)
        if src is None:
            src = _read_stdin(limit)
            _stdin_cache[0] = src
    else:
        src = _read_path(path, limit)
    if not empty_ok and (not src.data or src.data.isspace()):
        raise InputError(src.name, "file is empty")
    return src


def read_input(
    path: str,
    *,
    limit_bytes: int | None = None,
    empty_ok: bool = False,
    notes: list[str] | None = None,
) -> bytes:
    """The bytes of ``path`` (see :func:`read_source`); what was done is appended to ``notes``."""
    src = read_source(path, limit_bytes=limit_bytes, empty_ok=empty_ok)
    if notes is not None:
        notes += src.notes
    return src.data


def _is_device(mode: int) -> bool:
    """A character or block device (a terminal, ``/dev/zero``): read, it never ends."""
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _read_stdin(limit: int) -> Source:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError(STDIN_NAME, "standard input is closed")
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        if _is_device(os.fstat(stream.fileno()).st_mode):
            what = "a terminal" if stream.isatty() else "a device"
            raise InputError(
                STDIN_NAME,
                f"standard input is {what}, not data",
                hint="pipe a file into it: iou-eval gt.json - < preds.json",
            )
    return _read_stream(STDIN, stream, limit, size=None)


def check_input_path(path: str) -> os.stat_result:
    """``path``'s status when it can be read as an input file; else the error a read would give.

    For readers that look at a file before :func:`read_source` (format
    detection): a device such as ``/dev/zero`` is refused before any byte
    is read.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, "no such file or folder") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(path, "expected a file, found a folder")
    if _is_device(st.st_mode):
        raise InputError(path, "a device, not a file: it would be read without end")
    if stat.S_ISSOCK(st.st_mode):
        raise InputError(path, "a socket, not a file")
    return st


def list_folder(path: str) -> list[str]:
    """The names in folder ``path`` (unsorted, as ``os.listdir``), or a located error.

    A folder that cannot be listed (permission denied, gone meanwhile, not
    a folder after all) is an :class:`InputError` naming it, never an
    ``OSError`` reaching the user.
    """
    try:
        return os.listdir(path)
    except FileNotFoundError:
        raise InputError(path, "no such file or folder") from None
    except NotADirectoryError:
        raise InputError(path, "expected a folder, found a file") from None
    except OSError as exc:
        raise InputError(
            path,
            f"cannot list this folder: {exc.strerror or exc}",
            hint="give the user running iou-eval read and execute permission on it (chmod a+rx)",
        ) from None


def _read_path(path: str, limit: int) -> Source:
    st = check_input_path(path)
    regular = stat.S_ISREG(st.st_mode)
    if regular and st.st_size > limit and not _gz_name(path):
        raise _too_large(path, limit, st.st_size)
    try:
        with open(path, "rb") as fh:
            return _read_stream(path, fh, limit, size=st.st_size if regular else None)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def _gz_name(path: str) -> bool:
    return path.lower().endswith(".gz")


def _read_stream(path: str, fh: BinaryIO, limit: int, size: int | None) -> Source:
    """Read ``fh`` whole: decompress gzip, drop a BOM, stop beyond ``limit``."""
    head, fh = _head(fh, 2)
    gzipped = head == GZIP_MAGIC
    if _gz_name(path) and not gzipped:
        raise InputError(display_name(path), "named .gz but not gzip data (no 1f 8b header)")
    data = _gunzip(path, fh, limit) if gzipped else _read_bounded(path, fh, limit, size)
    bom = data.startswith(UTF8_BOM)
    if bom:
        data = data[len(UTF8_BOM) :]
    return Source(path, data, bom_stripped=bom, gzipped=gzipped)


def _head(fh: Any, n: int) -> tuple[bytes, Any]:
    """The first ``n`` bytes of ``fh`` and a stream that still yields them."""
    if hasattr(fh, "peek"):
        return bytes(fh.peek(n)[:n]), fh
    # No read-ahead buffer (a replaced sys.stdin): read them and put them back.
    head = fh.read(n)
    return head, _Prefixed(head, fh)


class _Prefixed:
    """``head`` followed by the rest of ``fh``, for readers that only call ``read``."""

    def __init__(self, head: bytes, fh: Any) -> None:
        self.head = head
        self.fh = fh

    def read(self, n: int = -1) -> bytes:
        if not self.head:
            return bytes(self.fh.read(n))
        if n < 0:
            out, self.head = self.head + self.fh.read(), b""
        else:
            out, self.head = self.head[:n], self.head[n:]
        return out


def _read_bounded(path: str, fh: BinaryIO, limit: int, size: int | None) -> bytes:
    if size:
        # A regular file: one read of the size stat gave, then whatever it grew by.
        first = fh.read(size)
        rest = _read_chunks(path, fh, limit - len(first), limit)
        return first + rest if rest else first
    return _read_chunks(path, fh, limit, limit)


def _bounded(read: Callable[[int], bytes], room: int, too_large: Callable[[], InputError]) -> bytes:
    """What ``read`` gives, up to ``room`` bytes; ``too_large()`` is raised as soon as there are more."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = read(min(_CHUNK, room - total + 1))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > room:
            raise too_large()


def _read_chunks(path: str, fh: BinaryIO, room: int, limit: int) -> bytes:
    """Up to ``room`` more bytes; an error as soon as there are more."""
    return _bounded(fh.read, room, lambda: _too_large(path, limit, None))


def _gunzip(path: str, fh: BinaryIO, limit: int) -> bytes:
    name = display_name(path)

    def too_large() -> InputError:
        return InputError(
            name,
            f"decompresses to more than the input limit of {format_size(limit)}",
            hint=f"set {ENV_LIMIT} (e.g. {ENV_LIMIT}=16G) to raise the limit",
        )

    try:
        with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
            return _bounded(gz.read, limit, too_large)
    except EOFError:
        raise InputError(name, "the gzip data is truncated") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(name, f"not valid gzip data: {exc}") from None


def _too_large(path: str, limit: int, size: int | None) -> InputError:
    what = f"is {format_size(size)}, more" if size is not None else "has more"
    return InputError(
        display_name(path),
        f"{what} than the input limit of {format_size(limit)}",
        hint=f"set {ENV_LIMIT} (e.g. {ENV_LIMIT}=16G) to raise the limit",
    )


_OTHER_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def decode_text(data: bytes, path: str) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped), or an error at ``line:column``.

    The column counts characters, as editors do.
    """
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    for bom, encoding in _OTHER_BOMS.items():
        if data.startswith(bom):
            raise InputError(
                display_name(path),
                f"{encoding} text (byte-order mark {bom.hex(' ')}); iou-eval reads UTF-8",
                hint="save the file as UTF-8",
            )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(data, path, exc.start, exc.end, exc.reason) from None


def read_head(path: str, n: int = 4096) -> bytes:
    """The first ``n`` bytes of ``path`` as the loaders will see them: decompressed, no BOM.

    For format detection: a file is not read whole (a gzip file is inflated
    only as far as its first ``n`` bytes); ``-`` (standard input) is read
    whole once and kept (:func:`read_source`), so detecting its format does
    not consume what the loader reads next.  Errors as :func:`read_source`.
    """
    if path == STDIN:
        return read_source(path, empty_ok=True).data[:n]
    st = check_input_path(path)
    if not stat.S_ISREG(st.st_mode):
        # A FIFO or a pipe can be read once only: read it whole, as the loader will.
        return read_source(path, empty_ok=True).data[:n]
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max(n, 64 << 10))
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, n + len(UTF8_BOM))
        except zlib.error as exc:
            raise InputError(path, f"not valid gzip data: {exc}") from None
    elif _gz_name(path):
        raise InputError(path, "named .gz but not gzip data (no 1f 8b header)")
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    return raw[:n]


# Slices checked at a time by invalid_utf8: a copy of this size at most.
_UTF8_SLICE = 16 << 20


def invalid_utf8(data: bytes | memoryview, path: str) -> InputError | None:
    """The located error of the first byte of ``data`` that is not UTF-8, or None.

    For a decoder that only says *that* the text is not UTF-8 (msgspec
    gives the offset inside one string): ``data`` is checked a slice at a
    time, so no second copy of a large file is made.
    """
    n = len(data)
    at = 0
    while at < n:
        end = min(n, at + _UTF8_SLICE)
        piece = bytes(data[at:end])
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError as exc:
            if end < n and exc.start > len(piece) - 4 and exc.end == len(piece):
                at += exc.start  # a character cut by the slice's end: look again from it
                continue
            whole = data if isinstance(data, (bytes, bytearray)) else bytes(data[: at + exc.end])
            return _utf8_error(whole, path, at + exc.start, at + exc.end, exc.reason)
        at = end
    return None


def _utf8_error(
    data: bytes | bytearray, path: str, start: int, end: int, reason: str
) -> InputError:
    """``file:line:column: not valid UTF-8`` for the bytes ``data[start:end]``."""
    line = data.count(b"\n", 0, start) + 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    bad = data[start : max(end, start + 1)][:4].hex(" ")
    return InputError(
        display_name(path),
        f"not valid UTF-8: byte {bad} ({reason})",
        where=f"{line}:{column}",
        hint="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
    )


def file_holds(path: str, needle: bytes, limit: int | None = None) -> bool:
    """Whether the file's bytes (its first ``limit`` of them) hold ``needle``; False if unreadable."""
    import mmap

    if path == "-" or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            if limit is not None:
                return needle in fh.read(limit)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as whole:
                return whole.find(needle) >= 0
    except (OSError, ValueError):  # an empty file cannot be mapped
        return False
