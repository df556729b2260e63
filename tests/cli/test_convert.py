"""``iou-eval convert``: every target written from what iou-eval reads, scoring as the original."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from iou_eval import evaluate
from tests.cli.helpers import run

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
IMAGES = SAMPLE / "images"
COCO_GT, COCO_PRED = SAMPLE / "coco/gt.json", SAMPLE / "coco/preds.json"
ONE_FILE = {"coco": ".json", "csv": ".csv", "cvat-xml": ".xml", "labelstudio": ".json"}


def numbers(gt: Path | str, pred: Path | str, **options):
    """The summary and the per-class table (without the ids, which a format may respell)."""
    result = evaluate(str(gt), str(pred), **options)
    table = result.per_class.drop(columns=["category_id"], errors="ignore")
    return result.summary, table.reset_index(drop=True)


def same(a, b) -> None:
    assert a[0] == b[0], f"summary\n  original:  {a[0]}\n  converted: {b[0]}"
    pd.testing.assert_frame_equal(a[1], b[1], check_exact=True)


def convert_pair(tmp_path: Path, gt, pred, to: str, *options: str) -> tuple[Path, Path]:
    ext = ONE_FILE.get(to, "")
    out_gt, out_pred = tmp_path / f"gt_{to}{ext}", tmp_path / f"pred_{to}{ext}"
    run("convert", gt, out_gt, "--to", to, *options)
    run("convert", pred, out_pred, "--to", to, "--gt", gt, *options)
    return out_gt, out_pred


@pytest.mark.parametrize("to", ["coco", "voc-xml", "csv", "cvat-xml", "labelstudio"])
def test_coco_scene_with_crowd_and_empty_image_scores_the_same_after_conversion(tmp_path, to):
    """Formats that hold crowd regions, difficult flags and images without objects."""
    gt, pred = convert_pair(tmp_path, COCO_GT, COCO_PRED, to, "--images", str(IMAGES))
    same(numbers(COCO_GT, COCO_PRED), numbers(gt, pred))
    same(numbers(COCO_GT, COCO_PRED, protocol="voc12"), numbers(gt, pred, protocol="voc12"))


@pytest.mark.parametrize("to", ["coco", "yolo", "labelme", "cvat-xml", "csv", "labelstudio"])
def test_yolo_dataset_and_predict_run_score_the_same_after_conversion(tmp_path, to):
    src_gt, src_pred = SAMPLE / "yolo", SAMPLE / "yolo/predictions"
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, to)
    same(numbers(src_gt, src_pred), numbers(gt, pred))


@pytest.mark.parametrize("to", ["yolo", "labelme", "cvat-xml", "labelstudio"])
def test_polygons_score_the_same_as_masks_after_conversion(tmp_path, to):
    src_gt, src_pred = SAMPLE / "yolo-seg", SAMPLE / "yolo-seg/predictions"
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, to)
    if to == "yolo":
        first = (gt / "labels/val").glob("*.txt").__next__().read_text().split("\n")[0]
        assert len(first.split()) > 5, f"a -seg line is a polygon: {first!r}"
    same(numbers(src_gt, src_pred, iou_type="segm"), numbers(gt, pred, iou_type="segm"))


@pytest.mark.parametrize("to", ["dota", "yolo"])
def test_oriented_boxes_score_the_same_after_conversion(tmp_path, to):
    src_gt, src_pred = SAMPLE / "dota/labelTxt", SAMPLE / "dota/task1"
    images = ("--images", str(SAMPLE / "dota/images"))
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, to, *images)
    if to == "dota":
        assert sorted(p.name for p in pred.iterdir())[0].startswith("Task1_")
        assert (gt / "labelTxt").is_dir()
    same(numbers(src_gt, src_pred), numbers(gt, pred))


def test_converted_coco_files_load_in_pycocotools(tmp_path):
    from pycocotools.coco import COCO

    src_gt, src_pred = SAMPLE / "yolo-seg", SAMPLE / "yolo-seg/predictions"
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, "coco")
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(gt))
        cd = cg.loadRes(str(pred))
    assert len(cg.getAnnIds()) == 30 and len(cd.getAnnIds()) == len(json.loads(pred.read_text()))
    ann = cg.loadAnns(cg.getAnnIds())[0]
    assert ann["segmentation"] and isinstance(ann["segmentation"][0], list)
    assert cg.annToMask(ann).sum() > 0


def test_yolo_target_has_the_layout_ultralytics_reads(tmp_path):
    out = tmp_path / "dataset"
    r = run("convert", COCO_GT, out, "--to", "yolo", "--images", IMAGES)
    import yaml

    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["path"] == str(out.resolve()) or data["path"] == os.path.abspath(out)
    assert data["train"] == data["val"] == "images/val"
    assert data["names"] == {0: "bicycle", 1: "car", 2: "dog", 3: "person", 4: "traffic light"}
    images = sorted(p.stem for p in (out / "images/val").iterdir())
    labels = sorted(p.stem for p in (out / "labels/val").iterdir())
    assert images == labels and len(images) == 12
    assert (out / "labels/val/street_12.txt").read_text() == ""  # no objects: an empty file
    # The crowd region is left out, and said so with its count.
    assert "1 crowd region(s) left out" in r.err


def test_predictions_are_recognised_by_their_scores(tmp_path):
    out = tmp_path / "preds.json"
    r = run("convert", COCO_PRED, out, "--to", "coco")
    assert "read as coco predictions" in r.err
    doc = json.loads(out.read_text())
    assert isinstance(doc, list) and doc[0]["score"] == 0.97


def test_scores_and_coordinates_keep_full_precision(tmp_path):
    gt = {"images": [{"id": 1, "file_name": "a.jpg", "width": 640, "height": 480}],
          "categories": [{"id": 1, "name": "cat"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
                           "bbox": [10.1, 20.2, 30.25, 40.5], "area": 1225.125, "iscrowd": 0}]}  # fmt: skip
    pred = [{"image_id": 1, "category_id": 1, "bbox": [10.1, 20.2, 30.25, 40.5],
             "score": 0.1234567890123456789}]  # fmt: skip
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    run("convert", tmp_path / "pred.json", tmp_path / "p.csv", "--to", "csv",
        "--gt", tmp_path / "gt.json")  # fmt: skip
    row = (tmp_path / "p.csv").read_text().splitlines()[1].split(",")
    assert float(row[-1]) == 0.1234567890123456789
    assert float(row[-5]) == 10.1 and float(row[-3]) == 10.1 + 30.25


def test_existing_output_is_refused_without_overwrite(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("keep me")
    r = run("convert", COCO_GT, out, "--to", "coco", expect=2)
    assert "--overwrite" in r.err and out.read_text() == "keep me"
    run("convert", COCO_GT, out, "--to", "coco", "--overwrite")
    assert json.loads(out.read_text())["images"]


def test_existing_folder_is_replaced_whole_with_overwrite(tmp_path):
    out = tmp_path / "voc"
    out.mkdir()
    (out / "stale.xml").write_text("<annotation/>")
    run("convert", COCO_GT, out, "--to", "voc-xml", "--overwrite")
    assert not (out / "stale.xml").exists() and len(list(out.iterdir())) == 12


def test_output_over_or_around_an_input_is_refused(tmp_path):
    r = run("convert", SAMPLE / "voc/annotations", SAMPLE / "voc", "--to", "voc-xml",
            "--overwrite", expect=2)  # fmt: skip
    assert "input" in r.err and (SAMPLE / "voc/annotations").is_dir()


def test_failed_conversion_leaves_nothing_behind(tmp_path):
    """CSV without image sizes cannot give YOLO's fractions: exit 1, no folder, no temporary."""
    r = run("convert", SAMPLE / "csv/gt.csv", tmp_path / "yolo", "--to", "yolo", expect=1)
    assert "no known size" in r.err and "--images" in r.err
    assert list(tmp_path.iterdir()) == []


