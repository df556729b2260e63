"""``--iou-type keypoints`` from the command line: gates, baselines, batch, compare, bootstrap,
HTML and plots, and the errors of keypoint input (exit codes 0/1/2/3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "keypoints" / "gt.json")
PREDS = str(ROOT / "sample_data" / "keypoints" / "preds.json")
KP = ("--iou-type", "keypoints")


@pytest.fixture
def worse(tmp_path) -> str:
    """The sample results with every keypoint moved 6 pixels right."""
    preds = json.loads(Path(PREDS).read_text())
    for p in preds:
        p["keypoints"] = [v + 6 if i % 3 == 0 else v for i, v in enumerate(p["keypoints"])]
    path = tmp_path / "worse.json"
    path.write_text(json.dumps(preds))
    return str(path)


def _doc(*args: str) -> dict:
    return json.loads(run(GT, PREDS, *KP, "-f", "json", *args).out)


def test_summary_keys_and_per_image_mean_oks():
    doc = _doc()
    assert list(doc["summary"]) == ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75",
                                    "ARm", "ARl"]  # fmt: skip
    assert doc["params"]["iou_type"] == "keypoints" and doc["params"]["max_dets"] == [20]
    assert list(doc["params"]["area_ranges"]) == ["all", "medium", "large"]
    rows = {r["image_id"]: r for r in doc["per_image"]}
    assert rows[11]["mean_OKS"] is None and rows[11]["FN"] == 1  # the missed person
    assert 0.9 < rows[1]["mean_OKS"] <= 1.0
    assert doc["per_class"][0]["AR"] == doc["summary"]["AR"]


def test_gates_name_the_keypoint_protocol():
    r = run(GT, PREDS, *KP, "--fail-under", "keypoints:AP=0.5", "--fail-under", "ARm=0.5")
    assert "all 2 checks passed" in r.out
    r = run(GT, PREDS, *KP, "--fail-under", "keypoints:AP=0.95", expect=3)
    assert "keypoints:AP=0.95" in r.out and "FAIL" in r.out


def test_gate_on_a_box_metric_that_keypoints_lack_says_which_there_are():
    r = run(GT, PREDS, *KP, "--fail-under", "AR100=0.5", expect=2)
    assert "AR100" in r.err and "ARm" in r.err


def test_baseline_of_other_sigmas_is_refused(tmp_path, worse):
    base = tmp_path / "base.json"
    run(GT, PREDS, *KP, "-f", "json", "-o", base)
    run(GT, PREDS, *KP, "--baseline", base)
    r = run(GT, worse, *KP, "--baseline", base, "--max-drop", "0.01", expect=3)
    assert "dropped" in r.out
    r = run(GT, PREDS, *KP, "--kpt-sigmas", ",".join(["0.05"] * 17), "--baseline", base, expect=1)
    assert "kpt_sigmas" in r.err


def test_bootstrap_intervals_of_the_keypoint_summary():
    doc = _doc("--bootstrap", "30", "--seed", "1")
    intervals = doc["bootstrap"]["intervals"]
    assert set(intervals) == set(doc["summary"])
    lo, hi = intervals["AP"]
    assert lo <= doc["summary"]["AP"] <= hi and lo < hi


def test_batch_leaderboard_has_keypoint_columns(worse):
    r = run(GT, PREDS, worse, *KP)
    assert "keypoints AP" in r.out and "keypoints AR" in r.out
    lines = [ln for ln in r.out.splitlines() if ln.strip().startswith(("/", str(ROOT)))]
    assert PREDS in lines[0]  # the better file first


def test_compare_two_keypoint_models(worse):
    r = run("compare", GT, PREDS, worse, *KP, "--bootstrap", "20")
    assert "ARm" in r.out and "person" in r.out


def test_html_and_plots_speak_of_oks(tmp_path):
    run(GT, PREDS, *KP, "-f", "html", "-o", tmp_path / "r.html", "--plots", tmp_path / "plots")
    html = (tmp_path / "r.html").read_text()
    assert "COCOeval keypoints: OKS 0.50:0.95" in html and "OKS .50:.95 · all · 20" in html
    assert "mean OKS" in html
    svg = (tmp_path / "plots" / "pr_overall.svg").read_text()
    assert "OKS 0.50: AP" in svg and "IoU 0.50" not in svg


def test_sigmas_from_a_file_and_a_wrong_count(tmp_path):
    f = tmp_path / "sigmas.txt"
    f.write_text(" ".join(["0.08"] * 17) + "\n")
    wide = _doc("--kpt-sigmas", str(f))
    assert wide["summary"]["AP"] > _doc()["summary"]["AP"]  # looser sigmas, higher OKS
    r = run(GT, PREDS, *KP, "--kpt-sigmas", "0.1,0.2", expect=2)
    assert "2 sigmas for category 'person', which has 17 keypoints" in r.err
    f.write_text('{"person": [0.1, "x"]}')
    r = run(GT, PREDS, *KP, "--kpt-sigmas", str(f), expect=1)
    assert str(f) in r.err and "person[1]" in r.err


def test_class_agnostic_keypoints_is_refused():
    r = run(GT, PREDS, *KP, "--class-agnostic", expect=2)
    assert "useCats=0" in r.err


def test_results_without_keypoints_name_the_result(tmp_path):
    preds = json.loads(Path(PREDS).read_text())
    del preds[3]["keypoints"]
    (tmp_path / "p.json").write_text(json.dumps(preds))
    r = run(GT, tmp_path / "p.json", *KP, expect=1)
    assert "p.json:[3]" in r.err and "has no 'keypoints'" in r.err


def test_result_of_another_k_names_the_result(tmp_path):
    preds = json.loads(Path(PREDS).read_text())
    preds[5]["keypoints"] = preds[5]["keypoints"][:-3]
    (tmp_path / "p.json").write_text(json.dumps(preds))
    r = run(GT, tmp_path / "p.json", *KP, expect=1)
    assert "p.json:[5]" in r.err and "16 keypoints" in r.err and "17" in r.err


def test_a_later_result_without_bbox_when_the_first_has_one(tmp_path):
    preds = json.loads(Path(PREDS).read_text())
    del preds[2]["bbox"]
    (tmp_path / "p.json").write_text(json.dumps(preds))
    r = run(GT, tmp_path / "p.json", *KP, expect=1)
    assert "p.json:[2]" in r.err and "the first has one" in r.err


def test_ground_truth_of_another_k_in_its_category(tmp_path):
    gt = json.loads(Path(GT).read_text())
    gt["annotations"][4]["keypoints"] = gt["annotations"][4]["keypoints"][:-6]
    (tmp_path / "g.json").write_text(json.dumps(gt))
    r = run(tmp_path / "g.json", PREDS, *KP, expect=1)
    assert "annotations[4]" in r.err and "15 keypoints" in r.err


def test_other_k_without_sigmas_warns_once(tmp_path):
    gt = json.loads(Path(GT).read_text())
    preds = json.loads(Path(PREDS).read_text())
    for a in gt["annotations"] + preds:
        a["keypoints"] = a["keypoints"][:15]
    for a in gt["annotations"]:
        a.pop("num_keypoints")
    (tmp_path / "g.json").write_text(json.dumps(gt))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    r = run(tmp_path / "g.json", tmp_path / "p.json", *KP)
    assert r.err.count("sigmas 1/K each, as Ultralytics does") == 1, r.err
    assert "have no 'num_keypoints'; counted from their labels" in r.err


def test_a_gate_names_the_hyphenated_coco_keypoints_label():
    doc = json.loads(run(GT, PREDS, "--iou-type", "keypoints,bbox", "-f", "json").out)
    ap = doc["summary"]["AP"]
    r = run(GT, PREDS, "--iou-type", "keypoints,bbox", "--fail-under",
            f"coco-keypoints:AP={ap + 0.01:.4f}", expect=3)  # fmt: skip
    assert f"{ap:.4f} is below" in r.out
