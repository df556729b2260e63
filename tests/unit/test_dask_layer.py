"""dask is optional: imported in iou_eval/cluster.py only, inside the functions that use it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "iou_eval"
DASK = {"dask", "distributed"}


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_dask_is_imported_only_in_the_cluster_module():
    for path in PKG.rglob("*.py"):
        if path.relative_to(PKG).as_posix() != "engine/cluster.py":
            assert not _imports(ast.parse(path.read_text())) & DASK, path


def test_the_cluster_module_imports_dask_inside_functions_only():
    tree = ast.parse((PKG / "engine/cluster.py").read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not _imports(ast.Module(body=top, type_ignores=[])) & DASK
    assert _imports(tree) & DASK  # it does use dask, lazily


def test_importing_the_package_and_its_cli_does_not_import_dask():
    code = (
        "import sys\n"
        "import iou_eval.api, iou_eval.cli.main, iou_eval.engine.cluster, iou_eval.protocols.partition\n"
        "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr
