"""VOC07/VOC12 parity with a plain reference of the devkit's rules, on seeded random data.

Scenes hold integer boxes (so IoU lands exactly on 0.5 under the +1-pixel
convention), difficult objects, duplicate detections, score ties and
images without objects.  APs must be equal bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, ImageTable, assemble

from .voc_reference import voc_eval_reference

CLASSES = ["cat", "dog", "car", "person"]


def voc_scene(seed: int, n_images: int = 40, classes=tuple(CLASSES)):
    """Ground truths of ``classes[:-1]``, detections of any of ``classes``."""
    rng = np.random.default_rng(seed)
    gts, dets = [], []
    for i in range(n_images):
        img = f"{i:06d}"
        for _ in range(int(rng.integers(0, 6))):
            x1, y1 = int(rng.integers(0, 200)), int(rng.integers(0, 200))
            w, h = int(rng.integers(0, 60)), int(rng.integers(0, 60))
            box = [x1, y1, x1 + w, y1 + h]
            gts.append((img, str(rng.choice(classes[:-1])), box, bool(rng.random() < 0.15)))
        here = [g for g in gts if g[0] == img]
        for _ in range(int(rng.integers(0, 8))):
            if here and rng.random() < 0.75:
                g = here[int(rng.integers(len(here)))]
                j = rng.integers(-4, 5, size=4)
                box = [g[2][0] + j[0], g[2][1] + j[1], g[2][2] + j[2], g[2][3] + j[3]]
                box = [
                    min(box[0], box[2]),
                    min(box[1], box[3]),
                    max(box[0], box[2]),
                    max(box[1], box[3]),
                ]
                cls = g[1] if rng.random() < 0.9 else str(rng.choice(classes))
            else:
                x1, y1 = int(rng.integers(0, 200)), int(rng.integers(0, 200))
                box = [x1, y1, x1 + int(rng.integers(1, 60)), y1 + int(rng.integers(1, 60))]
                cls = str(rng.choice(classes))
            if rng.random() < 0.2 and here:  # exactly half the area of a ground truth: IoU 0.5
                g = here[0]
                x1, y1, x2, y2 = g[2]
                hgt = y2 - y1 + 1
                if hgt % 2 == 0:
                    box = [x1, y1, x2, y1 + hgt // 2 - 1]
                    cls = g[1]
            dets.append((img, cls, round(float(rng.random()), 1), [float(v) for v in box]))
    return gts, dets, [f"{i:06d}" for i in range(n_images)]


def to_datasets(gts, dets, images, classes=tuple(CLASSES)):
    img_index = {k: i for i, k in enumerate(images)}
    table = ImageTable.build(images)
    cats = CategoryTable(tuple(classes), tuple(classes))
    ci = {c: i for i, c in enumerate(classes)}
    gt_ds = assemble(
        source="gt", fmt="test", images=table, categories=cats,
        image_idx=np.array([img_index[g[0]] for g in gts], dtype=np.int64),
        category_idx=np.array([ci[g[1]] for g in gts], dtype=np.int64),
        boxes=np.array([g[2] for g in gts], dtype=float).reshape(-1, 4),
        box_format=BoxFormat.XYXY, ignore=np.array([g[3] for g in gts], dtype=bool),
    )  # fmt: skip
    pred_ds = assemble(
        source="pred", fmt="test", images=table, categories=cats,
        image_idx=np.array([img_index[d[0]] for d in dets], dtype=np.int64),
        category_idx=np.array([ci[d[1]] for d in dets], dtype=np.int64),
        boxes=np.array([d[3] for d in dets], dtype=float).reshape(-1, 4),
        box_format=BoxFormat.XYXY, score=np.array([d[2] for d in dets], dtype=float),
    )  # fmt: skip
    return gt_ds, pred_ds


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
def test_random_scene_matches_devkit_rules(seed, protocol):
    gts, dets, images = voc_scene(seed)
    gt_ds, pred_ds = to_datasets(gts, dets, images)
    r = evaluate(gt_ds, pred_ds, protocol=protocol)
    table = r.per_class.set_index("class")
    aps = []
    for c in CLASSES:
        ref, tp, fp = voc_eval_reference(gts, dets, c, eleven_point=protocol == "voc07")
        got = table.loc[c, "AP"]
        if np.isnan(ref):
            assert np.isnan(got), c
        else:
            aps.append(ref)
            assert got == ref, f"seed {seed} {c}: iou-eval {got!r} != reference {ref!r}"
            assert table.loc[c, "TP"] == int(tp.sum()), c
            assert table.loc[c, "FP"] == int(fp.sum()), c
    # The devkit averages its list of class APs in class-list order.
    assert r.summary["mAP"] == np.mean(aps), (
        f"seed {seed}: {r.summary['mAP']!r} != {np.mean(aps)!r}"
    )


def devkit_map(gts, dets, classes, eleven_point: bool) -> float:
    """The devkit's mAP: ``np.mean`` of the class APs in its class list's order."""
    aps = [voc_eval_reference(gts, dets, c, eleven_point=eleven_point)[0] for c in classes]
    return float(np.mean([a for a in aps if not np.isnan(a)]))


@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
def test_map_bit_exact_on_150_scenes_in_class_list_order(protocol):
    """The class list's order is not alphabetical: summing in another order changes last bits."""
    classes = ["dog", "person", "car", "cat", "bird", "bus"]
    mismatched = []
    for seed in range(2000, 2150):
        rng = np.random.default_rng(seed)
        gts, dets, images = voc_scene(seed, int(rng.integers(5, 30)), classes)
        gt_ds, pred_ds = to_datasets(gts, dets, images, classes)
        got = evaluate(gt_ds, pred_ds, protocol=protocol).summary["mAP"]
        ref = devkit_map(gts, dets, classes, protocol == "voc07")
        if got != ref:
            mismatched.append((seed, got, ref))
    assert not mismatched, f"{len(mismatched)} of 150 differ, e.g. {mismatched[:3]}"


