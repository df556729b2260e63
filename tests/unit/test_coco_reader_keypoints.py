"""The compiled COCO JSON reader reads keypoints as msgspec's records give them, or gives up.

With ``--iou-type keypoints`` the reader (``iou_eval/io/_cocojson.c``, flag
``KEYPOINTS``) reads each annotation's ``keypoints`` list and
``num_keypoints`` beside its box (a result's box may be null or absent:
``loadRes``' keypoints branch).  On files written in every way JSON allows,
its columns equal bit for bit those of the msgspec path (the
``_KEYPOINT_DECODER`` records through the same column code); where the
msgspec path refuses a file (no keypoints, a length not a multiple of 3, an
empty list in a result, a null inside the list), the reader gives up and
msgspec says what is wrong.  Byte-level mutations of valid files are read as
msgspec reads them or not at all.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.errors import InputError
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.json_decode import quiet_decode

from ..skip_reasons import compiled_missing
from .json_spellings import listed, mutations, number, obj
from .test_coco_reader import READER, _annotation, _category, _image, _result, _same_columns

pytestmark = pytest.mark.skipif(
    READER is None, reason=compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
)

_KP_KEYS = ("boxes", "score", "image_id", "category_id", "kp_x", "kp_y", "kp_visible",
            "kp_length", "num_keypoints", "has_bbox")  # fmt: skip


def _keypoints(rng, k: int) -> str:
    """``k`` triplets, the third a label 0, 1 or 2 (or a confidence), spelled many ways."""
    values = []
    for _ in range(k):
        values += [number(rng), number(rng), str(rng.choice(["0", "1", "2", "0.5", number(rng)]))]
    return listed(values, rng)


def _with_keypoints(rng, text: str, gt: bool) -> str:
    """An annotation object ``text`` with keypoints and maybe num_keypoints added."""
    k = int(rng.choice([17, 5, 1])) if not gt or rng.random() < 0.95 else 0
    extra = f', "keypoints": {_keypoints(rng, k)}'
    if rng.random() < 0.7:
        extra += f', "num_keypoints": {rng.choice(["0", "3", "17", "null"])}'
    return text[:-1] + extra + "}"


def _kp_results(seed: int, n: int, extra: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    items = []
    for _ in range(n):
        text = _with_keypoints(rng, _result(rng, extra), gt=False)
        if rng.random() < 0.2:  # loadRes' keypoints branch: no box
            text = text.replace('"bbox"', '"x_bbox"', 1)
        items.append(text)
    return listed(items, rng).encode("utf-8")


def _msgspec_kp_results(data: bytes) -> dict:
    anns = quiet_decode(coco._KEYPOINT_DECODER, data)
    cols = coco.annotation_columns(anns, "p.json", "[{}]", "pred", keypoints=True)
    return {k: cols[k] for k in _KP_KEYS}


def _kp_dataset(seed: int, n_images: int = 30, n_annotations: int = 150) -> bytes:
    rng = np.random.default_rng(seed)
    image_ids = sorted({int(v) for v in rng.integers(0, 10**6, n_images)})
    cat_ids = sorted({int(v) for v in rng.integers(0, 100, 4)})
    anns = [
        _with_keypoints(rng, _annotation(rng, str(i + 1), image_ids, cat_ids), gt=True)
        for i in range(n_annotations)
    ]
    parts = {
        "images": listed([_image(rng, i) for i in image_ids], rng),
        "annotations": listed(anns, rng),
        "categories": listed([_category(rng, c) for c in cat_ids], rng),
    }
    return obj(rng, parts, extra=2).encode("utf-8")


def _msgspec_kp_dataset(data: bytes, monkeypatch) -> coco._Read:
    import iou_eval.io.compiled

    with monkeypatch.context() as m:
        m.setattr(iou_eval.io.compiled, "json_reader", lambda: None)
        return coco._read("g.json", "gt", LoadOptions(keypoints=True), data)


def _same_read(got: coco._Read, want: coco._Read) -> None:
    _same_columns(got.cols, want.cols)
    assert got.images.ids == want.images.ids and got.categories.ids == want.categories.ids


@pytest.mark.parametrize("seed", range(6))
def test_keypoint_results_read_as_msgspec_records(seed):
    data = _kp_results(seed, 200)
    got = coco.read_keypoint_results(data)
    assert got is not None
    _same_columns(got, _msgspec_kp_results(data))


@pytest.mark.parametrize("seed", range(4))
def test_keypoint_ground_truth_read_as_msgspec_records(seed, monkeypatch):
    data = _kp_dataset(seed)
    got = coco._read_compiled_dataset(data, "g.json", keypoints=True)
    assert got is not None
    _same_read(got, _msgspec_kp_dataset(data, monkeypatch))


def test_keypoint_results_read_in_parts_by_threads(tmp_path, monkeypatch):
    """Cut at element boundaries and read by several threads: the columns of one read."""
    from iou_eval.io.loaders import json_decode

    path = tmp_path / "p.json"
    data = _kp_results(11, 1500, extra=1)  # no unknown keys: no "}, {" inside a value
    path.write_bytes(data)
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", 2000)
    want = _msgspec_kp_results(data)
    for workers in (1, 2, 3):
        got = json_decode.threaded_results(str(path), coco.read_keypoint_results, workers)
        assert got is not None
        _same_columns(got, want)
    cols = coco._read(str(path), "pred", LoadOptions(keypoints=True, workers=2)).cols
    _same_columns({k: cols[k] for k in _KP_KEYS}, want)


def test_an_empty_keypoint_results_list_and_ground_truth(monkeypatch):
    _same_columns(coco.read_keypoint_results(b"[]"), _msgspec_kp_results(b"[]"))
    data = b'{"images": [], "annotations": [], "categories": []}'
    got = coco._read_compiled_dataset(data, "g.json", keypoints=True)
    _same_read(got, _msgspec_kp_dataset(data, monkeypatch))


_RES = '[{"image_id": 1, "category_id": 1, "score": 0.5%s}]'
_GT = '{"images": [{"id": 1}], "categories": [{"id": 1}], "annotations": [%s]}'
_ANN = '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "id": 1%s}'


@pytest.mark.parametrize(
    "text",
    [
        _RES % "",  # no keypoints
        _RES % ', "keypoints": null',
        _RES % ', "keypoints": []',  # a result with no keypoints
        _RES % ', "keypoints": [1, 2]',
        _RES % ', "keypoints": [1, 2, null]',
        _RES % ', "keypoints": [1, 2, "2"]',
        _RES % ', "keypoints": [1, 2, 1e999]',
        _RES % ', "keypoints": [1, 2, 1], "keypoints": [1, 2, 1]',
        _RES % ', "keypoints": [1, 2, 1], "num_keypoints": 1.5',
        _RES % ', "keypoints": [1, 2, 1], "num_keypoints": true',
        _RES % ', "keypoints": [1, 2, 1], "bbox": [1, 2, 3]',
    ],
)
def test_keypoint_results_the_reader_gives_up_on(text):
    assert READER.results(text.encode("utf-8"), READER.KEYPOINTS) is None


@pytest.mark.parametrize(
    "text",
    [
        _GT % _ANN % "",  # no keypoints
        _GT % _ANN % ', "keypoints": [1, 2, 1, 4]',
        _GT % _ANN.replace("[1, 2, 3, 4]", "null") % ', "keypoints": [1, 2, 1]',  # no box
        _GT % _ANN % ', "keypoints": [1, 2, 1], "num_keypoints": "1"',
    ],
)
def test_keypoint_ground_truths_the_reader_gives_up_on(text):
    assert READER.dataset(text.encode("utf-8"), READER.KEYPOINTS) is None


def test_without_the_flag_keypoints_are_skipped_keys():
    text = _RES % ', "bbox": [1, 2, 3, 4], "keypoints": [1], "keypoints": null'
    read = READER.results(text.encode("utf-8"))
    assert read is not None and "kp_x" not in read and "kp_values" not in read


def test_a_ground_truth_of_no_keypoints_is_read_and_counted(monkeypatch):
    """``keypoints: []`` in a ground truth is allowed (K = 0), ``num_keypoints`` absent: -1."""
    data = (_GT % _ANN % ', "keypoints": []').encode("utf-8")
    got = coco._read_compiled_dataset(data, "g.json", keypoints=True)
    assert got is not None
    assert got.cols["kp_length"].tolist() == [0] and got.cols["num_keypoints"].tolist() == [-1]
    _same_read(got, _msgspec_kp_dataset(data, monkeypatch))


def test_a_refused_file_still_says_what_is_wrong(tmp_path):
    """The reader gives up; the msgspec path names the place."""
    path = tmp_path / "p.json"
    path.write_text(_RES % ', "keypoints": [1, 2]')
    with pytest.raises(InputError, match=r"multiple of 3"):
        coco._read(str(path), "pred", LoadOptions(keypoints=True))


@pytest.mark.parametrize("seed", range(2))
def test_mutated_keypoint_files_read_as_msgspec_reads_them_or_not_at_all(seed, monkeypatch):
    def outcome(read):
        try:
            value = read()
        except Exception as exc:  # noqa: BLE001 - msgspec's refusals, whatever their type
            return type(exc).__name__, None
        return ("columns", value) if value is not None else ("gave up", None)

    read = 0
    for text in mutations(_kp_results(seed, 6), seed, 300):
        got, cols = outcome(lambda t=text: coco.read_keypoint_results(t))
        if got == "columns":
            read += 1
            want, expected = outcome(lambda t=text: _msgspec_kp_results(t))
            assert want == "columns", (text, want)
            _same_columns(cols, expected)
    for text in mutations(_kp_dataset(seed, n_images=3, n_annotations=4), seed, 200):
        got, value = outcome(lambda t=text: coco._read_compiled_dataset(t, "g.json", True))
        if got == "columns":
            read += 1
            want, expected = outcome(lambda t=text: _msgspec_kp_dataset(t, monkeypatch))
            assert want == "columns", (text, want)
            _same_read(value, expected)
    assert read > 0


# Short decimals read in one pass (at most 15 digits, no exponent) and their
# neighbours read by the general conversion: the 15th and 16th digit, signs,
# zeros, whole numbers, exponents right after a short decimal.
_BOUNDARY_NUMBERS = [
    "0", "-0", "0.0", "-0.0", "-0.000", "5", "-5", "0.5", "-0.5", "76.31", "0.437",
    "123456789012345", "1234567890123456", "-123456789012345", "9999999999999999",
    "12345678901234.5", "123456789012345.6", "0.12345678901234", "0.123456789012345",
    "0.1234567890123456", "1.00000000000001", "9.99999999999999", "99999999999999.9",
    "0.000000000000001", "0.0000000000000001", "1.5e3", "1.5E-3", "15e0", "0.5e+1",
    "-76.31e2", "1.0", "100.000000000000", "1000000000000000",
]  # fmt: skip


def test_short_decimals_at_the_digit_limit_read_as_msgspec_reads_them():
    """Keypoints, boxes and scores spelled at the one-pass reader's limits, bit for bit."""
    kps = [a for t in _BOUNDARY_NUMBERS for a in (t, t, "2")]
    items = [
        f'{{"image_id": 1, "category_id": 1, "bbox": [{t}, 1, {t}, 2], "score": {t}, '
        f'"keypoints": [{", ".join(kps)}]}}'
        for t in _BOUNDARY_NUMBERS
    ]
    data = ("[" + ",".join(items) + "]").encode()
    got = coco.read_keypoint_results(data)
    assert got is not None
    _same_columns(got, _msgspec_kp_results(data))


