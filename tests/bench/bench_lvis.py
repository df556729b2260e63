"""Time ``--protocol lvis`` against lvis-api and the peers with an LVIS mode, at LVIS v1 val's size.

Usage (normally through ``make bench-lvis``, which ``make bench`` runs)::

    python tests/bench/bench_lvis.py [--sizes 2000,20000] [--runs 3] [--seed 0]

For each size it writes (or reuses) a synthetic federated data set in
``bench_data/lvis_<images>/``: LVIS v1 val's shape (1,203 categories, 337
rare / 461 common / 405 frequent, about 12 objects and 65 results an image:
1.3 million results at 20,000 images; at most 300 results per image, so
that faster-coco-eval's per-category cap gives lvis-api's numbers too),
each image labelling a few categories, listing about ten as verified absent
and some labelled ones as not exhaustive; results on labelled, negative and
unlisted categories.  Every tool then runs as a whole command in its own
process (``measure.py``: wall time, CPU time, peak memory), interleaved
round by round, and its 13 numbers are checked against iou-eval's.

Tools: iou-eval (``--protocol lvis``, detected), lvis-api's ``LVISEval``
(pure Python: only on sizes up to ``--lvis-api-images``, 2,000 by default),
faster-coco-eval (``lvis_style=True``) and hotcoco (``LVISResults`` +
``LVISEval``), through ``peers/peer_lvis.py``.  The report (markdown) is
printed and written to ``bench_data/lvis.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / "bench_data"
# LVIS v1's category counts per frequency group.
GROUPS = {"r": 337, "c": 461, "f": 405}
W, H = 640.0, 480.0
KEYS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
        "AR300", "ARs", "ARm", "ARl")  # fmt: skip


def _categories(rng) -> tuple[list[dict], np.ndarray]:
    freq = np.array([g for g, n in GROUPS.items() for _ in range(n)])
    rng.shuffle(freq)
    cats = [{"id": i + 1, "name": f"c{i + 1}", "frequency": str(f)} for i, f in enumerate(freq)]
    # How often a category is labelled on an image: frequent ones far more.
    weight = np.select([freq == "f", freq == "c"], [30.0, 4.0], 0.5)
    return cats, weight / weight.sum()


def _boxes(rng, n: int) -> np.ndarray:
    w = np.minimum(rng.lognormal(3.5, 0.9, n), W - 1)
    h = np.minimum(rng.lognormal(3.5, 0.9, n), H - 1)
    x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
    return np.round(np.stack([x, y, w, h], axis=1), 2)


def _image(rng, iid: int, p: np.ndarray, anns: list, res: list) -> dict:
    k = len(p)
    present = np.unique(rng.choice(k, size=int(rng.integers(1, 8)), p=p))
    counts = rng.integers(1, 4, len(present))
    gt_cat = np.repeat(present, counts)
    gt_box = _boxes(rng, len(gt_cat))
    for c, b in zip(gt_cat.tolist(), gt_box.tolist(), strict=True):
        anns.append({"id": len(anns) + 1, "image_id": iid, "category_id": c + 1, "bbox": b,
                     "area": round(b[2] * b[3] * 0.7, 2)})  # fmt: skip
    others = np.setdiff1d(rng.integers(0, k, 14), present)
    negative = others[: int(rng.integers(0, 12))]
    # Results: jittered copies of the objects, then others on labelled,
    # negative and unlisted categories; about 65 an image, 300 at most.
    hits = np.repeat(np.arange(len(gt_cat)), rng.integers(1, 3, len(gt_cat)))
    jitter = rng.normal(0, 0.1, (len(hits), 4)) * gt_box[hits][:, [2, 3, 2, 3]]
    r_box = gt_box[hits] + jitter
    r_box[:, 2:] = np.maximum(r_box[:, 2:], 1.0)
    n_more = min(int(rng.exponential(48)), 300 - len(hits))
    pools = [present, negative if len(negative) else present, rng.integers(0, k, 8)]
    which = rng.choice(3, n_more, p=[0.5, 0.25, 0.25])
    more_cat = np.array([rng.choice(pools[w]) for w in which.tolist()], dtype=np.int64)
    r_cat = np.concatenate([gt_cat[hits], more_cat])
    r_box = np.round(np.concatenate([r_box, _boxes(rng, n_more)]), 2)
    score = np.round(rng.random(len(r_cat)), 3)
    for c, b, s in zip(r_cat.tolist(), r_box.tolist(), score.tolist(), strict=True):
        res.append({"image_id": iid, "category_id": c + 1, "bbox": b, "score": s})
    return {
        "id": iid, "width": W, "height": H, "file_name": f"{iid:012d}.jpg",
        "neg_category_ids": sorted(int(c) + 1 for c in negative),
        "not_exhaustive_category_ids": [int(c) + 1 for c in present if rng.random() < 0.1],
    }  # fmt: skip


def make_data(images: int, seed: int) -> tuple[Path, Path]:
    """``(gt, results)`` of one size, written once and reused."""
    import msgspec

    folder = DATA / f"lvis_{images}_s{seed}"
    gt_path, res_path = folder / "gt.json", folder / "results.json"
    if gt_path.exists() and res_path.exists():
        return gt_path, res_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    cats, p = _categories(rng)
    anns: list[dict] = []
    res: list[dict] = []
    imgs = [_image(rng, i + 1, p, anns, res) for i in range(images)]
    order = rng.permutation(len(res))
    gt_path.write_bytes(msgspec.json.encode({"images": imgs, "annotations": anns,
                                             "categories": cats}))  # fmt: skip
    res_path.write_bytes(msgspec.json.encode([res[i] for i in order]))
    return gt_path, res_path


def tools(bench_python: str, iou_eval: str, lvis_api_images: int) -> list[tuple]:
    """``(name, argv(gt, res, out), max_images, forks)`` of each tool."""
    peer = str(HERE / "peers" / "peer_lvis.py")

    def peer_argv(name: str):
        return lambda gt, res, out: [bench_python, peer, name, str(gt), str(res), str(out)]

    return [
        (
            "iou-eval",
            lambda gt, res, out: [
                iou_eval,
                str(gt),
                str(res),
                "-f",
                "json",
                "-o",
                str(out),
                "--quiet",
            ],
            None,
            True,
        ),  # fmt: skip
        ("lvis-api", peer_argv("lvis"), lvis_api_images, False),
        ("faster-coco-eval", peer_argv("faster_coco_eval"), None, False),
        ("hotcoco", peer_argv("hotcoco"), None, False),
    ]


def _stats(name: str, out: Path) -> dict:
    doc = json.loads(out.read_text())
    got = doc["summary"] if name == "iou-eval" else doc["stats"]
    return {k: (-1.0 if got.get(k) is None else float(got[k])) for k in KEYS}


def run_once(argv: list[str], forks: bool) -> tuple[float, float, float, int]:
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as fh:
        wrapper = [sys.executable, "-I", "-S", str(HERE / "measure.py")]
        subprocess.run([*wrapper, *(["--tree"] if forks else []), fh.name, *argv],
                       stdout=subprocess.DEVNULL, check=False)  # fmt: skip
        wall, cpu, peak, code = fh.read().split()
    return float(wall), float(cpu), int(peak) / 1024, int(code)


def bench_size(images: int, seed: int, runs: int, all_tools: list[tuple]) -> list[dict]:
    gt, res = make_data(images, seed)
    for path in (gt, res):  # into the page cache before the first round
        path.read_bytes()
    chosen = [t for t in all_tools if t[2] is None or images <= t[2]]
    times: dict[str, list[tuple]] = {t[0]: [] for t in chosen}
    stats: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs):
            for j in range(len(chosen)):
                name, argv, _, forks = chosen[(r + j) % len(chosen)]
                out = Path(tmp) / f"{name}.json"
                out.unlink(missing_ok=True)
                wall, cpu, peak, code = run_once(argv(gt, res, out), forks)
                ok = code == 0 and out.exists()
                times[name].append((wall, cpu, peak, ok))
                if ok:
                    stats[name] = _stats(name, out)
                print(f"  {images} images, run {r + 1}: {name} {wall:.2f} s, "
                      f"{peak:.0f} MiB{'' if ok else ' FAILED'}", file=sys.stderr)  # fmt: skip
    ours = stats.get("iou-eval", {})
    rows = []
    for name, runs_ in times.items():
        good = [t for t in runs_ if t[3]]
        diff = None
        if name in stats and ours:
            diff = max(abs(stats[name][k] - ours[k]) for k in KEYS)
        rows.append({
            "tool": name, "images": images, "results": _count(res),
            "wall_s": statistics.median(t[0] for t in good) if good else None,
            "cpu_s": statistics.median(t[1] for t in good) if good else None,
            "peak_mib": max(t[2] for t in good) if good else None,
            "max_abs_diff": diff, "failed": len(runs_) - len(good),
        })  # fmt: skip
    return rows


def _count(res: Path) -> int:
    return res.read_bytes().count(b'"score"')


def report(rows: list[dict]) -> str:
    lines = [
        "| images | results | tool | wall (s) | CPU (s) | peak (MiB) | vs iou-eval | max abs diff |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    by_size: dict[int, list[dict]] = {}
    for r in rows:
        by_size.setdefault(r["images"], []).append(r)
    for size, group in by_size.items():
        ours = next((r["wall_s"] for r in group if r["tool"] == "iou-eval"), None)
        for r in group:
            ratio = f"{r['wall_s'] / ours:.2f}x" if ours and r["wall_s"] else "-"
            wall = f"{r['wall_s']:.2f}" if r["wall_s"] is not None else "failed"
            cpu = f"{r['cpu_s']:.2f}" if r["cpu_s"] is not None else "-"
            peak = f"{r['peak_mib']:.0f}" if r["peak_mib"] is not None else "-"
            diff = "-" if r["max_abs_diff"] is None else f"{r['max_abs_diff']:.1e}"
            lines.append(f"| {size:,} | {r['results']:,} | {r['tool']} | {wall} | {cpu} | "
                         f"{peak} | {ratio} | {diff} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=os.environ.get("BENCH_LVIS_SIZES") or "2000,20000")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_LVIS_RUNS") or 3))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lvis-api-images", type=int, default=2000)
    ap.add_argument("--iou-eval", default=str(ROOT / ".venv" / "bin" / "iou-eval"))
    ap.add_argument(
        "--tools",
        default=os.environ.get("BENCH_LVIS_TOOLS", ""),
        help="only these tools (comma-separated names, e.g. iou-eval,hotcoco); default: all",
    )
    a = ap.parse_args()
    all_tools = tools(sys.executable, a.iou_eval, a.lvis_api_images)
    if a.tools.strip():
        wanted = {t.strip() for t in a.tools.split(",") if t.strip()}
        all_tools = [t for t in all_tools if t[0] in wanted]
    rows = []
    for size in (int(s) for s in a.sizes.split(",") if s.strip()):
        rows += bench_size(size, a.seed, a.runs, all_tools)
    text = "## LVIS (`--protocol lvis`)\n\n" + report(rows)
    print(text)
    DATA.mkdir(exist_ok=True)
    (DATA / "lvis.md").write_text(text)
    (DATA / "lvis.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
