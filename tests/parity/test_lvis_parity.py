"""``--protocol lvis`` against lvis-api 0.5.3's ``LVISEval``: whole arrays and the summary.

Seeded federated scenes (:mod:`.lvis_scenes`) hold every rule at once:
negative and not-exhaustive categories, results on unlisted categories and
on a category the ground truth lacks, more than 300 results on an image
with scores tied across the cut, ignore and crowd flags, zero areas, an
annotation id 0; others leave a frequency group empty or score masks.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging

import numpy as np
import pytest

from iou_eval import evaluate

from .lvis_scenes import make_lvis_scene


@pytest.fixture(scope="module")
def lvis_eval():
    """lvis-api's ``LVISEval``, importable under numpy 2 (it still spells ``np.float``)."""
    if not hasattr(np, "float"):
        np.float = float  # type: ignore[attr-defined]
    lvis = pytest.importorskip("lvis")
    logging.getLogger("lvis").setLevel(logging.ERROR)
    return lvis.LVISEval


# lvis-api's result keys -> ours (CONVENTIONS: AR300, ARs, ARm, ARl).
KEYS = {"AR@300": "AR300", "ARs@300": "ARs", "ARm@300": "ARm", "ARl@300": "ARl"}


def run_lvis_api(lvis_eval, gt_path: str, res_path: str, iou_type: str = "bbox"):
    with contextlib.redirect_stdout(io.StringIO()):
        e = lvis_eval(gt_path, res_path, iou_type)
        e.run()
    return e


def assert_same(ours, ref, label: str) -> None:
    """Whole precision and recall arrays, then every summary number, bit for bit."""
    r = ours.primary
    assert r.protocol.name == "lvis", label
    for name in ("precision", "recall"):
        got = getattr(r.arrays, name)[..., 0]
        want = ref.eval[name]
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[:5].tolist()
            pytest.fail(f"{label}: {name} differs at {bad}: ours {got[tuple(bad[0])]} "
                        f"lvis-api {want[tuple(bad[0])]}")  # fmt: skip
    for key, value in ref.results.items():
        want = None if value == -1 else float(value)
        got = r.summary[KEYS.get(key, key)]
        assert got == want, f"{label}: {key} ours {got!r} lvis-api {want!r}"
    assert list(r.summary) == [KEYS.get(k, k) for k in ref.results], label


def _files(write_json, gt, res):
    return write_json("gt.json", gt), write_json("res.json", res)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_federated_scene_matches_lvis_api(seed, write_json, lvis_eval):
    gt, res = make_lvis_scene(seed)
    files = _files(write_json, gt, res)
    ours = evaluate(*files)
    assert_same(ours, run_lvis_api(lvis_eval, *files), f"seed {seed}")


@pytest.mark.parametrize(("seed", "groups"), [(10, "cf"), (11, "rf"), (12, "rc"), (13, "f")])
def test_empty_frequency_groups_are_undefined(seed, groups, write_json, lvis_eval):
    gt, res = make_lvis_scene(seed, groups=groups)
    files = _files(write_json, gt, res)
    ours = evaluate(*files)
    assert_same(ours, run_lvis_api(lvis_eval, *files), f"groups {groups}")
    for g in "rcf":
        assert (ours.summary[f"AP{g}"] is None) == (g not in groups)


@pytest.mark.parametrize("seed", [20, 21])
def test_cap_of_300_results_per_image_with_ties_at_the_cut(seed, write_json, lvis_eval):
    gt, res = make_lvis_scene(seed, n_images=6, crowded=3, quirks=False)
    per_image = np.bincount([r["image_id"] for r in res])
    assert (per_image > 300).sum() == 3
    files = _files(write_json, gt, res)
    ours = evaluate(*files)
    assert_same(ours, run_lvis_api(lvis_eval, *files), f"cap, seed {seed}")
    scored = ours.primary.predictions
    assert np.bincount(scored.image_idx).max() <= 300


