"""``--protocol dota`` / ``dota-allpoint`` give the DOTA devkit's numbers, to the last bit.

The reference is :mod:`.dota_reference`, the devkit's task-1 rules written
out one detection at a time.  Scenes are written as the devkit reads them
(``labelTxt/<image>.txt`` and ``Task1_<class>.txt``) and read back through
the loaders; every winding and starting corner, squares turned by 45
degrees, boxes that touch, an IoU of exactly 0.5, equal confidences,
detections that overlap two objects equally, difficult objects, a class
whose objects are all difficult, a class never predicted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.data.oriented import DOTA_V1_0, convex_order, corners_from_xywhr
from iou_eval.geometry.polyiou import iou_poly

from ..skip_reasons import compiled_missing
from .dota_reference import iou_poly as reference_iou_poly
from .dota_reference import task1


@pytest.fixture(params=["kernel", "numpy"])
def path(request, monkeypatch):
    """Both ways to the devkit's polygon IoU: the compiled kernel and the numpy reference."""
    from iou_eval.geometry.polyiou import compiled

    if request.param == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    elif compiled() is None:
        pytest.skip(compiled_missing("the polygon IoU kernel", "iou_eval.geometry._polykernel"))
    return request.param


CLASSES = ("plane", "ship", "small-vehicle", "large-vehicle", "harbor", "helicopter")


def _wind(c: np.ndarray, rng) -> np.ndarray:
    """The corners from a random corner, in a random winding."""
    c = np.roll(c, -int(rng.integers(4)), axis=0)
    return c[::-1] if rng.random() < 0.5 else c


def _fixed_cases() -> tuple[list, list]:
    """Hand-built pairs on image ``E``: touching, 0.5 exactly, equal overlaps with two objects."""
    sq = lambda x, y, s=10.0: np.array([[x, y], [x + s, y], [x + s, y + s], [x, y + s]])  # noqa: E731
    turned = lambda x, y, a: corners_from_xywhr(np.array([[x, y, 20.0, 20.0, a]]))[0]  # noqa: E731
    gts = [
        # Two overlapping planes that the first detection overlaps equally (IoU 9/11): which
        # it takes decides whether the second detection is a true positive.
        ("E", "plane", sq(0, 0), 0),
        ("E", "plane", sq(2, 0), 0),
        ("E", "plane", sq(500, 0), 0),
        ("E", "plane", sq(510, 0), 0),  # touches the one before
        ("E", "ship", np.array([[100, 0], [130, 0], [130, 10], [100, 10]], float), 0),
        ("E", "small-vehicle", turned(200, 100, math.pi / 4), 0),
        ("E", "small-vehicle", turned(204, 100, math.pi / 4), 0),
        ("E", "harbor", sq(300, 300, 40), 1),  # difficult only: no AP
        ("E", "large-vehicle", turned(400, 400, math.pi / 4), 0),
    ]
    dets = [
        ("E", "plane", 0.9, sq(1, 0)),
        ("E", "plane", 0.8, sq(2.5, 0)),
        ("E", "plane", 0.7, sq(515, 0)),  # half over each touching square: IoU 1/3 each
        ("E", "plane", 0.7, sq(520.5, 0)),  # enclosures 0.5 px apart: looked at, IoU 0
        ("E", "ship", 0.8, np.array([[110, 0], [140, 0], [140, 10], [110, 10]], float)),  # 0.5
        ("E", "small-vehicle", 0.7, turned(202, 100, math.pi / 4)),  # equally over both
        ("E", "small-vehicle", 0.6, turned(204.5, 100, math.pi / 4)),
        ("E", "large-vehicle", 0.6, turned(400, 400, 0)),  # a square on its 45-degree twin
        ("E", "large-vehicle", 0.6, turned(400, 400, math.pi / 4)),
    ]
    return gts, dets


