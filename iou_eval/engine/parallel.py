"""Independent parts of one evaluation on several cores, in forked processes or threads.

A forked child sees the parent's arrays as they were at the fork, without a
copy (pages are shared until written), so a part needs no inputs sent to it.
Its result comes back pickled, numpy buffers out of band, through an
in-memory file that the parent maps: each array is copied once.

Where ``fork`` is not available (Windows) or not safe (macOS), a job runs in
this process when its result is asked for: the same results, one core.
Work that releases the GIL (the compiled readers and kernels) runs in
threads instead (:func:`run_threads`), on every platform.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import select
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from iou_eval.errors import IouEvalError


class WorkerError(IouEvalError):
    """A worker process ended without a result (killed, out of memory)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="run again with --workers 1 to use one process")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where known)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether parts can run in forked children here (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


# "One per core" stops here: the parts of a COCO-sized job get too small to pay
# for their process beyond a few (explicit --workers may go higher).
AUTO_MAX_WORKERS = 8


def resolve_workers(workers: int | None) -> int:
    """Workers to use: ``workers``, or one per usable core (at most 8) for 0/None.

    1 where neither processes can be forked nor compiled parts run in
    threads (no fork, and no compiled part built or all switched off).
    """
    from iou_eval.engine.compiled import built, switched_off

    if not can_fork() and (switched_off() or not built()):
        return 1
    if not workers:
        return min(usable_cores(), AUTO_MAX_WORKERS)
    return max(1, int(workers))


class Job:
    """One call running in a forked child; :meth:`result` waits for its value.

    The child writes its result to an unnamed in-memory file shared with the
    parent (``memfd``), which the parent maps: arrays are copied once, by
    the child.  A pipe tells the parent when the result is complete (or that
    the child died first).  Without fork, the call runs in :meth:`result`.
    """

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self._fn: Callable[..., Any] | None = fn
        self._args = args
        self._pid = 0
        self._done = -1
        self._store = -1
        if not can_fork():
            return
        # Output still buffered here would otherwise be written twice.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(AttributeError, ValueError, OSError):
                stream.flush()
        store = _shared_file()
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: compute, store, signal, and leave without cleanup
            code = 1
            try:
                _end_with(parent)
                os.close(r)
                size = _store_result(store, fn, args)
                os.write(w, size.to_bytes(8, "little"))
                code = 0
            except BaseException:  # noqa: BLE001 - the parent sees the pipe close
                pass
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._done, self._store = pid, r, store
        self._fn = None

    def result(self) -> Any:
        """The call's return value; its exception is raised here."""
        if self._fn is not None:
            fn, self._fn = self._fn, None
            return fn(*self._args)
        if self._done < 0:
            raise RuntimeError("the result of this job was already taken")
        try:
            size = int.from_bytes(_read_exact(self._done, 8), "little")
            status, value = _load_result(self._store, size)
        except (EOFError, OSError, pickle.UnpicklingError):
            code = self._finish()
            raise WorkerError(
                f"a worker process ended without a result (exit status {code})"
            ) from None
        self._finish()
        if status == "error":
            raise value
        return value

    def cancel(self) -> None:
        """Stop the child if it is still running (after an error elsewhere)."""
        if self._done >= 0:
            with contextlib.suppress(OSError):
                os.kill(self._pid, 9)
            self._finish()
        self._fn = None

    def _finish(self) -> int:
        os.close(self._done)
        os.close(self._store)
        self._done = self._store = -1
        _, status = os.waitpid(self._pid, 0)
        return os.waitstatus_to_exitcode(status)


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _end_with(parent: int) -> None:
    """In a forked child: be killed when ``parent`` ends, however it ends (SIGKILL included).

    Linux's ``PR_SET_PDEATHSIG``; a child whose parent is already gone (it
    died between the fork and here) leaves at once.  Elsewhere a no-op.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


def start(fn: Callable[..., Any], *args: Any) -> Job:
    """Start ``fn(*args)`` in a forked child (or defer it where there is no fork)."""
    return Job(fn, args)


def run_parts(fn: Callable[..., Any], parts: Sequence[Any]) -> list[Any]:
    """``[fn(p) for p in parts]``, the first part here and the others in children."""
    jobs = [start(fn, p) for p in parts[1:]]
    try:
        first = fn(parts[0])
        return [first, *(j.result() for j in jobs)]
    finally:
        for j in jobs:
            j.cancel()


def run_threads(fn: Callable[..., Any], parts: Sequence[Any]) -> list[Any]:
    """``[fn(p) for p in parts]``, the first part here and the others in threads.

    For work that releases the GIL (the compiled readers and kernels): the
    threads share this process's memory, so nothing is forked, copied or
    sent back.  An exception of any part is raised here, the first part's
    first.
    """
    import threading

    results: list[Any] = [None] * len(parts)
    errors: list[BaseException | None] = [None] * len(parts)

    def run(i: int) -> None:
        try:
            results[i] = fn(parts[i])
        except BaseException as exc:  # noqa: BLE001 - raised again below
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(1, len(parts))]
    for t in threads:
        t.start()
    if parts:
        run(0)
    for t in threads:
        t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results


def in_thread(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """``fn(*args)`` started in a thread now; calling what this returns waits for its value.

    The call's exception is raised by that call, in the caller's thread.
    For work that leaves the GIL to others often enough (numpy on large
    arrays) beside work that releases it.
    """
    import threading

    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            box.append((False, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def result() -> Any:
        thread.join()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    return result


def run_thread_pool(fn: Callable[..., Any], parts: Sequence[Any], workers: int) -> list[Any]:
    """``[fn(p) for p in parts]`` in at most ``workers`` threads at a time, in results order.

    Parts are taken in the order given (heaviest first keeps every thread
    busy to the end), this thread working as one of them.  For parts whose
    work releases the GIL (the compiled kernels); their results are never
    copied.  An exception of any part is raised here.
    """
    import threading

    if workers <= 1 or len(parts) <= 1:
        return [fn(p) for p in parts]
    results: list[Any] = [None] * len(parts)
    errors: list[BaseException] = []
    lock = threading.Lock()
    pending = iter(range(len(parts)))

    def work(_: Any) -> None:
        while not errors:
            with lock:
                i = next(pending, None)
            if i is None:
                return
            try:
                results[i] = fn(parts[i])
            except BaseException as exc:  # noqa: BLE001 - raised again below
                errors.append(exc)

    run_threads(work, range(min(workers, len(parts))))
    if errors:
        raise errors[0]
    return results


def run_in_turn(
    fn: Callable[[Any], Any],
    parts: Iterator[Any],
    workers: int,
    done: Callable[[Any], None] | None = None,
) -> list[Any]:
    """``[fn(p) for p in parts]`` in ``workers`` threads, each taking the next part in turn.

    ``parts`` is advanced under a lock, so a generator that makes each part
    as it is asked for (drawing from one random stream) makes them in order
    whichever thread asks; making one part overlaps the others' work when
    both release the GIL.  ``done(result)`` is called here, in this thread,
    as each part ends (progress); results come back in the parts' order.
    An exception of any part stops the others' next parts and is raised here.
    """
    import queue
    import threading

    lock = threading.Lock()
    results: dict[int, Any] = {}
    reports: queue.Queue[tuple[int, Any] | BaseException | None] = queue.Queue()
    stop = threading.Event()
    taken = [0]

    def work() -> None:
        try:
            while not stop.is_set():
                with lock:
                    part, i = next(parts, None), taken[0]
                    if part is None:
                        break
                    taken[0] += 1
                reports.put((i, fn(part)))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            reports.put(exc)
        reports.put(None)

    pool = [threading.Thread(target=work, daemon=True) for _ in range(max(1, workers))]
    for t in pool:
        t.start()
    failure: BaseException | None = None
    running = len(pool)
    while running:
        report = reports.get()
        if report is None:
            running -= 1
        elif isinstance(report, BaseException):
            failure = failure or report
            stop.set()
        else:
            results[report[0]] = report[1]
            if done is not None:
                done(report[1])
    if failure is not None:
        raise failure
    return [results[i] for i in range(len(results))]


def run_pool(fn: Callable[..., Any], parts: Sequence[Any], workers: int) -> list[Any]:
    """``[fn(p) for p in parts]`` in at most ``workers`` children at a time, in results order.

    Each part runs in a child of its own, started as soon as an earlier one
    ends (parts given heaviest first keep every core busy to the end); this
    process only waits.  One worker, or no fork: the parts run here one
    after the other.
    """
    if workers <= 1 or not can_fork() or len(parts) <= 1:
        return [fn(p) for p in parts]
    results: list[Any] = [None] * len(parts)
    waiting = list(range(len(parts)))
    running: dict[int, Job] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                i = waiting.pop(0)
                running[i] = start(fn, parts[i])
            ready, _, _ = select.select([j._done for j in running.values()], [], [])
            for i, job in list(running.items()):
                if job._done in ready:
                    del running[i]
                    results[i] = job.result()
    finally:
        for job in running.values():
            job.cancel()
    return results


def _shared_file() -> int:
    """A file descriptor on an anonymous in-memory file (a temporary file where no memfd)."""
    try:
        return os.memfd_create("iou-eval-result", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        import tempfile

        with tempfile.TemporaryFile() as fh:
            return os.dup(fh.fileno())


_ALIGN = 64


def _store_result(fd: int, fn: Callable[..., Any], args: tuple) -> int:
    """Run the call and write ``(status, value)`` to ``fd``; return the bytes written.

    Layout: an 8-byte length, a pickled ``(head offset, head size, [(offset,
    size)] of each buffer)``, then the pickle's head and its out-of-band
    buffers, each at a 64-byte boundary.
    """
    try:
        payload: tuple[str, Any] = ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - raised again in the parent
        payload = ("error", exc)
    buffers: list[pickle.PickleBuffer] = []
    try:
        head = pickle.dumps(payload, protocol=5, buffer_callback=buffers.append)
    except Exception as exc:  # noqa: BLE001 - an error that cannot be pickled
        buffers = []
        head = pickle.dumps(("error", RuntimeError(f"worker failed: {exc!r}")), protocol=5)
    views = [memoryview(head), *(b.raw() for b in buffers)]
    # The index's own size bounds where the data can start.
    reserve = 64 + 24 * len(views)
    spans, at = [], 8 + reserve
    for v in views:
        at = -(-at // _ALIGN) * _ALIGN
        spans.append((at, v.nbytes))
        at += v.nbytes
    index = pickle.dumps(spans)
    if len(index) > reserve:
        raise RuntimeError("result index larger than reserved")
    os.pwrite(fd, len(index).to_bytes(8, "little") + index, 0)
    os.ftruncate(fd, at)  # the whole extent, trailing empty buffers included
    for (offset, _), v in zip(spans, views, strict=True):
        _write_all(fd, v, offset)
    return at


def _write_all(fd: int, view: memoryview, offset: int) -> None:
    while len(view):
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _load_result(fd: int, size: int) -> tuple[str, Any]:
    """Read back what :func:`_store_result` wrote: arrays stay in the mapped file."""
    if size == 0:
        raise EOFError("empty result")
    # Private: arrays stay writable, a write copies only the page it touches.
    mm = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    view = memoryview(mm)
    n = int.from_bytes(view[:8], "little")
    spans = pickle.loads(view[8 : 8 + n])
    (h_at, h_size), rest = spans[0], spans[1:]
    head = view[h_at : h_at + h_size]
    # Arrays keep views of the mapping, which lives as long as they do.
    return pickle.loads(head, buffers=[view[at : at + n] for at, n in rest])


def _read_exact(fd: int, size: int) -> bytes:
    out = b""
    while len(out) < size:
        chunk = os.read(fd, size - len(out))
        if not chunk:
            raise EOFError("the worker's pipe closed early")
        out += chunk
    return out
