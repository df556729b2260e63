"""Files written whole or not at all, for the picture reporters."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from iou_eval.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_whole(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(fh)`` on a temporary file beside ``path``, then rename it over ``path``.

    A reader never sees half a file, and a failure leaves the old file (or
    none).  The file gets the permissions a plain ``open`` would give
    (``mkstemp`` alone would leave it readable by its owner only).  Folders
    are created as needed.  Raises :class:`InputError` naming the path when
    the system refuses.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(str(target), f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(str(target), f"cannot write: {exc.strerror or exc}") from None
        raise
    return target
