"""Mask encoding rules, errors and warnings, and the overlap entry points on tiny scenes.

Pictures are 8x8 images, x to the right, y down; pycocotools fills a
polygon's pixels by their centres, so the square with corners (0, 0) and
(4, 4) holds the 16 pixels x, y in 0..3.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval.errors import InputError
from iou_eval.geometry.masks import (
    COORD_LIMIT,
    MaskColumn,
    column_from_rles,
    encode_segmentations,
    mask_boxes,
    mask_overlaps,
    mask_overlaps_batched,
    mask_pair_overlaps,
    polygon_rles,
)
from iou_eval.geometry.rle import BadRle, check_compressed, decode_counts

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

SQUARE = [0.0, 0.0, 4.0, 0.0, 4.0, 4.0, 0.0, 4.0]  # 16 pixels, x, y in 0..3
SQUARE_22 = [2.0, 2.0, 6.0, 2.0, 6.0, 6.0, 2.0, 6.0]  # 16 pixels, x, y in 2..5
EMPTY_8x8 = mask_utils.encode(np.zeros((8, 8), dtype=np.uint8, order="F"))["counts"]


def encode(segs, h=8, w=8, origins=None):
    n = len(segs)
    return encode_segmentations(segs, np.full(n, h), np.full(n, w), path="gt.json", origins=origins)


def raises_input_error(segs, where, *words, h=8, w=8, origins=None):
    with pytest.raises(InputError) as info:
        encode(segs, h, w, origins)
    err = info.value
    assert err.path == "gt.json"
    assert err.where == where, err.format()
    for word in words:
        assert word in err.message, err.format()
    return err


def square_rle():
    return mask_utils.frPyObjects([SQUARE], 8, 8)[0]


# ---------------------------------------------------------------- encoding


def test_polygon_square_is_16_pixels_and_pycocotools_bytes():
    col, warnings = encode([[SQUARE]])
    assert warnings == []
    assert col.rle[0] == square_rle()["counts"]
    assert col.area.tolist() == [16.0]
    assert col.height.tolist() == [8] and col.width.tolist() == [8]
    np.testing.assert_array_equal(mask_boxes(col), [[0.0, 0.0, 4.0, 4.0]])


def test_parts_of_one_object_are_merged_by_union():
    """Two squares overlapping in a 2x2 block: 16 + 16 - 4 pixels."""
    col, _ = encode([[SQUARE, SQUARE_22]])
    assert col.area.tolist() == [28.0]
    both = mask_utils.merge(mask_utils.frPyObjects([SQUARE, SQUARE_22], 8, 8))
    assert col.rle[0] == both["counts"]


def test_polygon_partly_outside_the_image_is_clipped_as_pycocotools_clips():
    big = [-3.0, -3.0, 20.0, -3.0, 20.0, 20.0, -3.0, 20.0]
    col, _ = encode([[big]])
    assert col.area.tolist() == [64.0]
    assert col.rle[0] == mask_utils.frPyObjects([big], 8, 8)[0]["counts"]


def test_four_number_part_has_no_pixels_and_warns_with_file_and_place():
    """pycocotools would read a first 4-number part as a box; here it is empty wherever it is."""
    col, warnings = encode(
        [[SQUARE], [[1, 1, 5, 5], SQUARE], [SQUARE, [1, 1, 5, 5]]], origins=[3, 7, 9]
    )
    assert col.area.tolist() == [16.0, 16.0, 16.0]
    assert col.rle[1] == col.rle[0] == col.rle[2]
    assert len(warnings) == 1
    assert "gt.json" in warnings[0]
    assert "2 polygon part(s) of 4 numbers" in warnings[0]
    assert "annotations[7].segmentation[0]" in warnings[0]


def test_later_four_number_part_matches_pycocotools():
    """As a later part pycocotools rasterises it as a 2-point outline: no pixels either."""
    col, _ = encode([[SQUARE, [1.5, 1.5, 6.5, 3.5]]])
    ref = mask_utils.merge(mask_utils.frPyObjects([SQUARE, [1.5, 1.5, 6.5, 3.5]], 8, 8))
    assert col.rle[0] == ref["counts"]


def test_only_a_four_number_part_is_an_empty_mask():
    col, warnings = encode([[[1, 1, 5, 5]]])
    assert col.area.tolist() == [0.0]
    assert col.rle[0] == EMPTY_8x8
    assert len(warnings) == 1


def test_empty_list_and_none_are_empty_masks():
    """pycocotools crashes on segmentation: []; here it is an empty mask of the image's size."""
    col, warnings = encode([[], None], h=6, w=5)
    assert warnings == []
    assert col.area.tolist() == [0.0, 0.0]
    empty = mask_utils.encode(np.zeros((6, 5), dtype=np.uint8, order="F"))["counts"]
    assert list(col.rle) == [empty, empty]
    np.testing.assert_array_equal(mask_boxes(col), np.zeros((2, 4)))


def test_uncompressed_rle_is_compressed_with_pycocotools():
    """Column 0 of a 4x4 image: counts [0, 4, 12] (foreground first)."""
    seg = {"counts": [0, 4, 12], "size": [4, 4]}
    col, _ = encode([seg], h=4, w=4)
    assert col.rle[0] == mask_utils.frPyObjects(seg, 4, 4)["counts"]
    assert col.area.tolist() == [4.0]
    np.testing.assert_array_equal(mask_boxes(col), [[0.0, 0.0, 1.0, 4.0]])


def test_compressed_rle_str_and_bytes_are_used_as_they_are():
    rle = square_rle()
    col, _ = encode([{"counts": rle["counts"].decode(), "size": [8, 8]}, rle])
    assert list(col.rle) == [rle["counts"], rle["counts"]]
    assert col.area.tolist() == [16.0, 16.0]


def test_unknown_image_size_takes_the_rle_size():
    rle = square_rle()
    col, _ = encode_segmentations([rle], np.array([np.nan]), np.array([0.0]))
    assert col.height.tolist() == [8] and col.width.tolist() == [8]
    assert col.area.tolist() == [16.0]


def test_mixed_kinds_keep_row_order():
    rle = square_rle()
    unc = {"counts": [0, 16, 48], "size": [8, 8]}
    col, _ = encode([rle, [SQUARE_22], None, unc, []])
    assert col.area.tolist() == [16.0, 16.0, 0.0, 16.0, 0.0]
    assert col.rle[0] == rle["counts"]
    assert col.rle[1] == mask_utils.frPyObjects([SQUARE_22], 8, 8)[0]["counts"]
    assert col.rle[3] == mask_utils.frPyObjects(unc, 8, 8)["counts"]


def test_no_rows_give_empty_columns():
    col, warnings = encode_segmentations([], np.zeros(0), np.zeros(0))
    assert len(col) == 0 and warnings == []
    assert mask_boxes(col).shape == (0, 4)
    col, warnings = polygon_rles([], np.zeros(0), np.zeros(0))
    assert len(col) == 0 and warnings == []


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ([0, 0, 4, 0, 4, 4, 0], ["even count", "got 7"]),
        ([1, 2], ["at least 3 points", "got 2 numbers"]),
        ([], ["at least 3 points", "got 0 numbers"]),
        ([0, 0, 4, 0, float("nan"), 4], ["finite", "nan"]),
        ([0, 0, 4, float("inf"), 4, 4], ["finite", "inf"]),
        ([0, 0, 4, 0, 2 * COORD_LIMIT, 4], ["beyond", "2000000"]),
        ([0, 0, 4, "x", 4, 4], ["must be numbers"]),
    ],
)
def test_bad_polygon_part_names_the_part(part, words):
    raises_input_error(
        [[SQUARE], [SQUARE, part]], "annotations[13].segmentation[1]", *words, origins=[12, 13]
    )


def test_flat_list_of_numbers_is_refused_with_a_hint():
    err = raises_input_error([SQUARE], "annotations[0].segmentation", "got a list of numbers")
    assert "[[x1, y1" in (err.hint or "")


@pytest.mark.parametrize(
    ("seg", "words"),
    [
        ("polygon", ["list of polygons or an RLE", "got str"]),
        (5, ["got int"]),
        ({"size": [8, 8]}, ["needs 'counts'", "no 'counts'"]),
        ({"counts": 5, "size": [8, 8]}, ["counts of type int"]),
    ],
)
def test_segmentation_of_the_wrong_type(seg, words):
    raises_input_error([seg], "annotations[0].segmentation", *words)


@pytest.mark.parametrize("size", [[8], [8, 0], "8x8", [8.5, 8], None, [True, 8]])
def test_rle_size_must_be_two_positive_integers(size):
    raises_input_error(
        [{"counts": [64], "size": size}], "annotations[0].segmentation.size", "[height, width]"
    )


def test_rle_that_does_not_fit_its_image():
    seg = {"counts": [0, 4, 12], "size": [4, 4]}
    raises_input_error(
        [seg], "annotations[0].segmentation.size", "does not fit", "[4, 4]", "height 8"
    )
    seg = dict(square_rle())
    raises_input_error([seg], "annotations[0].segmentation.size", "[8, 8]", "width 9", w=9)


def test_size_mismatch_warn_keeps_the_rle_size():
    """pycocotools keeps such a mask at its own size; a pair of sizes overlaps by -1."""
    seg = {"counts": [0, 4, 12], "size": [4, 4]}
    col, warnings = encode_segmentations(
        [seg, [SQUARE]], np.full(2, 8), np.full(2, 8), path="gt.json", size_mismatch="warn"
    )
    assert col.height.tolist() == [4, 8] and col.width.tolist() == [4, 8]
    assert col.area.tolist() == [4.0, 16.0]
    assert len(warnings) == 1
    assert "gt.json: 1 RLE mask(s) differ in size" in warnings[0]
    assert "annotations[0].segmentation.size" in warnings[0]
    got = mask_overlaps(col.take([0]), col.take([1]), np.array([False]))
    np.testing.assert_array_equal(got, [[-1.0]])
    with pytest.raises(ValueError, match="size_mismatch"):
        encode_segmentations([seg], [8], [8], size_mismatch="ignore")


@pytest.mark.parametrize(
    ("counts", "words"),
    [
        ([0, 4, 11], ["add up to 15", "16"]),
        ([0, 4, 13], ["add up to 17"]),
        ([0, -4, 20], ["non-negative integers", "-4"]),
        ([0, 4.5, 11.5], ["non-negative integers", "4.5"]),
        ([0, None, 16], ["non-negative integers"]),
        ([0, [4], 12], ["must be integers"]),
    ],
)
def test_bad_uncompressed_counts(counts, words):
    raises_input_error(
        [{"counts": counts, "size": [4, 4]}], "annotations[0].segmentation.counts", *words, h=4, w=4
    )


@pytest.mark.parametrize(
    ("counts", "words"),
    [
        ("04400000P1 ", ["outside '0'..'o'"]),
        ("0440000~P1", ["outside '0'..'o'"]),
        ("04400000P", ["ends in the middle of a number"]),
        ("04400000", ["add up to", "expected height * width = 8 * 8 = 64"]),
        ("04400000P1000", ["add up to"]),
        ("0" + "P" * 6 + "0", ["longer than 6 characters"]),
        ("0O0", ["negative run length"]),
        ("", ["add up to 0"]),
        ("0440é", ["ASCII"]),
    ],
)
def test_malformed_compressed_strings(counts, words):
    raises_input_error(
        [square_rle(), {"counts": counts, "size": [8, 8]}],
        "annotations[1].segmentation.counts",
        *words,
    )


def test_polygon_needs_the_image_size():
    with pytest.raises(InputError) as info:
        encode_segmentations([[SQUARE]], np.array([np.nan]), np.array([8]), path="gt.json")
    assert "height and width" in info.value.message
    assert info.value.where == "annotations[0].segmentation"


def test_place_is_a_line_number_for_line_origins():
    with pytest.raises(InputError) as info:
        encode_segmentations(
            [[[1, 2]]], np.array([8]), np.array([8]), path="a.txt", origins=[4], origin_label="line"
        )
    assert info.value.format().startswith("a.txt:4: ")


# ------------------------------------------------------------- YOLO-seg


def test_yolo_polygons_match_pycocotools_and_short_contours_are_empty():
    polys = [
        np.array(SQUARE),
        np.array([1.0, 1.0]),
        np.array([1.0, 1.0, 5.0, 5.0]),
        np.array(SQUARE_22),
    ]
    col, warnings = polygon_rles(
        polys, np.full(4, 8), np.full(4, 8), path="a.txt", origins=[1, 2, 3, 4]
    )
    assert col.area.tolist() == [16.0, 0.0, 0.0, 16.0]
    assert col.rle[0] == square_rle()["counts"]
    assert col.rle[1] == col.rle[2] == EMPTY_8x8
    assert warnings == ["a.txt: 2 polygon(s) of fewer than 3 points have no pixels (first: 2)"]


@pytest.mark.parametrize(
    ("poly", "words"),
    [([0, 0, 4, 0, 4], ["even count"]), ([0, 0, 4, 0, np.nan, 4], ["finite"])],
)
def test_yolo_polygon_errors_name_the_line(poly, words):
    with pytest.raises(InputError) as info:
        polygon_rles(
            [np.array(SQUARE), np.array(poly)],
            np.full(2, 8),
            np.full(2, 8),
            path="a.txt",
            origins=[5, 6],
        )
    assert info.value.format().startswith("a.txt:6: ")
    for w in words:
        assert w in info.value.message


def test_yolo_polygon_needs_the_image_size():
    with pytest.raises(InputError, match="no size"):
        polygon_rles([np.array(SQUARE)], np.array([np.nan]), np.array([8.0]), path="a.txt")


# ---------------------------------------------------------------- overlaps


def four_by_four(*pixel_sets):
    """A column of 4x4 masks, each given by its pixel numbers (column-major: x * 4 + y)."""
    rles = []
    for pixels in pixel_sets:
        m = np.zeros(16, dtype=np.uint8)
        m[list(pixels)] = 1
        rles.append(mask_utils.encode(np.asfortranarray(m.reshape(4, 4, order="F")))["counts"])
    return column_from_rles(rles, np.full(len(rles), 4), np.full(len(rles), 4))


def test_overlaps_iou_and_iof_literal():
    """A = pixels 0-3 (column 0), B = 2-5, C = 8-9: A & B share 2 of 6; C meets nothing."""
    pred = four_by_four(range(0, 4), range(8, 10))
    gt = four_by_four(range(2, 6), range(2, 6))
    got = mask_overlaps(pred, gt, np.array([False, True]))
    # The crowd column divides by the prediction's area: 2 / 4.
    np.testing.assert_array_equal(got, [[2 / 6, 0.5], [0.0, 0.0]])


def test_identical_empty_and_full_masks():
    full = four_by_four(range(16))
    empty = four_by_four([])
    got = mask_overlaps(full.take([0, 0]), empty.take([0]).take([0, 0]), np.array([False, True]))
    np.testing.assert_array_equal(got, np.zeros((2, 2)))
    np.testing.assert_array_equal(mask_overlaps(full, full, np.array([False])), [[1.0]])


def test_overlaps_with_an_empty_side_have_the_matrix_shape():
    pred = four_by_four(range(4))
    none = pred.take(np.zeros(0, dtype=np.int64))
    assert mask_overlaps(pred, none, np.zeros(0, bool)).shape == (1, 0)
    assert mask_overlaps(none, pred, np.array([False])).shape == (0, 1)


def test_batched_groups_equal_per_group_matrices():
    pred = four_by_four(range(0, 4), range(8, 10), range(2, 12), range(16))
    gt = four_by_four(range(2, 6), range(9, 14), range(0, 16))
    crowd = np.array([False, False, True])
    # Groups: {p0, p2} x {g0, g1}; {p1} x {} ; {} x {g2}; {p3, p1} x {g2, g0}.
    pred_rows, pred_starts = np.array([0, 2, 1, 3, 1]), np.array([0, 2, 3, 3, 5])
    gt_rows, gt_starts = np.array([0, 1, 2, 2, 0]), np.array([0, 2, 2, 3, 5])
    values, offsets = mask_overlaps_batched(
        pred, gt, crowd, pred_rows, pred_starts, gt_rows, gt_starts
    )
    assert offsets.tolist() == [0, 4, 4, 4, 8]
    for k in range(4):
        d = pred_rows[pred_starts[k] : pred_starts[k + 1]]
        g = gt_rows[gt_starts[k] : gt_starts[k + 1]]
        want = mask_overlaps(pred.take(d), gt.take(g), crowd[g])
        np.testing.assert_array_equal(
            values[offsets[k] : offsets[k + 1]].reshape(len(d), len(g)), want
        )


def test_pair_overlaps_are_the_matrix_entries():
    pred = four_by_four(range(0, 4), range(8, 10), range(2, 12))
    gt = four_by_four(range(2, 6), range(9, 14))
    crowd = np.array([False, True])
    full = mask_overlaps(pred, gt, crowd)
    d = np.array([2, 0, 2, 1, 0])
    g = np.array([1, 1, 0, 1, 0])
    np.testing.assert_array_equal(mask_pair_overlaps(pred, gt, crowd, d, g), full[d, g])
    assert mask_pair_overlaps(pred, gt, crowd, d[:0], g[:0]).shape == (0,)


def test_zero_length_runs_follow_pycocotools():
    """Hand-written counts [5, 0, 3, 2, 6]: pycocotools' walk stops at the shared zero run."""
    counts = mask_utils.frPyObjects({"counts": [5, 0, 3, 2, 6], "size": [4, 4]}, 4, 4)["counts"]
    col = column_from_rles([counts], np.array([4]), np.array([4]))
    assert col.area.tolist() == [2.0]
    ref = mask_utils.iou([col.rle_dicts()[0]], [col.rle_dicts()[0]], [0])
    np.testing.assert_array_equal(mask_overlaps(col, col, np.array([False])), ref)


# -------------------------------------------------------- column and codec


def test_column_checks_its_columns_and_takes_rows():
    col = four_by_four(range(4), range(8))
    with pytest.raises(ValueError, match="area"):
        MaskColumn(col.strings, col.height, col.width, col.area.astype(np.float32))
    with pytest.raises(ValueError, match="height"):
        MaskColumn(col.strings, col.height[:1], col.width, col.area)
    with pytest.raises(ValueError, match="box"):
        MaskColumn(col.strings, col.height, col.width, col.area, np.zeros((2, 3), dtype=np.int64))
    assert MaskColumn.of(col.rle, col.height, col.width, col.area).rle.tolist() == col.rle.tolist()
    sub = col.take(np.array([False, True]))
    assert len(sub) == 1 and sub.area.tolist() == [8.0]
    assert sub.rle_dicts() == [{"size": [4, 4], "counts": col.rle[1]}]


def test_decode_counts_reads_long_and_negative_deltas():
    """Counts over 2**20 need several characters; deltas go negative."""
    rng = np.random.default_rng(5)
    h, w = 1500, 900
    m = np.zeros((h, w), dtype=np.uint8, order="F")
    m[:1400, 3] = 1
    m[1499, 800:] = 1
    m[rng.integers(0, h, 50), rng.integers(0, w, 50)] = 1
    rle = mask_utils.encode(m)
    flat = m.reshape(-1, order="F")
    edges = np.flatnonzero(np.diff(flat)) + 1
    want = np.diff(np.concatenate([[0], edges, [flat.size]]))
    if flat[0]:
        want = np.concatenate([[0], want])
    cnts, offsets = decode_counts(
        np.array([rle["counts"]], dtype=object), np.array([h]), np.array([w])
    )
    np.testing.assert_array_equal(cnts, want)
    assert offsets.tolist() == [0, len(want)]


def test_check_compressed_names_the_row_across_chunks(monkeypatch):
    import iou_eval.geometry.rle as rle_mod

    monkeypatch.setattr(rle_mod, "_CHUNK_ROWS", 2)
    good = square_rle()["counts"]
    arr = np.array([good, good, good, b"04400000", good], dtype=object)
    with pytest.raises(BadRle) as info:
        check_compressed(arr, np.full(5, 8), np.full(5, 8))
    assert info.value.row == 3
    assert check_compressed(arr[:3], np.full(3, 8), np.full(3, 8)).tolist() == [16, 16, 16]


def test_codec_module_imports_numpy_only():
    tree = ast.parse(
        (Path(__file__).resolve().parents[2] / "iou_eval" / "geometry" / "rle.py").read_text()
    )
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    assert names <= {"numpy", "__future__", "iou_eval"}, names
