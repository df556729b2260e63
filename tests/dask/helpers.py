"""Part functions for the cluster tests; workers import them from here by name."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any


def kill_once(marker: str, fn: Callable[[Any, Any], Any], shared: Any, part: Any) -> Any:
    """``fn(shared, part)``, except that the first call anywhere ends its own worker process.

    The marker file is created atomically (``O_EXCL``) and holds the pid of
    the worker that died, so exactly one task kills exactly one worker.
    """
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return fn(shared, part)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(1)  # no cleanup, as a crash or the OOM killer leaves it


class KillingExecutor:
    """An executor on ``inner`` whose jobs of the part function ``only`` go through :func:`kill_once`."""

    def __init__(self, inner: Any, marker: str, only: str) -> None:
        self.inner, self.marker, self.only, self.slots = inner, marker, only, inner.slots

    def run(self, fn, shared, parts, progress=None):
        if getattr(fn, "__name__", "") == self.only:
            fn = partial(kill_once, self.marker, fn)
        return self.inner.run(fn, shared, parts, progress)


class InProcess:
    """An executor that runs the parts here, one after the other (the seam without a cluster)."""

    def __init__(self, slots: int = 3) -> None:
        self.slots = slots
        self.jobs: list[tuple[str, int]] = []

    def run(self, fn, shared, parts, progress=None):
        self.jobs.append((getattr(fn, "__name__", repr(fn)), len(parts)))
        out = []
        for i, p in enumerate(parts):
            out.append(fn(shared, p))
            if progress is not None:
                progress(i)
        return out
