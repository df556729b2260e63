"""--tide, --confusion and --calibration through the command line.

TIDE against the published tidecv figures of acceptance case 04 and against
tidecv on case 06; the confusion matrix and calibration against the library
functions they wire (the library is tested against its references).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval.analysis import (
    calibration,
    coco_true_positives_from_datasets,
    confusion_matrix_from_datasets,
)
from iou_eval.api import load
from iou_eval.data.reconcile import align

from ..conftest import ACCEPTANCE, ROOT
from ..parity.error_scenes import make_error_scene
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")
CASE04 = ACCEPTANCE / "cases" / "04_cocoapi_val2014_100_bbox_segm"
CASE06 = ACCEPTANCE / "cases" / "06_detectron2_coco_val_snippet"
NAMES = ("cls", "loc", "both", "dupe", "bkg", "miss")


def doc_of(*args: str) -> dict:
    return json.loads(run(*args, "-f", "json", "-q").out)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    gt, preds = make_error_scene(3)
    d = tmp_path_factory.mktemp("scene")
    (d / "gt.json").write_text(json.dumps(gt))
    (d / "dt.json").write_text(json.dumps(preds))
    return str(d / "gt.json"), str(d / "dt.json")


# -- TIDE ------------------------------------------------------------------------


@pytest.mark.skipif(not CASE04.is_dir(), reason="acceptance cases not present")
def test_tide_on_case04_gives_the_published_figures():
    t = doc_of(
        str(CASE04 / "instances_val2014_100.json"),
        str(CASE04 / "instances_val2014_fakebbox100_results.json"),
        "--tide",
    )["tide"]
    assert t["unit"] == "AP points (0-100) at IoU 0.5, tidecv rules"
    got = [t["ap"], *(t["dap"][n] for n in NAMES)]
    want = [64.205, 22.2460, 0.2279, 0.0, 0.0190, 0.0, 8.5236]
    assert np.allclose(got, want, atol=5e-4), got
    assert abs(t["fp_dap"] - 6.8216) < 5e-5 and abs(t["fn_dap"] - 17.6850) < 5e-5


@pytest.mark.skipif(not CASE06.is_dir(), reason="acceptance cases not present")
def test_tide_on_case06_equals_tidecv():
    tidecv = pytest.importorskip("tidecv")
    gt, dt = str(CASE06 / "gt.json"), str(CASE06 / "detections.json")
    t = doc_of(gt, dt, "--tide")["tide"]
    ref = tidecv.TIDE()
    run_ = ref.evaluate(tidecv.datasets.COCO(gt), tidecv.datasets.COCOResult(dt), mode=ref.BOX)
    main = next(iter(ref.get_main_errors().values()))
    special = next(iter(ref.get_special_errors().values()))
    short = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")
    assert abs(t["ap"] - run_.ap) < 1e-6
    assert all(abs(t["dap"][n] - main[s]) < 1e-6 for n, s in zip(NAMES, short, strict=True))
    assert abs(t["fp_dap"] - special["FalsePos"]) < 1e-6
    assert abs(t["fn_dap"] - special["FalseNeg"]) < 1e-6
    counts = {e.short_name: n for e, n in run_.count_errors().items()}
    assert [t["counts"][n] for n in NAMES] == [counts[s] for s in short]


def test_tide_visits_images_in_the_ground_truth_files_order(write_json):
    """Equal scores in two images: the image listed first in the file ranks first.

    Image 2 comes first in the file (its id is larger): its false positive
    ranks before image 1's true positive, so precision at recall 1/2 is 1/2
    (AP = 1/2 * 51/101); listed the other way round, it is 1.
    """
    gt = {
        "images": [{"id": 2, "width": 100, "height": 100}, {"id": 1, "width": 100, "height": 100}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0},
            {"id": 2, "image_id": 2, "category_id": 1, "bbox": [50, 50, 10, 10], "area": 100,
             "iscrowd": 0},
        ],
        "categories": [{"id": 1, "name": "a"}],
    }  # fmt: skip
    preds = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},
        {"image_id": 2, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},
    ]
    t = doc_of(write_json("gt.json", gt), write_json("dt.json", preds), "--tide")["tide"]
    assert t["ap"] == pytest.approx(50.0 * 51 / 101, abs=1e-12)
    gt["images"].reverse()  # id order: the true positive first
    t = doc_of(write_json("gt2.json", gt), write_json("dt.json", preds), "--tide")["tide"]
    assert t["ap"] == pytest.approx(100.0 * 51 / 101, abs=1e-12)


def test_tide_table_in_text_and_markdown():
    out = run(GT, PREDS, "--tide", "-q").out
    assert "TIDE (dAP" in out and "classification (Cls)" in out and "false negatives (FN)" in out
    md = run(GT, PREDS, "--tide", "-q", "-f", "markdown").out
    assert "### TIDE (dAP" in md and "| missed (Miss) |" in md
    csv = run(GT, PREDS, "--tide", "-q", "-f", "csv").out
    assert "analysis,tide,miss,dAP," in csv


def test_no_analysis_blocks_unless_asked():
    doc = doc_of(GT, PREDS)
    assert not {"tide", "confusion_matrix", "calibration", "slices"} & set(doc)


# -- confusion ---------------------------------------------------------------------


def test_confusion_matrix_json_equals_the_library(scene):
    gt, dt = scene
    c = doc_of(gt, dt, "--confusion", "--iou-thr", "0.6")["confusion_matrix"]
    assert list(c) == [
        "labels", "rows", "columns", "iou_threshold", "score_threshold", "matrix",
    ]  # fmt: skip
    assert (c["rows"], c["columns"]) == ("ground_truth", "prediction")
    assert (c["iou_threshold"], c["score_threshold"]) == (0.6, 0.25)
    al = align(load(gt, "gt"), load(dt, "pred"))
    ref = confusion_matrix_from_datasets(al.gt, al.pred, iou_threshold=0.6, score_threshold=0.25)
    assert c["labels"] == [*al.gt.categories.names, "background"]
    assert np.array_equal(np.array(c["matrix"]), ref.matrix)


def test_confusion_score_threshold_leaves_the_other_numbers_alone(scene):
    gt, dt = scene
    plain = doc_of(gt, dt)
    low = doc_of(gt, dt, "--confusion", "--confusion-score-thr", "0")
    high = doc_of(gt, dt, "--confusion", "--confusion-score-thr", "0.9")
    for doc in (low, high):
        assert doc["summary"] == plain["summary"] and doc["per_class"] == plain["per_class"]
        assert doc["per_image"] == plain["per_image"] and doc["params"] == plain["params"]
    lo, hi = (
        np.array(low["confusion_matrix"]["matrix"]),
        np.array(high["confusion_matrix"]["matrix"]),
    )
    assert hi[:, :-1].sum() < lo[:, :-1].sum()  # fewer predictions counted at 0.9
    assert high["confusion_matrix"]["score_threshold"] == 0.9
    # --score-thr does not move the confusion matrix's own threshold.
    other = doc_of(gt, dt, "--confusion", "--score-thr", "0.9")["confusion_matrix"]
    assert (
        other["score_threshold"] == 0.25
        and other["matrix"] == doc_of(gt, dt, "--confusion")["confusion_matrix"]["matrix"]
    )


def test_confusion_text_shows_the_most_confused_pairs(scene):
    gt, dt = scene
    out = run(gt, dt, "--confusion", "-q").out
    assert "most confused pairs" in out and "detected as" in out and "nothing (missed)" in out


# -- calibration -----------------------------------------------------------------------


def library_calibration(gt: str, dt: str, thr: float):
    al = align(load(gt, "gt"), load(dt, "pred"))
    is_tp, counted = coco_true_positives_from_datasets(
        al.gt, al.pred, iou_threshold=thr, gt_categories=al.n_categories
    )
    return calibration(
        al.pred.scores,
        al.pred.category_idx,
        is_tp,
        counted,
        al.gt.categories.names[: al.n_categories],
        iou_threshold=thr,
    ).to_dict()


@pytest.mark.parametrize("protocol", ["coco", "voc12"])
@pytest.mark.parametrize("thr", ["0.5", "0.75"])
def test_calibration_from_the_coco_matches_equals_the_library(scene, protocol, thr):
    """With COCO the run's own matches are read; without, COCO matching is run for it."""
    gt, dt = scene
    doc = doc_of(gt, dt, "--calibration", "--iou-thr", thr, "-p", protocol)
    cal = doc["calibration"]
    assert list(cal) == ["iou_threshold", "bins", "ece", "mce", "per_class"]
    assert list(cal["bins"][0]) == ["lower", "upper", "count", "mean_score", "accuracy"]
    assert cal == library_calibration(gt, dt, float(thr))
    assert len(cal["bins"]) == 10 and cal["bins"][-1]["upper"] == 1.0


