"""The compiled COCO JSON reader gives the columns msgspec's records give, or gives up.

``iou_eval/io/_cocojson.c`` reads a results list with boxes and a ground-truth
dataset straight into columns.  Here, on files written in every way JSON
allows (key order, whitespace, number spellings, escapes, UTF-8, unknown
keys holding any value, polygons, nulls), its columns equal, bit for bit,
those of the msgspec path (the loader's records through the same column
code); on what it is not sure of it gives up (None), and msgspec reads the
file as before.  Byte-level mutations of valid files are read as msgspec
reads them or not at all.  Numbers are correctly rounded: every spelling
reads as Python's ``float()`` reads it.
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

from iou_eval.io.compiled import json_reader
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.json_decode import quiet_decode, threaded_results

from ..skip_reasons import compiled_missing
from .json_spellings import listed, mutations, number, obj

READER = json_reader()
pytestmark = pytest.mark.skipif(
    READER is None, reason=compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
)


def _same(got, want, key: str = "") -> None:
    """Equal bit for bit (-0.0 and 0.0 differ), dtypes and shapes included."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), key
        assert (got.dtype, got.shape) == (want.dtype, want.shape), key
        assert got.tobytes() == want.tobytes(), key
    else:
        assert type(got) is type(want) and got == want, key


