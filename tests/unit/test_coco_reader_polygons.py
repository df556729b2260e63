"""The compiled COCO JSON reader reads a ground truth's polygons flat, as msgspec's path reads them, or gives up.

In masks mode a ground truth's ``segmentation`` values are read by the
reader (``iou_eval/io/_cocojson.c``, flag ``POLYGONS``): a list of polygons
goes to flat columns (every number back to back, a count per polygon and per
annotation), any other value (an RLE dict, ``[]``, ``null``) is kept for
msgspec to decode from its place in the file.  The masks rasterised from
those columns equal the masks of the values msgspec decodes, byte for byte,
on files written in every way JSON allows; what the reader is not sure of
(a list that is not of polygons, a non-finite number, a key twice) it gives
up on, and msgspec's path reads or refuses the file as before.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.geometry.masks import FlatPolygons, encode_segmentations
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.common import LoadOptions

from ..skip_reasons import compiled_missing
from .json_spellings import listed, mutations, number, obj
from .test_coco_reader import READER, _category, _image, _same_columns

pytestmark = pytest.mark.skipif(
    READER is None, reason=compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
)

_MASK_KEYS = ("segmentation", "polygons")


def _segmentation(rng, wild: bool) -> str:
    r = rng.random()
    if r < 0.1:
        return "null"
    if r < 0.15:
        return "[]"
    if r < 0.25:
        return '{"size": [48, 64], "counts": [5, 12, 3055]}'
    if r < 0.3:
        return '{"counts": "U??Q10000000000000000000000000000000000000kb1", "size": [48, 64]}'
    lens = [2 * int(rng.integers(2, 9)) for _ in range(int(rng.integers(1, 4)))]
    polys = [listed([_coordinate(rng, wild) for _ in range(n)], rng) for n in lens]
    return listed(polys, rng)


def _coordinate(rng, wild: bool) -> str:
    if wild and rng.random() < 0.3:
        return number(rng)
    return str(
        rng.choice([str(int(rng.integers(-5, 70))), f"{rng.uniform(-5, 70):.2f}", "0", "-0"])
    )


def _annotation(rng, ann_id: int, image_ids: list[int], cat_ids: list[int], wild: bool) -> str:
    fields = {
        "image_id": str(rng.choice(image_ids)),
        "category_id": str(rng.choice(cat_ids)),
        "id": str(ann_id),
        "iscrowd": str(rng.choice(["0", "1"])),
        "area": str(rng.choice(["null", "12.5", "40"])),
    }
    if rng.random() < 0.8:
        fields["bbox"] = str(rng.choice(["null", "[1, 2, 3, 4]", "[0.5, 1.25, 30, 20.75]"]))
    if rng.random() < 0.9:
        fields["segmentation"] = _segmentation(rng, wild)
    return obj(rng, fields)


def _dataset(seed: int, n_images: int = 6, n_annotations: int = 40, wild: bool = True) -> bytes:
    """A ground truth with masks; ``wild``: some coordinates of any size (most masks refused)."""
    rng = np.random.default_rng(seed)
    image_ids = sorted({int(v) for v in rng.integers(0, 1000, n_images)})
    cat_ids = [1, 2, 3]
    anns = [_annotation(rng, i + 1, image_ids, cat_ids, wild) for i in range(n_annotations)]
    parts = {
        "images": listed([_image(rng, i) for i in image_ids], rng),
        "annotations": listed(anns, rng),
        "categories": listed([_category(rng, c) for c in cat_ids], rng),
    }
    return obj(rng, parts, extra=2).encode("utf-8")


def _msgspec(data: bytes, monkeypatch) -> coco._Read:
    import iou_eval.io.compiled

    with monkeypatch.context() as m:
        m.setattr(iou_eval.io.compiled, "json_reader", lambda: None)
        return coco._read("g.json", "gt", LoadOptions(masks=True), data)


def _compiled(data: bytes) -> coco._Read | None:
    return coco._read_compiled_dataset(data, "g.json", polygons=True)


def _masks(read: coco._Read):
    """The masks at 48 x 64: ``("masks", strings, areas, boxes, warnings)`` or ``("error", message)``."""
    cols = read.cols
    n = len(cols["segmentation"])
    h, w = np.full(n, 48.0), np.full(n, 64.0)
    try:
        column, notes = encode_segmentations(
            list(cols["segmentation"]), h, w, path="g.json", polygons=cols.get("polygons")
        )
    except InputError as exc:
        return ("error", str(exc))
    strings = [bytes(s) for s in column.strings.values(np.arange(n))]
    return ("masks", strings, column.area.tobytes(), column.box.tobytes(), notes)


def _same_masks_read(got: coco._Read, want: coco._Read) -> None:
    assert "polygons" in got.cols and "polygons" not in want.cols
    mine = {k: v for k, v in got.cols.items() if k not in _MASK_KEYS}
    theirs = {k: v for k, v in want.cols.items() if k not in _MASK_KEYS}
    _same_columns(mine, theirs)
    present = got.cols["polygons"].present
    for i, (a, b) in enumerate(
        zip(got.cols["segmentation"], want.cols["segmentation"], strict=True)
    ):
        if present[i]:
            assert a is True and isinstance(b, list) and b
        else:
            assert a == b and type(a) is type(b), i
    assert _masks(got) == _masks(want)


@pytest.mark.parametrize(("seed", "wild"), [(s, s % 2 == 0) for s in range(8)])
def test_polygons_read_flat_give_the_masks_of_msgspecs_values(seed, wild, monkeypatch):
    data = _dataset(seed, wild=wild)
    got = _compiled(data)
    assert got is not None
    assert got.cols["polygons"].present.any()
    _same_masks_read(got, _msgspec(data, monkeypatch))


def test_null_absent_empty_and_rle_segmentations_stay_values(monkeypatch):
    data = (
        b'{"images": [{"id": 1, "width": 64, "height": 48}], "categories": [{"id": 1}], '
        b'"annotations": [{"image_id": 1, "category_id": 1, "id": 1, "segmentation": null}, '
        b'{"image_id": 1, "category_id": 1, "id": 2}, '
        b'{"image_id": 1, "category_id": 1, "id": 3, "segmentation": []}, '
        b'{"image_id": 1, "category_id": 1, "id": 4, '
        b'"segmentation": {"size": [48, 64], "counts": [3, 4, 3065]}}, '
        b'{"image_id": 1, "category_id": 1, "id": 5, "segmentation": [[1, 2, 30, 2, 30, 40]]}]}'
    )
    got = _compiled(data)
    assert got is not None
    assert list(got.cols["segmentation"][:4]) == [
        None, None, [], {"size": [48, 64], "counts": [3, 4, 3065]}
    ]  # fmt: skip
    assert got.cols["polygons"].parts.tolist() == [0, 0, 0, 0, 1]
    assert got.cols["polygons"].values.tolist() == [1.0, 2.0, 30.0, 2.0, 30.0, 40.0]
    _same_masks_read(got, _msgspec(data, monkeypatch))


_ANN = (
    '{"images": [{"id": 1, "width": 64, "height": 48}], "categories": [{"id": 1}], '
    '"annotations": [{"image_id": 1, "category_id": 1, "id": 1, %s}]}'
)


@pytest.mark.parametrize(
    "text",
    [
        _ANN % '"segmentation": [1, 2, 3, 4, 5, 6]',  # one polygon not in a list
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, "6"]]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, true]]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, null]]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, [6]]]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, 6], 7]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, 1e400]]',
    ],
)
def test_lists_that_are_not_polygons_are_left_to_msgspec(text):
    assert _compiled(text.encode()) is None


@pytest.mark.parametrize(
    "text",
    [
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, 6]], "segmentation": []',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, 6],]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5 6]]',
        _ANN % '"segmentation": [[1, 2, 3, 4, 5, 6]',
        _ANN % '"segmentation": {"counts": [1, 2], "size": [1, 3]',
    ],
)
def test_segmentations_the_reader_gives_up_on(text):
    assert READER.dataset(text.encode(), READER.POLYGONS) is None


@pytest.mark.parametrize(
    ("segmentation", "message"),
    [
        ("[1, 2, 3, 4, 5, 6]", "got a list of numbers"),
        ('[[1, 2, 3, 4, 5, "x"]]', "polygon coordinates must be numbers"),
        ("[[1, 2, 3, 4, 5, 1e400]]", "Number out of range"),
        ("[[1, 2, 3, 4, 5]]", "even count of numbers"),
        ("[[1, 2, 3, 4, 5, 6], []]", "at least 3 points"),
        ("[[1, 2, 3, 4, 5, 1e12]]", "is beyond"),
        ('"abc"', "segmentation must be a list of polygons or an RLE dict"),
        ('{"size": [48, 64]}', "needs 'counts'"),
    ],
)
def test_a_refused_segmentation_still_says_what_is_wrong(tmp_path, segmentation, message):
    path = tmp_path / "g.json"
    path.write_text(_ANN % f'"segmentation": {segmentation}')
    with pytest.raises(InputError, match=message) as caught:
        coco.load_coco(str(path), "gt", LoadOptions(masks=True))
    assert "annotations[0].segmentation" in str(caught.value)


@pytest.mark.parametrize("seed", range(2))
def test_mutated_mask_ground_truths_read_as_msgspec_reads_them_or_not_at_all(seed, monkeypatch):
    def outcome(read):
        try:
            value = read()
        except Exception as exc:  # noqa: BLE001 - msgspec's refusals, whatever their type
            return type(exc).__name__, None
        return ("columns", value) if value is not None else ("gave up", None)

    read = 0
    for text in mutations(_dataset(seed, n_images=3, n_annotations=6), seed, 400):
        got, value = outcome(lambda t=text: _compiled(t))
        if got == "columns":
            read += 1
            want, expected = outcome(lambda t=text: _msgspec(t, monkeypatch))
            assert want == "columns", (text, want)
            _same_masks_read(value, expected)
    assert read > 0


def test_every_truncation_of_a_mask_ground_truth_is_given_up_on():
    data = _dataset(0, n_images=2, n_annotations=4)
    assert READER.dataset(data, READER.POLYGONS) is not None
    assert all(READER.dataset(data[:cut], READER.POLYGONS) is None for cut in range(len(data) - 1))


def test_flat_polygons_taken_in_any_order_keep_each_rows_polygons():
    values = np.arange(20, dtype=np.float64)
    flat = FlatPolygons(values, np.array([6, 4, 6, 4], dtype=np.int64), np.array([2, 0, 1, 1]))
    taken = flat.take(np.array([3, 0, 1, 0]))
    assert taken.parts.tolist() == [1, 2, 0, 2]
    assert taken.lengths.tolist() == [4, 6, 4, 6, 4]
    assert taken.values.tolist() == [*range(16, 20), *range(10), *range(10)]
    assert flat.take(slice(None)) is flat
    assert flat.take(np.array([False, False, True, False])).values.tolist() == list(range(10, 16))


def test_mask_ground_truth_loaded_both_ways_gives_the_same_masks(tmp_path, monkeypatch):
    import iou_eval.io.compiled
    from iou_eval.geometry.segm import PendingMasks

    path = tmp_path / "g.json"
    path.write_bytes(_dataset(3, wild=False))
    fast = coco.load_coco(str(path), "gt", LoadOptions(masks=True))
    with monkeypatch.context() as m:
        m.setattr(iou_eval.io.compiled, "json_reader", lambda: None)
        slow = coco.load_coco(str(path), "gt", LoadOptions(masks=True))
    assert isinstance(fast.masks, PendingMasks) and isinstance(slow.masks, PendingMasks)
    assert fast.masks.polygons is not None and slow.masks.polygons is None
    h = np.full(len(fast.masks.segs), 48.0)
    w = np.full(len(fast.masks.segs), 64.0)
    a, notes_a = fast.masks.encode(h, w)
    b, notes_b = slow.masks.encode(h, w)
    rows = np.arange(len(a))
    assert [bytes(s) for s in a.strings.values(rows)] == [bytes(s) for s in b.strings.values(rows)]
    assert notes_a == notes_b
