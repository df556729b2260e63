"""What the pictures read from a result: per-prediction outcome, score sweeps, per-image boxes.

Each is checked against the tables the numbers come from, on seeded random
COCO scenes (crowd regions, ties, groups past maxDets, a category only in
the predictions), under COCO, VOC and class-agnostic matching.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import UsageError
from iou_eval.reporters.detections import image_detections
from tests.parity.synth import make_scene

CASES = [
    (seed, protocol, agnostic, score_thr)
    for seed, protocol, agnostic, score_thr in [
        (0, "coco", False, 0.0),
        (1, "coco", False, 0.4),
        (2, "coco", True, 0.0),
        (3, "voc07", False, 0.0),
        (4, "voc12", False, 0.3),
        (5, "voc12", True, 0.0),
    ]
]


def scene_files(tmp_path, seed: int) -> tuple[str, str]:
    """A random scene, plus predictions of a category the ground truth lacks (id 999)."""
    gt, preds = make_scene(seed, n_images=30)
    rng = np.random.default_rng(seed)
    for img in gt["images"][:5]:
        x, y = rng.uniform(0, 400, 2)
        preds.append({"image_id": img["id"], "category_id": 999, "score": float(rng.uniform()),
                      "bbox": [float(x), float(y), 30.0, 20.0]})  # fmt: skip
    g, p = tmp_path / "gt.json", tmp_path / "preds.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(preds))
    return str(g), str(p)


@pytest.fixture(
    scope="module", params=CASES, ids=lambda c: f"seed{c[0]}-{c[1]}-agn{c[2]}-thr{c[3]}"
)
def run(request, tmp_path_factory):
    seed, protocol, agnostic, score_thr = request.param
    g, p = scene_files(tmp_path_factory.mktemp("scene"), seed)
    result = evaluate(g, p, protocol=protocol, class_agnostic=agnostic, score_thr=score_thr)
    return result, score_thr


def test_prediction_columns_add_up_to_the_count_tables(run):
    result, thr = run
    r = result.primary
    cols = r.predictions
    n_img = len(r.images)
    keep = cols.score >= thr
    tp, fp = cols.tp & keep, cols.fp & keep

    def per_image(mask, weights=None):
        return np.bincount(cols.image_idx[mask], weights=weights, minlength=n_img)

    np.testing.assert_array_equal(per_image(tp), r.images["TP"])
    np.testing.assert_array_equal(per_image(fp), r.images["FP"])
    np.testing.assert_array_equal(per_image(keep), r.images["predictions"])
    # The IoU of the pairs, summed in the same order: the table's mean IoU bit for bit.
    iou_sum = per_image(tp, cols.match_iou[tp])
    mean = np.divide(iou_sum, per_image(tp), out=np.full(n_img, np.nan), where=per_image(tp) > 0)
    np.testing.assert_array_equal(mean, np.asarray(r.images["mean_IoU"], dtype=np.float64))
    if not r.protocol.class_agnostic:
        n_cls = len(r.classes)
        np.testing.assert_array_equal(
            np.bincount(cols.category_idx[tp], minlength=n_cls), r.classes["TP"]
        )
        np.testing.assert_array_equal(
            np.bincount(cols.category_idx[fp], minlength=n_cls), r.classes["FP"]
        )
    # The prediction-only category's boxes come last, unscored, all false positives.
    extra = slice(cols.n_scored, None)
    assert len(cols) - cols.n_scored == 5
    assert cols.fp[extra].all() and not cols.tp[extra].any() and (cols.match_gt[extra] == -1).all()
    # A match is a ground truth of the same image (and category unless class-agnostic).
    gt = result.alignment.gt
    hit = cols.match_gt >= 0
    np.testing.assert_array_equal(gt.image_idx[cols.match_gt[hit]], cols.image_idx[hit])
    if not r.protocol.class_agnostic:
        np.testing.assert_array_equal(gt.category_idx[cols.match_gt[hit]], cols.category_idx[hit])
    assert (cols.match_iou[cols.tp] >= r.protocol.iou_thresholds[0] - 1e-12).all()


def test_score_sweeps_peak_at_the_tables_best_f1(run):
    result, thr = run
    r = result.primary
    rows = {rec["class"]: rec for rec in r.classes.records()}
    assert set(r.score_sweeps) == {name for name, rec in rows.items() if rec["gt"]}
    for name, sweep in r.score_sweeps.items():
        assert sweep.n_gt == rows[name]["gt"]
        if not len(sweep.scores):  # ground truth, no predictions: F1 0 at no score
            assert rows[name]["best_F1"] == 0 and rows[name]["best_F1_score"] is None
            continue
        i = int(np.argmax(sweep.f1))
        assert (sweep.f1[i], sweep.scores[i]) == (
            rows[name]["best_F1"],
            rows[name]["best_F1_score"],
        )
        assert sweep.n_gt == rows[name]["gt"]
    pooled = r.pooled_sweep
    assert pooled is not None and pooled.n_gt == sum(rec["gt"] for rec in rows.values())
    cols = r.predictions
    scored = slice(0, cols.n_scored)
    # At the lowest cut every true positive of the scored predictions is kept.
    assert pooled.tp[-1] == int(cols.tp[scored].sum())
    np.testing.assert_array_equal(pooled.scores, np.unique(cols.score[scored][
        (cols.tp | cols.fp)[scored]])[::-1])  # fmt: skip


def _box_iou(a: np.ndarray, b: np.ndarray, plus_one: bool) -> np.ndarray:
    """``[A, B]`` IoU, written out plainly."""
    e = 1.0 if plus_one else 0.0
    iw = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]) + e, 0, None)  # fmt: skip
    ih = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]) + e, 0, None)  # fmt: skip
    inter = iw * ih
    area_a = (a[:, 2] - a[:, 0] + e) * (a[:, 3] - a[:, 1] + e)
    area_b = (b[:, 2] - b[:, 0] + e) * (b[:, 3] - b[:, 1] + e)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def test_image_detections_say_what_the_per_image_table_counts(run):
    result, _ = run
    r = result.primary
    table = r.images.records()
    plus_one = r.protocol.is_voc
    for det in image_detections(result):
        row = table[det.index]
        tp = ~det.pred_is_fp & ~det.pred_ignored
        assert det.image_id == row["image_id"] and det.file_name == row["file_name"]
        assert (len(det.pred_labels), int(tp.sum())) == (row["predictions"], row["TP"])
        assert (int(det.pred_is_fp.sum()), int(det.pred_ignored.sum())) == (
            row["FP"],
            row["ignored"],
        )
        assert int(det.gt_missed.sum()) == row["FN"]
        # A true positive points at a matched ground truth of this image.
        assert (det.pred_gt[tp] >= 0).all() and det.gt_matched[det.pred_gt[tp]].all()
        assert (det.pred_gt[det.pred_is_fp] == -1).all()
        # A false positive's IoU: its best with a ground truth it could have matched.
        for j in np.flatnonzero(det.pred_is_fp):
            same = ~det.gt_crowd
            if not r.protocol.class_agnostic:
                same &= np.array([g == det.pred_labels[j] for g in det.gt_labels], dtype=bool)
            best = _box_iou(det.pred_xyxy[j : j + 1], det.gt_xyxy[same], plus_one).max(initial=0.0)
            assert det.pred_iou[j] == pytest.approx(best, abs=1e-12)


def test_image_detections_in_the_order_asked_and_at_another_score_threshold(run):
    result, _ = run
    dets = image_detections(result, [3, 0, 7], score_thr=0.6)
    assert [d.index for d in dets] == [3, 0, 7]
    assert all((d.pred_scores >= 0.6).all() for d in dets)
    with pytest.raises(UsageError, match="image positions must lie in"):
        image_detections(result, [len(result.images)])


def test_a_result_without_its_alignment_has_nothing_to_draw(run):
    result, _ = run
    with pytest.raises(UsageError, match="keeps no boxes"):
        image_detections(dataclasses.replace(result, alignment=None))
