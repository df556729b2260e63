"""``--iou-type boundary`` against boundary-iou-api's rule and faster-coco-eval's ``iouType="boundary"``.

Seeded scenes (:mod:`.boundary_scenes`: thin strips, masks cut by the image
border, rings, crowd regions, ties, several image sizes) are scored three
ways:

- by the reference of the API's rule written in the tests (pycocotools'
  COCOeval with the API's ``computeBoundaryIoU`` and a numpy erosion):
  whole precision, recall and score arrays and the 12 numbers, bit for bit,
  with the compiled kernel and without it;
- by faster-coco-eval away from the image sizes whose ``0.02 * diagonal`` is
  ``k + 0.5``: every IoU matrix bit for bit, recall and scores bit for bit.
  Its accumulation differs from pycocotools' by an ulp here and there
  (precision and the summary within 1e-15 of the reference);
- at the ``k + 0.5`` sizes, where faster-coco-eval rounds the depth down and
  the API rounds halves to even: equal to the API's reference, and not to
  faster-coco-eval.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate

from ..acceptance.helpers import STAT_NAMES
from .boundary_scenes import (
    HALF_SIZES,
    api_evaluate,
    fce_evaluate,
    make_boundary_scene,
    our_matrices,
    write,
)

fce = pytest.importorskip("faster_coco_eval")


def _arrays_equal(ours, ref, label: str, names=("precision", "recall", "scores")) -> None:
    for name in names:
        a, b = getattr(ours.primary.arrays, name), ref.eval[name]
        if a.shape != b.shape or not np.array_equal(a, b):
            bad = np.argwhere(a != b)[:5] if a.shape == b.shape else "shapes"
            pytest.fail(f"{label}: {name} differs at {bad}: ours {a.shape}, theirs {b.shape}")


def _stats(ours) -> list:
    return [ours.summary[k] for k in STAT_NAMES.values()]


def _reference_stats(e) -> list:
    return [None if v == -1 else float(v) for v in e.stats]


def _ours(tmp_path, gt, results, **kw):
    return evaluate(write(tmp_path, "g.json", gt), write(tmp_path, "p.json", results),
                    iou_type="boundary", **kw)  # fmt: skip


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
@pytest.mark.parametrize("seed", range(4))
def test_random_scenes_equal_the_api_rule_bit_for_bit(seed, kernel, tmp_path, monkeypatch):
    if kernel == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    gt, results = make_boundary_scene(seed)
    ref = api_evaluate(gt, results)
    ours = _ours(tmp_path, gt, results)
    _arrays_equal(ours, ref, f"seed {seed} ({kernel})")
    assert _stats(ours) == _reference_stats(ref)
    # The scene is not degenerate: boundaries decide some matches.
    assert 0.02 < ours.summary["AP"] < 0.98


@pytest.mark.parametrize("seed", range(4, 7))
def test_random_scenes_agree_with_faster_coco_eval(seed, tmp_path):
    gt, results = make_boundary_scene(seed)
    theirs = fce_evaluate(gt, results)
    ours = _ours(tmp_path, gt, results)
    mine = our_matrices(tmp_path, gt, results, 0.02)
    their_ious = {(int(i), int(c)): np.asarray(v) for (i, c), v in theirs.ious.items() if len(v)}
    assert set(mine) == set(their_ious)
    for key, m in mine.items():
        assert np.array_equal(m, their_ious[key]), f"seed {seed} {key}: {m} vs {their_ious[key]}"
    assert any(0 < v < 1 for m in mine.values() for v in m.ravel())
    _arrays_equal(ours, theirs, f"seed {seed}", names=("recall", "scores"))
    # faster-coco-eval's accumulation rounds an ulp away from pycocotools' at places.
    np.testing.assert_allclose(ours.primary.arrays.precision, theirs.eval["precision"], atol=1e-15)
    np.testing.assert_allclose(
        [-1.0 if v is None else v for v in _stats(ours)], theirs.stats, rtol=0, atol=1e-15
    )


def test_another_dilation_ratio_against_both(tmp_path):
    # 0.05 * diagonal: 8.0, 7.5 (!), 10.7, 4.0: the 90x120 images are left out.
    gt, results = make_boundary_scene(11, sizes=((96, 128), (37, 211), (48, 64)))
    ours = _ours(tmp_path, gt, results, boundary_dilation=0.05)
    _arrays_equal(ours, api_evaluate(gt, results, 0.05), "ratio 0.05")
    theirs = fce_evaluate(gt, results, 0.05)
    _arrays_equal(ours, theirs, "ratio 0.05 vs faster-coco-eval", names=("recall", "scores"))
    assert ours.summary != _ours(tmp_path, gt, results).summary  # the ratio matters here
    assert ours.primary.protocol.params()["boundary_dilation"] == 0.05


@pytest.mark.parametrize("seed", [20, 21])
def test_half_pixel_sizes_round_halves_to_even_as_the_api(seed, tmp_path):
    gt, results = make_boundary_scene(seed, sizes=HALF_SIZES, n_images=6)
    ref = api_evaluate(gt, results)
    ours = _ours(tmp_path, gt, results)
    _arrays_equal(ours, ref, f"half sizes, seed {seed}")
    assert _stats(ours) == _reference_stats(ref)
    # faster-coco-eval erodes one pixel less there: its overlaps differ.
    mine = our_matrices(tmp_path, gt, results, 0.02)
    theirs = fce_evaluate(gt, results)
    differ = [k for k, m in mine.items() if not np.array_equal(m, np.asarray(theirs.ious[k]))]
    assert differ, "expected faster-coco-eval's depth to differ at k + 0.5 sizes"


def test_results_with_boxes_take_box_areas_as_pycocotools_loadres(tmp_path):
    from pycocotools import mask as mask_utils

    gt, results = make_boundary_scene(30)
    for r in results:
        rle = {**r["segmentation"], "counts": r["segmentation"]["counts"].encode()}
        r["bbox"] = [float(v) for v in mask_utils.toBbox(rle)]
    ref = api_evaluate(gt, results)
    ours = _ours(tmp_path, gt, results)
    _arrays_equal(ours, ref, "bbox branch")


def test_segm_and_boundary_from_one_parse_equal_two_runs(tmp_path):
    gt, results = make_boundary_scene(3)
    g, p = write(tmp_path, "g.json", gt), write(tmp_path, "p.json", results)
    both = evaluate(g, p, iou_type="segm,boundary")
    assert [r.protocol.label for r in both.results] == ["coco-segm", "coco-boundary"]
    assert both.results[0].summary == evaluate(g, p, iou_type="segm").summary
    assert both.results[1].summary == evaluate(g, p, iou_type="boundary").summary
    # The boundary never raises an overlap above the mask's: AP cannot rise.
    assert both.results[1].summary["AP"] <= both.results[0].summary["AP"]


def test_category_parts_in_workers_give_the_same_arrays(tmp_path, monkeypatch):
    import iou_eval.protocols.partition

    gt, results = make_boundary_scene(5, n_images=16)
    ref = api_evaluate(gt, results)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 1)
    for workers in (1, 2):
        _arrays_equal(_ours(tmp_path, gt, results, workers=workers), ref, f"{workers} workers")


# -- the LVIS protocol ------------------------------------------------------------


@pytest.fixture(scope="module")
def lvis_api():
    """lvis-api's ``LVISEval`` (it still spells ``np.float``, which numpy 2 removed)."""
    import logging

    if not hasattr(np, "float"):
        np.float = float  # type: ignore[attr-defined]
    lvis = pytest.importorskip("lvis")
    logging.getLogger("lvis").setLevel(logging.ERROR)
    return lvis.LVISEval


