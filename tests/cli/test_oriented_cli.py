"""Oriented boxes from the command line: DOTA, Task1, YOLO-OBB, OBB JSON and xywhr CSV inputs,
``--protocol dota`` and the COCO-style default, gates, every output format, drawings, bad input."""

from __future__ import annotations

import csv
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ..conftest import ROOT
from ..parity.dota_reference import task1
from .helpers import run

SAMPLE = ROOT / "sample_data"
DOTA = SAMPLE / "dota"
GT = str(DOTA / "labelTxt")
TASK1 = str(DOTA / "task1")
YOLO = SAMPLE / "yolo-obb"
sys.path.insert(0, str(SAMPLE))


def _json(*args: str, expect: int = 0) -> dict:
    return json.loads(run(*args, "-f", "json", expect=expect).out)


def _sample_reference(eleven_point: bool = True):
    """The devkit's rules on the sample files, read with the standard library."""
    gts, dets = [], []
    for f in sorted(Path(GT).glob("*.txt")):
        for line in f.read_text().splitlines():
            t = line.split()
            if len(t) >= 9:
                gts.append((f.stem, t[8], [float(v) for v in t[:8]], int(t[9])))
    for f in sorted(Path(TASK1).glob("Task1_*.txt")):
        cls = f.stem[len("Task1_") :]
        for line in f.read_text().splitlines():
            t = line.split()
            dets.append((t[0], cls, float(t[1]), [float(v) for v in t[2:]]))
    from iou_eval.data.oriented import DOTA_V1_0

    classes = [c for c in DOTA_V1_0 if any(g[1] == c for g in gts)]
    return task1(gts, dets, classes, eleven_point=eleven_point), classes


@pytest.mark.parametrize("protocol", ["dota", "dota-allpoint"])
def test_sample_scene_under_dota_equals_the_devkit_rules(protocol):
    doc = _json(GT, TASK1, "-p", protocol)
    (aps, mean), classes = _sample_reference(eleven_point=protocol == "dota")
    assert doc["summary"] == {"mAP": mean, **{f"AP[{c}]": aps[c] for c in classes}}
    assert doc["params"]["iou_type"] == "obb" and doc["params"]["ap_method"] in (
        "11-point", "all-point",
    )  # fmt: skip
    assert doc["inputs"]["ground_truth"]["shapes"] == "oriented boxes (4 corners)"


def test_dota_gates():
    r = run(GT, TASK1, "-p", "dota", "--fail-under", "dota:mAP=0.7")
    assert "Checks: all 1 checks passed" in r.out
    r = run(GT, TASK1, "-p", "dota", "--fail-under", "dota:mAP=0.75", expect=3)
    assert "FAIL" in r.out
    run(GT, TASK1, "-p", "dota,coco", "--fail-under", "AP[tennis-court]=0.99")
    run(GT, TASK1, "-p", "dota", "--fail-under", "AP[ship]=0.99", expect=3)


def test_class_without_ground_truth_is_null_and_the_devkit_mean_is_said(tmp_path):
    """A class whose objects are all difficult has no AP (null); mAP leaves it out."""
    labels = tmp_path / "labelTxt"
    shutil.copytree(GT, labels)
    with (labels / "P9001.txt").open("a") as fh:
        fh.write("10 10 50 10 50 40 10 40 harbor 1\n")
    preds = tmp_path / "task1"
    shutil.copytree(TASK1, preds)
    (preds / "Task1_harbor.txt").write_text("P9001 0.9 10 10 50 10 50 40 10 40\n")
    r = run(labels, preds, "-p", "dota", "-f", "json")
    doc = json.loads(r.out)
    assert doc["summary"]["AP[harbor]"] is None
    (aps, mean), _ = _sample_reference()
    assert doc["summary"]["mAP"] == mean  # harbor does not count
    assert "its mAP would be 6/15 of this one" in r.err


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "html"])
@pytest.mark.parametrize("protocol", ["dota", "coco", "dota,coco"])
def test_every_output_format(fmt, protocol, tmp_path):
    out = tmp_path / f"report.{fmt}"
    run(GT, TASK1, "-p", protocol, "-f", fmt, "-o", out)
    text = out.read_text()
    assert "tennis-court" in text
    if fmt in ("table", "markdown"):
        assert ("DOTA devkit task 1" in text) == ("dota" in protocol)
        assert ("COCOeval obb" in text) == ("coco" in protocol)


