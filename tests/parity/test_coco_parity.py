"""Whole-array parity with pycocotools' COCOeval on seeded random scenes.

Every scene mixes integer-grid boxes (IoUs exactly on thresholds), crowd
regions, score ties, areas on the range boundaries, empty images, classes
without ground truth or predictions, and groups of more than 100
predictions.  Arrays must be equal bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.engine import parallel
from iou_eval.io.compiled import json_reader
from iou_eval.options import AreaRange

from .synth import make_scene, run_pycocotools

SUMMARY_KEYS = [
    "AP",
    "AP50",
    "AP75",
    "APs",
    "APm",
    "APl",
    "AR1",
    "AR10",
    "AR100",
    "ARs",
    "ARm",
    "ARl",
]


def assert_same(ours, ref, label: str) -> None:
    """Bit-exact equality of the three arrays and the 12 stats; shows both on failure."""
    for name in ("precision", "recall", "scores"):
        x = getattr(ours.primary.arrays, name)
        y = ref[name]
        assert x.shape == y.shape, f"{label}: {name} shape {x.shape} != pycocotools {y.shape}"
        if not np.array_equal(x, y):
            where = np.argwhere(x != y)
            diff = np.abs(x - y).max()
            pytest.fail(
                f"{label}: {name} differs at {len(where)} entries (max |diff| {diff:.3e}); "
                f"first {where[:5].tolist()}\n iou-eval: {x[tuple(where[0])]!r}\n"
                f" pycocotools: {y[tuple(where[0])]!r}"
            )
    stats = np.array([-1.0 if ours.summary[k] is None else ours.summary[k] for k in SUMMARY_KEYS])
    assert np.array_equal(stats, ref["stats"]), (
        f"{label}: stats\n iou-eval    {stats.tolist()}\n pycocotools {ref['stats'].tolist()}"
    )


def _files(write_json, gt, preds):
    return write_json("gt.json", gt), write_json("preds.json", preds)


@pytest.mark.parametrize("seed", range(24))
def test_random_scene_matches_pycocotools(seed, write_json):
    gt, preds = make_scene(seed)
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}")


@pytest.mark.parametrize("seed", range(100, 104))
def test_large_scene_with_many_classes(seed, write_json):
    gt, preds = make_scene(seed, n_images=300, n_categories=20)
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}")


@pytest.mark.parametrize("seed", range(200, 204))
def test_annotation_id_zero_quirk_reproduced(seed, write_json):
    gt, preds = make_scene(seed, zero_id=True)
    assert gt["annotations"][0]["id"] == 0
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}")


@pytest.mark.parametrize("seed", range(300, 303))
def test_string_image_ids_equal_their_integers(seed, write_json):
    gt, preds = make_scene(seed, string_ids=True)
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}")


@pytest.mark.parametrize("seed", range(400, 404))
def test_class_agnostic_matches_usecats_0(seed, write_json):
    gt, preds = make_scene(seed)
    ours = evaluate(*_files(write_json, gt, preds), class_agnostic=True)
    assert_same(ours, run_pycocotools(gt, preds, useCats=0), f"seed {seed}")


@pytest.mark.parametrize("seed", range(500, 503))
def test_custom_thresholds_max_dets_and_area_ranges(seed, write_json):
    gt, preds = make_scene(seed)
    thr = [0.3, 0.5, 0.75, 0.9]
    ranges = [AreaRange("small", 0, 40.0**2), AreaRange("medium", 40.0**2, 80.0**2),
              AreaRange("large", 80.0**2, 1e5**2)]  # fmt: skip
    ours = evaluate(
        *_files(write_json, gt, preds), iou_thresholds=thr, max_dets=[1, 5, 100], area_ranges=ranges
    )
    ref = run_pycocotools(
        gt,
        preds,
        iouThrs=np.array(thr),
        maxDets=[1, 5, 100],
        areaRng=[[0, 1e5**2]] + [[r.lo, r.hi] for r in ranges],
        areaRngLbl=["all", "small", "medium", "large"],
    )
    assert_same(ours, ref, f"seed {seed}")


@pytest.mark.parametrize("seed", range(600, 603))
def test_heavy_ties_and_crowds(seed, write_json):
    gt, preds = make_scene(seed, crowd_rate=0.3, tie_decimals=0)
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}")


def test_no_predictions_at_all(write_json):
    gt, _ = make_scene(7)
    ours = evaluate(*_files(write_json, gt, []))
    assert_same(ours, run_pycocotools(gt, []), "no predictions")
    assert ours.summary["AP"] == 0.0


def test_ground_truth_without_annotations(write_json):
    gt, preds = make_scene(8)
    gt["annotations"] = []
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), "empty ground truth")
    assert all(v is None for v in ours.summary.values())


def test_iou_exactly_at_every_threshold(write_json):
    """Ten predictions whose IoUs with a 100x100 box are exactly 0.50, 0.55, ... 0.95.

    A box of width w inside [0, 100]^2 with full height has IoU w / 100, and
    w / 100.0 is the float pycocotools' thresholds compare against only when
    the division is exact, so widths are chosen to give the linspace values.
    """
    thr = np.linspace(0.5, 0.95, 10)
    gt = {
        "images": [{"id": i} for i in range(1, 11)],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {"id": i, "image_id": i, "category_id": 1, "bbox": [0, 0, 100, 100],
             "area": 10000, "iscrowd": 0}
            for i in range(1, 11)
        ],
    }  # fmt: skip
    preds = [
        {"image_id": i + 1, "category_id": 1, "bbox": [0, 0, float(t * 100), 100], "score": 0.5}
        for i, t in enumerate(thr)
    ]
    ours = evaluate(*_files(write_json, gt, preds))
    assert_same(ours, run_pycocotools(gt, preds), "exact thresholds")


@pytest.fixture
def parallel_everywhere(monkeypatch):
    """Every parallel path taken even on test-sized inputs."""
    import iou_eval.api
    import iou_eval.io.loaders.coco
    import iou_eval.protocols.partition

    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    monkeypatch.setattr(iou_eval.io.loaders.coco, "_CHUNK_BYTES", 2000)
    monkeypatch.setattr(iou_eval.io.loaders.json_decode, "_THREAD_PART_BYTES", 2000)
    started: list[str] = []
    init = parallel.Job.__init__

    def counting(self, fn, args):
        started.append(getattr(getattr(fn, "func", fn), "__qualname__", ""))
        init(self, fn, args)

    monkeypatch.setattr(parallel.Job, "__init__", counting)
    threads = parallel.run_threads

    def counting_threads(fn, parts):
        started.extend(f"thread:{getattr(fn, '__qualname__', '')}" for _ in parts[1:])
        return threads(fn, parts)

    monkeypatch.setattr(parallel, "run_threads", counting_threads)
    return started


@pytest.mark.skipif(not parallel.can_fork(), reason="no fork on this platform")
@pytest.mark.parametrize(("seed", "workers"), [(700, 2), (701, 3), (702, 2), (703, 4), (704, 12)])
def test_workers_give_pycocotools_arrays_and_the_one_process_result(
    seed, workers, write_json, parallel_everywhere
):
    gt, preds = make_scene(seed, n_images=120, n_categories=9, crowd_rate=0.1)
    files = _files(write_json, gt, preds)
    ours = evaluate(*files, workers=workers)
    # The ground truth read beside the predictions, their decoding and the
    # matching split: every part but the first runs in a child (numpy), or
    # in a thread (the compiled reader and core release the GIL).
    import iou_eval.io.loaders.coco

    jobs = parallel_everywhere
    with open(files[1], "rb") as fh:
        chunks = iou_eval.io.loaders.json_decode.plan_chunks(
            fh.read(), iou_eval.io.loaders.coco._CHUNK_BYTES
        )
    assert chunks is not None and len(chunks) > 1
    if json_reader() is None:
        assert sum("load_gt" in j for j in jobs) == 1
        assert sum("chunked_results" in j for j in jobs) == min(workers, len(chunks)) - 1
        assert sum("match_and_accumulate" in j for j in jobs) == min(workers, 9) - 1
    else:
        assert [j for j in jobs if not j.startswith("thread:")] == []  # nothing forked
        assert sum("_load_pair" in j for j in jobs) == 1
        # The results' runs of elements, then the category parts, in pools of threads.
        with open(files[1], "rb") as fh:
            runs = iou_eval.io.loaders.json_decode.plan_chunks(fh.read(), 2000)
        assert runs is not None and len(runs) > 1
        pools = (min(workers, len(runs)) - 1) + (min(workers, 9) - 1)
        assert sum("run_thread_pool" in j for j in jobs) == pools
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed}, {workers} workers")
    one = evaluate(*files, workers=1)
    assert ours.to_dict() == one.to_dict()
    a, b = ours.primary.evaluation, one.primary.evaluation
    for name in ("dt_rows", "tp", "fp", "match_gt", "match_iou", "gt_counts"):
        assert np.array_equal(getattr(a.point, name), getattr(b.point, name)), name
    for name in (f.name for f in dataclasses.fields(b.accumulation)):
        if not name.startswith("rec_"):  # records: the same set, another order
            x, y = getattr(a.accumulation, name), getattr(b.accumulation, name)
            assert np.array_equal(x, y), name
    records = [np.lexsort((e.accumulation.rec_dt, e.accumulation.rec_lane)) for e in (a, b)]
    for name in ("rec_lane", "rec_dt", "rec_tp", "rec_counted"):
        x = getattr(a.accumulation, name)[records[0]]
        y = getattr(b.accumulation, name)[records[1]]
        assert np.array_equal(x, y), name
    # Bootstrap replicates reuse the merged records and order.
    weight = np.random.default_rng(seed).integers(0, 3, len(gt["images"]))
    (sa, ca), (sb, cb) = a.replicate(weight), b.replicate(weight)
    assert sa == sb
    assert np.array_equal(ca, cb, equal_nan=True)


@pytest.mark.parametrize("seed", [710, 711])
def test_count_tables_from_the_evaluation_order_equal_a_fresh_sort(seed, write_json):
    """The per-class sweep reuses the accumulation's score order; sorting anew agrees."""
    from dataclasses import replace

    from iou_eval import load
    from iou_eval.data.reconcile import align
    from iou_eval.protocols.coco_run import run_coco
    from iou_eval.protocols.params import coco
    from iou_eval.results import point_counts

    gt, preds = make_scene(seed, n_images=80, tie_decimals=1)
    g, p = _files(write_json, gt, preds)
    alignment = align(load(g, "gt"), load(p, "pred"))
    ev = run_coco(alignment, coco())
    assert ev.point.order is not None
    given = point_counts(alignment, ev.point, 0.0)
    fresh = point_counts(alignment, replace(ev.point, order=None), 0.0)
    for name in given.__dataclass_fields__:
        assert np.array_equal(getattr(given, name), getattr(fresh, name), equal_nan=True), name
