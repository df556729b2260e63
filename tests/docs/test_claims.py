"""Figures and claims the manual states, checked against what the package does."""

from __future__ import annotations

import re

import pytest

from iou_eval.engine.compiled import PARTS, _import

from ..conftest import ACCEPTANCE, ROOT

DOCS = ROOT / "docs"


def test_the_tide_figures_of_case_04_are_the_ones_computed():
    case = ACCEPTANCE / "cases" / "04_cocoapi_val2014_100_bbox_segm"
    if not case.is_dir():
        pytest.skip(f"acceptance case 04 not available at {case}")
    from iou_eval import evaluate

    text = (DOCS / "analysis.md").read_text(encoding="utf-8")
    quoted = re.search(
        r"Cls ([\d.]+), Loc ([\d.]+), Dupe\s+([\d.]+), Miss ([\d.]+), FP ([\d.]+), FN ([\d.]+)"
        r" at AP50 (\d+\.\d+)",
        text,
    )
    assert quoted, "docs/analysis.md no longer quotes case 04's TIDE figures"
    tide = evaluate(
        str(case / "instances_val2014_100.json"),
        str(case / "instances_val2014_fakebbox100_results.json"),
        tide=True,
    ).analysis.tide
    computed = [tide.dap.cls, tide.dap.loc, tide.dap.dupe, tide.dap.miss,
                tide.fp_dap, tide.fn_dap, tide.ap]  # fmt: skip
    assert [float(v) for v in quoted.groups()] == [round(v, 2) for v in computed]


def test_the_manual_does_not_call_a_compiled_install_pure_python():
    if not any(_import(dotted) for dotted in PARTS.values()):
        pytest.skip("no compiled part is built here")
    pages = [ROOT / "README.md", *DOCS.glob("*.md")]
    said = [p.name for p in pages if "pure Python" in p.read_text(encoding="utf-8")]
    assert not said, f"these pages call iou-eval pure Python: {said}"
