"""`iou-eval semseg`: folders of PNG label maps, paired by file stem."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iou_eval import iou

from .helpers import run

C = 4


def save(path: Path, labels: np.ndarray, mode: str = "L") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "P":
        # A palette PNG: the pixel values are indices into a colour table.
        h, w = labels.shape
        img = Image.frombytes("P", (w, h), labels.astype(np.uint8).tobytes())
        img.putpalette([v for k in range(256) for v in (k * 7 % 256, k * 13 % 256, k)])
    elif mode == "I;16":
        img = Image.fromarray(labels.astype(np.uint16))
    else:
        img = Image.fromarray(labels.astype(np.uint8))
    img.save(path)


@pytest.fixture
def scene(tmp_path):
    """Five 12x16 maps: ground truth in city folders, predictions flat; classes 0..3 + 255."""
    rng = np.random.default_rng(0)
    gts, preds = [], []
    for i in range(5):
        g = rng.integers(0, C, (12, 16))
        g[rng.random((12, 16)) < 0.1] = 255
        p = np.where(rng.random((12, 16)) < 0.3, rng.integers(0, C, (12, 16)), g)
        p[p == 255] = 0
        save(tmp_path / "gt" / f"city{i % 2}" / f"img{i}.png", g)
        save(tmp_path / "pred" / f"img{i}.png", p)
        gts.append(g)
        preds.append(p)
    return tmp_path / "gt", tmp_path / "pred", gts, preds


def test_json_scores_equal_the_library_on_the_same_maps(scene):
    gt, pred, gts, preds = scene
    doc = json.loads(run("semseg", gt, pred, "-f", "json").out)
    want = iou.label_maps(gts, preds, C)
    got = [row["IoU"] for row in doc["per_class"]]
    np.testing.assert_array_equal(got, want["per_class"])
    assert doc["summary"]["mIoU"] == want["mean"]
    assert doc["summary"]["aAcc"] == want["pixel_accuracy"]
    assert doc["inputs"]["images"] == 5
    assert doc["settings"] == {"num_classes": C, "num_classes_from": "data", "ignore_index": 255,
                               "reduce_zero_label": False}  # fmt: skip
    valid = sum(int((g != 255).sum()) for g in gts)
    assert sum(row["gt_pixels"] for row in doc["per_class"]) == valid


def test_palette_and_16_bit_pngs_are_read_as_labels(tmp_path):
    g = np.array([[0, 1, 2], [3, 300, 1]])
    save(tmp_path / "gt" / "a.png", g, "I;16")
    p = np.array([[0, 1, 2], [3, 3, 0]])
    save(tmp_path / "pred" / "a.png", p, "P")
    assert Image.open(tmp_path / "pred" / "a.png").mode == "P"
    doc = json.loads(run("semseg", tmp_path / "gt", tmp_path / "pred", "--ignore-index", "300",
                         "-f", "json").out)  # fmt: skip
    # class 0: gt {a}, pred {a, f}; class 1: gt {b, f}, pred {b}; the 300 pixel is ignored
    assert [r["IoU"] for r in doc["per_class"]] == [0.5, 0.5, 1.0, 1.0]


def test_table_markdown_and_csv(scene):
    gt, pred, gts, preds = scene
    want = iou.label_maps(gts, preds, C)
    table = run("semseg", gt, pred).out
    assert f"mIoU    {want['mean']:.4f}" in table
    assert "class     IoU     Acc  gt pixels  pred pixels" in table
    md = run("semseg", gt, pred, "-f", "markdown").out
    assert md.startswith("## iou-eval semseg report")
    assert f"| mIoU | {want['mean']:.4f} |" in md
    rows = list(csv.DictReader(io.StringIO(run("semseg", gt, pred, "-f", "csv").out)))
    summary = {r["metric"]: float(r["value"]) for r in rows if r["scope"] == "summary"}
    assert summary["mIoU"] == want["mean"]
    ious = [float(r["value"]) for r in rows if r["scope"] == "class" and r["metric"] == "IoU"]
    assert ious == want["per_class"].tolist()


def test_output_file_is_written_whole(scene, tmp_path):
    gt, pred, *_ = scene
    out = tmp_path / "miou.json"
    r = run("semseg", gt, pred, "-f", "json", "-o", out)
    assert r.out == ""
    assert json.loads(out.read_text())["mode"] == "semseg"


def test_missing_and_extra_files_are_warned_about_and_left_out(scene):
    gt, pred, gts, preds = scene
    (pred / "img3.png").unlink()
    save(pred / "stray.png", preds[0])
    r = run("semseg", gt, pred, "-f", "json")
    assert "warning: 1 ground-truth maps have no prediction and are left out: img3" in r.err
    assert "warning: 1 prediction maps have no ground truth and are left out: stray" in r.err
    doc = json.loads(r.out)
    assert doc["inputs"]["missing_predictions"] == ["img3"]
    assert doc["inputs"]["extra_predictions"] == ["stray"]
    keep = [0, 1, 2, 4]
    want = iou.label_maps([gts[i] for i in keep], [preds[i] for i in keep], C)
    assert doc["summary"]["mIoU"] == want["mean"]
    assert "warning" not in run("semseg", gt, pred, "-q").err


def test_names_label_the_classes_and_per_class_gates(scene, tmp_path):
    gt, pred, *_ = scene
    names = tmp_path / "names.txt"
    names.write_text("road\nsidewalk\nbuilding\nwall\n")
    doc = json.loads(run("semseg", gt, pred, "--names", names, "-f", "json").out)
    assert [r["class"] for r in doc["per_class"]] == ["road", "sidewalk", "building", "wall"]
    road = doc["per_class"][0]["IoU"]
    run("semseg", gt, pred, "--names", names, "--fail-under", f"IoU[road]={road}")
    r = run("semseg", gt, pred, "--names", names, "--fail-under", f"IoU[road]={road + 0.01}",
            expect=3)  # fmt: skip
    assert "FAIL" in r.out and "IoU[road]" in r.out


def test_gates_pass_and_fail_with_the_eval_commands_exit_code(scene):
    gt, pred, *_ = scene
    r = run("semseg", gt, pred, "--fail-under", "mIoU=0.1", "--fail-under", "aAcc=0.1")
    assert "all 2 checks passed" in r.out
    r = run("semseg", gt, pred, "--fail-under", "mIoU=0.99", "-f", "json", expect=3)
    check = json.loads(r.out)["checks"][0]
    assert check["name"] == "mIoU=0.99" and check["passed"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "AP=0.5"], "no metric 'AP' (summary: mIoU, mAcc, aAcc"),
        (["--fail-under", "AP[0]=0.5"], "per-class gates take IoU or Acc"),
        (["--fail-under", "IoU[sky]=0.5"], "no class 'sky'"),
        (["--fail-under", "mIoU"], "expected METRIC=VALUE"),
        (["--num-classes", "0"], "Invalid value for '--num-classes'"),
    ],
)
def test_bad_options_are_usage_errors(scene, args, message):
    gt, pred, *_ = scene
    r = run("semseg", gt, pred, *args, expect=2)
    assert message in r.err


def test_names_and_num_classes_must_agree(scene, tmp_path):
    gt, pred, *_ = scene
    names = tmp_path / "names.txt"
    names.write_text("a\nb\n")
    r = run("semseg", gt, pred, "--names", names, "--num-classes", "4", expect=2)
    assert "--num-classes 4 but --names lists 2 class names" in r.err


def test_reduce_zero_label_ignores_zero_and_shifts_the_rest(tmp_path):
    """ADE20K style: 0 = unlabelled; labels 1..3 become classes 0..2."""
    g = np.array([[0, 1, 2, 3]])
    p = np.array([[2, 0, 1, 1]])
    save(tmp_path / "gt" / "a.png", g)
    save(tmp_path / "pred" / "a.png", p)
    doc = json.loads(run("semseg", tmp_path / "gt", tmp_path / "pred", "--reduce-zero-label",
                         "--num-classes", "3", "-f", "json").out)  # fmt: skip
    want = iou.label_maps(np.array([[255, 0, 1, 2]]), p, 3)
    assert [r["IoU"] for r in doc["per_class"]] == want["per_class"].tolist() == [1.0, 0.5, 0.0]


def test_a_label_outside_the_classes_is_a_located_error(scene):
    gt, pred, *_ = scene
    r = run("semseg", gt, pred, "--num-classes", "3", expect=1)
    assert "gt/city0/img0.png: label 3 is outside the classes 0..2 or the ignore index 255" in r.err
    assert "--num-classes" in r.err


def test_sizes_that_differ_are_a_located_error(scene):
    gt, pred, _, preds = scene
    save(pred / "img2.png", preds[2][:, :15])
    r = run("semseg", gt, pred, expect=1)
    assert "pred/img2.png: size 12x15 (H x W) differs from the ground truth's 12x16" in r.err
    assert "paired with" in r.err and "img2.png" in r.err


def test_a_colour_image_is_not_a_label_map(scene):
    gt, pred, *_ = scene
    Image.new("RGB", (16, 12)).save(pred / "img1.png")
    r = run("semseg", gt, pred, expect=1)
    assert "img1.png: a RGB image is not a label map" in r.err


def test_unreadable_png_is_a_located_error(scene):
    gt, pred, *_ = scene
    (pred / "img1.png").write_bytes(b"not a png")
    r = run("semseg", gt, pred, expect=1)
    assert "img1.png: cannot read this PNG" in r.err


def test_folders_without_pairs_are_refused(scene, tmp_path):
    gt, pred, *_ = scene
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no .png label maps in this folder" in run("semseg", empty, pred, expect=1).err
    assert "no prediction shares a file stem" in run("semseg", gt, empty, expect=1).err
    assert "expected a folder of PNG label maps" in run("semseg", gt, tmp_path / "x", expect=1).err


def test_duplicate_stems_are_refused(scene):
    gt, pred, _, preds = scene
    save(gt / "city1" / "img0.png", preds[0])
    r = run("semseg", gt, pred, expect=1)
    assert "two label maps share the stem 'img0'" in r.err


def test_missing_pillow_names_the_extra(scene, monkeypatch):
    gt, pred, *_ = scene
    monkeypatch.setitem(sys.modules, "PIL", None)
    r = run("semseg", gt, pred, expect=2)
    assert "iou-eval[images]" in r.err


@pytest.fixture
def terminal(monkeypatch):
    import iou_eval.cli.common

    monkeypatch.setattr(iou_eval.cli.common, "stderr_is_terminal", lambda: True)


def test_progress_bar_on_a_terminal_only(scene, terminal):
    gt, pred, *_ = scene
    assert "label maps" in run("semseg", gt, pred).err
    assert "label maps" not in run("semseg", gt, pred, "-f", "json").err
    assert "label maps" not in run("semseg", gt, pred, "-q").err
