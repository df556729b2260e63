"""Run one command and write its wall time, CPU time, peak RSS and exit code to a file.

Usage: python -I -S measure.py RESULT_FILE COMMAND [ARG ...]

RESULT_FILE receives one line: ``wall_s cpu_s max_rss_kib exit_code``. The
command inherits this process's stdin, stdout and stderr.

Why a wrapper: on Linux a child's ``ru_maxrss`` starts from the resident size
of the process that spawned it (the kernel carries the parent's high-water mark
across fork and exec). Spawned straight from the benchmark runner, which holds
numpy and more, every tool would report at least the runner's ~90 MiB. This
wrapper imports only ``os``, ``sys`` and ``time`` and runs with ``-I -S`` (no
site, no user paths): its own ~9 MiB is below anything a Python tool needs, so
the number read back is the command's own peak.
"""

import os
import sys
import time


def main() -> int:
    result_path, argv = sys.argv[1], sys.argv[2:]
    started = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"measure.py: cannot run {argv[0]!r}: {exc}", file=sys.stderr)
        return 127
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    exit_code = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    rss_kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    with open(result_path, "w") as out:
        out.write(f"{wall:.6f} {usage.ru_utime + usage.ru_stime:.6f} {rss_kib} {exit_code}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
