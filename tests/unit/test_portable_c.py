"""The compiled parts build with every C compiler here, and their plain-C paths give the same numbers.

GCC's and Clang's builtins (128-bit products, leading zeros, bit counts)
and MSVC's intrinsics are guarded; where neither exists the sources fall back
to plain C.  Here each C file is compiled with each compiler found (GCC,
Clang), with the install's flags (``-O2 -ffp-contract=off``), and the reader
and the core are also built with ``IOU_EVAL_PORTABLE_C`` (the plain-C
fallbacks, as an MSVC build on ARM or another compiler would take them):
numbers read must equal Python's ``float()``, groups and flags numpy's.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "iou_eval").glob("*/_*.c"))
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
pytestmark = pytest.mark.skipif(
    not COMPILERS or sys.platform == "win32", reason="no GCC or Clang to build with here"
)


def _build(source: Path, compiler: str, out: Path, *defines: str):
    """The extension module ``source`` compiled by ``compiler`` into ``out``, imported."""
    include = sysconfig.get_paths()["include"]
    target = out / f"{source.stem}{sysconfig.get_config_var('EXT_SUFFIX')}"
    flags = ["-O2", "-ffp-contract=off", "-fPIC", "-shared", "-std=c99", "-Wall"]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
    cmd = [compiler, *flags, *(f"-D{d}" for d in defines), f"-I{include}", str(source), "-o"]
    p = subprocess.run([*cmd, str(target)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "warning:" not in p.stderr, p.stderr
    spec = importlib.util.spec_from_file_location(source.stem, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_every_part_builds_without_a_warning(source, compiler, tmp_path):
    module = _build(source, compiler, tmp_path)
    assert module.__name__ == source.stem


def _spellings() -> list[str]:
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**63, 3000, dtype=np.int64).view(np.float64)
    near = rng.uniform(0, 1000, 3000) * 10.0 ** rng.integers(-30, 10, 3000)
    xs = [float(x) for x in np.concatenate([bits, near]) if np.isfinite(x)]
    return [repr(x) for x in xs] + [f"{x:.18e}" for x in xs[:1000]] + ["0.9987519383430481"]


def test_the_plain_c_reader_reads_numbers_as_python(tmp_path):
    reader = _build(ROOT / "iou_eval/io/_cocojson.c", COMPILERS[0], tmp_path, "IOU_EVAL_PORTABLE_C")
    texts = _spellings()
    data = ",".join(f'{{"image_id":1,"category_id":1,"bbox":[0,0,1,1],"score":{t}}}' for t in texts)
    read = reader.results(f"[{data}]".encode())
    assert read is not None
    got = np.frombuffer(read["score"], dtype=np.float64)
    want = np.array([float(t) for t in texts])
    assert got.tobytes() == want.tobytes()


def test_the_plain_c_core_numbers_groups_as_numpy(tmp_path):
    core = _build(
        ROOT / "iou_eval/protocols/_cococore.c", COMPILERS[0], tmp_path, "IOU_EVAL_PORTABLE_C"
    )
    rng = np.random.default_rng(3)
    gt, dt = rng.integers(0, 100_000, 5000), rng.integers(0, 100_000, 7000)
    gt_code, dt_code, n_used = core.dense_groups(gt, dt, 100_000)
    used = np.unique(np.concatenate([gt, dt]))
    assert n_used == len(used)
    assert np.array_equal(np.frombuffer(gt_code, dtype=np.int64), np.searchsorted(used, gt))
    assert np.array_equal(np.frombuffer(dt_code, dtype=np.int64), np.searchsorted(used, dt))


def test_the_plain_c_column_reader_reads_numbers_as_python(tmp_path):
    reader = _build(ROOT / "iou_eval/io/_csvscan.c", COMPILERS[0], tmp_path, "IOU_EVAL_PORTABLE_C")
    texts = _spellings()
    data = ("".join(f"{t}\n" for t in texts)).encode()
    read = reader.columns(data, ",", 0, 1, "f")
    assert read is not None
    got = np.frombuffer(read[2][0], dtype=np.float64)
    want = np.array([float(t) for t in texts])
    assert got.tobytes() == want.tobytes()
