"""Oriented boxes on a DOTA-v1.0-val-sized synthetic set: ``--protocol dota`` and the COCO-style default.

Usage (normally through ``make bench-dota``, part of ``make bench``)::

    python tests/bench/bench_dota.py [--images 458] [--seed 0] [--runs 1]

Writes (or reuses) ``bench_data/dota-<images>-<seed>/``: ``labelTxt/`` with
DOTA-v1.0 val's size (458 images of 800 to 4000 pixels, about 28,900
objects, small vehicles the most frequent class as in DOTA, clusters of
parked cars, about 10 % difficult) and the devkit's ``Task1_<class>.txt``
results of a plausible detector (about 2 detections an object, duplicates,
loose boxes, false alarms).  Then times, each in its own process through
``measure.py`` (wall time, peak resident size):

- ``iou-eval labelTxt task1 -p dota -f json`` (the devkit's polygon IoU), with
  the compiled kernel and with its numpy reference (``IOU_EVAL_NO_KERNEL=1``);
- ``iou-eval labelTxt task1 -f json`` (COCO-style AP on the exact overlap).

The section between the ``dota-bench`` markers of ``docs/benchmarks.md``
is replaced (appended if absent) with the figures; ``--out`` writes elsewhere.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_OUT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- dota-bench:begin -->", "<!-- dota-bench:end -->"

# DOTA-v1.0 val's objects per class (rounded), which the synthetic set follows.
CLASS_SHARE = {
    "plane": 2500, "baseball-diamond": 210, "bridge": 460, "ground-track-field": 140,
    "small-vehicle": 11000, "large-vehicle": 4400, "ship": 8000, "tennis-court": 760,
    "basketball-court": 130, "storage-tank": 2900, "soccer-ball-field": 150,
    "roundabout": 180, "harbor": 2100, "swimming-pool": 440, "helicopter": 70,
}  # fmt: skip
SIZE = {"small-vehicle": (12, 30), "large-vehicle": (25, 70), "ship": (15, 120), "plane": (40, 120),
        "storage-tank": (20, 90), "harbor": (60, 300), "bridge": (60, 300)}  # fmt: skip


def _corners(b: np.ndarray) -> np.ndarray:
    """``[N, 5]`` cx cy w h angle -> ``[N, 8]`` as Ultralytics' xywhr2xyxyxyxy."""
    c, s = np.cos(b[:, 4]), np.sin(b[:, 4])
    v1 = np.stack([b[:, 2] / 2 * c, b[:, 2] / 2 * s], 1)
    v2 = np.stack([-b[:, 3] / 2 * s, b[:, 3] / 2 * c], 1)
    ctr = b[:, :2]
    return np.stack([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2], 1).reshape(-1, 8)


def make(folder: Path, images: int, seed: int) -> tuple[int, int]:
    """Write the set; returns (objects, detections)."""
    rng = np.random.default_rng(seed)
    (folder / "labelTxt").mkdir(parents=True)
    (folder / "task1").mkdir()
    names = list(CLASS_SHARE)
    share = np.array(list(CLASS_SHARE.values()), dtype=float)
    per_image = rng.poisson(sum(CLASS_SHARE.values()) / 458, images)
    dets: dict[str, list[str]] = {n: [] for n in names}
    n_obj = n_det = 0
    for i in range(images):
        stem = f"P{i:04d}"
        side = rng.uniform(800, 4000, 2)
        k = int(per_image[i])
        cls = rng.choice(len(names), k, p=share / share.sum())
        lo = np.array([SIZE.get(names[c], (30, 200))[0] for c in cls])
        hi = np.array([SIZE.get(names[c], (30, 200))[1] for c in cls])
        w = rng.uniform(lo, hi)
        box = np.column_stack([
            rng.uniform(0.05, 0.95, k) * side[0], rng.uniform(0.05, 0.95, k) * side[1], w,
            w * rng.uniform(0.3, 1.0, k), rng.uniform(-math.pi / 2, math.pi / 2, k),
        ])  # fmt: skip
        # Parked cars in rows: a third of the small vehicles next to the one before.
        row = np.flatnonzero((cls == 4) & (rng.random(k) < 0.35))[1:]
        box[row, :2] = box[row - 1, :2] + box[row - 1, 3:4] * 1.2
        box[row, 4] = box[row - 1, 4]
        gt = np.round(_corners(box), 1)
        difficult = rng.random(k) < 0.1
        lines = ["imagesource:GoogleEarth", "gsd:0.146"]
        lines += [" ".join(f"{v:.1f}" for v in g) + f" {names[c]} {int(d)}"
                  for g, c, d in zip(gt, cls, difficult, strict=True)]  # fmt: skip
        (folder / "labelTxt" / f"{stem}.txt").write_text("\n".join(lines) + "\n")
        n_obj += k
        # Detections: most objects found (some twice), jittered; false alarms.
        found = rng.random(k) < 0.85
        twice = found & (rng.random(k) < 0.25)
        src = np.concatenate([np.flatnonzero(found), np.flatnonzero(twice)])
        d = box[src].copy()
        d[:, :2] += rng.normal(0, 0.08, (len(src), 2)) * d[:, 2:3]
        d[:, 2:4] *= rng.uniform(0.85, 1.15, (len(src), 2))
        d[:, 4] += rng.normal(0, 0.08, len(src))
        fa = max(1, k // 3)
        false_cls = rng.choice(len(names), fa, p=share / share.sum())
        fb = np.column_stack([rng.uniform(0, side[0], fa), rng.uniform(0, side[1], fa),
                              rng.uniform(15, 80, fa), rng.uniform(10, 40, fa),
                              rng.uniform(-1.5, 1.5, fa)])  # fmt: skip
        all_boxes = np.vstack([d, fb])
        all_cls = np.concatenate([cls[src], false_cls])
        score = np.concatenate([rng.beta(5, 2, len(src)), rng.beta(2, 5, fa)])
        for poly, c, s in zip(np.round(_corners(all_boxes), 1), all_cls, score, strict=True):
            dets[names[c]].append(f"{stem} {s:.4f} " + " ".join(f"{v:.1f}" for v in poly))
        n_det += len(all_cls)
    for n, rows in dets.items():
        (folder / "task1" / f"Task1_{n}.txt").write_text("\n".join(rows) + "\n")
    (folder / "done").write_text(json.dumps({"objects": n_obj, "detections": n_det}))
    return n_obj, n_det


def measured(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """``iou-eval ARGS`` through measure.py: (wall seconds, peak MiB, stdout)."""
    with (
        tempfile.NamedTemporaryFile("r", suffix=".txt") as res,
        tempfile.TemporaryFile("w+") as out,
    ):
        cmd = [sys.executable, "-I", "-S", str(HERE / "measure.py"), res.name,
               sys.executable, "-m", "iou_eval", *args]  # fmt: skip
        subprocess.run(cmd, check=True, stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT,
                       env={**os.environ, **(env or {})})  # fmt: skip
        wall, _cpu, peak_kib, code = res.read().split()
        out.seek(0)
        if int(code) != 0:
            raise SystemExit(f"iou-eval {' '.join(args)} exited {code}")
        return float(wall), int(peak_kib) / 1024, out.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=458)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args()
    folder = ROOT / "bench_data" / f"dota-{a.images}-{a.seed}"
    if not (folder / "done").exists():
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        make(folder, a.images, a.seed)
    counts = json.loads((folder / "done").read_text())
    gt, pred = str(folder / "labelTxt"), str(folder / "task1")
    rows = []
    cases = (
        ("--protocol dota", ["-p", "dota"], {}),
        (
            "--protocol dota, numpy (IOU_EVAL_NO_KERNEL=1)",
            ["-p", "dota"],
            {"IOU_EVAL_NO_KERNEL": "1"},
        ),
        ("default (COCO-style, obb)", [], {}),
    )
    for label, extra, env in cases:
        args = [gt, pred, *extra, "-f", "json", "--workers", "1"]
        runs = [measured(args, env) for _ in range(a.runs)]
        wall = min(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        summary = json.loads(runs[0][2])["summary"]
        head = "mAP" if "mAP" in summary else "AP"
        rows.append((label, wall, peak, head, summary[head]))
        print(f"{label}: {wall:.2f} s, peak {peak:.0f} MiB, {head} {summary[head]:.4f}")
    text = _section(a, counts, rows, reader_times(gt, pred, max(3, a.runs)))
    _write(a.out, text)


def reader_times(gt: str, pred: str, runs: int) -> list[tuple[str, float, float]]:
    """Reading the files, in this process: the compiled column reader against the Python path
    (``IOU_EVAL_NO_KERNEL=1``), interleaved, best of ``runs`` each; the rows alone (the files
    read and split into columns) and the whole loader (with the boxes' checks)."""
    from iou_eval.io.loaders import dota
    from iou_eval.io.loaders.common import LoadOptions, folder_files

    gt_files = folder_files(gt, ".txt", "labels")
    pred_files = folder_files(pred, ".txt", "results")
    cases = (
        (
            "labelTxt/ rows",
            lambda: dota._scanned_labels(gt_files),
            lambda: dota._label_rows(gt_files),
        ),
        (
            "Task1 rows",
            lambda: dota._scanned_task1(pred_files),
            lambda: dota._task1_rows(pred_files),
        ),
        ("labelTxt/ loader", lambda: dota.load_dota(gt, "gt", LoadOptions()), None),
        ("Task1 loader", lambda: dota.load_task1(pred, "pred", LoadOptions()), None),
    )
    out = []
    for label, fast, slow in cases:
        best = {"0": float("inf"), "1": float("inf")}
        for _ in range(runs):
            for off in best:
                os.environ["IOU_EVAL_NO_KERNEL"] = off
                t = time.perf_counter()
                result = (fast if off == "0" or slow is None else slow)()
                best[off] = min(best[off], time.perf_counter() - t)
                if off == "0" and result is None:
                    raise SystemExit(f"the compiled reader gave up on {label}")
        os.environ.pop("IOU_EVAL_NO_KERNEL")
        out.append((label, best["0"], best["1"]))
        print(f"reading {label}: {best['0']:.3f} s compiled, {best['1']:.3f} s Python")
    return out


def _section(a, counts: dict, rows: list, readers: list) -> str:
    lines = [
        BEGIN,
        "",
        f"DOTA-v1.0 val's size, synthetic (`make bench-dota`): {a.images} images of 800 to 4000 "
        f"pixels, {counts['objects']:,} oriented objects in 15 classes, {counts['detections']:,} "
        f"detections in the devkit's `Task1_<class>.txt` files (seed {a.seed}); one process "
        f"(`--workers 1`), best of {a.runs}; {platform.machine()}, Python "
        f"{platform.python_version()}.",
        "",
        "| run | wall | peak memory | headline |",
        "|---|---:|---:|---:|",
    ]
    for label, wall, peak, head, value in rows:
        lines.append(f"| {label} | {wall:.2f} s | {peak:.0f} MiB | {head} {value:.4f} |")
    lines += [
        "",
        "Reading the files, in one process: the compiled column reader against the Python "
        "path (`IOU_EVAL_NO_KERNEL=1`), interleaved, best of "
        f"{max(3, a.runs)}; rows: the files read and split into columns; loader: with the "
        f"boxes' checks and the dataset (load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores):",
        "",
        "| files | compiled | Python | ratio |",
        "|---|---:|---:|---:|",
    ]
    for label, fast, slow in readers:
        lines.append(f"| {label} | {fast:.3f} s | {slow:.3f} s | {slow / fast:.1f}x |")
    lines += ["", END]
    return "\n".join(lines)


def _write(out: Path, section: str) -> None:
    text = out.read_text() if out.exists() else ""
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n## Oriented boxes (DOTA)\n\n" + section + "\n"
    out.write_text(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
