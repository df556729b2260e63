"""Strict numbers for options and fields: ASCII only, finite, in range, said clearly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_eval.errors import EXIT_INPUT, EXIT_USAGE, InputError, UsageError
from iou_eval.numbers import (
    MAX_DETS_HIGH,
    first_non_ascii,
    has_non_ascii_digit,
    parse_confidence,
    parse_field_float,
    parse_float,
    parse_float_list,
    parse_image_size,
    parse_int,
    parse_iou_thresholds,
    parse_max_dets,
    parse_max_drop,
    parse_seed,
    parse_unit_interval,
    parse_workers,
    range_text,
)
from iou_eval.options import AreaRange, parse_area_ranges


def refused(fn, *args, **kwargs) -> str:
    with pytest.raises(UsageError) as info:
        fn(*args, **kwargs)
    assert info.value.exit_code == EXIT_USAGE
    return info.value.format()


# -- what Python accepts and we do not ------------------------------------


@pytest.mark.parametrize("text", ["٣", "１", "²", "1_000", "\u20071", "0x10", "1e", ".", "", " "])
def test_python_float_reads_these_but_they_are_refused(text):
    # The reason for this module: float() takes some of these.
    refused(parse_float, text, "--x")


def test_python_accepts_unicode_digits_which_is_why_we_check():
    assert int("٣") == 3 and float("１") == 1.0  # the behaviour guarded against


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-Infinity", "infinity", "+inf", "1e400"])
def test_non_finite_values_are_refused_by_default(text):
    msg = refused(parse_float, text, "--score-thr")
    assert msg.startswith("--score-thr: expected a finite number, got ")


def test_non_finite_values_when_allowed():
    assert math.isnan(parse_float("nan", "--x", finite=False))
    assert parse_float("-inf", "--x", finite=False) == -math.inf
    assert parse_float("Infinity", "--x", finite=False) == math.inf
    # NaN is never inside a range.
    refused(parse_float, "nan", "--x", finite=False, low=0.0)


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.5", 0.5), (" 1 ", 1.0), ("-1e-3", -0.001), (".5", 0.5), ("5.", 5.0), ("+2E2", 200.0)],
)
def test_ascii_decimals_are_read_as_python_reads_them(text, value):
    assert parse_float(text, "--x") == value


@settings(max_examples=300, derandomize=True)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_written_by_repr_is_read_back_exactly(value):
    assert parse_float(repr(value), "--x") == value


def test_messages_name_the_option_and_say_expected_and_found():
    assert refused(parse_unit_interval, "nan", "--iou-thr") == (
        "--iou-thr: expected a number in [0, 1], got 'nan'"
    )
    assert refused(parse_unit_interval, "1.5", "--iou-thr") == (
        "--iou-thr: expected a number in [0, 1], got '1.5'"
    )
    assert refused(parse_float, "٣", "--score-thr") == (
        "--score-thr: expected a finite number, got '٣' (digits must be ASCII 0-9)"
    )


def test_a_huge_token_is_quoted_as_an_excerpt():
    msg = refused(parse_float, "9" * 100_000 + "x", "--x")
    assert len(msg) < 200 and "(100,001 characters)" in msg


@pytest.mark.parametrize(
    ("bounds", "text"),
    [
        ((0, 1, False, False), "[0, 1]"),
        ((0, 1, True, False), "(0, 1]"),
        ((0, None, False, False), ">= 0"),
        ((0, None, True, False), "> 0"),
        ((None, 5, False, True), "< 5"),
        ((None, None, False, False), ""),
    ],
)
def test_range_text(bounds, text):
    assert range_text(*bounds) == text


def test_open_and_closed_bounds():
    assert parse_float("0", "--x", low=0.0) == 0.0
    refused(parse_float, "0", "--x", low=0.0, low_open=True)
    assert parse_float("1", "--x", high=1.0) == 1.0
    refused(parse_float, "1", "--x", high=1.0, high_open=True)


# -- integers --------------------------------------------------------------


@pytest.mark.parametrize("text", ["1.0", "1e2", "٣", "0x1", "1_0", "", "nan", "+"])
def test_integers_are_ascii_digits_only(text):
    refused(parse_int, text, "--n")


def test_integer_range_and_message():
    assert parse_int(" -3 ", "--n") == -3
    assert refused(parse_int, "300", "--workers", low=0, high=256) == (
        "--workers: expected an integer in [0, 256], got '300'"
    )


def test_workers_seed_confidence():
    assert parse_workers("0") == 0 and parse_workers("256") == 256
    refused(parse_workers, "257")
    refused(parse_workers, "-1")
    assert parse_seed("0") == 0 and parse_seed(str(2**32 - 1)) == 2**32 - 1
    assert refused(parse_seed, "-1") == "--seed: expected an integer in [0, 4294967295], got '-1'"
    refused(parse_seed, str(2**32))
    assert parse_confidence("0.95") == 0.95
    refused(parse_confidence, "nan")
    refused(parse_confidence, "1")


# -- IoU thresholds --------------------------------------------------------


def test_the_coco_grid_is_pycocotools_bit_for_bit():
    ref = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
    assert parse_iou_thresholds("0.5:0.95:0.05") == ref.tolist()


def test_threshold_lists():
    assert parse_iou_thresholds("0.5,0.75") == [0.5, 0.75]
    assert parse_iou_thresholds("0.5, 0.75,") == [0.5, 0.75]  # blank items skipped, as before
    assert parse_iou_thresholds("0.5:0.5:0.1") == [0.5]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "expected at least one value"),
        (",", "expected at least one value"),
        ("0.5:inf:0.05", "--iou-thresholds stop: expected a number in [0, 1], got 'inf'"),
        ("nan", "got 'nan'"),
        ("0.5,1.5", "got '1.5'"),
        ("0.5,0.5", "0.5 is given twice"),
        ("0.9:0.5:0.05", "stop 0.5 is below start 0.9"),
        ("0.5:0.95:0", "step: expected a number > 0"),
        ("0.5:0.95:0.1", "step 0.1 does not divide 0.5:0.95"),
        ("0:1:1e-9", "at most 1000 values"),
        ("0.5:0.95", "expected start:stop:step"),
        ("0.5:0.9:0.1:1", "expected start:stop:step"),
    ],
)
def test_bad_thresholds_are_refused(text, needle):
    assert needle in refused(parse_iou_thresholds, text)


def test_float_list_without_bounds():
    assert parse_float_list("-1,2", "--x") == [-1.0, 2.0]


# -- max dets ----------------------------------------------------------------


def test_max_dets():
    assert parse_max_dets("1,10,100") == [1, 10, 100]
    assert parse_max_dets(str(MAX_DETS_HIGH)) == [MAX_DETS_HIGH]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("nan", "expected an integer in [1, 1000000000], got 'nan'"),
        ("inf", "got 'inf'"),
        ("1e99", "got '1e99'"),
        ("0", "got '0'"),
        ("10.5", "got '10.5'"),
        ("100,100", "100 is given twice"),
        ("", "expected at least one value"),
        ("1" + "0" * 10, "got '10000000000'"),
    ],
)
def test_bad_max_dets_are_refused(text, needle):
    assert needle in refused(parse_max_dets, text)


# -- area ranges ---------------------------------------------------------------


def test_area_ranges_are_the_protocol_records():
    assert parse_area_ranges("small=0:1024, medium=1024:9216,large=9216:inf") == (
        AreaRange("small", 0.0, 1024.0),
        AreaRange("medium", 1024.0, 9216.0),
        AreaRange("large", 9216.0, 1e5**2),
    )
    assert parse_area_ranges("big=0:MAX") == (AreaRange("big", 0.0, 1e10),)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("small=nan:inf", "--area-ranges small lower bound: expected a number >= 0, got 'nan'"),
        ("small=10:1", "small needs lo < hi, got 10:1"),
        ("small=0:nan", "upper bound"),
        ("small=0:1e400", "too large"),
        ("small=-1:10", "got '-1'"),
        ("all=0:10", "'all' is always evaluated"),
        ("small=0:10,small=10:20", "'small' is given twice"),
        ("small", "expected label=lo:hi"),
        ("small=0", "expected label=lo:hi"),
        ("=0:1", "expected label=lo:hi"),
        ("small=0:1:2", "expected label=lo:hi"),
        ("", "expected at least one value"),
    ],
)
def test_bad_area_ranges_are_refused(text, needle):
    assert needle in refused(parse_area_ranges, text)


def test_a_label_with_controls_is_shown_escaped():
    msg = refused(parse_area_ranges, "\x1b[2J=10:1")
    assert "\x1b" not in msg and "\\x1b[2J" in msg


# -- image size, max drop ------------------------------------------------------


def test_image_size():
    assert parse_image_size("640x480") == (640.0, 480.0)
    assert parse_image_size("640X480.5") == (640.0, 480.5)
    assert "width: expected a number > 0, got 'nan'" in refused(parse_image_size, "nanxnan")
    for bad in ("640", "0x480", "640x-1", "640x480x3", "infx1", "６４０x480"):
        refused(parse_image_size, bad)


def test_max_drop():
    assert parse_max_drop("0.01") == (0.01, False)
    assert parse_max_drop("2%") == (0.02, True)
    assert parse_max_drop("0") == (0.0, False)
    for bad in ("nan", "inf%", "-0.1", "2%%", "%", "abc"):
        refused(parse_max_drop, bad)


# -- fields of data files -------------------------------------------------------


def test_field_errors_are_located_input_errors():
    assert parse_field_float("12.5", "a.csv", 3, "x1") == 12.5
    with pytest.raises(InputError) as info:
        parse_field_float("١٢", "a.csv", 3, "x1")
    err = info.value
    assert err.exit_code == EXIT_INPUT
    assert (
        err.format() == "a.csv:3: x1: expected a finite number, got '١٢' (digits must be ASCII 0-9)"
    )


def test_non_ascii_digit_detection():
    assert has_non_ascii_digit("1²")
    assert has_non_ascii_digit("٣")
    assert not has_non_ascii_digit("café 12")
    assert first_non_ascii(["1", "2", "３", "4"]) == 2
    assert first_non_ascii(["1", "2"]) == -1


def test_non_strings_are_a_programming_error():
    with pytest.raises(TypeError):
        parse_float(0.5, "--x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_int(5, "--x")  # type: ignore[arg-type]
