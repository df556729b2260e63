"""Loaders: one module per file format, and detection of the format from content.

Every loader has the signature ``load_X(path, role, options) -> Dataset`` where
``role`` is ``"gt"`` or ``"pred"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import import_module

from ..dataset import Dataset
from ..errors import InputError, UsageError
from .common import LoadOptions
from .text import looks_like_devkit_results

# format name -> (module, function)
FORMATS: dict[str, tuple[str, str]] = {
    "coco": ("coco", "load_coco"),
    "voc-xml": ("voc_xml", "load_voc_xml"),
    "csv": ("table", "load_csv"),
    "txt": ("text", "load_txt"),
    "voc-results": ("text", "load_voc_results"),
}

# Words that mark the first line of a .txt file as a CSV/TSV header.
CSV_HEADER_WORDS = {"image", "image_id", "filename", "file_name", "label", "class", "category",
                    "category_id", "xmin", "x1", "score", "confidence"}  # fmt: skip

__all__ = ["FORMATS", "LoadOptions", "detect_format", "load"]


def _loader(fmt: str) -> Callable[[str, str, LoadOptions], Dataset]:
    module, func = FORMATS[fmt]
    loader: Callable[[str, str, LoadOptions], Dataset] = getattr(
        import_module(f".{module}", __name__), func
    )
    return loader


def _sniff_file(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        raise InputError(path, "file is empty")
    if text[:1] in (b"{", b"["):
        return "coco"
    if text[:1] == b"<":
        return "voc-xml"
    if path.lower().endswith(".txt"):
        # One per-image text file, unless its first line is a CSV header.
        first = text.split(b"\n", 1)[0].decode("utf-8", "replace").lower()
        words = set(first.replace(",", " ").replace(";", " ").replace("\t", " ").split())
        if not words & CSV_HEADER_WORDS:
            return "txt"
    return "csv"


def detect_format(path: str) -> str:
    """The format of ``path`` judged from its content (a folder from its files)."""
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if os.path.isdir(path):
        # Hidden names (macOS's ._x.xml, .DS_Store) say nothing about the format.
        entries = sorted(e for e in os.listdir(path) if not e.startswith("."))
        exts = {os.path.splitext(e)[1].lower() for e in entries}
        if ".xml" in exts:
            return "voc-xml"
        if ".txt" in exts and "txt" in FORMATS:
            txt = [e for e in entries if e.lower().endswith(".txt")]
            if all(looks_like_devkit_results(e) for e in txt):
                return "voc-results"
            return "txt"
        raise InputError(
            path,
            "cannot tell the format of this folder: expected VOC .xml files"
            + (" or per-image .txt files" if "txt" in FORMATS else ""),
            hint=f"found: {', '.join(entries[:5]) or 'nothing'}",
        )
    if looks_like_devkit_results(path):
        return "voc-results"
    return _sniff_file(path)


def load(
    path: str, role: str = "gt", fmt: str | None = None, options: LoadOptions | None = None
) -> Dataset:
    """Read ``path`` as ground truth (``role="gt"``) or predictions (``"pred"``).

    ``fmt`` overrides detection; it must be one of :data:`FORMATS`.
    """
    if role not in ("gt", "pred"):
        raise ValueError(f"role must be 'gt' or 'pred', got {role!r}")
    if fmt is None:
        fmt = detect_format(path)
    elif fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    elif not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    return _loader(fmt)(path, role, options or LoadOptions())
