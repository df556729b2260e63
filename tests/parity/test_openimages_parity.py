"""``--protocol openimages`` against a plain reference of the TensorFlow API's challenge evaluator.

Seeded scenes written as the challenge's CSV files: group-of boxes, a class
hierarchy with nested levels and a class under two parents, positive and
negative image-level labels, predictions of unverified classes, images with
labels only, boxes of no width, scores at or below -10, tied scores (one
decimal) and classes without ground truth.  Per-class APs and the mAP must
be equal bit for bit (NaN where a class has no ground truth).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from iou_eval import evaluate

from .openimages_files import write_scene
from .openimages_reference import challenge_reference

TREE = {
    "LabelName": "/m/0bl9f",
    "Subcategory": [
        {
            "LabelName": "/m/animal",
            "Subcategory": [
                {
                    "LabelName": "/m/mammal",
                    "Subcategory": [
                        {"LabelName": "/m/dog"},
                        {"LabelName": "/m/cat"},
                        {"LabelName": "/m/teddy"},
                    ],
                },
                {"LabelName": "/m/bird"},
            ],
        },
        {
            "LabelName": "/m/vehicle",
            "Subcategory": [
                {"LabelName": "/m/car", "Subcategory": [{"LabelName": "/m/taxi"}]},
                {"LabelName": "/m/boat"},
            ],
        },
        # A class under two parents, and a subtree listed twice.
        {"LabelName": "/m/toy", "Subcategory": [{"LabelName": "/m/teddy"}]},
        {"LabelName": "/m/pet", "Subcategory": [{"LabelName": "/m/mammal",
                                                  "Subcategory": [{"LabelName": "/m/dog"}]}]},
    ],
}  # fmt: skip
LEAVES = ["/m/dog", "/m/cat", "/m/teddy", "/m/bird", "/m/taxi", "/m/boat"]
ALL = [
    "/m/taxi", "/m/dog", "/m/animal", "/m/boat", "/m/cat", "/m/vehicle", "/m/toy",
    "/m/mammal", "/m/bird", "/m/car", "/m/teddy", "/m/pet", "/m/empty",
]  # fmt: skip


def _coord(rng) -> float:
    # Multiples of 1/64 land overlaps exactly on thresholds now and then.
    return float(rng.integers(0, 65)) / 64 if rng.random() < 0.4 else float(rng.random())


def _box(rng) -> tuple[float, float, float, float]:
    x = sorted((_coord(rng), _coord(rng)))
    y = sorted((_coord(rng), _coord(rng)))
    return x[0], x[1], y[0], y[1]


def _near(rng, b, jitter: float) -> tuple[float, float, float, float]:
    xmin, xmax, ymin, ymax = (float(min(max(v + rng.normal(0, jitter), 0.0), 1.0)) for v in b)
    return min(xmin, xmax), max(xmin, xmax), min(ymin, ymax), max(ymin, ymax)


def _inside(rng, b) -> tuple[float, float, float, float]:
    """A box within ``b`` (a prediction inside a group-of box)."""
    xmin, xmax, ymin, ymax = b
    xs = sorted(float(v) for v in xmin + (xmax - xmin) * rng.random(2))
    ys = sorted(float(v) for v in ymin + (ymax - ymin) * rng.random(2))
    return xs[0], xs[1], ys[0], ys[1]


def scene(seed: int, n_images: int = 30, classes=tuple(LEAVES), pool=tuple(ALL)):
    """Ground-truth boxes, image labels and predictions as rows (see ``challenge_reference``)."""
    rng = np.random.default_rng(seed)
    boxes, labels, preds = [], [], []
    images = [f"{int(v):016x}" for v in rng.integers(0, 2**62, n_images)]
    for k, image in enumerate(images):
        own = []
        if k % 7 != 3:  # a few images have labels only
            for _ in range(int(rng.integers(0, 6))):
                own.append((image, str(rng.choice(classes)), *_box(rng), int(rng.random() < 0.25)))
        boxes += own
        for label in dict.fromkeys(r[1] for r in own):
            if rng.random() < 0.8:
                labels.append((image, label, 1))
        for _ in range(int(rng.integers(0, 3))):
            labels.append((image, str(rng.choice(pool[:-1])), int(rng.random() < 0.3)))
        for _ in range(int(rng.integers(0, 12))):
            if own and rng.random() < 0.7:
                g = own[int(rng.integers(len(own)))]
                b = (
                    _inside(rng, g[2:6])
                    if g[6] and rng.random() < 0.6
                    else _near(rng, g[2:6], 0.03)
                )
                label = g[1] if rng.random() < 0.8 else str(rng.choice(pool[:-1]))
            else:
                b, label = _box(rng), str(rng.choice(pool[:-1]))
            if rng.random() < 0.05:
                b = (b[0], b[0], b[2], b[3])  # no width: left out
            score = round(float(rng.random()), 1)
            if rng.random() < 0.02:
                score = -12.0
            preds.append((image, label, score, *b))
    preds += [("ffffffffffffffff", "/m/dog", 0.9, 0.1, 0.2, 0.1, 0.2)]  # an unknown image
    # Overlaps exactly on 0.5: IoU with a box, and intersection over the prediction's area.
    edge = "0000000000000edge"
    boxes += [(edge, "/m/cat", 0.25, 0.75, 0.25, 0.75, 0), (edge, "/m/cat", 0.0, 0.5, 0.5, 1.0, 1)]
    preds += [
        (edge, "/m/cat", 0.6, 0.25, 0.5, 0.25, 0.75),
        (edge, "/m/cat", 0.4, 0.25, 0.75, 0.5, 1.0),
    ]
    return boxes, labels, preds


def ours(result, class_list) -> tuple[np.ndarray, float | None]:
    table = result.per_class
    by_id = dict(zip(table["category_id"], table["AP"], strict=True))
    ap = np.array([np.nan if by_id.get(c) is None else by_id[c] for c in class_list], dtype=float)
    return ap, result.summary["mAP"]


def assert_same(got, want):
    ap, m = got
    ref_ap, ref_m = want
    assert np.array_equal(ap, ref_ap, equal_nan=True), (
        f"per-class AP differs:\n ours {ap.tolist()}\n ref  {ref_ap.tolist()}\n diff {(ap - ref_ap).tolist()}"
    )
    assert m == ref_m, f"mAP {m!r} != reference {ref_m!r}"


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("hierarchy", [False, True])
def test_seeded_scene_equals_the_reference(tmp_path, seed, hierarchy):
    boxes, labels, preds = scene(seed)
    tree = TREE if hierarchy else None
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, ALL, tree)
    result = evaluate(gt, pred, **options)
    want = challenge_reference(boxes, labels, preds, ALL, tree=tree)
    assert_same(ours(result, ALL), want)


@pytest.mark.parametrize("thr", [0.3, 0.5, 0.75])
def test_iou_threshold_equals_the_reference(tmp_path, thr):
    boxes, labels, preds = scene(101)
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, ALL, TREE)
    result = evaluate(gt, pred, iou_thr=thr, **options)
    assert result.primary.protocol.iou_thresholds == (thr,)
    assert_same(ours(result, ALL), challenge_reference(boxes, labels, preds, ALL, thr, TREE))


def test_many_ties_in_one_image_and_class_equal_the_reference(tmp_path):
    """Forty predictions of one class on one image with three distinct scores: numpy's
    unstable sort decides the order of the ties, in the image and in the class."""
    rng = np.random.default_rng(7)
    boxes = [("a", "/m/dog", *_box(rng), 0) for _ in range(6)] + [
        ("a", "/m/dog", 0.0, 1.0, 0.0, 1.0, 1)
    ]
    preds = [("a", "/m/dog", float(rng.choice([0.3, 0.5, 0.9])), *_near(rng, boxes[i % 6][2:6], 0.02))
             for i in range(40)]  # fmt: skip
    preds += [("b", "/m/dog", 0.5, *_box(rng)) for _ in range(20)]
    labels = [("b", "/m/dog", 0)]
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, ALL)
    result = evaluate(gt, pred, **options)
    assert_same(ours(result, ALL), challenge_reference(boxes, labels, preds, ALL))


def test_reference_walks_a_class_under_two_parents_as_the_script_does():
    from .openimages_reference import plain_hierarchy

    _, ancestors, _ = plain_hierarchy(TREE, skip_root=True)
    assert ancestors["/m/teddy"] == ["/m/mammal", "/m/animal", "/m/toy"]
    assert ancestors["/m/dog"] == ["/m/mammal", "/m/animal", "/m/mammal", "/m/pet"]


def _subset(rows, keep):
    return [r for r in rows if r[0] in keep]


def test_a_slice_and_an_image_selection_equal_the_reference_on_those_images(tmp_path):
    boxes, labels, preds = scene(5, n_images=40)
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, ALL, TREE)
    images = sorted({r[0] for r in boxes} | {r[0] for r in labels})
    keep = set(images[::2])
    (tmp_path / "slices.csv").write_text(
        "image_id,slice\n" + "".join(f"{i},even\n" for i in sorted(keep))
    )
    want = challenge_reference(
        _subset(boxes, keep), _subset(labels, keep), _subset(preds, keep), ALL, tree=TREE
    )
    sliced = evaluate(gt, pred, slices=str(tmp_path / "slices.csv"), **options)
    got = sliced.analysis.slice("openimages", "even").summary["mAP"]
    assert got == want[1], f"slice mAP {got!r} != reference {want[1]!r}"
    selected = evaluate(gt, pred, img_ids=",".join(sorted(keep)), **options)
    assert_same(ours(selected, ALL), want)


SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "openimages-challenge"


def _read_sample():
    def rows(name):
        with open(SAMPLE / name, newline="") as f:
            return list(csv.DictReader(f))

    boxes = [
        (r["ImageID"], r["LabelName"], float(r["XMin"]), float(r["XMax"]), float(r["YMin"]),
         float(r["YMax"]), int(r["IsGroupOf"]))
        for r in rows("validation-annotations-bbox.csv")
    ]  # fmt: skip
    labels = [
        (r["ImageID"], r["LabelName"], int(r["Confidence"]))
        for r in rows("validation-annotations-human-imagelabels.csv")
    ]
    preds = [
        (r["ImageID"], r["LabelName"], float(r["Score"]), float(r["XMin"]), float(r["XMax"]),
         float(r["YMin"]), float(r["YMax"]))
        for r in rows("predictions.csv")
    ]  # fmt: skip
    with open(SAMPLE / "class-descriptions.csv", newline="") as f:
        class_list = [r[0] for r in csv.reader(f)]
    return boxes, labels, preds, class_list


@pytest.mark.parametrize("hierarchy", [False, True])
def test_sample_scene_equals_the_reference(hierarchy):
    boxes, labels, preds, class_list = _read_sample()
    tree_path = SAMPLE / "bbox_labels_hierarchy.json"
    tree = json.loads(tree_path.read_text()) if hierarchy else None
    options = {"oi_hierarchy": str(tree_path)} if hierarchy else {}
    result = evaluate(
        str(SAMPLE / "validation-annotations-bbox.csv"), str(SAMPLE / "predictions.csv"),
        protocol="openimages", **options,
    )  # fmt: skip
    assert_same(
        ours(result, class_list), challenge_reference(boxes, labels, preds, class_list, tree=tree)
    )


def test_sample_generator_rewrites_identical_files(tmp_path):
    sys.path.insert(0, str(SAMPLE.parent))
    import make_openimages_challenge

    make_openimages_challenge.write_challenge(str(tmp_path))
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in SAMPLE.iterdir())
    for name in written:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def _tf_api_test_scene():
    """The scene of the TF API's ``OpenImagesChallengeEvaluatorTest`` (its boxes, in units of
    1/1024 of the image: fractions of the same shapes, overlaps exact).

    img1: a cat, an elephant and a group-of cat, every class verified; two dog predictions.
    img2: two cats and a group-of elephant; predictions: two cats, a dog (not verified
    there: left out) and an elephant inside the group-of box.  img3: a dog, found.
    """
    u = 1024.0

    def box(image, label, ymin, xmin, ymax, xmax, group=0):
        return (image, label, xmin / u, xmax / u, ymin / u, ymax / u, group)

    def pred(image, label, score, ymin, xmin, ymax, xmax):
        return (image, label, score, xmin / u, xmax / u, ymin / u, ymax / u)

    boxes = [
        box("img1", "/m/cat", 0, 0, 1, 1), box("img1", "/m/elephant", 0, 0, 2, 2),
        box("img1", "/m/cat", 0, 0, 3, 3, 1), box("img2", "/m/cat", 10, 10, 11, 11),
        box("img2", "/m/cat", 500, 500, 510, 510), box("img2", "/m/elephant", 10, 10, 12, 12, 1),
        box("img3", "/m/dog", 0, 0, 1, 1),
    ]  # fmt: skip
    labels = [("img1", c, 1) for c in ("/m/cat", "/m/dog", "/m/elephant")]
    preds = [
        pred("img1", "/m/dog", 0.7, 10, 10, 11, 11), pred("img1", "/m/dog", 0.8, 100, 100, 120, 120),
        pred("img2", "/m/cat", 0.7, 10, 10, 11, 11), pred("img2", "/m/cat", 0.8, 100, 100, 120, 120),
        pred("img2", "/m/dog", 0.5, 100, 100, 220, 220),
        pred("img2", "/m/elephant", 0.9, 10, 10, 11, 11), pred("img3", "/m/dog", 0.5, 0, 0, 1, 1),
    ]  # fmt: skip
    return boxes, labels, preds, ["/m/cat", "/m/dog", "/m/elephant"]


def test_group_of_weight_half_gives_the_tf_api_unit_tests_numbers(tmp_path):
    """``OpenImagesChallengeEvaluator(categories, group_of_weight=0.5)`` in the API's
    object_detection_evaluation_test.py: dog 0.3333, elephant 0.3333, cat 0.142857, mAP 0.269841."""
    boxes, labels, preds, classes = _tf_api_test_scene()
    gt, pred, options = write_scene(tmp_path, boxes, labels, preds, classes)
    result = evaluate(gt, pred, oi_group_of_weight=0.5, **options)
    s = result.summary
    assert s["AP[Dog]"] == pytest.approx(1 / 3, abs=1e-9)
    assert s["AP[Elephant]"] == pytest.approx(1 / 3, abs=1e-9)
    assert s["AP[Cat]"] == pytest.approx(0.142857142857, abs=1e-9)
    assert s["mAP"] == pytest.approx(0.269841269, abs=1e-8)
    assert_same(ours(result, classes), challenge_reference(boxes, labels, preds, classes,
                                                           group_of_weight=0.5))  # fmt: skip
    # The challenge's weight (1) and none (0) on the same scene.
    for w in (1.0, 0.0):
        got = ours(evaluate(gt, pred, oi_group_of_weight=w, **options), classes)
        assert_same(got, challenge_reference(boxes, labels, preds, classes, group_of_weight=w))
    assert evaluate(gt, pred, **options).summary["AP[Cat]"] == 0.125


@pytest.mark.parametrize("weight", [0.5, 0.3, 0.0])
def test_group_of_weight_on_seeded_scenes_equals_the_reference(tmp_path, weight):
    """0.3 is no binary fraction: the per-image sums' order decides the last bits of the counts."""
    for seed in (3, 8):
        folder = tmp_path / str(seed)
        folder.mkdir()
        boxes, labels, preds = scene(seed, n_images=60)
        gt, pred, options = write_scene(folder, boxes, labels, preds, ALL, TREE)
        result = evaluate(gt, pred, oi_group_of_weight=weight, **options)
        assert result.primary.protocol.extra["group_of_weight"] == weight
        want = challenge_reference(boxes, labels, preds, ALL, tree=TREE, group_of_weight=weight)
        assert_same(ours(result, ALL), want)