def _scene(seed: int) -> tuple[list, list]:
    """``(gts, dets)`` as the reference takes them, corners ``[4, 2]`` rounded as files hold them."""
    rng = np.random.default_rng(seed)
    gts, dets = _fixed_cases()
    for i in range(14):
        img = f"P{seed:02d}{i:02d}"
        n = int(rng.integers(0, 14))
        boxes = np.column_stack([
            rng.uniform(50, 950, n), rng.uniform(50, 950, n), rng.uniform(8, 120, n),
            rng.uniform(8, 120, n), rng.choice([0.0, math.pi / 4, math.pi / 2, 1.0], n)
            + rng.normal(0, 0.2, n) * (rng.random(n) < 0.5),
        ])  # fmt: skip
        classes = rng.choice(CLASSES[:4], n)
        for b, cls in zip(boxes, classes, strict=True):
            c = np.round(corners_from_xywhr(b[None])[0], 1)
            gts.append((img, str(cls), _wind(c, rng), int(rng.random() < 0.15)))
            for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):
                d = b.copy()
                d[:2] += rng.normal(0, 0.15, 2) * b[2:4]
                d[2:4] *= rng.uniform(0.75, 1.3, 2)
                d[4] += rng.normal(0, 0.2)
                score = round(float(rng.uniform(0.05, 1.0)), 2)  # two decimals: ties
                dets.append((img, str(cls), score, np.round(corners_from_xywhr(d[None])[0], 1)))
        for _ in range(int(rng.integers(0, 4))):  # false alarms, some in a class without objects
            d = np.array([rng.uniform(50, 950), rng.uniform(50, 950), 30, 20, rng.uniform(0, 3)])
            cls = str(rng.choice(CLASSES[:4] + ("helicopter",)))
            dets.append(
                (
                    img,
                    cls,
                    round(float(rng.random()), 2),
                    np.round(corners_from_xywhr(d[None])[0], 1),
                )
            )
    return gts, dets


def _write(tmp_path, gts, dets) -> tuple[str, str]:
    labels, task1_dir = tmp_path / "labelTxt", tmp_path / "task1"
    labels.mkdir()
    task1_dir.mkdir()
    images = sorted({g[0] for g in gts} | {d[0] for d in dets})
    for img in images:
        lines = ["imagesource:GoogleEarth", "gsd:0.1"]
        lines += [f"{_nums(c)} {cls} {diff}" for i, cls, c, diff in gts if i == img]
        (labels / f"{img}.txt").write_text("\n".join(lines) + "\n")
    for cls in CLASSES:
        mine = [d for d in dets if d[1] == cls]
        if mine:
            text = "".join(f"{img} {score!r} {_nums(c)}\n" for img, _, score, c in mine)
            (task1_dir / f"Task1_{cls}.txt").write_text(text)
    return str(labels), str(task1_dir)


def _nums(c: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(c).ravel())


def _reference_inputs(gts, dets):
    ref_gts = [(img, cls, np.asarray(c).ravel().tolist(), diff) for img, cls, c, diff in gts]
    ref_dets = [(img, cls, s, np.asarray(c).ravel().tolist()) for img, cls, s, c in dets]
    return ref_gts, ref_dets


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("protocol", ["dota", "dota-allpoint"])
def test_dota_equals_the_devkit_rules(tmp_path, seed, protocol, path):
    gts, dets = _scene(seed)
    gt_path, pred_path = _write(tmp_path, gts, dets)
    result = evaluate(gt_path, pred_path, protocol=protocol)
    r = result.results[0]
    ref_gts, ref_dets = _reference_inputs(gts, dets)
    # The devkit's own class list, in its order: mAP is summed in it.
    classes = [c for c in DOTA_V1_0 if any(g[1] == c for g in gts)]
    aps, mean = task1(ref_gts, ref_dets, classes, eleven_point=protocol == "dota")
    expected = {"mAP": mean, **{f"AP[{c}]": aps[c] for c in classes}}
    assert r.summary == expected, (r.summary, expected)
    assert r.summary["AP[harbor]"] is None  # every harbor is difficult
    # Per class, the outcome of every prediction in the devkit's ranked order.
    point = r.evaluation.point
    pred = result.alignment.pred
    names = list(pred.categories.names)
    for c in classes:
        _, ref_tp, ref_fp = task1_class_arrays(ref_gts, ref_dets, c, protocol)
        mine = np.flatnonzero(np.array([names[k] for k in pred.category_idx[point.dt_rows]]) == c)
        assert np.array_equal(point.tp[mine].astype(float), ref_tp), c
        assert np.array_equal(point.fp[mine].astype(float), ref_fp), c


def task1_class_arrays(ref_gts, ref_dets, cls, protocol):
    from .dota_reference import task1_class

    return task1_class(ref_gts, ref_dets, cls, eleven_point=protocol == "dota")


