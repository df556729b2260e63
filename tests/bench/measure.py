"""Run one command and write its wall time, CPU time, peak memory and exit code to a file.

Usage: python -I -S measure.py [--tree] RESULT_FILE COMMAND [ARG ...]

RESULT_FILE receives one line: ``wall_s cpu_s peak_kib exit_code``. The
command inherits this process's stdin, stdout and stderr.

Peak memory is the larger of two readings:

- ``ru_maxrss`` from ``os.wait4``: the kernel's peak resident size of the
  command's own process, exact for a single process (threads included).
- With ``--tree``, for a command that forks worker processes: the peak over
  time of the whole process tree's proportional set size (PSS, from
  ``/proc/PID/smaps_rollup``), sampled every 10 ms by a thread while
  there is more than one process.  Sampling slows the command down (reading
  smaps locks its memory map), so timed runs go without it. PSS counts a page shared by several
  processes (after a fork) once in total, so the sum is the tree's real
  footprint, where summing resident sizes would count shared pages again in
  every child.

Why a wrapper: on Linux a child's ``ru_maxrss`` starts from the resident size
of the process that spawned it (the kernel carries the parent's high-water mark
across fork and exec). Spawned straight from the benchmark runner, which holds
numpy and more, every tool would report at least the runner's ~90 MiB. This
wrapper imports only ``os``, ``sys``, ``threading`` and ``time`` and runs with
``-I -S`` (no site, no user paths): its own ~9 MiB is below anything a Python
tool needs, so the number read back is the command's own peak.
"""

import os
import sys
import threading
import time

SAMPLE_S = 0.01


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:  # gone, or not Linux
        pass
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Peak PSS of the process tree under ``root``, while it has child processes."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_kib = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_S):
            tree, todo = [], [self.root]
            while todo:
                pid = todo.pop()
                tree.append(pid)
                todo.extend(_children(pid))
            if len(tree) > 1:
                self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in tree))


def main() -> int:
    args = sys.argv[1:]
    tree = args[:1] == ["--tree"]
    if tree:
        args = args[1:]
    result_path, argv = args[0], args[1:]
    started = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"measure.py: cannot run {argv[0]!r}: {exc}", file=sys.stderr)
        return 127
    sampler = TreeSampler(pid)
    if tree:
        sampler.start()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if tree:
        sampler.done.set()
        sampler.join()
    exit_code = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    rss_kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    peak_kib = max(rss_kib, sampler.peak_kib)
    with open(result_path, "w") as out:
        out.write(f"{wall:.6f} {usage.ru_utime + usage.ru_stime:.6f} {peak_kib} {exit_code}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
