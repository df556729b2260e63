"""The house rules of the package's layout, read from its source (docs/architecture.md).

* the wings' layers and the absence of import circles, as the import-linter
  contract in pyproject.toml states them (``lint-imports``);
* no import circle between any two modules, counting imports inside
  functions and under ``TYPE_CHECKING`` (which the contract's graph also sees);
* at most 12 modules directly in ``iou_eval/``; no function of 80 lines or more.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

PACKAGE = ROOT / "iou_eval"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports, anywhere in it (absolute imports only)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import of {node.module}"
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known}


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    return {name: imports_of(path, known) - {name} for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycles_finds_a_circle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_package():
    assert cycles(import_graph()) == []


def test_the_root_package_is_imported_by_nobody_inside_it():
    # `from iou_eval import x` inside the package would tie every wing to the top.
    graph = import_graph()
    users = sorted(m for m, deps in graph.items() if "iou_eval" in deps and m != "iou_eval")
    assert users == []


def test_at_most_twelve_modules_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top


def test_no_function_of_80_lines_or_more():
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n >= 80:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({n} lines)")
    assert not long, long


def test_the_import_contract_holds():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    p = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "2 kept, 0 broken" in p.stdout


def test_a_run_ends_with_one_line_per_skip_reason(tmp_path):
    """`make test` says why tests did not run: one line per reason, with its count."""
    (tmp_path / "test_scene.py").write_text(
        "import pytest\n"
        "def test_runs(): pass\n"
        "@pytest.mark.parametrize('case', ['01_a', '02_b', '03_c'])\n"
        "def test_case(case): pytest.skip(f'acceptance case {case} not available at /nowhere')\n"
        "@pytest.mark.skipif(True, reason='chromium is not installed')\n"
        "def test_browser(): pass\n"
        "@pytest.mark.skipif(True, reason='chromium is not installed')\n"
        "def test_browser_too(): pass\n"
    )
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "tests.skip_reasons",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    tail = p.stdout.split("why tests did not run", 1)[1].splitlines()
    lines = [ln.strip() for ln in tail if "skipped:" in ln]
    assert lines == [
        "3 skipped: the acceptance cases are not available (IOU_EVAL_ACCEPTANCE=DIR points to them)",
        "2 skipped: chromium is not installed",
    ]