def test_without_protocol_oriented_boxes_are_scored_coco_style():
    doc = _json(GT, TASK1)
    assert doc["protocol"] == "coco" and doc["params"]["iou_type"] == "obb"
    assert set(doc["summary"]) >= {"AP", "AP50", "AP75"}
    assert 0 < doc["summary"]["AP"] < doc["summary"]["AP50"] <= 1
    bbox = _json(GT, TASK1, "--iou-type", "bbox")
    assert bbox["params"]["iou_type"] == "bbox" and bbox["summary"]["AP"] != doc["summary"]["AP"]


def test_xywhr_csv_in_radians_and_degrees(tmp_path):
    """The predictions as cx, cy, w, h, angle: the same numbers either unit; the unit is said."""
    rad = _json(GT, DOTA / "preds.csv", "-p", "dota")
    rows = list(csv.DictReader((DOTA / "preds.csv").open()))
    deg = tmp_path / "preds_deg.csv"
    with deg.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for row in rows:
            w.writerow({**row, "angle": repr(math.degrees(float(row["angle"])))})
    got = _json(GT, deg, "-p", "dota", "--angle-unit", "deg")
    assert got["summary"] == pytest.approx(rad["summary"], abs=1e-12)
    assert (
        got["inputs"]["predictions"]["shapes"] == "oriented boxes (cx, cy, w, h, angle in degrees)"
    )
    assert rad["inputs"]["predictions"]["shapes"].endswith("angle in radians)")
    table = run(GT, DOTA / "preds.csv", "-p", "dota").out
    assert "angle in radians" in table
    # Task1 holds the same boxes to 0.1 pixel: the same outcome.
    task = _json(GT, TASK1, "-p", "dota")
    assert rad["summary"] == pytest.approx(task["summary"], abs=1e-12)


def test_yolo_obb_labels_predictions_and_json():
    yaml = str(YOLO / "data.yaml")
    txt = _json(yaml, YOLO / "predictions" / "labels", "--pred-format", "yolo", "-p", "dota,coco")
    assert txt["inputs"]["ground_truth"]["shapes"] == "oriented boxes (4 corners)"
    js = _json(yaml, YOLO / "predictions.json", "--class-offset", "-1", "-p", "dota,coco")
    assert js["inputs"]["predictions"]["format"] == "obb-json"
    for a, b in zip([txt, *txt["additional_protocols"]], [js, *js["additional_protocols"]],
                    strict=True):  # fmt: skip
        assert a["summary"] == pytest.approx(b["summary"], abs=1e-9)
    # Without the offset the ids are read as Ultralytics numbers them (index + 1), with a note.
    plain = _json(yaml, YOLO / "predictions.json", "-p", "dota", "--strict")
    assert plain["summary"] == pytest.approx(txt["summary"], abs=1e-9)
    assert any("the class index + 1" in w for w in plain["warnings"])


def test_yolo_obb_and_dota_agree_but_for_difficult():
    """The YOLO-OBB copy has no difficult flag: its ship counts where the DOTA file ignores it."""
    yolo = _json(str(YOLO / "data.yaml"), YOLO / "predictions" / "labels", "--pred-format", "yolo",
                 "-p", "dota")  # fmt: skip
    dota = _json(GT, DOTA / "preds.csv", "-p", "dota")
    for key in ("AP[plane]", "AP[small-vehicle]", "AP[storage-tank]", "AP[tennis-court]"):
        assert yolo["summary"][key] == pytest.approx(dota["summary"][key], abs=1e-12), key
    assert yolo["summary"]["AP[ship]"] != dota["summary"]["AP[ship]"]


