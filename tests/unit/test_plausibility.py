"""Plausibility checks (``iou_eval.data.plausibility``): each doubt, and silence where there is none."""

from __future__ import annotations

import numpy as np
import pytest

import iou_eval.io.loaders.registry  # noqa: F401  (declares the formats' traits the checks ask)
from iou_eval.data.box_format import BoxFormat, to_xyxy
from iou_eval.data.dataset import CategoryTable, ImageTable, assemble
from iou_eval.data.doubts import Doubt, doubts_of, is_doubt, kind_of
from iou_eval.data.plausibility import (
    class_coverage_doubts,
    class_shift_doubt,
    fits,
    fraction_doubts,
    from_xyxy,
    layout_doubts,
    scale_doubts,
)


def dataset(boxes, fmt="xywh", fmt_name="txt", size=(100.0, 80.0), cats=(0,), names=None,
            category_idx=None, score=True, normalized=False):  # fmt: skip
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    n = len(boxes)
    return assemble(
        source="p",
        fmt=fmt_name,
        images=ImageTable.build(["a"], None, [size[0]], [size[1]]),
        categories=CategoryTable(tuple(cats), tuple(names or (str(c) for c in cats))),
        image_idx=np.zeros(n, dtype=np.int64),
        category_idx=np.zeros(n, dtype=np.int64)
        if category_idx is None
        else np.asarray(category_idx),
        boxes=boxes,
        box_format=BoxFormat(fmt),
        normalized=normalized,
        score=np.full(n, 0.5) if score else None,
    )


def test_from_xyxy_inverts_to_xyxy_for_every_layout():
    rng = np.random.default_rng(0)
    xyxy = (
        np.sort(rng.uniform(0, 50, (20, 4)).reshape(20, 2, 2), axis=1)
        .transpose(0, 2, 1)
        .reshape(20, 4)
    )
    for fmt in BoxFormat:
        np.testing.assert_allclose(to_xyxy(from_xyxy(xyxy, fmt), fmt)[0], xyxy, rtol=0, atol=1e-12)


def test_fits_tolerates_one_percent_or_one_pixel():
    w, h = np.array([100.0, 100.0, 100.0]), np.array([80.0, 80.0, 80.0])
    xyxy = np.array([[-1.0, 0, 101, 80.8], [-1.01, 0, 10, 10], [5, 5, 4, 10]])
    assert fits(xyxy, w, h).tolist() == [True, False, False]  # the last: x2 < x1


def test_xyxy_numbers_read_as_xywh_are_a_doubt_naming_the_flag():
    """Image 100 x 80; "10 10 90 70" read as x y w h ends at (100, 80): fits; "50 40 95 75" does not."""
    ds = dataset([[10, 10, 90, 70], [50, 40, 95, 75]], fmt="xywh")
    (d,) = layout_doubts(ds, "pred")
    assert is_doubt(d) and "1 of 2 prediction boxes fall outside their image read as xywh" in d
    assert "every one fits read as xyxy" in d and d.endswith("pass --pred-box-format xyxy")
    assert "p:" in d and ": 50 40 95 75" in d


def test_true_xywh_boxes_raise_no_layout_doubt():
    assert layout_doubts(dataset([[10, 10, 20, 20], [60, 50, 30, 20]], fmt="xywh"), "pred") == []
    # Overhanging a little is a detector's habit, not a layout problem.
    assert layout_doubts(dataset([[90, 70, 10.5, 10.5]], fmt="xywh"), "gt") == []


def test_layout_doubt_for_the_ground_truth_names_the_gt_flag():
    ds = dataset([[30, 20, 60, 50], [50, 40, 95, 75]], fmt="cxcywh", score=False)
    (d,) = layout_doubts(ds, "gt")
    assert "ground-truth boxes" in d and "--gt-box-format xyxy" in d


def test_a_detectors_overhang_under_the_right_layout_still_leaves_a_doubt():
    """Case 02's shape: most boxes out as xywh, one slightly out as xyxy (4 to 1 or better)."""
    boxes = [[10, 10, 90, 70], [50, 40, 95, 75], [60, 30, 99, 79], [40, 50, 98, 78], [5, 5, 99, 84]]
    (d,) = layout_doubts(dataset(boxes, fmt="xywh"), "pred")
    assert "4 of 5" in d and "only 1 do read as xyxy" in d


