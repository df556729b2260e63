"""Hostile arrays handed straight to the compiled parts: refused with a Python error, never read.

The Python side always passes contiguous arrays of the right type; these
tests pass what it never does (a float64 array where int64 is expected, an
int8 one where bool is, a repeated index in an order, sizes whose product
overflows) and check that each part refuses it with a TypeError or
ValueError naming the argument, through the checks of iou_eval/_common.h.
``make sanitize`` runs them under AddressSanitizer and
UndefinedBehaviorSanitizer, where a read out of bounds or an overflow
would stop the run.  Real calls are recorded from a small evaluation and
replayed with one argument changed.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from iou_eval import evaluate

from ..skip_reasons import compiled_missing

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "coco"


def _part(dotted: str):
    try:
        return importlib.import_module(dotted)
    except ImportError:
        pytest.skip(compiled_missing(dotted, dotted))


class _Recorder:
    """A compiled module whose calls are recorded (name, args) and passed on."""

    def __init__(self, module):
        self.module = module
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name):
        real = getattr(self.module, name)

        def record(*args):
            self.calls.append((name, args))
            return real(*args)

        return record


@pytest.fixture(scope="module")
def coco_calls():
    """The COCO core's and the box kernel's calls while sample_data/coco is scored."""
    core = _Recorder(_part("iou_eval.protocols._cococore"))
    boxes = _Recorder(_part("iou_eval.geometry._boxkernel"))
    with pytest.MonkeyPatch.context() as m:
        m.delenv("IOU_EVAL_NO_KERNEL", raising=False)
        m.setattr("iou_eval.protocols.accumulate.coco_core", lambda: core)
        m.setattr("iou_eval.protocols.matching.coco_core", lambda: core)
        m.setattr("iou_eval.geometry.kernel.box_kernel", lambda: boxes)
        evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))
        # Boxes are matched in one pass; the pairs and greedy() serve the other
        # geometries: recorded on the same scene with the one pass left out.
        m.setattr("iou_eval.protocols.matching._fused_boxes", lambda *a, **k: None)
        evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))
    calls: dict[str, tuple] = {}
    for name, args in core.calls + boxes.calls:
        calls.setdefault(name, args)
    return calls


def _call(part: str, calls: dict, name: str, changes: dict[int, object]):
    """Call ``name`` again with the recorded arguments, argument i replaced by changes[i]."""
    if name not in calls:
        pytest.skip(f"{name} was not called on the sample")
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[name]]
    for i, v in changes.items():
        args[i] = v
    return getattr(_part(part), name)(*args)


CORE = "iou_eval.protocols._cococore"


def test_recorded_calls_replay_as_they_were(coco_calls):
    """The replay itself is sound: unchanged arguments are accepted."""
    _call(CORE, coco_calls, "accumulate", {})
    _call(CORE, coco_calls, "greedy", {})
    _call(CORE, coco_calls, "match_boxes", {})
    _call("iou_eval.geometry._boxkernel", coco_calls, "pairs", {})


def test_accumulate_refuses_an_order_with_a_repeated_prediction(coco_calls):
    order = np.array(coco_calls["accumulate"][0], dtype=np.int64)
    assert len(order) > 1
    order[1] = order[0]
    with pytest.raises(ValueError, match="order must be a permutation"):
        _call(CORE, coco_calls, "accumulate", {0: order})


def test_accumulate_refuses_an_order_shorter_than_the_predictions(coco_calls):
    order = np.array(coco_calls["accumulate"][0], dtype=np.int64)[:-1]
    with pytest.raises(ValueError, match="accumulate"):
        _call(CORE, coco_calls, "accumulate", {0: order})


def test_accumulate_refuses_float64_where_an_index_is_expected(coco_calls):
    order = np.array(coco_calls["accumulate"][0], dtype=np.float64)
    with pytest.raises(TypeError, match="order: expected int32 or int64"):
        _call(CORE, coco_calls, "accumulate", {0: order})


def test_accumulate_refuses_int64_scores(coco_calls):
    score = np.zeros(len(coco_calls["accumulate"][2]), dtype=np.int64)
    with pytest.raises(TypeError, match="dt_score: expected float64"):
        _call(CORE, coco_calls, "accumulate", {2: score})


def test_accumulate_refuses_lane_thresholds_past_the_sweeps_int16_table(coco_calls):
    """The sweep reads each lane's threshold from an int16 table: a count of lane
    thresholds past 2**15 - 1 is refused, not truncated (the records stay in range)."""
    with pytest.raises(ValueError, match="accumulate"):
        _call(CORE, coco_calls, "accumulate", {9: 2**15})


def test_accumulate_refuses_an_unwritable_output(coco_calls):
    precision = coco_calls["accumulate"][18].copy()
    precision.flags.writeable = False
    with pytest.raises((BufferError, ValueError, TypeError)):
        _call(CORE, coco_calls, "accumulate", {18: precision})


def test_greedy_refuses_int8_where_bool_is_expected(coco_calls):
    crowd = np.zeros(len(coco_calls["greedy"][4]), dtype=np.int8)
    with pytest.raises(TypeError, match="gt_crowd: expected bool"):
        _call(CORE, coco_calls, "greedy", {4: crowd})


def test_greedy_refuses_a_two_dimensional_index_column(coco_calls):
    pd = np.asarray(coco_calls["greedy"][0]).reshape(1, -1)
    with pytest.raises(ValueError, match="pd: expected 1 dimension"):
        _call(CORE, coco_calls, "greedy", {0: pd})


def test_match_boxes_refuses_float32_boxes(coco_calls):
    xyxy = np.asarray(coco_calls["match_boxes"][7], dtype=np.float32)
    with pytest.raises(TypeError, match="gt_xyxy: expected float64"):
        _call(CORE, coco_calls, "match_boxes", {7: xyxy})


def test_match_boxes_refuses_int8_where_bool_is_expected(coco_calls):
    iof = np.zeros(len(coco_calls["match_boxes"][9]), dtype=np.int8)
    with pytest.raises(TypeError, match="gt_iof: expected bool"):
        _call(CORE, coco_calls, "match_boxes", {9: iof})


def test_match_boxes_refuses_a_box_row_past_the_boxes(coco_calls):
    rows = np.array(coco_calls["match_boxes"][1], dtype=np.int64)
    assert len(rows)
    rows[-1] = len(coco_calls["match_boxes"][6])
    with pytest.raises(ValueError, match="match_boxes"):
        _call(CORE, coco_calls, "match_boxes", {1: rows})


def test_match_boxes_refuses_flat_boxes(coco_calls):
    xyxy = np.asarray(coco_calls["match_boxes"][5]).ravel()
    with pytest.raises(ValueError, match="dt_xyxy: expected 2 dimension"):
        _call(CORE, coco_calls, "match_boxes", {5: xyxy})


def test_box_pairs_refuse_a_strided_view(coco_calls):
    xyxy = np.repeat(np.asarray(coco_calls["pairs"][5]), 2, axis=0)[::2]
    with pytest.raises((BufferError, ValueError, TypeError)):
        _call("iou_eval.geometry._boxkernel", coco_calls, "pairs", {5: xyxy})


def test_box_pairs_refuse_float32_boxes(coco_calls):
    xyxy = np.asarray(coco_calls["pairs"][5], dtype=np.float32)
    with pytest.raises(TypeError, match="dt_xyxy: expected float64"):
        _call("iou_eval.geometry._boxkernel", coco_calls, "pairs", {5: xyxy})


def test_group_order_refuses_a_structured_array():
    core = _part(CORE)
    pairs = np.zeros(3, dtype=[("a", np.int64)])
    with pytest.raises(TypeError, match="group: expected"):
        core.group_order(pairs, np.zeros(3), 1)


# -- the Open Images matcher -----------------------------------------------------


def _oi_args() -> list:
    """oi_match's arguments on a small scene: group 0 holds a box, group 1 a group-of box."""
    i64 = np.int64
    box = [0.0, 0.0, 1.0, 1.0]
    return [
        np.array([0, 1, 2], i64), np.array([0, 0, 1], i64),  # dt_rows, dt_group
        np.array([box, box, [0.0, 0.0, 0.5, 0.5]]), np.array([0.9, 0.8, 0.7]),  # dt_xyxy, dt_score
        np.array([0, 0, 1], i64), np.array([0, 1], i64),  # dt_class, gt_group
        np.array([False, True]), np.array([box, box]),  # gt_group_of, gt_xyxy
        2, 2, 0.5, 10000, True,  # n_groups, n_classes, thr, cap, hits_in_entries
    ]  # fmt: skip


def test_oi_match_of_a_small_scene():
    """The first prediction takes the box, the second finds it taken, the third lies
    inside the group-of box and stands for its hit (an entry of its own class)."""
    out = _part(CORE).oi_match(*_oi_args())
    rows, flags, gt, ov, entries, class_end = (
        np.frombuffer(b, dtype=t).tolist()
        for b, t in zip(
            out, (np.int64, np.uint8, np.int64, np.float64, np.int64, np.int64), strict=True
        )
    )
    assert (rows, flags, gt, ov) == ([0, 1, 2], [1, 0, 6], [0, -1, 1], [1.0, 0.0, 1.0])
    assert (entries, class_end) == ([0, 1, ~2], [2, 3])


@pytest.mark.parametrize(
    ("position", "value", "error", "match"),
    [
        (1, np.array([1, 0, 1]), ValueError, "not ascending"),  # groups out of order
        (0, np.array([0, 1, 3]), ValueError, "oi_match"),  # a row past the boxes
        (2, np.zeros((3, 4), dtype=np.float32), TypeError, "dt_xyxy: expected float64"),
        (2, np.zeros(12), ValueError, "dt_xyxy: expected 2 dimension"),
        (6, np.array([0, 1], dtype=np.int8), TypeError, "gt_group_of: expected bool"),
        (5, np.array([0, 2]), ValueError, "oi_match"),  # a ground truth's group out of range
        (4, np.array([0, 0, 2]), ValueError, "oi_match"),  # a class out of range
        (4, np.array([0, 0]), ValueError, "oi_match"),  # classes short of the predictions
        (3, np.array([0.9, 0.8, 0.7], dtype=np.float32), TypeError, "dt_score: expected float64"),
        (8, 6, ValueError, "oi_match"),  # more groups than rows of both
        (9, -1, ValueError, "oi_match"),
        (11, -1, ValueError, "oi_match"),  # a negative cap
    ],
)
def test_oi_match_refuses_hostile_arrays(position, value, error, match):
    args = _oi_args()
    args[position] = value
    with pytest.raises(error, match=match):
        _part(CORE).oi_match(*args)


# -- the mask kernel ------------------------------------------------------------

RLE = "iou_eval.geometry._rlekernel"


def _mask_side(h: int, w: int, counts: bytes = b"04") -> list[np.ndarray]:
    """(buffer, start, length, height, width) of one mask as the kernel reads it."""
    return [
        np.frombuffer(counts, dtype=np.uint8),
        np.array([0], dtype=np.int64),
        np.array([len(counts)], dtype=np.int64),
        np.array([h], dtype=np.int64),
        np.array([w], dtype=np.int64),
    ]


def _pair_ious(dt: list, gt: list, **changes) -> np.ndarray:
    """One pair (dt row 0, gt row 0) in one block; ``changes`` replace named arguments."""
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    args = {
        "crowd": np.zeros(1, dtype=np.uint8),
        "d_rows": i64(0), "d_starts": i64(0, 1), "g_rows": i64(0), "g_starts": i64(0, 1),
        "p_starts": i64(0, 1), "p_d": i64(0), "p_g": i64(0),
        "out": np.full(1, -7.0),
    }  # fmt: skip
    args.update(changes)
    _part(RLE).pair_ious(*dt, *gt, *args.values())
    return args["out"]


def test_pair_ious_of_two_masks_is_one():
    assert _pair_ious(_mask_side(2, 2), _mask_side(2, 2)).tolist() == [1.0]


def test_pair_ious_with_sizes_whose_product_overflows():
    """h * w beyond int64: no pixel walk (UBSan stops the old signed product), pycocotools' 0."""
    side = _mask_side(2**40, 2**40)
    assert _pair_ious(side, side).tolist() == [0.0]


def test_pair_ious_refuses_float64_rows():
    with pytest.raises(TypeError, match="p_d: expected int64"):
        _pair_ious(_mask_side(2, 2), _mask_side(2, 2), p_d=np.zeros(1))


def _group_pairs(dt: list, gt: list, **changes):
    """One group of one prediction and one ground truth; ``changes`` replace named arguments."""
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    args = {
        "crowd": np.zeros(1, dtype=np.uint8),
        "dt_box": np.array([[0, 0, 1, 1]]), "dt_area": np.array([4.0]),
        "gt_box": np.array([[0, 0, 1, 1]]), "gt_area": np.array([4.0]),
        "groups": i64(0), "rows": i64(0), "gt_sorted": i64(0), "g_starts": i64(0, 1),
        "floor": 0.5,
    }  # fmt: skip
    args.update(changes)
    pos, gt_rows, ious = _part(RLE).group_pairs(*dt, *gt, *args.values())
    return (
        np.frombuffer(pos, dtype=np.int64).tolist(),
        np.frombuffer(gt_rows, dtype=np.int64).tolist(),
        np.frombuffer(ious, dtype=np.float64).tolist(),
    )


def test_group_pairs_of_two_masks_is_one():
    assert _group_pairs(_mask_side(2, 2), _mask_side(2, 2)) == ([0], [0], [1.0])


def test_group_pairs_of_an_empty_group_is_none():
    assert _group_pairs(_mask_side(2, 2), _mask_side(2, 2), g_starts=np.array([0, 0])) == (
        [],
        [],
        [],
    )


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("groups", np.array([1]), IndexError),  # beyond the groups of g_starts
        ("groups", np.array([-1]), IndexError),
        ("rows", np.array([1]), IndexError),
        ("gt_sorted", np.array([3]), IndexError),
        ("g_starts", np.array([0, 2]), ValueError),  # past gt_sorted
        ("g_starts", np.array([1, 0]), ValueError),  # falling
        ("g_starts", np.array([0]), IndexError),  # no group at all, yet a position
        ("dt_box", np.array([0, 0, 1, 1]), ValueError),  # not [N, 4]
        ("dt_box", np.zeros((1, 4), dtype=np.float64), TypeError),
        ("gt_area", np.array([4.0, 4.0]), ValueError),
        ("crowd", np.zeros(2, dtype=np.uint8), ValueError),
        ("rows", np.zeros(2, dtype=np.int64), ValueError),  # not one per position
        ("groups", np.zeros(1, dtype=np.float64), TypeError),
        ("floor", float("nan"), ValueError),
    ],
)
def test_group_pairs_refuses_hostile_arrays(name, value, error):
    with pytest.raises(error):
        _group_pairs(_mask_side(2, 2), _mask_side(2, 2), **{name: value})


def test_group_pairs_refuses_a_string_outside_its_buffer():
    side = _mask_side(2, 2)
    side[2] = np.array([5], dtype=np.int64)  # longer than the buffer
    with pytest.raises(IndexError, match="outside its arrays"):
        _group_pairs(side, _mask_side(2, 2))


def test_group_pairs_with_sizes_whose_product_overflows():
    """h * w beyond int64: no pixel walk, pycocotools' 0 (not kept at a floor of 0.5)."""
    side = _mask_side(2**40, 2**40)
    assert _group_pairs(side, side, floor=0.0) == ([0], [0], [0.0])


def test_mask_check_refuses_float64_offsets():
    side = _mask_side(2, 2)
    with pytest.raises(TypeError, match="str_off: expected int64"):
        _part(RLE).check(
            side[0], np.array([0.0, 2.0]), side[3], side[4], np.zeros(1, np.int64),
            np.zeros((1, 4), np.int64),
        )  # fmt: skip


def test_mask_check_refuses_int32_sizes():
    side = _mask_side(2, 2)
    with pytest.raises(TypeError, match="height: expected int64"):
        _part(RLE).check(
            side[0], np.array([0, 2]), side[3].astype(np.int32), side[4],
            np.zeros(1, np.int64), np.zeros((1, 4), np.int64),
        )  # fmt: skip


def test_polygons_refuse_float32_coordinates():
    with pytest.raises(TypeError, match="xy: expected float64"):
        _part(RLE).polygons(
            np.zeros(6, np.float32), np.array([0, 6]), np.array([4]), np.array([4]),
            np.zeros(1, np.int64),
        )  # fmt: skip


# -- the DOTA polygon kernel ------------------------------------------------------


def test_polygon_iou_refuses_int64_corners():
    poly = _part("iou_eval.geometry._polykernel")
    square = np.array([[0, 0, 1, 0, 1, 1, 0, 1]], dtype=np.int64)
    with pytest.raises(TypeError, match="gt: expected float64"):
        poly.iou_poly(square, square.astype(np.float64), np.zeros(1))


def test_polygon_iou_refuses_corners_that_are_not_eight_a_pair():
    poly = _part("iou_eval.geometry._polykernel")
    with pytest.raises(ValueError, match="iou_poly"):
        poly.iou_poly(np.zeros(7), np.zeros(7), np.zeros(1))


def test_polygon_iou_of_a_square_with_itself_is_one():
    poly = _part("iou_eval.geometry._polykernel")
    square = np.array([[0, 0, 1, 0, 1, 1, 0, 1]], dtype=np.float64)
    out = np.zeros(1)
    poly.iou_poly(square, square, out)
    assert out.tolist() == [1.0]


# -- the compiled bootstrap replicates ---------------------------------------------


@pytest.fixture(scope="module")
def resample_args():
    """The arguments of ``resample_prepare`` for sample_data/coco (its weight-free curves)."""
    from iou_eval.protocols.resample import _prepare

    core = _Recorder(_part(CORE))
    with pytest.MonkeyPatch.context() as m:
        m.delenv("IOU_EVAL_NO_KERNEL", raising=False)
        result = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"), bootstrap=1)
        _prepare(core, result.primary.evaluation.resampler, len(result.images))
    return {"resample_prepare": core.calls[0][1]}, len(result.images)


# Argument positions of resample_prepare.
REC_THR, TP_AT, TP_IMAGE, BASE_AT, CORR_DELTA, Q_BASE = 0, 11, 12, 14, 18, 19


def _prepare_with(resample_args, changes: dict[int, object]):
    calls, _ = resample_args
    return _call(CORE, calls, "resample_prepare", changes)


def test_resample_prepare_replays_and_runs(resample_args):
    prepared = _prepare_with(resample_args, {})
    n_images = resample_args[1]
    args = resample_args[0]["resample_prepare"]
    n_k, n_t, n_a, n_m, n_r = args[4], args[5], args[6], args[7], len(args[0])
    precision = np.full((n_a, n_m, n_t, n_r, n_k), -1.0)
    recall = np.full((n_a, n_m, n_t, n_k), -1.0)
    _part(CORE).resample(prepared, np.ones(n_images, dtype=np.int64), precision, recall)
    assert (recall[0, -1] >= 0).any()


def test_resample_prepare_refuses_float64_image_indices(resample_args):
    images = np.asarray(resample_args[0]["resample_prepare"][TP_IMAGE], dtype=np.float64)
    with pytest.raises(TypeError, match="tp_image: expected int32 or int64"):
        _prepare_with(resample_args, {TP_IMAGE: images})


def test_resample_prepare_refuses_an_image_out_of_range(resample_args):
    images = np.array(resample_args[0]["resample_prepare"][TP_IMAGE], dtype=np.int64)
    assert len(images)
    images[0] = resample_args[1]
    with pytest.raises(ValueError, match="resample_prepare"):
        _prepare_with(resample_args, {TP_IMAGE: images})


def test_resample_prepare_refuses_a_query_past_the_base_entries(resample_args):
    args = resample_args[0]["resample_prepare"]
    q_base = np.array(args[Q_BASE], dtype=np.int64)
    q_base[-1] = int(np.asarray(args[BASE_AT])[-1]) + 1
    with pytest.raises(ValueError, match="resample_prepare"):
        _prepare_with(resample_args, {Q_BASE: q_base})


def test_resample_prepare_refuses_offsets_short_of_the_entries(resample_args):
    tp_at = np.array(resample_args[0]["resample_prepare"][TP_AT], dtype=np.int64)
    tp_at[-1] -= 1
    with pytest.raises(ValueError, match="resample_prepare"):
        _prepare_with(resample_args, {TP_AT: tp_at})


def test_resample_prepare_refuses_a_correction_other_than_one(resample_args):
    delta = np.array(resample_args[0]["resample_prepare"][CORR_DELTA], dtype=np.int64)
    assert len(delta)
    delta[0] = 2
    with pytest.raises(ValueError, match="resample_prepare"):
        _prepare_with(resample_args, {CORR_DELTA: delta})


def test_resample_prepare_refuses_a_nan_recall_threshold(resample_args):
    rec = np.array(resample_args[0]["resample_prepare"][REC_THR], dtype=np.float64)
    rec[3] = np.nan
    with pytest.raises(ValueError, match="resample_prepare"):
        _prepare_with(resample_args, {REC_THR: rec})


def test_resample_refuses_what_is_not_its_capsule(resample_args):
    with pytest.raises((ValueError, TypeError)):
        _part(CORE).resample(
            object(), np.ones(resample_args[1], dtype=np.int64), np.zeros(1), np.zeros(1)
        )


# ------------------------------------------------------- the column reader's files

SCAN = "iou_eval.io._csvscan"


def _text_paths(paths, kinds="fffff", min_cells=5, options=0, limit=1 << 20):
    return _part(SCAN).text_paths(paths, kinds, min_cells, options, limit)


def test_text_paths_reads_a_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbf0 1 2 3 4\n\n1 5 6 7 8\n")
    lines, file_of, cols = _text_paths([bytes(path)])
    assert np.frombuffer(lines, dtype=np.int64).tolist() == [1, 3]
    assert np.frombuffer(file_of, dtype=np.int64).tolist() == [0, 0]
    assert np.frombuffer(cols[4], dtype=np.float64).tolist() == [4.0, 8.0]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (([b"a\x00b"],), ValueError),  # a NUL inside a path
        ((["a.txt"],), TypeError),  # str, not bytes
        (((b"a.txt",),), TypeError),  # a tuple, not a list
        (([b"a.txt"], "fffff", 0), ValueError),  # min_cells below 1
        (([b"a.txt"], "fffff", 6), ValueError),  # min_cells past the kinds
        (([b"a.txt"], "fffff", 5, 8), ValueError),  # an unknown option
        (([b"a.txt"], "fffff", 5, -1), ValueError),
        (([b"a.txt"], "fffff", 5, 0, 0), ValueError),  # no room at all
        (([b"a.txt"], "fxf", 3), ValueError),  # an unknown kind
        (([b"a.txt"], "", 1), ValueError),
        (([b"a.txt"], "f" * 257, 5), ValueError),  # more cells than a row may have
    ],
)
def test_text_paths_refuses_bad_arguments(args, error):
    with pytest.raises(error):
        _text_paths(*args)


def test_text_files_refuses_bad_arguments():
    reader = _part(SCAN)
    with pytest.raises(ValueError):
        reader.text_files([b"0 1\n"], "ff", 3, 0)
    with pytest.raises(ValueError):
        reader.text_files([b"0 1\n"], "ff", 2, 9)
    with pytest.raises(TypeError):
        reader.text_files(["0 1\n"], "ff", 2, 0)


@pytest.mark.parametrize(
    "path",
    [
        b"/dev/zero",  # a device: never read
        b"/dev/null",
        b"/nonexistent/a.txt",
        b"/",  # a folder
        b"",
    ],
)
def test_text_paths_gives_up_on_what_is_not_a_regular_file(path):
    assert _text_paths([path]) is None
    # ... or reads it as an empty file where a missing label file means no objects
    lines, _, _ = _text_paths([path], options=4)
    assert len(np.frombuffer(lines, dtype=np.int64)) == 0


def test_text_paths_gives_up_on_a_pipe_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    assert _text_paths([bytes(fifo)]) is None


