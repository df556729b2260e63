"""Skip reasons tell a compiled part switched off for the numpy path from one not built.

The numpy runs (``IOU_EVAL_NO_KERNEL=1``) once skipped the compiled legs with
"the polygon IoU kernel is not built" on machines where it was built.
"""

from __future__ import annotations

import pytest

from iou_eval.engine import compiled

from ..skip_reasons import compiled_missing

BUILT = [dotted for dotted in compiled.PARTS.values() if compiled._import(dotted) is not None]


@pytest.mark.skipif(not BUILT, reason="no compiled part is built here")
@pytest.mark.parametrize("dotted", BUILT)
def test_a_built_part_switched_off_says_switched_off(dotted, monkeypatch):
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    reason = compiled_missing("the part", dotted)
    assert reason == "the part is built but switched off by IOU_EVAL_NO_KERNEL=1 (the numpy path)"
    monkeypatch.delenv("IOU_EVAL_NO_KERNEL")
    assert compiled_missing("the part", dotted) == ""


def test_a_part_that_is_not_built_says_not_built(monkeypatch):
    monkeypatch.setattr(compiled, "_import", lambda dotted: None)
    for value in ("1", ""):
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", value)
        reason = compiled_missing("the polygon IoU kernel", "iou_eval.geometry._polykernel")
        assert reason == "the polygon IoU kernel is not built in this install"


def test_no_test_hard_codes_not_built():
    """Every skip for a missing compiled part asks compiled_missing, which knows the difference."""
    import re

    from ..conftest import ROOT

    pattern = re.compile(r"""(skip\(|reason=)\s*["'][^"']*is not built""")
    found = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert not found, found
