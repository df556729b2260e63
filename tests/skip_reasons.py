"""A pytest plugin: at the end of a run, one line per reason tests were skipped or left out.

``make test`` skips what this machine cannot run (no acceptance cases beside
the repository, no chromium, running as root, ...): the last lines say
which, and how many tests each reason took, instead of a bare count.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

# Reasons that name one case or file each, said once for all of them.
GROUPS = (
    (re.compile(r"acceptance case", re.I),
     "the acceptance cases are not available (IOU_EVAL_ACCEPTANCE=DIR points to them)"),
)  # fmt: skip


def compiled_missing(what: str, dotted: str) -> str:
    """The skip reason of a test that needs the compiled part ``dotted`` (``what`` names it).

    "not built" only where it is not; a part merely switched off for the numpy
    path (``IOU_EVAL_NO_KERNEL=1``) says so.  Empty when the part loads.
    """
    from iou_eval.engine.compiled import unavailable

    why = unavailable(dotted)
    return "" if why is None else f"{what} is {why}"


def skip_reason(report: pytest.TestReport) -> str:
    """The reason of a skipped test's report, as one line."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    text = (
        text.removeprefix("Skipped: ").strip().splitlines()[0]
        if text.strip()
        else "no reason given"
    )
    for pattern, label in GROUPS:
        if pattern.search(text):
            return label
    return text


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    skipped = Counter(skip_reason(r) for r in terminalreporter.stats.get("skipped", []))
    deselected = len(terminalreporter.stats.get("deselected", []))
    if not skipped and not deselected:
        return
    terminalreporter.write_sep("-", "why tests did not run")
    for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        terminalreporter.write_line(f"{n:5d} skipped: {reason}")
    if deselected:
        marks = config.getoption("markexpr", "") or "the -k/-m selection"
        terminalreporter.write_line(f"{deselected:5d} deselected: not selected by -m {marks!r}"
                                    " (make soak runs the slow ones)")  # fmt: skip
