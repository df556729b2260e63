"""Per-image text folders on the compiled column reader read what the Python reader reads.

YOLO label files, Ultralytics prediction files and the ``txt`` format's
files, written every way the formats allow (numbers of every spelling, runs
of spaces and tabs, ``\\r`` inside a line, CRLF, blank lines, a byte-order
mark, empty files, comment lines where the format reads them over, a
missing label file), and byte-level mutations of them: wherever the compiled
reader gives columns they equal the Python reader's bit for bit
(``IOU_EVAL_NO_KERNEL=1`` selects it); on anything it is not sure of it gives
up and the Python reader reads the files, which names the file and line of
what is wrong.  Hundreds of mutations here, more behind the ``slow`` marker.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.io.compiled import csv_reader
from iou_eval.io.loaders import text, yolo
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.scan import NUMBER, scan_text_files

from ..skip_reasons import compiled_missing
from .test_coco_reader import _spellings
from .test_csv_scan import _mutations, _number

pytestmark = pytest.mark.skipif(
    csv_reader() is None,
    reason=compiled_missing("the compiled column reader", "iou_eval.io._csvscan"),
)


def _sep(rng) -> str:
    return str(rng.choice([" ", "  ", "\t", " \r", " \t "]))


def _yolo_text(seed: int, n: int, pred: bool) -> bytes:
    """A YOLO label file (or Ultralytics predictions) written a random way."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        cls = str(rng.choice(["0", "1", "2", "1.0", "+1", "01", "0e0"]))
        numbers = [_number(rng, float(v)) for v in rng.random(5 if pred else 4)]
        sep = _sep(rng)
        lines.append(
            rng.choice(["", " ", "\t"]) + sep.join([cls, *numbers]) + rng.choice(["", " "])
        )
        if rng.random() < 0.05:
            lines.append(str(rng.choice(["", "  ", "\t", "\x0c"])))
    end = "\r\n" if rng.random() < 0.3 else "\n"
    body = end.join(lines).encode() + (end.encode() if rng.random() < 0.8 else b"")
    return (b"\xef\xbb\xbf" if rng.random() < 0.1 else b"") + body