def test_coco_layout_doubt_names_no_flag():
    (d,) = layout_doubts(dataset([[10, 10, 90, 70], [50, 40, 95, 75]], fmt_name="coco"), "pred")
    assert "COCO's bbox is [x, y, width, height]" in d and "--pred-box-format" not in d


def test_formats_with_fixed_layouts_and_unknown_sizes_are_not_judged():
    assert layout_doubts(dataset([[50, 40, 95, 75]], fmt="xyxy", fmt_name="voc-xml"), "gt") == []
    assert layout_doubts(dataset([[50, 40, 95, 75]], size=(np.nan, np.nan)), "pred") == []


def test_boxes_outside_under_every_layout_doubt_the_sizes():
    (d,) = layout_doubts(dataset([[162, 96, 351, 341]], size=(1.0, 1.0), fmt="xyxy"), "pred")
    assert "under every box layout" in d and "--images DIR" in d


def test_fractions_read_as_pixels_are_a_doubt():
    (d,) = scale_doubts(dataset([[0.1, 0.2, 0.3, 0.4]], fmt_name="csv"), "pred", False, False)
    assert "lies in [0, 1]" in d and "--pred-normalized" in d
    assert scale_doubts(dataset([[0, 1, 1, 1]], fmt_name="csv"), "pred", False, False) == []
    assert scale_doubts(dataset([[1, 2, 3, 4]], fmt_name="csv"), "pred", False, False) == []


def test_pixels_read_as_fractions_name_the_other_sides_flag_when_shared():
    ds = dataset([[10, 20, 30, 40]], fmt_name="txt", size=(np.nan, np.nan), normalized=True)
    (shared,) = scale_doubts(ds, "gt", True, True)
    assert (
        "--normalized applies to both files" in shared
        and "pass --pred-normalized instead" in shared
    )
    (own,) = scale_doubts(ds, "gt", True, False)
    assert "drop --gt-normalized" in own
    fine = dataset([[0.5, 0.5, 0.2, 0.1]], size=(np.nan, np.nan), normalized=True)
    assert scale_doubts(fine, "gt", True, True) == []


def test_scale_of_formats_that_hold_their_own_is_not_judged():
    ds = dataset([[0.1, 0.2, 0.3, 0.4]], fmt_name="yolo", fmt="xyxy")
    assert scale_doubts(ds, "pred", False, False) == []


@pytest.mark.parametrize(
    ("gt_ids", "pred_ids", "flag"),
    [((0, 1, 2), (1, 2, 3), "--class-offset -1"), ((1, 2, 3), (0, 1, 2), "--class-offset 1"),
     ((1, 2, 3, 90), (0, 1, 2, 79), "--class-map coco80")],
)  # fmt: skip
def test_shifted_class_ids_are_a_doubt_that_spells_the_fix(gt_ids, pred_ids, flag):
    gt = dataset([[1, 1, 2, 2]] * len(gt_ids), cats=gt_ids, score=False,
                 category_idx=np.arange(len(gt_ids)))  # fmt: skip
    pred = dataset(
        [[1, 1, 2, 2]] * len(pred_ids), cats=pred_ids, category_idx=np.arange(len(pred_ids))
    )
    d = class_shift_doubt(gt, pred)
    assert is_doubt(d) and f"pass {flag} to score them" in d


def test_categories_the_predictions_name_are_no_evidence_of_a_shift():
    gt = dataset([[1, 1, 2, 2]] * 2, cats=(0, 1), score=False, category_idx=[0, 1])
    named = dataset([[1, 1, 2, 2]] * 2, cats=(1, 2), names=("cat", "dog"), category_idx=[0, 1])
    assert class_shift_doubt(gt, named) is None


def test_class_numbers_against_named_classes_ask_for_names():
    pred = dataset([[1, 1, 2, 2]] * 3, cats=("cat", 7), names=("cat", "7"), category_idx=[1, 1, 1])
    (d,) = class_coverage_doubts(pred, pred, 1)
    assert "3 of 3 predictions are in classes the ground truth does not have (7)" in d
    assert "the ground truth names them (cat)" in d and "pass --names FILE" in d


