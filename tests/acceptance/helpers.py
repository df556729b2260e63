"""Reading the third-party acceptance cases (never copied into this repository)."""

from __future__ import annotations

import json

import pytest

from ..conftest import ACCEPTANCE

CASES = ACCEPTANCE / "cases"

# EXPECTED.json spells the stats as pycocotools' summary lines do.
STAT_NAMES = {
    "AP": "AP", "AP50": "AP50", "AP75": "AP75", "AP_small": "APs", "AP_medium": "APm",
    "AP_large": "APl", "AR1": "AR1", "AR10": "AR10", "AR100": "AR100", "AR_small": "ARs",
    "AR_medium": "ARm", "AR_large": "ARl",
}  # fmt: skip


def case_dir(name: str):
    path = CASES / name
    if not path.is_dir():
        pytest.skip(f"acceptance case {name} not available at {CASES}")
    return path


def expected(name: str) -> dict:
    return json.loads((case_dir(name) / "EXPECTED.json").read_text())


def assert_stats(summary: dict, stats: dict, tol: float, label: str) -> None:
    """Compare our summary with EXPECTED stats (-1 there means undefined: None here)."""
    problems = []
    for theirs, ours in STAT_NAMES.items():
        if theirs not in stats:
            continue
        want = stats[theirs]
        got = summary[ours]
        if want == -1:
            if got is not None:
                problems.append(f"{theirs}: expected undefined (-1), got {got}")
        elif got is None or abs(got - want) > tol:
            problems.append(f"{theirs}: expected {want}, got {got}")
    assert not problems, f"{label}:\n  " + "\n  ".join(problems)