def _tied_pair_scene(matching_first: bool, fillers: int, numeric_ids: bool = False):
    """Image ``a``: one dog and two predictions of score 0.8072, one on the dog, one beside it
    (the one on it first in the file, or second); ``fillers`` other images with a dog each and
    predictions of scores 0.9, 0.8072 and 0.5, hits and misses, so that the class's entries
    joined over the images hold more ties."""
    rng = np.random.default_rng(fillers + matching_first)
    name = (lambda k: str(100 + k)) if numeric_ids else (lambda k: f"{k:016x}")
    dog = (0.1, 0.4, 0.1, 0.4)
    on, beside = ("a" if not numeric_ids else "99", "/m/dog", 0.8072, *dog), None
    beside = (on[0], "/m/dog", 0.8072, 0.6, 0.9, 0.6, 0.9)
    boxes = [(on[0], "/m/dog", *dog, 0)]
    preds = [on, beside] if matching_first else [beside, on]
    for k in range(fillers):
        image = name(k)
        boxes.append((image, "/m/dog", *dog, 0))
        for _ in range(int(rng.integers(1, 4))):
            hit = rng.random() < 0.5
            b = _near(rng, dog, 0.01) if hit else (0.6, 0.9, 0.6, 0.9)
            preds.append((image, "/m/dog", float(rng.choice([0.9, 0.8072, 0.5])), *b))
    return boxes, preds


@pytest.mark.parametrize("fillers", [0, 3, 12, 40])
@pytest.mark.parametrize("matching_first", [True, False])
def test_a_tied_true_and_false_positive_in_one_image_rank_as_the_api_ranks_them(
    tmp_path, matching_first, fillers
):
    """Two predictions of score 0.8072 on one image, one on the dog: the API sorts them with
    ``np.argsort`` on the image, then sorts the class's entries joined over the images with
    ``np.argsort`` again; which comes first (false-first or true-first) is what those calls
    give, with as many entries in the class as the fillers make."""
    boxes, preds = _tied_pair_scene(matching_first, fillers)
    gt, pred, options = write_scene(tmp_path, boxes, [], preds, ALL)
    result = evaluate(gt, pred, **options)
    assert_same(ours(result, ALL), challenge_reference(boxes, [], preds, ALL))
    if fillers == 0:
        # One image, two entries: numpy's sort of two equal scores keeps them, reversed.
        order = np.argsort(np.array([0.8072, 0.8072]))[::-1]
        first_is_hit = (order[0] == 0) == matching_first
        per_image = [first_is_hit, not first_is_hit]  # labels in the image's order
        joined = np.argsort(np.array([0.8072, 0.8072]))[::-1]
        ranked = [per_image[i] for i in joined]
        want = 1.0 if ranked[0] else 0.5
        assert result.summary["AP[Dog]"] == want


@pytest.mark.parametrize("numeric_ids", [False, True])
def test_images_join_in_the_order_pandas_groups_them(tmp_path, numeric_ids):
    """Ids that are all digits are grouped as numbers (``'99' < '100'``), others as text: the
    order of the images decides the order of tied entries in the class."""
    boxes, preds = _tied_pair_scene(False, 12, numeric_ids=numeric_ids)
    gt, pred, options = write_scene(tmp_path, boxes, [], preds, ALL)
    result = evaluate(gt, pred, **options)
    assert_same(ours(result, ALL), challenge_reference(boxes, [], preds, ALL))
