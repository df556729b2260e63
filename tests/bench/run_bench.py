"""Time iou-eval against pycocotools and its fast clones on COCO-sized data.

Usage (normally through ``make bench``)::

    python tests/bench/run_bench.py [--sizes 5000,20000] [--runs 3,2] [--seed 0]

For each size it makes (or reuses) the synthetic data of ``make_data.py``, then
runs every tool and every floor as a whole command in its own process, several
times, interleaved: run 1 of every tool, then run 2 of every tool (starting
with the next tool each round), so that a slow drift of the machine (heat, a
neighbour) spreads over all tools instead of landing on one. Before the first
round both files are read once, so every run finds them in the page cache.

Each process is timed from spawn to reap (wall time); its CPU time and peak
resident set size come from ``os.wait4`` in a tiny wrapper (``measure.py``), i.e.
the kernel's accounting for that one process, not a polling guess.

Every evaluator writes its 12 COCO stats to a JSON file; the runner checks
each against pycocotools' (max absolute difference) and that repeated runs
agree. A tool that cannot be imported is reported as unavailable, a run that
exits non-zero or writes no stats as failed; neither stops the benchmark.

The report (markdown) is printed and written to ``docs/benchmarks.md`` for the
default sizes, or to ``bench_data/benchmarks.md`` for other sizes so that a
quick development run does not overwrite the published numbers. The raw
measurements go to ``bench_data/results.json``.

Environment: ``BENCH_SIZES`` and ``BENCH_RUNS`` stand in for ``--sizes`` and
``--runs``; ``IOU_EVAL`` for the iou-eval executable; ``BENCH_BOOTSTRAP`` (1000)
and ``BENCH_BOOTSTRAP_MAX_IMAGES`` (5000) set the bootstrap row: iou-eval with
that many resamples, on the sizes up to that many images.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import make_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEERS = HERE / "peers"
DEFAULT_OUT = ROOT / "docs" / "benchmarks.md"
DEV_OUT = make_data.DEFAULT_DATA_DIR / "benchmarks.md"
# The 12 numbers of COCOeval.stats, in its order.
STAT_NAMES = (
    *("AP", "AP50", "AP75", "APs", "APm", "APl"),
    *("AR1", "AR10", "AR100", "ARs", "ARm", "ARl"),
)
# The 10 numbers of COCOeval(iouType="keypoints").stats.
KEYPOINT_STAT_NAMES = (
    *("AP", "AP50", "AP75", "APm", "APl"),
    *("AR", "AR50", "AR75", "ARm", "ARl"),
)
REFERENCE = "pycocotools"
OURS = "iou-eval"
# What the runner measures (``--iou-types``); boundary is scored on the mask set.
IOU_TYPES = ("bbox", "segm", "boundary", "keypoints")
DATA_KIND = {"bbox": "bbox", "segm": "segm", "boundary": "segm", "keypoints": "keypoints"}
# pycocotools does not score Boundary IoU: faster-coco-eval is the reference there.
BOUNDARY_REFERENCE = "faster-coco-eval"
# The Boundary IoU set's default size: faster-coco-eval takes about a minute per
# 500 images (it erodes each mask run by run, d times).
BOUNDARY_DEFAULT_SIZES = "500"
FASTEST_PEER = "ultrafast-pycocotools"
# The other peers the mask ratios name (the task's targets quote them).
SEGM_RATIO_PEERS = ("hotcoco", "vernier")
KEYPOINT_RATIO_PEERS = ("faster-coco-eval", "hotcoco")
# A peer script's exit code for "this peer cannot score this iou type".
UNSUPPORTED_EXIT = 3
# The bootstrap row: iou-eval with this many resamples, on sizes up to BOOTSTRAP_MAX_IMAGES.
BOOTSTRAP_N = int(os.environ.get("BENCH_BOOTSTRAP", "1000"))
BOOTSTRAP_MAX_IMAGES = int(os.environ.get("BENCH_BOOTSTRAP_MAX_IMAGES", "5000"))
BOOTSTRAP = f"iou-eval --bootstrap {BOOTSTRAP_N}"


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class Tool:
    """One thing to time.

    ``argv(gt, pred, out, iou_type)`` builds its command line (``iou_type``
    ``bbox`` or ``segm``; floors ignore it); ``read_stats(out)`` returns the
    12 stats it wrote (None for floors, which compute none); ``probe`` is a
    command that prints the tool's version and fails if the tool is missing.
    """

    name: str
    argv: Callable[[Path, Path, Path, str], list[str]]
    probe: list[str]
    read_stats: Callable[[Path], list[float]] | None = None
    how: str = ""
    forks: bool = False  # runs worker processes: its memory is measured over the tree
    max_images: int | None = None  # not run on larger data sets

    @property
    def is_floor(self) -> bool:
        return self.read_stats is None


def _stats_list(out: Path) -> list[float]:
    """Stats from a peer script's ``{"stats": [...]}``."""
    stats = json.loads(out.read_text())["stats"]
    return [float(s) for s in stats]


def _stats_iou_eval(out: Path) -> list[float]:
    """Stats from iou-eval's JSON report: its ``summary`` object, in pycocotools' order."""
    doc = json.loads(out.read_text())
    summary = doc["summary"]
    keypoints = (doc.get("params") or {}).get("iou_type") == "keypoints"
    names = KEYPOINT_STAT_NAMES if keypoints else STAT_NAMES
    missing = [k for k in names if k not in summary]
    if missing:
        raise KeyError(f"summary lacks {', '.join(missing)} (has {', '.join(summary)})")
    # null stands where pycocotools would print -1 (no ground truth in a range).
    return [-1.0 if summary[k] is None else float(summary[k]) for k in names]


def _version_probe(python: str, module: str, dist: str, label: str = "") -> list[str]:
    """A command printing ``label`` and the version of ``dist``, after importing ``module``."""
    prefix = f"{label!r}, " if label else ""
    code = f"import importlib.metadata as m, {module}; print({prefix}m.version({dist!r}))"
    return [python, "-c", code]


# The package must import; the CLI may not (yet): its runs then fail and are
# reported as failed. Importing it here compiles its bytecode before timing.
IOU_EVAL_PROBE = """
import iou_eval
try:
    import iou_eval.cli.main
except Exception:
    pass
print(iou_eval.__version__)
"""


