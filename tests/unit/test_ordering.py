"""Radix-based orderings equal numpy's stable sorts."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.ordering import dense_codes, distinct, group_score_order, radix_argsort


@pytest.mark.parametrize("seed", range(5))
def test_radix_argsort_is_a_stable_sort(seed):
    rng = np.random.default_rng(seed)
    key = rng.integers(0, [10, 70_000, 2**40, 1, 300][seed], size=5_000)
    assert np.array_equal(radix_argsort(key), np.argsort(key, kind="stable"))


@pytest.mark.parametrize("seed", range(5))
def test_group_score_order_equals_lexsort_with_ties(seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 50, size=4_000)
    score = np.round(rng.random(4_000), 1)  # many ties
    score[:10] = -0.0
    score[10:20] = 0.0
    assert np.array_equal(group_score_order(group, score), np.lexsort((-score, group)))


def test_empty_input():
    assert len(group_score_order(np.zeros(0, np.int64), np.zeros(0))) == 0


@pytest.mark.parametrize(
    "keys",
    [
        np.array([5, 3, 5, 9, 3, 3], dtype=np.int64),  # dense: the table path
        np.array([-7, 2**40, 0, -7], dtype=np.int64),  # sparse: np.unique's path
        np.array([-3, -1, -3, -2], dtype=np.int64),  # negative ids
        np.array([42], dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.random.default_rng(3).integers(1, 600_000, 20_000),  # COCO-like image ids
    ],
)
def test_dense_codes_equal_np_unique(keys):
    uniq, code = dense_codes(keys)
    ref_uniq, ref_code = np.unique(keys, return_inverse=True)
    assert uniq.dtype == ref_uniq.dtype and np.array_equal(uniq, ref_uniq)
    assert np.array_equal(code, ref_code) and np.array_equal(uniq[code], keys)


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, 1, 3, 2, 1]),
        np.array([[2, 2], [0, 5]]),
        np.zeros(0, dtype=np.int64),
        np.array([0.5, -0.0, 0.0, 0.5]),
    ],  # fmt: skip
)
def test_distinct_equals_np_unique(values):
    assert np.array_equal(distinct(values), np.unique(values))


def test_a_short_run_does_not_import_numpy_ma(tmp_path):
    """numpy.ma costs start-up time; plain np.unique would import it."""
    import subprocess
    import sys

    from ..parity.synth import make_scene

    gt, preds = make_scene(3)
    import json

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    code = (
        "import sys; from iou_eval.cli.main import main; sys.argv = ['iou-eval', sys.argv[1], "
        "sys.argv[2], '-f', 'json', '-o', sys.argv[3], '-p', 'coco,voc12']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('numpy.ma' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, tmp_path / "gt.json", tmp_path / "p.json", tmp_path / "o.json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "False", out.stderr
