"""The layer rule: numpy-only core, click only in cli.py, pandas only in tables' layers."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "iou_eval"
NUMPY_ONLY = [
    "geometry/boxes.py",
    "geometry/pairs.py",
    "geometry/seam.py",
    "data/box_format.py",
    "protocols/matching.py",
    "protocols/accumulate.py",
    "protocols/tables.py",
    "protocols/voc.py",
    "protocols/coco.py",
    "protocols/partition.py",
    "data/ordering.py",
]
PANDAS_OK = {"results.py", "data/columns.py", "io/loaders/table.py", "reporters/csv.py",
             "reporters/text.py", "reporters/json.py", "reporters/view.py", "reporters/batch.py",
             "reporters/compare.py", "api.py", "ci/batch.py", "ci/gates.py", "ci/compare.py"}  # fmt: skip


def third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - {"iou_eval"}


def test_core_imports_numpy_only():
    for name in NUMPY_ONLY:
        extra = third_party_imports(PKG / name) - {
            "numpy",
            "__future__",
            "dataclasses",
            "enum",
            "typing",
            "collections",
            "functools",
        }
        assert not extra, f"{name} imports {extra}"


def test_click_only_in_cli():
    for path in PKG.rglob("*.py"):
        if path.relative_to(PKG).parts[0] != "cli":
            assert "click" not in third_party_imports(path), path


def test_pandas_only_where_tables_are_built():
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if "pandas" in third_party_imports(path):
            assert rel in PANDAS_OK, rel


def test_pycocotools_only_where_masks_are_encoded():
    for path in PKG.rglob("*.py"):
        if path.relative_to(PKG).as_posix() != "geometry/masks.py":
            assert "pycocotools" not in third_party_imports(path), path


def test_a_plain_run_does_not_import_pandas(tmp_path):
    """pandas costs a third of a second to import: only CSV and DataFrames need it."""
    import subprocess
    import sys

    root = PKG.parent
    code = (
        "import sys\n"
        "from iou_eval.cli.main import main\n"
        "try:\n"
        f"    main([{str(root / 'sample_data/coco/gt.json')!r}, "
        f"{str(root / 'sample_data/coco/preds.json')!r}, '-f', 'json', '-o', "
        f"{str(tmp_path / 'r.json')!r}, '-q'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('pandas' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert p.stdout.strip() == "False", p.stdout + p.stderr
    assert (tmp_path / "r.json").exists()
