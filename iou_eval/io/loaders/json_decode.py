"""Fast decoding of large JSON files: a results list cut into chunks, decoded in parts.

Format rules live in the format's loader (:mod:`.coco`); this module only
knows how to cut a JSON list at element boundaries, decode the pieces a
few megabytes at a time (in worker processes when asked), and join their
columns in file order.  Any doubt returns None and the caller decodes the
whole file, which also locates errors.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import msgspec
import numpy as np

from iou_eval.engine.memory import gc_paused, release_free_memory
from iou_eval.engine.parallel import run_parts, run_thread_pool
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import JSON_ERRORS

# columns(chunk, at, sink): the columns of one chunk (``[`` elements ``]``) of
# the file's bytes [at, at + n), or None when unsure; see chunked_results.
ChunkColumns = Callable[[bytearray, int, "mmap.mmap | None"], "dict | None"]


def quiet_decode(decoder: msgspec.json.Decoder, data):
    # Millions of small records: the cyclic GC would rescan them again and
    # again while they are built (none of them can form a cycle).
    with gc_paused():
        return decoder.decode(data)


# Where one results-list element ends and the next begins: "}" "," "{".
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")


def plan_chunks(data, chunk_bytes: int) -> list[tuple[int, int]] | None:
    """Byte spans ``(start, end)`` of a list's elements, about ``chunk_bytes`` each, or None.

    ``data`` is the file's bytes (a mapping of it).  None when the file is
    small or is not a list.  Every chunk starts at a true element boundary
    (the first by construction, each next one because its predecessor
    decoded whole), so tokenizing a chunk from its start reads strings as
    the whole file does, escapes (an RLE's backslashes) included: a cut
    inside a string or a nested value leaves a chunk that is not valid JSON,
    and decoding proves every cut.
    """
    n = len(data)
    if n < 2 * chunk_bytes:
        return None
    head = bytes(data[:64])
    skip = len(head) - len(head.lstrip(b"\xef\xbb\xbf \t\r\n"))
    tail = bytes(data[max(0, n - 64) :])
    end = n - (len(tail) - len(tail.rstrip(b" \t\r\n")))
    if data[skip : skip + 1] != b"[" or data[end - 1 : end] != b"]":
        return None
    spans = []
    pos, end = skip + 1, end - 1
    while True:
        m = _BOUNDARY.search(data, pos + chunk_bytes, end) if end - pos > chunk_bytes else None
        if m is None:
            spans.append((pos, end))
            return spans
        spans.append((pos, m.start() + 1))
        pos = m.end() - 1


@contextmanager
def arenas_kept(nbytes: int):
    """Keep about ``nbytes`` of the small-object allocator's memory mapped meanwhile.

    CPython returns an arena (1 MiB of small objects) to the system as soon as
    its last object dies, so each chunk's records, freed before the next
    chunk is decoded, would be faulted in again page by page: about a third
    of the decoding time.  One small object left alive every 64 KiB keeps
    the arenas; their freed pools serve the next chunk.
    """
    # 400 bytes and the object's header stay under pymalloc's 512-byte limit.
    filler = [bytes(400) for _ in range(nbytes // 448)]
    pins = list({id(b) >> 16: b for b in filler}.values())
    del filler
    try:
        yield
    finally:
        del pins


def _decode_spans(
    data,
    spans: list[tuple[int, int]],
    columns: ChunkColumns,
    chunk_bytes: int,
    sink: mmap.mmap | None = None,
) -> list[dict] | None:
    """The columns of the elements in each of ``spans`` (wrapped as a list), or None.

    Chunk after chunk, so that only one chunk's records exist at a time and
    their memory is reused.  None on anything unexpected: the caller then
    decodes the whole file, which also locates errors.
    """
    with arenas_kept(4 * chunk_bytes), gc_paused():  # a chunk's records take about 3.5x its bytes
        return _decode_each(data, spans, columns, sink)


def _decode_each(
    data, spans: list[tuple[int, int]], columns: ChunkColumns, sink: mmap.mmap | None
) -> list[dict] | None:
    parts: list[dict] = []
    for a, b in spans:
        chunk = bytearray(b - a + 2)
        chunk[0], chunk[-1] = ord("["), ord("]")
        with memoryview(data) as view:
            chunk[1:-1] = view[a:b]
        _release(data, a, b)
        try:
            cols = columns(chunk, a, sink)
        except (*JSON_ERRORS, InputError):
            return None
        if cols is None:
            return None
        parts.append(cols)
        del chunk
    return parts


def _release(data, a: int, b: int) -> None:
    """Unmap the file's pages ``[a, b)`` once copied: they would otherwise stay in
    this process's resident memory (the page cache keeps them for a re-read)."""
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        lo = a - a % mmap.PAGESIZE
        hi = b - b % mmap.PAGESIZE  # the page holding b is the next chunk's first
        if hi > lo:
            data.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _join(parts: list[dict], release: bool = False) -> dict:
    """Columns of consecutive pieces joined; each piece's arrays are dropped as they go.

    ``release``: the pieces were made in other threads, whose heaps this
    thread does not reuse; their pages go back to the system after each
    large column, so that joining the next one does not add to them.
    """
    out = {}
    for k in list(parts[0]):
        out[k] = np.concatenate([p.pop(k) for p in parts])
        if release and out[k].nbytes >= _RELEASE_BYTES:
            release_free_memory()
    return out


# A joined column this large returns its pieces' pages (see _join).
_RELEASE_BYTES = 1 << 22


def chunked_results(
    path: str,
    columns: ChunkColumns,
    workers: int = 1,
    chunk_bytes: int = 4 << 20,
    executor: Any = None,
    sink_key: str | None = None,
) -> dict | None:
    """Columns of a large results list, decoded a chunk at a time, or None.

    ``columns(chunk, at, sink)`` turns one chunk (``[`` elements ``]``: the
    file's bytes from ``at`` on) into a dict of ``[n]`` arrays, or None when
    unsure.  With ``sink_key``, and no executor, ``sink`` is a buffer the
    size of the file shared with the worker processes, where a chunk may put
    up to its own length of bytes at its own offset (the strings it read):
    they reach this process without being sent back and joined, and the
    result holds the whole buffer as ``uint8[file size]`` under ``sink_key``.
    Otherwise ``sink`` is None.

    Decoding 400k predictions at once holds 400k small records and the whole
    file in memory; a few megabytes at a time holds little of either.  With
    ``workers > 1`` the chunks are shared out, in file order, among that many
    processes; with an ``executor`` (a Dask cluster) its workers decode them
    from the file, where they see it (else this returns None).  On any
    failure (a bad file included) this returns None and the caller decodes
    the whole file, which also locates errors.
    """
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size < 2 * chunk_bytes:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    sink = None
    try:
        spans = plan_chunks(data, chunk_bytes)
        if spans is None:
            return None
        if executor is not None:
            source = (os.path.abspath(path), fingerprint(data), columns, chunk_bytes)
            groups = _contiguous(spans, min(executor.slots, len(spans)))
            parts = executor.run(decode_file_spans, source, groups)
        else:
            # Anonymous shared memory: pages no chunk writes take no room.
            sink = mmap.mmap(-1, len(data)) if sink_key is not None else None
            groups = _contiguous(spans, min(max(1, workers), len(spans)))
            parts = run_parts(lambda g: _decode_spans(data, g, columns, chunk_bytes, sink), groups)
    finally:
        data.close()
    if any(p is None for p in parts):
        return None
    # One copy of each column, from every chunk's piece in file order.
    out = _join([cols for p in parts for cols in p])
    if sink is not None and sink_key is not None:
        out[sink_key] = np.frombuffer(sink, dtype=np.uint8)
    return out


# Read by threads: runs of elements of about this many bytes (smaller files: one run).
_THREAD_PART_BYTES = 4 << 20
# One thread reads a file of up to this many runs whole: cutting it would only
# hand its pages back sooner, and joining the runs' columns copies about as
# many bytes as the file holds.
_ONE_THREAD_RUNS = 16

# read(data, start, end, bare): the columns of data[start:end] (a whole list,
# or with bare a run of its elements), or None when unsure.
SpanReader = Callable[..., "dict | None"]


def threaded_results(path: str, read: SpanReader, workers: int = 1) -> dict | None:
    """Columns of a results list read in place by ``read`` in up to ``workers`` threads, or None.

    For a reader that releases the GIL (the compiled one): the file is
    mapped, not copied; a large list is cut at element boundaries into runs
    of elements of a few megabytes, read where they lie by a pool of
    threads, each run's pages handed back once read (so the file's pages
    are not all resident at once), and the columns joined in file order.
    One thread reads a list of up to :data:`_ONE_THREAD_RUNS` runs whole.
    As for :func:`chunked_results`, each cut is proven by the run before it
    reading whole.  None when the reader is not sure of any run (or the file
    cannot be mapped): the caller reads the file another way, which also
    locates errors.
    """
    try:
        with open(path, "rb") as fh:
            if not os.fstat(fh.fileno()).st_size:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        if workers <= 1 and len(data) <= _ONE_THREAD_RUNS * _THREAD_PART_BYTES:
            return read(data)
        spans = plan_chunks(data, _THREAD_PART_BYTES)
        if spans is None:
            return read(data)

        def run(span: tuple[int, int]) -> dict | None:
            cols = read(data, span[0], span[1], True)
            _release(data, span[0], span[1])  # a page another thread reads is read again
            return cols

        parts = run_thread_pool(run, spans, workers)
        if any(p is None for p in parts):
            return None
        return _join(parts, release=True)
    finally:
        data.close()


def _contiguous(spans: list[tuple[int, int]], n: int) -> list[list[tuple[int, int]]]:
    """``n`` contiguous runs of chunks of about equal bytes, in file order."""
    if n <= 1:
        return [spans]
    ends = np.cumsum([b - a for a, b in spans])
    cut = np.searchsorted(ends, ends[-1] * np.arange(1, n) / n, side="right")
    bounds = [0, *cut.tolist(), len(spans)]
    return [spans[a:b] for a, b in pairwise(bounds) if b > a]


def fingerprint(data) -> tuple[int, str]:
    """The file's size and a digest of its first and last 64 KiB: the same file, elsewhere."""
    import hashlib  # a cluster's runs only

    head, tail = bytes(data[: 1 << 16]), bytes(data[max(0, len(data) - (1 << 16)) :])
    return len(data), hashlib.blake2b(head + tail, digest_size=16).hexdigest()


def decode_file_spans(
    source: tuple[str, tuple[int, str], ChunkColumns, int], spans: list[tuple[int, int]]
) -> list[dict] | None:
    """The columns of ``spans`` of the file ``source`` names, read where this runs (one part).

    ``source``: ``(absolute path, fingerprint, columns, chunk_bytes)``.  None
    when unsure, or when the file here is not the one the spans were cut in
    (a worker on another machine): the caller then decodes the file itself.
    """
    path, expected, columns, chunk_bytes = source
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size != expected[0]:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        if fingerprint(data) != expected:
            return None
        return _decode_spans(data, spans, columns, chunk_bytes)
    finally:
        data.close()