def build_tools(bench_python: str, iou_eval: str) -> list[Tool]:
    """The evaluators, then the floors, in the order the report lists them."""
    iou_eval_python = str(Path(iou_eval).with_name("python"))
    tools = [
        Tool(
            OURS,
            lambda gt, pred, out, iou_type: [
                iou_eval,
                str(gt),
                str(pred),
                *(["--iou-type", iou_type] if iou_type != "bbox" else []),
                "--format",
                "json",
                "-o",
                str(out),
            ],
            [iou_eval_python, "-c", IOU_EVAL_PROBE],
            _stats_iou_eval,
            "`iou-eval GT PRED [--iou-type segm, boundary or keypoints] --format json -o OUT`",
            forks=True,
        ),
        Tool(
            BOOTSTRAP,
            lambda gt, pred, out, iou_type: [
                iou_eval, str(gt), str(pred), "--format", "json", "-o", str(out),
                "--bootstrap", str(BOOTSTRAP_N),
                *(["--iou-type", iou_type] if iou_type != "bbox" else []),
            ],
            [iou_eval_python, "-c", IOU_EVAL_PROBE],
            _stats_iou_eval,
            f"`iou-eval GT PRED --format json -o OUT --bootstrap {BOOTSTRAP_N}` (confidence "
            f"intervals; up to {BOOTSTRAP_MAX_IMAGES:,} images)",
            forks=True,
            max_images=BOOTSTRAP_MAX_IMAGES,
        ),
    ]  # fmt: skip
    peers = (
        (REFERENCE, "pycocotools.cocoeval", "pycocotools", "COCO, loadRes, COCOeval"),
        (
            "faster-coco-eval",
            "faster_coco_eval",
            "faster-coco-eval",
            "COCO, loadRes, COCOeval_faster",
        ),
        ("hotcoco", "hotcoco", "hotcoco", "COCO, loadRes, COCOeval"),
        (FASTEST_PEER, "ultrafast_pycocotools", "ultrafast-pycocotools", "COCO, loadRes, COCOeval"),
    )
    script = PEERS / "peer_coco.py"
    pycocotools_style = "evaluate, accumulate, summarize"
    for name, module, dist, api in peers:
        peer = module.split(".")[0]
        tools.append(
            Tool(
                name,
                lambda gt, pred, out, iou_type, peer=peer: [
                    bench_python,
                    str(script),
                    peer,
                    str(gt),
                    str(pred),
                    str(out),
                    iou_type,
                ],
                _version_probe(bench_python, module, dist),
                _stats_list,
                f"`{script.relative_to(ROOT)} {peer}`: {api} (bbox, segm or keypoints"
                f"{', or boundary' if peer == 'faster_coco_eval' else ''}), {pycocotools_style}",
            )
        )
    tools.append(
        Tool(
            "vernier",
            lambda gt, pred, out, iou_type: [
                bench_python,
                str(script),
                "vernier",
                str(gt),
                str(pred),
                str(out),
                iou_type,
            ],
            _version_probe(bench_python, "vernier", "vernier"),
            _stats_list,
            f"`{script.relative_to(ROOT)} vernier`: `instance.Evaluator(iou=Bbox(), Segm() or Keypoints(), "
            'parity_mode="strict").evaluate(gt_bytes, dt_bytes)`',
        )
    )
    floors = (
        ("startup", "numpy", "start Python and `import numpy`"),
        ("read", "numpy", "… and read both files' bytes"),
        ("json", "numpy", "… and parse both with `json.loads`"),
        ("orjson", "orjson", "… and parse both with `orjson.loads`"),
        ("msgspec", "msgspec", "… and parse both with `msgspec.json.decode` (generic)"),
    )
    for step, module, how in floors:
        tools.append(
            Tool(
                f"floor: {step}",
                lambda gt, pred, out, iou_type, step=step: [
                    bench_python,
                    str(HERE / "floors.py"),
                    step,
                    str(gt),
                    str(pred),
                ],
                _version_probe(bench_python, module, module, label=module),
                None,
                how,
            )
        )
    return tools


def iou_eval_package_dir(iou_eval: str) -> Path | None:
    """The folder of the ``iou_eval`` package that the ``iou_eval`` executable runs."""
    python = str(Path(iou_eval).with_name("python"))
    code = "import os, iou_eval; print(os.path.dirname(iou_eval.__file__))"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def git_state(root: Path) -> str:
    """`` (git abc1234)``, with ``+ local changes`` when iou_eval/ differs from it; or ``""``."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "iou_eval"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if rev.returncode != 0:
        return ""
    changes = " + local changes" if dirty.stdout.strip() else ""
    return f" (git {rev.stdout.strip()}{changes})"


def probe(tool: Tool) -> tuple[str | None, str | None]:
    """Run the tool's probe: (version, None) if it works, else (None, why not)."""
    try:
        done = subprocess.run(tool.probe, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"probe exited {done.returncode}"
    return done.stdout.strip().splitlines()[-1], None


# --------------------------------------------------------------------------- measuring


@dataclass
class Run:
    """One timed process. ``max_rss_mib`` is the kernel's peak resident set size."""

    tool: str
    images: int
    round: int
    wall_s: float
    cpu_s: float
    max_rss_mib: float
    exit_code: int
    error: str | None = None
    stats: list[float] | None = None
    memory_only: bool = False  # the untimed run that samples a forking tool's memory
    iou_type: str = "bbox"
    unsupported: bool = False  # the tool cannot score this iou type (peer exit code 3)


def measure(
    argv: list[str], log_path: Path, timeout_s: float, tree: bool = False
) -> tuple[float, float, float, int]:
    """Run ``argv`` to completion; return (wall s, user+sys CPU s, peak memory MiB, exit code).

    The command runs under ``measure.py``, a minimal wrapper that spawns it,
    reaps it with ``os.wait4`` and reports that one process's rusage (see its
    docstring for why the runner cannot spawn the tools itself); with
    ``tree``, it also samples the memory of the command's worker processes.
    stdout and stderr go to ``log_path``. A command still running after
    ``timeout_s`` is killed with its wrapper (its process group) and reported
    with exit code -9.
    """
    result_path = log_path.with_suffix(".rusage")
    result_path.unlink(missing_ok=True)
    wrapper = [sys.executable, "-I", "-S", str(HERE / "measure.py")]
    wrapper += ["--tree", str(result_path)] if tree else [str(result_path)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            wrapper + argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # one process group: a timeout kills the tool too
        )
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.write(f"\nkilled after {timeout_s:.0f} s\n".encode())
            return math.nan, math.nan, math.nan, -9
    if proc.returncode != 0 or not result_path.exists():
        return math.nan, math.nan, math.nan, proc.returncode or 127
    wall, cpu, rss_kib, exit_code = result_path.read_text().split()
    return float(wall), float(cpu), int(rss_kib) / 1024, int(exit_code)


def _tail(path: Path, lines: int = 3) -> str:
    text = path.read_text(errors="replace").strip().splitlines()
    return " | ".join(text[-lines:]) if text else "(no output)"


@dataclass
class SizeContext:
    """What else happened while one size ran: other processes' CPU use and source edits."""

    other_cores: float | None = None  # mean cores used by processes other than ours
    source_changed: bool = False  # iou-eval's source files changed during the runs


def _busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux), else None."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
    ticks = [int(f) for f in fields[:8]]
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


def source_fingerprint(package_dir: Path | None) -> str | None:
    """A hash of the path, size and mtime of every ``.py`` file under ``package_dir``.

    iou-eval is installed editable, so an edit to its source changes what the
    next run executes; comparing fingerprints before and after a size tells
    whether its runs may mix two versions.
    """
    if package_dir is None or not package_dir.is_dir():
        return None
    digest = hashlib.sha1()
    for path in sorted(package_dir.rglob("*.py")):
        st = path.stat()
        digest.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def bench_size(
    tools: list[Tool],
    data: make_data.DataSet,
    runs: int,
    work: Path,
    timeout_s: float,
    package_dir: Path | None = None,
    iou_type: str = "bbox",
) -> tuple[list[Run], SizeContext]:
    """Time every tool ``runs`` times on one data set, interleaved, scoring ``iou_type``.

    Returns every run and the context they ran in: how many cores other
    processes used meanwhile (from /proc/stat, less our own runs' CPU time)
    and whether iou-eval's source under ``package_dir`` changed.  A peer
    that exits with code 3 cannot score ``iou_type``: it is not run again.
    """
    work.mkdir(parents=True, exist_ok=True)
    for path in (data.gt_path, data.pred_path):  # warm the page cache, untimed
        path.read_bytes()
    results: list[Run] = []
    failed: set[str] = set()
    fingerprint = source_fingerprint(package_dir)
    busy_before, started = _busy_cpu_seconds(), time.perf_counter()
    n = data.meta["images"]
    for rnd in range(runs):
        # Start each round one tool later, so no tool always runs first or last.
        shift = rnd % len(tools)
        for tool in tools[shift:] + tools[:shift]:
            if tool.name in failed:  # a tool that failed once is not retried
                continue
            if tool.max_images is not None and n > tool.max_images:
                continue
            if tool.name == BOOTSTRAP and iou_type == "boundary":
                continue  # the bootstrap row is about resampling, measured on boxes and masks
            slug = tool.name.replace(": ", "-").replace(" ", "_")
            out, log = work / f"{slug}-{rnd}.json", work / f"{slug}-{rnd}.log"
            out.unlink(missing_ok=True)
            wall, cpu, rss, code = measure(
                tool.argv(data.gt_path, data.pred_path, out, iou_type), log, timeout_s
            )
            run = Run(tool.name, n, rnd, round(wall, 4), round(cpu, 4), round(rss, 1), code)
            run.iou_type = iou_type
            if code == UNSUPPORTED_EXIT and not tool.is_floor and tool.name != OURS:
                run.unsupported = True
                run.error = f"cannot score {iou_type}: {_tail(log, 1)}"
            elif code != 0:
                run.error = f"exit {code}: {_tail(log)}"
            elif not tool.is_floor:
                try:
                    run.stats = tool.read_stats(out)  # type: ignore[misc]
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    run.error = f"no stats in {out.name}: {type(exc).__name__}: {exc}"
            if run.error:
                failed.add(tool.name)
            results.append(run)
            status = "ok" if run.error is None else f"FAILED ({run.error[:200]})"
            print(
                f"  [{iou_type} {n} images, round {rnd + 1}/{runs}] {tool.name:<24} "
                f"{wall:8.2f} s {rss:8.0f} MiB  {status}",
                file=sys.stderr,
                flush=True,
            )
    # A tool that forks workers gets one more, untimed, run whose memory is
    # sampled over its whole process tree (sampling would slow the timed runs).
    for tool in tools:
        too_big = tool.max_images is not None and n > tool.max_images
        skipped = tool.name == BOOTSTRAP and iou_type == "boundary"
        if tool.forks and tool.name not in failed and not too_big and not skipped:
            slug = tool.name.replace(" ", "_")
            out, log = work / f"{slug}-memory.json", work / f"{slug}-memory.log"
            out.unlink(missing_ok=True)
            wall, cpu, peak, code = measure(
                tool.argv(data.gt_path, data.pred_path, out, iou_type), log, timeout_s, tree=True
            )
            run = Run(tool.name, n, runs, round(wall, 4), round(cpu, 4), round(peak, 1), code)
            run.memory_only = True
            run.iou_type = iou_type
            if code != 0:
                run.error = f"exit {code}: {_tail(log)}"
            results.append(run)
            print(
                f"  [{iou_type} {n} images, memory run] {tool.name:<24} {peak:8.0f} MiB over its "
                "processes",
                file=sys.stderr,
                flush=True,
            )
    context = SizeContext(source_changed=fingerprint != source_fingerprint(package_dir))
    busy_after, elapsed = _busy_cpu_seconds(), time.perf_counter() - started
    if busy_before is not None and busy_after is not None and elapsed > 0:
        ours = sum(r.cpu_s for r in results if not math.isnan(r.cpu_s))
        context.other_cores = max(0.0, (busy_after - busy_before - ours) / elapsed)
    return results, context


# --------------------------------------------------------------------------- summarising


@dataclass
class Summary:
    """One tool at one size and iou type, over its successful runs.

    ``round_walls`` maps each successful timed round to its wall time, for
    ratios taken round by round (tools of one round ran side by side).
    """

    tool: str
    images: int
    iou_type: str = "bbox"
    runs: int = 0
    wall_median: float = math.nan
    wall_min: float = math.nan
    wall_max: float = math.nan
    cpu_median: float = math.nan
    rss_median: float = math.nan
    stats: list[float] | None = None
    max_abs_diff: float | None = None  # vs pycocotools
    note: str = ""
    errors: list[str] = field(default_factory=list)
    round_walls: dict[int, float] = field(default_factory=dict)


def _summary(tool: Tool, mine: list[Run], s: Summary) -> None:
    """Fill ``s`` from the runs ``mine`` of one tool at one size and iou type."""
    memory = [r for r in mine if r.memory_only and r.error is None]
    mine = [r for r in mine if not r.memory_only]
    if any(r.unsupported for r in mine):
        s.note = "cannot score masks" if s.iou_type == "segm" else f"cannot score {s.iou_type}"
        return
    ok = [r for r in mine if r.error is None]
    s.errors = [r.error for r in mine if r.error]
    if not ok:
        s.note = "failed: " + (s.errors[0] if s.errors else "not run")
        return
    walls = [r.wall_s for r in ok]
    s.runs = len(ok)
    s.round_walls = {r.round: r.wall_s for r in ok}
    s.wall_median, s.wall_min, s.wall_max = statistics.median(walls), min(walls), max(walls)
    s.cpu_median = statistics.median(r.cpu_s for r in ok)
    s.rss_median = statistics.median(r.max_rss_mib for r in ok)
    if memory:  # the whole process tree's peak, when it is larger
        s.rss_median = max(s.rss_median, memory[0].max_rss_mib)
    if not tool.is_floor:
        s.stats = ok[0].stats
        if any(r.stats != s.stats for r in ok[1:]):
            s.note = "stats differ between runs"
    if s.errors:
        s.note = (s.note + "; " if s.note else "") + f"{len(s.errors)} run(s) failed"


def reference_for(iou_type: str) -> str:
    """The tool whose 12 stats the others are compared with."""
    return BOUNDARY_REFERENCE if iou_type == "boundary" else REFERENCE


def summarise(tools: list[Tool], runs: list[Run], unavailable: dict[str, str]) -> list[Summary]:
    """Per tool, iou type and size: median and range of wall time, medians of CPU and RSS,
    stat check against pycocotools."""
    out: list[Summary] = []
    cells = sorted({(r.iou_type != "bbox", r.iou_type, r.images) for r in runs})
    for _, iou_type, n in cells:
        by_tool = {t.name: Summary(t.name, n, iou_type) for t in tools}
        for tool in tools:
            s = by_tool[tool.name]
            if tool.name in unavailable:
                s.note = f"unavailable: {unavailable[tool.name]}"
                continue
            mine = [
                r for r in runs if r.tool == tool.name and r.images == n and r.iou_type == iou_type
            ]
            ran = [r for r in mine if r.error is None and not r.memory_only]
            if not ran and tool.max_images is not None and n > tool.max_images:
                s.note = f"not run above {tool.max_images:,} images"
                continue
            if tool.name == BOOTSTRAP and iou_type == "boundary":
                s.note = "not run for boundary"
                continue
            _summary(tool, mine, s)
        ref = by_tool.get(reference_for(iou_type))
        for s in by_tool.values():
            if s.stats is not None and ref is not None and ref.stats is not None:
                s.max_abs_diff = max(abs(a - b) for a, b in zip(s.stats, ref.stats, strict=True))
        out.extend(by_tool.values())
    return out


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Section:
    """One measured data set: its iou type, its data, how many rounds, what else ran."""

    iou_type: str
    data: make_data.DataSet
    runs: int
    context: SizeContext | None = None

    @property
    def images(self) -> int:
        return self.data.meta["images"]


