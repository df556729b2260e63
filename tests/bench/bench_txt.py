"""Per-image text folders: a YOLO dataset, Ultralytics predictions and the txt format.

Usage (normally through ``make bench-txt``)::

    python tests/bench/bench_txt.py [--images 5000] [--seed 0] [--runs 3]

Writes (or reuses) ``bench_data/txt-<images>-<seed>/``: a YOLO dataset
(``data.yaml``, ``images/val`` with PNG headers of 640 to 1920 pixels,
``labels/val`` with about 16 boxes an image, a tenth of the images without a
label file), the Ultralytics predictions of a plausible detector
(``preds/labels``, about 80 lines an image, ``class cx cy w h conf``) and the
same predictions in the txt format's order (``txt_preds``, ``class score cx cy
w h``).  Then reads each folder in this process with the compiled column
reader and with the Python reader (``IOU_EVAL_NO_KERNEL=1``), interleaved,
best of ``--runs``, and prints the times and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import time
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAMES = [f"class_{i}" for i in range(80)]


def _png(width: int, height: int) -> bytes:
    """The signature and IHDR chunk of a PNG: all an image-size reader looks at."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def _fmt(v: np.ndarray) -> list[str]:
    return [f"{x:.6f}" for x in v]


def make(folder: Path, images: int, seed: int) -> dict[str, int]:
    """Write the set; returns the counts of label lines and prediction lines."""
    rng = np.random.default_rng(seed)
    for sub in ("images/val", "labels/val", "preds/labels", "txt_preds"):
        (folder / sub).mkdir(parents=True)
    (folder / "data.yaml").write_text(
        f"path: {folder}\nval: images/val\nnames:\n"
        + "".join(f"  {i}: {n}\n" for i, n in enumerate(NAMES))
    )
    n_gt = n_pred = 0
    for i in range(images):
        stem = f"{i:06d}"
        (folder / "images/val" / f"{stem}.png").write_bytes(
            _png(int(rng.integers(640, 1921)), int(rng.integers(480, 1081)))
        )
        k = int(rng.poisson(16))
        cls = rng.integers(0, 80, k)
        wh = rng.uniform(0.02, 0.4, (k, 2))
        c = rng.uniform(wh / 2, 1 - wh / 2)
        boxes = np.column_stack([c, wh])
        if rng.random() >= 0.1:
            lines = [f"{int(a)} " + " ".join(_fmt(b)) for a, b in zip(cls, boxes, strict=True)]
            (folder / "labels/val" / f"{stem}.txt").write_text(
                "\n".join(lines) + ("\n" if lines else "")
            )
            n_gt += k
        m = int(rng.poisson(80))
        src = rng.integers(0, max(k, 1), m)
        pb = boxes[src] if k else rng.uniform(0.1, 0.3, (m, 4))
        pb = np.clip(pb * rng.normal(1, 0.05, (m, 4)), 0.001, 0.999)
        pc = np.where(rng.random(m) < 0.8, cls[src] if k else 0, rng.integers(0, 80, m))
        score = np.sort(rng.beta(2, 5, m))[::-1]
        yolo = [
            f"{int(a)} " + " ".join(_fmt(b)) + f" {s:.5f}"
            for a, b, s in zip(pc, pb, score, strict=True)
        ]
        txt = [
            f"{int(a)} {s:.5f} " + " ".join(_fmt(b)) for a, b, s in zip(pc, pb, score, strict=True)
        ]
        if m:
            (folder / "preds/labels" / f"{stem}.txt").write_text("\n".join(yolo) + "\n")
        (folder / "txt_preds" / f"{stem}.txt").write_text("\n".join(txt) + ("\n" if txt else ""))
        n_pred += m
    counts = {"images": images, "label_lines": n_gt, "prediction_lines": n_pred}
    (folder / "done").write_text(json.dumps(counts))
    return counts


def reader_times(folder: Path, runs: int) -> list[tuple[str, float, float]]:
    """Each loader, compiled column reader against the Python reader, interleaved, best of ``runs``."""
    from iou_eval.io.loaders.common import LoadOptions
    from iou_eval.io.loaders.text import load_txt
    from iou_eval.io.loaders.yolo import read_yolo

    cases = (
        (
            "YOLO ground truth (data.yaml)",
            lambda: read_yolo(str(folder / "data.yaml"), "gt", LoadOptions()),
        ),
        (
            "Ultralytics predictions",
            lambda: read_yolo(str(folder / "preds"), "pred", LoadOptions()),
        ),
        (
            "txt ground truth (labels, --normalized)",
            lambda: load_txt(str(folder / "labels/val"), "gt", LoadOptions(normalized=True)),
        ),
        (
            "txt predictions (--normalized)",
            lambda: load_txt(str(folder / "txt_preds"), "pred", LoadOptions(normalized=True)),
        ),
    )
    out = []
    for label, read in cases:
        best = {"0": float("inf"), "1": float("inf")}
        results = {}
        for _ in range(runs):
            for off in best:
                os.environ["IOU_EVAL_NO_KERNEL"] = off
                t = time.perf_counter()
                results[off] = read()
                best[off] = min(best[off], time.perf_counter() - t)
        os.environ.pop("IOU_EVAL_NO_KERNEL")
        a, b = (r[0] if isinstance(r, tuple) else r for r in (results["0"], results["1"]))
        if not (np.array_equal(a.xyxy, b.xyxy) and np.array_equal(a.category_idx, b.category_idx)):
            raise SystemExit(f"{label}: the two readers disagree")
        out.append((label, best["0"], best["1"]))
        print(
            f"{label}: {best['0']:.3f} s compiled, {best['1']:.3f} s Python, {best['1'] / best['0']:.1f}x"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    folder = ROOT / "bench_data" / f"txt-{a.images}-{a.seed}"
    if not (folder / "done").exists():
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        make(folder, a.images, a.seed)
    counts = json.loads((folder / "done").read_text())
    print(
        f"{counts['images']:,} images, {counts['label_lines']:,} label lines, "
        f"{counts['prediction_lines']:,} prediction lines; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    reader_times(folder, a.runs)


if __name__ == "__main__":
    main()