def test_text_paths_gives_up_past_the_limit_and_on_gzip(tmp_path):
    import gzip

    big = tmp_path / "big.txt"
    big.write_bytes(b"0 1 2 3 4\n" * 100)
    assert _text_paths([bytes(big)], limit=999) is None
    assert _text_paths([bytes(big)], limit=1000) is not None
    gz = tmp_path / "a.txt"
    gz.write_bytes(gzip.compress(b"0 1 2 3 4\n"))
    assert _text_paths([bytes(gz)]) is None


def test_text_paths_reads_many_files_and_long_lines(tmp_path):
    """300 files, some with a line of 3,000 spaces, some without a line end, some empty."""
    paths = []
    for i in range(300):
        p = tmp_path / f"{i}.txt"
        pad = b" " * (3000 if i % 7 == 0 else 1)
        p.write_bytes(b"" if i % 11 == 0 else b"1 2 3 4" + pad + b"%d" % i + b"\n" * (i % 3))
        paths.append(bytes(p))
    lines, file_of, cols = _text_paths(paths)
    files = np.frombuffer(file_of, dtype=np.int64)
    assert files.tolist() == [i for i in range(300) if i % 11]
    assert np.frombuffer(cols[4], dtype=np.float64).tolist() == files.astype(float).tolist()


def test_text_paths_gives_up_on_a_number_longer_than_it_reads(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"1 2 3 4 " + b"5" * 3000 + b"\n")
    assert _text_paths([bytes(p)]) is None


# -- the COCO reader's polygons ---------------------------------------------------

_GT = (
    b'{"images": [{"id": 1}], "categories": [{"id": 1}], '
    b'"annotations": [{"image_id": 1, "category_id": 1, "segmentation": %s}]}'
)


def test_dataset_refuses_masks_and_two_flags_at_once():
    reader = _part("iou_eval.io._cocojson")
    for flags in (reader.MASKS, reader.KEYPOINTS | reader.POLYGONS, -1, 1 << 20):
        with pytest.raises(ValueError, match="flags"):
            reader.dataset(_GT % b"[]", flags)
    with pytest.raises(TypeError):
        reader.dataset("not bytes", reader.POLYGONS)


def test_dataset_reads_a_polygon_of_a_million_numbers_whole():
    reader = _part("iou_eval.io._cocojson")
    numbers = np.arange(1_000_000) * 0.25
    text = _GT % ("[" + ",".join(map(repr, numbers.tolist())) + "]").join(["[", "]"]).encode()
    read = reader.dataset(text, reader.POLYGONS)
    assert np.frombuffer(read["poly_values"], dtype=np.float64).tolist() == numbers.tolist()
    assert np.frombuffer(read["poly_length"], dtype=np.int64).tolist() == [1_000_000]


def test_dataset_gives_up_on_a_segmentation_nested_past_its_depth():
    reader = _part("iou_eval.io._cocojson")
    deep = b"[" * 5000 + b"]" * 5000
    assert reader.dataset(_GT % deep, reader.POLYGONS) is None
    other = reader.dataset(_GT % b'[[1, 2, 3, 4, 5, 6], {"a": [[[1]]]}]', reader.POLYGONS)
    assert np.frombuffer(other["seg_parts"], dtype=np.int64).tolist() == [-2]
    assert np.frombuffer(other["poly_values"], dtype=np.float64).size == 0


def test_dataset_with_many_long_numbers_converts_each_one():
    """Numbers of 25 digits wait for CPython's conversion; a polygon read then dropped keeps none."""
    reader = _part("iou_eval.io._cocojson")
    long = b"1.000000000000000000000001"
    parts = b"[[" + b",".join([long] * 6) + b"], [" + b",".join([long] * 6) + b"]]"
    read = reader.dataset(_GT % parts, reader.POLYGONS)
    assert np.frombuffer(read["poly_values"], dtype=np.float64).tolist() == [1.0] * 12
    dropped = reader.dataset(_GT % (parts[:-1] + b', "x"]'), reader.POLYGONS)
    assert np.frombuffer(dropped["poly_values"], dtype=np.float64).size == 0
    assert np.frombuffer(dropped["seg_other"], dtype=np.int64).tolist()[1] == len(parts) + 5
