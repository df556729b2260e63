"""Doubts that try the other reading on the data itself: box layouts, image ids, class names.

Each scene gives a wrong number without a word on the code before these
checks.  Now, without ``--strict``: exit 0, the doubt on stderr and in the
JSON ``doubts``; with it: exit 1; with the flag the doubt names: the right
number and no doubt.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from ..conftest import ACCEPTANCE
from .helpers import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
CASE01 = ACCEPTANCE / "cases" / "01_padilla_odm_sample_txt"


def report(*args, expect=0):
    """``(JSON document, stderr)`` of ``iou-eval ARGS -f json``."""
    r = run(*args, "-f", "json", expect=expect)
    return json.loads(r.out), r.err


def coco_scene(seed: int = 0, n_images: int = 40, sizes: bool = True) -> tuple[dict, list]:
    """A COCO ground truth (ids 1..n) and good predictions: each object found, jittered by a few pixels."""
    rng = np.random.default_rng(seed)
    images, anns, preds = [], [], []
    for i in range(1, n_images + 1):
        images.append({"id": i, "file_name": f"{i:04d}.jpg",
                       **({"width": 640, "height": 480} if sizes else {})})  # fmt: skip
        for _ in range(int(rng.integers(3, 8))):
            w, h = rng.uniform(20, 120), rng.uniform(20, 100)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            c = int(rng.integers(1, 4))
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": c,
                         "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0})  # fmt: skip
            j = rng.normal(0, 2, size=4)
            preds.append({"image_id": i, "category_id": c, "score": float(rng.uniform(0.3, 1)),
                          "bbox": [x + j[0], y + j[1], w + j[2], h + j[3]]})  # fmt: skip
    cats = [{"id": c, "name": f"class{c}"} for c in (1, 2, 3)]
    return {"images": images, "annotations": anns, "categories": cats}, preds


def write(tmp_path: Path, name: str, doc) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def as_xyxy(preds: list) -> list:
    return [{**p, "bbox": [p["bbox"][0], p["bbox"][1], p["bbox"][0] + p["bbox"][2],
                           p["bbox"][1] + p["bbox"][3]]} for p in preds]  # fmt: skip


def doubts_in(doc: dict, err: str, *words: str) -> str:
    """The doubt of the JSON document that holds ``words``, checked to be on stderr too."""
    found = [d for d in doc["doubts"] if all(w in d for w in words)]
    assert len(found) == 1, (words, doc["doubts"])
    assert "warning (doubt)" in err and found[0][:60] in err
    return found[0]


# ------------------------------------------------------------------ box layouts


def _corners(src: Path, dst: Path) -> None:
    """Case 01's text files rewritten as ``class [score] x1 y1 x2 y2``."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        rows = []
        for line in f.read_text().splitlines():
            t = line.split()
            if t:
                x, y, w, h = (float(v) for v in t[-4:])
                rows.append(" ".join([*t[:-4], f"{x:g}", f"{y:g}", f"{x + w:g}", f"{y + h:g}"]))
        (dst / f.name).write_text("\n".join(rows) + "\n")


@pytest.fixture
def case01_xyxy(tmp_path):
    if not CASE01.is_dir():
        pytest.skip(f"acceptance case 01 not available at {CASE01}")
    for side in ("groundtruths", "detections"):
        _corners(CASE01 / side, tmp_path / side)
    return tmp_path / "groundtruths", tmp_path / "detections"


def test_xyxy_text_read_as_xywh_is_a_doubt_though_weak_detections_overlap_better_so(case01_xyxy):
    gt, dets = case01_xyxy
    args = (gt, dets, "--protocol", "voc12", "--iou-thr", "0.3")
    doc, err = report(*args)
    assert doc["summary"]["mAP"] == pytest.approx(0.2801, abs=1e-4)  # the wrong reading
    doubts_in(doc, err, "wider than its x", "--box-format xyxy")
    run(*args, "--strict", expect=1)
    doc, err = report(*args, "--box-format", "xyxy", "--strict")
    assert doc["summary"]["mAP"] == pytest.approx(0.2457, abs=1e-4)  # the published number
    assert doc["doubts"] == []


def test_coco_results_written_as_xyxy_against_a_ground_truth_without_sizes(tmp_path):
    gt, preds = coco_scene(sizes=False)
    g = write(tmp_path, "gt.json", gt)
    doc, err = report(g, write(tmp_path, "xyxy.json", as_xyxy(preds)))
    assert doc["summary"]["AP"] == pytest.approx(0.0002, abs=1e-4)  # the wrong reading
    doubts_in(doc, err, "reading the prediction boxes as xyxy", "[x, y, width, height]")
    run(g, tmp_path / "xyxy.json", "--strict", expect=1)
    right, _ = report(g, write(tmp_path, "xywh.json", preds), "--strict")
    assert right["summary"]["AP"] == pytest.approx(0.7341, abs=1e-4) and right["doubts"] == []


