"""sample_data/: the same scene in three formats gives the same numbers, and pycocotools' numbers."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from iou_eval.data.reconcile import align
from iou_eval.io.loaders import load
from iou_eval.protocols.coco_run import run_coco
from iou_eval.protocols.params import coco

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
PAIRS = {
    "coco": ("coco/gt.json", "coco/preds.json"),
    "voc-xml": ("voc/annotations", "voc/predictions"),
    "csv": ("csv/gt.csv", "csv/preds.csv"),
    # Written from coco/ by `iou-eval convert --to labelstudio`.
    "labelstudio": ("labelstudio/gt.json", "labelstudio/preds.json"),
}


def _summary(fmt: str) -> dict[str, float | None]:
    gt_path, pred_path = (str(SAMPLE / p) for p in PAIRS[fmt])
    gt = load(gt_path, "gt")
    pred = load(pred_path, "pred")
    assert (gt.format, pred.format) == (fmt, fmt)
    alignment = align(gt, pred)
    assert alignment.warnings == ()
    assert alignment.unknown_image_rows == 0
    return run_coco(alignment, coco()).summary


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict[str, float | None]]:
    return {fmt: _summary(fmt) for fmt in PAIRS}


def test_the_scene_has_what_the_script_promises():
    gt = load(str(SAMPLE / "coco/gt.json"), "gt")
    pred = load(str(SAMPLE / "coco/preds.json"), "pred")
    assert (len(gt.images), len(gt), len(pred)) == (12, 30, 33)
    assert gt.categories.names == ("bicycle", "car", "dog", "person", "traffic light")
    assert int(gt.is_crowd.sum()) == 1 and int(gt.ignore.sum()) == 1
    voc = load(str(SAMPLE / "voc/annotations"), "gt")
    table = load(str(SAMPLE / "csv/gt.csv"), "gt")
    for other in (voc, table):
        assert len(other.images) == 12  # street_12 has no boxes, and is still an image
        assert (other.xyxy == gt.xyxy).all()
        assert (other.area == gt.area).all()
        assert (other.is_crowd == gt.is_crowd).all() and (other.ignore == gt.ignore).all()


def test_every_sample_format_gives_identical_summaries(summaries):
    coco_s = summaries["coco"]
    assert 0.0 < coco_s["AP"] < 1.0, coco_s
    assert all(v is not None for v in coco_s.values()), coco_s
    for fmt in ("voc-xml", "csv", "labelstudio"):
        assert summaries[fmt] == coco_s, f"{fmt}: {summaries[fmt]}\ncoco: {coco_s}"


def test_coco_sample_matches_pycocotools(summaries):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(SAMPLE / "coco/gt.json"))
        cd = cg.loadRes(str(SAMPLE / "coco/preds.json"))
        ev = COCOeval(cg, cd, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ours = [-1.0 if v is None else v for v in summaries["coco"].values()]
    theirs = [float(v) for v in ev.stats]
    assert ours == theirs, f"ours:   {ours}\ntheirs: {theirs}"


def test_lvis_scene_is_scored_as_lvis_with_every_rule_in_it():
    """sample_data/lvis: all three frequency groups, negatives, a not-exhaustive category."""
    from iou_eval import evaluate

    gt_path, pred_path = str(SAMPLE / "lvis/gt.json"), str(SAMPLE / "lvis/preds.json")
    result = evaluate(gt_path, pred_path)
    assert result.protocol == "lvis"
    assert all(result.summary[k] is not None for k in ("APr", "APc", "APf"))
    gt = load(gt_path, "gt")
    assert set(gt.categories.frequency or ()) == {"r", "c", "f"}
    assert gt.images.negative is not None and any(gt.images.negative)
    assert gt.images.not_exhaustive is not None and any(gt.images.not_exhaustive)
    # The bench (neither labelled nor listed on its image) is not evaluated.
    bench = result.per_class[result.per_class["class"] == "bench"].iloc[0]
    assert bench["predictions"] == 0
    # The two unmatched detections inside street_05's group of people are ignored.
    street_05 = result.per_image[result.per_image["image_id"] == 5].iloc[0]
    assert street_05["ignored"] == 2


def test_lvis_scene_matches_lvis_api():
    import numpy as np

    if not hasattr(np, "float"):
        np.float = float  # type: ignore[attr-defined]  # lvis-api 0.5.3 spells np.float
    lvis = pytest.importorskip("lvis")
    from iou_eval import evaluate

    gt_path, pred_path = str(SAMPLE / "lvis/gt.json"), str(SAMPLE / "lvis/preds.json")
    with contextlib.redirect_stdout(io.StringIO()):
        ref = lvis.LVISEval(gt_path, pred_path, "bbox")
        ref.run()
    ours = evaluate(gt_path, pred_path)
    assert np.array_equal(ours.primary.arrays.precision[..., 0], ref.eval["precision"])
    names = {"AR@300": "AR300", "ARs@300": "ARs", "ARm@300": "ARm", "ARl@300": "ARl"}
    assert {names.get(k, k): float(v) for k, v in ref.results.items()} == ours.summary
