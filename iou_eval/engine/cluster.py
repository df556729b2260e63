"""iou-eval's work on a Dask cluster (dask.distributed): the same parts, merged the same way.

:class:`DaskParts` is a :class:`~iou_eval.protocols.partition.PartExecutor`: it runs
the very part functions the forked workers run (COCO categories matched and
accumulated, chunks of a results file decoded, bootstrap replicates, one
prediction file of a batch) and hands their results back in the parts'
order, so the merge, and every number after it, is the one of one process.

What crosses the network: the inputs every part shares (a
:class:`~iou_eval.protocols.coco.CocoSetup`, a ground truth, an evaluation) are
scattered once per job to every worker (``broadcast=True``), then each task
carries only its part (a few category indices, byte spans, multiplicities,
a file name) and brings back its result.  Files named by path (a results
file decoded in chunks, a batch's prediction files) are read by the
workers: a local cluster sees this machine's files; a remote one must see
them at the same path (a shared file system), else the chunks are decoded
here and a batch file that a worker cannot find is reported as missing.

A worker lost mid-run (killed, out of memory) is no error: the scheduler
runs its tasks again elsewhere and the results are the same bits.

dask is an optional extra, imported here only, and only when used.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from iou_eval.errors import IouEvalError, UsageError

INSTALL_HINT = "pip install 'iou-eval[dask]'"
# `--dask local` without a count: two worker processes.
LOCAL_WORKERS = 2
# How long to wait for a scheduler that does not answer.
CONNECT_TIMEOUT = "10s"
# glibc's allocator in the local workers, as the command line sets it for
# its own process (cli.tune_allocator): keep freed memory for reuse.  Dask
# trims at 64 KiB by default, so every large numpy temporary of a part is
# faulted in again: measured, a part's system time went from 1.7 s to 0.3 s.
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)}
# Parts planned per worker thread: smaller parts balance better and a lost
# worker costs less to redo, at a little more overhead per part.
PARTS_PER_THREAD = 2

# (total, description) -> a progress bar (anything with update(n) and close()) or None.
BarFactory = Callable[[int, str], Any]


class ClusterError(IouEvalError):
    """The cluster could not finish the work (a task that kills its workers, a lost scheduler)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="run again without --dask to use this machine alone")


def distributed_module() -> Any:
    """``dask.distributed``, or a :class:`UsageError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--dask needs dask.distributed, which is not installed", hint=INSTALL_HINT
        ) from None
    return distributed


@contextlib.contextmanager
def _worker_environment(env: dict[str, str]) -> Iterator[None]:
    """Variables set before each local worker process starts (also after a restart).

    The nanny sets them in this process's environment too; they are put
    back as they were on leaving.
    """
    import dask

    saved = {k: os.environ.get(k) for k in env}
    spawn_env = {**dask.config.get("distributed.nanny.pre-spawn-environ", {}), **env}
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}):
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def local_workers(address: str) -> int | None:
    """Worker processes of ``local[:N]``, or None for a scheduler address."""
    if address == "local":
        return LOCAL_WORKERS
    if address.startswith("local:"):
        return int(address.split(":", 1)[1])
    return None


@contextlib.contextmanager
def connect(address: str) -> Iterator[Any]:
    """A ``distributed.Client``: on an embedded ``LocalCluster`` (``local[:N]``) or a scheduler's.

    The local cluster listens on the loopback interface only, without a
    dashboard, and is shut down on leaving.
    """
    distributed = distributed_module()
    n = local_workers(address)
    if n is not None:
        with (
            _worker_environment(WORKER_MALLOC),
            distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,  # the parts are numpy on one core each
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # No dashboard; its HTTP endpoint on a free loopback port, not 8787.
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"--dask: cannot reach a Dask scheduler at {address} ({exc})",
            hint="start one with `dask scheduler` and workers with `dask worker ADDRESS`",
        ) from None
    with client:
        yield client


class DaskParts:
    """A :class:`~iou_eval.protocols.partition.PartExecutor` on a ``distributed.Client``.

    Attributes:
        client: the client.
        slots: parts worth planning (worker threads x ``PARTS_PER_THREAD``).
        bar: makes a progress bar over a job's tasks when the caller follows none.
    """

    def __init__(self, client: Any, bar: BarFactory | None = None) -> None:
        self.client = client
        threads = sum(client.nthreads().values())
        self.slots = max(1, threads * PARTS_PER_THREAD)
        self.bar = bar

    def run(
        self,
        fn: Callable[[Any, Any], Any],
        shared: Any,
        parts: Sequence[Any],
        progress: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """``[fn(shared, p) for p in parts]`` as tasks; ``shared`` scattered once to every worker.

        A worker lost with the only copy of ``shared`` cancels the job (Dask
        cannot recompute scattered data): it is sent and run once more.  The
        parts are pure, so the results are the same.
        """
        if not parts:
            return []
        distributed = distributed_module()
        try:
            try:
                return self._run_once(fn, shared, parts, progress)
            except distributed.CancelledError:
                return self._run_once(fn, shared, parts, progress)
        except distributed.KilledWorker as exc:
            raise ClusterError(f"a task killed every Dask worker that ran it ({exc})") from None
        except (distributed.CancelledError, distributed.TimeoutError, OSError) as exc:
            raise ClusterError(
                f"the Dask cluster stopped before the work was done ({exc!r})"
            ) from None

    def _run_once(
        self,
        fn: Callable[[Any, Any], Any],
        shared: Any,
        parts: Sequence[Any],
        progress: Callable[[int], None] | None,
    ) -> list[Any]:
        distributed = distributed_module()
        name = f"iou-eval-{getattr(fn, '__name__', 'part')}-{uuid.uuid4().hex[:8]}"
        # hash=False: tokenizing a large setup would cost a pass over it.
        [shared_f] = self.client.scatter([shared], broadcast=True, hash=False)
        futures = [
            self.client.submit(fn, shared_f, p, key=f"{name}-{i}", pure=False)
            for i, p in enumerate(parts)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        bar = self.bar(len(parts), name.rsplit("-", 1)[0]) if self.bar and not progress else None
        try:
            for f in distributed.as_completed(futures):
                if f.status == "error":
                    f.result()  # the part's own error, raised here
                if progress is not None:
                    progress(index[f.key])
                if bar is not None:
                    bar.update(1)
            return self.client.gather(futures)
        finally:
            if bar is not None:
                bar.close()
            self.client.cancel([*futures, shared_f])


def as_executor(client: Any, bar: BarFactory | None = None) -> Any:
    """A :class:`DaskParts` on ``client``, or ``client`` itself when it is an executor already."""
    if hasattr(client, "run") and hasattr(client, "slots"):
        return client
    return DaskParts(client, bar)


@contextlib.contextmanager
def executor_for(
    address: str | None, client: Any = None, bar: BarFactory | None = None
) -> Iterator[Any]:
    """The executor of ``client`` if given, else of a client connected to ``address``."""
    if client is not None:
        yield as_executor(client, bar)
        return
    if address is None:
        raise UsageError("no Dask client and no --dask address")
    with connect(address) as connected:
        yield DaskParts(connected, bar)
