"""Results that give masks and no boxes, scored for boxes (``--iou-type bbox``) as pycocotools does.

``loadRes`` takes such a result's box from its mask (``toBbox``) and, when the
first result has no ``bbox``, every result's area from its mask: whole
arrays against ``COCOeval(iouType="bbox")`` on seeded random scenes, and the
acceptance case whose segm results carry no boxes.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from iou_eval import evaluate

from ..acceptance.helpers import CASES, STAT_NAMES
from .test_segm_parity import make_segm_scene


def pycocotools_bbox(gt: dict, results: list[dict]) -> COCOeval:
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(copy.deepcopy(results)), "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def assert_same(ours, theirs: COCOeval, label: str) -> None:
    for name in ("precision", "recall", "scores"):
        a, b = getattr(ours.primary.arrays, name), theirs.eval[name]
        if not np.array_equal(a, b):
            bad = np.argwhere(a != b)[:5]
            pytest.fail(f"{label}: {name} differs at {bad.tolist()}: {a[tuple(bad.T)]} vs "
                        f"{b[tuple(bad.T)]}")  # fmt: skip
    stats = [ours.summary[k] for k in STAT_NAMES.values()]
    assert stats == [None if v == -1 else float(v) for v in theirs.stats], label


def _scene(seed: int, some_boxes: bool) -> tuple[dict, list[dict]]:
    gt, results = make_segm_scene(seed, n_images=16, with_bbox=False)
    for a in gt["annotations"]:
        a["segmentation"] = []  # boxes are scored: the ground truth's masks play no part
    if some_boxes:
        # A later result may give its own box: loadRes keeps it (and still takes
        # the area from the mask, as the first result has none).
        rng = np.random.default_rng(seed + 100)
        for r in results[1:]:
            if rng.random() < 0.3:
                r["bbox"] = [float(v) for v in np.round(rng.uniform(0, 60, 4), 2)]
    return gt, results


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("some_boxes", [False, True], ids=["masks-only", "some-boxes"])
def test_mask_only_results_scored_for_boxes_give_pycocotools_arrays(seed, some_boxes, tmp_path):
    gt, results = _scene(seed, some_boxes)
    assert results and "bbox" not in results[0]
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(results))
    ours = evaluate(str(g), str(p))
    assert_same(ours, pycocotools_bbox(gt, results), f"seed {seed}")
    (note,) = [w for w in ours.warnings if "give a mask and no 'bbox'" in w]
    unboxed = sum("bbox" not in r for r in results)
    assert note.startswith(f"{p}: {unboxed} result(s) give a mask and no 'bbox'")
    assert "every result's area is its mask's pixel count" in note


def test_a_result_with_neither_box_nor_mask_is_a_located_error(tmp_path):
    from iou_eval.errors import InputError

    gt, results = _scene(0, False)
    results[3] = {k: v for k, v in results[3].items() if k != "segmentation"}
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(results))
    with pytest.raises(InputError) as exc:
        evaluate(str(g), str(p))
    assert exc.value.where == "[3]" and "neither a 'bbox' nor a 'segmentation'" in exc.value.message


CASE04 = CASES / "04_cocoapi_val2014_100_bbox_segm"


@pytest.mark.skipif(not CASE04.is_dir(), reason="acceptance cases not present")
def test_case_04_segm_results_scored_for_boxes():
    """The official fake segm results carry no boxes: ``--iou-type bbox`` reads them as loadRes."""
    gt_path = str(CASE04 / "instances_val2014_100.json")
    res_path = str(CASE04 / "instances_val2014_fakesegm100_results.json")
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(gt_path)
        e = COCOeval(coco, coco.loadRes(res_path), "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    assert_same(evaluate(gt_path, res_path), e, "case 04 segm results as boxes")
