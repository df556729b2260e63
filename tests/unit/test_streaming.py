"""The streaming Evaluator: batches give the file path's numbers bit for bit.

Each scene is a list of torchmetrics-style per-image dicts; the reference is
:func:`iou_eval.evaluate` on the COCO files the dicts stand for, written by
:mod:`.stream_helpers` independently of the evaluator.
"""

from __future__ import annotations

import io
import itertools
import json

import numpy as np
import pytest

from iou_eval import Evaluator, InputError, evaluate
from iou_eval.errors import UsageError

from .stream_helpers import assert_same, coco_files, scene


def stream(preds, targets, sizes=(4,), order=None, **kw) -> Evaluator:
    """An evaluator fed the scene in batches of ``sizes`` (cycled), images in ``order``."""
    ev = Evaluator(**kw)
    idx = list(range(len(preds))) if order is None else list(order)
    at, sizes_cycle = 0, itertools.cycle(sizes)
    while at < len(idx):
        part = idx[at : at + next(sizes_cycle)]
        ev.update([preds[i] for i in part], [targets[i] for i in part])
        at += len(part)
    return ev


CASES = [
    pytest.param({"iou_type": "bbox", "protocol": "coco"}, id="bbox-coco"),
    pytest.param({"iou_type": "bbox", "protocol": "voc12,voc07"}, id="bbox-voc"),
    pytest.param({"iou_type": "segm", "protocol": "coco"}, id="segm-coco"),
    pytest.param({"iou_type": "bbox,segm", "protocol": "coco"}, id="bbox+segm-coco"),
]


@pytest.mark.parametrize("kw", CASES)
def test_batches_in_sizes_and_orders_give_the_files_numbers(kw, tmp_path):
    segm = "segm" in kw["iou_type"]
    preds, targets = scene(1, n_images=14, masks=segm)
    paths = coco_files(preds, targets, tmp_path, segm=segm)
    files = evaluate(*paths, **kw)
    rng = np.random.default_rng(0)
    for sizes, order in [((1,), None), ((3, 5), rng.permutation(14)), ((14,), rng.permutation(14))]:
        ev = stream(preds, targets, sizes, order, **kw)
        assert len(ev) == 14
        assert_same(ev.compute(), files, paths)


def test_compute_twice_and_update_after_it(tmp_path):
    preds, targets = scene(2)
    ev = stream(preds[:6], targets[:6])
    first = ev.compute()
    assert_same(ev.compute(), first)
    ev.update(preds[6:], targets[6:])
    paths = coco_files(preds, targets, tmp_path)
    assert_same(ev.compute(), evaluate(*paths), paths)


def test_gates_analysis_and_bootstrap_as_the_file_path(tmp_path):
    """TIDE, confusion, calibration, slices-free bootstrap: the same records from the state."""
    from iou_eval.ci.gates import check_gates, parse_gate

    preds, targets = scene(3, n_images=10)
    paths = coco_files(preds, targets, tmp_path)
    kw = {"tide": True, "confusion": True, "calibration": True, "bootstrap": 20, "seed": 3}
    files = evaluate(*paths, **kw)
    result = stream(preds, targets, (3,), **kw).compute()
    assert_same(result, files, paths)
    gates = [parse_gate("AP=0.2"), parse_gate("AP50=0.99")]
    assert [c.to_dict() for c in check_gates(result, gates)] == [
        c.to_dict() for c in check_gates(files, gates)
    ]


def test_only_the_predictions_the_protocol_reads_are_kept(tmp_path):
    """max_dets 1,2,5: at most 5 per image and class stay; the numbers are those of all of them."""
    preds, targets = scene(4, n_images=8, per_image=30, classes=2)
    kw = {"max_dets": [1, 2, 5]}
    paths = coco_files(preds, targets, tmp_path)
    ev = stream(preds, targets, (3,), **kw)
    kept = ev._state.pred.columns()
    pairs = np.stack([kept["image"], kept["label"]], axis=1)
    _, counts = np.unique(pairs, axis=0, return_counts=True)
    assert counts.max() == 5 and len(kept["image"]) < sum(len(p["labels"]) for p in preds)
    assert_same(ev.compute(), evaluate(*paths, **kw), paths)


def test_voc_and_tide_keep_every_prediction():
    preds, targets = scene(4, n_images=4, per_image=30)
    given = sum(len(p["labels"]) for p in preds)
    for kw in ({"protocol": "voc12"}, {"tide": True}, {"protocol": "coco,voc07"}):
        assert len(stream(preds, targets, **kw)._state.pred) == given


@pytest.mark.parametrize("segm", [False, True], ids=["bbox", "segm"])
def test_shards_merged_in_any_order_equal_one_evaluator(segm):
    preds, targets = scene(5, n_images=12, masks=segm)
    kw = {"iou_type": "segm" if segm else "bbox"}
    whole = stream(preds, targets, (5,), **kw).compute()
    shards = [range(0, 4), range(4, 9), range(9, 12)]
    parts = [stream([preds[i] for i in s], [targets[i] for i in s], (2,), **kw) for s in shards]
    payloads = [p.state_bytes() for p in parts]
    for perm in itertools.permutations(range(3)):
        merged = Evaluator(**kw)
        for j in perm:
            merged.merge(payloads[j])
        assert len(merged) == 12
        assert_same(merged.compute(), whole)
    chained = Evaluator.from_state_bytes(payloads[2]).merge(parts[0]).merge(parts[1])
    assert_same(chained.compute(), whole)


