"""COCO loader: the chunked reading of large results lists agrees with a whole-file decode."""

from __future__ import annotations

import json

import numpy as np
import pytest

import iou_eval.io.loaders.coco as coco
from iou_eval.io.loaders import LoadOptions

from ..parity.synth import make_scene


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 300 bytes, so that test-sized files take the chunked path."""
    monkeypatch.setattr(coco, "_CHUNK_BYTES", 300)


def whole(path: str):
    return coco._decode(path, open(path, "rb").read())


def test_chunked_columns_equal_whole_decode(small_chunks, write_json):
    _, preds = make_scene(4)
    path = write_json("p.json", preds)
    cols = coco.chunked_columns(path)
    assert cols is not None
    ref = whole(path)
    assert np.array_equal(cols["boxes"], np.array([a.bbox for a in ref]))
    assert np.array_equal(cols["score"], np.array([a.score for a in ref]))
    assert np.array_equal(cols["image_id"], np.array([a.image_id for a in ref]))


def test_chunked_load_gives_the_same_dataset(small_chunks, write_json, monkeypatch):
    _, preds = make_scene(5)
    path = write_json("p.json", preds)
    chunked = coco.load_coco(path, "pred", LoadOptions())
    monkeypatch.setattr(
        coco, "chunked_columns", lambda p, workers=1, masks=False, executor=None: None
    )
    plain = coco.load_coco(path, "pred", LoadOptions())
    for name in ("xyxy", "score", "image_idx", "category_idx", "origin"):
        assert np.array_equal(getattr(chunked, name), getattr(plain, name)), name


def test_boundary_text_inside_a_string_falls_back(small_chunks, tmp_path):
    """A string holding '}, {' can mislead the cut: decoding proves it wrong, the file still reads."""
    preds = [
        {
            "image_id": i,
            "category_id": 1,
            "bbox": [1, 2, 3, 4],
            "score": 0.5,
            "note": "x" * 280 + '}, {"image_id": 99',
        }  # fmt: skip
        for i in range(20)
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    ds = coco.load_coco(str(path), "pred", LoadOptions())
    assert len(ds) == 20 and set(ds.images.ids) == set(range(20))


def test_rle_backslashes_are_decoded_in_chunks(small_chunks, tmp_path):
    """Compressed RLE strings hold backslashes (escaped in JSON): chunking still applies."""
    preds = [{"image_id": i, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5,
              "segmentation": {"size": [9, 9], "counts": "a\\b" * 50}} for i in range(20)]  # fmt: skip
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    cols = coco.chunked_columns(str(path))
    assert cols is not None and cols["image_id"].tolist() == list(range(20))


def test_an_escaped_boundary_inside_a_string_falls_back_to_a_whole_decode(small_chunks, tmp_path):
    preds = [{"image_id": i, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5,
              "note": "a\\b" * 40 + '\\"}, {"image_id": 7'} for i in range(20)]  # fmt: skip
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    assert coco.chunked_columns(str(path)) is None
    ds = coco.load_coco(str(path), "pred", LoadOptions())
    assert sorted(ds.images.ids) == list(range(20))


def test_errors_in_a_chunked_file_are_located_as_in_a_whole_one(small_chunks, tmp_path):
    preds = [
        {"image_id": i, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5} for i in range(40)
    ]
    preds[33]["bbox"] = [1, 2, 3]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    with pytest.raises(coco.InputError) as err:
        coco.load_coco(str(path), "pred", LoadOptions())
    assert "[33].bbox" in str(err.value)


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_chunks_shared_among_workers_give_the_same_columns(small_chunks, write_json, workers):
    _, preds = make_scene(9)
    path = write_json("p.json", preds)
    one = coco.chunked_columns(path, workers=1)
    many = coco.chunked_columns(path, workers=workers)
    assert one is not None and many is not None
    assert one.keys() == many.keys()
    for k in one:
        assert np.array_equal(one[k], many[k]), k
    assert len(one["score"]) == len(preds)


def test_an_error_in_a_workers_chunk_is_located_as_in_a_whole_file(small_chunks, tmp_path):
    preds = [
        {"image_id": i, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5} for i in range(60)
    ]
    del preds[57]["score"]  # in the last chunks: a child's share with two workers
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    assert coco.chunked_columns(str(path), workers=2) is None
    with pytest.raises(coco.InputError) as err:
        coco.load_coco(str(path), "pred", LoadOptions(workers=2))
    assert "[57]" in str(err.value) and "score" in str(err.value)


@pytest.mark.parametrize("workers", [1, 2])
def test_chunked_rle_strings_reach_the_parent_in_one_shared_buffer(
    small_chunks, write_json, workers
):
    """Each chunk puts its RLE strings at its own offset of one buffer the size of
    the file (in the worker that read it): the strings read back are the file's."""
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(3)
    results = []
    for i in range(60):
        m = np.asfortranarray((rng.random((20, 30)) < 0.3).astype(np.uint8))
        rle = mask_utils.encode(m)
        seg = None if i % 9 == 0 else {"size": [20, 30], "counts": rle["counts"].decode()}
        results.append({"image_id": i % 7, "category_id": 1, "score": 0.5, "segmentation": seg})
    path = write_json("p.json", results)
    cols = coco.chunked_columns(path, workers=workers, masks=True)
    assert cols is not None
    with open(path, "rb") as fh:
        assert len(cols["rle_data"]) == len(fh.read())
    strings = coco.checked_rles(cols, np.arange(len(results)))
    got = strings.strings.values()
    expected = [
        b"" if r["segmentation"] is None else r["segmentation"]["counts"].encode() for r in results
    ]
    assert got == expected