def test_a_few_predictions_in_unknown_classes_are_no_doubt():
    pred = dataset([[1, 1, 2, 2]] * 3, cats=("cat", "dog"), category_idx=[0, 0, 1])
    assert class_coverage_doubts(pred, pred, 1) == []


def test_doubts_are_strings_with_a_kind():
    d = Doubt("x")
    assert d == "x" and kind_of(d) == "doubt" and kind_of("y") == "note"
    assert doubts_of(["a", d]) == ["x"] and type(doubts_of([d])[0]) is str


def test_most_predictions_in_unknown_classes_name_the_options():
    pred = dataset([[1, 1, 2, 2]] * 3, cats=(1, 40), category_idx=[1, 1, 0])
    (d,) = class_coverage_doubts(pred, pred, 1)
    assert "2 of 3 predictions are in classes the ground truth does not have (40)" in d
    assert "--class-offset N, --class-map FILE|coco80" in d


# --------------------------------------------------------------------------- fractions read as pixels


def _fractions_as_pixels(fmt="cxcywh", fmt_name="csv", size=(640.0, 480.0)):
    """Ten fraction boxes (one height past 1) read as pixels in ``fmt``, one image ``size``."""
    boxes = [[0.1 + 0.05 * i, 0.5, 0.2, 0.3] for i in range(10)]
    boxes[3][3] = 1.05
    return dataset(boxes, fmt=fmt, fmt_name=fmt_name, size=size)


def _pixel_gt(size=(640.0, 480.0)):
    return dataset(
        [[100, 100, 200, 150]] * 3, fmt="xywh", fmt_name="voc-xml", size=size, score=False
    )


def test_fractions_with_an_outlier_are_a_doubt_naming_the_checked_flag():
    (d,) = fraction_doubts(_fractions_as_pixels(), "pred", BoxFormat.CXCYWH, _pixel_gt())
    assert is_doubt(d) and "39 of 40 prediction box numbers lie in [0, 1]" in d
    assert "against ground-truth boxes 200 wide" in d
    assert d.endswith("read so (cxcywh), 9 of 10 fit their image: pass --pred-normalized")


def test_the_fraction_fix_names_the_layout_that_fits():
    """Read as x y w h the centres become corners: 0.9 + 0.2 leaves the image; cx cy w h fits."""
    boxes = [[0.9, 0.85, 0.2, 0.3]] * 9 + [[0.5, 0.5, 0.15, 1.05]]
    ds = dataset(boxes, fmt="xywh", fmt_name="csv", size=(640.0, 480.0))
    (d,) = fraction_doubts(ds, "pred", BoxFormat.XYWH, _pixel_gt())
    assert d.endswith("pass --pred-normalized --pred-box-format cxcywh")


def test_the_fraction_fix_without_image_sizes_asks_for_them():
    ds = _fractions_as_pixels(size=(np.nan, np.nan))
    (d,) = fraction_doubts(ds, "pred", BoxFormat.CXCYWH, _pixel_gt(size=(np.nan, np.nan)))
    assert d.endswith(
        "pass --pred-normalized with --image-size WxH (the ground truth gives no image sizes)"
    )


def test_coco_fractions_are_a_doubt_without_a_flag():
    ds = _fractions_as_pixels(fmt="xywh", fmt_name="coco")
    (d,) = fraction_doubts(ds, "pred", BoxFormat.XYWH, _pixel_gt())
    assert d.endswith("COCO boxes are pixels: scale them by the image sizes")


