"""Time the package's COCO JSON reader beside the same column extraction on yyjson and simdjson.

Usage: python tests/bench/bench_json_parsers.py [--data bench_data] [--sources DIR] [--rounds 5]

A measurement behind docs/dependencies.md's choice of JSON reader, not part
of CI and never a dependency: the harnesses in ``tests/bench/json_parsers/``
do the job of ``iou_eval/io/_cocojson.c`` (a results list into image_id,
category_id, bbox[4], score columns, and the keypoint columns for keypoint
results; a ground truth's images, categories and annotations' id,
image_id, category_id, bbox, area, iscrowd, polygons skipped) on yyjson (C,
one file) and on simdjson's On-Demand API (C++17).

The parsers' sources come from their Python packages' source archives on
PyPI (``yyjson``'s and ``pysimdjson``'s, which vendor the C and C++
amalgamations), downloaded with pip into ``--sources`` once; offline, put
``yyjson.c``, ``yyjson.h``, ``simdjson.cpp`` and ``simdjson.h`` there by hand.
Built with ``$CC``/``$CXX`` (cc, c++) at -O2 -ffp-contract=off (no fast-math);
simdjson twice: without ``-march`` (what a portable wheel gets: its On-Demand
front end is compiled for the baseline, so the "fallback" kernel on x86-64)
and with ``-march=haswell`` (AVX2, BMI and carry-less multiplication: its "haswell"
kernel; ``-march=x86-64-v3`` lacks PCLMUL and still gets "fallback") where the CPU
has them.

Each round reads every file with every reader in turn (interleaved); the
best of the rounds is reported, in MB/s of the file (1 MB = 10**6 bytes).
In one thread: the file's bytes in memory (simdjson given SIMDJSON_PADDING
readable bytes past the end, so it reads in place; yyjson copies them, as it
does unless asked to parse in place).  In runs, as the package reads
a results list: its ``threaded_results`` (the file mapped, cut at element
boundaries into runs of about 4 MB read by a pool of one or two threads, the
columns joined), with each harness as the run reader (a run bracketed into a
copy for the parsers).
Every reader's columns are compared bit for bit with the package reader's,
and the package reader's numbers with Python's ``json`` (correctly rounded)
on the files of at most ``--verify-mb`` MB.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "json_parsers")
ROOT = os.path.dirname(os.path.dirname(HERE))

# The packages whose source archives carry the parsers (yyjson 0.10.0, simdjson 3.12.3).
PACKAGES = {"yyjson": "yyjson==4.0.6", "pysimdjson": "pysimdjson==7.0.2"}
SOURCES = {
    "yyjson.c": "yyjson/yyjson.c",
    "yyjson.h": "yyjson/yyjson.h",
    "simdjson.cpp": "simdjson/simdjson.cpp",
    "simdjson.h": "simdjson/simdjson.h",
}
CFLAGS = ["-O2", "-ffp-contract=off", "-fPIC", "-DNDEBUG"]
CXXFLAGS = ["-std=c++17", *CFLAGS]
SIMDJSON_PADDING = 64
FILES = [
    ("coco-synth-5000-seed0/gt.json", "gt", 0),
    ("coco-synth-5000-seed0/preds.json", "results", 0),
    ("coco-synth-20000-seed0/preds.json", "results", 0),
    ("coco-synth-keypoints-5000-seed0/preds.json", "results", 4),
]
# flags, as the package's reader takes them
BARE, KEYPOINTS = 2, 4
NCOL = 17
RESULT_COLUMNS = ["image_id", "category_id", "bbox", "score"]
KEYPOINT_COLUMNS = ["has_bbox", "kp_values", "kp_length", "num_keypoints"]
GT_COLUMNS = ["image_id", "category_id", "bbox", "area", "iscrowd", "id"]
IMAGE_COLUMNS = ["image.id", "image.width", "image.height", "category.id"]
DTYPES = {
    "image_id": np.int64, "category_id": np.int64, "bbox": np.float64, "score": np.float64,
    "has_bbox": np.uint8, "kp_values": np.float64, "kp_length": np.int64,
    "num_keypoints": np.int64, "area": np.float64, "iscrowd": np.uint8, "id": np.int64,
    "image.id": np.int64, "image.width": np.float64, "image.height": np.float64,
    "image.file_name": np.uint8, "category.id": np.int64, "category.name": np.uint8,
}  # fmt: skip
# The harness's column order (columns.h's enum).
HARNESS_ORDER = [
    "image_id", "category_id", "bbox", "score", "has_bbox", "kp_values", "kp_length",
    "num_keypoints", "area", "iscrowd", "id", "image.id", "image.width", "image.height",
    "image.file_name", "category.id", "category.name",
]  # fmt: skip


class BVec(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("cap", ctypes.c_size_t),
    ]


class Columns(ctypes.Structure):
    _fields_ = [("col", BVec * NCOL), ("n", ctypes.c_int64)]


# ------------------------------------------------------------------ sources


def fetch_sources(folder: str) -> None:
    """The four parser files in ``folder``, downloaded with pip when missing (or exit)."""
    if all(os.path.exists(os.path.join(folder, name)) for name in SOURCES):
        return
    os.makedirs(folder, exist_ok=True)
    print(
        f"bench: downloading {', '.join(PACKAGES.values())} (sources) into {folder}",
        file=sys.stderr,
    )
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--no-binary", ",".join(PACKAGES), "-d", folder, *PACKAGES.values()]  # fmt: skip
    if subprocess.run(cmd).returncode != 0:
        sys.exit(
            f"bench: cannot download the parsers' sources (offline?): put {', '.join(SOURCES)} "
            f"into {folder} by hand (from the yyjson and pysimdjson source archives) and run again"
        )
    for archive in glob.glob(os.path.join(folder, "*.tar.gz")):
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                for name, tail in SOURCES.items():
                    if member.name.endswith("/" + tail):
                        src = tar.extractfile(member)
                        if src is not None:
                            with open(os.path.join(folder, name), "wb") as out:
                                shutil.copyfileobj(src, out)
    missing = [n for n in SOURCES if not os.path.exists(os.path.join(folder, n))]
    if missing:
        sys.exit(f"bench: {', '.join(missing)} not found in the downloaded archives in {folder}")


# -------------------------------------------------------------------- build


def _compile(cmd: list[str], out: str, inputs: list[str]) -> None:
    if os.path.exists(out) and all(os.path.getmtime(out) > os.path.getmtime(i) for i in inputs):
        return
    print(f"bench: {' '.join(os.path.basename(c) for c in cmd)}", file=sys.stderr)
    subprocess.run(cmd, check=True)


def has_haswell() -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return False
    return all(f in flags for f in ("avx2", "bmi1", "bmi2", "pclmulqdq", "abm"))


def build(src: str) -> dict[str, str]:
    """The harness libraries built in ``src``: {reader name: path}."""
    cc, cxx = os.environ.get("CC", "cc"), os.environ.get("CXX", "c++")
    inc = ["-I", src, "-I", HARNESS]
    header = os.path.join(HARNESS, "columns.h")
    libs = {}
    yy, yy_src = os.path.join(src, "yy_columns.so"), os.path.join(HARNESS, "yy_columns.c")
    _compile(
        [cc, *CFLAGS, "-shared", *inc, yy_src, os.path.join(src, "yyjson.c"), "-o", yy],
        yy,
        [yy_src, header, os.path.join(src, "yyjson.c")],
    )
    libs["yyjson"] = yy
    variants: list[tuple[str, list[str]]] = [("simdjson", [])]
    if has_haswell():
        variants.append(("simdjson -march=haswell", ["-march=haswell"]))
    sj_src = os.path.join(HARNESS, "sj_columns.cpp")
    for name, march in variants:
        tag = "-haswell" if march else ""
        obj = os.path.join(src, f"simdjson{tag}.o")
        lib = os.path.join(src, f"sj_columns{tag}.so")
        cpp = os.path.join(src, "simdjson.cpp")
        _compile([cxx, *CXXFLAGS, *march, "-c", cpp, "-o", obj], obj, [cpp])
        _compile([cxx, *CXXFLAGS, *march, "-shared", *inc, sj_src, obj, "-o", lib], lib,
                 [sj_src, header, obj])  # fmt: skip
        libs[name] = lib
    return libs


# ------------------------------------------------------------------ readers

Times = tuple[float, float]  # wall and CPU seconds


def _columns_out(lib: ctypes.CDLL, cols: Columns) -> dict:
    out: dict = {"n": cols.n}
    for i, name in enumerate(HARNESS_ORDER):
        v = cols.col[i]
        raw = ctypes.string_at(v.data, v.len) if v.len else b""
        out[name] = np.frombuffer(raw, dtype=DTYPES[name])
    lib.cols_free(ctypes.byref(cols))
    return out


class Harness:
    """One parser's harness library: results and dataset readers taking a pointer."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.lib = ctypes.CDLL(path)  # calls release the GIL
        self.simd = name.startswith("simdjson")
        prefix = "sj" if self.simd else "yy"
        self._results = getattr(self.lib, f"{prefix}_results")
        self._dataset = getattr(self.lib, f"{prefix}_dataset")
        if self.simd:
            self.lib.sj_implementation.restype = ctypes.c_char_p
            self.kernel = self.lib.sj_implementation().decode()
            self._results.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                      ctypes.c_int, ctypes.c_void_p]  # fmt: skip
            self._dataset.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                      ctypes.c_void_p]  # fmt: skip
        else:
            self.kernel = ""
            self._results.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                      ctypes.c_void_p]  # fmt: skip
            self._dataset.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]

    def call(self, addr: int, n: int, cap: int, flags: int, gt: bool) -> tuple[Times, dict | None]:
        """((wall, CPU) seconds of the parse and extraction, the columns or None)."""
        cols = Columns()
        ref = ctypes.byref(cols)
        t, c = time.perf_counter(), time.thread_time()
        if gt:
            e = self._dataset(addr, n, cap, ref) if self.simd else self._dataset(addr, n, ref)
        elif self.simd:
            e = self._results(addr, n, cap, flags, ref)
        else:
            e = self._results(addr, n, flags, ref)
        dt = (time.perf_counter() - t, time.thread_time() - c)
        out = _columns_out(self.lib, cols)
        return dt, out if e == 0 else None

    def span_reader(self, flags: int) -> Callable[..., dict | None]:
        """A run reader for ``threaded_results``: (data, start, end, bare) -> columns."""

        def read(data: Any, start: int = 0, end: int = -1, bare: bool = False) -> dict | None:
            arr = np.frombuffer(data, dtype=np.uint8)
            end = len(arr) if end < 0 else end
            _, cols = self.call(arr.ctypes.data + start, end - start, 0,
                                flags | (BARE if bare else 0), False)  # fmt: skip
            del arr  # the map is closed by the caller: no view of it may remain
            return None if cols is None else _result_view(cols, flags)

        return read


