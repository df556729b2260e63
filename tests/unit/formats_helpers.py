"""Helpers for the tests of the detector-training formats (YOLO, LabelMe, CVAT, Open Images)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

NEW_FORMATS = ("yolo", "labelme", "cvat-xml", "openimages")


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """The new formats are in the registry (kept for the tests that ask for them)."""
    from iou_eval.io.loaders.registry import format_names

    assert set(NEW_FORMATS) <= set(format_names())


def write(
    path: Path, text: str, *, gz: bool = False, bom: bool = False, crlf: bool = False
) -> Path:
    """Write ``text`` (UTF-8), optionally gzip-compressed, with a BOM or CRLF line ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def image(path: Path, w: int, h: int, orientation: int | None = None) -> Path:
    """A blank PNG, or a JPEG (``.jpg``) stored turned when ``orientation`` is 5..8."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".png":
        Image.new("1", (w, h)).save(path)
        return path
    exif = Image.Exif()
    if orientation is not None:
        exif[274] = orientation
        if orientation >= 5:
            w, h = h, w
    Image.new("L", (w, h)).save(path, quality=10, exif=exif.tobytes())
    return path