def test_map_follows_the_names_order_of_a_voc_folder(tmp_path):
    """--names gives the class list; the mean is summed in its order."""
    from iou_eval import load
    from iou_eval.data.reconcile import align
    from iou_eval.protocols.voc import mean_ap

    names = ["dog", "cat", "car"]
    for i, cls in enumerate(["car", "cat", "dog", "car"]):
        (tmp_path / f"{i}.xml").write_text(
            f"<annotation><filename>{i}.jpg</filename><object><name>{cls}</name>"
            "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>9</xmax><ymax>9</ymax></bndbox>"
            "</object></annotation>"
        )
    gt = load(str(tmp_path), "gt", names=names)
    a = align(gt, gt)
    order = [a.gt.categories.names[i] for i in a.class_order]
    assert order == names
    ap = np.array([0.1, 0.7, 0.2])  # by canonical position: car, cat, dog
    assert mean_ap(ap, a.class_order) == np.mean([0.2, 0.7, 0.1])


@pytest.mark.parametrize("seed", range(5))
def test_continuous_pixels_and_other_threshold(seed):
    gts, dets, images = voc_scene(seed + 50)
    gt_ds, pred_ds = to_datasets(gts, dets, images)
    r = evaluate(gt_ds, pred_ds, protocol="voc12", iou_thr=0.7, pixel_convention="continuous")
    table = r.per_class.set_index("class")
    for c in CLASSES[:-1]:
        ref, _, _ = voc_eval_reference(gts, dets, c, thr=0.7, plus_one=False)
        got = table.loc[c, "AP"]
        assert (np.isnan(ref) and np.isnan(got)) or got == ref, c


