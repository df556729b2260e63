"""iou-eval against ultrafast-pycocotools and hotcoco on an Objects365-val-sized set, one process each.

Usage (normally through ``make bench-large``, part of ``make bench``)::

    python tests/bench/bench_large.py [--images 80000] [--runs 2] [--seed 0]

Makes (or reuses) ``make_data.py --large`` data (80,000 images, ~1.2 million
ground truths in 365 categories, ~5 million predictions), then times each
tool as a whole process through ``measure.py`` (wall time, CPU time, the
kernel's peak resident size), rounds interleaved as ``run_bench.py`` does:
``iou-eval GT PRED -f json -o OUT`` with its default workers (threads of one
process beside the compiled core), the same with ``--workers 1``, and the
peers through ``peers/peer_coco.py``.  pycocotools and faster-coco-eval are
left out (tens of minutes a run at this size).  Every tool's 12 numbers must
equal iou-eval's.  The section between the ``large-bench`` markers of
``docs/benchmarks.md`` is replaced (appended if absent); ``--out`` writes
elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

import make_data
import run_bench

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_OUT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- large-bench:begin -->", "<!-- large-bench:end -->"
PEERS = ("ultrafast-pycocotools", "hotcoco")


def commands(iou_eval: str, gt: Path, pred: Path, out: Path) -> dict[str, list[str]]:
    """Each measured command, by the name the report gives it."""
    ours = [iou_eval, str(gt), str(pred), "--format", "json", "-o"]
    peer = [sys.executable, str(HERE / "peers" / "peer_coco.py")]
    return {
        "iou-eval": [*ours, str(out / "iou-eval.json")],
        "iou-eval --workers 1": [*ours, str(out / "iou-eval-1.json"), "--workers", "1"],
        **{
            name: [*peer, name.replace("-", "_"), str(gt), str(pred), str(out / f"{name}.json")]
            for name in PEERS
        },
    }


def stats_of(name: str, out: Path) -> list[float] | None:
    """The 12 numbers a run wrote, or None."""
    path = out / (
        "iou-eval.json"
        if name == "iou-eval"
        else "iou-eval-1.json"
        if "workers" in name
        else f"{name}.json"
    )
    try:
        if name.startswith("iou-eval"):
            return run_bench._stats_iou_eval(path)
        return run_bench._stats_list(path)
    except (OSError, ValueError, KeyError):
        return None


def interleaved(cmds: dict[str, list[str]], out: Path, runs: int, timeout: float) -> dict:
    """``{name: [(wall, cpu, rss, stats)]}``: each round runs every command once, one later each round."""
    names = list(cmds)
    done: dict[str, list] = {n: [] for n in names}
    for r in range(runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            log = out / f"{name.replace(' ', '_')}-{r}.log"
            wall, cpu, rss, code = run_bench.measure(cmds[name], log, timeout)
            print(
                f"round {r + 1}: {name}: {wall:.2f} s, {rss:.0f} MiB (exit {code})", file=sys.stderr
            )
            done[name].append((wall, cpu, rss, stats_of(name, out) if code == 0 else None))
    return done


def report(meta: dict, done: dict, load: float, runs: int) -> str:
    """The markdown section."""
    ours = statistics.median(w for w, *_ in done["iou-eval"])
    reference = next((s for *_, s in done["iou-eval"] if s is not None), None)
    lines = [
        BEGIN,
        "## An Objects365-sized set, one process (`make bench-large`)",
        "",
        f"Measured {dt.date.today().isoformat()} on {run_bench.machine_info()['nproc']} cores "
        f"(Linux, Python {run_bench.machine_info()['python']}); {runs} interleaved rounds, medians. "
        f"Other processes used {load:.2f} of the machine's cores on average during these runs.",
        "",
        f"Data: `tests/bench/make_data.py --large {meta['images']}`: {meta['images']:,} images, "
        f"{meta['ground_truths']:,} ground truths in {meta['categories']} categories, "
        f"{meta['predictions']:,} predictions; gt.json {meta['gt_bytes'] / 1e6:.0f} MB, "
        f"preds.json {meta['pred_bytes'] / 1e6:.0f} MB.  pycocotools and faster-coco-eval are "
        "left out (tens of minutes a run at this size).",
        "",
        "| tool | wall median (s) | wall min–max (s) | CPU (s) | peak memory (MiB) | time / iou-eval | 12 numbers |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, rows in done.items():
        walls = [w for w, *_ in rows]
        same = all(s is not None and s == reference for *_, s in rows)
        lines.append(
            f"| {name} | {statistics.median(walls):.2f} | {min(walls):.2f}–{max(walls):.2f} | "
            f"{statistics.median(c for _, c, _, _ in rows):.1f} | "
            f"{statistics.median(m for _, _, m, _ in rows):.0f} | "
            f"{statistics.median(walls) / ours:.2f}× | {'identical' if same else 'DIFFER'} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def publish(section: str, out: Path) -> None:
    text = out.read_text() if out.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    out.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=80_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_DATA_DIR)
    parser.add_argument("--iou-eval", default=str(ROOT / ".venv" / "bin" / "iou-eval"))
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    data = make_data.ensure_large(args.images, args.seed, args.data_dir)
    for path in (data.gt_path, data.pred_path):  # in the page cache for every run
        path.read_bytes()
    out = args.data_dir / "runs" / f"large-{args.images}-seed{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    busy0, t0 = run_bench._busy_cpu_seconds(), time.perf_counter()
    done = interleaved(
        commands(args.iou_eval, data.gt_path, data.pred_path, out), out, args.runs, args.timeout
    )
    busy1, elapsed = run_bench._busy_cpu_seconds(), time.perf_counter() - t0
    used = sum(c for rows in done.values() for _, c, _, _ in rows)
    load = (
        max(0.0, ((busy1 - busy0) - used) / elapsed)
        if busy0 is not None and busy1 is not None
        else float("nan")
    )
    section = report(data.meta, done, load, args.runs)
    print(section)
    publish(section, args.out)
    print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