def _labels(tmp_path, line: str, name: str = "P1.txt") -> Path:
    folder = tmp_path / "labelTxt"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(
        f"imagesource:GoogleEarth\ngsd:0.1\n0 0 10 0 10 10 0 10 ship 0\n{line}\n"
    )
    return folder


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("0 0 10 0 3 3 0 10 ship 0", "P1.txt:4: corners 0 0 10 0 3 3 0 10 do not make a convex"),
        ("0 0 5 0 10 0 0 10 ship 0", "P1.txt:4: corners 0 0 5 0 10 0 0 10 do not make a convex"),
        ("0 0 10 0 10 10 0 10 ship", None),  # difficult may be left out
        ("0 0 10 0 10 10 ship 0", "P1.txt:4: expected 'x1 y1 x2 y2 x3 y3 x4 y4 class difficult'"),
        ("0 0 10 0 10 10 0 10 ship easy", "P1.txt:4: difficult must be an integer"),
        ("0 0 10 0 10 10 0 10 ship +-1", "P1.txt:4: difficult must be an integer"),
        ("0 0 10 0 10 10 0 10 ship -+0", "P1.txt:4: difficult must be an integer"),
        ("0 0 10 0 10 10 0 10 ship +1", None),  # one sign, as int() reads it
        ("0 0 10 0 10 x 0 10 ship 0", "P1.txt:4: expected a number for y3, got 'x'"),
        ("0 0 10 0 10 inf 0 10 ship 0", "P1.txt:4: expected a finite number for y3"),
    ],
)
def test_bad_dota_lines_name_the_file_and_line(tmp_path, line, needle):
    preds = tmp_path / "Task1_ship.txt"
    preds.write_text("P1 0.9 0 0 10 0 10 10 0 10\n")
    r = run(_labels(tmp_path, line), preds, "-p", "dota", expect=None)
    if needle is None:
        assert r.code == 0, r
        return
    assert r.code == 1 and needle in r.err and "Traceback" not in r.err, r


def test_corners_in_a_crossing_order_are_put_in_order_with_a_doubt(tmp_path):
    preds = tmp_path / "Task1_ship.txt"
    preds.write_text("P1 0.9 0 0 10 0 10 10 0 10\n")
    labels = _labels(tmp_path, "20 0 30 10 30 0 20 10 ship 0")  # 1 3 2 4
    r = run(labels, preds, "-p", "dota")
    assert "P1.txt:4); read as the convex quadrilateral" in r.err
    run(labels, preds, "-p", "dota", "--strict", expect=1)


@pytest.mark.parametrize(
    ("header", "row", "extra", "needle"),
    [
        ("image,label,score,xmin,ymin,xmax,ymax,angle", "P9001,ship,0.9,1,2,3,4,0.1", (),
         "the box columns must be cx, cy, w, h"),
        ("image,label,score,cx,cy,w,h,angle", "P9001,ship,0.9,1,2,0,4,0.1", (),
         "preds.csv:2: an oriented box needs a positive width and height"),
        ("image,label,score,cx,cy,w,h,angle", "P9001,ship,0.9,0.1,0.2,0.1,0.1,0.1",
         ("--normalized",), "needs pixel coordinates"),
    ],
)  # fmt: skip
def test_bad_angle_tables(tmp_path, header, row, extra, needle):
    preds = tmp_path / "preds.csv"
    preds.write_text(f"{header}\n{row}\n")
    r = run(GT, preds, "-p", "dota", *extra, expect=1)
    assert needle in r.err, r


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--iou-type", "bbox", "-p", "dota"), "--protocol dota scores oriented boxes"),
        (("--iou-type", "obox"), "--iou-type: expected bbox, segm, boundary, obb"),
        (("-p", "dota", "--pixel-convention", "plus-one"), "no pixel convention"),
        (("--angle-unit", "grad"), "grad"),
    ],
)
def test_usage_errors(args, needle):
    r = run(GT, TASK1, *args, expect=2)
    assert needle in r.err, r


