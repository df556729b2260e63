"""Bounded category parts (``point_parts``) give the arrays and operating point of one pass, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import iou_eval.protocols.partition
import iou_eval.protocols.point_parts as point_parts
from iou_eval.api import load
from iou_eval.data.reconcile import align
from iou_eval.engine.parallel import can_fork, run_pool
from iou_eval.errors import InputError
from iou_eval.protocols.coco_run import run_coco
from iou_eval.protocols.params import coco

from ..parity.synth import make_scene

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

POINT_FIELDS = ("dt_rows", "tp", "fp", "match_gt", "match_iou", "gt_counts", "order")


@pytest.fixture(scope="module")
def alignment(tmp_path_factory):
    import json

    root = tmp_path_factory.mktemp("scene")
    gt, preds = make_scene(91, n_images=150, n_categories=12, crowd_rate=0.1)
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "p.json").write_text(json.dumps(preds))
    return align(load(str(root / "gt.json"), "gt"), load(str(root / "p.json"), "pred"))


@pytest.mark.parametrize(("part_size", "workers"), [(10**9, 1), (300, 1), (200, 2), (500, 3)])
def test_parts_give_the_arrays_and_point_of_one_pass(alignment, monkeypatch, part_size, workers):
    if workers > 1 and not can_fork():
        pytest.skip("no fork here")
    ref = run_coco(alignment, coco(), 0.5, workers=1, keep_accumulation=True)
    monkeypatch.setattr(point_parts, "PART_PREDICTIONS", part_size)
    monkeypatch.setattr(point_parts, "COMPILED_PART_SCALE", 1)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    ev = run_coco(alignment, coco(), 0.5, workers=workers, keep_accumulation=False)
    assert ev.accumulation is None
    for name in ("precision", "recall", "scores"):
        assert np.array_equal(getattr(ev.arrays, name), getattr(ref.arrays, name)), name
    assert ev.summary == ref.summary
    for name in POINT_FIELDS:
        assert np.array_equal(getattr(ev.point, name), getattr(ref.point, name)), name


def test_parts_are_planned_heaviest_first_and_cover_every_category(alignment, monkeypatch):
    from iou_eval.protocols.coco import prepare

    monkeypatch.setattr(point_parts, "PART_PREDICTIONS", 300)
    monkeypatch.setattr(point_parts, "COMPILED_PART_SCALE", 1)
    s = prepare(alignment, coco(), 0.5)
    parts = point_parts.plan(s, workers=1)
    assert parts is not None and len(parts) > 1
    weight = np.bincount(s.pred.category_idx, minlength=s.n_categories)
    loads = [int(weight[p].sum()) for p in parts]
    assert loads == sorted(loads, reverse=True)
    assert sorted(np.concatenate(parts).tolist()) == sorted(set(s.pred.category_idx.tolist()))


def test_parts_side_by_side_hold_together_about_one_parts_predictions(alignment, monkeypatch):
    """Two workers: the two heaviest parts (the ones running at once) hold about
    ``PART_PREDICTIONS`` together, not each, so the peak does not double."""
    from iou_eval.protocols.coco import prepare

    monkeypatch.setattr(point_parts, "PART_PREDICTIONS", 600)
    monkeypatch.setattr(point_parts, "COMPILED_PART_SCALE", 1)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    s = prepare(alignment, coco(), 0.5)
    weight = np.bincount(s.pred.category_idx, minlength=s.n_categories)
    alone = point_parts.plan(s, workers=1)
    side_by_side = point_parts.plan(s, workers=2)
    assert alone is not None and side_by_side is not None
    loads = sorted((int(weight[p].sum()) for p in side_by_side), reverse=True)
    assert loads[0] + loads[1] <= 600 + int(weight.max())
    # Rounds of two: no part runs alone at the end while the other thread waits.
    assert len(side_by_side) == 2 * len(alone)


def test_an_evaluation_without_its_accumulation_refuses_replicates(alignment):
    ev = run_coco(alignment, coco(), 0.5, keep_accumulation=False)
    with pytest.raises(ValueError, match="accumulation"):
        ev.replicate(np.ones(len(alignment.gt.images), dtype=np.int64))


def _square(x: int) -> int:
    if x == 7:
        raise InputError("f", "seven")
    return x * x


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_run_pool_keeps_the_order_of_the_parts(workers):
    assert run_pool(_square, list(range(6)), workers) == [0, 1, 4, 9, 16, 25]


@pytest.mark.parametrize("workers", [1, 2])
def test_run_pool_raises_a_parts_error(workers):
    with pytest.raises(InputError, match="seven"):
        run_pool(_square, [1, 2, 7, 3], workers)
