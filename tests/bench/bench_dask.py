"""One process against an embedded Dask cluster on the large synthetic set (Objects365 val's size).

Usage (normally through ``make bench-dask``, part of ``make bench``)::

    python tests/bench/bench_dask.py [--images 80000] [--seed 0] [--workers 2]

Makes (or reuses) ``make_data.py --large`` data, then times, each in its own
process:

- ``iou-eval GT PRED --workers 1 -f json -o OUT`` (one process), through
  ``measure.py`` (wall time, the kernel's peak resident size);
- the same evaluation with ``--dask local:N``, driven through the Python API
  in a child of this script so that each worker process can report its own
  peak resident size (``getrusage`` inside the worker) before the cluster
  stops: the cluster's start-up, the evaluation and the parent's peak are
  reported apart.

Both JSON documents must be identical (the numbers do not depend on where
they were computed).  The section between the ``dask-bench`` markers of
``docs/benchmarks.md`` is replaced (appended if absent) with the figures;
``--out`` writes elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_OUT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- dask-bench:begin -->", "<!-- dask-bench:end -->"


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _usage() -> tuple[float, float]:
    """This process's peak resident size (MiB) and CPU seconds (user + system) so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_maxrss / 1024, r.ru_utime + r.ru_stime


def drive(gt: str, pred: str, out: str, workers: int) -> None:
    """In a child process: the ``--dask local:N`` evaluation, with each worker's peak memory."""
    from iou_eval import evaluate
    from iou_eval.engine.cluster import connect
    from iou_eval.reporters import OutputFormat, View, renderer

    t0 = time.perf_counter()
    with connect(f"local:{workers}") as client:
        started = time.perf_counter()
        result = evaluate(gt, pred, client=client, workers=1)
        Path(out).write_text(renderer(OutputFormat.JSON)(result, View()))
        done = time.perf_counter()
        usage = sorted(client.run(_usage).values())
    print(json.dumps({
        "start_s": started - t0, "evaluate_s": done - started, "total_s": time.perf_counter() - t0,
        "parent_peak_mib": _peak_rss_mib(), "parent_cpu_s": _usage()[1],
        "worker_peak_mib": [u[0] for u in usage], "worker_cpu_s": [u[1] for u in usage],
    }))  # fmt: skip


def one_process(gt: Path, pred: Path, out: Path) -> dict:
    """``iou-eval --workers 1`` measured by ``measure.py``: wall seconds, peak MiB."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as res:
        cmd = [sys.executable, "-I", "-S", str(HERE / "measure.py"), res.name,
               sys.executable, "-m", "iou_eval", str(gt), str(pred), "--workers", "1",
               "-f", "json", "-o", str(out), "-q"]  # fmt: skip
        subprocess.run(cmd, check=True, cwd=ROOT)
        wall, cpu, peak_kib, code = res.read().split()
    if int(code) != 0:
        raise SystemExit(f"iou-eval exited with {code}")
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_mib": int(peak_kib) / 1024}


def on_dask(gt: Path, pred: Path, out: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, __file__, "--drive", str(gt), str(pred), str(out), str(workers)],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    figures = json.loads(p.stdout.strip().splitlines()[-1])
    figures["wall_s"] = time.perf_counter() - t0
    return figures


def report(meta: dict, alone: dict, dask: dict, workers: int, identical: bool, load: float) -> str:
    peaks = ", ".join(f"{m:.0f}" for m in dask["worker_peak_mib"])
    cpus = " + ".join(f"{c:.1f}" for c in dask["worker_cpu_s"])
    return "\n".join([
        BEGIN,
        "## A large set on Dask (`make bench-dask`)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores "
        f"({platform.system()}, Python {platform.python_version()}); indicative: the machine "
        "is shared and the same command varies by 15–30% from run to run.",
        "",
        f"Data: `tests/bench/make_data.py --large {meta['images']}` (Objects365 val is ~80,000 "
        f"images, ~1.2 million boxes): {meta['images']:,} images, {meta['ground_truths']:,} "
        f"ground truths in {meta['categories']} categories, {meta['predictions']:,} predictions "
        f"(the largest category holds {meta['largest_category_share_of_predictions']:.1%}); "
        f"gt.json {meta['gt_bytes'] / 1e6:.0f} MB, preds.json {meta['pred_bytes'] / 1e6:.0f} MB.",
        "",
        "| run | wall (s) | of which cluster start-up (s) | CPU (s) | peak memory (MiB) |",
        "| --- | ---: | ---: | --- | --- |",
        f"| one process (`--workers 1`) | {alone['wall_s']:.2f} | – | {alone['cpu_s']:.1f} | "
        f"{alone['peak_mib']:.0f} |",
        f"| `--dask local:{workers}` | {dask['wall_s']:.2f} | {dask['start_s']:.2f} | "
        f"parent {dask['parent_cpu_s']:.1f}; workers {cpus} | "
        f"parent {dask['parent_peak_mib']:.0f}; each worker {peaks} |",
        "",
        f"Load average of the machine during the runs: {load:.1f} on {os.cpu_count()} cores "
        "(other processes included): wall times are only comparable when it stays below "
        "the core count; CPU seconds (a worker's include its start-up) say what the work cost.",
        "",
        f"Evaluation alone on the cluster (reading, matching, report; start-up excluded): "
        f"{dask['evaluate_s']:.2f} s.  JSON documents identical: {'yes' if identical else 'NO'}.",
        "Each worker holds a whole copy of the evaluation's shared inputs (scattered once); "
        "[scaling.md](scaling.md) estimates how the time falls with more workers.",
        END,
    ])  # fmt: skip


def publish(section: str, out: Path) -> None:
    text = out.read_text() if out.exists() else "# Benchmarks\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    out.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=80_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--drive", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        gt, pred, out, workers = args.drive
        drive(gt, pred, out, int(workers))
        return 0
    sys.path.insert(0, str(HERE))
    import make_data

    subprocess.run([sys.executable, str(HERE / "make_data.py"), "--large", str(args.images),
                    "--seed", str(args.seed)], check=True)  # fmt: skip
    data = make_data.ensure_large(args.images, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "alone.json", Path(tmp) / "dask.json"
        alone = one_process(data.gt_path, data.pred_path, a)
        dask = on_dask(data.gt_path, data.pred_path, b, args.workers)
        identical = a.read_text() == b.read_text()
    load = os.getloadavg()[1]  # the last 5 minutes: both runs
    section = report(data.meta, alone, dask, args.workers, identical, load)
    print(section)
    publish(section, args.out)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