def test_no_fraction_doubt_on_pixels_small_references_or_numbers_all_in_the_unit_square():
    gt = _pixel_gt()
    pixels = dataset([[10, 20, 30, 40], [0, 0, 1, 1], [0.5, 0.5, 2, 2]], fmt="xywh", fmt_name="csv")
    assert fraction_doubts(pixels, "pred", BoxFormat.XYWH, gt) == []
    tiny_gt = dataset(
        [[1, 1, 2, 2]] * 3, fmt="xywh", fmt_name="voc-xml", size=(8.0, 8.0), score=False
    )
    assert (
        fraction_doubts(_fractions_as_pixels(size=(8.0, 8.0)), "pred", BoxFormat.CXCYWH, tiny_gt)
        == []
    )
    unit = dataset([[0.1, 0.2, 0.3, 0.4]] * 4, fmt="cxcywh", fmt_name="csv")
    assert fraction_doubts(unit, "pred", BoxFormat.CXCYWH, gt) == []  # scale_doubts' case
    read_as_fractions = dataset(
        [[0.1, 0.2, 0.3, 1.2]] * 4, fmt="cxcywh", fmt_name="csv", normalized=True
    )
    assert fraction_doubts(read_as_fractions, "pred", BoxFormat.CXCYWH, gt) == []


def _many(boxes, fmt, sizes, image_idx):
    """A prediction file of many images (``sizes[I, 2]``, NaN: unknown) and rows."""
    n = len(boxes)
    return assemble(
        source="p",
        fmt="txt",
        images=ImageTable.build([str(i) for i in range(len(sizes))], None, *np.asarray(sizes).T),
        categories=CategoryTable((0,), ("0",)),
        image_idx=np.asarray(image_idx, dtype=np.int64),
        category_idx=np.zeros(n, dtype=np.int64),
        boxes=np.asarray(boxes, dtype=np.float64),
        box_format=BoxFormat(fmt),
        score=np.full(n, 0.5),
    )


def _xyxy_boxes(rng, n, w=100.0, h=80.0):
    x = np.sort(rng.uniform(0, w, (n, 2)), axis=1)
    y = np.sort(rng.uniform(0, h, (n, 2)), axis=1)
    return np.stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]], axis=1)


def test_the_other_layouts_misfits_are_counted_once_each_over_many_rows():
    """50,000 x1 y1 x2 y2 boxes read as x y w h; read as xyxy, ten overhang their image
    (rows far past the first slices): the doubt counts those ten, each once."""
    rng = np.random.default_rng(0)
    boxes = _xyxy_boxes(rng, 50_000)
    boxes[rng.choice(np.arange(30_000, 50_000), 10, replace=False), 2] = 130.0
    boxes[:5] = [1, 1, 2, 2]  # the first rows fit either way
    ds = _many(boxes, "xywh", [(100.0, 80.0)], np.zeros(len(boxes)))
    (d,) = layout_doubts(ds, "pred")
    n_out = int((~fits(to_xyxy(boxes, BoxFormat.XYWH)[0], np.full(50_000, 100.0),
                       np.full(50_000, 80.0))).sum())  # fmt: skip
    assert f"{n_out} of 50000 prediction boxes fall outside their image read as xywh" in d
    assert "only 10 do read as xyxy" in d


def test_rows_of_images_without_sizes_are_left_out_of_every_count():
    """Images of unknown size (NaN, 0) between images of known size, over several
    slices of rows: the counts and the first box named are those of the known rows."""
    rng = np.random.default_rng(1)
    n = 40_000
    image_idx = rng.integers(0, 4, n)
    sizes = [(100.0, 80.0), (np.nan, 80.0), (0.0, 0.0), (100.0, 80.0)]
    boxes = _xyxy_boxes(rng, n)
    known = (image_idx == 0) | (image_idx == 3)
    first = int(np.flatnonzero(known & (np.arange(n) > 20_000))[0])
    boxes[: first + 1][~known[: first + 1]] = [90, 70, 95, 75]  # out as xywh, but no size
    boxes[:first][known[:first]] = [1, 1, 2, 2]
    boxes[first] = [50, 40, 95, 75]
    ds = _many(boxes, "xywh", sizes, image_idx)
    (d,) = layout_doubts(ds, "pred")
    w = np.full(int(known.sum()), 100.0)
    outside = ~fits(to_xyxy(boxes[known], BoxFormat.XYWH)[0], w, w * 0.8)
    assert f"{int(outside.sum())} of {int(known.sum())} prediction boxes" in d
    assert f"(first: {ds.where(first)[0]}:{ds.where(first)[1]}: 50 40 95 75)" in d
