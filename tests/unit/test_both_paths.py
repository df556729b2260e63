"""The rule tests of matching, accumulation, resampling and the kernels run on both paths.

A fix to the compiled path alone (or to numpy alone) must fail a rule test:
each module below asks for the ``kernel_path`` fixture of tests/conftest.py
for all its tests, and so does every parity test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent
TESTS = UNIT.parent

# Matching, accumulation (COCO, VOC, LVIS, Open Images, DOTA), resampling and
# the geometry kernels' rules.
BOTH_PATHS = (
    "test_matching",
    "test_bootstrap",
    "test_class_agnostic_table",
    "test_openimages_protocol",
    "test_oriented",
    "test_boxes",
    "test_masks",
    "test_mask_bounds",
    "test_point_parts",
    "test_polygon_masks",
    "test_streaming_protocols",
    "test_sample_data",
    "test_executor_seam",
    "test_iou_boxes",
    "test_iou_masks",
    "test_subsets",
    "test_boundary",
    "test_lrp",
)


def _module_marks(path: Path) -> list[str]:
    """The source of each ``pytestmark = ...`` at the top of a module."""
    tree = ast.parse(path.read_text())
    return [
        ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
    ]


@pytest.mark.parametrize("name", BOTH_PATHS)
def test_rule_module_runs_on_both_paths(name):
    marks = _module_marks(UNIT / f"{name}.py")
    assert any("usefixtures('kernel_path')" in m for m in marks), (name, marks)


def test_parity_tests_run_on_both_paths():
    source = (TESTS / "parity" / "conftest.py").read_text()
    tree = ast.parse(source)
    fixtures = [
        f
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        and any("autouse=True" in ast.unparse(d) for d in f.decorator_list)
    ]
    assert any("kernel_path" in [a.arg for a in f.args.args] for f in fixtures), source


def test_kernel_path_is_one_shared_fixture():
    """One definition, in the top-level conftest, found by every test folder."""
    defining = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if re.search(r"^def kernel_path\(", p.read_text(), re.M)
    ]
    assert defining == ["conftest.py"], defining
