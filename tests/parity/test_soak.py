"""Long randomized parity runs (``make soak``): many seeds, larger scenes, every variant."""

from __future__ import annotations

import pytest

from iou_eval import evaluate

from .synth import make_scene, run_pycocotools
from .test_coco_parity import assert_same

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", range(1000, 1200))
def test_soak_random_scenes(seed, write_json):
    variant = seed % 4
    kw = {
        0: {},
        1: {"zero_id": True},
        2: {"crowd_rate": 0.25, "tie_decimals": 0},
        3: {"string_ids": True},
    }[variant]
    gt, preds = make_scene(seed, n_images=120, n_categories=12, **kw)
    g, p = write_json("gt.json", gt), write_json("p.json", preds)
    assert_same(evaluate(g, p), run_pycocotools(gt, preds), f"seed {seed}")
    if seed % 5 == 0:
        ours = evaluate(g, p, class_agnostic=True)
        assert_same(ours, run_pycocotools(gt, preds, useCats=0), f"seed {seed} agnostic")
