"""Masks (``--iou-type segm``) through the fast paths of large inputs, against pycocotools.

A large results file is decoded in chunks, in worker processes, its
compressed RLE strings checked where they are decoded; the ground truth's
masks are encoded where it is read; categories are matched in worker
processes.  These paths only start above some size: here the thresholds are
lowered so that small seeded scenes take them, and every result is compared
with pycocotools and with one process.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.errors import InputError

from ..skip_reasons import compiled_missing
from .test_segm_parity import H, W, assert_arrays, make_segm_scene, pycocotools_segm


@pytest.fixture
def small_thresholds(monkeypatch):
    """Chunked decoding, concurrent reading and category parts for small files."""
    import iou_eval.api
    import iou_eval.io.loaders.coco
    import iou_eval.protocols.partition

    monkeypatch.setattr(iou_eval.io.loaders.coco, "_CHUNK_BYTES", 2048)
    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 1)


def _write(tmp_path, name, obj) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def _reference_gt(gt: dict) -> dict:
    # pycocotools cannot read an empty polygon list: give it the empty mask iou-eval reads.
    ref = copy.deepcopy(gt)
    for a in ref["annotations"]:
        if a["segmentation"] == []:
            a["segmentation"] = {"size": [H, W], "counts": [H * W]}
    return ref


def _scene(seed: int, **kw) -> tuple[dict, list]:
    gt, results = make_segm_scene(seed, n_images=30, n_cats=4, **kw)
    assert len(json.dumps(results)) > 4 * 2048  # several chunks
    return gt, results


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("with_bbox", [True, False], ids=["bbox-branch", "segm-branch"])
@pytest.mark.parametrize("reader", ["compiled", "msgspec"])
def test_chunked_rle_results_give_pycocotools_arrays_with_one_and_two_workers(
    seed, with_bbox, reader, small_thresholds, monkeypatch, tmp_path
):
    """Read by the compiled results reader, and by msgspec records (without it)."""
    import iou_eval.io.compiled
    import iou_eval.io.loaders.coco as coco_loader

    if reader == "msgspec":
        monkeypatch.setattr(iou_eval.io.compiled, "json_reader", lambda: None)
    elif iou_eval.io.compiled.json_reader() is None:
        pytest.skip(compiled_missing("the compiled results reader", "iou_eval.io._cocojson"))
    gt, results = _scene(seed, with_bbox=with_bbox)
    theirs = pycocotools_segm(_reference_gt(gt), results)
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    calls = []
    real = coco_loader._checked_rle_columns
    monkeypatch.setattr(coco_loader, "_checked_rle_columns", lambda *a: calls.append(1) or real(*a))
    one = evaluate(g, p, iou_type="segm", workers=1)
    assert len(calls) > 2  # the results were read as RLE columns, chunk by chunk
    two = evaluate(g, p, iou_type="segm", workers=2)
    assert_arrays(one, theirs, f"seed {seed}, one worker")
    assert_arrays(two, theirs, f"seed {seed}, two workers")
    # Everything the reports read is the same, not only pycocotools' arrays.
    assert one.to_dict() == two.to_dict()
    assert one.warnings == two.warnings


def test_chunks_with_polygon_results_fall_back_and_agree(small_thresholds, tmp_path):
    """A chunk whose results hold polygons is decoded generically, the others as RLE columns."""
    gt, results = _scene(11, with_bbox=True)
    _, polys = make_segm_scene(11, n_images=30, n_cats=4, with_bbox=True, polygons=True)
    mixed = results[: len(results) // 2] + polys[len(polys) // 2 :]
    theirs = pycocotools_segm(_reference_gt(gt), mixed)
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", mixed)
    # Three: the results' chunks are read by two processes beside the ground truth's.
    for workers in (1, 2, 3):
        assert_arrays(evaluate(g, p, iou_type="segm", workers=workers), theirs, f"{workers}")


def test_results_without_a_segmentation_get_their_box_in_the_chunked_path(
    small_thresholds, tmp_path
):
    gt, results = _scene(12, with_bbox=True)
    for r in results[::7]:
        del r["segmentation"]
    ref = copy.deepcopy(results)
    for r in ref:
        if "segmentation" not in r:  # what loadRes does to a box result in segm mode
            x, y, w, h = r["bbox"]
            r["segmentation"] = [[x, y, x, y + h, x + w, y + h, x + w, y]]
    theirs = pycocotools_segm(_reference_gt(gt), ref)
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    assert_arrays(evaluate(g, p, iou_type="segm", workers=2), theirs, "no segmentation")


@pytest.mark.parametrize(
    "counts, why",
    [("0!", "outside '0'..'o'"), ("PP", "ends in the middle of a number"), ("1", "add up to")],
)
def test_a_bad_string_in_a_chunked_file_is_located_as_in_a_small_one(
    counts, why, monkeypatch, tmp_path
):
    gt, results = _scene(13, with_bbox=True)
    bad = len(results) - 3
    results[bad]["segmentation"]["counts"] = counts
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    with pytest.raises(InputError) as plain:
        evaluate(g, p, iou_type="segm", workers=1)
    import iou_eval.io.loaders.coco

    monkeypatch.setattr(iou_eval.io.loaders.coco, "_CHUNK_BYTES", 2048)
    for workers in (1, 2):
        with pytest.raises(InputError) as chunked:
            evaluate(g, p, iou_type="segm", workers=workers)
        assert str(chunked.value) == str(plain.value)
    assert why in str(plain.value)
    assert f"[{bad}].segmentation.counts" in str(plain.value)


def test_rle_sizes_unlike_their_images_warn_once_in_the_chunked_path(small_thresholds, tmp_path):
    """pycocotools keeps such a mask at its own size (overlap -1 with masks of another size)."""
    gt, results = _scene(14, with_bbox=True)
    from pycocotools import mask as mask_utils

    odd = [i for i, r in enumerate(results) if i % 5 == 2]
    empty = mask_utils.encode(np.zeros((H + 1, W), dtype=np.uint8, order="F"))
    for i in odd:  # an all-background mask of another size
        results[i]["segmentation"] = {"size": [H + 1, W], "counts": empty["counts"].decode()}
    theirs = pycocotools_segm(_reference_gt(gt), results)
    g, p = _write(tmp_path, "g.json", gt), _write(tmp_path, "p.json", results)
    for workers in (1, 2):
        ours = evaluate(g, p, iou_type="segm", workers=workers)
        assert_arrays(ours, theirs, f"{workers}")
        said = [w for w in ours.warnings if "differ in size from their image" in w]
        assert len(said) == 1 and said[0].count(f"{len(odd)} RLE mask(s)") == 1, ours.warnings
        assert f"[{odd[0]}].segmentation.size" in said[0]


def test_ground_truth_without_image_sizes_is_encoded_after_the_alignment(
    small_thresholds, tmp_path
):
    """Masks are encoded where the ground truth is read only when its images have sizes."""
    from iou_eval.api import load
    from iou_eval.geometry.segm import PendingMasks

    gt, results = _scene(15, with_bbox=True)
    g = _write(tmp_path, "g.json", gt)
    early = load(g, "gt", masks=True).masks
    assert isinstance(early, PendingMasks) and early.encoded is not None
    sizeless = copy.deepcopy(gt)
    for im in sizeless["images"]:
        del im["height"], im["width"]
    late = load(_write(tmp_path, "s.json", sizeless), "gt", masks=True).masks
    assert late.encoded is None
    p = _write(tmp_path, "p.json", results)
    ours = evaluate(g, p, iou_type="segm", workers=2)
    assert ours.summary == evaluate(g, p, iou_type="segm", workers=1).summary
