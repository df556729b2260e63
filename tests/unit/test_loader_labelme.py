"""LabelMe JSON (``iou_eval.io.loaders.labelme``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.labelme import load_labelme, looks_like_labelme, read_labelme

from .formats_helpers import register, write


def shape(label, points, kind="rectangle", **extra):
    return {"label": label, "points": points, "group_id": None, "description": "",
            "shape_type": kind, "flags": {}, **extra}  # fmt: skip


def labelme(folder: Path, stem: str, shapes: list, **kw) -> Path:
    doc = {"version": "5.5.0", "flags": {}, "shapes": shapes, "imagePath": f"..\\img\\{stem}.jpg",
           "imageData": None, "imageHeight": 50, "imageWidth": 100, **kw}  # fmt: skip
    return write(folder / f"{stem}.json", json.dumps(doc))


def test_rectangles_in_any_drawing_order_and_polygons_as_bounds(tmp_path):
    """A rectangle drawn bottom-right first; a triangle whose bounds are x 10..50, y 10..40."""
    labelme(tmp_path, "a", [shape("cat", [[60, 35], [40, 15]]),
                            shape("dog", [[10, 10], [50, 10], [30, 40]], "polygon")])  # fmt: skip
    labelme(tmp_path, "b", [])
    d, polygons = read_labelme(str(tmp_path), "gt", LoadOptions())
    assert d.format == "labelme" and d.images.ids == ("a", "b")  # b: no shapes, still an image
    assert d.images.file_names == ("a.jpg", "b.jpg")  # Windows separators in imagePath
    assert d.images.width.tolist() == [100, 100] and d.images.height.tolist() == [50, 50]
    np.testing.assert_array_equal(d.xyxy, [[40, 15, 60, 35], [10, 10, 50, 40]])
    assert polygons[0] is None
    np.testing.assert_array_equal(polygons[1], [10, 10, 50, 10, 30, 40])
    assert d.categories.names == ("cat", "dog")


def test_other_shape_types_are_skipped_with_a_warning_naming_file_and_index(tmp_path):
    f = labelme(tmp_path, "a", [shape("cat", [[1, 1], [5, 5]], "circle"),
                                shape("cat", [[1, 1], [5, 5]]),
                                shape("cat", [[1, 1]], "point")])  # fmt: skip
    d = load_labelme(str(tmp_path), "gt", LoadOptions())
    assert len(d) == 1 and d.origin.tolist() == [1]
    assert any("'circle' skipped" in w and f"{f}:shapes[0]" in w for w in d.warnings)
    assert any(f"{f}:shapes[2]" in w for w in d.warnings)


def test_difficult_shapes_are_ignored_flags(tmp_path):
    labelme(
        tmp_path,
        "a",
        [shape("cat", [[1, 1], [5, 5]], difficult=True), shape("cat", [[1, 1], [5, 5]])],
    )
    d = load_labelme(str(tmp_path), "gt", LoadOptions())
    assert d.ignore.tolist() == [True, False]


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({"score": 0.75}, 0.75),  # X-AnyLabeling
        ({"flags": {"score": 0.5}}, 0.5),
        ({"flags": {"confidence": "0.25"}}, 0.25),
        ({"description": "0.125"}, 0.125),
        ({"description": "conf=0.5"}, 0.5),
        ({"score": None, "description": "score: 0.3"}, 0.3),
    ],
)
def test_prediction_scores_where_labelme_tools_write_them(tmp_path, extra, expected):
    labelme(tmp_path, "a", [shape("cat", [[1, 1], [5, 5]], **extra)])
    assert load_labelme(str(tmp_path), "pred", LoadOptions()).score.tolist() == [expected]


@pytest.mark.parametrize(
    "shapes, message, where",
    [
        ([shape("cat", [[1, 1], [5, 5]])], "prediction has no score", "shapes[0]"),
        (
            [shape("cat", [[1, 1], [5, 5]], score=1), shape("", [[1, 1], [5, 5]], score=1)],
            "a shape needs a 'label'",
            "shapes[1]",
        ),  # fmt: skip
        ([shape("cat", [[1, 1]], score=1)], "a rectangle needs two corners", "shapes[0]"),
        ([shape("cat", [[1, "x"], [5, 5]], score=1)], "'points' must be a list", "shapes[0]"),
    ],
)
def test_errors_cite_file_and_shape(tmp_path, shapes, message, where):
    f = labelme(tmp_path, "a", shapes)
    with pytest.raises(InputError) as e:
        load_labelme(str(tmp_path), "pred", LoadOptions())
    assert str(e.value).startswith(f"{f}:{where}: {message}")


def test_malformed_json_is_located(tmp_path):
    f = write(tmp_path / "a.json", '{"shapes": [\n  {"label": "cat",,}\n]}')
    with pytest.raises(InputError) as e:
        load_labelme(str(tmp_path), "gt", LoadOptions())
    assert str(e.value).startswith(f"{f}:2:")


def test_gz_bom_crlf_files_and_detection(tmp_path):
    doc = json.dumps({"shapes": [shape("cat", [[1, 1], [5, 5]])], "imagePath": "a.jpg"}, indent=1)
    write(tmp_path / "a.json.gz", doc, gz=True)
    write(tmp_path / "b.json", doc, bom=True, crlf=True)
    d = load_labelme(str(tmp_path), "gt", LoadOptions())
    assert d.images.ids == ("a", "b") and len(d) == 2
    assert np.isnan(d.images.width).all()  # no size given: pixels need none
    assert looks_like_labelme(str(tmp_path)) and looks_like_labelme(str(tmp_path / "b.json"))
    write(tmp_path / "coco/x.json", '{"images": [], "annotations": [], "categories": []}')
    assert not looks_like_labelme(str(tmp_path / "coco"))


def test_evaluate_through_the_api(tmp_path, monkeypatch):
    """One hit (IoU 1) and one miss: AP50 = 1 * 1/2 recall -> AR100 0.5."""
    register(monkeypatch)
    labelme(
        tmp_path / "gt", "a", [shape("cat", [[0, 0], [10, 10]]), shape("cat", [[50, 20], [60, 40]])]
    )
    labelme(tmp_path / "pr", "a", [shape("cat", [[0, 0], [10, 10]], score=0.9)])
    r = evaluate(
        str(tmp_path / "gt"), str(tmp_path / "pr"), gt_format="labelme", pred_format="labelme"
    )
    assert r.results[0].summary["AR100"] == pytest.approx(0.5)
    assert r.inputs["ground_truth"]["format"] == "labelme"
