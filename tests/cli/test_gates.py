"""CI gates: --fail-under, --baseline/--max-drop, --bootstrap, annotations (exit codes 0/1/2/3)."""

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
    """The sample predictions without their three best-scoring boxes."""
    preds = json.loads(Path(PREDS).read_text())
    preds.sort(key=lambda p: -p["score"])
    path = tmp_path / "worse.json"
    path.write_text(json.dumps(preds[3:]))
    return str(path)


@pytest.fixture
def baseline(tmp_path) -> str:
    path = tmp_path / "baseline.json"
    run(GT, PREDS, "-f", "json", "-o", path)
    return str(path)


def test_gate_that_passes_exits_0():
    r = run(GT, PREDS, "--fail-under", "AP=0.3", "--fail-under", "AP50=0.5")
    assert "Checks: all 2 checks passed" in r.out


def test_gate_that_fails_exits_3_with_a_verdict_table():
    r = run(GT, PREDS, "--fail-under", "AP=0.99", "--fail-under", "AP50=0.5", expect=3)
    assert "Checks: 1 of 2 checks failed" in r.out
    line = next(ln for ln in r.out.splitlines() if ln.strip().startswith("AP=0.99"))
    assert "FAIL" in line and "0.5505" in line and "-0.4395" in line


def test_per_class_gates():
    run(GT, PREDS, "--fail-under", "AP[person]=0.5")
    r = run(GT, PREDS, "--fail-under", "AP[dog]=0.9", expect=3)
    assert "AP[dog]=0.9" in r.out
    run(GT, PREDS, "--fail-under", "recall[car]=1.0")


def test_voc_gate_on_map():
    run(GT, PREDS, "-p", "voc12", "--fail-under", "mAP=0.5")
    run(GT, PREDS, "-p", "coco,voc12", "--fail-under", "voc12:mAP=0.99", expect=3)


@pytest.mark.parametrize(
    "gate, needle",
    [("mAP=0.5", "no summary metric 'mAP'"), ("AP[horse]=0.5", "no class 'horse'"),
     ("AP>0.5", "expected METRIC=VALUE"), ("voc07:AP=0.5", "protocol 'voc07' did not run")],
)  # fmt: skip
def test_bad_gates_are_usage_errors(gate, needle):
    r = run(GT, PREDS, "--fail-under", gate, expect=2)
    assert needle in r.err


def test_json_carries_checks():
    doc = json.loads(run(GT, PREDS, "-f", "json", "--fail-under", "AP=0.99", expect=3).out)
    assert doc["passed"] is False
    assert doc["checks"][0] == {
        "name": "AP=0.99", "kind": "gate", "threshold": 0.99, "value": doc["summary"]["AP"],
        "margin": pytest.approx(doc["summary"]["AP"] - 0.99), "tolerance": None,
        "interval": None, "passed": False, "reason": f"{doc['summary']['AP']:.4f} is below 0.99",
    }  # fmt: skip


def test_github_annotations_on_stdout_with_a_file_report(tmp_path):
    r = run(GT, PREDS, "--fail-under", "AP=0.99", "--annotations", "github",
            "-f", "markdown", "-o", tmp_path / "report.md", expect=3)  # fmt: skip
    assert r.out.startswith("::error title=iou-eval gate::AP=0.99: 0.5505 is below 0.99")
    assert "❌ Checks: 1 of 1 checks failed" in (tmp_path / "report.md").read_text()


def test_github_annotations_keep_json_on_stdout_parseable():
    r = run(GT, PREDS, "--fail-under", "AP=0.99", "--annotations", "github", "-f", "json", expect=3)
    json.loads(r.out)
    assert "::error title=iou-eval gate::" in r.err


def test_baseline_without_regression_passes(baseline):
    r = run(GT, PREDS, "--baseline", baseline)
    assert "checks passed" in r.out and "FAIL" not in r.out


def test_baseline_with_regression_fails_and_shows_deltas(baseline, worse):
    r = run(GT, worse, "--baseline", baseline, "--max-drop", "0.01", expect=3)
    checks = r.out[r.out.index("Checks:") :].splitlines()
    ap = next(ln for ln in checks if ln.strip().startswith("AP "))
    assert "FAIL" in ap and "dropped" in ap
    doc = json.loads(run(GT, worse, "--baseline", baseline, "-f", "json", expect=3).out)
    drops = {c["name"]: c for c in doc["checks"]}
    assert drops["AP"]["margin"] < 0 and drops["AP"]["threshold"] > drops["AP"]["value"]
    assert any(n.startswith("AP[") for n in drops)


