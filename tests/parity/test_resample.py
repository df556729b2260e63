"""Bootstrap replicates as weighted sums: the same bits as re-accumulating every replicate.

The reference is :func:`iou_eval.protocols.accumulate.accumulate_coco` with
``image_weight`` (each replicate re-accumulated from the matches, as
bootstrap did before); :class:`iou_eval.protocols.resample.CocoResampler` must give the
same precision and recall in every slice the summary and the per-class AP
read, hence the same replicate arrays for a seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.analysis.bootstrap import image_weights, run_bootstrap, weight_runs
from iou_eval.protocols.accumulate import accumulate_coco, first_counts
from iou_eval.protocols.coco import class_ap, summarize
from iou_eval.protocols.core import coco_core
from iou_eval.protocols.resample import CocoResampler, needed_slices, recall_counts

from ..skip_reasons import compiled_missing
from .synth import make_scene


def reference_replicate(evaluation):
    """The replicate as it was computed before: a whole weighted accumulation."""

    def replicate(w):
        arrays = accumulate_coco(evaluation.accumulation, image_weight=w)
        return summarize(arrays, evaluation.protocol), loop_class_ap(arrays)

    return replicate


def loop_class_ap(arrays) -> np.ndarray:
    """Per-class AP, one masked mean per class (the definition)."""
    prec = arrays.precision[:, :, :, 0, -1]
    out = np.full(prec.shape[2], np.nan)
    for k in range(prec.shape[2]):
        v = prec[:, :, k]
        if (v > -1).any():
            out[k] = float(np.mean(v[v > -1]))
    return out


def weights_with_edge_cases(n_images: int, seed: int) -> np.ndarray:
    """Multinomial draws, all ones, every third image only, and one image alone."""
    w = image_weights(n_images, 6, seed)
    ones = np.ones((1, n_images), dtype=np.int64)
    thirds = (np.arange(n_images) % 3 == 0).astype(np.int64)[None]
    single = np.zeros((1, n_images), dtype=np.int64)
    single[0, n_images // 2] = 3
    return np.concatenate([w, ones, thirds, single])


def assert_same_slices(x, protocol, w):
    labels = tuple(a.label for a in protocol.area_ranges)
    got = CocoResampler(x, labels, protocol.max_dets)(w)
    want = accumulate_coco(x, image_weight=w)
    precision, recall = needed_slices(labels, protocol.max_dets)
    for a, m in precision:
        assert np.array_equal(got.precision[..., a, m], want.precision[..., a, m]), (a, m)
        assert np.array_equal(got.recall[..., a, m], want.recall[..., a, m]), (a, m)
    for a, m in recall:
        assert np.array_equal(got.recall[..., a, m], want.recall[..., a, m]), (a, m)
    assert summarize(got, protocol) == summarize(want, protocol)
    assert np.array_equal(class_ap(got), loop_class_ap(want), equal_nan=True)


SCENES = [
    ({}, {}),
    ({"tie_decimals": 1, "crowd_rate": 0.2}, {}),
    ({}, {"class_agnostic": True}),
    ({}, {"max_dets": (1, 5, 20)}),
    ({}, {"iou_thresholds": (0.3, 0.5, 0.7, 0.9)}),
    ({}, {"area_ranges": "tiny=0:100,mid=100:5000"}),
    ({"n_images": 8, "n_categories": 2}, {"honour_ignore": True}),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scene, options", SCENES)
def test_weighted_sums_equal_a_whole_accumulation(seed, scene, options, write_json):
    gt, preds = make_scene(seed, **scene)
    if "area_ranges" in options:
        from iou_eval.options import parse_area_ranges

        options = {**options, "area_ranges": parse_area_ranges(options["area_ranges"])}
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), **options).primary
    ev = r.evaluation
    for w in weights_with_edge_cases(len(r.images), seed):
        assert_same_slices(ev.accumulation, ev.protocol, w)


@pytest.mark.parametrize("seed", range(3))
def test_same_seed_same_replicates_as_before(seed, write_json):
    """Identical replicate arrays (summary and per class) before and after, for a seed."""
    gt, preds = make_scene(100 + seed)
    result = evaluate(write_json("g.json", gt), write_json("p.json", preds))
    ev = result.primary.evaluation
    ids = list(result.images["image_id"])
    before = run_bootstrap(reference_replicate(ev), ids, 60, seed)
    after = run_bootstrap(ev.replicate, ids, 60, seed)
    assert before.replicates.keys() == after.replicates.keys()
    for k, v in before.replicates.items():
        assert np.array_equal(v, after.replicates[k], equal_nan=True), k
    assert np.array_equal(before.class_ap, after.class_ap, equal_nan=True)


def test_worker_processes_give_the_same_replicates(write_json):
    gt, preds = make_scene(7)
    result = evaluate(write_json("g.json", gt), write_json("p.json", preds), protocol="coco,voc12")
    ids = list(result.images["image_id"])
    for r in result.results:
        one = run_bootstrap(r.evaluation.replicate, ids, 90, 5)
        two = run_bootstrap(r.evaluation.replicate, ids, 90, 5, workers=3)
        for k, v in one.replicates.items():
            assert np.array_equal(v, two.replicates[k], equal_nan=True), (r.protocol.name, k)
        assert np.array_equal(one.class_ap, two.class_ap, equal_nan=True)


def test_recall_counts_equal_the_searched_ones():
    rec = np.linspace(0.0, 1.00, 101, endpoint=True)
    npig = np.r_[0, np.arange(1, 3000), 9999, 10007, 36781, 123457]
    assert np.array_equal(recall_counts(npig, rec), first_counts(npig, rec))
    odd = np.array([0.0, 1e-9, 0.1, 1 / 3, 0.7, 0.999999, 1.0])
    assert np.array_equal(recall_counts(npig, odd), first_counts(npig, odd))


def test_class_ap_equals_one_mean_per_class():
    rng = np.random.default_rng(0)
    from iou_eval.protocols.accumulate import CocoArrays

    for _ in range(200):
        t, r, k = (int(rng.integers(1, n)) for n in (12, 120, 90))
        p = rng.random((t, r, k, 2, 3))
        p[rng.random(p.shape) < 0.02] = -1
        p[:, :, rng.random(k) < 0.2] = -1
        arrays = CocoArrays(p, p[:, 0], p)
        assert np.array_equal(class_ap(arrays), loop_class_ap(arrays), equal_nan=True)


def test_needed_slices_are_those_the_summary_reads():
    labels = ("all", "small", "medium", "large")
    precision, recall = needed_slices(labels, (1, 10, 100))
    assert precision == {(0, 2), (1, 2), (2, 2), (3, 2)}
    assert recall == {(0, 0), (0, 1)}
    # AR1/AR10 read positions 0 and 1; AP reads the value 100, absent here.
    precision, recall = needed_slices(("all",), (1, 5))
    assert precision == {(0, 1)} and recall == {(0, 0)}


# -- the compiled core against numpy ---------------------------------------------


def heavy_weights(n_images: int, seed: int) -> np.ndarray:
    """Draws, then zeros for most images with large multiplicities on a few, all zero, one alone."""
    rng = np.random.default_rng(seed)
    draws = image_weights(n_images, 4, seed)
    sparse = np.where(rng.random((3, n_images)) < 0.3, rng.integers(1, 10_000, (3, n_images)), 0)
    zeros = np.zeros((1, n_images), dtype=np.int64)
    alone = np.zeros((1, n_images), dtype=np.int64)
    alone[0, 0] = 2**20
    return np.concatenate([draws, sparse, zeros, alone]).astype(np.int64)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("scene, options", SCENES)
def test_compiled_replicates_equal_numpy_whole_arrays(seed, scene, options, write_json):
    """Every entry of precision and recall (not only the slices read), on both paths."""
    core = coco_core()
    if core is None:
        pytest.skip(compiled_missing("the COCO core", "iou_eval.protocols._cococore"))
    gt, preds = make_scene(50 + seed, **scene)
    if "area_ranges" in options:
        from iou_eval.options import parse_area_ranges

        options = {**options, "area_ranges": parse_area_ranges(options["area_ranges"])}
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), **options).primary
    resampler = r.evaluation.resampler
    for w in heavy_weights(len(r.images), seed):
        want = resampler.weighted_sums(w)
        for got in (resampler(w), resampler(w, reuse=True)):
            assert np.array_equal(got.precision, want.precision), np.argwhere(
                got.precision != want.precision
            )[:5]
            assert np.array_equal(got.recall, want.recall)


def test_compiled_replicates_reused_arrays_hold_only_the_last(write_json):
    """A thread's arrays filled again: a category whose ground truth weighs 0 goes back to -1."""
    if coco_core() is None:
        pytest.skip(compiled_missing("the COCO core", "iou_eval.protocols._cococore"))
    gt, preds = make_scene(3)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds)).primary
    resampler = r.evaluation.resampler
    n = len(r.images)
    resampler(np.ones(n, dtype=np.int64), reuse=True)
    only = np.zeros(n, dtype=np.int64)
    only[n // 2] = 1
    got = resampler(only, reuse=True)
    want = resampler.weighted_sums(only)
    assert np.array_equal(got.precision, want.precision)
    assert np.array_equal(got.recall, want.recall)
    assert (got.recall == -1).any()


def test_compiled_resampler_refuses_negative_and_misshapen_weights(write_json):
    core = coco_core()
    if core is None:
        pytest.skip(compiled_missing("the COCO core", "iou_eval.protocols._cococore"))
    gt, preds = make_scene(4)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds)).primary
    resampler = r.evaluation.resampler
    n = len(r.images)
    w = np.ones(n, dtype=np.int64)
    w[1] = -1
    with pytest.raises(ValueError, match="image_weight"):
        resampler(w)
    with pytest.raises(ValueError, match="image_weight"):
        resampler(np.full(n, 2**52, dtype=np.int64))
    prepared = resampler._prepared_for(core, n)
    prec, rec = resampler._blank_arrays()
    with pytest.raises(TypeError, match="image_weight: expected int64"):
        core.resample(prepared, np.ones(n), prec, rec)
    with pytest.raises(ValueError, match="image_weight"):
        core.resample(prepared, np.ones(n + 1, dtype=np.int64), prec, rec)
    with pytest.raises(ValueError, match="precision must be"):
        core.resample(prepared, np.ones(n, dtype=np.int64), prec[:, :1].copy(), rec)
    with pytest.raises((ValueError, TypeError)):
        core.resample(object(), np.ones(n, dtype=np.int64), prec, rec)