def test_axis_aligned_predictions_against_oriented_ground_truth_are_a_doubt(tmp_path):
    preds = tmp_path / "preds.csv"
    preds.write_text("image,label,score,xmin,ymin,xmax,ymax\nP9001,ship,0.9,90,80,210,160\n")
    r = run(GT, preds)
    assert "scored as rectangles at angle 0" in r.err
    run(GT, preds, "--strict", expect=1)


def test_draw_draws_the_oriented_boxes(tmp_path):
    """The ground truth's outline runs along the turned edges, not along the enclosing box."""
    from PIL import Image

    from iou_eval.reporters.draw import GT_COLOUR

    run("draw", GT, TASK1, "--images", DOTA / "images", "-o", tmp_path / "obb", "-p", "dota")
    run("draw", GT, TASK1, "--images", DOTA / "images", "-o", tmp_path / "bbox",
        "--iou-type", "bbox")  # fmt: skip
    # The middle of an edge of the tennis court turned by 10 degrees (P9004, object 21).
    from make_dota import corners

    c = corners(420, 360, 140, 70, math.radians(10))
    mid = tuple(int(round(v)) for v in (c[1] + c[2]) / 2)
    near = [(mid[0] + dx, mid[1] + dy) for dx in range(-2, 3) for dy in range(-2, 3)]
    obb = Image.open(tmp_path / "obb" / "P9004.png").convert("RGB")
    bbox = Image.open(tmp_path / "bbox" / "P9004.png").convert("RGB")
    assert any(obb.getpixel(p) == tuple(GT_COLOUR[:3]) for p in near)
    assert not any(bbox.getpixel(p) == tuple(GT_COLOUR[:3]) for p in near)


def test_html_report_and_plots_with_dota(tmp_path):
    run(GT, TASK1, "-p", "dota", "-f", "html", "-o", tmp_path / "r.html", "--plots",
        tmp_path / "plots", "--images", DOTA / "images")  # fmt: skip
    html = (tmp_path / "r.html").read_text()
    assert "DOTA devkit task 1" in html and "oriented boxes (4 corners)" in html
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert "ap_per_class.png" in pngs and "score_threshold_per_class.png" in pngs, pngs


def test_toolkit_cli_free_api_matches_sample_ious():
    """The matches' IoUs the tables report are ``iou.oriented_boxes`` of the matched pairs."""
    from iou_eval import evaluate, iou

    result = evaluate(GT, TASK1)
    r = result.results[0]
    point = r.evaluation.point
    gt, pred = result.alignment.gt, result.alignment.pred
    tp = np.flatnonzero(point.tp)
    got = np.array([
        iou.oriented_boxes(pred.oriented.corners[d], gt.oriented.corners[g])
        for d, g in zip(point.dt_rows[tp], point.match_gt[tp], strict=True)
    ])  # fmt: skip
    assert np.array_equal(got, point.match_iou[tp])


def test_baseline_and_bootstrap_under_dota(tmp_path):
    """A baseline compares mAP and each class's AP once; a bootstrap gives each an interval."""
    base = tmp_path / "base.json"
    run(GT, TASK1, "-p", "dota,coco", "-f", "json", "-o", base)
    r = run(GT, DOTA / "preds.csv", "-p", "dota,coco", "--baseline", base, "--max-drop", "0.01")
    names = [ln.split()[0] for ln in r.out.splitlines() if ln.strip().startswith("dota:")]
    assert names.count("dota:AP[ship]") == 1 and "dota:mAP" in names, r
    assert "Checks: all 25 checks passed" in r.out
    doc = _json(GT, TASK1, "-p", "dota", "--bootstrap", "10")
    assert set(doc["bootstrap"]["intervals"]) == set(doc["summary"])


