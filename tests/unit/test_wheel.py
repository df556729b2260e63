"""The built wheel holds every subpackage (a flat layout can silently drop some)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from iou_eval.engine.compiled import PARTS

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_every_module(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    wheel = next(tmp_path.glob("iou_eval-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {path.relative_to(ROOT).as_posix() for path in (ROOT / "iou_eval").rglob("*.py")}
    missing = expected - names
    assert not missing, f"missing from the wheel: {sorted(missing)}"
    assert any(n.endswith("entry_points.txt") for n in names)
    # The optional compiled parts are built into the wheel where a compiler is at hand.
    if shutil.which("cc") or shutil.which("gcc"):
        for dotted in PARTS.values():
            stem = dotted.replace(".", "/") + "."
            assert any(n.startswith(stem) and n.endswith((".so", ".pyd")) for n in names), dotted


def test_the_pure_wheel_is_every_module_and_no_compiled_part(tmp_path):
    """IOU_EVAL_PURE=1: the fallback wheel for platforms without a compiled one."""
    env = {**os.environ, "IOU_EVAL_PURE": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    wheel = next(tmp_path.glob("iou_eval-*.whl"))
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    expected = {path.relative_to(ROOT).as_posix() for path in (ROOT / "iou_eval").rglob("*.py")}
    assert not expected - names