def test_chunked_draws_equal_one_draw():
    """Drawn in runs (as threads take them) or all at once: the same rows."""
    whole = image_weights(40, 25, seed=9)
    assert np.array_equal(np.concatenate(list(weight_runs(40, 25, 9, 7))), whole)
    assert np.array_equal(np.concatenate(list(weight_runs(40, 25, 9, 25))), whole)


@pytest.mark.parametrize("workers", [2, 3])
def test_replicates_in_threads_equal_one_thread(workers, write_json):
    """Threads drawing their runs in turn: the same replicates, in the same order, as one thread."""
    gt, preds = make_scene(8)
    result = evaluate(write_json("g.json", gt), write_json("p.json", preds))
    ev = result.primary.evaluation
    ids = list(result.images["image_id"])
    seen: list[int] = []
    one = run_bootstrap(ev.replicate, ids, 95, 5)
    many = run_bootstrap(
        ev.replicate, ids, 95, 5, workers=workers, threads=True, progress=seen.append
    )
    assert sum(seen) == 95
    for k, v in one.replicates.items():
        assert np.array_equal(v, many.replicates[k], equal_nan=True), k
    assert np.array_equal(one.class_ap, many.class_ap, equal_nan=True)


def test_a_failing_replicate_in_a_thread_is_raised_here():
    calls = 0

    def flaky(w):
        nonlocal calls
        calls += 1
        if calls == 30:
            raise ValueError("replicate failed")
        return {"AP": 0.5}, np.zeros(1)

    with pytest.raises(ValueError, match="replicate failed"):
        run_bootstrap(flaky, list(range(9)), 80, 1, workers=2, threads=True)
