"""The compiled results reader gives the columns msgspec's records give, or gives up.

``iou_eval/io/_cocojson.c`` reads a chunk of a results list whose masks are
compressed RLEs straight into columns (with masks, ``results(buf, MASKS)``).  Here, on generated chunks written in
every way JSON allows (key order, whitespace, number spellings, escapes,
unknown keys holding any value, nulls), its columns equal, bit for bit,
those of the msgspec path (:data:`_RLE_DECODER` records through
:func:`annotation_columns`); and on what it is not sure of (an id that is a
string or a float, a key written twice, a missing field, an escape it does
not read, a byte outside ASCII, a number out of range, bad JSON) it gives
up, and the chunk is read by msgspec as before.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from iou_eval.io.compiled import json_reader
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.json_decode import quiet_decode

from ..skip_reasons import compiled_missing
from .json_spellings import mutations, number, unknown_value, ws

READER = json_reader()
pytestmark = pytest.mark.skipif(
    READER is None,
    reason=compiled_missing("the compiled results reader", "iou_eval.io._cocojson"),
)


def _msgspec_columns(chunk: bytes) -> dict:
    anns = quiet_decode(coco._RLE_DECODER, chunk)
    return coco.annotation_columns(anns, "p.json", "[{}]", "pred", masks=True)


def _assert_same_columns(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for key, want in expected.items():
        have = got[key]
        assert isinstance(have, np.ndarray), key
        assert have.dtype == want.dtype and have.shape == want.shape, key
        if want.dtype == object:
            assert all(v is None for v in have) and all(v is None for v in want), key
        else:
            # Bit for bit: -0.0 and 0.0 differ here.
            assert have.tobytes() == want.tobytes(), key


def _masks(rng, n: int) -> list[dict]:
    """Real compressed RLEs of random sizes (about 1 in 64 characters is a backslash)."""
    out = []
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(1, 50, 2))
        m = np.asfortranarray((rng.random((h, w)) < rng.uniform(0.05, 0.9)).astype(np.uint8))
        rle = mask_utils.encode(m)
        out.append({"size": [h, w], "counts": rle["counts"].decode("ascii")})
    return out


_number, _ws, _unknown_value = number, ws, unknown_value


def _record(rng, rle: dict) -> str:
    """One result written a random way; its fields as _RleResult declares them."""
    w = lambda: _ws(rng)  # noqa: E731
    fields = {
        "image_id": str(int(rng.integers(-5, 10 ** int(rng.integers(1, 18))))),
        "category_id": str(int(rng.integers(0, 100))),
        "score": _number(rng),
    }
    if rng.random() < 0.8:
        bbox = (
            "null"
            if rng.random() < 0.1
            else "[" + ",".join(f"{w()}{_number(rng)}{w()}" for _ in range(4)) + "]"
        )
        fields["bbox"] = bbox
    if rng.random() < 0.9:
        if rng.random() < 0.1:
            fields["segmentation"] = "null"
        else:
            counts = json.dumps(rle["counts"])
            if rng.random() < 0.2:
                counts = counts.replace("/", "\\/")  # JSON may escape a slash
            parts = [
                f'"size"{w()}:{w()}[{w()}{rle["size"][0]},{w()}{rle["size"][1]}{w()}]',
                f'"counts":{counts}',
            ]
            if rng.random() < 0.2:
                parts.append(f'"extra":{_unknown_value(rng)}')
            rng.shuffle(parts)
            fields["segmentation"] = "{" + w() + ("," + w()).join(parts) + w() + "}"
    if rng.random() < 0.3:
        fields["id"] = str(rng.choice(["7", '"a7"', "null", "123456789012345678901234"]))
    if rng.random() < 0.3:
        fields["area"] = str(rng.choice(["null", "12", "12.5"]))
    if rng.random() < 0.3:
        fields["iscrowd"] = str(rng.choice(["0", "1", "true", "false"]))
    if rng.random() < 0.3:
        fields["ignore"] = str(rng.choice(["0", "1", "true", "false", "null"]))
    for i in range(int(rng.integers(0, 3))):
        fields[f"x_{i}"] = _unknown_value(rng)
    items = [f'{w()}"{k}"{w()}:{w()}{v}{w()}' for k, v in fields.items()]
    order = rng.permutation(len(items))
    return "{" + ",".join(items[i] for i in order) + "}"


def _chunk(records: list[str], rng) -> bytes:
    return ("[" + _ws(rng) + ("," + _ws(rng)).join(records) + _ws(rng) + "]").encode("utf-8")


@pytest.mark.parametrize("seed", range(6))
def test_reader_gives_the_columns_of_msgspec_records(seed):
    rng = np.random.default_rng(seed)
    masks = _masks(rng, 200)
    text = _chunk([_record(rng, m) for m in masks], rng)
    assert b"\\\\" in text  # escaped backslashes are read
    got = coco._read_rle_results(bytearray(text))
    assert got is not None
    _assert_same_columns(got, _msgspec_columns(text))


def test_reader_reads_an_empty_list_and_one_record():
    _assert_same_columns(coco._read_rle_results(bytearray(b" [ ] ")), _msgspec_columns(b" [ ] "))
    one = b'[{"image_id": 3, "category_id": 1, "score": 0.5, "bbox": [1, 2, 3, 4]}]'
    _assert_same_columns(coco._read_rle_results(bytearray(one)), _msgspec_columns(one))


_BASE = '{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4], "segmentation": {"size": [2, 2], "counts": "04"}%s}'


@pytest.mark.parametrize(
    "text",
    [
        '[{"image_id": "1", "category_id": 2, "score": 0.5}]',  # a string id
        '[{"image_id": 1.0, "category_id": 2, "score": 0.5}]',  # a float id
        '[{"image_id": 1, "category_id": true, "score": 0.5}]',
        '[{"image_id": 1234567890123456789, "category_id": 2, "score": 0.5}]',  # 19 digits
        '[{"image_id": 1, "image_id": 2, "category_id": 2, "score": 0.5}]',  # a key twice
        '[{"category_id": 2, "score": 0.5}]',  # no image_id
        '[{"image_id": 1, "category_id": 2}]',  # no score
        '[{"image_id": 1, "category_id": 2, "score": null}]',
        '[{"image_id": 1, "category_id": 2, "score": 1e400}]',  # out of range
        '[{"image_id": 1, "category_id": 2, "score": 12345678901234567890}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4, 5]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": ["1", 2, 3, 4]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "iscrowd": null}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "area": "big"}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "id": 1.5}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\\ud800"}]',  # a surrogate
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\\u00"}]',  # a short \\u escape
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\\a"}]',  # not an escape
        '[{"image\\u005fid": 1, "category_id": 2, "score": 0.5}]',  # an escaped key
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": [[1, 2, 3, 4, 5, 6]]}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": {"size": [2, 2], "counts": [4]}}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": {"counts": "04"}}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": {"size": [2, 2], "counts": "0\\n4"}}]',
        '[{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": {"size": [2.0, 2], "counts": "04"}}]',
        "[" + _BASE % ', "x": [' * 40 + "]" * 40 + "]",  # nested past the reader's depth
        "[" + _BASE % "" + ",]",  # bad JSON
        "[" + _BASE % "" + "] x",
        "[" + _BASE % ', "x": 01' + "]",
        "[" + _BASE % ', "x": tru' + "]",
        "[" + _BASE % ', "x": "open' + "]",
        '{"image_id": 1, "category_id": 2, "score": 0.5}',  # not a list
        "[1]",
    ],
)
def test_reader_gives_up_on_what_it_is_not_sure_of(text):
    assert READER.results(bytearray(text.encode("utf-8")), READER.MASKS) is None


@pytest.mark.parametrize(
    "data",
    [
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\\u0041"}]',
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "caf\xc3\xa9 \xe2\x82\xac"}]',
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xf0\x9f\x98\x80"}]',
    ],
)
def test_reader_reads_escapes_and_utf8_in_skipped_strings(data):
    _assert_same_columns(coco._read_rle_results(bytearray(data)), _msgspec_columns(data))


@pytest.mark.parametrize(
    "data",
    [
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xc3"}]',  # cut short
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xc0\xaf"}]',  # overlong
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xed\xa0\x80"}]',  # surrogate
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xf4\x90\x80\x80"}]',
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "x": "\xff"}]',
    ],
)
def test_reader_gives_up_on_bytes_that_are_not_utf8(data):
    assert READER.results(bytearray(data), READER.MASKS) is None


def test_a_chunk_the_reader_gives_up_on_is_read_by_msgspec():
    """An escape the reader does not read (a surrogate pair): the chunk's columns come
    from msgspec records."""
    text = (
        b"[" + (_BASE % ', "note": "\\ud83d\\ude00"').encode() + b"," + (_BASE % "").encode() + b"]"
    )
    assert READER.results(bytearray(text), READER.MASKS) is None
    _assert_same_columns(
        coco._chunk_columns(bytearray(text), 0, None, "p.json", masks=True), _msgspec_columns(text)
    )


def test_a_bad_string_leaves_the_chunk_to_the_generic_decoder():
    """A string that is not a mask of its size: the reader's columns are refused as the
    records' are, and the chunk is decoded generically (which locates the error later)."""
    text = ("[" + _BASE.replace('"04"', '"05"') % "" + "]").encode()
    with pytest.raises(coco._NotChecked):
        coco._read_rle_results(bytearray(text))
    cols = coco._chunk_columns(bytearray(text), 0, None, "p.json", masks=True)
    assert cols is not None and cols["segmentation"][0] is not None


