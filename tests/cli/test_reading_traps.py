"""Reading traps a new user still met: each gives the right number, a doubt, or a located error.

Each test here fails on the code before the fix: a wrong number without a
word, a dead end, or a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..conftest import ACCEPTANCE
from ..unit.formats_helpers import image, write
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


# --------------------------------------------------------------------------- unreadable folders


def _refuse_listing(monkeypatch, folder: Path) -> None:
    """``os.listdir`` / ``os.scandir`` of ``folder`` fail as an unreadable folder's do."""
    target = os.path.abspath(folder)

    def refusing(real):
        def listing(path=".", *args, **kwargs):
            if os.path.abspath(os.fspath(path)) == target:
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        return listing

    monkeypatch.setattr(os, "listdir", refusing(os.listdir))
    monkeypatch.setattr(os, "scandir", refusing(os.scandir))


@pytest.mark.parametrize(
    ("gt", "preds", "flags", "refused"),
    [
        ("voc/annotations", "voc/predictions", (), "voc/annotations"),
        ("voc/annotations", "voc/predictions", ("--gt-format", "voc-xml"), "voc/annotations"),
        ("coco/gt.json", "voc/predictions", (), "voc/predictions"),
        ("labelme/gt", "labelme/preds", ("--gt-format", "labelme"), "labelme/gt"),
        ("yolo/data.yaml", "yolo/predictions/labels", ("--pred-format", "yolo"),
         "yolo/predictions/labels"),
        ("openimages/gt.csv", "openimages/preds.csv", ("--images", "images"), "images"),
    ],
)  # fmt: skip
def test_an_unreadable_folder_is_a_located_error(monkeypatch, gt, preds, flags, refused):
    flags = tuple(str(SAMPLE / f) if f == "images" else f for f in flags)
    _refuse_listing(monkeypatch, SAMPLE / refused)
    r = run(SAMPLE / gt, SAMPLE / preds, *flags, expect=1)
    assert f"{SAMPLE / refused}: cannot list this folder: Permission denied" in r.err
    assert "Traceback" not in r.err


@pytest.mark.skipif(IS_ROOT, reason="root reads every folder")
def test_a_folder_without_read_permission_is_a_located_error(tmp_path):
    gt = tmp_path / "annotations"
    write(gt / "a.txt", "cat 10 10 20 20\n")
    write(tmp_path / "p/a.txt", "cat 0.9 10 10 20 20\n")
    gt.chmod(0)
    try:
        r = run(gt, tmp_path / "p", expect=1)
    finally:
        gt.chmod(0o755)
    assert f"{gt}: cannot list this folder" in r.err


# --------------------------------------------------------------------------- segm: box areas

CASE07 = ACCEPTANCE / "cases" / "07_fce_shapes_polygons"


@pytest.mark.skipif(not CASE07.exists(), reason="acceptance cases not present")
def test_segm_with_boxed_results_says_box_areas_decide_the_area_ranges(tmp_path):
    gt, dt = CASE07 / "gt_dataset.json", CASE07 / "dt_dataset.json"
    doc, err = report(gt, dt, "--iou-type", "segm")
    assert doc["summary"]["APm"] == pytest.approx(0.7921, abs=5e-5)  # pycocotools' number
    (note,) = [w for w in doc["warnings"] if "first result has a 'bbox'" in w]
    assert "the area of 9 of 9 results is their box's w*h" in note
    assert "write the results without 'bbox'" in note and note not in doc["doubts"]
    # What the note says to do gives the mask areas (and no such note).
    records = json.loads(dt.read_text())
    unboxed = write(tmp_path / "dt.json",
                    json.dumps([{k: v for k, v in r.items() if k not in ("bbox", "area")} for r in records]))  # fmt: skip
    doc, _ = report(gt, unboxed, "--iou-type", "segm")
    assert doc["summary"]["APm"] == pytest.approx(0.7368, abs=5e-5)
    assert not [w for w in doc["warnings"] if "first result has a 'bbox'" in w]


def test_segm_box_area_note_on_a_small_scene(tmp_path):
    """One 40 x 40 square; the result's box is 40 x 40 but its mask a 20 x 40 half."""
    square = [[10, 10, 50, 10, 50, 50, 10, 50]]
    gt = {"images": [{"id": 1, "width": 64, "height": 64}], "categories": [{"id": 1, "name": "a"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "iscrowd": 0, "area": 1600,
                           "bbox": [10, 10, 40, 40], "segmentation": square}]}  # fmt: skip
    res = [{"image_id": 1, "category_id": 1, "score": 0.9, "bbox": [10, 10, 40, 40],
            "segmentation": [[10, 10, 30, 10, 30, 50, 10, 50]]}]  # fmt: skip
    g, p = write(tmp_path / "gt.json", json.dumps(gt)), write(tmp_path / "r.json", json.dumps(res))
    doc, _ = report(g, p, "--iou-type", "segm")
    assert any("the area of 1 of 1 results is their box's w*h" in w for w in doc["warnings"])
    doc, _ = report(g, p)  # boxes only: no masks read, nothing to say
    assert not any("first result has a 'bbox'" in w for w in doc["warnings"])


# --------------------------------------------------------------------------- YOLO: past the edge


def test_a_yolo_box_past_the_edge_is_read_as_written_with_a_note(tmp_path):
    """``1 0.95 0.5 0.2 0.3`` on a 100 x 100 image: x 85..105, y 35..65 (Ultralytics accepts it)."""
    image(tmp_path / "images/val/a.png", 100, 100)
    write(tmp_path / "labels/val/a.txt", "1 0.95 0.5 0.2 0.3\n0 0.2 0.2 0.1 0.1\n")
    write(tmp_path / "data.yaml", "val: images/val\nnames: [cat, dog]\n")
    preds = write(tmp_path / "p.json", json.dumps([
        {"image_id": "a", "category_id": 1, "bbox": [85, 35, 15, 30], "score": 0.9},
        {"image_id": "a", "category_id": 0, "bbox": [15, 15, 10, 10], "score": 0.8}]))  # fmt: skip
    doc, _ = report(tmp_path / "data.yaml", preds, "--strict")
    # The clipped prediction overlaps the box as written by IoU 15/20 = 0.75: matched at
    # 6 of the 10 thresholds (AP 0.6), where a clipped ground truth would give 1.
    assert doc["summary"]["AP"] == pytest.approx((0.6 + 1.0) / 2)
    (note,) = [w for w in doc["warnings"] if "past the image's edge" in w]
    assert (
        "1 box(es) run past" in note
        and "a.txt:1" in note
        and "x1 y1 x2 y2 = 0.85 0.35 1.05 0.65" in note
    )
    assert doc["doubts"] == []


def test_a_yolo_box_whose_numbers_leave_the_unit_square_is_still_refused(tmp_path):
    image(tmp_path / "images/val/a.png", 100, 100)
    write(tmp_path / "labels/val/a.txt", "0 1.3 0.5 0.2 0.3\n")
    write(tmp_path / "data.yaml", "val: images/val\nnames: [cat]\n")
    preds = write(tmp_path / "p.json", "[]")
    r = run(tmp_path / "data.yaml", preds, expect=1)
    assert "a.txt:1: box coordinates must be fractions of the image size" in r.err


# --------------------------------------------------------------------------- Open Images sizes

AREA_KEYS = ("APs", "APm", "APl", "ARs", "ARm", "ARl")


def _open_images_copy(tmp_path: Path, with_images: bool) -> Path:
    import shutil

    folder = tmp_path / "oi"
    folder.mkdir()
    for name in ("gt.csv", "preds.csv"):
        shutil.copy(SAMPLE / "openimages" / name, folder / name)
    if with_images:
        shutil.copytree(SAMPLE / "images", folder / "images")
    return folder


def test_open_images_without_sizes_leaves_the_area_ranges_undefined():
    gt, preds = SAMPLE / "openimages/gt.csv", SAMPLE / "openimages/preds.csv"
    doc, _ = report(gt, preds)
    assert [doc["summary"][k] for k in AREA_KEYS] == [None] * 6
    assert doc["summary"]["AP"] is not None and doc["summary"]["AR100"] is not None
    (note,) = [w for w in doc["warnings"] if "unknown image sizes" in w]
    assert "APs, APm, APl, ARs, ARm and ARl are left undefined (null)" in note
    assert "images/ folder beside the CSV" in note and note not in doc["doubts"]
    text = run(gt, preds).out
    for key in AREA_KEYS:
        (line,) = [ln for ln in text.splitlines() if ln.strip().startswith(key + " ")]
        assert line.split()[1] == "n/a", line


def test_open_images_sizes_from_images_dir_or_an_images_folder_beside_the_csv(tmp_path):
    given, _ = report(SAMPLE / "openimages/gt.csv", SAMPLE / "openimages/preds.csv",
                      "--images", SAMPLE / "images")  # fmt: skip
    assert None not in [given["summary"][k] for k in AREA_KEYS]
    assert f"image sizes from {SAMPLE / 'images'} (--images)" in "\n".join(given["warnings"])
    folder = _open_images_copy(tmp_path, with_images=True)
    beside, _ = report(folder / "gt.csv", folder / "preds.csv")
    assert beside["summary"] == given["summary"]
    (note,) = [w for w in beside["warnings"] if "image sizes from" in w]
    assert note.endswith(f"image sizes from {folder / 'images'} (the images/ folder beside the ground truth)")  # fmt: skip
    assert not [w for w in beside["warnings"] if "unknown image sizes" in w]


def test_an_images_folder_beside_the_csv_without_its_images_is_not_used(tmp_path):
    folder = _open_images_copy(tmp_path, with_images=False)
    image(folder / "images/other.png", 40, 30)
    doc, _ = report(folder / "gt.csv", folder / "preds.csv")
    assert [doc["summary"][k] for k in AREA_KEYS] == [None] * 6
    assert any("holds none of the ground truth's images: not used" in w for w in doc["warnings"])


def test_images_dir_without_the_ground_truths_images_leaves_the_area_ranges_undefined():
    doc, _ = report(SAMPLE / "openimages/gt.csv", SAMPLE / "openimages/preds.csv",
                    "--images", SAMPLE / "voc")  # fmt: skip
    assert [doc["summary"][k] for k in AREA_KEYS] == [None] * 6
    assert any("none of its 11 images are in" in d for d in doc["doubts"])


# --------------------------------------------------------------------------- fractions read as pixels

CASE02 = ACCEPTANCE / "cases" / "02_rdm_toyexample_voc_xml"
needs_case02 = pytest.mark.skipif(not CASE02.exists(), reason="acceptance cases not present")


def _as_csv(folder: Path, out: Path, header: str) -> Path:
    """The per-image text files of ``folder`` (``class score a b c d``) as one CSV."""
    rows = [f"{f.stem},{','.join(line.split())}" for f in sorted(folder.glob("*.txt"))
            for line in f.read_text().splitlines() if line.strip()]  # fmt: skip
    return write(out, header + "\n" + "\n".join(rows) + "\n")


@needs_case02
@pytest.mark.parametrize(
    ("dets", "flags"),
    [("dets_classname_rel_xcycwh", ()), ("dets_classid_rel_xcycwh", ("--names", "voc.names"))],
)
def test_fractions_with_an_outlier_read_as_pixels_are_a_doubt(dets, flags):
    """One ``h`` of 1.0157 defeats "every number in [0, 1]"; most numbers and the scale do not."""
    flags = tuple(str(CASE02 / f) if f.endswith(".names") else f for f in flags)
    gt, preds = CASE02 / "gts_vocpascal_format", CASE02 / dets
    doc, _ = report(gt, preds, "-p", "voc07", *flags)
    assert doc["summary"]["mAP"] == 0.0
    (d,) = doc["doubts"]
    assert "47 of 48 prediction box numbers lie in [0, 1]" in d and "2008_006599.txt:1" in d
    assert "they look like fractions of the image size" in d and d.endswith(
        "pass --pred-normalized"
    )
    r = run(gt, preds, "-p", "voc07", *flags, "--strict", expect=1)
    assert "--strict: 1 doubt(s)" in r.err
    fixed, _ = report(gt, preds, "-p", "voc07", *flags, "--pred-normalized", "--strict")
    assert fixed["summary"]["mAP"] == pytest.approx(0.8864, abs=5e-5) and fixed["doubts"] == []


@needs_case02
@pytest.mark.parametrize(
    ("header", "fix"),
    [("image,label,score,cx,cy,w,h", ("--pred-normalized",)),
     ("image,label,score,x,y,w,h", ("--pred-normalized", "--pred-box-format", "cxcywh"))],
)  # fmt: skip
def test_fractions_with_an_outlier_in_a_csv_are_a_doubt_whose_fix_works(tmp_path, header, fix):
    gt = CASE02 / "gts_vocpascal_format"
    preds = _as_csv(CASE02 / "dets_classname_rel_xcycwh", tmp_path / "dets.csv", header)
    doc, _ = report(gt, preds, "-p", "voc07")
    (d,) = doc["doubts"]
    assert d.endswith("pass " + " ".join(fix)), d  # the flags that read the file: checked
    run(gt, preds, "-p", "voc07", "--strict", expect=1)
    fixed, _ = report(gt, preds, "-p", "voc07", *fix, "--strict")
    assert fixed["summary"]["mAP"] == pytest.approx(0.8864, abs=5e-5) and fixed["doubts"] == []


def _fraction_scene(tmp_path: Path) -> tuple[Path, Path]:
    """Ground truth in pixels (CSV with image sizes 640 x 480), predictions as fractions
    in ``cx cy w h`` with one box whose height passes 1 (an unclipped exporter)."""
    gt_rows, pred_rows = [], []
    rng = __import__("numpy").random.default_rng(3)
    for i in range(8):
        x, y = rng.uniform(20, 300, 2)
        w, h = rng.uniform(80, 300), rng.uniform(60, 200)
        gt_rows.append(f"im{i},640,480,cat,{x:.2f},{y:.2f},{x + w:.2f},{y + h:.2f}")
        cx, cy, fw, fh = (x + w / 2) / 640, (y + h / 2) / 480, w / 640, h / 480
        if i == 7:
            fh = 1.02  # runs past the image: a false positive, ranked last
        pred_rows.append(f"im{i},cat,0.{9 - i},{cx:.6f},{cy:.6f},{fw:.6f},{fh:.6f}")
    gt = write(tmp_path / "gt.csv", "image,img_width,img_height,label,x1,y1,x2,y2\n" + "\n".join(gt_rows) + "\n")  # fmt: skip
    preds = write(tmp_path / "p.csv", "image,label,score,cx,cy,w,h\n" + "\n".join(pred_rows) + "\n")
    return gt, preds


def test_fractions_with_an_outlier_are_a_doubt_on_a_small_scene(tmp_path):
    gt, preds = _fraction_scene(tmp_path)
    doc, _ = report(gt, preds)
    (d,) = doc["doubts"]
    assert "31 of 32 prediction box numbers lie in [0, 1]" in d and "p.csv:9" in d
    assert d.endswith("pass --pred-normalized")
    fixed = report(gt, preds, "--pred-normalized")[0]
    assert fixed["summary"]["AP50"] == pytest.approx(88 / 101)  # recall 7/8 at precision 1


def test_pixel_files_raise_no_fraction_doubt(tmp_path):
    """Small pixel boxes near the corner and a few numbers in [0, 1] are still pixels."""
    write(tmp_path / "gt.csv", "image,img_width,img_height,label,x,y,w,h\n"
          "a,640,480,cat,0,0,3,2\nb,640,480,cat,0.5,0.5,1.5,1.5\nc,640,480,cat,100,100,200,150\n")  # fmt: skip
    write(tmp_path / "p.csv", "image,label,score,x,y,w,h\n"
          "a,cat,0.9,0,0,3,2\nb,cat,0.8,0.5,0.5,1.5,1.5\nc,cat,0.7,100,100,200,150\n")  # fmt: skip
    doc, _ = report(tmp_path / "gt.csv", tmp_path / "p.csv", "--strict")
    assert doc["doubts"] == [] and doc["summary"]["AP"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- Ultralytics predict folders


def test_sample_predictions_labels_beside_the_data_yaml_need_no_flag():
    data, labels = SAMPLE / "yolo/data.yaml", SAMPLE / "yolo/predictions/labels"
    flagged, _ = report(data, labels, "--pred-format", "yolo")
    doc, err = report(data, labels, "--strict")
    assert doc["summary"] == flagged["summary"] and doc["inputs"]["predictions"]["format"] == "yolo"
    assert "read as Ultralytics predictions ('class cx cy w h conf' or 'class x1 y1 ... conf', fractions, confidence last), beside a YOLO dataset" in err  # fmt: skip
    run_folder, err = report(data, SAMPLE / "yolo/predictions", "--strict")  # labels/ inside
    assert (
        run_folder["summary"] == flagged["summary"] and "the labels/ folder of a predict run" in err
    )


def _dataset(tmp_path: Path) -> Path:
    """A two-image YOLO dataset of 200 x 100 images, one object each."""
    for stem, line in (("a", "0 0.25 0.5 0.2 0.4"), ("b", "1 0.5 0.5 0.5 0.5")):
        image(tmp_path / f"data/images/val/{stem}.png", 200, 100)
        write(tmp_path / f"data/labels/val/{stem}.txt", line + "\n")
    return write(tmp_path / "data/data.yaml", "val: images/val\nnames: [cat, dog]\n")


def test_padilla_pixel_predictions_beside_a_yolo_dataset_stay_the_txt_format(tmp_path):
    """``class score x y w h`` in pixels: 6 numbers a line, but not fractions: not predict output."""
    data = _dataset(tmp_path)
    write(tmp_path / "p/a.txt", "0 0.9 30 30 40 40\n")
    write(tmp_path / "p/b.txt", "1 0.8 50 25 100 50\n")
    doc, _ = report(data, tmp_path / "p", "--strict")
    assert doc["inputs"]["predictions"]["format"] == "txt"
    assert doc["summary"]["AP"] == pytest.approx(1.0)
    assert not any("Ultralytics" in w for w in doc["warnings"])


def test_the_hint_for_fraction_lines_names_the_reading_their_columns_support(tmp_path):
    """Against a ground truth that is no YOLO dataset, a folder of 6 fractions a line stays ``txt``
    and is refused; the hint names ``--pred-format yolo`` only when the confidence is last."""
    gt = write(tmp_path / "gt.csv", "image,img_width,img_height,label,x1,y1,x2,y2\n"
               "a,200,100,cat,30,30,70,70\nb,200,100,dog,50,25,150,75\n")  # fmt: skip
    write(tmp_path / "ultra/a.txt", "cat 0.25 0.5 0.2 0.4 0.9\ncat 0.9 0.1 0.05 0.1 0.3\n")
    write(tmp_path / "ultra/b.txt", "dog 0.5 0.5 0.5 0.5 0.8\n")
    r = run(gt, tmp_path / "ultra", expect=1)
    assert "coordinates look normalized" in r.err and r.err.rstrip().endswith(
        "pass --pred-format yolo"
    )
    names = write(tmp_path / "names.txt", "cat\ndog\n")
    write(tmp_path / "ultra_ids/a.txt", "0 0.25 0.5 0.2 0.4 0.9\n0 0.9 0.1 0.05 0.1 0.3\n")
    write(tmp_path / "ultra_ids/b.txt", "1 0.5 0.5 0.5 0.5 0.8\n")
    fixed, _ = report(
        gt, tmp_path / "ultra_ids", "--pred-format", "yolo", "--names", names, "--strict"
    )
    assert fixed["summary"]["AP50"] == pytest.approx(1.0)  # the hint reads the file
    write(tmp_path / "scored/a.txt", "cat 0.9 0.25 0.5 0.2 0.4\ncat 0.3 0.9 0.1 0.05 0.1\n")
    write(tmp_path / "scored/b.txt", "dog 0.8 0.5 0.5 0.5 0.5\n")
    r = run(gt, tmp_path / "scored", expect=1)
    assert "the 2nd number is the score ('class score cx cy w h'): pass --pred-normalized" in r.err
    fixed, _ = report(gt, tmp_path / "scored", "--pred-normalized", "--strict")
    assert fixed["summary"]["AP50"] == pytest.approx(1.0)
