"""Loaders: one module per file format, listed in :mod:`.registry`.

Every loader has the signature ``load_X(path, role, options) -> Dataset`` where
``role`` is ``"gt"`` or ``"pred"``, and returns what the file says: boxes in
pixels, or fractions of the image size flagged as such (the alignment step
scales them).  Importing this package is cheap (the command line's
``--help`` lists the formats without loading numpy).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from iou_eval.errors import InputError, UsageError
from iou_eval.io.loaders.registry import detect_format, format_names, get

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.data.dataset import Dataset
    from iou_eval.io.loaders.common import LoadOptions

__all__ = ["LoadOptions", "detect_format", "format_names", "load"]


def __getattr__(name: str) -> Any:
    if name == "LoadOptions":
        from iou_eval.io.loaders.common import LoadOptions

        return LoadOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load(
    path: str, role: str = "gt", fmt: str | None = None, options: LoadOptions | None = None
) -> Dataset:
    """Read ``path`` as ground truth (``role="gt"``) or predictions (``"pred"``).

    ``fmt`` overrides detection; it must be a registered format.
    """
    from iou_eval.io.loaders.common import LoadOptions

    if role not in ("gt", "pred"):
        raise ValueError(f"role must be 'gt' or 'pred', got {role!r}")
    if fmt is None:
        fmt = detect_format(path)
    elif path != "-" and not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    spec = get(fmt)
    if role not in spec.roles:
        raise UsageError(f"format {fmt!r} holds {' and '.join(spec.roles)} only, not {role}")
    from iou_eval.engine.memory import gc_paused

    with gc_paused():
        return spec.load()(path, role, options or LoadOptions())