def _result_view(cols: dict, flags: int) -> dict:
    names = RESULT_COLUMNS + (KEYPOINT_COLUMNS if flags & KEYPOINTS else [])
    return {k: cols[k] for k in names}


def ours_call(module: Any, data: bytes, flags: int, gt: bool) -> tuple[Times, dict | None]:
    t, c = time.perf_counter(), time.thread_time()
    read = module.dataset(data) if gt else module.results(data, flags)
    dt = (time.perf_counter() - t, time.thread_time() - c)
    if read is None:
        return dt, None
    out: dict = {"n": read["n"]}
    for name, value in read.items():
        if name in DTYPES and not isinstance(value, list):
            out[name] = np.frombuffer(value, dtype=DTYPES[name])
    for name in ("image.file_name", "category.name"):
        if name in read:
            text = b"".join((s or "").encode() + b"\0" for s in read[name])
            out[name] = np.frombuffer(text, dtype=np.uint8)
    return dt, out


def ours_span_reader(flags: int) -> Callable[..., dict | None]:
    from iou_eval.io.loaders.coco import read_box_results, read_keypoint_results

    read = read_keypoint_results if flags & KEYPOINTS else read_box_results

    def run(data: Any, start: int = 0, end: int = -1, bare: bool = False) -> dict | None:
        cols = read(data, start, end, bare)
        if cols is None:
            return None
        cols["bbox"] = cols.pop("boxes").reshape(-1)
        if flags & KEYPOINTS:
            cols["has_bbox"] = cols["has_bbox"].view(np.uint8)
        return cols

    return run


