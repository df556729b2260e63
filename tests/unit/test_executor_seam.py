"""The executor seam: any executor runs the same parts and gives the same bits.

An in-process executor stands in for a cluster here (no dask needed):
COCO categories, decoded chunks and bootstrap replicates go through it and
every number equals one process's.  A worker that cannot see the results
file (another machine) leaves the decoding to this process.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.analysis.bootstrap import image_weights, replicates_in_parts
from iou_eval.io.loaders import coco
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.json_decode import decode_file_spans, fingerprint, plan_chunks

from ..dask.helpers import InProcess
from ..parity.synth import make_scene

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


@pytest.fixture
def parts_everywhere(monkeypatch):
    import iou_eval.api
    import iou_eval.protocols.partition

    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    monkeypatch.setattr(coco, "_CHUNK_BYTES", 2000)


@pytest.mark.parametrize("slots", [1, 2, 5, 40])
def test_an_executor_gives_the_one_process_document_and_replicates(
    slots, write_json, parts_everywhere
):
    gt, preds = make_scene(720 + slots, n_images=80, n_categories=7, tie_decimals=1)
    files = write_json("gt.json", gt), write_json("p.json", preds)
    executor = InProcess(slots)
    ours = evaluate(*files, client=executor, bootstrap=25, seed=slots)
    one = evaluate(*files, workers=1, bootstrap=25, seed=slots)
    assert json.dumps(ours.to_dict(), sort_keys=True) == json.dumps(one.to_dict(), sort_keys=True)
    jobs = dict(executor.jobs)
    assert jobs.get("match_and_accumulate", 1) == min(slots, 7)  # one part: no job
    assert jobs["replicate_rows"] == min(25, 4 * slots)
    assert jobs["decode_file_spans"] >= min(slots, 2)
    a, b = ours.primary, one.primary
    for name in ("precision", "recall", "scores"):
        assert np.array_equal(getattr(a.arrays, name), getattr(b.arrays, name)), name
    for k, v in a.bootstrap.replicates.items():
        assert np.array_equal(v, b.bootstrap.replicates[k], equal_nan=True), k
    assert np.array_equal(a.bootstrap.class_ap, b.bootstrap.class_ap, equal_nan=True)


def test_replicate_runs_keep_the_draw_order_and_exact_multiplicities():
    """Rows travel as the smallest integer type and come back as the int64 draws."""
    weights = image_weights(50, 23, seed=4)
    seen: list[np.ndarray] = []

    def replicate(w):
        seen.append(w)
        return {"sum": float(w @ np.arange(50))}, np.array([w.max()], dtype=np.float64)

    progress: list[int] = []
    out = replicates_in_parts(InProcess(2), replicate, weights, progress.append)
    assert len(out) == 23 and sum(progress) == 23
    assert all(w.dtype == np.int64 for w in seen)
    assert np.array_equal(np.stack(seen), weights)
    assert [o[0]["sum"] for o in out] == [float(w @ np.arange(50)) for w in weights]


@pytest.fixture
def big_results(write_json, monkeypatch):
    monkeypatch.setattr(coco, "_CHUNK_BYTES", 2000)
    _, preds = make_scene(7, n_images=60)
    return write_json("p.json", preds)


class Blind(InProcess):
    """Workers on another machine: the path names no file there."""

    def run(self, fn, shared, parts, progress=None):
        if fn is decode_file_spans:
            shared = ("/nonexistent/p.json", *shared[1:])
        return super().run(fn, shared, parts, progress)


def test_chunks_a_worker_cannot_read_are_decoded_here(big_results):
    assert coco.chunked_columns(big_results, executor=Blind()) is None
    here = coco.load_coco(big_results, "pred", LoadOptions(executor=Blind()))
    alone = coco.load_coco(big_results, "pred", LoadOptions())
    for name in ("xyxy", "score", "image_idx", "category_idx", "origin"):
        assert np.array_equal(getattr(here, name), getattr(alone, name)), name


def test_chunks_decoded_by_an_executor_equal_those_decoded_here(big_results):
    executor = InProcess(3)
    many = coco.chunked_columns(big_results, executor=executor)
    one = coco.chunked_columns(big_results, workers=1)
    assert executor.jobs == [("decode_file_spans", 3)]
    assert many is not None and many.keys() == one.keys()
    for k in one:
        assert np.array_equal(many[k], one[k]), k


def test_a_file_changed_under_the_same_path_is_not_decoded(tmp_path):
    """Same size, other bytes (another machine's file of that name): None, not wrong columns."""
    path = tmp_path / "p.json"
    path.write_bytes(b"[" + b",".join([b'{"a": 1}'] * 4000) + b"]")
    data = path.read_bytes()
    spans = plan_chunks(data, 2000)
    source = (
        str(path),
        fingerprint(data),
        lambda chunk, at, sink: {"n": np.array([len(chunk)])},
        2000,
    )
    assert decode_file_spans(source, spans[:2]) is not None
    path.write_bytes(data.replace(b'"a"', b'"b"'))
    assert len(path.read_bytes()) == len(data)
    assert decode_file_spans(source, spans[:2]) is None
    assert decode_file_spans((str(tmp_path / "gone.json"), *source[1:]), spans[:2]) is None
