"""The command line: reports, formats, output files, exit codes."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ..parity.synth import make_scene
from ..parity.test_coco_parity import SUMMARY_KEYS
from .helpers import run


@pytest.fixture
def scene(write_json):
    gt, preds = make_scene(11, n_images=25)
    return write_json("gt.json", gt), write_json("preds.json", preds)


def test_table_report_has_summary_classes_and_images(scene):
    r = run(*scene)
    assert "Summary" in r.out and "Per class" in r.out and "Per image" in r.out
    assert "AP50" in r.out and "[coco]" in r.out
    assert "matched       images by id, categories by id" in r.out


def test_eval_command_name_is_optional(scene):
    assert run("eval", *scene).out == run(*scene).out


def test_json_document_schema(scene):
    doc = json.loads(run(*scene, "--format", "json").out)
    assert doc["schema_version"] == 1
    assert doc["protocol"] == "coco"
    assert list(doc["summary"]) == SUMMARY_KEYS
    assert doc["params"]["iou_thr"] == 0.5 and doc["params"]["max_dets"] == [1, 10, 100]
    assert len(doc["per_image"]) == 25
    row = doc["per_class"][0]
    for key in ("class", "category_id", "AP", "AP50", "AP75", "AR100", "gt", "predictions",
                "TP", "FP", "FN", "precision", "recall", "F1", "best_F1", "best_F1_score"):  # fmt: skip
        assert key in row
    assert doc["inputs"]["ground_truth"]["format"] == "coco"
    # A class without ground truth has null AP, never -1.
    no_gt = [c for c in doc["per_class"] if c["gt"] == 0]
    assert no_gt and all(c["AP"] is None for c in no_gt)


def test_json_matches_python_api(scene):
    from iou_eval import evaluate

    doc = json.loads(run(*scene, "-f", "json").out)
    assert doc["summary"] == evaluate(*scene).summary


def test_csv_is_one_tidy_table(scene):
    df = pd.read_csv(io.StringIO(run(*scene, "--format", "csv").out))
    assert list(df.columns) == ["protocol", "scope", "key", "metric", "value"]
    assert set(df["scope"]) == {"summary", "class", "image"}
    ap = df[(df.scope == "summary") & (df.metric == "AP")]["value"].iloc[0]
    assert float(ap) == pytest.approx(json.loads(run(*scene, "-f", "json").out)["summary"]["AP"])


def test_markdown_has_tables(scene):
    out = run(*scene, "--format", "markdown").out
    assert out.startswith("## iou-eval report")
    assert "| class |" in out and "|---:" in out


def test_worst_and_sort(scene):
    doc = json.loads(run(*scene, "-f", "json", "--worst", "3").out)
    assert len(doc["per_image"]) == 3
    errors = [r["FP"] + r["FN"] for r in doc["per_image"]]
    everything = json.loads(run(*scene, "-f", "json").out)["per_image"]
    assert errors == sorted((r["FP"] + r["FN"] for r in everything), reverse=True)[:3]
    by_id = json.loads(run(*scene, "-f", "json", "--sort", "image").out)["per_image"]
    ids = [r["image_id"] for r in by_id]
    assert ids == sorted(ids)


def test_iou_and_score_thresholds_change_counts(scene):
    base = json.loads(run(*scene, "-f", "json").out)["per_class"]
    strict = json.loads(run(*scene, "-f", "json", "--iou-thr", "0.9").out)["per_class"]
    assert sum(c["TP"] for c in strict) < sum(c["TP"] for c in base)
    high = json.loads(run(*scene, "-f", "json", "--score-thr", "0.8").out)["per_class"]
    assert sum(c["predictions"] for c in high) < sum(c["predictions"] for c in base)


def test_output_file_written_whole_and_nothing_on_stdout(scene, tmp_path):
    out = tmp_path / "result.json"
    r = run(*scene, "-f", "json", "-o", out)
    assert r.out == ""
    assert json.loads(out.read_text())["protocol"] == "coco"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".iou-eval-")] == []


def test_failed_run_leaves_existing_output_untouched(scene, tmp_path):
    out = tmp_path / "result.json"
    out.write_text("previous")
    missing = tmp_path / "missing.json"
    run(scene[0], missing, "-f", "json", "-o", out, expect=1)
    assert out.read_text() == "previous"


def test_inputs_are_not_modified(scene):
    before = [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in scene]
    run(*scene, "-f", "json")
    after = [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in scene]
    assert before == after


def test_custom_coco_parameters(scene):
    doc = json.loads(
        run(*scene, "-f", "json", "--iou-thresholds", "0.5,0.75", "--max-dets", "1,10,50",
            "--area-ranges", "small=0:1024,medium=1024:9216,large=9216:inf").out
    )  # fmt: skip
    assert doc["params"]["iou_thresholds"] == [0.5, 0.75]
    assert doc["params"]["max_dets"] == [1, 10, 50]
    assert doc["summary"]["AP50"] is not None


def test_class_agnostic(scene):
    a = json.loads(run(*scene, "-f", "json", "--class-agnostic").out)["summary"]["AP"]
    b = json.loads(run(*scene, "-f", "json").out)["summary"]["AP"]
    assert a != b


def test_several_protocols_side_by_side(scene):
    out = run(*scene, "--protocol", "coco,voc12").out
    assert "Protocol coco" in out and "Protocol voc12" in out
    doc = json.loads(run(*scene, "-p", "coco,voc07", "-f", "json").out)
    assert doc["protocol"] == "coco"
    assert doc["additional_protocols"][0]["protocol"] == "voc07"
    assert "mAP" in doc["additional_protocols"][0]["summary"]


def test_help_and_version():
    assert "GROUND_TRUTH" in run("eval", "--help").out
    assert "Exit codes" in run("--help").out
    out = run("--version").out
    assert "iou-eval" in out and "mask kernel:" in out


def test_python_dash_m(scene):
    p = subprocess.run([sys.executable, "-m", "iou_eval", *scene, "-f", "json"],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["protocol"] == "coco"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--iou-thresholds", "a,b"], "--iou-thresholds"),
        (["--protocol", "yolo"], "unknown protocol 'yolo'"),
        (["--max-dets", "0"], "--max-dets"),
        (["--iou-thr", "1.5"], "--iou-thr"),
        (["--area-ranges", "small"], "--area-ranges"),
        (["--format", "xml"], "xml"),
        (["--image-size", "big"], "--image-size"),
    ],
)
def test_usage_errors_exit_2(scene, args, needle):
    r = run(*scene, *args, expect=2)
    assert needle in r.err
    assert "Traceback" not in r.err


def test_voc_folders_with_both_voc_protocols():
    """The VOC "done when": annotation and prediction folders, voc07 and voc12 side by side."""
    root = Path(__file__).resolve().parents[2] / "sample_data" / "voc"
    doc = json.loads(
        run(root / "annotations", root / "predictions", "-p", "voc07,voc12", "-f", "json").out
    )
    assert doc["protocol"] == "voc07" and doc["params"]["ap_method"] == "11-point"
    assert doc["params"]["pixel_convention"] == "plus-one"
    other = doc["additional_protocols"][0]
    assert other["protocol"] == "voc12" and other["params"]["ap_method"] == "all-point"
    assert 0 < doc["summary"]["mAP"] < 1 and 0 < other["summary"]["mAP"] < 1
    assert doc["inputs"]["ground_truth"]["format"] == "voc-xml"
    table = run(root / "annotations", root / "predictions", "-p", "voc07,voc12").out
    assert "Side by side" in table and "plus-one pixels" in table


def test_workers_do_not_change_the_report(scene, monkeypatch):
    import iou_eval.api
    import iou_eval.protocols.partition

    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    out = {w: run(*scene, "-f", "json", "--workers", w).out for w in ("1", "2", "0")}
    assert out["1"] == out["2"] == out["0"]
    assert json.loads(out["1"])["summary"]["AP"] > 0


@pytest.fixture
def terminal(monkeypatch):
    """stderr taken for a terminal, and every run taken for a long one."""
    import iou_eval.cli.common
    import iou_eval.cli.evaluate

    monkeypatch.setattr(iou_eval.cli.common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(iou_eval.cli.evaluate, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(iou_eval.cli.evaluate, "LONG_RUN_BYTES", 0)


def test_a_long_run_shows_its_stages_on_a_terminal(scene, terminal):
    r = run(*scene, "-p", "coco,voc12")
    for stage in ("reading", "evaluating (coco)", "evaluating (voc12)", "writing the report"):
        assert stage in r.err, r
    assert "reading" not in r.out


@pytest.mark.parametrize("args", [("-f", "json"), ("-f", "csv"), ("--quiet",)])
def test_no_stage_bar_with_machine_output_or_quiet(scene, terminal, args):
    assert "reading" not in run(*scene, *args).err


def test_no_stage_bar_when_stderr_is_not_a_terminal(scene, monkeypatch):
    import iou_eval.cli.common
    import iou_eval.cli.evaluate

    monkeypatch.setattr(iou_eval.cli.evaluate, "LONG_RUN_BYTES", 0)
    assert "reading" not in run(*scene).err


def test_every_command_declares_each_option_once():
    """A parameter declared twice makes click warn on every run (``draw --images`` did)."""
    import warnings

    from click.testing import CliRunner

    from iou_eval.cli.main import main as group

    for name, command in group.commands.items():
        flags = [opt for p in command.params for opt in p.opts]
        assert len(flags) == len(set(flags)), (name, sorted(f for f in flags if flags.count(f) > 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # click's UserWarning would fail here
        r = CliRunner().invoke(group, ["draw", "--help"])
    assert r.exit_code == 0 and "--images" in r.output
