"""The seed scenes of the fuzz suite: sample_data's street scene in every registered format.

A :class:`Scene` is the files of one evaluation (relative path -> bytes), the
ground truth and predictions to name on the command line, and the formats
to force (``--gt-format`` / ``--pred-format``).  Mutations start from these
valid files, so that most fuzzed inputs get deep into the loaders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..conftest import ROOT

SAMPLE = ROOT / "sample_data"


@dataclass(frozen=True)
class Scene:
    """One evaluation's inputs.

    Attributes:
        name: the scene, by the predictions' format.
        files: relative path -> content.
        gt, pred: what the command line names.
        gt_format, pred_format: the registered formats (``--gt-format`` / ``--pred-format``).
        args: options the format needs.
    """

    name: str
    files: dict[str, bytes]
    gt: str
    pred: str
    gt_format: str
    pred_format: str
    args: tuple[str, ...] = ()

    def data_files(self) -> list[str]:
        """The files a mutation may change (images excluded: they are headers only)."""
        return sorted(f for f in self.files if not f.endswith((".png", ".jpg")))


def _tree(folder: str, into: str = "") -> dict[str, bytes]:
    base = SAMPLE / folder
    prefix = f"{into}/" if into else ""
    return {
        prefix + p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def _coco() -> tuple[dict, list]:
    gt = json.loads((SAMPLE / "coco/gt.json").read_text())
    preds = json.loads((SAMPLE / "coco/preds.json").read_text())
    return gt, preds


def _txt_files() -> dict[str, bytes]:
    """Per-image text files (``txt``: ``class x y w h``) and devkit results files."""
    gt, preds = _coco()
    names = {c["id"]: c["name"].replace(" ", "_") for c in gt["categories"]}
    stems = {im["id"]: im["file_name"].rsplit(".", 1)[0] for im in gt["images"]}
    out: dict[str, bytes] = {}
    lines: dict[str, list[str]] = {f"gt/{s}.txt": [] for s in stems.values()}
    for a in gt["annotations"]:
        x, y, w, h = a["bbox"]
        lines[f"gt/{stems[a['image_id']]}.txt"].append(f"{names[a['category_id']]} {x} {y} {w} {h}")
    plines: dict[str, list[str]] = {f"preds/{s}.txt": [] for s in stems.values()}
    rlines: dict[str, list[str]] = {}
    for p in preds:
        x, y, w, h = p["bbox"]
        cls, stem = names[p["category_id"]], stems[p["image_id"]]
        plines[f"preds/{stem}.txt"].append(f"{cls} {p['score']} {x} {y} {w} {h}")
        rlines.setdefault(f"results/comp4_det_test_{cls}.txt", []).append(
            f"{stem} {p['score']} {x} {y} {x + w} {y + h}"
        )
    for group in (lines, plines, rlines):
        out.update({k: ("\n".join(v) + "\n").encode() for k, v in group.items()})
    return out


@cache
def scenes() -> dict[str, Scene]:
    """Every registered format as predictions (and as ground truth where it holds one)."""
    txt = _txt_files()
    voc = {**_tree("voc/annotations", "gt"), **_tree("voc/predictions", "preds")}
    out = [
        Scene("coco", _tree("coco"), "gt.json", "preds.json", "coco", "coco"),
        Scene("voc-xml", voc, "gt", "preds", "voc-xml", "voc-xml"),
        Scene("csv", _tree("csv"), "gt.csv", "preds.csv", "csv", "csv"),
        Scene("txt", {k: v for k, v in txt.items() if not k.startswith("results/")},
              "gt", "preds", "txt", "txt"),
        Scene("voc-results", {**_tree("voc/annotations", "gt"),
                              **{k: v for k, v in txt.items() if k.startswith("results/")}},
              "gt", "results", "voc-xml", "voc-results"),
        Scene("yolo", _tree("yolo"), "data.yaml", "predictions/labels", "yolo", "yolo"),
        Scene("labelme", _tree("labelme"), "gt", "preds", "labelme", "labelme"),
        Scene("cvat-xml", _tree("cvat"), "gt.xml", "preds.xml", "cvat-xml", "cvat-xml"),
        Scene("labelstudio", _tree("labelstudio"), "gt.json", "preds.json", "labelstudio",
              "labelstudio"),
        Scene("openimages", _tree("openimages"), ".", "preds.csv", "openimages", "openimages"),
        # Oriented boxes: DOTA labels against the devkit's task-1 files, an Ultralytics OBB
        # dataset against its predictions.json, and a table of cx, cy, w, h, angle.
        Scene("dota", {**_tree("dota/labelTxt", "gt"), **_tree("dota/task1", "task1")},
              "gt", "task1", "dota", "dota-results", ("-p", "dota,coco")),
        Scene("obb-json", _tree("yolo-obb"),
              "data.yaml", "predictions.json", "yolo", "obb-json", ("--class-offset", "-1")),
        Scene("csv-angle", {**_tree("dota/labelTxt", "gt"), "preds.csv": _tree("dota")["preds.csv"]},
              "gt", "preds.csv", "dota", "csv", ("-p", "dota")),
    ]  # fmt: skip
    return {s.name: s for s in out}


def write_scene(scene: Scene, root: Path, files: dict[str, bytes] | None = None) -> None:
    """The scene's files (or ``files``) under ``root``."""
    for rel, data in (files if files is not None else scene.files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
