"""Keypoints (``--iou-type keypoints``) against pycocotools' ``COCOeval(iouType="keypoints")``.

Whole arrays (precision, recall, scores) and the 10 statistics on seeded
scenes with every rule that decides the numbers: labelled and unlabelled
ground truths (distances to the enlarged box), ``num_keypoints == 0``
(ignored), crowd regions, areas on the range boundaries, score ties, more
than 20 results per image, results with and without a ``bbox`` (the first
result decides ``loadRes``' branch), integer and float coordinates.
"""

from __future__ import annotations

import contextlib
import copy
import io

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from iou_eval import evaluate
from iou_eval.geometry.keypoints import COCO_SIGMAS

KEYS = ("AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl")


def _person(rng, k: int, cx: float, cy: float, s: float, integer: bool) -> np.ndarray:
    """``[k, 3]`` keypoints around ``(cx, cy)`` at scale ``s``, labels 0/1/2 (0 at (0, 0))."""
    xy = np.column_stack([cx + rng.normal(0, s, k), cy + rng.normal(0, s, k)])
    if integer:
        xy = np.round(xy)
    v = rng.choice([0, 1, 2], size=k, p=[0.3, 0.2, 0.5])
    xy[v == 0] = 0
    return np.column_stack([xy, v])


def _gt_annotation(rng, ann_id: int, img_id: int, cat: int, k: int, integer: bool) -> dict:
    cx, cy, s = rng.uniform(20, 600), rng.uniform(20, 440), rng.uniform(3, 60)
    kp = _person(rng, k, cx, cy, s, integer)
    r = rng.random()
    if r < 0.12:
        kp[:, 2] = 0  # nothing labelled: distances to the enlarged box
        kp[:, :2] = 0
    num = int((kp[:, 2] > 0).sum())
    if rng.random() < 0.08:
        num = 0  # ignored, whatever its labels say
    crowd = int(rng.random() < 0.07)
    w, h = rng.uniform(1, 4 * s), rng.uniform(1, 4 * s)
    bbox = [cx - w / 2, cy - h / 2, w, h]
    if integer:
        bbox = [float(np.round(v)) for v in bbox]
    special = [32.0**2, 96.0**2, 32.0**2 - 1e-9, 96.0**2 + 1e-9, 0.0]
    area = (
        float(w * h * rng.uniform(0.3, 1.0)) if rng.random() < 0.85 else float(rng.choice(special))
    )
    return {
        "id": ann_id, "image_id": img_id, "category_id": cat, "bbox": [float(v) for v in bbox],
        "area": area, "iscrowd": crowd, "num_keypoints": num,
        "keypoints": [float(v) if not integer else int(v) for v in kp.ravel()],
    }  # fmt: skip


def _result(rng, img_id: int, cat: int, k: int, near: dict | None, tie: int, bbox: bool) -> dict:
    if near is not None:
        base = np.asarray(near["keypoints"], dtype=np.float64).reshape(k, 3)[:, :2].copy()
        if (base == 0).all():  # an unlabelled ground truth: aim at its box
            x, y, w, h = near["bbox"]
            base = np.column_stack(
                [rng.uniform(x - w, x + 2 * w, k), rng.uniform(y - h, y + 2 * h, k)]
            )
        xy = base + rng.normal(0, rng.choice([0.5, 2, 6, 20]), size=(k, 2))
    else:
        xy = np.column_stack([rng.uniform(0, 640, k), rng.uniform(0, 480, k)])
    if rng.random() < 0.2:
        xy[rng.random(k) < 0.3] = 0  # undetected points at (0, 0), in the extent all the same
    out = {
        "image_id": img_id, "category_id": cat, "score": round(float(rng.random()), tie),
        "keypoints": [float(v) for v in np.column_stack([xy, rng.random(k)]).ravel()],
    }  # fmt: skip
    if bbox:
        x0, y0 = xy.min(axis=0) - rng.uniform(0, 5, 2)
        x1, y1 = xy.max(axis=0) + rng.uniform(0, 5, 2)
        out["bbox"] = [float(x0), float(y0), float(x1 - x0), float(y1 - y0)]
    return out