def test_polygon_iou_equals_the_devkit_bit_for_bit(path):
    """Seeded pairs in every winding, rounded as files hold them, at DOTA's coordinates."""
    rng = np.random.default_rng(11)
    n = 2500
    a = np.column_stack([
        rng.uniform(0, 5000, n), rng.uniform(0, 5000, n), rng.uniform(2, 200, n),
        rng.uniform(2, 200, n), rng.uniform(-np.pi, np.pi, n),
    ])  # fmt: skip
    b = a.copy()
    b[:, :2] += rng.normal(0, 30, (n, 2))
    b[:, 2:4] *= rng.uniform(0.5, 1.5, (n, 2))
    b[:, 4] += rng.normal(0, 0.5, n)
    ga = np.stack([_wind(c, rng) for c in np.round(corners_from_xywhr(a), 1)])
    gb = np.stack([_wind(c, rng) for c in corners_from_xywhr(b)])
    got = iou_poly(ga, gb)
    ref = np.array([reference_iou_poly(p.ravel(), q.ravel()) for p, q in zip(ga, gb, strict=True)])
    assert np.array_equal(got, ref), np.abs(got - ref).max()
    assert (got > 0).mean() > 0.3


def test_polygon_iou_of_edge_cases_equals_the_devkit(path):
    sq = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    turned = corners_from_xywhr(np.array([[5.0, 5.0, 10.0, 10.0, math.pi / 4]]))[0]
    pairs = [
        (sq, sq), (sq, sq[::-1]), (sq, sq + [10, 0]), (sq, sq + [10, 10]), (sq, sq + [5, 0]),
        (sq, turned), (sq + 1000, turned + 1000), (sq, sq * 0.5 + 2), (sq - 5, turned - 5),
        (sq, np.roll(sq, 2, axis=0) + [1e-9, 0]),
    ]  # fmt: skip
    g = np.stack([p for p, _ in pairs])
    d = np.stack([q for _, q in pairs])
    ref = [reference_iou_poly(p.ravel(), q.ravel()) for p, q in pairs]
    assert iou_poly(g, d).tolist() == ref
    assert ref[0] == 1.0 and ref[2] == 0.0 and ref[3] == 0.0


def test_pairs_looked_at_in_small_steps_give_the_same_outcome(tmp_path, monkeypatch):
    """The candidate pairs are taken a bounded number at a time: the steps change nothing."""
    import iou_eval.protocols.dota as dota

    gt_path, pred_path = _write(tmp_path, *_scene(5))
    whole = evaluate(gt_path, pred_path, protocol="dota")
    monkeypatch.setattr(dota, "_PAIR_BUDGET", 7)
    steps = evaluate(gt_path, pred_path, protocol="dota")
    assert steps.summary == whole.summary
    a, b = whole.results[0].evaluation.point, steps.results[0].evaluation.point
    assert np.array_equal(a.tp, b.tp) and np.array_equal(a.match_gt, b.match_gt)
    assert np.array_equal(a.match_iou, b.match_iou)


# Quadrilaterals that are not convex, each paired with a box, and the IoU the DOTA devkit's
# compiled polyiou (x86-64, no fused multiply-add) gives for the pair as written.
_DART = np.array([[0.0, 0.0], [10.0, 0.0], [3.0, 3.0], [0.0, 10.0]])  # (3, 3) is inside
_DART2 = np.array([[2.0, 1.0], [12.0, 2.0], [6.0, 5.0], [3.0, 11.0]])
_SQ = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
_BOW = np.array([[0.0, 0.0], [10.0, 10.0], [10.0, 0.0], [0.0, 10.0]])  # crosses itself
_NOT_CONVEX = [
    (_SQ, _DART, 0.3),
    (_DART, _SQ, 0.3),
    (_DART, _DART2, 0.0958043527036123),
    (_DART2, _DART, 0.09580435270361226),
    (_SQ, np.zeros((4, 2)), 0.0),
    (_SQ, np.array([[0.0, 0.0], [5.0, 0.0], [10.0, 0.0], [2.0, 0.0]]), 0.0),
    (_SQ, _BOW, 0.0),
    (_DART * 37.3 + [2000.5, 1500.25], _SQ * 40 + [2000, 1500], 0.26086687500000116),
    (_DART, _DART, 1.0),
]


def test_polygon_iou_of_quadrilaterals_that_are_not_convex_equals_the_devkit(path):
    """A dart, a box of no area, three points on a line, a crossing outline: the devkit's
    figures, and the reference's on noisy boxes of which some are not convex."""
    g = np.stack([p for p, _, _ in _NOT_CONVEX])
    d = np.stack([q for _, q, _ in _NOT_CONVEX])
    assert iou_poly(g, d).tolist() == [v for _, _, v in _NOT_CONVEX]
    rng = np.random.default_rng(4)
    boxes = np.column_stack([
        rng.uniform(50, 950, 3000), rng.uniform(50, 950, 3000), rng.uniform(3, 40, 3000),
        rng.uniform(3, 12, 3000), rng.uniform(0, np.pi, 3000),
    ])  # fmt: skip
    gt = corners_from_xywhr(boxes)
    dt = gt + rng.normal(0, 3, gt.shape)
    loose = convex_order(dt)[2]
    assert loose.sum() > 50
    got = iou_poly(gt[loose], dt[loose])
    ref = [
        reference_iou_poly(p.ravel(), q.ravel()) for p, q in zip(gt[loose], dt[loose], strict=True)
    ]
    assert got.tolist() == ref


