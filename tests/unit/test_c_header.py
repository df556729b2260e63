"""The compiled parts share one header, and the sdist ships it.

iou_eval/_common.h holds the array checks (item type by format and size,
dimensions, contiguity), the growable arrays and the block numpy views:
each C file includes it and acquires no buffer of its own, so a fix to a
check reaches every part.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "iou_eval" / "_common.h"
SOURCES = sorted((ROOT / "iou_eval").glob("*/_*.c"))


def test_every_c_file_includes_the_common_header():
    assert SOURCES
    for source in SOURCES:
        text = source.read_text()
        assert re.search(r'^#include "\.\./_common\.h"$', text, re.M), source.name


def test_no_c_file_acquires_a_buffer_or_defines_a_block_of_its_own():
    """Buffers are taken through iou_acquire; the block type is the header's."""
    for source in SOURCES:
        text = source.read_text()
        # The readers read their inputs as plain bytes (any object with a buffer).
        allowed = 1 if source.name in ("_cocojson.c", "_csvscan.c") else 0
        assert text.count("PyObject_GetBuffer") == allowed, source.name
        assert "PyTypeObject" not in text, source.name


def test_the_sdist_ships_the_header_and_every_c_file(tmp_path):
    p = subprocess.run(
        [sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path),
         "sdist", "--dist-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    sdist = next(tmp_path.glob("iou_eval-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = {HEADER.relative_to(ROOT).as_posix()}
    wanted |= {s.relative_to(ROOT).as_posix() for s in SOURCES}
    wanted |= {"LICENSE", "CHANGELOG.md", "CONTRIBUTING.md"}
    assert wanted <= names, sorted(wanted - names)
