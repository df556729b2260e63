"""Bootstrap replicates: the identity resample reproduces the evaluation exactly."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.analysis.bootstrap import image_weights, percentile_interval

from ..parity.synth import make_scene

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")


@pytest.fixture
def result(write_json):
    gt, preds = make_scene(21)
    return evaluate(write_json("g.json", gt), write_json("p.json", preds), protocol="coco,voc12")


def test_all_ones_weights_reproduce_the_summary_exactly(result):
    n_images = len(result.images)
    for r in result.results:
        rep, _ = r.evaluation.replicate(np.ones(n_images, dtype=np.int64))
        for k, v in r.summary.items():
            assert rep[k] == v, (r.protocol.name, k)


def test_doubling_every_image_keeps_ap(result):
    """Each image twice: same curves, same AP up to rounding."""
    n_images = len(result.images)
    rep, _ = result.primary.evaluation.replicate(np.full(n_images, 2, dtype=np.int64))
    assert rep["AP"] == pytest.approx(result.summary["AP"], abs=1e-12)
    assert rep["AR100"] == pytest.approx(result.summary["AR100"], abs=1e-12)


def test_weights_draw_every_image_count_once_per_row():
    w = image_weights(50, 20, seed=3)
    assert w.shape == (20, 50) and (w.sum(axis=1) == 50).all()
    assert np.array_equal(w, image_weights(50, 20, seed=3))
    assert not np.array_equal(w, image_weights(50, 20, seed=4))


def test_interval_ignores_undefined_replicates():
    assert percentile_interval(np.array([np.nan, 1.0, 2.0, 3.0]), 0.5) == (1.5, 2.5)
    assert percentile_interval(np.array([np.nan]), 0.9) is None
