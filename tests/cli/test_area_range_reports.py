"""Custom ``--area-ranges`` in every report and in the gates: ``AP[nano]``, ``AR[nano]``.

The sample's ground-truth areas run from 360 to 104000 px²: ``nano=0:700``
holds five of them, ``micro=700:10000`` six, ``large=10000:inf`` the rest.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")
RANGES = ("--area-ranges", "nano=0:700,micro=700:10000,large=10000:inf")
CUSTOM = ["AP[nano]", "AP[micro]", "AR[nano]", "AR[micro]"]


@pytest.fixture(scope="module")
def summary() -> dict:
    return json.loads(run(GT, PREDS, *RANGES, "-f", "json", "-q").out)["summary"]


def test_json_summary_names_each_custom_range_and_keeps_coco_names(summary):
    assert list(summary) == [
        "AP", "AP50", "AP75", "AP[nano]", "AP[micro]", "APl",
        "AR1", "AR10", "AR100", "AR[nano]", "AR[micro]", "ARl",
    ]  # fmt: skip
    assert all(isinstance(summary[k], float) for k in CUSTOM)
    assert round(summary["AP[nano]"], 4) == 0.4827


def test_coco_labels_with_other_bounds_keep_the_coco_names():
    r = run(
        GT, PREDS, "--area-ranges", "small=0:700,medium=700:10000,large=10000:inf", "-f", "json"
    )
    summary = json.loads(r.out)["summary"]
    assert [k for k in summary if "[" in k] == []
    assert {"APs", "APm", "APl", "ARs", "ARm", "ARl"} <= set(summary)


def test_text_report_has_a_row_per_range_and_no_undefined_coco_rows(summary):
    out = run(GT, PREDS, *RANGES, "-q").out
    for key in CUSTOM:
        row = re.search(rf"^\s+{re.escape(key)}\s+(\S+)\s+IoU=0.50:0.95\s+area=(\w+)", out, re.M)
        assert row, f"no {key} row in\n{out}"
        assert row.group(1) == f"{summary[key]:.4f}"
        assert row.group(2) == key[3:-1]
    assert not re.search(r"^\s+(APs|APm|ARs|ARm)\s", out, re.M)
    assert "n/a" not in out.split("Per class")[0]


def test_csv_report_has_a_summary_row_per_range(summary):
    rows = list(csv.DictReader(io.StringIO(run(GT, PREDS, *RANGES, "-f", "csv", "-q").out)))
    shown = {r["metric"]: float(r["value"]) for r in rows if r["scope"] == "summary"}
    for key in CUSTOM:
        assert shown[key] == summary[key]


def test_markdown_report_has_a_row_per_range(summary):
    out = run(GT, PREDS, *RANGES, "-f", "markdown", "-q").out
    for key in CUSTOM:
        cell = key.replace("[", r"\[").replace("]", r"\]")
        assert f"| {cell} | {summary[key]:.4f} |" in out


def test_html_report_has_a_card_per_range_with_its_bounds(tmp_path, summary):
    page = tmp_path / "report.html"
    run(GT, PREDS, *RANGES, "-f", "html", "-o", page, "-q")
    html = page.read_text()
    for key in CUSTOM:
        card = re.search(
            rf'data-metric="{re.escape(key)}"><div class="name">{re.escape(key)}</div>'
            r'<div class="value">([^<]*)</div><div class="label">([^<]*)</div>',
            html,
        )
        assert card, f"no card for {key}"
        assert card.group(1) == f"{summary[key]:.4f}"
    assert "area 0–700 px²" in html and "area 700–10000 px²" in html


@pytest.mark.parametrize("gate", ["AP[nano]=0.3", "coco:AP[nano]=0.3", "AR[micro]=0.3"])
def test_gate_on_a_custom_area_range_passes(gate, summary):
    r = run(GT, PREDS, *RANGES, "--fail-under", gate)
    line = next(ln for ln in r.out.splitlines() if ln.strip().startswith(gate))
    assert (
        "pass" in line and f"{summary['AP[nano]' if 'nano' in gate else 'AR[micro]']:.4f}" in line
    )


def test_gate_on_a_custom_area_range_fails_below_its_floor():
    r = run(GT, PREDS, *RANGES, "--fail-under", "coco:AP[micro]=0.5", expect=3)
    assert "0.3102 is below 0.5" in r.out


def test_gate_on_a_custom_area_range_in_json_checks(summary):
    doc = json.loads(
        run(GT, PREDS, *RANGES, "-f", "json", "--fail-under", "AP[nano]=0.9", expect=3).out
    )
    assert doc["checks"][0]["name"] == "AP[nano]=0.9"
    assert doc["checks"][0]["value"] == summary["AP[nano]"]


def test_gate_on_a_class_still_reads_the_per_class_table():
    r = run(GT, PREDS, *RANGES, "--fail-under", "AP[dog]=0.9", expect=3)
    assert "0.2693 is below 0.9" in r.out


def test_slices_report_and_gate_custom_area_ranges(tmp_path):
    slices = tmp_path / "slices.csv"
    slices.write_text("image_id,slice\n1,day\n2,day\n3,night\n")
    doc = json.loads(run(GT, PREDS, *RANGES, "--slices", slices, "-f", "json", "-q").out)
    day = doc["slices"]["day"]["summary"]
    assert list(day) == list(doc["summary"]) and isinstance(day["AP[micro]"], float)
    r = run(GT, PREDS, *RANGES, "--slices", slices, "--fail-under",
            f"AP[micro]@day={day['AP[micro]'] + 0.01:.4f}", expect=3)  # fmt: skip
    assert f"{day['AP[micro]']:.4f} is below" in r.out


def test_gate_on_an_unknown_range_names_the_classes_and_the_ranges():
    r = run(GT, PREDS, *RANGES, "--fail-under", "AP[pico]=0.3", expect=2)
    assert (
        "no class 'pico'" in r.err and "no area range of that name (AP[nano], AP[micro])" in r.err
    )
