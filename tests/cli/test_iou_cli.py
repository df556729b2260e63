"""`iou-eval iou`: the box calculator."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import iou

from .helpers import run


def test_two_boxes_print_six_decimals():
    r = run("iou", "10,10,50,50", "20,20,60,60")
    assert r.out == "0.391304\n"


def test_json_prints_the_full_precision_value():
    r = run("iou", "10,10,50,50", "20,20,60,60", "-f", "json")
    doc = json.loads(r.out)
    assert doc["iou"] == 900 / 2300
    assert doc["kind"] == "iou" and doc["box_format"] == "xyxy" and doc["plus_one"] is False


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--box-format", "xywh"], iou.boxes([10, 10, 50, 50], [20, 20, 60, 60], "xywh")),
        (["--kind", "giou"], 900 / 2300 - 200 / 2500),
        (["--plus-one"], iou.boxes([10, 10, 50, 50], [20, 20, 60, 60], plus_one=True)),
        (["--box-format", "cxcywh", "--kind", "ciou"],
         iou.boxes([10, 10, 50, 50], [20, 20, 60, 60], "cxcywh", "ciou")),
    ],
)  # fmt: skip
def test_options_reach_the_computation(args, want):
    r = run("iou", "10,10,50,50", "20,20,60,60", *args, "-f", "json")
    assert json.loads(r.out)["iou"] == pytest.approx(want, abs=1e-15)
    assert run("iou", *args, "10,10,50,50", "20,20,60,60").out == f"{want:.6f}\n"


def test_negative_coordinates_are_boxes_not_options():
    r = run("iou", "-10,-10,10,10", "0,0,10,10", "-f", "json")
    assert json.loads(r.out)["iou"] == 100 / 400


def test_more_than_two_boxes_print_the_matrix():
    r = run("iou", "0,0,10,10", "5,5,15,15", "20,0,30,10")
    lines = r.out.splitlines()
    assert lines[0].split() == ["a", "/", "b", "0", "1", "2"]
    assert lines[2].split() == ["0", "1.000000", "0.142857", "0.000000"]
    assert len(lines) == 5
    doc = json.loads(run("iou", "0,0,10,10", "5,5,15,15", "20,0,30,10", "-f", "json").out)
    assert doc["rows"] == doc["columns"] == 3
    np.testing.assert_array_equal(doc["iou"], iou.boxes(*[[[0, 0, 10, 10], [5, 5, 15, 15],
                                                          [20, 0, 30, 10]]] * 2))  # fmt: skip


def test_matrix_of_two_files_csv_and_json(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("x1,y1,x2,y2\n0,0,10,10\n5,5,15,15\n\n")
    b = tmp_path / "b.json"
    b.write_text(json.dumps([[0, 0, 10, 10], [20, 0, 30, 10], [0, 0, 20, 20]]))
    r = run("iou", "--a", a, "--b", b, "-f", "csv")
    rows = [line.split(",") for line in r.out.splitlines()]
    assert rows[0] == ["a", "0", "1", "2"]
    got = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
    want = iou.boxes(
        [[0, 0, 10, 10], [5, 5, 15, 15]], [[0, 0, 10, 10], [20, 0, 30, 10], [0, 0, 20, 20]]
    )
    np.testing.assert_array_equal(got, want)
    md = run("iou", "--a", a, "--b", b, "-f", "markdown").out
    assert md.startswith("| a / b | 0 | 1 | 2 |")


def test_output_file_is_written_whole(tmp_path):
    out = tmp_path / "iou.json"
    r = run("iou", "0,0,2,2", "1,1,3,3", "-f", "json", "-o", out)
    assert r.out == ""
    assert json.loads(out.read_text())["iou"] == 1 / 7


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["10,10,50,50"], 2, "give two boxes"),
        (["10,10,50", "1,1,2,2"], 2, "box '10,10,50': expected 4 comma-separated numbers"),
        (["10,10,5,50", "1,1,2,2"], 2, "box '10,10,5,50': inverted box"),
        (["1,1,2,2", "0,0,-1,1", "--box-format", "xywh"], 2, "width >= 0"),
        (["--kindd", "giou", "1,1,2,2", "1,1,2,2"], 2, "no such option: --kindd"),
        (["--kind", "eiou", "1,1,2,2", "1,1,2,2"], 2, "Invalid value for '--kind'"),
        (["--a", "x.csv"], 2, "--a and --b go together"),
    ],
)
def test_bad_command_lines_are_usage_errors(args, code, message):
    r = run("iou", *args, expect=code)
    assert message in r.err
    assert "Traceback" not in r.err


def test_bad_files_are_located_input_errors(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("0,0,1,1\n")
    short = tmp_path / "short.csv"
    short.write_text("0,0,1,1\n0,0,1\n")
    r = run("iou", "--a", short, "--b", good, expect=1)
    assert f"{short}:2: a box is 4 numbers, got 3" in r.err
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("[[0, 0, 1, 1], [0, 0, 1]]")
    r = run("iou", "--a", good, "--b", bad_json, expect=1)
    assert f"{bad_json}:[1]: a box is 4 numbers" in r.err
    inverted = tmp_path / "inverted.csv"
    inverted.write_text("0,0,1,1\n5,5,1,1\n")
    r = run("iou", "--a", good, "--b", inverted, expect=1)
    assert f"{inverted}: b[1]: inverted box" in r.err
    r = run("iou", "--a", tmp_path / "missing.csv", "--b", good, expect=1)
    assert "missing.csv: no such file" in r.err