def test_state_bytes_round_trip_is_a_plain_npz(tmp_path):
    preds, targets = scene(6, masks=True)
    ev = stream(preds, targets, iou_type="segm", class_names=["a", "b", "c"], max_dets=[1, 5, 50])
    payload = ev.state_bytes()
    with np.load(io.BytesIO(payload), allow_pickle=False) as z:  # no pickle anywhere
        header = json.loads(z["header"].tobytes())
        assert header["ids"] == [t["image_id"] for t in targets]
        assert all(z[k].dtype != object for k in z.files)
    back = Evaluator.from_state_bytes(payload)
    assert back.state_bytes() == payload
    assert_same(back.compute(), ev.compute())
    assert back.compute().per_class["class"].tolist() == ["a", "b", "c"]


@pytest.mark.parametrize(
    "payload", [b"", b"not a state", b"PK\x03\x04broken"], ids=["empty", "text", "zip"]
)
def test_a_payload_that_is_not_a_state_is_an_input_error(payload):
    with pytest.raises(InputError, match="state"):
        Evaluator.from_state_bytes(payload)


def test_a_tampered_payload_is_an_input_error():
    preds, targets = scene(6, n_images=3)
    buf = io.BytesIO(stream(preds, targets).state_bytes())
    with np.load(buf, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["gt.image"] = arrays["gt.image"] + 50
    out = io.BytesIO()
    np.savez(out, allow_pickle=False, **arrays)
    with pytest.raises(InputError, match="gt.image"):
        Evaluator.from_state_bytes(out.getvalue())


def test_merging_evaluators_that_keep_different_things_is_refused():
    with pytest.raises(UsageError, match="merge"):
        Evaluator(class_names=["a"]).merge(Evaluator())


# ----------------------------------------------------------------- duplicates


def test_an_image_seen_twice_is_an_error_by_default():
    preds, targets = scene(7, n_images=4)
    ev = stream(preds, targets)
    before = ev.state_bytes()
    with pytest.raises(InputError, match=r"image 114: image_id was seen before"):
        ev.update(preds[2:3], targets[2:3])
    assert ev.state_bytes() == before
    other = stream(preds[1:2], targets[1:2])
    with pytest.raises(InputError, match="image 107"):
        ev.merge(other)
    assert ev.state_bytes() == before


def test_duplicates_first_keeps_the_first_copy():
    """A DistributedSampler pads the last batch with copies of the first images."""
    preds, targets = scene(7, n_images=6)
    whole = stream(preds, targets).compute()
    rank0 = stream(preds[:3], targets[:3], duplicates="first")
    copy = [dict(p, scores=p["scores"] * 0.5) for p in preds[:1]]  # another rank's numbers
    rank1 = stream(preds[3:] + copy, targets[3:] + targets[:1], duplicates="first")
    merged = Evaluator(duplicates="first").merge(rank0).merge(rank1)
    assert len(merged) == 6
    assert_same(merged.compute(), whole)
    other_gt = [dict(targets[1], labels=targets[1]["labels"] + 1)]
    with pytest.raises(InputError, match="other ground truth"):
        merged.update(preds[1:2], other_gt)


def test_images_without_ids_are_numbered_in_update_order(tmp_path):
    preds, targets = scene(8, n_images=5)
    bare = [{k: v for k, v in t.items() if k != "image_id"} for t in targets]
    ev = stream(preds, bare, (2,))
    numbered = [dict(t, image_id=i) for i, t in enumerate(bare)]
    paths = coco_files(preds, numbered, tmp_path)
    assert ev.to_coco()[0]["images"] == [{"id": i} for i in range(5)]
    assert_same(ev.compute(), evaluate(*paths), paths)


def test_to_coco_files_score_as_compute(tmp_path, write_json):
    preds, targets = scene(9, masks=True)
    ev = stream(preds, targets, iou_type="bbox,segm")
    gt, results = ev.to_coco()
    paths = (write_json("gt.json", gt), write_json("res.json", results))
    assert_same(ev.compute(), evaluate(*paths, iou_type="bbox,segm"), paths)


def test_reset_and_an_empty_evaluator():
    preds, targets = scene(9, n_images=3)
    ev = stream(preds, targets)
    ev.reset()
    assert len(ev) == 0
    ev.update(preds, targets)
    assert len(ev) == 3


def test_rows_of_a_ragged_buffer_are_gathered_in_the_order_asked():
    """Parts ``aa``, ``bbb``, ``c`` (and an empty one): rows 2, 0, 3 give ``caa``."""
    from iou_eval.io.stream_state import ragged_rows, take_rows

    buffer = np.frombuffer(b"aabbbc", dtype=np.uint8)
    length = np.array([2, 3, 1, 0])
    assert ragged_rows(buffer, length, np.array([2, 0, 3])).tobytes() == b"caa"
    assert ragged_rows(buffer, length, np.array([], dtype=np.int64)).tobytes() == b""
    cols = {"image": np.arange(4), "mask_length": length, "mask_data": buffer}
    picked = take_rows(cols, np.array([1, 1]))
    assert picked["mask_data"].tobytes() == b"bbbbbb" and picked["mask_length"].tolist() == [3, 3]
