"""The cost of the doubts tried on the data (box layouts, image ids, class names) in a whole run.

Usage::

    python tests/bench/bench_doubts.py [--images 5000] [--repeat 7]

On ``make_data.py``'s synthetic val2017 (5,000 images, about 417,000
predictions), one run of ``evaluate()`` is timed whole, then the doubt stage
alone (:func:`iou_eval.io.inputs.reading_doubts` and the class-name check)
on the run's alignment, ``--repeat`` times (median).  Then the same on the
predictions with their image ids permuted (every check runs: the slow path of
a broken file).  Prints the figures; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_data import DEFAULT_DATA_DIR, ensure  # noqa: E402

from iou_eval import evaluate  # noqa: E402
from iou_eval.data.readings import class_name_doubts  # noqa: E402
from iou_eval.io.inputs import reading_doubts  # noqa: E402


def stage_time(gt: Path, preds: Path, repeat: int) -> tuple[float, float, list[str]]:
    """``(whole run s, doubt stage median s, doubts)``."""
    t0 = time.perf_counter()
    result = evaluate(str(gt), str(preds), warn=False)
    whole = time.perf_counter() - t0
    a = result.alignment
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        reading_doubts(a)
        class_name_doubts(a.gt, a.pred, a.n_categories)
        times.append(time.perf_counter() - t0)
    return whole, statistics.median(times), result.to_dict()["doubts"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    data = ensure(args.images, 0, args.data_dir)
    gt, preds = data.gt_path, data.pred_path
    whole, stage, doubts = stage_time(gt, preds, args.repeat)
    print(f"as written: whole run {whole:.3f} s, doubt stage {stage * 1000:.1f} ms "
          f"({100 * stage / whole:.2f} %), {len(doubts)} doubt(s)")  # fmt: skip
    records = json.loads(preds.read_text())
    ids = sorted({r["image_id"] for r in records})
    perm = dict(zip(ids, np.random.default_rng(0).permutation(ids).tolist(), strict=True))
    with tempfile.TemporaryDirectory() as tmp:
        moved = Path(tmp) / "permuted.json"
        moved.write_text(json.dumps([{**r, "image_id": perm[r["image_id"]]} for r in records]))
        whole, stage, doubts = stage_time(gt, moved, args.repeat)
    print(f"image ids permuted: whole run {whole:.3f} s, doubt stage {stage * 1000:.1f} ms "
          f"({100 * stage / whole:.2f} %), {len(doubts)} doubt(s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