# ----------------------------------------------------------------- checking


def differences(ref: dict, other: dict, names: list[str]) -> list[str]:
    """The columns of ``other`` that are not ``ref``'s bit for bit."""
    out = []
    for name in names:
        a, b = np.ascontiguousarray(ref[name]), np.ascontiguousarray(other[name])
        if a.dtype != b.dtype:
            b = b.astype(a.dtype)
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            out.append(name)
    return out


def check_against_json(path: str, kind: str, flags: int, cols: dict) -> list[str]:
    """The package reader's columns against Python's json (correctly rounded numbers)."""
    with open(path, "rb") as fh:
        doc = json.load(fh)
    f = np.float64
    if kind == "gt":
        anns = doc["annotations"]
        want = {
            "bbox": np.array([b for a in anns for b in a["bbox"]], dtype=f),
            "area": np.array([a.get("area", np.nan) for a in anns], dtype=f),
            "image.width": np.array([i["width"] for i in doc["images"]], dtype=f),
            "image.height": np.array([i["height"] for i in doc["images"]], dtype=f),
        }
    else:
        want = {
            "bbox": np.array([b for a in doc for b in (a.get("bbox") or [0.0] * 4)], dtype=f),
            "score": np.array([a["score"] for a in doc], dtype=f),
        }
        if flags & KEYPOINTS:
            want["kp_values"] = np.array([k for a in doc for k in a["keypoints"]], dtype=f)
    return differences(want, cols, list(want))