def _mutations(seed: int, n: int):
    """Chunks of valid results with a few bytes inserted, removed or replaced."""
    rng = np.random.default_rng(seed)
    base = _chunk([_record(rng, m) for m in _masks(rng, 12)], rng)
    yield from mutations(base, seed, n)


def _outcome(read) -> tuple[str, dict | None]:
    try:
        cols = read()
    except coco._NotChecked:
        return "not a mask", None
    except Exception as exc:  # noqa: BLE001 - msgspec's refusals, whatever their type
        return type(exc).__name__, None
    return "columns", cols


def _check_mutations(seed: int, n: int) -> int:
    """Where the reader gives columns, msgspec gives the same; returns how many it read."""
    read = 0
    for text in _mutations(seed, n):
        got, cols = _outcome(lambda t=text: coco._read_rle_results(bytearray(t)))
        if got != "columns" or cols is None:
            continue
        read += 1
        want, expected = _outcome(lambda t=text: _msgspec_columns(t))
        assert want == "columns" and expected is not None, (text, want)
        _assert_same_columns(cols, expected)
    return read


@pytest.mark.parametrize("seed", range(3))
def test_mutated_chunks_read_as_msgspec_reads_them_or_not_at_all(seed):
    """A few bytes changed anywhere: the reader never gives columns msgspec would
    refuse or read otherwise (it gives up, or it agrees)."""
    assert _check_mutations(seed, 300) > 0


@pytest.mark.slow
def test_mutated_chunks_soak():
    assert sum(_check_mutations(seed, 3000) for seed in range(10, 20)) > 0
