"""Test the installed package, not this checkout: what CI runs against a built wheel.

Usage::

    python tests/check_installed.py [--pure] [--quick]

Run with the wheel installed in the current environment (cibuildwheel's
test command, ``.ci/run``'s fresh virtual environment):

1. ``iou_eval`` must import from the environment, not from this checkout;
2. ``iou-eval --version`` names each compiled part and says it is compiled
   and in use (``--pure``: a pure-Python wheel, none built);
3. the acceptance cases and a parity subset (both paths: compiled and
   ``IOU_EVAL_NO_KERNEL=1``) run against the installed package, from a copy
   of this folder, so that nothing imports the sources (``--quick``: the
   acceptance cases and the compiled parts' own tests only).

A module or a compiled part missing from the wheel fails here.  The exit
status is pytest's, or 1 when a check before it fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The acceptance cases, as tests/conftest.py finds them from the checkout.
ACCEPTANCE = Path(os.environ.get("IOU_EVAL_ACCEPTANCE", ROOT.parent / "shared" / "acceptance"))
QUICK = [
    "acceptance",
    "unit/test_coco_reader.py",
    "unit/test_rle_results.py",
    "unit/test_box_core.py",
    "unit/test_rle_kernel.py",
]
SUBSET = [*QUICK, "parity/test_coco_parity.py", "parity/test_segm_fast_paths.py"]
PYTEST_INI = """[pytest]
addopts = -ra
markers =
    slow: long soak / fuzz runs
    hostile: the hostile-input catalogue
"""


def fail(message: str) -> int:
    print(f"check_installed: {message}", file=sys.stderr)
    return 1


def installed_package(cwd: Path) -> Path:
    """Where ``import iou_eval`` finds the package from a folder outside the checkout."""
    out = subprocess.run(
        [sys.executable, "-c", "import iou_eval; print(iou_eval.__file__)"],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(out.stdout.strip()).resolve().parent


def version_lines(cwd: Path) -> list[str]:
    """``iou-eval --version``, run as the installed command."""
    scripts = Path(sys.executable).parent
    command = shutil.which("iou-eval", path=str(scripts)) or shutil.which("iou-eval")
    if command is None:
        raise FileNotFoundError("the iou-eval command is not installed")
    out = subprocess.run([command, "--version"], cwd=cwd, capture_output=True, text=True)
    print(out.stdout, end="")
    return out.stdout.splitlines()


def check_parts(lines: list[str], pure: bool) -> str | None:
    """None when every compiled part is reported as expected, else what is wrong."""
    from_installed = subprocess.run(
        [sys.executable, "-c", "from iou_eval.engine.compiled import PARTS; print(*PARTS, sep='\\n')"],
        capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
    ).stdout.split("\n")  # fmt: skip
    for name in filter(None, from_installed):
        line = next((x for x in lines if x.startswith(f"{name}: ")), None)
        if line is None:
            return f"iou-eval --version does not name the {name}"
        want = "not built" if pure else "compiled, in use"
        if want not in line:
            return f"expected the {name} {want!r}, got {line!r}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pure", action="store_true", help="a pure-Python wheel: no part built")
    parser.add_argument("--quick", action="store_true", help="acceptance and kernels' tests only")
    parser.add_argument("pytest_args", nargs="*", help="more arguments for pytest")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="iou-eval-installed-") as tmp:
        work = Path(tmp)
        package = installed_package(work)
        if package == (ROOT / "iou_eval").resolve():
            return fail(f"iou_eval imports from the checkout ({package}), not from an install")
        print(f"iou_eval from {package}")
        problem = check_parts(version_lines(work), args.pure)
        if problem is not None:
            return fail(problem)
        shutil.copytree(HERE, work / "tests", ignore=shutil.ignore_patterns("__pycache__", "bench"))
        # Tests read the sample scenes beside them (the doubt census, the format samples).
        shutil.copytree(ROOT / "sample_data", work / "sample_data")
        (work / "pytest.ini").write_text(PYTEST_INI)
        env = {**os.environ, "IOU_EVAL_ACCEPTANCE": str(ACCEPTANCE)}
        env.pop("IOU_EVAL_NO_KERNEL", None)
        selected = [f"tests/{p}" for p in (QUICK if args.quick else SUBSET)]
        if (
            args.pure
        ):  # the compiler here built the parts of the editable install, not of this wheel
            selected.append(
                "--deselect=tests/unit/test_rle_kernel.py::test_kernel_is_built_where_a_compiler_is"
            )
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
        return subprocess.run(
            [*command, *selected, *args.pytest_args], cwd=work, env=env
        ).returncode


if __name__ == "__main__":
    sys.exit(main())
