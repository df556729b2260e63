"""Optional picture packages: imported only by their module, only inside functions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "iou_eval"
OWNER = {
    "matplotlib": {"reporters/plots.py"},
    "PIL": {"reporters/draw.py", "toolkit/semseg.py", "io/loaders/image_header.py"},
}


def imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - {"iou_eval"}


def test_matplotlib_and_pillow_only_in_their_modules_and_never_at_import_time():
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        tree = ast.parse(path.read_text())
        top = set()
        for node in tree.body:  # module level (try/if blocks too), TYPE_CHECKING blocks aside
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                top |= imports(node)
            elif isinstance(node, (ast.If, ast.Try)):
                top |= set().union(*(imports(n) for n in ast.iter_child_nodes(node)
                                     if isinstance(n, (ast.Import, ast.ImportFrom))))  # fmt: skip
        for package, owner in OWNER.items():
            if package in imports(tree):
                assert rel in owner, f"{rel} imports {package}"
            assert package not in top, f"{rel} imports {package} at module level"


def test_the_picture_modules_import_without_their_extras():
    code = (
        "import sys\n"
        "import iou_eval.reporters.plots, iou_eval.reporters.draw, iou_eval.reporters.html\n"
        "print(sorted(m for m in ('matplotlib', 'PIL', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
