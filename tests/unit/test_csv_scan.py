"""The compiled column reader (``iou_eval/io/_csvscan.c``) reads what the Python path reads.

Open Images CSV: generated files (every delimiter, quoted cells, decimal
commas, CRLF, blank rows, columns in any order, numbers of every spelling)
and byte-level mutations of them.  Wherever the compiled reader gives
columns, the Python path (the reference, ``IOU_EVAL_NO_KERNEL=1``) gives the
same, bit for bit, and the same error where the columns are refused (a box
outside the image); on anything it is not sure of the reader gives up and the
Python path reads the file.  Hundreds of mutations here, more behind the
``slow`` marker.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.io.compiled import csv_reader
from iou_eval.io.loaders import openimages as oi
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.openimages import load_openimages

from ..skip_reasons import compiled_missing
from .test_coco_reader import _spellings

pytestmark = pytest.mark.skipif(
    csv_reader() is None,
    reason=compiled_missing("the compiled column reader", "iou_eval.io._csvscan"),
)

_ALPHABET = np.frombuffer(b'0123456789.,;-+eE" \t\r\n/mXxabc\x00\x0b\x80\xc3', dtype=np.uint8)


def _number(rng, x: float) -> str:
    """``x`` spelled one of the ways a CSV writer spells it."""
    k = int(rng.integers(6))
    return [f"{x:.6f}", repr(x), f"{x:.3e}", f"{x:.17g}", f"{x:g}", f"{x:.2f}".rstrip("0")][k]


def _cell(rng, text: str, delimiter: str, comma: bool) -> str:
    """A number cell: with a decimal comma, quoted, padded, now and then."""
    if comma and "." in text and "e" not in text.lower() and not text.endswith("."):
        text = text.replace(".", ",")
        if delimiter == ",":
            return f'"{text}"'
    if rng.random() < 0.1:
        text = " " + text + " " * int(rng.integers(2))
    if delimiter != "," and rng.random() < 0.05:
        text = f'"{text}"'
    return text


def _boxes_csv(seed: int, n: int, pred: bool) -> bytes:
    """An Open Images boxes CSV written a random way."""
    rng = np.random.default_rng(seed)
    delimiter = str(rng.choice([",", ";", "\t"]))
    comma = delimiter != "," and rng.random() < 0.5 or rng.random() < 0.2
    names = ["ImageID", "LabelName", "XMin", "XMax", "YMin", "YMax"]
    names += ["Score"] if pred else ["Source", "Confidence", "IsGroupOf", "IsOccluded"]
    order = [int(i) for i in rng.permutation(len(names))]
    header = [names[i].lower() if rng.random() < 0.2 else names[i] for i in order]
    lines = [delimiter.join(header)]
    images = [f"{v:016x}" for v in rng.integers(0, 2**40, max(1, n // 3))] + [""]
    labels = ["/m/07j7r", "/m/0dzct", "cat", "a b"]
    for _ in range(n):
        lo = rng.random(2) * 0.5
        hi = lo + rng.random(2) * 0.5
        cells = {
            "ImageID": str(rng.choice(images)),
            "LabelName": str(rng.choice(labels)),
            "XMin": _cell(rng, _number(rng, float(lo[0])), delimiter, comma),
            "XMax": _cell(rng, _number(rng, float(hi[0])), delimiter, comma),
            "YMin": _cell(rng, _number(rng, float(lo[1])), delimiter, comma),
            "YMax": _cell(rng, _number(rng, float(hi[1])), delimiter, comma),
            "Score": _cell(rng, _number(rng, float(rng.random())), delimiter, comma),
            "Source": "xclick",
            "Confidence": "1",
            "IsGroupOf": str(rng.choice(["0", "1", "-1", ""])),
            "IsOccluded": str(rng.choice(["0", "1"])),
        }
        lines.append(delimiter.join(cells[names[i]] for i in order))
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "  ", delimiter * len(names)]))
    end = "\r\n" if rng.random() < 0.3 else "\n"
    return (end.join(lines) + (end if rng.random() < 0.8 else "")).encode()


def _outcome(read) -> tuple[str, object]:
    try:
        value = read()
    except InputError as exc:
        return "error", str(exc)
    return ("columns", value) if value is not None else ("gave up", None)


def _same(got: oi._Columns, want: oi._Columns) -> None:
    for name in ("lines", "xyxy", "score", "group_of"):
        a, b = getattr(got, name), getattr(want, name)
        if a is None or b is None:
            assert a is None and b is None, name
            continue
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), (name, a, b)
    for name in ("image", "label"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.values == b.values, name
        assert np.array_equal(a.codes, b.codes), name


def _check(data: bytes, pred: bool) -> str:
    """Compiled against Python on one file; what the compiled reader did."""
    got, value = _outcome(lambda: oi._scanned_columns("f.csv", data, pred))
    if got == "gave up":
        return got
    want, expected = _outcome(
        lambda: oi._table_columns(oi._read_table("f.csv", data=data), "f.csv", pred)
    )
    assert want == got, (data, got, value, want, expected)
    if got == "error":
        assert value == expected
    else:
        _same(value, expected)  # type: ignore[arg-type]
    return got


@pytest.mark.parametrize("seed", range(12))
def test_generated_files_read_as_the_python_path_reads_them(seed):
    pred = seed % 2 == 0
    assert _check(_boxes_csv(seed, 40, pred), pred) == "columns"


def _mutations(base: bytes, seed: int, n: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        text = bytearray(base)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(text)))
            kind = int(rng.integers(3))
            if kind == 0:
                text.insert(at, int(rng.choice(_ALPHABET)))
            elif kind == 1 and len(text) > 2:
                del text[at]
            else:
                text[at] = int(rng.choice(_ALPHABET))
        yield bytes(text)


def _fuzz(seed: int, n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    pred = seed % 2 == 1
    for text in _mutations(_boxes_csv(seed, 6, pred), seed, n):
        outcome = _check(text, pred)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_mutated_files_read_as_the_python_path_reads_them_or_left_to_it(seed):
    counts = _fuzz(seed, 100)
    assert counts.get("columns", 0) > 10, counts  # most mutations still read


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_mutated_files_soak(seed):
    _fuzz(seed, 1000)


@pytest.mark.parametrize("seed", range(3))
def test_numbers_read_as_python_reads_them(seed):
    """Every spelling (shortest, 17 and 19 digits, halfway points, long digit strings) gives
    float(text) bit for bit, with a decimal point and with a decimal comma."""
    rng = np.random.default_rng(seed)
    texts = [t for t in _spellings(rng, 2000) if math.isfinite(float(t))]
    for sep in (".", ","):
        body = "".join(f"a;b;0;{t.replace('.', sep)};0;0;0\n" for t in texts)
        data = ("ImageID;LabelName;XMin;Score;XMax;YMin;YMax\n" + body).encode()
        scanned = oi._scanned_columns("f.csv", data, True)
        assert scanned is not None
        want = np.array([float(t) for t in texts])
        bad = np.flatnonzero(scanned.score.view(np.int64) != want.view(np.int64))
        assert not len(bad), [(texts[i], scanned.score[i], want[i]) for i in bad[:5]]


def test_halfway_and_boundary_spellings():
    texts = [
        "9007199254740993", "9007199254740993.0", "4503599627370496.5", "1e-22", "1e-23",
        "1.00000000000000011102230246251565404236316680908203125", "0.5e-40", "-0", "+.5",
        "5.", "007", "1e400", "-1e400", "2.2250738585072011e-308", "9999999999999999999e0",
    ]  # fmt: skip
    data = ("ImageID,LabelName,XMin,XMax,YMin,YMax,Score\n" + "".join(
        f"a,b,0,0,0,0,{t}\n" for t in texts)).encode()  # fmt: skip
    scanned = oi._scanned_columns("f.csv", data, True)
    assert scanned is not None
    for t, v in zip(texts, scanned.score.tolist(), strict=True):
        assert struct.pack("<d", v) == struct.pack("<d", float(t)), t


@pytest.mark.parametrize(
    "body",
    [
        'a,"b""c",0,0,0,0,1\n',  # a doubled quote
        'a,b"c,0,0,0,0,1\n',  # a quote inside a cell
        'a,"b\nc",0,0,0,0,1\n',  # a line break inside quotes
        "a,b,0,0,0,0,1\rb,c,0,0,0,0,1\n",  # a lone carriage return
        "a,b,0,0,0,0,nan\n",  # a number outside the strict syntax
        "a,b,0,0,0,0,1_0\n",
        "a,b,0,0,0,0\n",  # a short row
        "a,b,0,0,0,0,1,x\n",  # a cell beyond the header
        "\u00e9,b,0,0,0,0,1\n",  # not ASCII
        "a\x0b,b,0,0,0,0,1\n",  # a control byte str.strip() would take
        "a,b,0,0,0,0,5,\n".replace("5,", "5,1"),  # a decimal comma splitting a cell
    ],
)
def test_cells_the_reader_gives_up_on(body):
    data = ("ImageID,LabelName,XMin,XMax,YMin,YMax,Score\n" + body).encode()
    assert oi._scanned_columns("f.csv", data, True) is None


def test_a_box_outside_the_image_is_the_same_error_on_both_paths(tmp_path, monkeypatch):
    csv = tmp_path / "p.csv"
    csv.write_text("ImageID,LabelName,XMin,XMax,YMin,YMax,Score\na,b,0,1.5,0,1,0.5\n")
    errors = []
    for off in ("0", "1"):
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", off)
        with pytest.raises(InputError) as exc:
            load_openimages(str(csv), "pred", LoadOptions())
        errors.append(str(exc.value))
    assert errors[0] == errors[1] and ":2:" in errors[0]


def test_standard_input_is_read_once_when_the_reader_gives_up(monkeypatch):
    import io
    import sys

    text = 'ImageID,LabelName,XMin,XMax,YMin,YMax,Score\na,"b""x",0,1,0,1,0.5\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    got = load_openimages("-", "pred", LoadOptions())
    assert got.categories.ids == ('b"x',)


# ------------------------------------------------------------- image labels


def _labels_csv(seed: int, n: int) -> bytes:
    rng = np.random.default_rng(seed)
    delimiter = str(rng.choice([",", ";", "\t"]))
    names = ["ImageID", "Source", "LabelName", "Confidence"]
    order = [int(i) for i in rng.permutation(4)]
    lines = [delimiter.join(names[i] for i in order)]
    for _ in range(n):
        cells = {
            "ImageID": f"{int(rng.integers(0, 8)):016x}",
            "Source": "verification",
            "LabelName": str(rng.choice(["/m/07j7r", "/m/0dzct", "cat"])),
            "Confidence": str(rng.choice(["1", "0", "1.0", "0.0"])),
        }
        lines.append(delimiter.join(cells[names[i]] for i in order))
    return ("\n".join(lines) + "\n").encode()


def _labels_outcome(read) -> tuple[str, object]:
    try:
        value = read()
    except InputError as exc:
        return "error", str(exc)
    return ("columns", value) if value is not None else ("gave up", None)


def _check_labels(tmp_path, data: bytes, monkeypatch) -> str:
    from iou_eval.io.loaders import openimages_labels as oil

    path = tmp_path / "labels.csv"
    path.write_bytes(data)
    got, value = _labels_outcome(lambda: oil._scanned_labels(str(path), data))
    if got == "gave up":
        return got
    with monkeypatch.context() as m:
        m.setattr(oil, "_scanned_labels", lambda *a: None)
        want, expected = _labels_outcome(lambda: oil.read_image_labels(str(path)))
    assert want == "columns", (data, want, expected)
    for name in ("image_ids", "label_ids", "positive", "lines"):
        a, b = getattr(value, name), getattr(expected, name)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), name
    return got


@pytest.mark.parametrize("seed", range(3))
def test_image_labels_read_as_the_python_path_reads_them(tmp_path, monkeypatch, seed):
    counts: dict[str, int] = {}
    assert _check_labels(tmp_path, _labels_csv(seed, 30), monkeypatch) == "columns"
    for text in _mutations(_labels_csv(seed, 5), seed, 60):
        outcome = _check_labels(tmp_path, text, monkeypatch)
        counts[outcome] = counts.get(outcome, 0) + 1
    assert counts.get("columns", 0) > 5, counts


# ------------------------------------------------------------------- DOTA


def _dota_text(seed: int, n: int, task1: bool) -> bytes:
    """A labelTxt file (or a task-1 results file) written a random way."""
    rng = np.random.default_rng(seed)
    lines = []
    if not task1 and rng.random() < 0.5:
        lines += ["imagesource:GoogleEarth", "GSD:0.146"]
    for _ in range(n):
        corners = [_number(rng, float(v)) for v in rng.random(8) * 1000]
        sep = str(rng.choice([" ", "  ", "\t", " \r"]))
        if task1:
            image = str(rng.choice(["P0003", "P0007", "007", "7"]))
            cells = [image, _number(rng, float(rng.random())), *corners]
        else:
            cells = [*corners, str(rng.choice(["plane", "ship", "small-vehicle"]))]
            if rng.random() < 0.8:
                cells.append(str(rng.choice(["0", "1", "+0", "2", "00"])))
        lines.append(sep.join(cells))
        if rng.random() < 0.05:
            lines.append(str(rng.choice(["", "  ", "# a comment"])))
    end = "\r\n" if rng.random() < 0.3 else "\n"
    return end.join(lines).encode() + (end.encode() if rng.random() < 0.8 else b"")


def _same_rows(got: tuple, want: tuple) -> None:
    for a, b in zip(got, want, strict=True):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        else:
            assert a.values == b.values and np.array_equal(a.codes, b.codes)


def _check_dota(tmp_path, texts: list[bytes], task1: bool) -> str:
    from iou_eval.io.loaders import dota

    files = []
    for i, text in enumerate(texts):
        path = tmp_path / (f"Task1_c{i}.txt" if task1 else f"P{i:04d}.txt")
        path.write_bytes(text)
        files.append(str(path))
    scanned, python = (
        (dota._scanned_task1, dota._task1_rows)
        if task1
        else (dota._scanned_labels, dota._label_rows)
    )
    got, value = _outcome(lambda: scanned(files))
    if got == "gave up":
        return got
    want, expected = _outcome(lambda: python(files))
    assert want == got == "columns", (texts, got, want, expected)
    _same_rows(value, expected)  # type: ignore[arg-type]
    return got


@pytest.mark.parametrize("task1", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_dota_files_read_as_the_python_path_reads_them(tmp_path, seed, task1):
    texts = [_dota_text(seed * 10 + i, 20, task1) for i in range(3)] + [b""]
    assert _check_dota(tmp_path, texts, task1) == "columns"


def _fuzz_dota(tmp_path, seed: int, n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    task1 = seed % 2 == 1
    other = _dota_text(seed + 1000, 3, task1)
    for text in _mutations(_dota_text(seed, 4, task1), seed, n):
        outcome = _check_dota(tmp_path, [other, text], task1)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_mutated_dota_files_read_as_the_python_path_reads_them_or_left_to_it(tmp_path, seed):
    assert _fuzz_dota(tmp_path, seed, 80).get("columns", 0) > 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 120))
def test_mutated_dota_files_soak(tmp_path, seed):
    _fuzz_dota(tmp_path, seed, 1000)


@pytest.mark.parametrize(
    "line",
    [
        "1 2 3 4 5 6 7 8 plane 1 extra",  # eleven fields
        "1 2 3 4 5 6 7 8",  # no class
        "1 2 3 4 5 6 7 1e400 plane 0",  # not finite
        "1 2 3 4 5 6 7 8,5 plane 0",  # a decimal comma
        "1 2 3 4 5 6 7 8 plane 0.5",  # difficult not an integer
        "1 2 3 4 5 6 7 8 plane +-1",
        "1 2 3 4 5 6 7 8 plan\u00e9 0",  # not ASCII
    ],
)
def test_dota_lines_the_reader_gives_up_on(tmp_path, line):
    from iou_eval.io.loaders import dota

    path = tmp_path / "P0001.txt"
    path.write_text(line + "\n")
    assert dota._scanned_labels([str(path)]) is None


@pytest.mark.parametrize("off", ["0", "1"])
def test_a_task1_class_missing_from_the_names_is_reported_at_its_file(tmp_path, monkeypatch, off):
    """Task1_a.txt holds three rows, Task1_b.txt one; with --names a, the error names
    Task1_b.txt (the row count once stood in for a file index: an IndexError)."""
    from iou_eval.io.loaders.dota import load_task1

    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", off)
    row = "P1 0.9 0 0 10 0 10 10 0 10\n"
    (tmp_path / "Task1_a.txt").write_text(row * 3)
    (tmp_path / "Task1_b.txt").write_text(row)
    with pytest.raises(InputError) as exc:
        load_task1(str(tmp_path), "pred", LoadOptions(names=("a",)))
    assert "Task1_b.txt" in str(exc.value) and "'b'" in str(exc.value)
