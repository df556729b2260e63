"""The confusion matrix: a hand-worked scene, and seeded scenes against a naive implementation."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.analysis import confusion_matrix, confusion_matrix_from_datasets, most_confused
from iou_eval.api import load
from iou_eval.data.reconcile import align

from ..parity.error_scenes import make_error_scene, to_columns

# Classes 0 = cat, 1 = dog, 2 = bird; index 3 = background.  Boxes 10 x 10 unless said.
#
# image 0:  A cat [0,10]   B dog [20,30]   C bird [40,50]   crowd dog [60..100] x [0..40]
#   p1 cat .9 on A                 -> [cat, cat]
#   p2 cat .8 on B                 -> [dog, cat]   (class-agnostic match)
#   p3 dog .7 on A, A taken        -> [background, dog]
#   p4 dog .6 inside the dog crowd -> nowhere
#   p5 cat .6 inside the dog crowd -> [background, cat]   (the crowd is not its class)
#   p6 bird .1 on C, under 0.25    -> left out, so C -> [bird, background]
# image 1:  E cat [0,10]   F dog [0,10] x [0,20] (IoU 0.5 with a 10 x 10 box at the origin)
#   q1 dog .5 at the origin, first in the file -> takes E (IoU 1)   -> [cat, dog]
#   q2 cat .5 at the origin, equal score, later -> takes F (IoU 0.5) -> [dog, cat]
#   q3 bird .25 far away (score exactly on the threshold)           -> [background, bird]
# image 2:  G cat, H dog, the same box
#   r1 bird .9 on both -> takes G (equal IoU: the earlier) -> [cat, bird]; H -> [dog, background]
GT = {
    "gt_image": [0, 0, 0, 0, 1, 1, 2, 2],
    "gt_category": [0, 1, 2, 1, 0, 1, 0, 1],
    "gt_xyxy": [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 100, 40],
                [0, 0, 10, 10], [0, 0, 10, 20], [0, 0, 10, 10], [0, 0, 10, 10]],
    "gt_crowd": [False, False, False, True, False, False, False, False],
}  # fmt: skip
PRED = {
    "pred_image": [0, 0, 0, 0, 0, 0, 1, 1, 1, 2],
    "pred_category": [0, 0, 1, 1, 0, 2, 1, 0, 2, 2],
    "pred_xyxy": [[0, 0, 10, 10], [20, 0, 30, 10], [0, 0, 10, 10], [70, 10, 80, 20],
                  [70, 10, 80, 20], [40, 0, 50, 10], [0, 0, 10, 10], [0, 0, 10, 10],
                  [200, 200, 210, 210], [0, 0, 10, 10]],
    "pred_score": [0.9, 0.8, 0.7, 0.6, 0.6, 0.1, 0.5, 0.5, 0.25, 0.9],
}  # fmt: skip
EXPECTED = [
    # pred: cat dog bird bg
    [1, 1, 1, 0],  # gt cat
    [2, 0, 0, 1],  # gt dog
    [0, 0, 0, 1],  # gt bird
    [1, 1, 1, 0],  # background
]


def columns(**changes):
    cols = {k: np.asarray(v) for k, v in {**GT, **PRED}.items()}
    cols["gt_xyxy"] = cols["gt_xyxy"].astype(np.float64)
    cols["pred_xyxy"] = cols["pred_xyxy"].astype(np.float64)
    cols.update(num_images=3, num_categories=3)
    cols.update(changes)
    return cols


def test_hand_scene():
    r = confusion_matrix(**columns(), names=("cat", "dog", "bird"))
    assert r.matrix.tolist() == EXPECTED
    assert r.matrix.dtype == np.int64
    assert (r.iou_threshold, r.score_threshold) == (0.5, 0.25)
    assert r.to_dict()["labels"] == ["cat", "dog", "bird", "background"]


def test_hand_scene_thresholds():
    # With no score threshold p6 takes C: [bird, bird] instead of [bird, background].
    r = confusion_matrix(**columns(), score_threshold=0.0)
    assert r.matrix[2].tolist() == [0, 0, 1, 0]
    # At IoU 1.01 nothing matches and nothing is inside a crowd: every kept
    # prediction is a background detection.
    none = confusion_matrix(**columns(), iou_threshold=1.01)
    assert np.trace(none.matrix[:3, :3]) == 0
    assert none.matrix[3, :3].tolist() == [4, 3, 2]


def test_most_confused():
    r = confusion_matrix(**columns(), names=("cat", "dog", "bird"))
    pairs = most_confused(r)
    assert [(p.true, p.predicted, p.count) for p in pairs] == [
        ("dog", "cat", 2),
        ("cat", "dog", 1),
        ("cat", "bird", 1),
    ]
    with_bg = most_confused(r, top=5, include_background=True)
    assert [(p.true_index, p.predicted_index) for p in with_bg] == [
        (1, 0), (0, 1), (0, 2), (1, 3), (2, 3)
    ]  # fmt: skip
    assert with_bg[3].predicted == "background"
    assert most_confused(r, top=1)[0].count == 2


def naive_confusion(c: dict, iou_thr: float, score_thr: float) -> np.ndarray:
    """One prediction at a time, in plain Python."""

    def iou(a, b, crowd):
        iw = min(a[2], b[2]) - max(a[0], b[0])
        ih = min(a[3], b[3]) - max(a[1], b[1])
        if iw <= 0 or ih <= 0:
            return 0.0
        inter = iw * ih
        area_a = (a[2] - a[0]) * (a[3] - a[1])
        area_b = (b[2] - b[0]) * (b[3] - b[1])
        return inter / (area_a if crowd else area_a + area_b - inter)

    k = c["num_categories"]
    m = np.zeros((k + 1, k + 1), dtype=np.int64)
    gts = list(zip(c["gt_image"], c["gt_category"], c["gt_xyxy"], c["gt_crowd"], strict=True))
    preds = list(
        zip(c["pred_image"], c["pred_category"], c["pred_xyxy"], c["pred_score"], strict=True)
    )
    for img in range(c["num_images"]):
        mine = [i for i, g in enumerate(gts) if g[0] == img]
        used = set()
        todo = [p for p in preds if p[0] == img and p[3] >= score_thr]
        todo.sort(key=lambda p: -p[3])  # stable: file order on ties
        for _, cat, box, _ in todo:
            best, best_iou = None, iou_thr
            for i in mine:
                if gts[i][3] or i in used:
                    continue
                v = iou(box, gts[i][2], False)
                if v >= best_iou and (best is None or v > best_iou):
                    best, best_iou = i, v
            if best is not None:
                used.add(best)
                m[gts[best][1], cat] += 1
            elif not any(
                gts[i][3] and gts[i][1] == cat and iou(box, gts[i][2], True) >= iou_thr
                for i in mine
            ):
                m[k, cat] += 1
        for i in mine:
            if not gts[i][3] and i not in used:
                m[gts[i][1], k] += 1
    return m


@pytest.mark.parametrize("seed", range(8))
def test_random_scenes_against_naive(seed):
    gt, preds = make_error_scene(100 + seed)
    c = to_columns(gt, preds)
    for iou_thr, score_thr in ((0.5, 0.25), (0.1, 0.0), (0.75, 0.5)):
        got = confusion_matrix(**c, iou_threshold=iou_thr, score_threshold=score_thr).matrix
        want = naive_confusion(c, iou_thr, score_thr)
        assert np.array_equal(got, want), (
            f"seed {seed} iou {iou_thr} score {score_thr}\n ours\n{got}\n naive\n{want}"
        )


def test_from_datasets_uses_names_and_file_areas(write_json):
    gt, preds = make_error_scene(7)
    g = load(write_json("gt.json", gt), "gt")
    al = align(g, load(write_json("dt.json", preds), "pred"))
    r = confusion_matrix_from_datasets(al.gt, al.pred)
    c = to_columns(gt, preds)
    assert np.array_equal(r.matrix, naive_confusion(c, 0.5, 0.25))
    assert r.names[: len(gt["categories"])] == tuple(f"class{x['id']}" for x in gt["categories"])


def test_every_ground_truth_lands_in_its_row_once():
    gt, preds = make_error_scene(3)
    c = to_columns(gt, preds)
    m = confusion_matrix(**c).matrix
    counts = np.bincount(c["gt_category"][~c["gt_crowd"]], minlength=c["num_categories"])
    assert m[:-1].sum(axis=1).tolist() == counts.tolist()
