"""Time the IoU toolkit: ``iou.boxes`` on N x N boxes and ``iou-eval semseg`` on label maps.

Usage: python tests/bench/bench_iou.py [--boxes 10000] [--maps 500] [--size 1024x2048]

Prints a Markdown table: wall time, peak resident memory and throughput of
each case.  Every case runs in a process of its own, started from this
script, which imports nothing heavy: on Linux a child's ``ru_maxrss`` starts
from the high-water mark of the process that started it, so a lean parent
keeps the reading the child's own (``os.wait4`` returns it).

The label maps are synthetic, Cityscapes-sized by default (19 classes plus
ignore 255, blocky regions, a prediction that disagrees on about a fifth of
the pixels), written as PNGs to a temporary folder that is removed after.
Figures are indicative: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

BOXES_CHILD = """
import sys, time
import numpy as np
from iou_eval import iou
n, kind = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
def boxes():
    xy = rng.uniform(0, 1000, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(1, 200, (n, 2))], axis=1)
a, b = boxes(), boxes()
t = time.perf_counter()
m = iou.boxes(a, b, kind=kind)
print(time.perf_counter() - t, float(m.mean()))
"""

MAPS_CHILD = """
import sys
import numpy as np
from PIL import Image
folder, count, h, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
block = 32
for i in range(count):
    coarse = rng.integers(0, 19, (h // block + 1, w // block + 1)).astype(np.uint8)
    gt = np.repeat(np.repeat(coarse, block, 0), block, 1)[:h, :w]
    gt[: h // 16] = 255  # an ignored band (the ego vehicle's bonnet, say)
    wrong = rng.random(coarse.shape) < 0.2
    pred_coarse = np.where(wrong, rng.integers(0, 19, coarse.shape), coarse).astype(np.uint8)
    pred = np.repeat(np.repeat(pred_coarse, block, 0), block, 1)[:h, :w]
    # Edges off by a few pixels, as a model's are.
    pred = np.roll(pred, int(rng.integers(-4, 5)), axis=1)
    Image.fromarray(gt).save(f"{folder}/gt/map{i:05d}.png", compress_level=1)
    Image.fromarray(pred).save(f"{folder}/pred/map{i:05d}.png", compress_level=1)
"""


def run_child(args: list[str]) -> tuple[float, float, str]:
    """Run a command; its wall time (s), peak resident memory (MiB) and stdout."""
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(args[:3])} ... failed with exit code {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out


def bench_boxes(n: int, kind: str) -> list[str]:
    wall, peak, out = run_child([sys.executable, "-c", BOXES_CHILD, str(n), kind])
    compute = float(out.split()[0])
    pairs = n * n
    return [
        f"`iou.boxes(kind={kind!r})`",
        f"{n:,} × {n:,} boxes",
        f"{compute:.2f} (process {wall:.2f})",
        f"{peak:.0f}",
        f"{pairs / compute / 1e6:.0f} M pairs/s",
    ]


def bench_semseg(count: int, h: int, w: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="iou-bench-") as folder:
        os.makedirs(f"{folder}/gt")
        os.makedirs(f"{folder}/pred")
        t = time.perf_counter()
        run_child([sys.executable, "-c", MAPS_CHILD, folder, str(count), str(h), str(w)])
        print(f"bench: wrote {count} PNG pairs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        out_json = f"{folder}/miou.json"
        cli = [sys.executable, "-m", "iou_eval", "semseg", f"{folder}/gt", f"{folder}/pred",
               "--num-classes", "19", "-f", "json", "-o", out_json, "-q"]  # fmt: skip
        wall, peak, _ = run_child(cli)
        with open(out_json) as fh:
            miou = json.load(fh)["summary"]["mIoU"]
    pixels = count * h * w
    return [
        f"`iou-eval semseg` (mIoU {miou:.3f})",
        f"{count} maps of {h} × {w}",
        f"{wall:.2f} (whole process)",
        f"{peak:.0f}",
        f"{count / wall:.1f} maps/s, {pixels / wall / 1e6:.0f} Mpx/s",
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boxes", type=int, default=10_000, help="N of the N x N box matrix")
    p.add_argument("--maps", type=int, default=500, help="label-map pairs for semseg")
    p.add_argument("--size", default="1024x2048", help="HxW of the label maps")
    p.add_argument("--kinds", default="iou,ciou", help="box kinds to time")
    a = p.parse_args()
    h, w = (int(v) for v in a.size.lower().split("x"))
    rows = [bench_boxes(a.boxes, kind) for kind in a.kinds.split(",") if kind]
    if a.maps > 0:
        rows.append(bench_semseg(a.maps, h, w))
    print("| case | input | seconds | peak RSS (MiB) | throughput |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{os.cpu_count()} cores, Python {sys.version.split()[0]}; indicative figures.")


if __name__ == "__main__":
    main()
