"""The compiled COCO JSON reader reads LVIS's federated fields as msgspec's path gives them, or gives up.

An LVIS ground truth's images carry ``neg_category_ids`` and
``not_exhaustive_category_ids`` and its categories a ``frequency``.  The
reader (``iou_eval/io/_cocojson.c``) reads them into columns (a length per
image and the ids back to back; a code per category) that
:mod:`iou_eval.io.loaders.lvis_lists` turns into the loader's tuples.  On
files written in every way JSON allows they equal what the msgspec path
gives after its own checks (``_category_lists``, ``_frequencies``); on what
the reader is not sure of (a string or float id, a nested list, another
frequency, a key twice) it gives up and msgspec reads, normalizes or refuses
the file.  Byte-level mutations of valid files are read as msgspec reads
them or not at all.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.lvis_lists import frequencies, id_lists

from ..skip_reasons import compiled_missing
from .json_spellings import listed, mutations, obj, ws
from .test_coco_reader import READER, _annotation, _category, _image, _msgspec_dataset, _same_read

pytestmark = pytest.mark.skipif(
    READER is None, reason=compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
)

_LISTS = ("neg_category_ids", "not_exhaustive_category_ids")


def _id_list(rng, cat_ids: list[int]) -> str:
    """A list of category ids (some not categories of the file), or null."""
    if rng.random() < 0.1:
        return "null"
    ids = [str(rng.choice(cat_ids + [-3, 0, 999999999999])) for _ in range(int(rng.integers(0, 6)))]
    return "[" + ws(rng) + ("," + ws(rng)).join(ids) + ws(rng) + "]"


def _lvis_image(rng, image_id: int, cat_ids: list[int]) -> str:
    text = _image(rng, image_id)
    for name in _LISTS:
        if rng.random() < 0.8:
            text = text[:-1] + f', "{name}": {_id_list(rng, cat_ids)}' + "}"
    return text


def _lvis_category(rng, cat_id: int) -> str:
    text = _category(rng, cat_id)
    if rng.random() < 0.9:
        spelled = str(rng.choice(['"r"', '"c"', '"f"', "null"]))
        text = text[:-1] + f', "frequency": {spelled}' + "}"
    return text


def _lvis_dataset(seed: int, n_images: int = 30, n_annotations: int = 120) -> bytes:
    rng = np.random.default_rng(seed)
    image_ids = sorted({int(v) for v in rng.integers(0, 10**6, n_images)})
    cat_ids = sorted({int(v) for v in rng.integers(0, 100, 8)})
    anns = [_annotation(rng, str(i + 1), image_ids, cat_ids) for i in range(n_annotations)]
    parts = {
        "images": listed([_lvis_image(rng, i, cat_ids) for i in image_ids], rng),
        "annotations": listed(anns, rng),
        "categories": listed([_lvis_category(rng, c) for c in cat_ids], rng),
    }
    return obj(rng, parts, extra=2).encode("utf-8")


def _federated(read: coco._Read) -> tuple:
    """The lists and frequencies as the loader keeps them, after its checks."""
    lists = tuple(coco._category_lists(read.images, name, "g.json") for name in _LISTS)
    return (*lists, coco._frequencies(read.categories, "g.json"))


def _same_lvis(got: coco._Read, want: coco._Read) -> None:
    _same_read(got, want)
    mine, theirs = _federated(got), _federated(want)
    assert mine == theirs
    for a, b in zip(mine[:2], theirs[:2], strict=True):  # ints stay ints
        assert [type(v) for t in a or () for v in t] == [type(v) for t in b or () for v in t]


@pytest.mark.parametrize("seed", range(6))
def test_lvis_ground_truth_read_as_msgspec_records(seed, monkeypatch):
    data = _lvis_dataset(seed)
    got = coco._read_compiled_dataset(data, "g.json")
    assert got is not None
    _same_lvis(got, _msgspec_dataset(data, monkeypatch))


def test_lists_of_every_image_absent_or_null_are_no_lists(monkeypatch):
    data = (
        b'{"images": [{"id": 1}, {"id": 2, "neg_category_ids": null}], "annotations": [],'
        b' "categories": [{"id": 1, "frequency": null}, {"id": 2}]}'
    )
    got = coco._read_compiled_dataset(data, "g.json")
    assert got is not None
    assert _federated(got) == (None, None, None)
    _same_lvis(got, _msgspec_dataset(data, monkeypatch))


def test_an_image_without_a_list_has_an_empty_one_beside_one_with_a_list(monkeypatch):
    data = (
        b'{"images": [{"id": 1}, {"id": 2, "neg_category_ids": [3, 1]}, '
        b'{"id": 3, "neg_category_ids": []}, {"id": 4, "not_exhaustive_category_ids": [7]}], '
        b'"annotations": [], "categories": [{"id": 1, "frequency": "f"}, {"id": 3}]}'
    )
    got = coco._read_compiled_dataset(data, "g.json")
    assert got is not None
    assert _federated(got) == (((), (3, 1), (), ()), ((), (), (), (7,)), ("f", None))
    _same_lvis(got, _msgspec_dataset(data, monkeypatch))


def test_the_columns_to_tuples():
    lengths = np.array([2, -1, 0, 1], dtype=np.int64)
    assert id_lists(lengths, np.array([5, 6, 7], dtype=np.int64)) == ((5, 6), (), (), (7,))
    assert id_lists(np.array([-1, -1], dtype=np.int64), np.zeros(0, dtype=np.int64)) is None
    assert frequencies(np.array([0, -1, 2, 1], dtype=np.int8)) == ("r", None, "f", "c")
    assert frequencies(np.array([-1], dtype=np.int8)) is None


_IMG = '{"images": [{"id": 1, %s}], "annotations": [], "categories": [{"id": 1}]}'
_CAT = '{"images": [{"id": 1}], "annotations": [], "categories": [{"id": 1, %s}]}'


@pytest.mark.parametrize(
    "text",
    [
        _IMG % '"neg_category_ids": ["1"]',  # a string id: msgspec's path normalizes it
        _IMG % '"neg_category_ids": [1.0]',
        _IMG % '"neg_category_ids": [1e0]',
        _IMG % '"neg_category_ids": [true]',
        _IMG % '"neg_category_ids": [null]',
        _IMG % '"neg_category_ids": [[1]]',
        _IMG % '"neg_category_ids": [12345678901234567890]',
        _IMG % '"neg_category_ids": 1',
        _IMG % '"neg_category_ids": {"a": 1}',
        _IMG % '"neg_category_ids": "1, 2"',
        _IMG % '"neg_category_ids": [1,]',
        _IMG % '"neg_category_ids": [1 2]',
        _IMG % '"neg_category_ids": [1], "neg_category_ids": [2]',
        _IMG % '"not_exhaustive_category_ids": [1.5]',
        _IMG % '"not_exhaustive_category_ids": [], "not_exhaustive_category_ids": []',
        _CAT % '"frequency": "x"',
        _CAT % '"frequency": "rare"',
        _CAT % '"frequency": ""',
        _CAT % '"frequency": "R"',
        _CAT % '"frequency": "\\u0072"',  # "r" escaped: msgspec's path reads it
        _CAT % '"frequency": 1',
        _CAT % '"frequency": ["r"]',
        _CAT % '"frequency": "r", "frequency": "c"',
    ],
)
def test_lvis_fields_the_reader_gives_up_on(text):
    assert READER.dataset(text.encode("utf-8")) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_IMG % '"neg_category_ids": 1', "must be a list of category ids"),
        (_IMG % '"not_exhaustive_category_ids": [null]', "not_exhaustive_category_ids"),
        (_CAT % '"frequency": "x"', "frequency must be one of r, c, f"),
    ],
)
def test_a_refused_lvis_file_still_says_what_is_wrong(tmp_path, text, message):
    from iou_eval.io.loaders.common import LoadOptions

    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        coco.load_coco(str(path), "gt", LoadOptions())


@pytest.mark.parametrize("seed", range(2))
def test_mutated_lvis_ground_truths_read_as_msgspec_reads_them_or_not_at_all(seed, monkeypatch):
    def outcome(read):
        try:
            value = read()
            if value is not None:
                _federated(value)  # the loader's checks, where msgspec's path may refuse
        except Exception as exc:  # noqa: BLE001 - msgspec's refusals, whatever their type
            return type(exc).__name__, None
        return ("columns", value) if value is not None else ("gave up", None)

    read = 0
    for text in mutations(_lvis_dataset(seed, n_images=4, n_annotations=3), seed, 400):
        got, value = outcome(lambda t=text: coco._read_compiled_dataset(t, "g.json"))
        if got == "columns":
            read += 1
            want, expected = outcome(lambda t=text: _msgspec_dataset(t, monkeypatch))
            assert want == "columns", (text, want)
            _same_lvis(value, expected)
    assert read > 0


def test_every_truncation_of_an_lvis_file_is_given_up_on():
    data = _lvis_dataset(0, n_images=3, n_annotations=2)
    assert READER.dataset(data) is not None
    assert all(READER.dataset(data[:cut]) is None for cut in range(len(data) - 1))


def test_a_long_list_of_ids_is_read_whole():
    ids = list(range(-50_000, 50_000))
    text = _IMG % f'"neg_category_ids": {ids}'
    read = coco._read_compiled_dataset(text.encode(), "g.json")
    assert read is not None
    assert coco._category_lists(read.images, "neg_category_ids", "g.json") == (tuple(ids),)