def test_csv_predictions_in_xyxy_read_as_xywh_without_image_sizes(tmp_path):
    gt, preds = coco_scene(seed=1, sizes=False)
    g = write(tmp_path, "gt.json", gt)
    lines = ["image_id,category_id,score,x,y,w,h"] + [
        f"{p['image_id']},{p['category_id']},{p['score']},{','.join(map(str, b['bbox']))}"
        for p, b in zip(preds, as_xyxy(preds), strict=True)
    ]
    (tmp_path / "preds.csv").write_text("\n".join(lines) + "\n")
    doc, err = report(g, tmp_path / "preds.csv")
    doubts_in(doc, err, "--pred-box-format xyxy")
    run(g, tmp_path / "preds.csv", "--strict", expect=1)
    right, _ = report(g, tmp_path / "preds.csv", "--pred-box-format", "xyxy", "--strict")
    assert (doc["summary"]["AP"], right["summary"]["AP"]) == pytest.approx((0.0, 0.7196), abs=1e-4)


# ------------------------------------------------------------------ image ids


def test_prediction_image_ids_shifted_by_minus_one_name_the_offset(tmp_path):
    gt, preds = coco_scene(seed=2)
    g = write(tmp_path, "gt.json", gt)
    right, _ = report(g, write(tmp_path, "right.json", preds))
    shifted = write(tmp_path, "shifted.json", [{**p, "image_id": p["image_id"] - 1} for p in preds])
    doc, err = report(g, shifted)
    assert doc["summary"]["AP"] == 0.0
    assert right["summary"]["AP"] == pytest.approx(0.7272, abs=1e-4)
    doubts_in(doc, err, "image ids look shifted by -1", "image k overlap the ground truth of "
              "image k+1", "--image-id-offset 1", "are the same shift, not images to declare")  # fmt: skip
    run(g, shifted, "--strict", expect=1)
    fixed, _ = report(g, shifted, "--image-id-offset", "1", "--strict")
    assert fixed["summary"] == right["summary"] and fixed["doubts"] == []


def test_prediction_image_ids_permuted_within_the_ground_truths_ids(tmp_path):
    gt, preds = coco_scene(seed=3)
    perm = np.random.default_rng(3).permutation(np.arange(1, 41))
    g = write(tmp_path, "gt.json", gt)
    moved = write(tmp_path, "moved.json", [{**p, "image_id": int(perm[p["image_id"] - 1])}
                                           for p in preds])  # fmt: skip
    doc, err = report(g, moved)
    assert doc["summary"]["AP"] == pytest.approx(0.0035, abs=1e-4)  # 0.7528 with the ids right
    doubts_in(doc, err, "another image's ground truth far better than their own")
    run(g, moved, "--strict", expect=1)


def test_image_id_offset_needs_whole_number_ids(tmp_path):
    r = run(SAMPLE / "csv/gt.csv", SAMPLE / "csv/preds.csv", "--image-id-offset", "1", expect=2)
    assert "--image-id-offset" in r.err and "not a whole number" in r.err


# ------------------------------------------------------------------ class names


def test_dota_results_file_spelling_a_class_with_underscores(tmp_path):
    shutil.copytree(SAMPLE / "dota", tmp_path / "dota")
    task1 = tmp_path / "dota" / "task1"
    (task1 / "Task1_large-vehicle.txt").rename(task1 / "Task1_large_vehicle.txt")
    gt = tmp_path / "dota" / "labelTxt"
    dota = ("--protocol", "dota")
    right, _ = report(gt, SAMPLE / "dota" / "task1", *dota)
    assert right["summary"]["mAP"] == pytest.approx(0.7311, abs=1e-4)
    doc, err = report(gt, task1, *dota)
    assert doc["summary"]["mAP"] == pytest.approx(0.6402, abs=1e-4)  # large-vehicle AP 0
    doubts_in(doc, err, "'large_vehicle'", "--class-map large_vehicle=large-vehicle")
    run(gt, task1, *dota, "--strict", expect=1)
    fixed, _ = report(gt, task1, *dota, "--class-map", "large_vehicle=large-vehicle", "--strict")
    assert fixed["summary"] == right["summary"] and fixed["doubts"] == []


# ------------------------------------------------------------------ Python


