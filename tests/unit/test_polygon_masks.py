"""Polygons of YOLO-seg, LabelMe and CVAT as masks (CONVENTIONS "YOLO-seg input")."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval import evaluate, load
from iou_eval.data.reconcile import align
from iou_eval.errors import InputError, UsageError
from iou_eval.geometry.segm import PendingPolygons, scaled_polygons, with_masks

from .formats_helpers import image, write

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
sys.path.insert(0, str(SAMPLE))
import make_sample  # noqa: E402

STATS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")
SQUARE = "0.1 0.1 0.5 0.1 0.5 0.5 0.1 0.5"  # a square polygon, fractions of a 100 x 50 image


def dataset(root: Path, **labels: str) -> Path:
    """A YOLO dataset: ``images/val/<stem>.png`` (100 x 50) and ``labels/val/<stem>.txt``."""
    for stem, text in labels.items():
        image(root / f"images/val/{stem}.png", 100, 50)
        write(root / f"labels/val/{stem}.txt", text)
    write(root / "data.yaml", "val: images/val\nnames: [a, b]\n")
    return root / "data.yaml"


def test_a_file_mixing_box_and_polygon_rows_is_refused_for_masks(tmp_path):
    data = dataset(tmp_path, x=f"0 {SQUARE}\n1 0.5 0.5 0.2 0.2\n")
    with pytest.raises(InputError) as e:
        load(str(data), "gt", masks=True)
    assert e.value.format().startswith(
        f"{tmp_path / 'labels/val/x.txt'}:2: this file mixes box rows and polygon rows"
    )
    ds = load(str(data), "gt")  # boxes: the box row is a box
    assert len(ds) == 2 and np.isnan(ds.area).sum() == 0


def test_a_box_only_file_beside_polygon_files_is_refused_for_masks(tmp_path):
    data = dataset(tmp_path, x=f"0 {SQUARE}\n", y="1 0.5 0.5 0.2 0.2\n")
    with pytest.raises(InputError, match="y.txt:1: a box row in a dataset of polygons"):
        load(str(data), "gt", masks=True)


def test_boxes_only_give_no_masks(tmp_path):
    data = dataset(tmp_path / "d", x="1 0.5 0.5 0.2 0.2\n")
    preds = predictions(tmp_path / "run", "1 0.5 0.5 0.2 0.2 0.9\n")
    with pytest.raises(UsageError, match="gives no masks"):
        evaluate(str(data), str(preds), iou_type="segm", pred_format="yolo")


def test_ground_truth_area_is_the_mask_area_box_rows_keep_w_times_h(tmp_path):
    """A triangle (10.3, 5.2) (49.7, 5.2) (10.3, 24.6) in pixels; a box 20 x 10 at the centre."""
    data = dataset(tmp_path, x="0 0.103 0.104 0.497 0.104 0.103 0.492\n1 0.5 0.5 0.2 0.2\n")
    ds = load(str(data), "gt")
    poly = [0.103 * 100, 0.104 * 50, 0.497 * 100, 0.104 * 50, 0.103 * 100, 0.492 * 50]
    want = float(mask_utils.area(mask_utils.merge(mask_utils.frPyObjects([poly], 50, 100))))
    assert ds.area.tolist() == [want, 20.0 * 10.0]
    # Neither the bounds' w * h nor the polygon's own area (about 382.18).
    assert want == 395.0 and ds.bbox_area[0] == pytest.approx(39.4 * 19.4)


def test_one_point_contours_have_no_pixels_with_a_warning(tmp_path):
    data = dataset(tmp_path, x=f"0 {SQUARE}\n1 0.3 0.3\n")
    ds = load(str(data), "gt", masks=True)
    assert ds.area.tolist()[1] == 0.0
    assert any(
        "1 polygon(s) of 1 or 2 points have no pixels" in w and "x.txt:2" in w for w in ds.warnings
    )


def predictions(root: Path, text: str) -> Path:
    write(root / "labels/x.txt", text)
    image(root / "x.png", 100, 50)
    return root / "labels"


def test_predicted_polygons_take_their_area_from_the_mask_in_segm_and_the_box_in_bbox(tmp_path):
    data = dataset(tmp_path / "d", x=f"0 {SQUARE}\n")
    tri = "0 0.1 0.1 0.5 0.1 0.1 0.5 0.8"
    preds = predictions(tmp_path / "run", tri + "\n")
    gt = load(str(data), "gt", masks=True)
    pred = load(str(preds), "pred", "yolo", masks=True)
    a = with_masks(align(gt, pred))
    assert a.pred.area.tolist() == a.pred.masks.area.tolist() and a.pred.area[0] < 0.6 * 40 * 20
    plain = load(str(preds), "pred", "yolo")
    assert plain.area.tolist() == [40.0 * 20.0]  # bbox: w * h of the polygon's bounds
    r = evaluate(str(data), str(preds), pred_format="yolo", iou_type="bbox,segm")
    assert [p.protocol.iou_type for p in r.results] == ["bbox", "segm"]
    assert r.results[0].summary["AP50"] == pytest.approx(1.0)


def test_predicted_box_rows_become_rectangles_for_masks(tmp_path):
    data = dataset(tmp_path / "d", x=f"0 {SQUARE}\n")
    preds = predictions(tmp_path / "run", "0 0.3 0.3 0.4 0.4 0.9\n")
    r = evaluate(str(data), str(preds), pred_format="yolo", iou_type="segm")
    assert r.summary["AP50"] == pytest.approx(1.0)
    assert any("1 prediction(s) are boxes, not polygons" in w for w in r.warnings)


def test_pending_polygons_scale_fractions_and_locate_errors():
    polys = np.empty(2, dtype=object)
    polys[0] = np.array([0.1, 0.2, 0.5, 0.2, 0.5, 0.6])
    polys[1] = np.array([0.0, 0.0, 1.0, 1.0])
    out = scaled_polygons(polys, np.array([100.0, 10.0]), np.array([50.0, 20.0]))
    np.testing.assert_array_equal(out[0], [10, 10, 50, 10, 50, 30])
    np.testing.assert_array_equal(out[1], [0, 0, 10, 20])
    pending = PendingPolygons(polys, True, ("a.txt", "b.txt"), np.array([0, 1], dtype=np.int32),
                              np.array([3, 7]))  # fmt: skip
    column, warnings = pending.encode(np.array([50.0, 20.0]), np.array([100.0, 10.0]))
    assert column.area[1] == 0 and warnings == [
        "1 polygon(s) of 1 or 2 points have no pixels (first: b.txt:7)"
    ]
    with pytest.raises(InputError) as e:
        pending.encode(np.array([50.0, np.nan]), np.array([100.0, 10.0]))
    assert e.value.format().startswith("b.txt:7: the image has no size")


# --------------------------------------------------------------------------- LabelMe and CVAT


def coco_stats(gt: dict, results: list[dict], tmp_path: Path) -> list[float]:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(tmp_path / "gt.json"))
        ev = COCOeval(cg, cg.loadRes(str(tmp_path / "res.json")), "segm")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(v) for v in ev.stats]


def outline(x1, y1, x2, y2, polygon: bool) -> list[float]:
    pts = (
        make_sample._corners(x1, y1, x2, y2)
        if polygon
        else [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
    )
    return [float(v) for p in pts for v in p]


def segm_version(crowd: bool) -> tuple[dict, list[dict]]:
    """The scene with every object a mask of its outline (polygons on street_04, rectangles else)."""
    stems = list(make_sample.IMAGES)
    images = [
        {"id": i + 1, "width": w, "height": h}
        for i, (w, h) in enumerate(make_sample.IMAGES.values())
    ]
    anns, res = [], []
    for s, cls, x1, y1, x2, y2, is_crowd, _ in make_sample.GROUND_TRUTH:
        w, h = make_sample.IMAGES[s]
        poly = outline(x1, y1, x2, y2, s in make_sample.POLYGON_IMAGES)
        area = float(mask_utils.area(mask_utils.merge(mask_utils.frPyObjects([poly], h, w))))
        anns.append({"id": len(anns) + 1, "image_id": stems.index(s) + 1,
                     "category_id": make_sample.CATEGORIES.index(cls) + 1, "segmentation": [poly],
                     "area": area, "bbox": [x1, y1, x2 - x1, y2 - y1],
                     "iscrowd": int(crowd and is_crowd)})  # fmt: skip
    for s, cls, x1, y1, x2, y2, score in make_sample.PREDICTIONS:
        w, h = make_sample.IMAGES[s]
        m = mask_utils.merge(mask_utils.frPyObjects([outline(x1, y1, x2, y2, False)], h, w))
        m["counts"] = m["counts"].decode()
        res.append({"image_id": stems.index(s) + 1, "category_id": make_sample.CATEGORIES.index(cls) + 1,
                    "segmentation": m, "score": score})  # fmt: skip
    cats = [{"id": i + 1, "name": n} for i, n in enumerate(make_sample.CATEGORIES)]
    return {"images": images, "annotations": anns, "categories": cats}, res


@pytest.mark.parametrize(
    ("gt", "pred", "fmt", "crowd"),
    [("labelme/gt", "labelme/preds", "labelme", False), ("cvat/gt.xml", "cvat/preds.xml", "cvat-xml", True)],
)  # fmt: skip
def test_labelme_and_cvat_polygons_score_as_pycocotools_segm(gt, pred, fmt, crowd, tmp_path):
    ours = evaluate(
        str(SAMPLE / gt), str(SAMPLE / pred), gt_format=fmt, pred_format=fmt, iou_type="segm"
    )
    got = [-1.0 if v is None else v for v in ours.summary.values()]
    want = coco_stats(*segm_version(crowd), tmp_path)
    assert got == want, "\n".join(
        f"{s:6} {a!r:22} {b!r}" for s, a, b in zip(STATS, got, want, strict=True)
    )
