"""Metrics that know their direction: LRP is an error, lower is better.

Gates (``--fail-over`` for such a metric, ``--fail-under`` refused on it),
baselines (a rise is the worsening), ``compare`` (the better run) and
leaderboards (best first) follow each metric's record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


@pytest.fixture
def worse(tmp_path) -> str:
    """The sample predictions without their three best-scoring boxes (a higher moLRP)."""
    preds = json.loads(Path(PREDS).read_text())
    preds.sort(key=lambda p: -p["score"])
    path = tmp_path / "worse.json"
    path.write_text(json.dumps(preds[3:]))
    return str(path)


def _molrp(*args: str) -> float:
    return json.loads(run(GT, *args, "--protocol", "lrp", "-f", "json", "-q").out)["summary"][
        "moLRP"
    ]


def test_fail_over_passes_below_the_bound_and_fails_above_it():
    molrp = _molrp(PREDS)  # 0.4890 on the sample
    run(GT, PREDS, "--protocol", "lrp", "--fail-over", f"lrp:moLRP={molrp + 0.01}", "-q")
    r = run(GT, PREDS, "--protocol", "lrp", "--fail-over", f"moLRP={molrp - 0.01}", expect=3)
    assert "is above" in r.out + r.err


def test_fail_over_on_a_class_reads_its_olrp():
    r = run(GT, PREDS, "--protocol", "coco,lrp", "--fail-over", "lrp:oLRP[dog]=0.5", expect=3)
    assert "oLRP[dog]" in r.out + r.err


def test_fail_under_on_a_lower_is_better_metric_is_refused_with_the_flag_to_use():
    r = run(GT, PREDS, "--protocol", "lrp", "--fail-under", "moLRP=0.3", expect=2)
    assert "lower is better for moLRP" in r.err
    assert "--fail-over moLRP=0.3" in r.err


def test_fail_over_on_a_higher_is_better_metric_is_refused():
    r = run(GT, PREDS, "--fail-over", "AP=0.3", expect=2)
    assert "higher is better for AP" in r.err and "--fail-under AP=0.3" in r.err


def test_a_baseline_fails_when_lrp_rises(tmp_path, worse):
    baseline = tmp_path / "base.json"
    run(GT, PREDS, "--protocol", "lrp", "-f", "json", "-o", baseline)
    r = run(GT, worse, "--protocol", "lrp", "--baseline", baseline, "-f", "json", expect=3)
    checks = {c["name"]: c for c in json.loads(r.out)["checks"]}
    assert not checks["moLRP"]["passed"] and "rose" in checks["moLRP"]["reason"]
    # The other way round LRP falls: an improvement passes.
    worse_base = tmp_path / "worse-result.json"
    run(GT, worse, "--protocol", "lrp", "-f", "json", "-o", worse_base)
    r = run(GT, PREDS, "--protocol", "lrp", "--baseline", worse_base, "-f", "json")
    assert json.loads(r.out)["checks"][0]["passed"]


def test_compare_names_the_run_with_the_lower_lrp_better(worse):
    r = run("compare", GT, PREDS, worse, "--protocol", "lrp", "--bootstrap", "0", "-f", "json")
    rows = {row["name"]: row for row in json.loads(r.out)["rows"] if row["scope"] == "summary"}
    assert rows["moLRP"]["delta"] > 0 and rows["moLRP"]["better"] == "a"


def test_a_leaderboard_puts_the_lowest_lrp_first(worse):
    r = run(GT, worse, PREDS, "--protocol", "lrp", "-f", "json")
    board = json.loads(r.out)["leaderboard"]
    assert [Path(row["file"]).name for row in board] == ["preds.json", "worse.json"]
    assert board[0]["moLRP"] < board[1]["moLRP"]


def test_compare_without_bootstrap_0_says_to_pass_it(worse):
    r = run("compare", GT, PREDS, worse, "--protocol", "lrp", expect=2)
    assert "pass --bootstrap 0" in r.err


def test_the_json_block_says_each_metrics_direction():
    doc = json.loads(run(GT, PREDS, "--protocol", "coco,lrp", "-f", "json").out)
    assert doc["metrics"]["AP"] == "higher"
    assert doc["additional_protocols"][0]["metrics"]["moLRP"] == "lower"