@pytest.mark.parametrize("bad", ["01.5", "1.", "-", "-.5", ".5", "1.5.3", "00", "1e", "0x1"])
def test_malformed_short_numbers_are_given_up_on(bad):
    text = _RES % f', "keypoints": [1, 2, {bad}]'
    assert READER.results(text.encode("utf-8"), READER.KEYPOINTS) is None


def test_keypoint_lists_with_line_breaks_and_tabs_read_as_msgspec_reads_them():
    kps = "[ 1.5 ,\n 2,\t0.25\r\n,3 , 4.75\n,\n2\t]"
    data = f'[{{"image_id": 1, "category_id": 1, "score": 0.5, "keypoints": {kps}}}]'.encode()
    got = coco.read_keypoint_results(data)
    assert got is not None
    _same_columns(got, _msgspec_kp_results(data))
    assert got["kp_x"].tolist() == [1.5, 3.0] and got["kp_y"].tolist() == [2.0, 4.75]
    assert got["kp_visible"].tolist() == [True, True]


@pytest.mark.parametrize("slot", [0, 1, 2])
def test_long_numbers_converted_later_land_in_their_keypoint_column(slot):
    """Numbers only CPython converts (17 digits, exponents), as x, y or label of any
    keypoint: each lands in the x, y or label column at its keypoint's place."""
    long = [
        "0.12345678901234567",
        "1e-400",
        "0.1234567890123456789012345",
        "-0.0e5",
        "7.000000000000000000000001",
    ]
    rows, want = [], []
    for r, text in enumerate(long):
        values = ["1", "2", "1", "3", "4", "0"]
        values[3 * (r % 2) + slot] = text
        rows.append(
            f'{{"image_id": 1, "category_id": 1, "score": 0.5, "keypoints": [{", ".join(values)}]}}'
        )
        want.append([float(v) for v in values])
    got = coco.read_keypoint_results(f"[{', '.join(rows)}]".encode())
    assert got is not None
    trip = np.array(want).reshape(-1, 3)
    assert got["kp_x"].tolist() == trip[:, 0].tolist()
    assert got["kp_y"].tolist() == trip[:, 1].tolist()
    assert got["kp_visible"].tolist() == (trip[:, 2] > 0).tolist()


def test_keypoint_results_read_in_parts_by_threads_and_joined(tmp_path, monkeypatch):
    """Keypoint results cut into runs read by threads, the runs' columns joined with
    their pages handed back after each large column: the columns of one read."""
    from iou_eval.io.loaders import json_decode

    path = tmp_path / "p.json"
    data = _kp_results(4, 400)
    path.write_bytes(data)
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", 2000)
    monkeypatch.setattr(json_decode, "_RELEASE_BYTES", 64)
    released: list[int] = []
    monkeypatch.setattr(json_decode, "release_free_memory", lambda: released.append(1))
    want = coco.read_keypoint_results(data)
    assert want is not None
    for workers in (1, 2, 3):
        released.clear()
        got = json_decode.threaded_results(str(path), coco.read_keypoint_results, workers)
        assert got is not None and set(got) == set(want)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)
        assert released  # kp_x, kp_y, boxes: over 64 bytes each
