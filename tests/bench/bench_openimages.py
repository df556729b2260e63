"""``--protocol openimages`` on a synthetic set of Open Images validation's size.

Usage (normally through ``make bench-openimages``, part of ``make bench``)::

    python tests/bench/bench_openimages.py [--images 41620] [--classes 600] [--seed 0]

Writes (or reuses) ``bench_data/openimages-synth-<images>-seed<seed>/``: the
challenge's files for a synthetic set shaped like Open Images V6 validation
(41,620 images, 600 classes in a three-level hierarchy, about 7.3 boxes an
image of which 7% group-of, about 10 verified image-level labels an image,
100 predictions an image over verified and unverified classes, scores with
six decimals).  Then, each in its own process:

- ``iou-eval GT PRED --protocol openimages --oi-hierarchy H --workers 1 -f
  json -o OUT`` through ``measure.py``: wall time, CPU time, the kernel's
  peak resident size;
- the same evaluation through the Python API, with the time of each stage
  (reading and expanding, scoring);
- hotcoco's Open Images mode (``oid_style=True`` with the hierarchy) through
  ``measure.py``, when the benchmark venv (``--peer-python``, default
  ``.venv-bench/bin/python``) has hotcoco: it reads the same boxes CSV and
  the predictions of the classes that have boxes (it refuses the others),
  and does not read the image-level labels.

The section between the ``openimages-bench`` markers of
``docs/benchmarks.md`` is replaced (appended if absent); ``--out`` writes
elsewhere.
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

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA_DIR = ROOT / "bench_data"
DEFAULT_OUT = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- openimages-bench:begin -->", "<!-- openimages-bench:end -->"
FORMAT_VERSION = 1  # bump when the data changes: stale folders are regenerated


def _hierarchy(n_classes: int) -> tuple[dict, list[str], np.ndarray]:
    """A three-level tree of ``n_classes`` classes: its JSON, the class ids, the leaves."""
    n_top = max(1, n_classes // 30)
    n_mid = max(1, n_classes // 6)
    n_leaf = n_classes - n_top - n_mid
    ids = [f"/m/c{i:04d}" for i in range(n_classes)]
    top, mid, leaf = ids[:n_top], ids[n_top : n_top + n_mid], ids[n_top + n_mid :]
    mids = [{"LabelName": m, "Subcategory": []} for m in mid]
    for i, leaf_id in enumerate(leaf):
        mids[i % n_mid]["Subcategory"].append({"LabelName": leaf_id})
    tops = [{"LabelName": t, "Subcategory": []} for t in top]
    for i, node in enumerate(mids):
        tops[i % n_top]["Subcategory"].append(node)
    tree = {"LabelName": "/m/0bl9f", "Subcategory": tops}
    return tree, ids, np.arange(n_top + n_mid, n_classes) if n_leaf else np.arange(n_classes)


def _boxes(rng, n: int) -> np.ndarray:
    """``[n, 4]`` xmin, xmax, ymin, ymax fractions."""
    c = rng.random((n, 2))
    half = rng.uniform(0.02, 0.3, (n, 2))
    lo, hi = np.clip(c - half, 0, 1), np.clip(c + half, 0, 1)
    return np.stack([lo[:, 0], hi[:, 0], lo[:, 1], hi[:, 1]], axis=1)


def _write_csv(path: Path, header: str, columns: list[np.ndarray], formats: list[str]) -> None:
    import pandas as pd

    frame = pd.DataFrame({f"c{i}": c for i, c in enumerate(columns)})
    for i, f in enumerate(formats):
        if f:
            frame[f"c{i}"] = frame[f"c{i}"].map(f.format)
    with open(path, "w") as fh:
        fh.write(header + "\n")
        frame.to_csv(fh, header=False, index=False)


def make(n_images: int, n_classes: int, seed: int) -> tuple[Path, dict]:
    """The challenge's files in ``bench_data/`` (reused when present), and what they hold."""
    out = DATA_DIR / f"openimages-synth-{n_images}-{n_classes}-seed{seed}-v{FORMAT_VERSION}"
    meta_path = out / "meta.json"
    if meta_path.exists():
        return out, json.loads(meta_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tree, ids, leaves = _hierarchy(n_classes)
    (out / "hierarchy.json").write_text(json.dumps(tree))
    names = np.array(ids, dtype=object)
    (out / "class-descriptions.csv").write_text(
        "".join(f"{c},class {i}\n" for i, c in enumerate(ids))
    )
    images = np.array([f"{v:016x}" for v in rng.integers(0, 2**63, n_images)], dtype=object)
    per_image = rng.poisson(7.3, n_images)
    g_img = np.repeat(np.arange(n_images), per_image)
    g_cls = leaves[rng.integers(0, len(leaves), len(g_img))]
    g_box = _boxes(rng, len(g_img))
    g_group = (rng.random(len(g_img)) < 0.07).astype(np.int64)
    ones, zeros = np.ones(len(g_img), np.int64), np.zeros(len(g_img), np.int64)
    _write_csv(
        out / "validation-annotations-bbox.csv",
        "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,"
        "IsGroupOf,IsDepiction,IsInside",
        [images[g_img], np.full(len(g_img), "xclick", object), names[g_cls], ones,
         *g_box.T, zeros, zeros, g_group, zeros, zeros],
        ["", "", "", "", "{:.6f}", "{:.6f}", "{:.6f}", "{:.6f}", "", "", "", "", ""],
    )  # fmt: skip
    # Labels: each boxed class once (positive), and about three more per image (mostly negative).
    pairs = np.unique(g_img.astype(np.int64) * n_classes + g_cls)
    extra_img = rng.integers(0, n_images, 3 * n_images)
    extra_cls = leaves[rng.integers(0, len(leaves), len(extra_img))]
    l_key = np.r_[pairs, extra_img.astype(np.int64) * n_classes + extra_cls]
    l_pos = np.r_[
        np.ones(len(pairs), np.int64), (rng.random(len(extra_img)) < 0.2).astype(np.int64)
    ]
    l_key, first = np.unique(l_key, return_index=True)
    l_pos = l_pos[first]
    _write_csv(
        out / "validation-annotations-human-imagelabels.csv",
        "ImageID,Source,LabelName,Confidence",
        [images[l_key // n_classes], np.full(len(l_key), "verification", object),
         names[l_key % n_classes], l_pos],
        ["", "", "", ""],
    )  # fmt: skip
    # Predictions: 100 an image; 60% near a box of the image (its class, or its parent's
    # class now and then), the rest anywhere, of any class.
    n_pred = 100 * n_images
    p_img = np.repeat(np.arange(n_images), 100)
    near = rng.random(n_pred) < 0.6
    starts = np.r_[0, np.cumsum(per_image)[:-1]]
    has = per_image[p_img] > 0
    pick = starts[p_img] + (rng.random(n_pred) * np.maximum(per_image[p_img], 1)).astype(np.int64)
    near &= has
    p_box = _boxes(rng, n_pred)
    jitter = rng.normal(0, 0.02, (n_pred, 4))
    p_box[near] = np.clip(g_box[pick[near]] + jitter[near], 0, 1)
    p_box[:, [0, 1]] = np.sort(p_box[:, [0, 1]], axis=1)
    p_box[:, [2, 3]] = np.sort(p_box[:, [2, 3]], axis=1)
    p_cls = rng.integers(0, n_classes, n_pred)
    p_cls[near] = g_cls[pick[near]]
    score = np.round(rng.random(n_pred), 6)
    _write_csv(
        out / "predictions.csv",
        "ImageID,LabelName,Score,XMin,XMax,YMin,YMax",
        [images[p_img], names[p_cls], score, *p_box.T],
        ["", "", "{:.6f}", "{:.6f}", "{:.6f}", "{:.6f}", "{:.6f}"],
    )  # fmt: skip
    meta = {
        "images": n_images, "classes": n_classes, "boxes": int(len(g_img)),
        "group_of": int(g_group.sum()), "image_labels": int(len(l_key)),
        "predictions": int(n_pred),
        "bytes": {p.name: p.stat().st_size for p in out.iterdir()},
    }  # fmt: skip
    meta_path.write_text(json.dumps(meta))
    return out, meta


def measured(data: Path, out: Path) -> dict:
    """The command line through ``measure.py``: wall and CPU seconds, peak MiB."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as res:
        cmd = [sys.executable, "-I", "-S", str(HERE / "measure.py"), res.name,
               sys.executable, "-m", "iou_eval", str(data / "validation-annotations-bbox.csv"),
               str(data / "predictions.csv"), "--protocol", "openimages", "--oi-hierarchy",
               str(data / "hierarchy.json"), "--workers", "1", "-f", "json", "-o", str(out), "-q"]  # fmt: skip
        subprocess.run(cmd, check=True, cwd=ROOT)
        wall, cpu, peak_kib, code = res.read().split()
    if int(code) != 0:
        raise SystemExit(f"iou-eval exited with {code}")
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_mib": int(peak_kib) / 1024}


def hotcoco_measured(python: str, data: Path, out: Path) -> dict | None:
    """hotcoco's Open Images mode through ``measure.py``; None when ``python`` lacks hotcoco."""
    if not Path(python).exists():
        return None
    if subprocess.run([python, "-c", "import hotcoco"], capture_output=True).returncode:
        return None
    sys.path.insert(0, str(HERE / "peers"))
    from peer_openimages import hotcoco_predictions

    preds = data / "predictions-hotcoco.csv"
    if not preds.exists():
        hotcoco_predictions(
            str(data / "validation-annotations-bbox.csv"), str(data / "predictions.csv"), str(preds)
        )
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as res:
        cmd = [sys.executable, "-I", "-S", str(HERE / "measure.py"), res.name, python,
               str(HERE / "peers" / "peer_openimages.py"), str(data / "validation-annotations-bbox.csv"),
               str(preds), str(data / "hierarchy.json"), str(out)]  # fmt: skip
        subprocess.run(
            cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wall, cpu, peak_kib, code = res.read().split()
    if int(code) != 0:
        return None
    ap = json.loads(out.read_text())["stats"].get("AP")
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_mib": int(peak_kib) / 1024, "AP": ap}


def stages(data: str) -> None:
    """In a child process: the evaluation through the API, each stage timed."""
    from iou_eval import evaluate

    marks: list[tuple[str, float, float]] = []
    t0 = time.perf_counter()
    result = evaluate(
        f"{data}/validation-annotations-bbox.csv", f"{data}/predictions.csv",
        protocol="openimages", oi_hierarchy=f"{data}/hierarchy.json", workers=1,
        on_stage=lambda name: marks.append((name, time.perf_counter(), time.process_time())),
    )  # fmt: skip
    marks.append(("end", time.perf_counter(), time.process_time()))
    end = marks[-1][1]
    # Each stage's wall and CPU seconds, up to the next stage's start.
    times = {a[0]: [b[1] - a[1], b[2] - a[2]] for a, b in zip(marks, marks[1:], strict=False)}
    g = result.inputs["ground_truth"]
    print(json.dumps({"total_s": end - t0, "stages": times, "mAP": result.summary["mAP"],
                      "expanded_boxes": g["boxes"], "scored": int(len(result.primary.predictions))}))  # fmt: skip


def report(meta: dict, cli: dict, api: dict, load: float, peer: dict | None = None) -> str:
    nan = [float("nan")] * 2
    read, scoring = (
        api["stages"].get("reading", nan),
        api["stages"].get("evaluating (openimages)", nan),
    )
    return "\n".join([
        BEGIN,
        "## Open Images challenge metric (`make bench-openimages`)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores ({platform.system()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}); indicative: the machine is shared.",
        "",
        f"Data: `tests/bench/bench_openimages.py --images {meta['images']}` (Open Images V6 "
        f"validation: 41,620 images, 600 classes): {meta['images']:,} images, {meta['classes']} "
        f"classes in a three-level hierarchy, {meta['boxes']:,} boxes ({meta['group_of']:,} "
        f"group-of; {api['expanded_boxes']:,} once expanded to their ancestors), "
        f"{meta['image_labels']:,} verified image-level labels, {meta['predictions']:,} "
        f"predictions ({api['scored']:,} of verified classes scored); predictions.csv "
        f"{meta['bytes']['predictions.csv'] / 1e6:.0f} MB.",
        "",
        "| run | wall (s) | CPU (s) | peak memory (MiB) |",
        "| --- | ---: | ---: | ---: |",
        f"| `iou-eval --protocol openimages --oi-hierarchy ... -f json` | {cli['wall_s']:.1f} | "
        f"{cli['cpu_s']:.1f} | {cli['peak_mib']:.0f} |",
        *([f"| hotcoco `COCOeval(oid_style=True, hierarchy=...)` (AP {peer['AP']:.4f}: no image-level "
           f"labels) | {peer['wall_s']:.1f} | {peer['cpu_s']:.1f} | {peer['peak_mib']:.0f} |"]
          if peer else []),
        "",
        f"Through the API: reading the files and expanding the ground truth {read[0]:.1f} s "
        f"({read[1]:.1f} s CPU), scoring and the tables {scoring[0]:.1f} s ({scoring[1]:.1f} s "
        f"CPU); mAP {api['mAP']:.4f}.  Load average of the machine during the runs: {load:.1f} on "
        f"{os.cpu_count()} cores (other processes included): wall times are only comparable "
        "when it stays below the core count.",
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
    parser.add_argument("--images", type=int, default=41_620)
    parser.add_argument("--classes", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--stages", help=argparse.SUPPRESS)
    parser.add_argument("--peer-python", default=str(ROOT / ".venv-bench" / "bin" / "python"))
    args = parser.parse_args(argv)
    if args.stages:
        stages(args.stages)
        return 0
    data, meta = make(args.images, args.classes, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        cli = measured(data, Path(tmp) / "out.json")
        peer = hotcoco_measured(args.peer_python, data, Path(tmp) / "hotcoco.json")
    p = subprocess.run([sys.executable, __file__, "--stages", str(data)], check=True,
                       capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    api = json.loads(p.stdout.strip().splitlines()[-1])
    section = report(meta, cli, api, os.getloadavg()[1], peer)
    print(section)
    publish(section, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