def _noisy_scene(seed: int) -> tuple[list, list]:
    """Thin boxes and their detections with 3 px of corner noise: some are not convex.

    Detections whose noise crossed their outline (read in the order that goes
    round, which is not the devkit's reading) are left out.
    """
    rng = np.random.default_rng(seed)
    gts, dets = [], []
    for i in range(6):
        n = 25
        boxes = np.column_stack([
            rng.uniform(40, 760, n), rng.uniform(40, 760, n), rng.uniform(8, 40, n),
            rng.uniform(4, 12, n), rng.uniform(0, np.pi, n),
        ])  # fmt: skip
        corners = np.round(corners_from_xywhr(boxes), 1)
        classes = rng.choice(["small-vehicle", "ship"], n)
        noisy = np.round(corners + rng.normal(0, 3, corners.shape), 1)
        reordered = convex_order(noisy)[1]
        for c, q, cls, crossed in zip(corners, noisy, classes, reordered, strict=True):
            gts.append((f"N{i}", str(cls), c, int(rng.random() < 0.1)))
            if not crossed:
                dets.append((f"N{i}", str(cls), round(float(rng.random()), 3), q))
    return gts, dets


@pytest.mark.parametrize("protocol", ["dota", "dota-allpoint"])
def test_predictions_that_are_not_convex_are_scored_as_the_devkit_scores_them(
    tmp_path, protocol, path
):
    gts, dets = _noisy_scene(3)
    loose = int(convex_order(np.stack([d[3] for d in dets]))[2].sum())
    assert loose >= 5
    gt_path, pred_path = _write(tmp_path, gts, dets)
    result = evaluate(gt_path, pred_path, protocol=protocol)
    ref_gts, ref_dets = _reference_inputs(gts, dets)
    classes = ["small-vehicle", "ship"]
    aps, mean = task1(ref_gts, ref_dets, classes, eleven_point=protocol == "dota")
    assert result.summary == {"mAP": mean, **{f"AP[{c}]": aps[c] for c in classes}}
    notes = [w for w in result.warnings if "not convex" in w]
    assert len(notes) == 1, result.warnings
    assert f"{loose} of {len(dets)} predicted boxes are not convex quadrilaterals" in notes[0]
    assert notes[0].endswith("score them as the devkit does (its polyiou on the corners as given)")


def _tied_scene() -> tuple[list, list]:
    """One image, 24 ships and 30 detections of three confidences: half on a ship, half far
    from any, in a shuffled file order.  Which of the equal confidences comes first decides
    where the true positives fall in the ranking."""
    rng = np.random.default_rng(17)
    sq = lambda x, y: np.array([[x, y], [x + 10.0, y], [x + 10.0, y + 10.0], [x, y + 10.0]])  # noqa: E731
    gts = [("T", "ship", sq(20.0 * i, 0.0), 0) for i in range(24)]
    dets = [("T", "ship", float(rng.choice([0.9, 0.8072, 0.5])),
             sq(20.0 * i, 0.0) if i % 2 == 0 else sq(20.0 * i, 500.0)) for i in range(30)]  # fmt: skip
    order = rng.permutation(len(dets))
    return gts, [dets[i] for i in order]


@pytest.mark.parametrize("protocol", ["dota", "dota-allpoint"])
def test_equal_confidences_are_ranked_as_the_devkits_argsort_ranks_them(tmp_path, protocol, path):
    """The devkit ranks a class file's lines with ``np.argsort(-confidence)`` (numpy's default,
    unstable sort): the same call on the same lines gives its order of the ties, on any machine."""
    gts, dets = _tied_scene()
    gt_path, pred_path = _write(tmp_path, gts, dets)
    result = evaluate(gt_path, pred_path, protocol=protocol)
    ref_gts, ref_dets = _reference_inputs(gts, dets)
    aps, mean = task1(ref_gts, ref_dets, ["ship"], eleven_point=protocol == "dota")
    assert result.summary == {"mAP": mean, "AP[ship]": aps["ship"]}
    _, ref_tp, _ = task1_class_arrays(ref_gts, ref_dets, "ship", protocol)
    assert np.array_equal(result.results[0].evaluation.point.tp.astype(float), ref_tp)