def test_calibration_reliability_table(scene):
    gt, dt = scene
    out = run(gt, dt, "--calibration", "-q").out
    assert "Calibration (reliability; ECE" in out and "[0.9, 1]" in out and "[0, 0.1)" in out
    md = run(gt, dt, "--calibration", "-q", "-f", "markdown").out
    # Markdown cells escape brackets (a cell never becomes a link).
    assert "| \\[0.9, 1\\] |" in md and "Calibration per class" in md


def test_calibration_refuses_scores_outside_0_1(write_json):
    gt = json.loads((ROOT / "sample_data" / "coco" / "gt.json").read_text())
    preds = json.loads((ROOT / "sample_data" / "coco" / "preds.json").read_text())
    preds[0]["score"] = 7.5
    r = run(write_json("g.json", gt), write_json("p.json", preds), "--calibration", expect=2)
    assert "calibration needs scores in [0, 1]" in r.err and "Traceback" not in r.err


def test_confusion_feeds_the_reports_confusion_plots(tmp_path):
    pytest.importorskip("matplotlib")
    plots = tmp_path / "plots"
    run(GT, PREDS, "--confusion", "-f", "html", "-o", tmp_path / "r.html", "--plots", plots, "-q")
    assert (plots / "confusion_matrix_counts.png").is_file()
    assert (plots / "confusion_matrix_normalized.svg").is_file()