def test_analyses_on_oriented_boxes_are_doubted_and_slices_are_not(tmp_path):
    slices = tmp_path / "slices.csv"
    slices.write_text("image_id,slice\nP9001,harbour\nP9002,parking\n")
    r = run(GT, TASK1, "-p", "dota", "--slices", slices)
    assert "AP[small-vehicle]" in r.out and "warning (doubt)" not in r.err, r
    r = run(GT, TASK1, "-p", "dota", "--tide")
    assert "warning (doubt): --tide, --confusion and --calibration match axis-aligned" in r.err


def test_oriented_coco_in_worker_processes_gives_the_same_numbers(monkeypatch):
    """Categories matched in forked workers (their geometry a subset of the whole): same result."""
    import iou_eval.protocols.partition
    from iou_eval import evaluate

    one = evaluate(GT, TASK1, workers=1)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    two = evaluate(GT, TASK1, workers=2)
    assert two.summary == one.summary
    assert two.to_dict()["per_class"] == one.to_dict()["per_class"]


@pytest.mark.parametrize("protocol", ["dota", "coco"])
def test_difficult_ground_truth_of_no_area_is_a_placeholder_that_never_matches(tmp_path, protocol):
    preds = tmp_path / "Task1_ship.txt"
    preds.write_text("P1 0.9 0 0 10 0 10 10 0 10\nP1 0.8 0 0 0 0 0 0 0 0\n")
    labels = _labels(tmp_path, "0 0 0 0 0 0 0 0 ship 1")
    r = run(labels, preds, "-p", protocol, "-f", "json", "--honour-ignore")
    doc = json.loads(r.out)
    key = "AP[ship]" if protocol == "dota" else "AP50"
    assert doc["summary"][key] == pytest.approx(1.0, abs=1e-12), doc["summary"]
    assert "P1.txt:4), as placeholders do; they can never be matched" in r.err, r
    # Not difficult, it is still an error naming the line.
    r = run(_labels(tmp_path, "0 0 0 0 0 0 0 0 ship 0"), preds, "-p", protocol, expect=1)
    assert "P1.txt:4: corners 0 0 0 0 0 0 0 0 do not make a convex" in r.err, r


def test_mmrotate_placeholder_in_an_angle_table_is_accepted_as_difficult(tmp_path):
    gt = tmp_path / "gt.csv"
    head = "image,label,cx,cy,w,h,angle,difficult\n"
    gt.write_text(head + "P1,ship,5,5,10,10,0,0\nP1,ship,0,0,0,0,0,1\n")
    preds = tmp_path / "preds.csv"
    preds.write_text("image,label,score,cx,cy,w,h,angle\nP1,ship,0.9,5,5,10,10,0\n")
    doc = json.loads(run(gt, preds, "-p", "dota", "-f", "json").out)
    assert doc["summary"]["AP[ship]"] == pytest.approx(1.0, abs=1e-12)
    gt.write_text(head + "P1,ship,5,5,10,10,0,0\nP1,ship,0,0,0,0,0,0\n")
    r = run(gt, preds, "-p", "dota", expect=1)
    assert "gt.csv:3: an oriented box needs a positive width and height" in r.err, r


def test_predictions_that_are_not_convex_are_scored_by_their_hull_coco_style(tmp_path):
    """A dart whose inner corner lies inside the triangle of the others: COCO-style, it is scored
    as that triangle (half the square: IoU 0.5); the DOTA devkit intersects the dart itself."""
    preds = tmp_path / "Task1_ship.txt"
    preds.write_text("P1 0.9 0 0 10 0 3 3 0 10\n")
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text("0 0 10 0 10 10 0 10 ship 0\n")
    r = run(labels, preds, "-f", "json", "--iou-thresholds", "0.45,0.55")
    ap = json.loads(r.out)["per_class"][0]["AP"]
    assert ap == pytest.approx(0.5, abs=1e-12), ap  # matched at 0.45 (the dart's 0.3 is not)
    assert "1 of 1 predicted boxes are not convex quadrilaterals (first: " in r.err, r
    assert "Task1_ship.txt:1); the exact overlap (COCO-style) reads their convex hull" in r.err
    dota = json.loads(run(labels, preds, "-p", "dota", "-f", "json").out)
    assert dota["summary"]["AP[ship]"] == 0.0  # the dart covers 0.3 of the square


