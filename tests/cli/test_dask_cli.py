"""--dask on the command line: its forms, and what it says without dask or a scheduler."""

from __future__ import annotations

import sys

import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


@pytest.fixture
def no_dask(monkeypatch):
    """An environment where ``import distributed`` fails."""
    monkeypatch.setitem(sys.modules, "distributed", None)


@pytest.mark.parametrize(
    "args",
    [
        (GT, PREDS, "--dask", "local"),
        (GT, PREDS, PREDS, "--dask", "local:3"),
        ("compare", GT, PREDS, PREDS, "--dask", "tcp://127.0.0.1:8786"),
    ],
)
def test_without_dask_the_flag_says_how_to_install_it(no_dask, args):
    r = run(*args, expect=2)
    assert "--dask needs dask.distributed" in r.err, r
    assert "pip install 'iou-eval[dask]'" in r.err, r
    assert r.out == ""


def test_the_scheduler_address_may_come_from_the_environment(no_dask, monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:8786")
    r = run(GT, PREDS, expect=2)
    assert "pip install 'iou-eval[dask]'" in r.err, r


def test_without_dask_the_flag_absent_changes_nothing(no_dask):
    assert run(GT, PREDS, "-f", "json").out


@pytest.mark.parametrize("value", ["lokal", "local:0", "local:x", "", "tcp://", "host"])
def test_a_malformed_address_is_a_usage_error(value):
    r = run(GT, PREDS, "--dask", value, expect=2)
    assert "--dask: expected local, local:N" in r.err and repr(value) in r.err, r


def test_an_unreachable_scheduler_is_a_usage_error(monkeypatch):
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    import iou_eval.engine.cluster

    monkeypatch.setattr(iou_eval.engine.cluster, "CONNECT_TIMEOUT", "0.5s")
    r = run(GT, PREDS, "--dask", "tcp://127.0.0.1:9", expect=2)
    assert "cannot reach a Dask scheduler at tcp://127.0.0.1:9" in r.err, r
    assert "dask scheduler" in r.err
