"""Memory between the stages of a large run: freed pages handed back, the cyclic GC kept off the records."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile (as it was, after).

    A file's decoded records (hundreds of thousands of lists and dicts)
    form no cycles, and most are freed before the block ends; with the
    collector on, each collection of the youngest generation would walk
    every record still alive, again and again as they are turned into
    columns (a tenth of a second per chunk of results, several for a
    ground truth with polygons).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def release_free_memory() -> None:
    """Return the allocator's free pages to the system (glibc's ``malloc_trim``).

    Loading millions of records frees hundreds of megabytes of small
    objects and chunk buffers; glibc keeps them mapped for reuse (the
    command line asks it to keep up to 128 MiB, see ``cli.tune_allocator``),
    where the next stage, whose arrays are larger, cannot reuse them.
    A few milliseconds; a no-op off glibc.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
