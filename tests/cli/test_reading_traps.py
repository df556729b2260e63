"""Reading traps a new user still met: each gives the right number, a doubt, or a located error.

Each test here fails on the code before the fix: a wrong number without a
word, a dead end, or a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..unit.formats_helpers import image, write
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


# --------------------------------------------------------------------------- unreadable folders


def _refuse_listing(monkeypatch, folder: Path) -> None:
    """``os.listdir`` / ``os.scandir`` of ``folder`` fail as an unreadable folder's do."""
    target = os.path.abspath(folder)

    def refusing(real):
        def listing(path=".", *args, **kwargs):
            if os.path.abspath(os.fspath(path)) == target:
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        return listing

    monkeypatch.setattr(os, "listdir", refusing(os.listdir))
    monkeypatch.setattr(os, "scandir", refusing(os.scandir))


@pytest.mark.parametrize(
    ("gt", "preds", "flags", "refused"),
    [
        ("voc/annotations", "voc/predictions", (), "voc/annotations"),
        ("voc/annotations", "voc/predictions", ("--gt-format", "voc-xml"), "voc/annotations"),
        ("coco/gt.json", "voc/predictions", (), "voc/predictions"),
        ("labelme/gt", "labelme/preds", ("--gt-format", "labelme"), "labelme/gt"),
        ("yolo/data.yaml", "yolo/predictions/labels", ("--pred-format", "yolo"),
         "yolo/predictions/labels"),
        ("openimages/gt.csv", "openimages/preds.csv", ("--images", "images"), "images"),
    ],
)  # fmt: skip
def test_an_unreadable_folder_is_a_located_error(monkeypatch, gt, preds, flags, refused):
    flags = tuple(str(SAMPLE / f) if f == "images" else f for f in flags)
    _refuse_listing(monkeypatch, SAMPLE / refused)
    r = run(SAMPLE / gt, SAMPLE / preds, *flags, expect=1)
    assert f"{SAMPLE / refused}: cannot list this folder: Permission denied" in r.err
    assert "Traceback" not in r.err


@pytest.mark.skipif(IS_ROOT, reason="root reads every folder")
def test_a_folder_without_read_permission_is_a_located_error(tmp_path):
    gt = tmp_path / "annotations"
    write(gt / "a.txt", "cat 10 10 20 20\n")
    write(tmp_path / "p/a.txt", "cat 0.9 10 10 20 20\n")
    gt.chmod(0)
    try:
        r = run(gt, tmp_path / "p", expect=1)
    finally:
        gt.chmod(0o755)
    assert f"{gt}: cannot list this folder" in r.err
