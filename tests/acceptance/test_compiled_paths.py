"""Every acceptance case gives the same JSON, byte for byte, with and without the compiled parts.

The compiled parts (``iou_eval.engine.compiled.PARTS``: the COCO JSON
reader, the box core, the mask kernel) must change nothing but the time: here
each COCO ground truth of the acceptance set is scored against each
results file beside it (boxes and masks), once as installed and once with
``IOU_EVAL_NO_KERNEL=1`` (numpy, pycocotools and msgspec), and the two JSON
reports are compared byte for byte, with one worker and with several.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_eval.engine.compiled import built

from ..cli.helpers import run
from .helpers import CASES


def _kind(path: Path) -> str | None:
    """``gt`` (a COCO dataset), ``pred`` (a results list or dict) or None."""
    try:
        doc = json.loads(path.read_text())
    except (UnicodeDecodeError, ValueError):
        return None
    if isinstance(doc, dict) and "images" in doc and "categories" in doc:
        return "gt"
    if isinstance(doc, list) and all(isinstance(r, dict) and "score" in r for r in doc):
        return "pred"
    return None


def _pairs() -> list[tuple[str, str]]:
    """(ground truth, results) pairs that share a folder, in name order."""
    if not CASES.is_dir():
        return []
    by_folder: dict[Path, dict[str, list[Path]]] = {}
    for path in sorted(CASES.rglob("*.json")):
        if path.name == "EXPECTED.json" or (kind := _kind(path)) is None:
            continue
        by_folder.setdefault(path.parent, {"gt": [], "pred": []})[kind].append(path)
    return [
        (str(g.relative_to(CASES)), str(p.relative_to(CASES)))
        for files in by_folder.values()
        for g in files["gt"]
        for p in files["pred"]
    ]


PAIRS = _pairs()


@pytest.fixture
def compiled_parts():
    if not built():
        pytest.skip("no compiled part is built here")


@pytest.mark.skipif(not PAIRS, reason="acceptance cases not available")
@pytest.mark.parametrize(("gt", "pred"), PAIRS)
@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_json_reports_equal_with_and_without_the_compiled_parts(
    gt, pred, workers, iou_type, compiled_parts, monkeypatch
):
    """Equal reports, or the same refusal (results without masks scored as ``segm``)."""
    args = [CASES / gt, CASES / pred, "--format", "json", "--workers", workers]
    args += ["--iou-type", iou_type]
    compiled = run(*args, expect=None)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    reference = run(*args, expect=None)
    assert compiled.code == reference.code, f"{compiled}\n{reference}"
    assert compiled.out == reference.out
    assert compiled.err == reference.err
