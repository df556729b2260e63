"""The traps of the files people bring: each gives the right number, or a doubt and exit 1 with --strict.

Every test here failed on the code before the wiring: the number was wrong
with exit code 0 and no warning, or the option that fixes it did not exist.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from iou_eval.io import source

from ..unit.formats_helpers import image, write
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
ACCEPTANCE = Path("/work/shared/acceptance/cases")
sys.path.insert(0, str(SAMPLE))
import make_sample  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_stdin():
    source._stdin_cache.clear()
    yield
    source._stdin_cache.clear()


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


def summary(*args):
    return report(*args)[0]["summary"]


def coco_pixels(tmp_path: Path, crowd: bool = False) -> float:
    """AP50 of the pixel scene (sample_data's COCO version) as pycocotools scores it."""
    gt, preds = make_sample.coco_dicts(crowd=crowd)
    write(tmp_path / "ref_gt.json", json.dumps(gt))
    write(tmp_path / "ref_preds.json", json.dumps(preds))
    return summary(tmp_path / "ref_gt.json", tmp_path / "ref_preds.json")["AP50"]


# --------------------------------------------------------------------------- Ultralytics


def test_ultralytics_txt_predictions_read_with_the_confidence_last(tmp_path):
    doc, err = report(SAMPLE / "yolo/data.yaml", SAMPLE / "yolo/predictions/labels",
                      "--pred-format", "yolo", "--strict")  # fmt: skip
    assert doc["summary"]["AP50"] == coco_pixels(tmp_path) and doc["doubts"] == []
    assert doc["inputs"]["ground_truth"]["format"] == "yolo"


def test_data_yaml_split_option_chooses_the_split(tmp_path):
    for split, stem in (("val", "v"), ("test", "t")):
        image(tmp_path / f"images/{split}/{stem}.png", 100, 50)
        write(tmp_path / f"labels/{split}/{stem}.txt", "0 0.5 0.5 0.2 0.2\n")
    write(tmp_path / "data.yaml", "val: images/val\ntest: images/test\nnames: [cat]\n")
    preds = write(tmp_path / "p.csv", "image,label,x,y,w,h,score\nt,cat,40,20,20,10,0.9\n")
    assert summary(tmp_path / "data.yaml", preds, "--split", "test")["AP50"] == pytest.approx(1.0)
    doc, err = report(tmp_path / "data.yaml", preds)  # val: the prediction's image is not there
    assert doc["summary"]["AP50"] == 0.0 and "not in the ground truth" in err
    r = run(tmp_path / "data.yaml", preds, "--split", "train", expect=1)
    assert "data.yaml has no 'train' split" in r.err


def test_predictions_json_beside_data_yaml_read_in_ultralytics_numbering_without_a_flag(tmp_path):
    """val(save_json=True) numbers classes index + 1 since December 2024: read so, with a note."""
    data, preds = SAMPLE / "yolo/data.yaml", SAMPLE / "yolo/predictions.json"
    doc, err = report(data, preds, "--strict")
    labels, _ = report(data, SAMPLE / "yolo/predictions/labels", "--strict")
    assert doc["summary"] == labels["summary"] and doc["doubts"] == []
    assert doc["summary"]["AP50"] == coco_pixels(tmp_path) == pytest.approx(0.6943234323)
    assert any(
        "the class index + 1 (ids 1..5, data.yaml classes 0..4)" in w for w in doc["warnings"]
    )
    as_given, err = report(data, preds, "--class-offset", "0")  # the ids as written: all off by one
    assert as_given["summary"]["AP50"] == 0.0 and "read as Ultralytics" not in err


def test_predictions_json_whose_ids_fit_both_ultralytics_numberings_is_a_doubt(tmp_path):
    """No id 0 and none above the classes: index + 1 is read, and said as a doubt."""
    records = json.loads((SAMPLE / "yolo/predictions.json").read_text())
    middle = [r for r in records if 2 <= r["category_id"] <= 4]
    p = write(tmp_path / "predictions.json", json.dumps(middle))
    doc, _ = report(SAMPLE / "yolo/data.yaml", p)
    (d,) = doc["doubts"]
    assert "pass --class-offset 0 if an older Ultralytics wrote the file" in d
    run(SAMPLE / "yolo/data.yaml", p, "--strict", expect=1)


def test_obb_predictions_json_beside_data_yaml_read_in_ultralytics_numbering():
    data = SAMPLE / "yolo-obb/data.yaml"
    doc, _ = report(data, SAMPLE / "yolo-obb/predictions.json", "--strict")
    labels, _ = report(data, SAMPLE / "yolo-obb/predictions", "--strict")
    assert doc["summary"] == labels["summary"] and doc["summary"]["AP50"] == pytest.approx(
        0.7413366337
    )


def test_predictions_json_numbered_from_zero_joins_as_it_is(tmp_path):
    records = json.loads((SAMPLE / "yolo/predictions.json").read_text())
    zero = write(tmp_path / "predictions.json",
                 json.dumps([{**r, "category_id": r["category_id"] - 1} for r in records]))  # fmt: skip
    doc, _ = report(SAMPLE / "yolo/data.yaml", zero, "--strict")
    assert doc["summary"]["AP50"] == coco_pixels(tmp_path) and doc["doubts"] == []
    assert any("as Ultralytics' val(save_json=True) wrote it before" in w for w in doc["warnings"])


# The sample's five classes in COCO's numbering: ids 1..90 and the 80 indices.
COCO_IDS = {"bicycle": 2, "car": 3, "dog": 18, "person": 1, "traffic light": 10}
COCO80 = {"bicycle": 1, "car": 2, "dog": 16, "person": 0, "traffic light": 9}


def test_coco80_indices_against_coco_ids_need_the_class_map(tmp_path):
    gt, preds = make_sample.coco_dicts(crowd=False)
    name = {c["id"]: c["name"] for c in gt["categories"]}
    gt = {**gt, "categories": [{"id": COCO_IDS[c["name"]], "name": c["name"]} for c in gt["categories"]],
          "annotations": [{**a, "category_id": COCO_IDS[name[a["category_id"]]]} for a in gt["annotations"]]}  # fmt: skip
    right = [{**p, "category_id": COCO_IDS[name[p["category_id"]]]} for p in preds]
    indices = [{**p, "category_id": COCO80[name[p["category_id"]]]} for p in preds]
    g = write(tmp_path / "gt.json", json.dumps(gt))
    reference = summary(g, write(tmp_path / "right.json", json.dumps(right)))
    p = write(tmp_path / "indices.json", json.dumps(indices))
    doc, _ = report(g, p)
    assert any("pass --class-map coco80" in d for d in doc["doubts"])
    run(g, p, "--strict", expect=1)
    assert summary(g, p, "--class-map", "coco80", "--strict") == reference


def test_class_map_file_maps_prediction_ids(tmp_path):
    gt, preds = make_sample.coco_dicts(crowd=False)
    g = write(tmp_path / "gt.json", json.dumps(gt))
    reference = summary(g, write(tmp_path / "p0.json", json.dumps(preds)))
    swapped = {1: 5, 2: 4, 3: 3, 4: 2, 5: 1}  # a numbering of the model's own
    p = write(tmp_path / "p.json",
              json.dumps([{**r, "category_id": swapped[r["category_id"]]} for r in preds]))  # fmt: skip
    assert summary(g, p) != reference
    cmap = write(tmp_path / "map.txt", "# model -> dataset\n5 1\n4, 2\n3:3\n2 4\n1 5\n")
    assert summary(g, p, "--class-map", cmap) == reference
    cjson = write(tmp_path / "map.json", json.dumps({str(v): k for k, v in swapped.items()}))
    assert summary(g, p, "--class-map", cjson) == reference
    r = run(g, p, "--class-map", write(tmp_path / "bad.txt", "1 2 3\n"), expect=1)
    assert "bad.txt:1: expected 'from to'" in r.err


def test_class_indices_without_names_get_a_hint(tmp_path):
    write(tmp_path / "gt/a.txt", "cat 10 10 20 20\ndog 50 50 20 20\n")
    write(tmp_path / "pred/a.txt", "0 0.9 10 10 20 20\n1 0.8 50 50 20 20\n")
    doc, _ = report(tmp_path / "gt", tmp_path / "pred")
    assert doc["summary"]["AP50"] == 0.0
    (d,) = doc["doubts"]
    assert "they number their classes, the ground truth names them (cat, dog)" in d
    assert "pass --names FILE" in d
    names = write(tmp_path / "names.txt", "cat\ndog\n")
    assert summary(tmp_path / "gt", tmp_path / "pred", "--names", names, "--strict")[
        "AP50"
    ] == pytest.approx(1.0)


# --------------------------------------------------------------------------- layouts and scale


@pytest.mark.skipif(not ACCEPTANCE.exists(), reason="acceptance cases not present")
@pytest.mark.parametrize(
    ("case", "gt", "dets", "protocol", "wrong", "right"),
    [("02_rdm_toyexample_voc_xml", "gts_vocpascal_format", "dets_classname_abs_xyx2y2", "voc07", 0.6116, 0.8864),
     ("11_mmdet_eval_map_ignore_exact_iou", "derived_voc/Annotations", "derived_voc/detections", "voc12", 0.1667, 0.2917)],
)  # fmt: skip
def test_xyxy_detections_read_with_the_default_layout_are_a_doubt(
    case, gt, dets, protocol, wrong, right
):
    gt_path, dets_path = ACCEPTANCE / case / gt, ACCEPTANCE / case / dets
    doc, _ = report(gt_path, dets_path, "-p", protocol)
    assert doc["summary"]["mAP"] == pytest.approx(wrong, abs=5e-5)
    (d,) = doc["doubts"]
    assert "read as xywh" in d and d.endswith("pass --pred-box-format xyxy")
    run(gt_path, dets_path, "-p", protocol, "--strict", expect=1)
    fixed, _ = report(gt_path, dets_path, "-p", protocol, "--pred-box-format", "xyxy", "--strict")
    assert fixed["summary"]["mAP"] == pytest.approx(right, abs=5e-5)


def test_per_file_layouts_win_over_the_shared_one(tmp_path):
    """Ground truth x y w h, predictions x1 y1 x2 y2: one shared flag cannot read both."""
    write(tmp_path / "gt/a.txt", "cat 10 10 20 30\n")
    write(tmp_path / "pred/a.txt", "cat 0.9 10 10 30 40\n")
    g, p = tmp_path / "gt", tmp_path / "pred"
    assert summary(g, p, "--pred-box-format", "xyxy")["AP"] == pytest.approx(1.0)
    assert summary(g, p, "--box-format", "xywh", "--pred-box-format", "xyxy")[
        "AP"
    ] == pytest.approx(1.0)
    assert summary(g, p, "--box-format", "xyxy", "--gt-box-format", "xywh")["AP"] == pytest.approx(
        1.0
    )
    assert summary(g, p, "--box-format", "xyxy")["AP"] == 0.0  # the ground truth misread
    write(tmp_path / "gt2/a.txt", "cat 30 40 20 30\n")
    r = run(tmp_path / "gt2", p, "--box-format", "xyxy", expect=1)
    assert "x2 < x1 or y2 < y1" in r.err and "check --box-format" in r.err


def test_normalized_for_both_files_when_one_is_pixels_is_a_doubt(tmp_path):
    write(tmp_path / "gt/a.txt", "cat 10 20 30 40\n")  # pixels, x y w h
    write(tmp_path / "pred/a.txt", "cat 0.9 0.25 0.4 0.3 0.4\n")  # fractions, cx cy w h
    g, p = tmp_path / "gt", tmp_path / "pred"
    doc, _ = report(g, p, "--normalized", "--image-size", "100x100")
    assert doc["summary"]["AP"] == 0.0
    d = next(d for d in doc["doubts"] if "above 1" in d)
    assert "--normalized applies to both files" in d and "pass --pred-normalized instead" in d
    run(g, p, "--normalized", "--image-size", "100x100", "--strict", expect=1)
    assert summary(g, p, "--pred-normalized", "--image-size", "100x100", "--strict")[
        "AP"
    ] == pytest.approx(1.0)


def test_fractions_in_a_csv_read_as_pixels_are_a_doubt(tmp_path):
    g = write(
        tmp_path / "gt.csv",
        "image,label,x1,y1,x2,y2,img_width,img_height\na,cat,10,20,40,60,100,100\n",
    )
    p = write(tmp_path / "p.csv", "image,label,x1,y1,x2,y2,score\na,cat,0.1,0.2,0.4,0.6,0.9\n")
    doc, _ = report(g, p)
    assert doc["summary"]["AP"] == 0.0
    assert any(
        "look like fractions of the image size" in d and "--pred-normalized" in d
        for d in doc["doubts"]
    )
    assert summary(g, p, "--pred-normalized", "--strict")["AP"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- images without objects


def test_an_image_the_ground_truth_does_not_list_is_a_doubt_until_declared(tmp_path):
    """A false positive (0.95) on image b above a hit (0.9) on a: AP50 is 0.5 once b counts."""
    preds = write(tmp_path / "p.csv", "image,label,x1,y1,x2,y2,score\na,cat,10,10,50,50,0.9\nb,cat,10,10,50,50,0.95\n")  # fmt: skip
    gt = write(tmp_path / "gt.csv", "image,label,x1,y1,x2,y2\na,cat,10,10,50,50\n")
    doc, _ = report(gt, preds)
    assert doc["summary"]["AP50"] == pytest.approx(1.0)  # b's false positive is not counted
    (d,) = doc["doubts"]
    assert (
        "not in the ground truth" in d and "a row with the image and empty label and box cells" in d
    )
    assert "--images DIR" in d
    run(gt, preds, "--strict", expect=1)
    declared = write(tmp_path / "gt2.csv", "image,label,x1,y1,x2,y2\na,cat,10,10,50,50\nb,,,,,\n")
    assert summary(declared, preds, "--strict")["AP50"] == pytest.approx(0.5, abs=0.01)
    for stem in ("a", "b"):
        image(tmp_path / "images" / f"{stem}.png", 64, 64)
    doc, err = report(gt, preds, "--images", tmp_path / "images", "--strict")
    assert doc["summary"] == report(declared, preds)[0]["summary"]
    assert "1 image(s) in" in err and "declared as images without objects" in err


@pytest.mark.skipif(not ACCEPTANCE.exists(), reason="acceptance cases not present")
def test_open_images_decimal_commas_with_image_sizes_from_images(tmp_path):
    """Case 03: quoted decimal commas are read; --images gives the sizes the area ranges need."""
    import xml.etree.ElementTree as ET

    case = ACCEPTANCE / "03_rdm_voc_database_100"
    for f in (case / "gts/pascalvoc_format").iterdir():
        root = ET.parse(f).getroot()
        image(tmp_path / "img" / f"{f.stem}.png", int(root.findtext("size/width")),
              int(root.findtext("size/height")))  # fmt: skip
    gt = case / "gts/openimages_format/all_bounding_boxes.csv"
    args = (
        case / "dets/abs_xyx2y2",
        "--names",
        case / "dets/voc.names",
        "--pred-box-format",
        "xyxy",
    )
    twin, _ = report(case / "gts/coco_format_v1/instances_default.json", *args)
    unit, _ = report(gt, *args)
    assert unit["summary"]["AP50"] == 0.0 and any(
        "under every box layout" in d for d in unit["doubts"]
    )
    sized, err = report(gt, *args, "--images", tmp_path / "img", "--strict")
    assert (
        sized["summary"]["AP50"] == twin["summary"]["AP50"]
    )  # fractions with 10 digits: AP50 exact
    assert sized["summary"]["AP"] == pytest.approx(twin["summary"]["AP"], abs=1e-3)
    assert sized["summary"]["APs"] is not None and "need pixel sizes" not in err


def test_unquoted_decimal_comma_is_refused_clearly(tmp_path):
    gt = write(tmp_path / "gt.csv", "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside\n"
               "i,x,/m/a,1,0,1,0,5,0,9,0,1,0,0,0,0\n")  # fmt: skip
    r = run(gt, gt, "--gt-format", "openimages", expect=1)
    assert "gt.csv:2: expected 13 cells as in the header, found 16" in r.err
    assert "an unquoted decimal comma splits a number in two" in r.err


# --------------------------------------------------------------------------- standard input, gzip, BOM, CRLF


def stdin_run(*args, data: bytes, expect=0):
    from click.testing import CliRunner

    from iou_eval.cli.main import main

    r = CliRunner().invoke(main, [str(a) for a in args], input=data)
    assert r.exit_code == expect, (r.stdout, r.stderr)
    return r


def test_dash_reads_standard_input_once_with_detection(tmp_path):
    expect = summary(SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json")
    for data in ((SAMPLE / "coco/preds.json").read_bytes(),
                 __import__("gzip").compress(b"\xef\xbb\xbf" + (SAMPLE / "coco/preds.json").read_bytes())):  # fmt: skip
        source._stdin_cache.clear()
        r = stdin_run(SAMPLE / "coco/gt.json", "-", "-f", "json", data=data)
        assert json.loads(r.stdout)["summary"] == expect
    source._stdin_cache.clear()
    r = stdin_run(
        "-", SAMPLE / "csv/preds.csv", "-f", "json", data=(SAMPLE / "csv/gt.csv").read_bytes()
    )
    assert json.loads(r.stdout)["summary"] == summary(
        SAMPLE / "csv/gt.csv", SAMPLE / "csv/preds.csv"
    )
    r = stdin_run("-", "-", data=b"[]", expect=2)
    assert "standard input (-) can stand for one input only" in r.stderr


def variants(src: Path, dst: Path) -> None:
    """``src`` (a file or a folder of files) gzip-compressed, with a BOM and CRLF line ends."""
    files = [src] if src.is_file() else sorted(f for f in src.iterdir() if f.is_file())
    for f in files:
        name = dst if src.is_file() else dst / f.name
        write(Path(str(name) + ".gz"), f.read_text(), gz=True, bom=True, crlf=True)


@pytest.mark.parametrize(
    ("gt", "pred", "fmt"),
    [("coco/gt.json", "coco/preds.json", None), ("csv/gt.csv", "csv/preds.csv", None),
     ("voc/annotations", "voc/predictions", None), ("cvat/gt.xml", "cvat/preds.xml", "cvat-xml"),
     ("labelme/gt", "labelme/preds", "labelme"), ("openimages/gt.csv", "openimages/preds.csv", "openimages")],
)  # fmt: skip
def test_every_format_reads_gzip_bom_and_crlf(tmp_path, gt, pred, fmt):
    expect = summary(
        SAMPLE / gt, SAMPLE / pred, *(("--gt-format", fmt, "--pred-format", fmt) if fmt else ())
    )
    variants(SAMPLE / gt, tmp_path / "gt")
    variants(SAMPLE / pred, tmp_path / "pred")
    g = tmp_path / "gt.gz" if (SAMPLE / gt).is_file() else tmp_path / "gt"
    p = tmp_path / "pred.gz" if (SAMPLE / pred).is_file() else tmp_path / "pred"
    got = summary(g, p, *(("--gt-format", fmt, "--pred-format", fmt) if fmt else ()))
    assert got == expect


def test_txt_folders_of_gzip_files(tmp_path):
    write(tmp_path / "gt/a.txt.gz", "cat 10 10 20 20\r\n", gz=True, bom=True)
    write(tmp_path / "pred/a.txt.gz", "cat 0.9 10 10 20 20\r\n", gz=True)
    assert summary(
        tmp_path / "gt", tmp_path / "pred", "--gt-format", "txt", "--pred-format", "txt"
    )["AP"] == pytest.approx(1.0)


def test_devkit_results_files_may_be_gzip(tmp_path):
    write(tmp_path / "gt/a.txt", "cat 10 10 20 20\n")
    write(tmp_path / "res/comp4_det_test_cat.txt.gz", "a 0.9 10 10 30 30\r\n", gz=True, bom=True)
    doc, _ = report(tmp_path / "gt", tmp_path / "res", "--strict")
    assert doc["inputs"]["predictions"]["format"] == "voc-results"
    assert doc["summary"]["AP"] == pytest.approx(1.0)


def test_strict_batch_exits_1_and_says_so_once(tmp_path):
    gt, preds = make_sample.coco_dicts(crowd=True)
    g = write(tmp_path / "gt.json", json.dumps(gt))
    write(tmp_path / "runs/a.json", json.dumps(preds))
    write(tmp_path / "runs/b.json", json.dumps([{**p, "image_id": 99} for p in preds[:1]] + preds))
    assert run(g, tmp_path / "runs", "--strict", "-f", "json", expect=None).code == 1
    r = run(g, tmp_path / "runs", "--strict", expect=1)
    assert r.err.count("--strict: 1 doubt(s)") == 1
    assert "b.json" in r.out and "a.json" in r.out  # the leaderboard is still shown
    run(g, tmp_path / "runs/a.json", "--strict")