def test_iou_exactly_at_threshold_is_a_miss():
    """GT [0,0,9,9] has 100 px (+1 convention); prediction [0,0,9,4] has 50: IoU exactly 0.5."""
    gts = [("a", "cat", [0, 0, 9, 9], False)]
    dets = [("a", "cat", 0.9, [0.0, 0.0, 9.0, 4.0])]
    gt_ds, pred_ds = to_datasets(gts, dets, ["a"])
    r = evaluate(gt_ds, pred_ds, protocol="voc12")
    row = r.per_class.set_index("class").loc["cat"]
    assert (row["TP"], row["FP"], row["AP"]) == (0, 1, 0.0)
    r = evaluate(gt_ds, pred_ds, protocol="voc12", iou_thr=0.49)
    row = r.per_class.set_index("class").loc["cat"]
    assert (row["TP"], row["FP"], row["AP"]) == (1, 0, 1.0)


def test_duplicate_on_taken_ground_truth_is_false_positive_even_if_another_is_free():
    """The devkit takes the best-overlap GT whether or not it is taken.

    GT A = [0,0,9,9], GT B = [5,0,14,9].  Detection 1 = A (score .9) takes A.
    Detection 2 = [1,0,10,9] (score .8) overlaps A most (IoU 0.818) and B
    0.538: it is a duplicate on A, not a match of B.
    """
    gts = [("a", "cat", [0, 0, 9, 9], False), ("a", "cat", [5, 0, 14, 9], False)]
    dets = [("a", "cat", 0.9, [0.0, 0.0, 9.0, 9.0]), ("a", "cat", 0.8, [1.0, 0.0, 10.0, 9.0])]
    gt_ds, pred_ds = to_datasets(gts, dets, ["a"])
    row = evaluate(gt_ds, pred_ds, protocol="voc12").per_class.set_index("class").loc["cat"]
    assert (row["TP"], row["FP"], row["FN"]) == (1, 1, 1)


def test_hit_on_difficult_is_ignored_and_difficult_not_counted():
    gts = [("a", "cat", [0, 0, 9, 9], True), ("a", "cat", [50, 50, 59, 59], False)]
    dets = [("a", "cat", 0.9, [0.0, 0.0, 9.0, 9.0]), ("a", "cat", 0.8, [50.0, 50.0, 59.0, 59.0])]
    gt_ds, pred_ds = to_datasets(gts, dets, ["a"])
    row = evaluate(gt_ds, pred_ds, protocol="voc12").per_class.set_index("class").loc["cat"]
    assert (row["gt"], row["TP"], row["FP"], row["AP"]) == (1, 1, 0, 1.0)


def test_tied_scores_keep_input_order():
    """Two tied detections on one GT: the first in input order is the TP."""
    gts = [("a", "cat", [0, 0, 9, 9], False), ("b", "cat", [0, 0, 9, 9], False)]
    dets = [("b", "cat", 0.5, [30.0, 30.0, 39.0, 39.0]), ("a", "cat", 0.5, [0.0, 0.0, 9.0, 9.0])]
    gt_ds, pred_ds = to_datasets(gts, dets, ["a", "b"])
    r = evaluate(gt_ds, pred_ds, protocol="voc12")
    # FP first then TP: precision 1/2 at recall 1/2 -> AP 0.25.
    assert r.per_class.set_index("class").loc["cat", "AP"] == 0.25


@pytest.mark.parametrize("seed", range(2200, 2210))
def test_bootstrap_replicate_of_all_images_gives_the_same_map(seed):
    """One mAP function serves the summary and the replicates: the same bits."""
    classes = ["dog", "person", "car", "cat", "bird", "bus"]
    gts, dets, images = voc_scene(seed, 25, classes)
    gt_ds, pred_ds = to_datasets(gts, dets, images, classes)
    r = evaluate(gt_ds, pred_ds, protocol="voc12")
    summary, ap = r.primary.evaluation.replicate(np.ones(len(images), dtype=np.int64))
    assert summary["mAP"] == r.summary["mAP"] == devkit_map(gts, dets, classes, False)