def test_baseline_tolerance_absolute_and_relative(baseline, worse):
    run(GT, worse, "--baseline", baseline, "--max-drop", "0.5")
    run(GT, worse, "--baseline", baseline, "--max-drop", "90%")
    run(GT, worse, "--baseline", baseline, "--max-drop", "1%", expect=3)


def test_baseline_of_another_protocol_is_refused(baseline):
    r = run(GT, PREDS, "--baseline", baseline, "-p", "voc12", expect=1)
    assert "the baseline has no 'voc12' results" in r.err


def test_baseline_with_other_parameters_is_refused(baseline):
    r = run(GT, PREDS, "--baseline", baseline, "--iou-thr", "0.7", expect=1)
    assert "other coco parameters" in r.err and "iou_thr: baseline 0.5, now 0.7" in r.err


def test_baseline_that_is_not_a_result(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text('{"hello": 1}')
    r = run(GT, PREDS, "--baseline", bad, expect=1)
    assert "not an iou-eval result" in r.err


@pytest.mark.parametrize(
    "args, needle",
    [(["--max-drop", "0.1"], "--max-drop needs --baseline"),
     (["--fail-if-significant", "--fail-under", "AP=0.9"], "needs --bootstrap")],
)  # fmt: skip
def test_option_combinations(args, needle):
    assert needle in run(GT, PREDS, *args, expect=2).err


def test_bootstrap_intervals_are_seeded():
    a = json.loads(run(GT, PREDS, "-f", "json", "--bootstrap", "40", "--seed", "3").out)
    b = json.loads(run(GT, PREDS, "-f", "json", "--bootstrap", "40", "--seed", "3").out)
    c = json.loads(run(GT, PREDS, "-f", "json", "--bootstrap", "40", "--seed", "4").out)
    iv = a["bootstrap"]["intervals"]["AP"]
    assert iv == b["bootstrap"]["intervals"]["AP"] != c["bootstrap"]["intervals"]["AP"]
    assert iv[0] < a["summary"]["AP"] < iv[1]
    assert len(a["bootstrap"]["replicates"]["AP"]) == 40


def test_fail_if_significant_lets_noise_pass():
    """AP 0.55 is below 0.6, but on 12 images the interval easily reaches 0.6."""
    run(GT, PREDS, "--fail-under", "AP=0.6", expect=3)
    r = run(GT, PREDS, "--fail-under", "AP=0.6", "--bootstrap", "100", "--fail-if-significant")
    assert "not significantly" in r.out
    run(
        GT,
        PREDS,
        "--fail-under",
        "AP=0.99",
        "--bootstrap",
        "100",
        "--fail-if-significant",
        expect=3,
    )


def test_paired_baseline_deltas_with_bootstrap(tmp_path, worse):
    base = tmp_path / "base.json"
    run(GT, PREDS, "-f", "json", "-o", base, "--bootstrap", "50")
    doc = json.loads(
        run(GT, worse, "--baseline", base, "--bootstrap", "50", "-f", "json", expect=3).out
    )
    ap = next(c for c in doc["checks"] if c["name"] == "AP")
    lo, hi = ap["interval"]
    assert lo <= ap["margin"] <= hi


@pytest.mark.parametrize(
    "extra",
    [
        ("-o", "{tmp}/report.json", "--annotations", "github"),  # annotations on stdout
        ("-f", "markdown"),
        ("-f", "json", "--annotations", "github"),
    ],
)
def test_a_closed_stdout_keeps_the_gates_exit_code(tmp_path, extra):
    """`iou-eval ... --fail-under ... | head -1`: the reader leaves early; the exit code stays 3."""
    import os
    import subprocess
    import sys

    args = [a.format(tmp=tmp_path) for a in extra]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line is written
    try:
        p = subprocess.run(
            [sys.executable, "-m", "iou_eval", str(ROOT / "sample_data/coco/gt.json"),
             str(ROOT / "sample_data/coco/preds.json"), "--fail-under", "AP=0.99",
             "--fail-under", "AP50=0.99", *args],
            stdout=write_end, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert p.returncode == 3, p.stderr
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr
