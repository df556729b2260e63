"""Handing freed memory back to the system between the stages of a large run."""

from __future__ import annotations

import sys


def release_free_memory() -> None:
    """Return the allocator's free pages to the system (glibc's ``malloc_trim``).

    Loading millions of records frees hundreds of megabytes of small
    objects and chunk buffers; glibc keeps them mapped for reuse (the
    command line asks it to keep up to 512 MiB, see ``cli.tune_allocator``),
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