# ------------------------------------------------------------------- timing


def best(times: list[Times], which: int) -> float:
    return min(t[which] for t in times) if times else float("nan")


def time_in_runs(
    path: str,
    flags: int,
    harnesses: list[Harness],
    counts: list[int],
    threaded: dict[tuple[str, str], list[Times]],
    ref: dict | None,
) -> list[str]:
    """Time every reader through ``threaded_results`` in each thread count; what differs from ``ref``."""
    from iou_eval.io.loaders.json_decode import threaded_results

    check = RESULT_COLUMNS + (KEYPOINT_COLUMNS if flags & KEYPOINTS else [])
    readers = [("iou-eval", ours_span_reader(flags))]
    readers += [(h.name, h.span_reader(flags)) for h in harnesses]
    problems = []
    for (name, read), k in ((reader, k) for k in counts for reader in readers):
        t, c = time.perf_counter(), time.process_time()
        cols = threaded_results(path, read, k)
        threaded.setdefault((path, f"{name} {k}"), []).append(
            (time.perf_counter() - t, time.process_time() - c)
        )
        if cols is None:
            problems.append(f"{path}: {name} in {k} threads gave up")
        elif ref is not None and (diff := differences(ref, cols, check)):
            problems.append(f"{path}: {name} in {k} threads differs in {', '.join(diff)}")
    return problems


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(ROOT, "bench_data"), help="the bench data folder")
    p.add_argument("--sources", default=None, help="where the parsers' sources and builds go "
                   "(default: DATA/json-parsers)")  # fmt: skip
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best of)")
    p.add_argument("--threads", default="1,2", help="threads of the reading in runs (a list)")
    p.add_argument("--verify-mb", type=float, default=40.0,
                   help="check numbers against Python's json on files up to this size")  # fmt: skip
    a = p.parse_args()
    src = a.sources or os.path.join(a.data, "json-parsers")
    files = [(os.path.join(a.data, f), kind, flags) for f, kind, flags in FILES]
    files = [f for f in files if os.path.exists(f[0])]
    if not files:
        sys.exit(f"bench: none of the benchmark files in {a.data} (make bench-data makes them)")
    fetch_sources(src)
    harnesses = [Harness(name, path) for name, path in build(src).items()]

    from iou_eval.io.compiled import json_reader

    ours = json_reader()
    if ours is None:
        sys.exit("bench: the package's compiled reader is not built (or IOU_EVAL_NO_KERNEL is set)")
    names = ["iou-eval"] + [h.name for h in harnesses]
    single: dict[tuple[str, str], list[Times]] = {}
    threaded: dict[tuple[str, str], list[Times]] = {}  # (path, "name threads")
    counts = [int(k) for k in a.threads.split(",") if k]
    problems: list[str] = []
    load = [os.getloadavg()[0]]
    contents = {}
    for path, _, _ in files:
        with open(path, "rb") as fh:
            data = fh.read()
        padded = bytearray(len(data) + SIMDJSON_PADDING)
        padded[: len(data)] = data
        contents[path] = (data, padded, np.frombuffer(padded, dtype=np.uint8))
    for r in range(a.rounds):
        for path, kind, flags in files:
            data, _, view = contents[path]
            gt = kind == "gt"
            dt, ref = ours_call(ours, data, flags, gt)
            single.setdefault((path, "iou-eval"), []).append(dt)
            if ref is None:
                problems.append(f"{path}: the package's reader gave up")
                continue
            check = GT_COLUMNS + IMAGE_COLUMNS + ["image.file_name", "category.name"] if gt else (
                RESULT_COLUMNS + (KEYPOINT_COLUMNS if flags & KEYPOINTS else []))  # fmt: skip
            if r == 0 and os.path.getsize(path) <= a.verify_mb * 1e6:
                bad = check_against_json(path, kind, flags, ref)
                print(f"bench: {os.path.relpath(path, a.data)}: iou-eval's numbers against "
                      f"Python's json: {'same' if not bad else 'DIFFER ' + ', '.join(bad)}",
                      file=sys.stderr)  # fmt: skip
            for h in harnesses:
                dt, cols = h.call(view.ctypes.data, len(data), len(view), flags, gt)
                single.setdefault((path, h.name), []).append(dt)
                if cols is None:
                    problems.append(f"{path}: {h.name} gave up")
                elif r == 0 and (diff := differences(ref, cols, check)):
                    problems.append(f"{path}: {h.name} differs in {', '.join(diff)}")
            if gt:
                continue
            problems += time_in_runs(
                path, flags, harnesses, counts, threaded, ref if r == 0 else None
            )
        load.append(os.getloadavg()[0])
    report(files, names, single, threaded, counts, a, load, harnesses)
    for line in problems:
        print(f"PROBLEM: {line}")
    if not problems:
        print("Every reader gave the package reader's columns bit for bit.")