def _lvis_with_the_api_rule(lvis_api, gt_path: str, res_path: str):
    """lvis-api 0.5.3's ``LVISEval`` on masks, its overlaps replaced by boundary-iou-api's rule.

    (boundary-iou-api's LVIS evaluation is lvis-api's with this overlap;
    lvis-api computes every overlap as if no ground truth were a crowd.)
    """
    import contextlib
    import io

    from .boundary_scenes import _encoded_boundary

    class ApiLvis(lvis_api):
        def compute_iou(self, img_id, cat_id):
            from pycocotools import mask as mask_utils

            gt, dt = self._get_gt_dt(img_id, cat_id)
            if len(gt) == 0 or len(dt) == 0:
                return []
            dt = [dt[i] for i in np.argsort([-d["score"] for d in dt], kind="mergesort")]
            g = [a["segmentation"] for a in gt]
            d = [a["segmentation"] for a in dt]
            plain = [0] * len(g)
            mask = np.array(mask_utils.iou(d, g, plain))
            edge = np.array(mask_utils.iou([_encoded_boundary(r, 0.02) for r in d],
                                           [_encoded_boundary(r, 0.02) for r in g], plain))  # fmt: skip
            return np.minimum(mask, edge)

    with contextlib.redirect_stdout(io.StringIO()):
        e = ApiLvis(gt_path, res_path, "segm")
        e.run()
    return e


@pytest.mark.parametrize("seed", [50, 51])
def test_the_lvis_protocol_scores_boundaries_with_the_api_rule(seed, write_json, lvis_api):
    from pycocotools import mask as mask_utils

    from .lvis_scenes import make_lvis_scene
    from .test_lvis_parity import assert_same

    gt, res = make_lvis_scene(seed, n_images=10, crowded=1)
    for a in gt["annotations"]:  # the objects as masks, cut at 70% of their height
        x, y, w, h = a["bbox"]
        poly = [x, y, x + w, y, x + w, y + h * 0.7, x, y + h]
        rle = mask_utils.frPyObjects([poly], 96, 128)[0]
        a["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
    for r in res:
        x, y, w, h = r["bbox"]
        poly = [x, y + h * 0.2, x + w, y, x + w, y + h, x, y + h]
        rle = mask_utils.frPyObjects([poly], 96, 128)[0]
        r["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
    g, p = write_json("gt.json", gt), write_json("res.json", res)
    ours = evaluate(g, p, iou_type="boundary")
    assert_same(ours, _lvis_with_the_api_rule(lvis_api, g, p), f"lvis boundary, seed {seed}")
    segm = evaluate(g, p, iou_type="segm")
    assert ours.summary != segm.summary  # the boundaries decide some matches
