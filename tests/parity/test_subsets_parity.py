"""--img-ids, --cat-ids and --slices against pycocotools with ``params.imgIds`` / ``params.catIds``.

Seeded scenes (crowd, ties, empty images, categories without ground truth
or predictions, groups past maxDets): the 12 statistics bit for bit, and
the precision / recall arrays where their shapes agree.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import evaluate

from ..cli.helpers import run
from .synth import make_scene, run_pycocotools


def stats_of(summary: dict) -> np.ndarray:
    keys = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")
    return np.array([-1.0 if summary[k] is None else summary[k] for k in keys])


def assert_same_stats(ours: dict, ref: np.ndarray, label: str) -> None:
    got = stats_of(ours)
    assert np.array_equal(got, ref), f"{label}\n ours {got}\n ref  {ref}\n diff {got - ref}"


def pick(rng, values, share: float) -> list:
    values = list(values)
    n = max(1, int(round(share * len(values))))
    return [values[i] for i in sorted(rng.choice(len(values), n, replace=False))]


@pytest.mark.parametrize("seed", range(6))
def test_img_ids_equal_pycocotools_img_ids(seed, write_json):
    gt, preds = make_scene(seed)
    rng = np.random.default_rng(seed)
    ids = pick(rng, [im["id"] for im in gt["images"]], 0.4)
    ref = run_pycocotools(gt, preds, imgIds=ids)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), img_ids=ids)
    assert_same_stats(r.summary, ref["stats"], f"seed {seed}")
    assert np.array_equal(r.primary.arrays.precision, ref["precision"])
    assert np.array_equal(r.primary.arrays.recall, ref["recall"])
    assert len(r.images) == len(ids)


@pytest.mark.parametrize("seed", range(6))
def test_cat_ids_equal_pycocotools_cat_ids(seed, write_json):
    gt, preds = make_scene(seed, n_categories=8)
    rng = np.random.default_rng(100 + seed)
    cats = pick(rng, [c["id"] for c in gt["categories"]], 0.5)
    ref = run_pycocotools(gt, preds, catIds=cats)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), cat_ids=cats)
    assert_same_stats(r.summary, ref["stats"], f"seed {seed}")
    assert np.array_equal(r.primary.arrays.precision, ref["precision"])
    assert list(r.classes["category_id"]) == cats


@pytest.mark.parametrize("seed", range(4))
def test_img_and_cat_ids_together_through_the_cli(seed, write_json, tmp_path):
    gt, preds = make_scene(seed, string_ids=seed % 2 == 1)
    rng = np.random.default_rng(200 + seed)
    ids = pick(rng, [im["id"] for im in gt["images"]], 0.3)
    cats = pick(rng, [c["id"] for c in gt["categories"]], 0.6)
    ref = run_pycocotools(gt, preds, imgIds=ids, catIds=cats)
    id_file = tmp_path / "ids.txt"
    id_file.write_text("# images\n" + "\n".join(map(str, ids)) + "\n\n")
    doc = json.loads(
        run(write_json("g.json", gt), write_json("p.json", preds), "--img-ids", f"@{id_file}",
            "--cat-ids", ",".join(map(str, cats)), "-f", "json", "-q").out
    )  # fmt: skip
    assert_same_stats(doc["summary"], ref["stats"], f"seed {seed}")
    assert doc["inputs"]["selection"]["images"] == len(ids)
    assert doc["params"]["img_ids"].startswith(f"{len(ids)} ids, digest ")


def write_slices(tmp_path, slices: dict[str, list], as_json: bool) -> str:
    if as_json:
        by_image: dict[str, list[str]] = {}
        for name, ids in slices.items():
            for i in ids:
                by_image.setdefault(str(i), []).append(name)
        path = tmp_path / "slices.json"
        path.write_text(json.dumps(by_image))
    else:
        path = tmp_path / "slices.csv"
        rows = [f"{i},{name}" for name, ids in slices.items() for i in ids]
        path.write_text("image_id,slice\n" + "\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("seed", range(5))
def test_each_slice_equals_pycocotools_on_its_images(seed, write_json, tmp_path):
    gt, preds = make_scene(seed)
    rng = np.random.default_rng(300 + seed)
    ids = [im["id"] for im in gt["images"]]
    slices = {"night": pick(rng, ids, 0.3), "rain": pick(rng, ids, 0.5), "one": pick(rng, ids, 0)}
    path = write_slices(tmp_path, slices, as_json=seed % 2 == 0)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), slices=path)
    assert_same_stats(r.summary, run_pycocotools(gt, preds)["stats"], "whole")
    got = r.analysis.slices["coco"]
    assert [s.name for s in got] == list(slices)
    for s in got:
        assert s.images == len(slices[s.name])
        ref = run_pycocotools(gt, preds, imgIds=slices[s.name])
        assert_same_stats(s.summary, ref["stats"], f"seed {seed} slice {s.name}")


def test_slices_beside_img_ids_use_the_selected_images(write_json, tmp_path):
    gt, preds = make_scene(9)
    ids = [im["id"] for im in gt["images"]]
    kept = ids[:30]
    path = write_slices(tmp_path, {"a": ids[20:40]}, as_json=False)
    r = evaluate(write_json("g.json", gt), write_json("p.json", preds), img_ids=kept, slices=path)
    (s,) = r.analysis.slices["coco"]
    assert s.images == 10
    assert_same_stats(s.summary, run_pycocotools(gt, preds, imgIds=ids[20:30])["stats"], "a")
    assert any("10 image id(s) are not among the scored images" in w for w in r.warnings)
