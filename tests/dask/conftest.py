"""One embedded Dask cluster (two worker processes) per test module; skipped without dask."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture
def parts_everywhere(monkeypatch):
    """Every split taken even on test-sized inputs (decided here, in the parent)."""
    import iou_eval.api
    import iou_eval.io.loaders.coco
    import iou_eval.protocols.partition

    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    monkeypatch.setattr(iou_eval.io.loaders.coco, "_CHUNK_BYTES", 2000)