def test_doubtful_input_is_not_converted_under_strict(tmp_path):
    pred = json.loads(COCO_PRED.read_text())
    pred.append({"image_id": 999, "category_id": 1, "bbox": [1, 1, 5, 5], "score": 0.5})
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    out = tmp_path / "out.json"
    run("convert", tmp_path / "pred.json", out, "--to", "coco", "--gt", COCO_GT)
    assert len(json.loads(out.read_text())) == len(pred) - 1  # the stray one is not written
    r = run("convert", tmp_path / "pred.json", tmp_path / "strict.json", "--to", "coco",
            "--gt", COCO_GT, "--strict", expect=1)  # fmt: skip
    assert "--strict" in r.err and not (tmp_path / "strict.json").exists()


def test_class_offset_applies_to_predictions_as_in_evaluation(tmp_path):
    pred = json.loads(COCO_PRED.read_text())
    for p in pred:
        p["category_id"] -= 1
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    out = tmp_path / "out.json"
    run("convert", tmp_path / "pred.json", out, "--to", "coco", "--gt", COCO_GT,
        "--class-offset", "1")  # fmt: skip
    assert [p["category_id"] for p in json.loads(out.read_text())] == [
        p["category_id"] for p in json.loads(COCO_PRED.read_text())
    ]


def test_the_command_offers_every_registered_target():
    from iou_eval.cli.convert import TARGETS
    from iou_eval.io.writers.registry import target_names

    assert target_names() == TARGETS


