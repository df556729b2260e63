"""sample_data/yolo-seg scores what pycocotools gives on the COCO version of the same polygons.

The reference COCO file is what a converter writes from the label files
(CONVENTIONS, "YOLO-seg input"): each line one polygon ``x * width, y *
height`` in pixels, ``area`` the pycocotools mask area of that polygon at
the image's H x W, ``bbox`` its bounds.  Predictions: ``segm`` results
carry the polygon's RLE at the image size and no ``bbox`` (pycocotools'
segm branch of ``loadRes``: area and box from the mask); ``bbox`` results
carry the polygon's bounds.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval.api import evaluate, load

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
SEG = SAMPLE / "yolo-seg"
sys.path.insert(0, str(SAMPLE))
import make_sample  # noqa: E402
import make_yolo_seg  # noqa: E402

STATS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")


def pixels(tokens: list[str], w: int, h: int) -> list[float]:
    v = [float(t) for t in tokens]
    return [x * (w if i % 2 == 0 else h) for i, x in enumerate(v)]


def bounds(poly: list[float]) -> list[float]:
    xs, ys = poly[0::2], poly[1::2]
    return [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]


def rle(poly: list[float], w: int, h: int) -> dict:
    return mask_utils.merge(mask_utils.frPyObjects([poly], h, w))


def coco_version() -> tuple[dict, list[dict], list[dict]]:
    """Ground truth, segm results and bbox results built from the sample's files."""
    images, anns, segm, bbox = [], [], [], []
    for i, (stem, (w, h)) in enumerate(make_sample.IMAGES.items()):
        images.append({"id": i + 1, "file_name": f"{stem}.png", "width": w, "height": h})
        for line in (SEG / "labels/val" / f"{stem}.txt").read_text().splitlines():
            c, *coords = line.split()
            poly = pixels(coords, w, h)
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": int(c) + 1,
                         "segmentation": [poly], "area": float(mask_utils.area(rle(poly, w, h))),
                         "bbox": bounds(poly), "iscrowd": 0})  # fmt: skip
        for line in (SEG / "predictions/labels" / f"{stem}.txt").read_text().splitlines():
            c, *coords, conf = line.split()
            poly = pixels(coords, w, h)
            mask = rle(poly, w, h)
            mask["counts"] = mask["counts"].decode()
            segm.append({"image_id": i + 1, "category_id": int(c) + 1, "segmentation": mask,
                         "score": float(conf)})  # fmt: skip
            bbox.append({"image_id": i + 1, "category_id": int(c) + 1, "bbox": bounds(poly),
                         "score": float(conf)})  # fmt: skip
    categories = [{"id": i + 1, "name": n} for i, n in enumerate(make_sample.CATEGORIES)]
    return {"images": images, "annotations": anns, "categories": categories}, segm, bbox


def pycocotools_stats(gt: dict, results: list[dict], iou_type: str, tmp_path: Path) -> list[float]:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(tmp_path / "gt.json"))
        ev = COCOeval(cg, cg.loadRes(str(tmp_path / "res.json")), iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(v) for v in ev.stats]


def ours(iou_type: str) -> list[float]:
    r = evaluate(str(SEG / "data.yaml"), str(SEG / "predictions/labels"), pred_format="yolo",
                 iou_type=iou_type, strict=True)  # fmt: skip
    return [-1.0 if v is None else v for v in r.results[0].summary.values()]


def same(a: list[float], b: list[float]) -> None:
    assert a == b, "\n".join(
        f"{s:6} ours {x!r:22} pycocotools {y!r}" for s, x, y in zip(STATS, a, b, strict=True)
    )


@pytest.mark.parametrize("iou_type", ["segm", "bbox"])
def test_yolo_seg_sample_scores_what_pycocotools_gives(iou_type, tmp_path):
    gt, segm, bbox = coco_version()
    reference = pycocotools_stats(gt, segm if iou_type == "segm" else bbox, iou_type, tmp_path)
    same(ours(iou_type), reference)


def test_ground_truth_area_is_the_mask_area_for_both_iou_types():
    """One area, as COCO's single field: the mask's, not w*h and not the polygon's own area."""
    gt, _, _ = coco_version()
    want = np.array([a["area"] for a in gt["annotations"]])
    for masks in (False, True):
        ds = load(str(SEG / "data.yaml"), "gt", masks=masks)
        order = np.lexsort((ds.origin, ds.origin_file))  # file order, as the reference reads them
        np.testing.assert_array_equal(ds.area[order], want)
        assert not np.array_equal(ds.area, ds.bbox_area)


def test_regenerating_the_yolo_seg_sample_changes_nothing(tmp_path):
    make_yolo_seg.write_yolo_seg(str(tmp_path))
    for f in SEG.rglob("*"):
        if f.is_file() and f.suffix != ".png":
            assert (tmp_path / f.relative_to(SEG)).read_bytes() == f.read_bytes(), f


def test_one_run_of_both_iou_types_gives_each_alone():
    both = evaluate(str(SEG / "data.yaml"), str(SEG / "predictions/labels"), pred_format="yolo",
                    iou_type="bbox,segm")  # fmt: skip
    assert [r.summary for r in both.results] == [
        evaluate(str(SEG / "data.yaml"), str(SEG / "predictions/labels"), pred_format="yolo",
                 iou_type=t).summary
        for t in ("bbox", "segm")
    ]  # fmt: skip