def test_ultralytics_obb_prediction_folder_beside_dota_labels_is_read_as_yolo(tmp_path):
    """``predict/labels/*.txt`` of an OBB model ('class x1 y1 ... x4 y4 conf', fractions) against
    a DOTA labelTxt/: read as Ultralytics predictions, not as 'class score x y w h' lines."""
    labels = tmp_path / "predict" / "labels"
    shutil.copytree(YOLO / "predictions" / "labels", labels)
    names = tmp_path / "classes.txt"
    names.write_text("plane\nship\nsmall-vehicle\nlarge-vehicle\nstorage-tank\ntennis-court\n")
    common = ("-p", "dota", "--images", str(DOTA / "images"), "--names", str(names), "-f", "json")
    r = run(GT, labels, *common)
    assert "read as Ultralytics OBB predictions ('class x1 y1 ... x4 y4 conf'" in r.err, r
    told = json.loads(run(GT, labels, *common, "--pred-format", "yolo").out)
    assert json.loads(r.out)["summary"] == told["summary"]
    assert told["summary"]["mAP"] > 0.5


def _plain_results(tmp_path) -> Path:
    """The sample's Task1_<class>.txt files, named <class>.txt."""
    folder = tmp_path / "results"
    folder.mkdir()
    for f in Path(TASK1).glob("Task1_*.txt"):
        shutil.copy(f, folder / f.name.removeprefix("Task1_"))
    return folder


def test_dota_results_named_by_their_class_alone_are_read_with_a_note(tmp_path):
    folder = _plain_results(tmp_path)
    r = run(GT, folder, "-p", "dota", "-f", "json")
    assert "one file per class named by the class alone (the devkit names them " in r.err, r
    assert json.loads(r.out)["summary"] == _json(GT, TASK1, "-p", "dota")["summary"]


def test_dota_results_whose_name_is_no_class_name_the_devkit_rule(tmp_path):
    folder = _plain_results(tmp_path)
    shutil.copy(folder / "ship.txt", folder / "boats.txt")
    r = run(GT, folder, "-p", "dota", expect=1)
    assert "boats.txt: lines read as DOTA task-1 results" in r.err, r
    assert "the file name 'boats' is not a class of the ground truth" in r.err
    assert "names its results Task1_<class>.txt" in r.err and "pass --pred-format yolo" not in r.err
    r = run(GT, folder, "-p", "dota", "--pred-format", "txt", expect=1)
    assert "is a DOTA task-1 result: the devkit names its files Task1_<class>.txt" in r.err, r


def test_gates_name_the_hyphenated_dota_allpoint_and_coco_obb_labels():
    doc = _json(GT, TASK1, "-p", "dota-allpoint,coco")
    mean, coco_ap = doc["summary"]["mAP"], doc["additional_protocols"][0]["summary"]["AP"]
    r = run(GT, TASK1, "-p", "dota-allpoint,coco", "--fail-under", "dota-allpoint:mAP=0.7",
            "--fail-under", "coco-obb:AP=0.4")  # fmt: skip
    assert "Checks: all 2 checks passed" in r.out
    r = run(GT, TASK1, "-p", "dota-allpoint,coco", "--fail-under", "dota-allpoint:mAP=0.8",
            "--fail-under", "coco-obb:AP=0.6", expect=3)  # fmt: skip
    assert f"{mean:.4f} is below 0.8" in r.out and f"{coco_ap:.4f} is below 0.6" in r.out
    r = run(GT, TASK1, "-p", "dota", "--fail-under", "dota-allpoint:mAP=0.7", expect=2)
    assert "protocol 'dota-allpoint' did not run (dota)" in r.err
