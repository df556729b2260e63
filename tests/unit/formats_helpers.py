"""Helpers for the tests of the detector-training formats (YOLO, LabelMe, CVAT, Open Images)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

NEW_FORMATS = {
    "yolo": ("yolo", "load_yolo"),
    "labelme": ("labelme", "load_labelme"),
    "cvat-xml": ("cvat_xml", "load_cvat_xml"),
    "openimages": ("openimages", "load_openimages"),
}


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the new formats known to ``iou_eval.loaders.load`` (and so to ``api.evaluate``)."""
    import iou_eval.loaders as loaders

    for name, entry in NEW_FORMATS.items():
        monkeypatch.setitem(loaders.FORMATS, name, entry)


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