def test_evaluate_issues_each_doubt_as_an_iou_eval_doubt_warning(tmp_path):
    import iou_eval
    from iou_eval import InputError, IouEvalDoubt, evaluate

    assert issubclass(IouEvalDoubt, UserWarning) and "IouEvalDoubt" in iou_eval.__all__
    gt, preds = coco_scene(seed=4)
    g = write(tmp_path, "gt.json", gt)
    shifted = write(tmp_path, "shifted.json", [{**p, "image_id": p["image_id"] - 1} for p in preds])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate(str(g), str(shifted))
    doubts = [str(w.message) for w in caught if issubclass(w.category, IouEvalDoubt)]
    assert doubts == list(dict.fromkeys(result.to_dict()["doubts"]))
    assert any("image ids look shifted by -1" in d for d in doubts)
    with pytest.raises(InputError, match="--strict: .*image ids look shifted by -1"):
        evaluate(str(g), str(shifted), strict=True)


def _feed(ev, scene_images, convert=lambda b: b):
    for im in scene_images:
        p, t = im["preds"], im["target"]
        ev.update(
            [{"boxes": convert(np.array(p["boxes"], float).reshape(-1, 4)),
              "scores": np.array(p["scores"], float), "labels": np.array(p["labels"]),
              "image_id": im["image_id"]}],
            [{"boxes": convert(np.array(t["boxes"], float).reshape(-1, 4)),
              "labels": np.array(t["labels"]), "image_id": im["image_id"]}],
        )  # fmt: skip
    return ev


def _stream_scene(seed: int = 5) -> list[dict]:
    """:func:`coco_scene` as the per-image dicts of a training loop, boxes ``xyxy``."""
    gt, preds = coco_scene(seed=seed, n_images=30)
    out = []
    for im in gt["images"]:
        i = im["id"]
        anns = [a for a in gt["annotations"] if a["image_id"] == i]
        ps = [p for p in preds if p["image_id"] == i]
        xyxy = lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[3]]  # noqa: E731
        out.append({"image_id": i,
                    "preds": {"boxes": [xyxy(p["bbox"]) for p in ps],
                              "scores": [p["score"] for p in ps],
                              "labels": [p["category_id"] for p in ps]},
                    "target": {"boxes": [xyxy(a["bbox"]) for a in anns],
                               "labels": [a["category_id"] for a in anns]}})  # fmt: skip
    return out


def test_evaluator_told_xywh_but_fed_xyxy_arrays_warns_at_compute():
    from iou_eval import Evaluator, InputError, IouEvalDoubt

    images = _stream_scene()
    with pytest.warns(IouEvalDoubt, match='box_format="xyxy"'):
        wrong = _feed(Evaluator(box_format="xywh"), images).compute()
    right = _feed(Evaluator(box_format="xyxy"), images)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IouEvalDoubt)
        good = right.compute()
    # The wrong reading scores higher (larger boxes overlap more), said by nothing before.
    assert (wrong.summary["AP"], good.summary["AP"]) == pytest.approx((0.9407, 0.7613), abs=1e-4)
    with pytest.raises(InputError, match="--strict"):
        _feed(Evaluator(box_format="xywh", strict=True), images).compute()


# ------------------------------------------------------------------ batch and compare


def test_batch_leaderboard_and_compare_mark_the_run_whose_inputs_raised_a_doubt(tmp_path):
    import io

    import pandas as pd

    gt, preds = coco_scene(seed=7)
    g = write(tmp_path, "gt.json", gt)
    good = write(tmp_path, "good.json", preds)
    bad = write(tmp_path, "bad.json", [{**p, "image_id": p["image_id"] - 1} for p in preds])
    doc = json.loads(run(g, good, bad, "-f", "json").out)
    marks = {Path(r["file"]).name: r["doubts"] for r in doc["leaderboard"]}
    assert marks == {"good.json": 0, "bad.json": 2}
    board = pd.read_csv(io.StringIO(run(g, good, bad, "-f", "csv").out))
    assert (
        dict(zip(board["file"].map(lambda f: Path(f).name), board["doubts"], strict=True)) == marks
    )
    text = run(g, good, bad).out
    assert "2 DOUBT" in text and "image ids look shifted by -1" in text
    assert "2 DOUBT" in run(g, good, bad, "-f", "markdown").out
    cmp = json.loads(run("compare", g, good, bad, "-f", "json").out)
    assert cmp["doubts"]["a"] == [] and len(cmp["doubts"]["b"]) == 2
    assert {r["doubt"] for r in cmp["rows"]} == {"b"}
    assert "bad.json (DOUBT)" in run("compare", g, good, bad).out
    assert "bad.json (DOUBT)" in run("compare", g, good, bad, "-f", "markdown").out
    cmp_csv = pd.read_csv(io.StringIO(run("compare", g, good, bad, "-f", "csv").out))
    assert set(cmp_csv["doubt"]) == {"b"}