def test_unknown_target_is_a_usage_error(tmp_path):
    r = run("convert", COCO_GT, tmp_path / "x", "--to", "pascal", expect=2)
    assert "--to" in r.err and not (tmp_path / "x").exists()


def test_named_predictions_numbered_without_their_ground_truth_are_said_so(tmp_path):
    r = run("convert", SAMPLE / "labelme/preds", tmp_path / "p.json", "--to", "coco")
    assert "pass --gt REF" in r.err
    r = run("convert", SAMPLE / "labelme/preds", tmp_path / "q.json", "--to", "coco",
            "--gt", SAMPLE / "labelme/gt")  # fmt: skip
    assert "pass --gt REF" not in r.err


def test_label_studio_sample_is_what_the_converter_writes(tmp_path):
    """sample_data/labelstudio was written from sample_data/coco by convert (and read by eye)."""
    gt, pred = convert_pair(tmp_path, COCO_GT, COCO_PRED, "labelstudio")
    assert gt.read_bytes() == (SAMPLE / "labelstudio/gt.json").read_bytes()
    assert pred.read_bytes() == (SAMPLE / "labelstudio/preds.json").read_bytes()


def test_pycocotools_scores_converted_voc_files_as_iou_eval_scores_the_originals(tmp_path):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    src_gt, src_pred = SAMPLE / "voc/annotations", SAMPLE / "voc/predictions"
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, "coco")
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(gt))
        ev = COCOeval(cg, cg.loadRes(str(pred)), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ours = [-1.0 if v is None else v for v in numbers(src_gt, src_pred)[0].values()]
    assert ours == [float(v) for v in ev.stats]


def test_yolo_classes_are_numbered_in_the_names_order_when_given(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("traffic light\nperson\ncar\ndog\nbicycle\n")
    args = ("--to", "yolo", "--names", names, "--images", IMAGES)
    run("convert", SAMPLE / "voc/annotations", tmp_path / "gt", *args)
    run("convert", SAMPLE / "voc/predictions", tmp_path / "pred", *args,
        "--gt", SAMPLE / "voc/annotations")  # fmt: skip
    assert '0: "traffic light"' in (tmp_path / "gt/data.yaml").read_text()
    # car, person, traffic light on street_01 (VOC order)
    classes = [ln.split()[0] for ln in (tmp_path / "gt/labels/val/street_01.txt").read_text().split("\n") if ln]  # fmt: skip
    assert classes == ["2", "1", "0"]
    pred = [ln.split()[0] for ln in (tmp_path / "pred/labels/street_01.txt").read_text().split("\n") if ln]  # fmt: skip
    assert pred == ["2", "1", "0"]


def test_the_docs_say_what_every_target_keeps():
    from iou_eval.io.writers.registry import target_names

    page = (SAMPLE.parent / "docs/convert.md").read_text()
    missing = [t for t in target_names() if f"\n| `{t}` |" not in page]
    assert not missing, f"docs/convert.md has no row for {missing}"


def _float_scene(folder: Path) -> tuple[Path, Path]:
    """20 images, 3 classes, boxes and scores at arbitrary float64 values (seeded)."""
    import numpy as np

    rng = np.random.default_rng(7)
    images = [{"id": i, "file_name": f"img_{i:02d}.jpg", "width": 640, "height": 480}
              for i in range(1, 21)]  # fmt: skip
    anns, preds = [], []
    for im in images:
        for _ in range(int(rng.integers(0, 6))):
            x, y, w, h = rng.uniform(0, 500), rng.uniform(0, 380), rng.uniform(5, 130), rng.uniform(5, 95)  # fmt: skip
            c = int(rng.integers(1, 4))
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": c,
                         "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})  # fmt: skip
            for _ in range(2):
                j = rng.normal(0, 4, 4)
                preds.append({"image_id": im["id"], "category_id": c, "score": float(rng.uniform()),
                              "bbox": [x + j[0], y + j[1], abs(w + j[2]), abs(h + j[3])]})  # fmt: skip
    cats = [{"id": c, "name": n} for c, n in enumerate(["a", "b", "c"], 1)]
    gt, pred = folder / "gt.json", folder / "preds.json"
    gt.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    pred.write_text(json.dumps(preds))
    return gt, pred


@pytest.mark.parametrize("to", ["coco", "csv", "voc-xml", "cvat-xml", "labelme", "labelstudio"])
def test_arbitrary_float_coordinates_and_scores_score_bit_for_bit_the_same(tmp_path, to):
    src_gt, src_pred = _float_scene(tmp_path)
    gt, pred = convert_pair(tmp_path, src_gt, src_pred, to)
    same(numbers(src_gt, src_pred), numbers(gt, pred))