def _txt_text(seed: int, n: int, pred: bool) -> bytes:
    """A txt-format file written a random way (classes as names or numbers, comments)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        cls = str(rng.choice(["cat", "dog", "7", "07", "traffic_light"]))
        numbers = [_number(rng, float(v)) for v in rng.random(5 if pred else 4) * 300]
        cells = [cls, *numbers]
        if not pred and rng.random() < 0.5:
            cells.append(str(rng.choice(["0", "1", "true", "False"])))
        lines.append(_sep(rng).join(cells))
        if rng.random() < 0.05:
            lines.append(str(rng.choice(["", "  ", "# a comment", "#x 1 2"])))
    end = "\r\n" if rng.random() < 0.3 else "\n"
    return end.join(lines).encode() + (end.encode() if rng.random() < 0.8 else b"")


def _write(tmp_path, texts: list[bytes | None]) -> list[str]:
    """One file per text, named 000.txt, 001.txt... (None: the file is left out)."""
    for old in tmp_path.glob("*.txt"):
        old.unlink()
    files = []
    for i, data in enumerate(texts):
        path = tmp_path / f"{i:03d}.txt"
        if data is not None:
            path.write_bytes(data)
        files.append(str(path))
    return files


def _same(a, b, name: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.tobytes() == b.tobytes(), (name, a, b)


# ------------------------------------------------------------------- YOLO


def _yolo_columns(files: list[str], pred: bool, nc: int | None, scanned: bool):
    """The label lines as the loaders use them: classes, box numbers, file and line of each row."""
    role = "pred" if pred else "gt"
    if scanned:
        rows = yolo._scanned_label_lines(files, role, nc)
        if rows is None:
            return "gave up", None
    else:
        try:
            with pytest.MonkeyPatch.context() as m:
                m.setattr(yolo, "_scanned_label_lines", lambda *a: None)
                rows = yolo._read_label_lines(files, role, nc)
                classes = yolo._class_column(rows, files, nc)
        except InputError as exc:
            return "error", str(exc)
        if rows.polygons:
            return "polygons", None
    classes = yolo._class_column(rows, files, nc)
    boxes = yolo._box_columns(rows, files, pred)
    return "columns", (
        classes,
        boxes,
        np.asarray(rows.file_of, dtype=np.int64),
        np.asarray(rows.line_of, dtype=np.int64),
        np.asarray(rows.box_rows, dtype=np.int64),
    )


def _check_yolo(tmp_path, texts: list[bytes | None], pred: bool, nc: int | None = 3) -> str:
    files = _write(tmp_path, texts)
    got, value = _yolo_columns(files, pred, nc, scanned=True)
    if got == "gave up":
        return got
    want, expected = _yolo_columns(files, pred, nc, scanned=False)
    assert want == "columns", (texts, want, expected)
    for name, a, b in zip(
        ("classes", "boxes", "file_of", "line_of", "box_rows"), value, expected, strict=True
    ):
        _same(a, b, name)
    return got


@pytest.mark.parametrize("pred", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_yolo_files_read_as_the_python_reader_reads_them(tmp_path, seed, pred):
    texts = [_yolo_text(seed * 10 + i, 20, pred) for i in range(3)] + [b""]
    texts += [] if pred else [None]  # a missing label file: an image without objects
    assert _check_yolo(tmp_path, texts, pred) == "columns"


def _fuzz_yolo(tmp_path, seed: int, n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    pred = seed % 2 == 1
    other = _yolo_text(seed + 1000, 3, pred)
    for data in _mutations(_yolo_text(seed, 4, pred), seed, n):
        outcome = _check_yolo(tmp_path, [other, data], pred)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_mutated_yolo_files_read_as_the_python_reader_reads_them_or_left_to_it(tmp_path, seed):
    assert _fuzz_yolo(tmp_path, seed, 80).get("columns", 0) > 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 120))
def test_mutated_yolo_files_soak(tmp_path, seed):
    _fuzz_yolo(tmp_path, seed, 1000)


@pytest.mark.parametrize(
    "line",
    [
        "0 0.5 0.5 0.2 0.2 0.9",  # six numbers in a label file: the Python reader's error
        "0 0.5 0.5 0.2",  # a short row
        "0 0.1 0.1 0.2 0.1 0.2 0.2",  # a polygon: the Python reader keeps it
        "3 0.5 0.5 0.2 0.2",  # a class past the names
        "-1 0.5 0.5 0.2 0.2",
        "0.5 0.5 0.5 0.2 0.2",  # a class that is not whole
        "0 0.5 0.5 0.2 nan",  # a number outside the strict syntax
        "0 0.5 0.5 0.2 1e400",  # not finite
        "0 0.5 0.5 0.2 0,2",  # a decimal comma
        "# 0.5 0.5 0.2 0.2",  # Ultralytics reads no comments
        "0 0.5 0.5 0.2 0.2\u00a0",  # not ASCII
    ],
)
def test_yolo_lines_the_reader_gives_up_on(tmp_path, line):
    files = _write(tmp_path, [(line + "\n").encode()])
    assert yolo._scanned_label_lines(files, "gt", 3) is None


def test_a_gzip_label_file_is_left_to_the_python_reader(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(gzip.compress(b"0 0.5 0.5 0.2 0.2\n"))
    assert yolo._scanned_label_lines([str(path)], "gt", 3) is None
    rows = yolo._read_label_lines([str(path)], "gt", 3)
    assert len(rows) == 1 and rows.numbers is None


def test_a_label_path_that_is_a_folder_is_an_image_without_objects(tmp_path):
    (tmp_path / "000.txt").mkdir()
    (tmp_path / "001.txt").write_text("1 0.5 0.5 0.2 0.2\n")
    files = [str(tmp_path / "000.txt"), str(tmp_path / "001.txt")]
    rows = yolo._scanned_label_lines(files, "gt", 3)
    assert rows is not None and rows.file_of.tolist() == [1] and rows.line_of.tolist() == [1]


@pytest.mark.parametrize("off", ["0", "1"])
def test_a_class_past_the_names_is_the_same_error_on_both_paths(tmp_path, monkeypatch, off):
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", off)
    (tmp_path / "preds").mkdir()
    (tmp_path / "preds" / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\n\n5 0.5 0.5 0.2 0.2 0.8\n")
    with pytest.raises(InputError) as exc:
        yolo.load_yolo(str(tmp_path / "preds"), "pred", LoadOptions(names=("a", "b")))
    assert "a.txt:3:" in str(exc.value) and "'5'" in str(exc.value)


@pytest.mark.parametrize("pred", [False, True])
def test_yolo_loaders_give_the_same_dataset_on_both_paths(tmp_path, monkeypatch, pred):
    from .formats_helpers import image

    root = tmp_path / "set"
    for i in range(4):
        image(root / "images/val" / f"{i:03d}.png", 100 + 10 * i, 50 + i)
    texts = [_yolo_text(40 + i, 15, pred) for i in range(3)] + [b""]
    for i, data in enumerate(texts):
        (root / "labels/val").mkdir(parents=True, exist_ok=True)
        (root / "labels/val" / f"{i:03d}.txt").write_bytes(data)
    (root / "data.yaml").write_text("val: images/val\nnames:\n  0: a\n  1: b\n  2: c\n")
    path = str(root / "labels/val") if pred else str(root / "data.yaml")
    got = []
    for off in ("0", "1"):
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", off)
        got.append(yolo.read_yolo(path, "pred" if pred else "gt", LoadOptions())[0])
    a, b = got
    for name in ("xyxy", "category_idx", "image_idx", "origin", "origin_file", "area"):
        _same(getattr(a, name), getattr(b, name), name)
    if pred:
        _same(a.score, b.score, "score")
    assert a.warnings == b.warnings and a.images.ids == b.images.ids


# -------------------------------------------------------------------- txt


def _txt_outcome(files: list[str], pred: bool, names, scanned: bool):
    if scanned:
        rows = text._scanned_txt_rows(files, pred, names)
        return ("gave up", None) if rows is None else ("columns", rows)
    shape = text._line_shape(text._FIELDS[text.BoxFormat.XYWH], pred)
    try:
        return "columns", text._txt_rows(files, pred, shape, names)
    except InputError as exc:
        return "error", str(exc)


def _check_txt(tmp_path, texts: list[bytes | None], pred: bool, names=None) -> str:
    files = _write(tmp_path, texts)
    got, value = _txt_outcome(files, pred, names, scanned=True)
    if got == "gave up":
        return got
    want, expected = _txt_outcome(files, pred, names, scanned=False)
    assert want == "columns", (texts, want, expected)
    ids, values, category_idx, ignore, origin_file, origin, classes = value
    assert ids == expected[0]
    for name, a, b in zip(
        ("values", "category_idx", "ignore", "origin_file", "origin"),
        (values, category_idx, ignore, origin_file, origin),
        expected[1:6],
        strict=True,
    ):
        if a is None or b is None:
            assert a is None and b is None, name
        else:
            assert a.dtype == b.dtype, name
            _same(a, b, name)
    assert classes.table() == expected[6].table()
    return got


@pytest.mark.parametrize("names", [None, ("cat", "dog", "traffic_light", "a", "b", "c", "d", "e")])
@pytest.mark.parametrize("pred", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_txt_files_read_as_the_python_reader_reads_them(tmp_path, seed, pred, names):
    texts = [_txt_text(seed * 10 + i, 20, pred) for i in range(3)] + [b""]
    assert _check_txt(tmp_path, texts, pred, names) == "columns"


def _fuzz_txt(tmp_path, seed: int, n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    pred = seed % 2 == 1
    other = _txt_text(seed + 1000, 3, pred)
    for data in _mutations(_txt_text(seed, 4, pred), seed, n):
        outcome = _check_txt(tmp_path, [other, data], pred)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_mutated_txt_files_read_as_the_python_reader_reads_them_or_left_to_it(tmp_path, seed):
    assert _fuzz_txt(tmp_path, seed, 80).get("columns", 0) > 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 120))
def test_mutated_txt_files_soak(tmp_path, seed):
    _fuzz_txt(tmp_path, seed, 1000)


@pytest.mark.parametrize(
    "line",
    [
        "cat 1 2 3 4 maybe",  # difficult not a flag
        "cat 1 2 3",  # a short row
        "cat 1 2 3 4 0 extra",
        "cat 1 2 3 inf",
        "caf\u00e9 1 2 3 4",
    ],
)
def test_txt_lines_the_reader_gives_up_on(tmp_path, line):
    files = _write(tmp_path, [(line + "\n").encode()])
    assert text._scanned_txt_rows(files, False, None) is None


def test_a_txt_class_missing_from_the_names_is_left_to_the_python_reader(tmp_path):
    files = _write(tmp_path, [b"cat 1 2 3 4\n", b"cow 1 2 3 4\n"])
    assert text._scanned_txt_rows(files, False, ("cat",)) is None
    with pytest.raises(InputError) as exc:
        text.load_txt(str(tmp_path), "gt", LoadOptions(names=("cat",)))
    assert "001.txt:1:" in str(exc.value)


@pytest.mark.parametrize("seed", range(2))
def test_numbers_read_as_python_reads_them(tmp_path, seed):
    """Every spelling gives float(text) bit for bit."""
    rng = np.random.default_rng(seed)
    texts = [t for t in _spellings(rng, 1000) if np.isfinite(float(t))]
    body = "".join(f"0 {t} 0 0 0\n" for t in texts).encode()
    files = _write(tmp_path, [body])
    got = scan_text_files(files, NUMBER * 5, 5)
    assert got is not None
    want = np.array([float(t) for t in texts])
    assert got.array(1).tobytes() == want.tobytes()


def test_files_past_the_input_limit_are_left_to_the_python_reader(tmp_path, monkeypatch):
    files = _write(tmp_path, [b"0 0.5 0.5 0.2 0.2\n" * 10])
    assert scan_text_files(files, NUMBER * 5, 5) is not None
    monkeypatch.setenv("IOU_EVAL_MAX_INPUT", "100")
    assert scan_text_files(files, NUMBER * 5, 5) is None
    with pytest.raises(InputError, match="input limit"):
        text.load_txt(files[0], "gt", LoadOptions())