def report(
    files: list[tuple[str, str, int]],
    names: list[str],
    single: dict[tuple[str, str], list[Times]],
    threaded: dict[tuple[str, str], list[Times]],
    counts: list[int],
    a: argparse.Namespace,
    load: list[float],
    harnesses: list[Harness],
) -> None:
    def row(table: dict, path: str, kind: str, suffix: str = "") -> str:
        mb = os.path.getsize(path) / 1e6
        cells = []
        for name in names:
            times = table.get((path, name + suffix), [])
            wall, cpu = best(times, 0), best(times, 1)
            cells.append(f"{mb / cpu:,.0f} / {mb / wall:,.0f}" if wall == wall else "–")
        return f"| {os.path.relpath(path, a.data)} ({mb:,.1f} MB) | " + " | ".join(cells) + " |"

    head = "| file | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names)
    print(
        f"\nOne thread: MB/s of CPU time / of wall time (best of {a.rounds} interleaved rounds):\n"
    )
    print(head)
    for path, kind, _ in files:
        print(row(single, path, kind))
    for k in counts:
        print(f"\nThe package's threaded_results (runs of about 4 MB) in {k} thread(s): MB/s of "
              f"the process's CPU time / of wall time (best of {a.rounds}):\n")  # fmt: skip
        print(head)
        for path, kind, _ in files:
            if kind != "gt":
                print(row(threaded, path, kind, f" {k}"))
    kernels = ", ".join(f"{h.name}: {h.kernel} kernel" for h in harnesses if h.kernel)
    print(f"\n{os.cpu_count()} cores, load average {min(load):.2f}–{max(load):.2f} during the runs; "
          f"{kernels}; flags {' '.join(CXXFLAGS)}.")  # fmt: skip


if __name__ == "__main__":
    main()
