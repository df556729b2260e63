"""sample_data/ in YOLO, LabelMe, CVAT and Open Images scores what pycocotools gives.

The reference is pycocotools' ``COCOeval`` (bbox) on the COCO version of
the scene as each format holds it:

- CVAT holds the scene exactly (pixels, the crowd as ``is_crowd``): the
  reference is ``sample_data/coco`` itself.
- LabelMe has no crowd regions: the reference is the scene with the group
  of pedestrians as an ordinary person.
- YOLO and Open Images hold fractions of the image size.  The reference is
  the COCO file a converter writes from those numbers (YOLO: Ultralytics'
  ``(cx -/+ w/2) * W``; Open Images: fractions of a 1 x 1 image), built
  here from the files with the standard library.  Fractions cannot keep
  the scene's one exact tie (street_08's traffic light overlaps its
  prediction with IoU exactly 0.75 in pixels, 0.7499... in fractions), so
  AP75 and the AR figures differ from the pixel scene's; AP50 does not.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from pathlib import Path

import pytest

from iou_eval.api import evaluate
from iou_eval.data.class_shift import class_counts, detect_class_shift, remap_categories
from iou_eval.io.loaders import load

from ..unit.formats_helpers import register

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
sys.path.insert(0, str(SAMPLE))
import make_sample  # noqa: E402

STATS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")


def pycocotools_stats(gt: dict, preds: list[dict], tmp_path: Path) -> list[float]:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(tmp_path / "gt.json"))
        ev = COCOeval(cg, cg.loadRes(str(tmp_path / "preds.json")), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(v) for v in ev.stats]


def ours(gt, preds, fmt: str, **kw) -> list[float]:
    result = evaluate(gt, preds, gt_format=fmt, pred_format=fmt, **kw)
    summary = result.results[0].summary
    assert list(summary) == list(STATS)
    return [-1.0 if v is None else v for v in summary.values()]


def same(a: list[float], b: list[float]) -> None:
    assert a == b, "\n".join(
        f"{s:6} ours {x!r:22} pycocotools {y!r}" for s, x, y in zip(STATS, a, b, strict=True)
    )


@pytest.fixture(autouse=True)
def formats(monkeypatch):
    register(monkeypatch)


def test_cvat_sample_matches_pycocotools_on_the_coco_sample(tmp_path):
    gt, preds = make_sample.coco_dicts(crowd=True)
    same(ours(str(SAMPLE / "cvat/gt.xml"), str(SAMPLE / "cvat/preds.xml"), "cvat-xml"),
         pycocotools_stats(gt, preds, tmp_path))  # fmt: skip


def test_labelme_sample_matches_pycocotools_on_the_scene_without_crowd(tmp_path):
    gt, preds = make_sample.coco_dicts(crowd=False)
    same(ours(str(SAMPLE / "labelme/gt"), str(SAMPLE / "labelme/preds"), "labelme"),
         pycocotools_stats(gt, preds, tmp_path))  # fmt: skip


# --------------------------------------------------------------------------- YOLO


def yolo_box(tokens: list[str], w: float, h: float) -> list[float]:
    """Pixels of a label line as Ultralytics converts it: ``xywhn2xyxy`` or polygon bounds."""
    v = [float(t) for t in tokens]
    if len(v) == 4:
        cx, cy, bw, bh = v
        x1, y1, x2, y2 = (cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h
    else:
        x1, x2 = min(v[0::2]) * w, max(v[0::2]) * w
        y1, y2 = min(v[1::2]) * h, max(v[1::2]) * h
    return [x1, y1, x2 - x1, y2 - y1]


def yolo_ground_truth() -> dict:
    stems = list(make_sample.IMAGES)
    images = [{"id": i + 1, "file_name": s, "width": w, "height": h}
              for i, (s, (w, h)) in enumerate(make_sample.IMAGES.items())]  # fmt: skip
    annotations = []
    for i, stem in enumerate(stems):
        w, h = make_sample.IMAGES[stem]
        for line in (SAMPLE / "yolo/labels/val" / f"{stem}.txt").read_text().splitlines():
            c, *rest = line.split()
            box = yolo_box(rest, w, h)
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1,
                                "category_id": int(c) + 1, "bbox": box,
                                "area": box[2] * box[3], "iscrowd": 0})  # fmt: skip
    categories = [{"id": i + 1, "name": n} for i, n in enumerate(make_sample.CATEGORIES)]
    return {"images": images, "annotations": annotations, "categories": categories}


def test_yolo_sample_matches_pycocotools_on_the_numbers_it_holds(tmp_path):
    stems = list(make_sample.IMAGES)
    preds = []
    for i, stem in enumerate(stems):
        w, h = make_sample.IMAGES[stem]
        for line in (SAMPLE / "yolo/predictions/labels" / f"{stem}.txt").read_text().splitlines():
            c, *rest, conf = line.split()
            preds.append({"image_id": i + 1, "category_id": int(c) + 1,
                          "bbox": yolo_box(rest, w, h), "score": float(conf)})  # fmt: skip
    reference = pycocotools_stats(yolo_ground_truth(), preds, tmp_path)
    got = ours(str(SAMPLE / "yolo/data.yaml"), str(SAMPLE / "yolo/predictions/labels"), "yolo")
    same(got, reference)
    pixels = pycocotools_stats(*make_sample.coco_dicts(crowd=False), tmp_path)
    assert got[STATS.index("AP50")] == pixels[STATS.index("AP50")]


def test_yolo_predictions_json_needs_and_names_the_class_offset(tmp_path):
    gt = load(str(SAMPLE / "yolo/data.yaml"), "gt", "yolo")
    pred = load(str(SAMPLE / "yolo/predictions.json"), "pred", "yolo")
    shift = detect_class_shift(gt.categories.ids, *class_counts(pred))
    assert shift.flag == "--class-offset -1"
    assert "--class-offset -1" in (shift.warning(pred.source) or "")
    fixed = remap_categories(pred, offset=shift.offset)
    records = json.loads((SAMPLE / "yolo/predictions.json").read_text())
    index = {s: i + 1 for i, s in enumerate(make_sample.IMAGES)}
    preds = [{**r, "image_id": index[r["image_id"]]} for r in records]  # category ids: index + 1
    same(ours(gt, fixed, "yolo"), pycocotools_stats(yolo_ground_truth(), preds, tmp_path))


# --------------------------------------------------------------------------- Open Images


def test_openimages_sample_matches_pycocotools_on_unit_images(tmp_path):
    def rows(name: str) -> list[dict]:
        with open(SAMPLE / "openimages" / name, newline="") as fh:
            return list(csv.DictReader(fh))

    def box(r: dict) -> list[float]:
        x1, x2, y1, y2 = (float(r[k]) for k in ("XMin", "XMax", "YMin", "YMax"))
        return [x1, y1, x2 - x1, y2 - y1]

    stems = [r["ImageID"] for r in rows("images.csv")]
    descriptions = (SAMPLE / "openimages/class-descriptions.csv").read_text().splitlines()
    mids = [r[0] for r in csv.reader(descriptions)]
    image_id = {s: i + 1 for i, s in enumerate(stems)}
    cat_id = {m: i + 1 for i, m in enumerate(sorted(mids))}  # ids sort as the MIDs do
    annotations = [{"id": k + 1, "image_id": image_id[r["ImageID"]], "category_id": cat_id[r["LabelName"]],
                    "bbox": box(r), "area": box(r)[2] * box(r)[3], "iscrowd": int(r["IsGroupOf"])}
                   for k, r in enumerate(rows("gt.csv"))]  # fmt: skip
    gt = {"images": [{"id": i, "width": 1, "height": 1} for i in image_id.values()],
          "annotations": annotations, "categories": [{"id": i} for i in cat_id.values()]}  # fmt: skip
    preds = [{"image_id": image_id[r["ImageID"]], "category_id": cat_id[r["LabelName"]],
              "bbox": box(r), "score": float(r["Score"])} for r in rows("preds.csv")]  # fmt: skip
    got = ours(str(SAMPLE / "openimages"), str(SAMPLE / "openimages/preds.csv"), "openimages")
    # On 1 x 1 images every box is "small" to pycocotools (APs = AP): without
    # sizes the six area-range numbers are undefined instead, the others equal.
    unit = pycocotools_stats(gt, preds, tmp_path)
    area = [STATS.index(k) for k in ("APs", "APm", "APl", "ARs", "ARm", "ARl")]
    assert unit[STATS.index("APs")] == unit[STATS.index("AP")]
    same(got, [-1.0 if i in area else v for i, v in enumerate(unit)])
    pixels = pycocotools_stats(*make_sample.coco_dicts(crowd=True), tmp_path)
    assert got[STATS.index("AP50")] == pixels[STATS.index("AP50")]


def test_regenerating_the_samples_changes_nothing(tmp_path):
    """make_sample.py is deterministic: the committed files are what it writes."""
    for write, name in ((make_sample.write_yolo, "yolo"), (make_sample.write_labelme, "labelme"),
                        (make_sample.write_cvat, "cvat"), (make_sample.write_openimages, "openimages")):  # fmt: skip
        write(str(tmp_path / name))
        for f in (SAMPLE / name).rglob("*"):
            if f.is_file() and f.suffix not in (".jpg", ".png"):
                assert (
                    tmp_path / name / f.relative_to(SAMPLE / name)
                ).read_bytes() == f.read_bytes(), f
