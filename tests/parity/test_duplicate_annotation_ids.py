"""Ground-truth annotations that share an id, read as pycocotools reads them.

``COCO.createIndex`` keeps one annotation per id in ``anns`` (the last one
listed) while ``imgToAnns`` lists every annotation; ``COCOeval`` collects the
ids of the annotations listed under each image and loads them from ``anns``.
Every annotation that shares an id is therefore evaluated as the last one
with that id: its box, area, crowd flag, category and image.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from iou_eval import evaluate, load

from .synth import make_scene, run_pycocotools
from .test_coco_parity import assert_same


def _scene(anns, preds, images=(1, 2)):
    gt = {
        "images": [{"id": i, "file_name": f"{i}.jpg"} for i in images],
        "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
        "annotations": anns,
    }
    return gt, preds


def _ann(id_, image, box, cat=1, **kw):
    return {"id": id_, "image_id": image, "category_id": cat, "bbox": box,
            "area": box[2] * box[3], "iscrowd": 0, **kw}  # fmt: skip


def _pred(image, box, score, cat=1):
    return {"image_id": image, "category_id": cat, "bbox": box, "score": score}


def test_two_annotations_of_one_image_with_one_id(write_json):
    """[0,0,10,10] and [50,50,10,10] share id 5: pycocotools scores the second twice.

    Both predictions are perfect, yet the first finds no ground truth: AP 1.0
    is what a reader that keeps both annotations gets; pycocotools does not.
    """
    gt, preds = _scene(
        [_ann(5, 1, [0, 0, 10, 10]), _ann(5, 1, [50, 50, 10, 10])],
        [_pred(1, [0, 0, 10, 10], 0.9), _pred(1, [50, 50, 10, 10], 0.8)],
    )
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    ref = run_pycocotools(gt, preds)
    assert_same(ours, ref, "one image")
    assert ours.summary["AP"] != 1.0


def test_one_id_across_images_moves_the_box(write_json):
    """Id 7 in image 2 (listed first) and in image 1: image 2 loses its box, image 1 has two."""
    gt, preds = _scene(
        [_ann(1, 1, [0, 0, 20, 20]), _ann(7, 2, [5, 5, 30, 30]), _ann(7, 1, [0, 0, 20, 21]),
         _ann(3, 1, [0, 0, 21, 20], cat=2)],
        [_pred(1, [0, 0, 20, 20], 0.5), _pred(1, [0, 0, 20, 20], 0.5),
         _pred(2, [5, 5, 30, 30], 0.5), _pred(1, [0, 0, 21, 20], 0.5, cat=2)],
    )  # fmt: skip
    files = write_json("gt.json", gt), write_json("p.json", preds)
    ours = evaluate(*files)
    assert_same(ours, run_pycocotools(gt, preds), "across images")
    assert_same(evaluate(*files, class_agnostic=True), run_pycocotools(gt, preds, useCats=0),
                "across images, class-agnostic")  # fmt: skip
    per_image = {r["image_id"]: r for r in ours.images.records()}
    assert (per_image[1]["gt"], per_image[2]["gt"]) == (4, 0)


def test_a_moved_box_takes_its_listed_images_place_in_the_order(write_json):
    """A box moved to image 2 by an annotation listed under image 3 comes after image 2's own.

    The first prediction [0,0,10,10] overlaps G1 = [0,0,10,20] and
    G2 = [0,0,20,10] equally (IoU 0.5) and pycocotools gives it the last
    candidate in its order; the second, [0,0,10,16], overlaps only G1
    enough (0.8).  The file lists id 7 under image 3 first, then under
    image 2 (G2): pycocotools' order in image 2 is id 7 (G2), id 1 (G1), then
    the copy of id 7 listed under image 3 (G2), so the first prediction
    takes a G2 and the second G1.
    """
    gt, preds = _scene(
        [_ann(7, 3, [90, 90, 5, 5]), _ann(7, 2, [0, 0, 20, 10]), _ann(1, 2, [0, 0, 10, 20])],
        [_pred(2, [0, 0, 10, 10], 0.9), _pred(2, [0, 0, 10, 16], 0.8)],
        images=(2, 3),
    )
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds), iou_thr=0.5)
    assert_same(ours, run_pycocotools(gt, preds), "moved box order")
    assert ours.classes.records()[0]["TP"] == 2


def test_the_last_annotation_on_an_unknown_image_removes_the_first(write_json):
    gt, preds = _scene(
        [_ann(4, 1, [0, 0, 10, 10]), _ann(9, 2, [0, 0, 10, 10]), _ann(4, 99, [0, 0, 10, 10])],
        [_pred(1, [0, 0, 10, 10], 0.9), _pred(2, [0, 0, 10, 10], 0.9)],
    )
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    assert_same(ours, run_pycocotools(gt, preds), "unknown image")
    assert ours.inputs["ground_truth"]["boxes"] == 1


@pytest.mark.parametrize("seed", range(1100, 1108))
def test_random_scenes_with_shared_ids(seed, write_json):
    gt, preds = make_scene(seed, tie_decimals=1)
    rng = np.random.default_rng(seed)
    anns = gt["annotations"]
    # A tenth of the annotations take the id of another one, in any image.
    for i in rng.choice(len(anns), len(anns) // 10, replace=False):
        anns[i]["id"] = anns[int(rng.integers(len(anns)))]["id"]
    assert len({a["id"] for a in anns}) < len(anns)
    files = write_json("gt.json", gt), write_json("p.json", preds)
    assert_same(evaluate(*files), run_pycocotools(gt, preds), f"seed {seed}")
    assert_same(evaluate(*files, class_agnostic=True), run_pycocotools(gt, preds, useCats=0),
                f"seed {seed}, class-agnostic")  # fmt: skip


def test_the_warning_names_the_id_and_both_places(write_json):
    gt, preds = _scene(
        [_ann(5, 1, [0, 0, 10, 10]), _ann(6, 1, [0, 0, 9, 9]), _ann(5, 2, [50, 50, 10, 10])],
        [_pred(1, [0, 0, 10, 10], 0.9)],
    )
    path = write_json("gt.json", gt)
    r = evaluate(path, write_json("p.json", preds))
    shared = [w for w in r.warnings if "annotation id 5" in w]
    assert len(shared) == 1, r.warnings
    assert path in shared[0] and "annotations[0]" in shared[0] and "annotations[2]" in shared[0]
    assert "pycocotools" in shared[0]


def test_rows_cite_the_annotation_they_hold(write_json):
    gt, _ = _scene([_ann(5, 1, [0, 0, 10, 10]), _ann(6, 1, [0, 0, 9, 9]),
                    _ann(5, 1, [50, 50, 10, 10])], [])  # fmt: skip
    ds = load(write_json("gt.json", copy.deepcopy(gt)), "gt")
    assert ds.origin.tolist() == [2, 1, 2]
    assert ds.xyxy[:, 0].tolist() == [50.0, 0.0, 50.0]


def test_distinct_ids_are_read_unchanged(write_json):
    gt, _ = make_scene(1110)
    ds = load(write_json("gt.json", gt), "gt")
    assert ds.origin.tolist() == list(range(len(gt["annotations"])))
