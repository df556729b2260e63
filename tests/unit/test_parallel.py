"""Forked workers: results come back whole and equal, errors come back as themselves."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from iou_eval.engine import compiled, parallel
from iou_eval.errors import InputError, UsageError

needs_fork = pytest.mark.skipif(not parallel.can_fork(), reason="no fork on this platform")


def _arrays():
    rng = np.random.default_rng(0)
    return {
        "f": rng.random((1000, 4)),
        "i32": rng.integers(0, 9, 3001).astype(np.int32),
        "b": rng.random(77) < 0.5,
        "strided": np.arange(100.0)[::3],  # not contiguous: pickled in band
        "empty": np.zeros(0, dtype=np.int64),
        "text": ("a", "b", None),
    }


@needs_fork
def test_a_child_result_equals_the_value_computed_here():
    expect = _arrays()
    got = parallel.start(_arrays).result()
    assert got.keys() == expect.keys()
    for k in expect:
        if isinstance(expect[k], np.ndarray):
            assert got[k].dtype == expect[k].dtype and np.array_equal(got[k], expect[k]), k
        else:
            assert got[k] == expect[k]


@needs_fork
def test_results_are_writable_and_independent_of_the_child():
    a = parallel.start(lambda: np.zeros(10_000)).result()
    a[5] = 3.0
    assert a.sum() == 3.0


@needs_fork
def test_the_child_runs_in_another_process():
    assert parallel.start(os.getpid).result() != os.getpid()


@needs_fork
def test_run_parts_keeps_the_order_of_the_parts():
    pids = parallel.run_parts(lambda p: (p, os.getpid()), [3, 1, 2])
    assert [p for p, _ in pids] == [3, 1, 2]
    assert pids[0][1] == os.getpid() and len({pid for _, pid in pids}) == 3


@needs_fork
def test_an_input_error_in_a_child_is_raised_here_with_its_place():
    def bad():
        raise InputError("p.json", "bbox needs 4 numbers, got 3", where="[7].bbox", hint="h")

    with pytest.raises(InputError) as err:
        parallel.start(bad).result()
    assert err.value.path == "p.json" and err.value.where == "[7].bbox"
    assert str(err.value) == "p.json:[7].bbox: bbox needs 4 numbers, got 3\n  hint: h"
    assert err.value.exit_code == 1


@needs_fork
def test_a_child_that_dies_gives_a_worker_error():
    with pytest.raises(parallel.WorkerError) as err:
        parallel.start(os._exit, 9).result()
    assert "exit status 9" in str(err.value) and "--workers 1" in str(err.value)


@needs_fork
def test_cancel_stops_a_running_child():
    import time

    job = parallel.start(time.sleep, 30)
    t = time.perf_counter()
    job.cancel()
    assert time.perf_counter() - t < 5
    with pytest.raises(RuntimeError):
        job.result()


def test_without_fork_jobs_run_here_on_demand(monkeypatch):
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    calls = []
    job = parallel.start(lambda: calls.append(1) or os.getpid())
    assert calls == []
    assert job.result() == os.getpid() and calls == [1]
    assert parallel.run_parts(lambda p: p * 2, [1, 2, 3]) == [2, 4, 6]
    # Without fork, several workers only where compiled parts run in threads.
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    assert parallel.resolve_workers(0) == 1 and parallel.resolve_workers(8) == 1


def test_without_fork_compiled_parts_still_run_in_threads(monkeypatch):
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    monkeypatch.delenv("IOU_EVAL_NO_KERNEL", raising=False)
    if not compiled.built():
        pytest.skip("no compiled part is built here")
    assert parallel.resolve_workers(3) == 3


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_thread_pools_give_results_in_order(workers):
    import threading

    seen = set()

    def work(p):
        seen.add(threading.get_ident())
        return p * p

    assert parallel.run_thread_pool(work, list(range(20)), workers) == [p * p for p in range(20)]
    assert len(seen) <= workers
    assert parallel.run_threads(lambda p: -p, [1, 2, 3]) == [-1, -2, -3]


def test_thread_pools_raise_a_parts_error():
    def work(p):
        if p == 5:
            raise ValueError("part 5")
        return p

    with pytest.raises(ValueError, match="part 5"):
        parallel.run_thread_pool(work, list(range(10)), 3)
    with pytest.raises(ValueError, match="part 5"):
        parallel.run_threads(work, list(range(10)))


@needs_fork
def test_resolve_workers():
    auto = min(parallel.usable_cores(), parallel.AUTO_MAX_WORKERS)
    assert parallel.resolve_workers(0) == auto and parallel.resolve_workers(None) == auto
    assert parallel.resolve_workers(3) == 3 and parallel.resolve_workers(12) == 12


@pytest.mark.parametrize(
    "err",
    [
        InputError("a.json", "bad", where=3, hint="fix it"),
        InputError(None, "no path"),
        UsageError("--max-drop needs --baseline"),
        parallel.WorkerError("gone"),
    ],
)
def test_errors_survive_pickling(err):
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert back.format() == err.format() and back.exit_code == err.exit_code