def make_keypoint_scene(seed: int, n_images: int = 25, cats: tuple[int, ...] = (1, 3), k: int = 17,
                        bbox: bool = True):  # fmt: skip
    """A COCO keypoint ground truth and results, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    integer = bool(seed % 2)
    tie = int(rng.integers(1, 3))
    images = [{"id": int(i), "width": 640, "height": 480, "file_name": f"{i}.jpg"}
              for i in rng.choice(np.arange(1, 10 * n_images), n_images, replace=False)]  # fmt: skip
    anns: list[dict] = []
    results: list[dict] = []
    for img in images:
        here = []
        for _ in range(int(rng.integers(0, 7))):
            cat = int(rng.choice(cats))
            here.append(_gt_annotation(rng, len(anns) + 1, img["id"], cat, k, integer))
            anns.append(here[-1])
        n_res = int(rng.integers(0, 10)) if rng.random() > 0.15 else int(rng.integers(21, 40))
        for _ in range(n_res):
            near = here[int(rng.integers(len(here)))] if here and rng.random() < 0.75 else None
            cat = (
                near["category_id"]
                if near is not None and rng.random() < 0.9
                else int(rng.choice(cats))
            )
            results.append(_result(rng, img["id"], cat, k, near, tie, bbox))
    categories = [{"id": c, "name": f"kind{c}", "keypoints": [f"p{i}" for i in range(k)]}
                  for c in cats]  # fmt: skip
    return {"images": images, "annotations": anns, "categories": categories}, results


def pycocotools_keypoints(gt: dict, results: list, sigmas=None, **params) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO()
        cg.dataset = copy.deepcopy(gt)
        cg.createIndex()
        cd = cg.loadRes(copy.deepcopy(results))
        ev = COCOeval(cg, cd, "keypoints")
        if sigmas is not None:
            ev.params.kpt_oks_sigmas = np.asarray(sigmas, dtype=np.float64)
        for key, value in params.items():
            setattr(ev.params, key, value)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {"precision": ev.eval["precision"], "recall": ev.eval["recall"],
            "scores": ev.eval["scores"], "stats": np.asarray(ev.stats)}  # fmt: skip


def assert_same(ours, ref: dict, label: str) -> None:
    arrays = ours.primary.arrays
    for name in ("precision", "recall", "scores"):
        got, want = getattr(arrays, name), ref[name]
        assert got.shape == want.shape, f"{label} {name}: shape {got.shape} vs {want.shape}"
        diff = np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))
        assert not len(diff), (
            f"{label} {name}: {len(diff)} entries differ; first at {np.unravel_index(diff[0], got.shape)}: "
            f"ours {got.flat[diff[0]]!r}, pycocotools {want.flat[diff[0]]!r}"
        )
    for i, key in enumerate(KEYS):
        want = ref["stats"][i]
        got = ours.summary[key]
        assert (got is None and want == -1) or got == want, f"{label} {key}: {got} vs {want}"


def _evaluate(tmp_path, gt, results, **kw):
    import json

    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    return evaluate(
        str(tmp_path / "gt.json"), str(tmp_path / "res.json"), iou_type="keypoints", **kw
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("bbox", [True, False], ids=["bbox-branch", "keypoints-branch"])
def test_seeded_scenes_match_pycocotools(seed, bbox, tmp_path):
    gt, results = make_keypoint_scene(seed, bbox=bbox)
    ours = _evaluate(tmp_path, gt, results)
    assert_same(ours, pycocotools_keypoints(gt, results), f"seed {seed} bbox={bbox}")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bbox", [True, False], ids=["bbox-branch", "keypoints-branch"])
def test_seeded_scenes_read_and_paired_in_threads_match_pycocotools(
    seed, bbox, tmp_path, monkeypatch
):
    """Two workers, the results read in runs by threads and the OKS pairs found in
    runs by threads (thresholds lowered so that a small scene is cut): pycocotools' bits."""
    from iou_eval.geometry import keypoints
    from iou_eval.io.loaders import json_decode

    monkeypatch.setattr(keypoints, "_THREAD_MIN_PAIRS", 0)
    monkeypatch.setattr(json_decode, "_THREAD_PART_BYTES", 4096)
    gt, results = make_keypoint_scene(seed, bbox=bbox)
    ours = _evaluate(tmp_path, gt, results, workers=2)
    assert_same(ours, pycocotools_keypoints(gt, results), f"seed {seed} bbox={bbox} threads")