def machine_info() -> dict[str, str]:
    """nproc, CPU model, RAM and OS, read from the kernel where possible."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024**2:.1f} GiB"
                break
    except OSError:
        pass
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "nproc": str(nproc),
        "cpu": cpu,
        "ram": ram,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def _fmt_s(x: float) -> str:
    if math.isnan(x):
        return "–"
    return f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def _fmt_ratio(num: float, den: float) -> str:
    if math.isnan(num) or math.isnan(den) or den == 0:
        return "n/a"
    return f"{num / den:.2f}×"


def _fmt_diff(d: float | None) -> str:
    if d is None:
        return "–"
    return "0 (identical)" if d == 0 else f"{d:.1e}"


Key = tuple[str, int, str]  # (tool, images, iou type)


def render(
    summaries: list[Summary],
    tools: list[Tool],
    versions: dict[str, str | None],
    sections: list[Section],
    machine: dict[str, str],
    command: str,
) -> str:
    """The whole markdown report: boxes first, then masks when they were measured."""
    today = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `{command}` on {today}; rerun it to refresh this page (do not edit by hand).",
        "The harness lives in `tests/bench/` (`make_data.py`, `run_bench.py`, `peers/`).",
        "",
        "## Machine",
        "",
        f"- CPU: {machine['cpu']}, {machine['nproc']} cores (nproc)",
        f"- RAM: {machine['ram']}",
        f"- OS: {machine['os']}, Python {machine['python']}",
        "",
        "## Tools",
        "",
        "| tool | version | how it is run |",
        "| --- | --- | --- |",
    ]
    for tool in tools:
        version = versions.get(tool.name) or "unavailable"
        lines.append(f"| {tool.name} | {version} | {tool.how} |")
    by = {(s.tool, s.images, s.iou_type): s for s in summaries}
    boxes = [sec for sec in sections if sec.iou_type == "bbox"]
    masks = [sec for sec in sections if sec.iou_type == "segm"]
    edges = [sec for sec in sections if sec.iou_type == "boundary"]
    keypoints = [sec for sec in sections if sec.iou_type == "keypoints"]
    if boxes:
        lines += _box_data_lines(boxes)
        for sec in boxes:
            lines += _size_table(by, tools, sec, "##")
        lines += ["", "## Ratios", ""]
        lines += _ratio_lines(by, boxes, ())
    if masks:
        lines += _mask_data_lines(masks)
        for sec in masks:
            lines += _size_table(by, tools, sec, "###")
        lines += ["", "### Ratios (masks)", ""]
        lines += _ratio_lines(by, masks, SEGM_RATIO_PEERS)
    if edges:
        lines += _boundary_data_lines(edges)
        for sec in edges:
            lines += _size_table(by, tools, sec, "###")
        lines += ["", "### Ratios (Boundary IoU)", ""]
        lines += _boundary_ratio_lines(by, edges)
    if keypoints:
        lines += _keypoint_data_lines(keypoints)
        for sec in keypoints:
            lines += _size_table(by, tools, sec, "###")
        lines += ["", "### Ratios (keypoints)", ""]
        lines += _ratio_lines(by, keypoints, KEYPOINT_RATIO_PEERS)
    lines += _method_lines()
    return "\n".join(lines)


def _other_sections(path: Path) -> str:
    """What other benchmarks wrote below this report on the page (from its first
    ``<!-- `` marker on), kept as it is: this run rewrites only its own tables."""
    try:
        text = path.read_text()
    except OSError:
        return ""
    at = text.find("\n<!-- ")
    return "" if at < 0 else "\n" + text[at:].rstrip("\n") + "\n"


def _box_data_lines(sections: list[Section]) -> list[str]:
    lines = [
        "",
        "## Data",
        "",
        "Synthetic, seeded, with COCO val2017's statistics (`tests/bench/make_data.py`): "
        "images ~640×480, the 80 COCO categories with their real ids, ~7.3 ground truths "
        "per image with a heavy tail, ~1% crowd, ~41/34/25% small/medium/large, polygon "
        "segmentations (so the files have COCO's size), and up to 100 predictions per image "
        "derived from the ground truths (jitter, duplicates, wrong classes, background).",
        "",
        "| images | ground truths | crowd | GT/image (max) | small/medium/large | "
        "predictions | gt.json | preds.json | seed |",
        "| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for sec in sections:
        m = sec.data.meta
        shares = "/".join(f"{100 * x:.0f}%" for x in m["share_small_medium_large"])
        lines.append(
            f"| {m['images']:,} | {m['ground_truths']:,} | {m['crowd']:,} | "
            f"{m['gt_per_image_mean']} ({m['gt_per_image_max']}) | {shares} | "
            f"{m['predictions']:,} | {m['gt_bytes'] / 1e6:.1f} MB | "
            f"{m['pred_bytes'] / 1e6:.1f} MB | {m['seed']} |"
        )
    return lines


def _mask_data_lines(sections: list[Section]) -> list[str]:
    lines = [
        "",
        "## Masks (`--iou-type segm`)",
        "",
        "The same ground truth (polygon segmentations, each object one polygon of 6 to 56 "
        "vertices, ~34 on average, crowd regions as uncompressed RLE), scored as masks. The "
        "results are what detectron2's `instances_to_coco_json` writes for Mask R-CNN: per "
        "result `image_id`, `category_id`, `bbox`, `score` and a `segmentation` as compressed "
        "RLE (`{size, counts}`), at most 100 per image, most images full. A result derived "
        "from an object takes that object's outline stretched to its jittered box, a "
        "background result a lumpy ellipse in its box, every vertex moved by 1–6% of the "
        "box, rasterised by pycocotools at the image's size. Every tool scores "
        '`iouType="segm"`; the results carry boxes, so `loadRes` takes each result\'s area '
        "from its box, as it does for detectron2's files.",
        "",
        "| images | ground truths | crowd | predictions | per image | RLE characters per "
        "mask (mean) | gt.json | preds.json | seed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for sec in sections:
        m = sec.data.meta
        lines.append(
            f"| {m['images']:,} | {m['ground_truths']:,} | {m['crowd']:,} | "
            f"{m['predictions']:,} | {m.get('predictions_per_image_mean', '–')} | "
            f"{m.get('mask_counts_chars_mean', '–')} | {m['gt_bytes'] / 1e6:.1f} MB | "
            f"{m['pred_bytes'] / 1e6:.1f} MB | {m['seed']} |"
        )
    return lines


def _boundary_data_lines(sections: list[Section]) -> list[str]:
    lines = [
        "",
        "## Boundary IoU (`--iou-type boundary`)",
        "",
        "The synthetic mask set (that of `--iou-type segm`), at its own size, scored with Boundary IoU (dilation ratio 0.02: "
        "16 pixels at 640×480, 15 at 640×427, 12 at 500×375). Only faster-coco-eval among the "
        'peers scores it (`iouType="boundary"`); pycocotools, hotcoco, ultrafast-pycocotools '
        "and vernier cannot and are marked so. Its 12 numbers are the reference of the "
        "Δ column here. The 500×375 images' 0.02 × diagonal is 12.5 pixels, which "
        "boundary-iou-api (and iou-eval) round to 12 by Python's `round`, halves to even; "
        "faster-coco-eval rounds every k + 0.5 down, to 12 as well here (it would differ at an "
        "odd k).",
        "",
        "| images | ground truths | crowd | predictions | per image | gt.json | preds.json | seed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for sec in sections:
        m = sec.data.meta
        lines.append(
            f"| {m['images']:,} | {m['ground_truths']:,} | {m['crowd']:,} | "
            f"{m['predictions']:,} | {m.get('predictions_per_image_mean', '–')} | "
            f"{m['gt_bytes'] / 1e6:.1f} MB | {m['pred_bytes'] / 1e6:.1f} MB | {m['seed']} |"
        )
    return lines


def _boundary_ratio_lines(by: dict[Key, Summary], sections: list[Section]) -> list[str]:
    """faster-coco-eval against iou-eval on Boundary IoU: time, CPU, memory, per size."""

    def get(tool: str, n: int) -> Summary | None:
        return by.get((tool, n, "boundary"))

    parts_time, parts_rss = [], []
    for sec in sections:
        n = sec.images
        ours, theirs = get(OURS, n), get(BOUNDARY_REFERENCE, n)
        if ours is None or theirs is None:
            continue
        per_round = round_ratios(theirs, ours)
        spread = (
            f", per round {min(per_round):.2f}–{max(per_round):.2f}×" if len(per_round) >= 2 else ""
        )
        parts_time.append(
            f"{n:,} images: {_fmt_ratio(theirs.wall_median, ours.wall_median)} (CPU "
            f"{_fmt_ratio(theirs.cpu_median, ours.cpu_median)}{spread})"
        )
        parts_rss.append(f"{n:,} images: {_fmt_ratio(ours.rss_median, theirs.rss_median)}")
    return [
        f"- {BOUNDARY_REFERENCE} time / iou-eval time: " + "; ".join(parts_time),
        f"- iou-eval peak memory / {BOUNDARY_REFERENCE} peak memory: " + "; ".join(parts_rss),
    ]


def _keypoint_data_lines(sections: list[Section]) -> list[str]:
    lines = [
        "",
        "## Keypoints (`--iou-type keypoints`)",
        "",
        "Synthetic, seeded, with COCO person-keypoints val2017's shape "
        "(`tests/bench/keypoint_data.py`): people in about half the images, ~2.2 per image, "
        "~1% crowd regions, the 17 COCO keypoints labelled on people of 32×32 pixels and "
        "more (`num_keypoints` 0, ignored, below), `area` 0.53 of the box; results as a pose "
        "model's `val(save_json=True)` writes them (`bbox`, 17 `[x, y, confidence]`, score), "
        'at most 20 per image. Every tool scores `iouType="keypoints"` with COCO\'s sigmas.',
        "",
        "| images | people | labelled | crowd | predictions | per image | gt.json | "
        "preds.json | seed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for sec in sections:
        m = sec.data.meta
        lines.append(
            f"| {m['images']:,} | {m['ground_truths']:,} | {m['labelled']:,} | {m['crowd']:,} | "
            f"{m['predictions']:,} | {m['predictions_per_image_mean']} | "
            f"{m['gt_bytes'] / 1e6:.1f} MB | {m['pred_bytes'] / 1e6:.1f} MB | {m['seed']} |"
        )
    return lines


def _size_table(by: dict[Key, Summary], tools: list[Tool], sec: Section, level: str) -> list[str]:
    """The table of every tool on one data set."""
    n, iou_type = sec.images, sec.iou_type
    ours = by.get((OURS, n, iou_type))
    ours_wall = ours.wall_median if ours else math.nan
    what = "" if iou_type == "bbox" else f", {iou_type}"
    lines = [
        "",
        f"{level} {n:,} images{what} ({sec.runs} runs per tool, interleaved)",
        "",
        "Wall time of the whole command, from spawn to exit; CPU is user+system "
        "(above wall when a tool uses both cores); peak memory is the kernel's peak "
        "resident set size (median over the runs), and for iou-eval, which forks worker "
        "processes, the larger of that and its process tree's peak proportional set size "
        "from one more, untimed run.",
        "",
        *_context_lines(sec.context),
        "| tool | wall median (s) | wall min–max (s) | CPU (s) | peak memory (MiB) | "
        f"time / iou-eval | max \\|Δ\\| vs {reference_for(iou_type)} "
        f"({10 if iou_type == 'keypoints' else 12} stats) | note |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for tool in tools:
        s = by[(tool.name, n, iou_type)]
        span = "–" if s.runs == 0 else f"{_fmt_s(s.wall_min)}–{_fmt_s(s.wall_max)}"
        rss = "–" if math.isnan(s.rss_median) else f"{s.rss_median:.0f}"
        diff = "n/a" if tool.is_floor else _fmt_diff(s.max_abs_diff)
        note = s.note.replace("|", "\\|")
        lines.append(
            f"| {tool.name} | {_fmt_s(s.wall_median)} | {span} | {_fmt_s(s.cpu_median)} | "
            f"{rss} | {_fmt_ratio(s.wall_median, ours_wall)} | {diff} | {note} |"
        )
    return lines


def _method_lines() -> list[str]:
    return [
        "",
        "## Method",
        "",
        "- Every tool and floor is a separate process running the whole job (start-up, "
        "reading both files, evaluating, writing the 12 stats), timed from spawn to exit; "
        "CPU time and peak RSS come from `os.wait4` for that one process (CPU time includes "
        "its reaped worker processes), spawned by a minimal wrapper (`tests/bench/measure.py`) "
        "so that the runner's own memory does not leak into the child's peak RSS.",
        "- iou-eval forks worker processes (`--workers`, one per core by default). Summing "
        "their resident sizes would count the pages they share with the parent again in every "
        "child, and `wait4` reports one process's peak only; so one more run, untimed, samples "
        "the proportional set size (`/proc/PID/smaps_rollup`, shared pages split among their "
        "sharers) of the whole process tree every 10 ms, and the peak of the sum is reported "
        "when it exceeds the parent's own peak RSS.",
        "- Runs are interleaved: each round runs every tool once, each round starting one "
        "tool later. Both files are read once beforehand so every run finds them in the "
        'page cache. A ratio is the ratio of the medians; its spread ("per round") is the '
        "range of the same ratio taken within each round, where the two tools ran minutes "
        "apart at most, so that a slow drift of the shared machine cancels.",
        "- Peers run in their own virtual environment, `.venv-bench` (never a dependency of "
        "iou-eval), through `tests/bench/peers/peer_coco.py`, with each project's "
        "pycocotools-style API (vernier: its own API on the files' bytes, in its bit-exact "
        '`parity_mode="strict"`). iou-eval runs from `.venv`. A peer that cannot score masks '
        "is marked so in the masks tables.",
        "- Every evaluator's 12 stats are compared with pycocotools' on the same files "
        "(Boundary IoU: with faster-coco-eval's); `0 (identical)` means bit-for-bit equal floats.",
        "- Floors (run with `.venv-bench`'s Python, all importing numpy first) bound from "
        "below what any Python tool reading these JSON files can take.",
        "",
        "Reproduce with `make bench` (boxes at 5,000 and 20,000 images, 3 and 2 runs; masks "
        "at 5,000 images, 3 runs; Boundary IoU at 500 images, 3 runs). For a quick check "
        "during development: `make bench BENCH_SIZES=500 BENCH_RUNS=1` (boxes and masks at "
        "500 images), which writes its report to `bench_data/benchmarks.md` instead of this "
        "page; `make bench BENCH_IOU_TYPES=boundary` measures the Boundary IoU row alone.",
        "",
    ]


def _context_lines(context: SizeContext | None) -> list[str]:
    """Warnings about what else ran on the machine while one size was measured."""
    if context is None:
        return []
    lines = []
    if context.other_cores is not None:
        line = (
            f"Other processes used {context.other_cores:.2f} of the machine's cores on "
            "average during these runs."
        )
        if context.other_cores > 0.25:
            line += " Wall times are inflated and noisier for it; CPU times much less so."
        lines += [line, ""]
    if context.source_changed:
        lines += [
            "**iou-eval's source changed while these runs went on: its runs may mix versions.**",
            "",
        ]
    return lines


def round_ratios(num: Summary | None, den: Summary | None) -> list[float]:
    """``num``'s wall time over ``den``'s, round by round (rounds where both ran)."""
    if num is None or den is None:
        return []
    rounds = sorted(set(num.round_walls) & set(den.round_walls))
    return [num.round_walls[r] / den.round_walls[r] for r in rounds if den.round_walls[r] > 0]


def _ratio_lines(
    by: dict[Key, Summary], sections: list[Section], more_peers: tuple[str, ...]
) -> list[str]:
    """The headline ratios, one bullet per comparison, one entry per size.

    Time ratios use median wall times, with the same ratio of median CPU times
    in brackets (on a busy machine the CPU ratio is the steadier of the two)
    and, over two rounds or more, the range of the round-by-round ratios.
    """
    iou_type = sections[0].iou_type
    sizes = [sec.images for sec in sections]

    def get(attr: str, tool: str, n: int) -> float:
        s = by.get((tool, n, iou_type))
        return getattr(s, attr) if s else math.nan

    def time_ratio(num: str, den: str) -> Callable[[int], str]:
        def fmt(n: int) -> str:
            wall = _fmt_ratio(get("wall_median", num, n), get("wall_median", den, n))
            cpu = _fmt_ratio(get("cpu_median", num, n), get("cpu_median", den, n))
            per_round = round_ratios(by.get((num, n, iou_type)), by.get((den, n, iou_type)))
            spread = ""
            if len(per_round) >= 2:
                spread = f", per round {min(per_round):.2f}–{max(per_round):.2f}×"
            return f"{wall} (CPU {cpu}{spread})"

        return fmt

    def rss_ratio(num: str, den: str) -> Callable[[int], str]:
        return lambda n: _fmt_ratio(get("rss_median", num, n), get("rss_median", den, n))

    def per_size(fn: Callable[[int], str]) -> str:
        return "; ".join(f"{n:,} images: {fn(n)}" for n in sizes)

    def ms_per_image(n: int) -> str:
        t = get("wall_median", OURS, n)
        return "n/a" if math.isnan(t) else f"{1000 * t / n:.3f} ms"

    lines = [
        f"- iou-eval time / {FASTEST_PEER} time: " + per_size(time_ratio(OURS, FASTEST_PEER)),
        f"- {REFERENCE} time / iou-eval time: " + per_size(time_ratio(REFERENCE, OURS)),
        *(
            f"- {peer} time / iou-eval time: " + per_size(time_ratio(peer, OURS))
            for peer in more_peers
        ),
        f"- `{BOOTSTRAP}` time / iou-eval time (target: at most 20×): "
        + per_size(time_ratio(BOOTSTRAP, OURS)),
        f"- iou-eval peak memory / {FASTEST_PEER} peak memory: "
        + per_size(rss_ratio(OURS, FASTEST_PEER)),
        f"- iou-eval peak memory / {REFERENCE} peak memory: "
        + per_size(rss_ratio(OURS, REFERENCE)),
        "- iou-eval wall time per image: " + per_size(ms_per_image),
    ]
    if len(sizes) >= 2:
        lo, hi = min(sizes), max(sizes)
        per_lo = get("wall_median", OURS, lo) / lo
        per_hi = get("wall_median", OURS, hi) / hi
        lines[-1] += f" (time per image at {hi:,} / at {lo:,}: {_fmt_ratio(per_hi, per_lo)})"
    return lines


# --------------------------------------------------------------------------- command line


def parse_runs(text: str, sizes: list[int]) -> dict[int, int]:
    """``""`` -> 3 runs up to 5,000 images, 2 above; ``"2"`` -> 2 for every size;
    ``"3,2"`` -> one count per size, in order."""
    if not text.strip():
        return {n: 3 if n <= 5000 else 2 for n in sizes}
    try:
        counts = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError as exc:
        raise SystemExit(f"runs must be integers, got {text!r}") from exc
    if len(counts) == 1:
        counts *= len(sizes)
    if len(counts) != len(sizes) or min(counts) < 1:
        raise SystemExit(f"runs {text!r} must be one positive count, or one per size {sizes}")
    return dict(zip(sizes, counts, strict=True))


def _plan(args: argparse.Namespace) -> tuple[list[tuple[str, int, int]], bool, str]:
    """What to measure: ``[(iou_type, images, runs)]``, whether it is the default
    configuration (whose report is docs/benchmarks.md), and the command that
    reproduces it."""
    sizes = make_data.parse_sizes(args.sizes.strip() or make_data.DEFAULT_SIZES)
    segm = make_data.segm_sizes(args.segm_sizes, sizes)
    kpt = make_data.keypoint_sizes(args.kpt_sizes)
    iou_types = [t for t in args.iou_types.replace(" ", "").split(",") if t]
    unknown = sorted(set(iou_types) - set(IOU_TYPES))
    if unknown or not iou_types:
        raise SystemExit(f"iou types must be among {IOU_TYPES}, got {args.iou_types!r}")
    plan = []
    if "bbox" in iou_types:
        plan += [("bbox", n, r) for n, r in parse_runs(args.runs, sizes).items()]
    if "segm" in iou_types and segm:
        # One count per box size: a mask size takes its box size's count.
        box_runs = parse_runs(args.runs, sizes)
        single = "," not in args.runs
        plan += [
            ("segm", n, box_runs[n] if n in box_runs and not single else r)
            for n, r in parse_runs(args.runs if single else "", segm).items()
        ]
    edges = args.boundary_sizes.strip() or BOUNDARY_DEFAULT_SIZES
    if "boundary" in iou_types and edges != "0":
        boundary_runs = parse_runs(
            args.runs if "," not in args.runs else "", make_data.parse_sizes(edges)
        )
        plan += [("boundary", n, r) for n, r in boundary_runs.items()]
    if "keypoints" in iou_types and kpt:
        single = "," not in args.runs
        plan += [
            ("keypoints", n, r) for n, r in parse_runs(args.runs if single else "", kpt).items()
        ]
    default_config = (
        sizes == make_data.parse_sizes(make_data.DEFAULT_SIZES)
        and not args.segm_sizes.strip()
        and not args.boundary_sizes.strip()
        and not args.kpt_sizes.strip()
        and iou_types == list(IOU_TYPES)
        and not args.tools.strip()
    )
    command = "make bench"
    if args.sizes.strip() and sizes != make_data.parse_sizes(make_data.DEFAULT_SIZES):
        command += f" BENCH_SIZES={','.join(map(str, sizes))}"
    for flag, env in (
        (args.runs, "BENCH_RUNS"),
        (args.segm_sizes, "BENCH_SEGM_SIZES"),
        (args.boundary_sizes, "BENCH_BOUNDARY_SIZES"),
        (args.kpt_sizes, "BENCH_KPT_SIZES"),
        (args.tools, "BENCH_TOOLS"),
    ):
        if flag.strip():
            command += f" {env}={flag.strip()}"
    if iou_types != list(IOU_TYPES):
        command += f" BENCH_IOU_TYPES={','.join(iou_types)}"
    return plan, default_config, command


def _probe_all(tools: list[Tool]) -> tuple[dict[str, str | None], dict[str, str]]:
    """Every tool's version, and why each unavailable one is."""
    versions: dict[str, str | None] = {}
    unavailable: dict[str, str] = {}
    for tool in tools:
        version, why = probe(tool)
        if tool.name == OURS and version is not None:
            version += git_state(ROOT)
        versions[tool.name] = version
        if why is not None:
            unavailable[tool.name] = why
        print(f"{tool.name:<24} {version or 'UNAVAILABLE: ' + str(why)}", file=sys.stderr)
    return versions, unavailable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=os.environ.get("BENCH_SIZES", ""))
    parser.add_argument("--runs", default=os.environ.get("BENCH_RUNS", ""))
    parser.add_argument(
        "--segm-sizes",
        default=os.environ.get("BENCH_SEGM_SIZES", ""),
        help="image counts of the mask set (default: the sizes up to 5000; 0: none)",
    )
    parser.add_argument(
        "--kpt-sizes",
        default=os.environ.get("BENCH_KPT_SIZES", ""),
        help="image counts of the keypoint set (default: 5000; 0: none)",
    )
    parser.add_argument(
        "--boundary-sizes",
        default=os.environ.get("BENCH_BOUNDARY_SIZES", ""),
        help=f"image counts of the Boundary IoU runs on the mask set (default "
        f"{BOUNDARY_DEFAULT_SIZES}; 0: none)",
    )
    parser.add_argument(
        "--iou-types",
        default=os.environ.get("BENCH_IOU_TYPES", ",".join(IOU_TYPES)),
        help="what to measure: bbox, segm, boundary, keypoints (comma-separated)",
    )
    parser.add_argument(
        "--tools",
        default=os.environ.get("BENCH_TOOLS", ""),
        help="only these tools (comma-separated names, e.g. iou-eval,ultrafast-pycocotools)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=make_data.DEFAULT_DATA_DIR)
    parser.add_argument(
        "--iou-eval",
        default=os.environ.get("IOU_EVAL", str(ROOT / ".venv" / "bin" / "iou-eval")),
        help="the iou-eval executable (its venv's python is used for the version)",
    )
    parser.add_argument("--out", type=Path, help="markdown report (default: see module doc)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    args = parser.parse_args(argv)

    plan, default_config, command = _plan(args)
    out_path = args.out or (DEFAULT_OUT if default_config else DEV_OUT)
    tools = build_tools(sys.executable, args.iou_eval)
    if args.tools.strip():
        wanted = {t.strip() for t in args.tools.split(",") if t.strip()}
        missing = wanted - {t.name for t in tools}
        if missing:
            raise SystemExit(f"unknown tools {sorted(missing)} (known: {[t.name for t in tools]})")
        tools = [t for t in tools if t.name in wanted]
    versions, unavailable = _probe_all(tools)
    available = [t for t in tools if t.name not in unavailable]

    package_dir = iou_eval_package_dir(args.iou_eval)
    sections, all_runs = [], []
    for iou_type, n, runs in plan:
        started = time.perf_counter()
        data = make_data.ensure(n, args.seed, args.data_dir, kind=DATA_KIND[iou_type])
        print(
            f"{iou_type} data for {n} images: {data.folder} "
            f"({time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
        prefix = "" if iou_type == "bbox" else f"{iou_type}-"
        work = args.data_dir / "runs" / f"{prefix}{n}-seed{args.seed}"
        done, context = bench_size(available, data, runs, work, args.timeout, package_dir, iou_type)
        all_runs += done
        sections.append(Section(iou_type, data, runs, context))

    summaries = summarise(tools, all_runs, unavailable)
    report = render(summaries, tools, versions, sections, machine_info(), command)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(report + _other_sections(out_path))
    raw = {
        "command": command,
        "argv": [sys.executable, *sys.argv],
        "machine": machine_info(),
        "versions": versions,
        "unavailable": unavailable,
        "datasets": [sec.data.meta for sec in sections],
        "contexts": {
            f"{sec.iou_type}-{sec.images}": asdict(sec.context)
            for sec in sections
            if sec.context is not None
        },
        # NaN (a run that never finished) as null, so the file stays strict JSON.
        "runs": [
            {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(r).items()}
            for r in all_runs
        ],
    }
    raw_path = args.data_dir / "results.json"
    raw_path.parent.mkdir(parents=True, exist_ok=True)
    raw_path.write_text(json.dumps(raw, indent=1) + "\n")
    print(report)
    print(f"report written to {out_path}; raw runs in {raw_path}", file=sys.stderr)
    print(f"reproduce with: {command}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
