"""The streaming Evaluator under the protocols and iou types beyond COCO boxes and masks.

Each scene's reference is :func:`iou_eval.evaluate` on the files it stands
for, written by :mod:`.stream_helpers` (plus, here, the protocol's own
fields added to those files as a user's conversion would add them).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from iou_eval import Evaluator, InputError, evaluate
from iou_eval.errors import UsageError

from .stream_helpers import assert_same, coco_files, scene
from .test_streaming import stream

# Each test on the compiled parts and on numpy (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("kernel_path")

# ----------------------------------------------------------------------- LVIS

FREQ = {0: "f", 1: "c", 2: "r", 3: "r"}


def lvis_scene(seed: int, n_images: int = 9):
    """A scene of 4 classes, images of up to 340 predictions (scores in steps of 0.05: ties
    at the 300th), and LVIS lists on the targets: ``neg_category_ids`` on every other
    image (classes absent there), ``not_exhaustive_category_ids`` on every third."""
    preds, targets = scene(seed, n_images=n_images, per_image=12, classes=4)
    rng = np.random.default_rng(seed)
    for i, (p, t) in enumerate(zip(preds, targets, strict=True)):
        if i % 3 == 1:  # many false positives: more than 300 results on the image
            extra = 330
            xy = rng.uniform(0, 40, (extra, 2))
            p["boxes"] = np.vstack([p["boxes"], np.column_stack([xy, xy + 6.0])])
            p["scores"] = np.r_[p["scores"], np.round(rng.uniform(0, 1, extra) * 20) / 20]
            p["labels"] = np.r_[p["labels"], rng.integers(0, 4, extra)]
        present = set(t["labels"].tolist())
        if i % 2 == 0:
            t["neg_category_ids"] = [c for c in range(4) if c not in present][:2]
        if i % 3 == 0 and present:
            t["not_exhaustive_category_ids"] = np.array(sorted(present)[:1])
    return preds, targets


def lvis_files(preds, targets, tmp_path, frequency=FREQ):
    """The COCO files of the scene, with the LVIS lists on the images and the frequencies."""
    gt_path, res_path = coco_files(preds, targets, tmp_path, name="lvis")
    with open(gt_path) as fh:
        gt = json.load(fh)
    by_id = {int(t["image_id"]): t for t in targets}
    for im in gt["images"]:
        for key in ("neg_category_ids", "not_exhaustive_category_ids"):
            if key in by_id[im["id"]]:
                im[key] = [int(c) for c in by_id[im["id"]][key]]
    for cat in gt["categories"]:
        if cat["id"] in frequency:
            cat["frequency"] = frequency[cat["id"]]
    with open(gt_path, "w") as fh:
        json.dump(gt, fh)
    return gt_path, res_path


def test_lvis_batches_give_the_files_numbers_and_keep_300_per_image(tmp_path):
    preds, targets = lvis_scene(21)
    paths = lvis_files(preds, targets, tmp_path)
    files = evaluate(*paths, protocol="lvis")
    assert files.results[0].summary["APr"] is not None  # the frequencies are read
    rng = np.random.default_rng(1)
    for sizes, order in [((1,), None), ((4, 2), rng.permutation(9)), ((9,), None)]:
        ev = stream(preds, targets, sizes, order, protocol="lvis", class_frequencies=FREQ)
        assert_same(ev.compute(), files, paths)
    kept = np.bincount(ev._state.pred.columns()["image"])
    assert kept.max() == 300 and len(ev._state.pred) < sum(len(p["labels"]) for p in preds)


def test_lvis_lists_decide_the_numbers(tmp_path):
    """Without the lists the same boxes score otherwise: the lists are read, not dropped."""
    preds, targets = lvis_scene(22)
    bare = [{k: v for k, v in t.items() if "category_ids" not in k} for t in targets]
    with_lists = stream(preds, targets, (4,), protocol="lvis").compute()
    without = stream(preds, bare, (4,), protocol="lvis").compute()
    assert with_lists.results[0].summary != without.results[0].summary


@pytest.mark.parametrize("protocol", ["auto", "lvis,coco"])
def test_auto_and_lvis_beside_coco(protocol, tmp_path):
    preds, targets = lvis_scene(23)
    paths = lvis_files(preds, targets, tmp_path)
    ev = stream(preds, targets, (5,), protocol=protocol, class_frequencies=FREQ)
    result = ev.compute()
    assert_same(result, evaluate(*paths, protocol=protocol), paths)
    assert "APr" in result.results[0].summary  # auto chose LVIS for an LVIS stream
    assert ev._cap == (300, True)  # COCO may score it too: 300 per image and class


def test_lvis_state_bytes_and_shards(tmp_path):
    preds, targets = lvis_scene(24)
    names = ["car", "person", "ox", "yak"]
    kw = {"protocol": "lvis", "class_names": names, "class_frequencies": ["f", "c", "r", "r"]}
    whole = stream(preds, targets, (9,), **kw)
    payload = whole.state_bytes()
    back = Evaluator.from_state_bytes(payload)
    assert back.state_bytes() == payload
    assert_same(back.compute(), whole.compute())
    shards = [[1, 5], [0, 2, 3, 4], [6, 7, 8]]
    parts = [stream([preds[i] for i in s], [targets[i] for i in s], (2,), **kw) for s in shards]
    assert not parts[0]._state.lists and parts[1]._state.lists  # a shard without LVIS lists
    for perm in itertools.permutations(range(3)):
        merged = Evaluator(**kw)
        for j in perm:
            merged.merge(parts[j].state_bytes())
        assert_same(merged.compute(), whole.compute())
    gt, _ = whole.to_coco()
    assert [c.get("frequency") for c in gt["categories"]] == ["f", "c", "r", "r"]
    assert gt["images"][0]["neg_category_ids"] == targets[0]["neg_category_ids"]


def test_a_bad_lvis_list_names_the_image_and_changes_nothing():
    preds, targets = lvis_scene(25, n_images=3)
    ev = Evaluator(protocol="lvis", class_names=["a", "b", "c", "d"])
    ev.update(preds[:1], targets[:1])
    before = ev.state_bytes()
    bad = dict(targets[2], neg_category_ids=[1, 9])
    with pytest.raises(InputError, match=r"targets\[1\]\.neg_category_ids\[1\]: image 114: "):
        ev.update(preds[1:3], [targets[1], bad])
    assert ev.state_bytes() == before


@pytest.mark.parametrize(
    "frequencies", [{0: "x"}, ["f"], {"car": "f"}], ids=["letter", "length", "label"]
)
def test_class_frequencies_are_checked(frequencies):
    with pytest.raises(UsageError, match="class_frequencies"):
        Evaluator(protocol="lvis", class_names=["a", "b"], class_frequencies=frequencies)


# -------------------------------------------------------------- Boundary IoU


@pytest.mark.parametrize(
    "kw",
    [
        {"iou_type": "boundary"},
        {"iou_type": "segm,boundary", "boundary_dilation": 0.05},
        {"iou_type": "bbox,boundary", "max_dets": [1, 2, 3]},
    ],
    ids=["boundary", "segm+boundary-0.05", "bbox+boundary-capped"],
)
def test_boundary_batches_give_the_files_numbers(kw, tmp_path):
    """With max_dets 1,2,3 predictions are dropped at update(): the notes still count all."""
    preds, targets = scene(31, n_images=8, masks=True, per_image=16)
    paths = coco_files(preds, targets, tmp_path, segm=True)
    files = evaluate(*paths, **kw)
    for sizes in [(1,), (3, 5)]:
        ev = stream(preds, targets, sizes, **kw)
        assert_same(ev.compute(), files, paths)
    assert ev._reader.masks  # masks read for the boundaries, kept as RLE
    dropped = ev._state.given - len(ev._state.pred)
    assert (dropped > 0) == ("max_dets" in kw)


def test_boundary_under_lvis(tmp_path):
    preds, targets = lvis_scene(32, n_images=6)
    h, w = 48, 64
    rng = np.random.default_rng(32)
    for p, t in zip(preds, targets, strict=True):  # masks: boxes filled, a few pixels flipped
        for d in (p, t):
            m = np.zeros((len(d["labels"]), h, w), bool)
            for k, (x1, y1, x2, y2) in enumerate(np.asarray(d["boxes"])):
                m[k, int(max(y1, 0)) : int(np.ceil(y2)), int(max(x1, 0)) : int(np.ceil(x2))] = True
            d["masks"] = m ^ (rng.uniform(size=m.shape) < 0.02)
    gt_path, res_path = coco_files(preds, targets, tmp_path, segm=True, name="lvis")
    with open(gt_path) as fh:
        gt = json.load(fh)
    by_id = {int(t["image_id"]): t for t in targets}
    for im in gt["images"]:
        if "neg_category_ids" in by_id[im["id"]]:
            im["neg_category_ids"] = [int(c) for c in by_id[im["id"]]["neg_category_ids"]]
    with open(gt_path, "w") as fh:
        json.dump(gt, fh)
    kw = {"iou_type": "boundary", "protocol": "lvis"}
    files = evaluate(gt_path, res_path, **kw)
    targets = [{k: v for k, v in t.items() if k != "not_exhaustive_category_ids"} for t in targets]
    assert_same(stream(preds, targets, (4,), **kw).compute(), files, (gt_path, res_path))


# ---------------------------------------------------------------- Open Images


def test_openimages_batches_give_the_files_numbers(tmp_path):
    """``iscrowd`` is a group-of box; the verified labels and the hierarchy are files, as for
    evaluate(); every prediction is kept (the challenge's order of equal scores is numpy's
    argsort over all of an image's predictions of a class)."""
    preds, targets = scene(41, n_images=10, classes=4, per_image=12)
    paths = coco_files(preds, targets, tmp_path)
    labels, tree = tmp_path / "labels.csv", tmp_path / "hierarchy.json"
    labels.write_text("ImageID,LabelName,Confidence\n100,3,0\n107,2,1\n114,1,0\n")
    tree.write_text(json.dumps({"LabelName": "root", "Subcategory": [
        {"LabelName": "0", "Subcategory": [{"LabelName": "1"}, {"LabelName": "2"}]},
        {"LabelName": "3"}]}))  # fmt: skip
    files_kw = {"oi_image_labels": str(labels), "oi_hierarchy": str(tree)}
    for kw in [{"protocol": "openimages"}, {"protocol": "openimages,coco", **files_kw}]:
        files = evaluate(*paths, **kw)
        for sizes in [(1,), (4, 3)]:
            ev = stream(preds, targets, sizes, **kw)
            assert_same(ev.compute(), files, paths)
        assert len(ev._state.pred) == sum(len(p["labels"]) for p in preds)
    assert any(t["iscrowd"].any() for t in targets)  # group-of boxes in the scene


def test_openimages_group_of_weight_is_a_keyword_of_batches_as_of_files(tmp_path):
    preds, targets = scene(41, n_images=10, classes=4, per_image=12)
    paths = coco_files(preds, targets, tmp_path)
    kw = {"protocol": "openimages", "oi_group_of_weight": 0.5}
    files = evaluate(*paths, **kw)
    assert files.summary != evaluate(*paths, protocol="openimages").summary
    assert_same(stream(preds, targets, (4, 3), **kw).compute(), files, paths)


# -------------------------------------------------------------- oriented boxes


def oriented_scene(seed: int, n_images: int = 8, unit: str = "rad"):
    """The scene with ``obb`` ``[N, 5]`` (``cx, cy, w, h, angle``, Ultralytics' ``xywhr``):
    each box's centre and size, turned by a random angle in ``unit``."""
    preds, targets = scene(seed, n_images=n_images, classes=3)
    rng = np.random.default_rng(seed)
    for d in preds + targets:
        b = np.asarray(d["boxes"], dtype=np.float64).reshape(-1, 4)
        angle = rng.uniform(-1.5, 1.5, len(b)) * (180 / np.pi if unit == "deg" else 1.0)
        centre, size = (b[:, :2] + b[:, 2:]) / 2, np.maximum(b[:, 2:] - b[:, :2], 1.0)
        d["obb"] = np.column_stack([centre, size, angle])
    return preds, targets


def oriented_tables(preds, targets, tmp_path):
    """The scene as two CSV tables (``image, label, [score,] cx, cy, w, h, angle``); an image
    without ground truth is declared by a row with empty cells, as tables declare it."""
    gt_rows, pred_rows = (
        ["image,label,cx,cy,w,h,angle,iscrowd"],
        ["image,label,score,cx,cy,w,h,angle"],
    )
    for i in sorted(range(len(targets)), key=lambda i: targets[i]["image_id"]):
        t, p, image = targets[i], preds[i], targets[i]["image_id"]
        if not len(t["labels"]):
            gt_rows.append(f"{image},,,,,,,")
        for r in range(len(t["labels"])):
            box = ",".join(repr(float(v)) for v in t["obb"][r])
            gt_rows.append(f"{image},{int(t['labels'][r])},{box},{int(t['iscrowd'][r])}")
        for r in range(len(p["labels"])):
            box = ",".join(repr(float(v)) for v in p["obb"][r])
            pred_rows.append(f"{image},{int(p['labels'][r])},{float(p['scores'][r])!r},{box}")
    paths = (tmp_path / "obb_gt.csv", tmp_path / "obb_preds.csv")
    for path, rows in zip(paths, (gt_rows, pred_rows), strict=True):
        path.write_text("\n".join(rows) + "\n")
    return tuple(str(p) for p in paths)


@pytest.mark.parametrize(
    "kw",
    [
        {"iou_type": "obb"},
        {"iou_type": "obb", "protocol": "dota"},
        {"iou_type": "bbox,obb", "protocol": "coco,dota", "angle_unit": "deg"},
        {"iou_type": "obb", "max_dets": [1, 2, 3]},
    ],
    ids=["obb-coco", "obb-dota", "bbox+obb-deg", "obb-capped"],
)
def test_oriented_batches_give_the_tables_numbers(kw, tmp_path):
    """Boxes turned about their centres; bbox scores the boxes enclosing them, as for files."""
    preds, targets = oriented_scene(61, unit=kw.get("angle_unit", "rad"))
    paths = oriented_tables(preds, targets, tmp_path)
    files = evaluate(*paths, **kw)
    for sizes in [(1,), (3, 2)]:
        ev = stream(preds, targets, sizes, **kw)
        assert_same(ev.compute(), files, paths)
    assert any(files.results[0].summary.values())  # boxes are found
    bare = [{k: v for k, v in p.items() if k != "boxes"} for p in preds]  # obb alone suffices
    assert_same(stream(bare, targets, (8,), **kw).compute(), files, paths)
    assert (ev._state.given > len(ev._state.pred)) == ("max_dets" in kw)


def test_a_flat_oriented_box_names_the_image_and_row():
    preds, targets = oriented_scene(62, n_images=3)
    ev = Evaluator(iou_type="obb")
    flat = preds[1]["obb"].copy()
    flat[1, 3] = 0.0
    with pytest.raises(InputError, match=r"preds\[0\]\.obb\[1\]: image 107: obb needs a positive"):
        ev.update([dict(preds[1], obb=flat)], targets[1:2])
    with pytest.raises(InputError, match=r"targets\[0\]\.obb: image 107: obb must be \["):
        ev.update(preds[1:2], [dict(targets[1], obb=targets[1]["obb"][:, :4])])
    assert len(ev) == 0


class FakeOrientedResults:
    """An Ultralytics ``Results`` of an oriented-box model: ``boxes`` None, ``obb`` set."""

    def __init__(self, xywhr, conf, cls):
        self.boxes = None
        self.obb = type("OBB", (), {"xywhr": xywhr, "conf": conf, "cls": cls.astype(np.float32)})


def test_ultralytics_oriented_results(tmp_path):
    preds, targets = oriented_scene(63)
    paths = oriented_tables(preds, targets, tmp_path)
    ev = Evaluator(iou_type="obb")
    ev.update([FakeOrientedResults(p["obb"], p["scores"], p["labels"]) for p in preds], targets)
    assert_same(ev.compute(), evaluate(*paths, iou_type="obb"), paths)


# ------------------------------------------------------------------ keypoints


def keypoint_scene(seed: int, n_images: int = 10, k: int = 17, per_image: int = 8):
    """The scene with ``[N, K, 3]`` keypoints: ground truths' inside their boxes (v 0, 1 or 2,
    unlabelled points at (0, 0) as COCO writes them), predictions' near them (v: a score);
    ``num_keypoints`` on every other image (else counted from the labels)."""
    preds, targets = scene(seed, n_images=n_images, classes=1, per_image=per_image)
    rng = np.random.default_rng(seed)
    for i, (p, t) in enumerate(zip(preds, targets, strict=True)):
        g = len(t["labels"])
        boxes = np.asarray(p["boxes"], dtype=np.float64).reshape(-1, 4)
        xy = boxes[:, None, :2] + rng.uniform(size=(len(boxes), k, 2)) * (
            boxes[:, None, 2:] - boxes[:, None, :2]
        )
        truth = xy[:g] - rng.normal(0, 1.5, (g, k, 2))  # the predictions: near the truth
        v = rng.integers(0, 3, (g, k)).astype(np.float64)
        truth[v == 0] = 0.0
        t["keypoints"] = np.concatenate([truth, v[:, :, None]], axis=2)
        p["keypoints"] = np.concatenate([xy, rng.uniform(0, 1, (len(xy), k, 1))], axis=2)
        if i % 2:
            t["num_keypoints"] = (v > 0).sum(axis=1)
    return preds, targets


def keypoint_files(preds, targets, tmp_path, result_boxes=True):
    """The COCO files of the scene with ``keypoints`` (and ``num_keypoints`` where given)."""
    gt_path, res_path = coco_files(preds, targets, tmp_path, name="kp")
    with open(gt_path) as fh:
        gt = json.load(fh)
    with open(res_path) as fh:
        results = json.load(fh)
    order = sorted(range(len(targets)), key=lambda i: targets[i]["image_id"])
    anns = iter(gt["annotations"])
    res = iter(results)
    for i in order:
        for r in range(len(targets[i]["labels"])):
            ann = next(anns)
            ann["keypoints"] = targets[i]["keypoints"][r].reshape(-1).tolist()
            if "num_keypoints" in targets[i]:
                ann["num_keypoints"] = int(targets[i]["num_keypoints"][r])
        for r in range(len(preds[i]["labels"])):
            rec = next(res)
            rec["keypoints"] = preds[i]["keypoints"][r].reshape(-1).tolist()
            if not result_boxes:
                del rec["bbox"]
    for path, doc in ((gt_path, gt), (res_path, results)):
        with open(path, "w") as fh:
            json.dump(doc, fh)
    return gt_path, res_path


@pytest.mark.parametrize("result_boxes", [True, False], ids=["boxed", "extent"])
def test_keypoint_batches_give_the_files_numbers(result_boxes, tmp_path):
    """Results with boxes, or without (their box: the keypoints' extent, as loadRes takes it);
    more than 20 on some images (pycocotools reads 20 per image and class: the rest dropped)."""
    preds, targets = keypoint_scene(51, per_image=24)
    paths = keypoint_files(preds, targets, tmp_path, result_boxes)
    if not result_boxes:
        preds = [{k: v for k, v in p.items() if k != "boxes"} for p in preds]
    kw = {"iou_type": "keypoints"}
    files = evaluate(*paths, **kw)
    for sizes in [(1,), (3, 4)]:
        ev = stream(preds, targets, sizes, **kw)
        assert_same(ev.compute(), files, paths)
    assert files.results[0].summary["AP"] > 0
    assert ev._state.given > len(ev._state.pred)
    back = Evaluator.from_state_bytes(ev.state_bytes())
    assert_same(back.compute(), files, paths)


def test_keypoints_of_another_k_with_their_sigmas(tmp_path):
    """K = 5 with kpt_sigmas; keypoints beside bbox; a batch of images whose K differs is refused."""
    preds, targets = keypoint_scene(52, n_images=8, k=5)
    paths = keypoint_files(preds, targets, tmp_path)
    kw = {"iou_type": "bbox,keypoints", "kpt_sigmas": "0.05,0.06,0.07,0.08,0.09"}
    assert_same(stream(preds, targets, (4,), **kw).compute(), evaluate(*paths, **kw), paths)
    ev = Evaluator(**kw)
    other_preds, other_targets = keypoint_scene(53, n_images=4, k=7)
    j = next(i for i, t in enumerate(other_targets) if len(t["labels"]))
    mixed = [targets[1], dict(other_targets[j], image_id=999)]
    assert len(targets[1]["labels"])
    with pytest.raises(InputError, match=r"targets\[1\]\.keypoints: image 999: keypoints must be"):
        ev.update([preds[1], other_preds[j]], mixed)
    assert len(ev) == 0


def test_keypoints_missing_or_bad_are_named():
    preds, targets = keypoint_scene(54, n_images=3)
    ev = Evaluator(iou_type="keypoints")
    bad = dict(targets[1], keypoints=targets[1]["keypoints"][:, :, :2])
    with pytest.raises(
        InputError, match=r"targets\[0\]\.keypoints: image 107: keypoints must be \["
    ):
        ev.update(preds[1:2], [bad])
    nan = dict(preds[1], keypoints=preds[1]["keypoints"].copy())
    nan["keypoints"][0, 3, 1] = np.nan
    with pytest.raises(InputError, match=r"preds\[0\]\.keypoints\[0\]: image 107: .*finite"):
        ev.update([nan], targets[1:2])
    no_box = {k: v for k, v in targets[1].items() if k != "boxes"}
    with pytest.raises(InputError, match=r"targets\[0\]\.boxes.*keypoints is scored"):
        ev.update(preds[1:2], [no_box])
    assert len(ev) == 0
