"""Every import the manual shows works: the lines of its Python code blocks, and the module paths it names.

``from iou_eval.iou import boxes`` failed once the IoU functions moved into
``iou_eval.toolkit``, while the docs named ``iou_eval.iou``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import types

import pytest

from ..conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^( *)```(python|py|pycon)\b[^\n]*\n(.*?)^\1```", re.S | re.M)
IMPORT = re.compile(r"^(?:>>> |\.\.\. )?\s*((?:from\s+[\w.]+\s+)?import\s+.+)$")


def import_lines() -> list[tuple[str, str]]:
    """``(page, statement)`` for each import in a Python code block (parenthesized ones joined)."""
    found = []
    for page in PAGES:
        for block in BLOCK.finditer(page.read_text(encoding="utf-8")):
            lines = iter(block.group(3).splitlines())
            for line in lines:
                m = IMPORT.match(line)
                if not m:
                    continue
                statement = m.group(1).split("#", 1)[0].strip()
                while statement.count("(") > statement.count(")"):
                    statement += " " + next(lines).split("#", 1)[0].strip()
                found.append((page.name, statement))
    return found


def named_paths() -> list[tuple[str, str]]:
    """``(page, dotted)`` for each ``iou_eval.…`` path in code spans and mkdocstrings directives."""
    found = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"(?:`|^::: )(iou_eval(?:\.\w+)+)", text, re.M):
            found.add((page.name, m.group(1)))
    return sorted(found)


def test_the_manual_shows_imports_of_the_package():
    statements = [s for _, s in import_lines()]
    assert any("iou_eval" in s for s in statements), statements
    assert "from iou_eval.iou import boxes" in statements


@pytest.mark.parametrize(("page", "statement"), import_lines())
def test_import_line_of_the_manual_runs(page, statement):
    """iou-eval's own imports must run; another project's only where it is installed here."""
    top = re.match(r"(?:from|import)\s+([\w]+)", statement).group(1)
    if top != "iou_eval" and importlib.util.find_spec(top) is None:
        pytest.skip(f"{top} is not installed here")
    exec(compile(statement, f"{page} code block", "exec"), {})


@pytest.mark.parametrize(("page", "dotted"), named_paths())
def test_module_path_named_by_the_manual_imports(page, dotted):
    """A named module imports by its dotted path; any other name is an attribute of one."""
    parent, _, last = dotted.rpartition(".")
    try:
        importlib.import_module(dotted)
        return
    except ModuleNotFoundError as exc:
        if exc.name != dotted:
            raise
    value = getattr(importlib.import_module(parent), last)
    assert not isinstance(value, types.ModuleType), f"{page}: `import {dotted}` fails"


def test_iou_functions_import_by_the_documented_path():
    import iou_eval.toolkit.iou
    from iou_eval import iou
    from iou_eval.iou import ArgumentError, boxes

    assert iou is iou_eval.toolkit.iou and boxes is iou.boxes
    assert boxes([10, 10, 50, 50], [20, 20, 60, 60]) == pytest.approx(0.391304, abs=1e-6)
    assert issubclass(ArgumentError, ValueError)