def test_first_result_decides_the_branch(tmp_path):
    """The first result has no bbox: later boxes are replaced by the keypoints' extent."""
    gt, results = make_keypoint_scene(11, bbox=True)
    results[0].pop("bbox")
    ours = _evaluate(tmp_path, gt, results)
    assert_same(ours, pycocotools_keypoints(gt, results), "first without bbox")
    # Every result's area is its keypoints' extent, (0, 0) points included.
    import json

    from iou_eval.api import load

    (tmp_path / "res.json").write_text(json.dumps(results))
    ds = load(str(tmp_path / "res.json"), "pred", "coco", keypoints=True)
    kp = [np.asarray(r["keypoints"]).reshape(-1, 3) for r in results]
    extent = [(k[:, 0].max() - k[:, 0].min()) * (k[:, 1].max() - k[:, 1].min()) for k in kp]
    np.testing.assert_array_equal(ds.area, extent)
    # With the first result's bbox, every area is its box's w * h.
    results[0]["bbox"] = [1.0, 2.0, 3.0, 4.0]
    (tmp_path / "res.json").write_text(json.dumps(results))
    ds = load(str(tmp_path / "res.json"), "pred", "coco", keypoints=True)
    np.testing.assert_array_equal(ds.area, [r["bbox"][2] * r["bbox"][3] for r in results])


def test_class_agnostic_is_refused_as_pycocotools_scores_nothing(tmp_path):
    """pycocotools' computeOks ignores useCats=0: no pair, every AP 0; refused, not mimicked."""
    from iou_eval.errors import UsageError

    gt, results = make_keypoint_scene(5)
    ref = pycocotools_keypoints(gt, results, useCats=0)
    assert ref["stats"][0] == 0.0 and (ref["precision"][ref["precision"] > -1] == 0).all()
    with pytest.raises(UsageError, match="useCats=0"):
        _evaluate(tmp_path, gt, results, class_agnostic=True)


def test_other_k_with_given_sigmas(tmp_path):
    sigmas = [0.05, 0.1, 0.03, 0.2, 0.07]
    gt, results = make_keypoint_scene(3, k=5)
    ours = _evaluate(tmp_path, gt, results, kpt_sigmas=sigmas)
    assert_same(ours, pycocotools_keypoints(gt, results, sigmas), "K=5")


def test_other_k_without_sigmas_uses_one_over_k_and_says_so(tmp_path):
    gt, results = make_keypoint_scene(4, k=9, cats=(2,))
    ours = _evaluate(tmp_path, gt, results)
    assert_same(ours, pycocotools_keypoints(gt, results, np.ones(9) / 9), "K=9 default")
    notes = [w for w in ours.warnings if "1/K" in w]
    assert len(notes) == 1 and "'kind2' (9)" in notes[0]


def test_categories_of_different_k_each_with_their_sigmas(tmp_path):
    """Per-category sigmas: each category's slices equal pycocotools run on that category."""
    import json

    g17, r17 = make_keypoint_scene(21, cats=(1,), k=17)
    g5, r5 = make_keypoint_scene(22, cats=(2,), k=5)
    s5 = [0.04, 0.05, 0.06, 0.07, 0.08]
    for a in g5["annotations"]:
        a["id"] += 10_000
    images = {im["id"]: im for im in g17["images"] + g5["images"]}
    gt = {"images": list(images.values()), "annotations": g17["annotations"] + g5["annotations"],
          "categories": g17["categories"] + g5["categories"]}  # fmt: skip
    (tmp_path / "sig.json").write_text(json.dumps({"kind2": s5}))
    ours = _evaluate(tmp_path, gt, r17 + r5, kpt_sigmas=str(tmp_path / "sig.json"))
    p = ours.primary.arrays.precision
    for k, (cat, sig) in enumerate(((1, COCO_SIGMAS), (2, s5))):
        ref = pycocotools_keypoints(gt, r17 + r5, sig, catIds=[cat])
        np.testing.assert_array_equal(p[:, :, k : k + 1], ref["precision"])
        np.testing.assert_array_equal(ours.primary.arrays.recall[:, k : k + 1], ref["recall"])