@pytest.mark.parametrize("seed", [30, 31])
def test_masks_match_lvis_api_segm(seed, write_json, lvis_eval):
    from pycocotools import mask as mask_utils

    gt, res = make_lvis_scene(seed, n_images=10, crowded=1)
    for r in res:  # a mask per result: its own box as a polygon, compressed
        x, y, w, h = r["bbox"]
        poly = [x, y, x + w, y, x + w, y + h * 0.7, x, y + h]
        rle = mask_utils.frPyObjects([poly], 96, 128)[0]
        r["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
    files = _files(write_json, gt, res)
    ours = evaluate(*files, iou_type="segm")
    assert_same(ours, run_lvis_api(lvis_eval, *files, "segm"), f"segm, seed {seed}")


def test_results_without_boxes_take_their_mask_area(write_json, lvis_eval):
    from pycocotools import mask as mask_utils

    gt, res = make_lvis_scene(40, n_images=8, crowded=0)
    for r in res:
        x, y, w, h = r.pop("bbox")
        rle = mask_utils.frPyObjects([[x, y, x + w, y, x + w, y + h, x, y + h * 0.5]], 96, 128)[0]
        r["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
    files = _files(write_json, gt, res)
    ours = evaluate(*files, iou_type="segm")
    assert_same(ours, run_lvis_api(lvis_eval, *files, "segm"), "segm without boxes")


def test_parts_and_workers_give_the_one_process_result(write_json, monkeypatch):
    """Category parts (forked or bounded) merge to the same arrays, point and replicates."""
    import iou_eval.protocols.partition
    import iou_eval.protocols.point_parts

    gt, res = make_lvis_scene(50, n_images=30, crowded=2)
    files = _files(write_json, gt, res)
    one = evaluate(*files, workers=1, keep_accumulation=True)
    monkeypatch.setattr(iou_eval.protocols.partition, "PARALLEL_MIN_PREDICTIONS", 0)
    monkeypatch.setattr(iou_eval.protocols.point_parts, "PART_PREDICTIONS", 200)
    for kwargs in ({"workers": 2, "keep_accumulation": True}, {"workers": 1}, {"workers": 3}):
        other = evaluate(*files, **kwargs)
        assert other.to_dict() == one.to_dict(), kwargs
        a, b = other.primary.evaluation.point, one.primary.evaluation.point
        for name in ("dt_rows", "tp", "fp", "match_gt", "match_iou", "gt_counts"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (kwargs, name)


def test_replicate_of_every_image_once_is_the_summary(write_json):
    gt, res = make_lvis_scene(60)
    ours = evaluate(*_files(write_json, gt, res), keep_accumulation=True)
    ev = ours.primary.evaluation
    summary, class_ap = ev.replicate(np.ones(len(gt["images"]), dtype=np.int64))
    assert summary == ours.summary
    assert list(summary) == list(ours.summary)
    ap = np.asarray(ours.per_class["AP"], dtype=np.float64)[: len(class_ap)]
    assert np.array_equal(class_ap, ap, equal_nan=True)


def test_image_subset_by_weights_equals_lvis_api_on_those_images(write_json, lvis_eval):
    """A slice's summary (weights 0/1) is lvis-api's with params.img_ids set."""
    gt, res = make_lvis_scene(61)
    files = _files(write_json, gt, res)
    ours = evaluate(*files, keep_accumulation=True)
    keep = [i["id"] for i in gt["images"] if i["id"] % 2]
    w = np.array([1 if i in keep else 0 for i in sorted(i["id"] for i in gt["images"])])
    summary, _ = ours.primary.evaluation.replicate(w)
    with contextlib.redirect_stdout(io.StringIO()):
        e = lvis_eval(*files, "bbox")
        e.params.img_ids = keep
        e.run()
    for key, value in e.results.items():
        assert summary[KEYS.get(key, key)] == (None if value == -1 else float(value)), key


def test_counts_leave_out_what_lvis_drops(write_json):
    """Results lvis-api never evaluates are neither true nor false positives in the tables."""
    gt, res = make_lvis_scene(70)
    ours = evaluate(*_files(write_json, gt, res))
    classes = ours.per_class
    k = len(gt["categories"])
    assert classes["FP"].iloc[k:].sum() == 0  # the category only the results have
    assert ours.per_class["predictions"].sum() < len(res)
    # Every evaluated result is on a labelled or negative category of its image.
    cols = ours.primary.predictions
    alignment = ours.alignment
    cat_ids = [alignment.gt.categories.ids[c] for c in cols.category_idx]
    img_ids = [alignment.gt.images.ids[i] for i in cols.image_idx]
    by_id = {i["id"]: i for i in gt["images"]}
    labelled = {(a["image_id"], a["category_id"]) for a in gt["annotations"] if a["area"] > 0}
    for i, c in zip(img_ids, cat_ids, strict=True):
        assert (i, c) in labelled or c in by_id[i]["neg_category_ids"]


def test_no_results_at_all_gives_zero_ap_not_a_crash(write_json):
    """lvis-api itself fails on an empty results list; every category with ground truth has AP 0."""
    gt, _ = make_lvis_scene(80)
    ours = evaluate(*_files(write_json, gt, []))
    assert ours.summary["AP"] == 0.0
    assert ours.summary["AR300"] == 0.0


def test_results_file_order_decides_ties(write_json, lvis_eval):
    """Equal scores keep file order in the cap and in the ranking; reversing the file may differ."""
    gt, res = make_lvis_scene(90, crowded=2)
    files = _files(write_json, gt, res[::-1])
    assert_same(evaluate(*files), run_lvis_api(lvis_eval, *files), "reversed file")


def test_lvis_api_sees_the_same_file(write_json, lvis_eval):
    """A sanity check of the scenes themselves: every rule actually occurs."""
    gt, res = make_lvis_scene(0)
    files = _files(write_json, gt, res)
    ref = run_lvis_api(lvis_eval, *files)
    assert any(i["neg_category_ids"] for i in gt["images"])
    assert any(i["not_exhaustive_category_ids"] for i in gt["images"])
    assert any(a["area"] == 0 for a in gt["annotations"])
    assert any(a.get("ignore") for a in gt["annotations"])
    assert any(a["id"] == 0 for a in gt["annotations"])
    assert max(np.bincount([r["image_id"] for r in res])) > 300
    assert any(r["bbox"][2] == 0 for r in res)
    assert {c["frequency"] for c in gt["categories"]} == {"r", "c", "f"}
    assert ref.results["APr"] != -1
    json.dumps(ref.results)  # plain numbers


def test_acceptance_lvis_ground_truth_with_its_own_objects(tmp_path, lvis_eval):
    """Case 13's LVIS v0.5 ground truth (1,230 categories) against lvis-api, with jittered
    copies of its objects as results (its own detections are not published with it)."""
    from ..acceptance.helpers import case_dir

    gt = case_dir("13_fce_lvis_val_100") / "lvis_val_100.json"
    doc = json.loads(gt.read_text())
    rng = np.random.default_rng(13)
    res = []
    for a in doc["annotations"]:
        x, y, w, h = a["bbox"]
        j = rng.normal(0, 0.08, 4) * [w, h, w, h]
        res.append({"image_id": a["image_id"], "category_id": a["category_id"],
                    "bbox": [x + j[0], y + j[1], max(w + j[2], 1.0), max(h + j[3], 1.0)],
                    "score": round(float(rng.random()), 2)})  # fmt: skip
    cats = [c["id"] for c in doc["categories"]]
    for img in doc["images"]:  # negatives and unlisted categories too
        for c in rng.choice(cats, 40).tolist():
            res.append({"image_id": img["id"], "category_id": c, "bbox": [10, 10, 50, 40],
                        "score": round(float(rng.random()), 2)})  # fmt: skip
    preds = tmp_path / "res.json"
    preds.write_text(json.dumps(res))
    ours = evaluate(str(gt), str(preds))
    assert_same(ours, run_lvis_api(lvis_eval, str(gt), str(preds)), "case 13 ground truth")


def test_sparse_pair_lookup_gives_the_same_numbers(write_json, lvis_eval, monkeypatch):
    """Past DENSE_PAIRS (image, category) pairs, membership is searched, not looked up."""
    import iou_eval.protocols.lvis

    monkeypatch.setattr(iou_eval.protocols.lvis, "DENSE_PAIRS", 0)
    gt, res = make_lvis_scene(3)
    files = _files(write_json, gt, res)
    assert_same(evaluate(*files), run_lvis_api(lvis_eval, *files), "sparse lookup")


def test_ground_truth_without_annotations_is_undefined_everywhere(write_json, lvis_eval):
    """One image, its only category verified absent, one result on it: lvis-api's -1 everywhere."""
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100, "neg_category_ids": [1],
                    "not_exhaustive_category_ids": []}],
        "annotations": [],
        "categories": [{"id": 1, "name": "cat", "frequency": "r"},
                       {"id": 2, "name": "dog", "frequency": "f"}],
    }  # fmt: skip
    res = [{"image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10], "score": 0.9}]
    files = _files(write_json, gt, res)
    for workers in (1, 2):
        ours = evaluate(*files, workers=workers)
        assert_same(ours, run_lvis_api(lvis_eval, *files), f"workers {workers}")
        assert set(ours.summary.values()) == {None}


def test_federated_view_holds_only_the_columns_scoring_reads(write_json, lvis_eval):
    """The evaluated results' copy: geometry, image, category, score, one area column; no ids."""
    from iou_eval.api import align, load
    from iou_eval.protocols.lvis import federated_view

    gt, res = make_lvis_scene(80)
    files = _files(write_json, gt, res)
    alignment = align(load(files[0]), load(files[1], role="pred"))
    pred = federated_view(alignment).alignment.pred
    assert 0 < len(pred) < len(alignment.pred)
    assert alignment.pred.area is alignment.pred.bbox_area
    assert pred.area is pred.bbox_area
    for name in ("ann_id", "is_crowd", "ignore", "origin", "origin_file"):
        column = getattr(pred, name)
        assert column.strides == (0,) and not column.any(), name
    # and the numbers are still lvis-api's
    assert_same(evaluate(*files), run_lvis_api(lvis_eval, *files), "seed 80")