def _same_columns(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for key, value in want.items():
        _same(got[key], value, key)


# ---------------------------------------------------------------- results


def _result(rng, extra: int = 3) -> str:
    """One box result written a random way; its fields as _Annotation declares them."""
    fields = {
        "image_id": str(int(rng.integers(-5, 10 ** int(rng.integers(1, 18))))),
        "category_id": str(int(rng.integers(0, 100))),
        "score": number(rng),
        "bbox": listed([number(rng) for _ in range(4)], rng),
    }
    if rng.random() < 0.3:
        fields["segmentation"] = str(
            rng.choice(["null", "[[1, 2, 3, 4, 5, 6]]", '{"size": [2, 2], "counts": "04"}'])
        )
    if rng.random() < 0.3:
        fields["id"] = str(rng.choice(["7", '"a7"', "null", "123456789012345678901234"]))
    if rng.random() < 0.3:
        fields["area"] = str(rng.choice(["null", "12", "12.5", number(rng)]))
    if rng.random() < 0.3:
        fields["iscrowd"] = str(rng.choice(["0", "1", "true", "false", "2"]))
    if rng.random() < 0.3:
        fields["ignore"] = str(rng.choice(["0", "1", "true", "false", "null"]))
    return obj(rng, fields, extra)


def _results(seed: int, n: int, extra: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    return listed([_result(rng, extra) for _ in range(n)], rng).encode("utf-8")


def _msgspec_results(data: bytes) -> dict:
    anns = quiet_decode(coco._DECODER, data)
    cols = coco.annotation_columns(anns, "p.json", "[{}]", "pred")
    return {k: cols[k] for k in ("boxes", "score", "image_id", "category_id")}


@pytest.mark.parametrize("seed", range(6))
def test_results_read_as_msgspec_records(seed):
    data = _results(seed, 300)
    got = coco.read_box_results(data)
    assert got is not None
    _same_columns(got, _msgspec_results(data))


def test_an_empty_results_list_and_one_result():
    for data in (b" [ ] ", b'[{"image_id": 3, "category_id": 1, "score": 0.5, "bbox": [1,2,3,4]}]'):
        _same_columns(coco.read_box_results(data), _msgspec_results(data))


def test_results_read_in_parts_by_threads(tmp_path, monkeypatch):
    """Cut at element boundaries and read by several threads: the columns of one read."""
    from iou_eval.io.loaders import json_decode

    path = tmp_path / "p.json"
    # No unknown keys: a list of objects inside one could hold a "}, {" that
    # the cutting takes for a boundary (see the next test).
    data = _results(11, 2000, extra=1)
    path.write_bytes(data)
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", 1000)
    want = _msgspec_results(data)
    for workers in (1, 2, 3, 7):
        got = threaded_results(str(path), coco.read_box_results, workers)
        _same_columns(got, want)


def test_one_thread_reads_a_list_of_a_few_runs_whole(tmp_path, monkeypatch):
    """One thread and a list of at most sixteen runs: one read, no cut, no join; more
    threads (or a longer list) cut it into runs.  The columns are the same."""
    from iou_eval.io.loaders import json_decode

    path = tmp_path / "p.json"
    data = _results(5, 300, extra=1)
    path.write_bytes(data)
    runs = len(data) // 3 + 1  # three or four runs' worth
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", runs)
    calls: list[tuple] = []

    def counted(buf, *span):
        calls.append(span)
        return coco.read_box_results(buf, *span)

    want = _msgspec_results(data)
    _same_columns(threaded_results(str(path), counted, 1), want)
    assert calls == [()]
    calls.clear()
    _same_columns(threaded_results(str(path), counted, 2), want)
    assert len(calls) >= 2 and all(len(c) == 3 for c in calls)
    calls.clear()
    monkeypatch.setattr(json_decode, "_ONE_THREAD_RUNS", 2)
    _same_columns(threaded_results(str(path), counted, 1), want)
    assert len(calls) >= 2


def test_a_cut_inside_a_value_gives_the_file_back(tmp_path, monkeypatch):
    """A "}, {" inside a result's value cuts it in two: that run is not sure, and the
    file is read whole another way (here, the run's None)."""
    from iou_eval.io.loaders import json_decode

    one = '{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4], "x": [%s]}'
    nested = ", ".join(['{"k": 1}'] * 300)
    path = tmp_path / "p.json"
    path.write_text("[" + ", ".join([one % nested] * 20) + "]")
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", 1000)
    assert threaded_results(str(path), coco.read_box_results, 2) is None


_ONE = '{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4]%s}'


@pytest.mark.parametrize(
    "text",
    [
        '[{"image_id": "1", "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4]}]',
        '[{"image_id": 1, "category_id": "2", "score": 0.5, "bbox": [1, 2, 3, 4]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": null}]',  # boxes needed
        '[{"image_id": 1, "category_id": 2, "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "score": null, "bbox": [1, 2, 3, 4]}]',
        '[{"image_id": 1, "category_id": 2, "score": 1e999, "bbox": [1, 2, 3, 4]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 1e400]}]',
        "[" + _ONE % ', "area": 1e400' + "]",  # a number only checked, out of range
        "[" + _ONE % ', "iscrowd": 1234567890123456789012' + "]",
        "[" + _ONE % ', "segmentation": [[1, 2, 3,]]' + "]",
        "[" + _ONE % ', "x": "\\ud800"' + "]",
        "[" + _ONE % "" + "," + _ONE % ', "bbox": [1, 2]' + "]",
        '{"annotations": [' + _ONE % "" + "]}",  # a results dict: msgspec's
        "\ufeff[" + _ONE % "" + "]",  # a byte-order mark: read_input drops it
    ],
)
def test_results_the_reader_gives_up_on(text):
    assert READER.results(text.encode("utf-8")) is None


# ----------------------------------------------------------- ground truth


def _image(rng, image_id: int) -> str:
    fields = {"id": str(image_id)}
    if rng.random() < 0.9:
        name = str(rng.choice(["a.jpg", "dir/b.png", "café.jpg", "ünïcode/ß.png", "", '😀 "q"\t']))
        spelled = json.dumps(name, ensure_ascii=bool(rng.random() < 0.5))
        fields["file_name"] = "null" if rng.random() < 0.1 else spelled
    for key in ("width", "height"):
        if rng.random() < 0.9:
            fields[key] = str(rng.choice(["640", "480.0", "null", number(rng)]))
    return obj(rng, fields)


def _category(rng, cat_id: int) -> str:
    fields = {"id": str(cat_id)}
    if rng.random() < 0.9:
        fields["name"] = json.dumps(str(rng.choice(["cat", "dog", "straße", "a b"])))
    if rng.random() < 0.5:
        fields["supercategory"] = json.dumps("animal")
    return obj(rng, fields)


def _annotation(rng, ann_id: str, image_ids: list[int], cat_ids: list[int]) -> str:
    fields = {
        "image_id": str(rng.choice(image_ids)),
        "category_id": str(rng.choice(cat_ids)),
        "bbox": listed([number(rng) for _ in range(4)], rng),
    }
    if ann_id:
        fields["id"] = ann_id
    if rng.random() < 0.8:
        fields["area"] = str(rng.choice(["null", "1024", number(rng)]))
    if rng.random() < 0.7:
        fields["iscrowd"] = str(rng.choice(["0", "1", "true", "false", "3"]))
    if rng.random() < 0.3:
        fields["ignore"] = str(rng.choice(["0", "1", "true", "false", "null"]))
    if rng.random() < 0.2:
        fields["score"] = str(rng.choice(["null", number(rng)]))
    if rng.random() < 0.7:
        polys = [
            listed([number(rng) for _ in range(2 * int(rng.integers(3, 9)))], rng)
            for _ in range(int(rng.integers(1, 3)))
        ]
        crowd = '{"size": [480, 640], "counts": [1, 2, 3]}'
        fields["segmentation"] = crowd if rng.random() < 0.1 else listed(polys, rng)
    return obj(rng, fields)


def _dataset(seed: int, n_images: int = 40, n_annotations: int = 200, ids: str = "some") -> bytes:
    """A ground truth; ``ids``: annotation ids ``some`` (a few missing), ``all``, ``shared``."""
    rng = np.random.default_rng(seed)
    image_ids = sorted({int(v) for v in rng.integers(0, 10**6, n_images)})
    cat_ids = sorted({int(v) for v in rng.integers(0, 100, 8)})
    anns = []
    for i in range(n_annotations):
        ann_id = {"some": str(i + 1) if rng.random() < 0.97 else "", "all": str(i)}.get(
            ids, str(int(rng.integers(0, n_annotations // 2)))
        )
        anns.append(_annotation(rng, ann_id, image_ids, cat_ids))
    parts = {
        "images": listed([_image(rng, i) for i in image_ids], rng),
        "annotations": listed(anns, rng),
        "categories": listed([_category(rng, c) for c in cat_ids], rng),
        "info": '{"year": 2017, "description": "\\u00e9t\\u00e9"}',
        "licenses": "[]",
    }
    return obj(rng, parts, extra=2).encode("utf-8")


def _msgspec_dataset(data: bytes, monkeypatch) -> coco._Read:
    import iou_eval.io.compiled

    with monkeypatch.context() as m:
        m.setattr(iou_eval.io.compiled, "json_reader", lambda: None)
        return coco._read("g.json", "gt", LoadOptions(), data)


def _same_read(got: coco._Read, want: coco._Read) -> None:
    _same_columns(got.cols, want.cols)
    assert got.label == want.label
    for mine, theirs in ((got.images, want.images), (got.categories, want.categories)):
        assert mine.ids == theirs.ids and mine.names == theirs.names
        assert all(type(a) is type(b) for a, b in zip(mine.ids, theirs.ids, strict=True))
        if theirs.width is not None:
            for key in ("width", "height"):
                a = np.asarray(getattr(mine, key), dtype=np.float64)
                b = np.asarray(getattr(theirs, key), dtype=np.float64)
                assert a.tobytes() == b.tobytes(), key


@pytest.mark.parametrize(("seed", "ids"), [(0, "some"), (1, "all"), (2, "shared"), (3, "some")])
def test_ground_truth_read_as_msgspec_records(seed, ids, monkeypatch):
    data = _dataset(seed, ids=ids)
    got = coco._read_compiled_dataset(data, "g.json")
    assert got is not None
    _same_read(got, _msgspec_dataset(data, monkeypatch))


def test_an_empty_ground_truth(monkeypatch):
    data = b'{"images": [], "annotations": [], "categories": []}'
    _same_read(coco._read_compiled_dataset(data, "g.json"), _msgspec_dataset(data, monkeypatch))


_GT = '{"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": [%s]}'
_ANN = '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "id": 1%s}'


@pytest.mark.parametrize(
    "text",
    [
        '{"images": [{"id": 1}], "annotations": []}',  # no categories
        '{"images": null, "annotations": [], "categories": []}',
        '{"images": [], "annotations": [], "categories": [], "images": []}',
        '{"images": [{"id": "1"}], "annotations": [], "categories": []}',
        '{"images": [{"id": 1, "width": true}], "annotations": [], "categories": []}',
        '{"images": [{"id": 1, "file_name": "a\\ud800"}], "annotations": [], "categories": []}',
        '{"images": [{"id": 1, "file_name": "a\\udc00\\ud800"}], "annotations": [], "categories": []}',
        '{"images": [{"id": 1, "file_name": "a\\x"}], "annotations": [], "categories": []}',
        '{"images": [{"id": 1, "file_name": "\\xff"}], "annotations": [], "categories": []}',
        '{"images": [{"file_name": "a"}], "annotations": [], "categories": []}',
        '{"images": [], "annotations": [], "categories": [{"id": 1.5}]}',
        _GT % _ANN % ', "id": 2',  # a key twice
        _GT % _ANN % ', "iscrowd": null',
        _GT % _ANN % ', "area": "big"',
        _GT % _ANN.replace('"id": 1', '"id": "a1"') % "",
        _GT % _ANN.replace('"id": 1', '"id": 12345678901234567890') % "",
        _GT % _ANN.replace("[1, 2, 3, 4]", "null") % "",
        _GT % _ANN % ', "segmentation": [[1, 2, 3, 4, 5, 6]' + "]",  # bad JSON
        "[" + _ANN % "" + "]",  # a results list
        _GT % _ANN % "" + " x",
    ],
)
def test_ground_truths_the_reader_gives_up_on(text):
    assert READER.dataset(text.encode("utf-8")) is None


# ---------------------------------------------------------------- numbers


def _random_doubles(rng, n: int) -> np.ndarray:
    """Doubles of every magnitude from random bits, and ones near COCO's values."""
    bits = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64)
    near = rng.uniform(0, 1000, n) * 10.0 ** rng.integers(-30, 10, n)
    out = np.concatenate([bits, near])
    return out[np.isfinite(out)]


def _spellings(rng, n: int) -> list[str]:
    """Shortest reprs, 17 and 19 significant digits, halfway points, long digit strings."""
    xs = _random_doubles(rng, n)
    texts = [repr(float(x)) for x in xs]
    texts += [f"{x:.16e}" for x in xs[: n // 2]]
    texts += [f"{x:.18e}" for x in xs[: n // 2]]
    for x in xs[: n // 4]:
        # Halfway between x and its upper neighbour: the tie goes to the even one.
        up = math.nextafter(float(x), math.inf)
        if math.isfinite(up):
            texts.append(f"{(float(x) + (up - float(x)) / 2):.25e}")
    texts += [
        str(int(d)) + "." + "".join(rng.choice(list("0123456789"), int(rng.integers(1, 30))))
        for d in rng.integers(0, 10**6, n // 8)
    ]
    return texts


@pytest.mark.parametrize("seed", range(4))
def test_numbers_read_as_python_reads_them(seed):
    """Every spelling gives float(text) bit for bit (through the score column)."""
    rng = np.random.default_rng(seed)
    texts = [t for t in _spellings(rng, 4000) if math.isfinite(float(t))]
    data = (
        "["
        + ",".join(f'{{"image_id":1,"category_id":1,"bbox":[0,0,1,1],"score":{t}}}' for t in texts)
        + "]"
    ).encode()
    got = coco.read_box_results(data)
    assert got is not None
    want = np.array([float(t) for t in texts])
    bad = np.flatnonzero(got["score"].view(np.int64) != want.view(np.int64))
    assert not len(bad), [(texts[i], got["score"][i], want[i]) for i in bad[:5]]


def test_the_powers_of_five_are_fast_floats():
    """The conversion's table, recomputed from Python's integers (fast_float's rule)."""
    for q, high, low in READER.powers_of_five():
        if q >= 0:
            v = 5**q
            while v < 1 << 127:
                v *= 2
            while v >= 1 << 128:
                v //= 2
        else:
            p5 = 5**-q
            z = p5.bit_length() if p5 & (p5 - 1) else p5.bit_length() - 1
            v = 2 ** (z + 127 if q >= -27 else 2 * z + 128) // p5 + 1
            while v >= 1 << 128:
                v //= 2
        assert (high, low) == (v >> 64, v & (2**64 - 1)), q


def test_halfway_and_boundary_spellings():
    texts = [
        "9007199254740993", "9007199254740993.0", "9007199254740995.0", "4503599627370496.5",
        "4503599627370497.5", "1.7976931348623157e308", "2.2250738585072011e-308",
        "0.000000000000000000000000000000000000000000000000001", "1e-22", "1e-23", "7e22",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "0.5e-40", "123456789012345678e-30", "9999999999999999999e0", "1.9999999999999999",
    ]  # fmt: skip
    data = (
        "["
        + ",".join(f'{{"image_id":1,"category_id":1,"bbox":[0,0,1,1],"score":{t}}}' for t in texts)
        + "]"
    ).encode()
    got = coco.read_box_results(data)
    assert got is not None
    for t, v in zip(texts, got["score"].tolist(), strict=True):
        assert struct.pack("<d", v) == struct.pack("<d", float(t)), t


# -------------------------------------------------------------- mutations


def _outcome(read) -> tuple[str, object]:
    try:
        value = read()
    except Exception as exc:  # noqa: BLE001 - msgspec's refusals, whatever their type
        return type(exc).__name__, None
    return ("columns", value) if value is not None else ("gave up", None)


def _check_results(seed: int, n: int) -> int:
    """Where the reader gives columns, msgspec gives the same; how many it read."""
    read = 0
    for text in mutations(_results(seed, 8), seed, n):
        got, cols = _outcome(lambda t=text: coco.read_box_results(t))
        if got != "columns":
            continue
        read += 1
        want, expected = _outcome(lambda t=text: _msgspec_results(t))
        assert want == "columns", (text, want)
        _same_columns(cols, expected)
    return read


def _check_datasets(seed: int, n: int, monkeypatch) -> int:
    read = 0
    for text in mutations(_dataset(seed, n_images=3, n_annotations=5), seed, n):
        got, value = _outcome(lambda t=text: coco._read_compiled_dataset(t, "g.json"))
        if got != "columns":
            continue
        read += 1
        want, expected = _outcome(lambda t=text: _msgspec_dataset(t, monkeypatch))
        assert want == "columns", (text, want)
        _same_read(value, expected)
    return read


@pytest.mark.parametrize("seed", range(2))
def test_mutated_results_read_as_msgspec_reads_them_or_not_at_all(seed):
    assert _check_results(seed, 300) > 0


@pytest.mark.parametrize("seed", range(2))
def test_mutated_ground_truths_read_as_msgspec_reads_them_or_not_at_all(seed, monkeypatch):
    assert _check_datasets(seed, 200, monkeypatch) > 0


@pytest.mark.slow
def test_mutations_soak(monkeypatch):
    assert sum(_check_results(seed, 3000) for seed in range(10, 20)) > 0
    assert sum(_check_datasets(seed, 2000, monkeypatch) for seed in range(10, 20)) > 0
