"""Pictures from the command line: --plots, -f html, iou-eval draw, and the optional extras."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from ..conftest import ROOT
from .helpers import hide, run

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

SAMPLE = ROOT / "sample_data"
GT = str(SAMPLE / "coco" / "gt.json")
PREDS = str(SAMPLE / "coco" / "preds.json")
IMAGES = SAMPLE / "images"
SVG = "{http://www.w3.org/2000/svg}"
XSS = "<script>alert(1)</script>"
GREEN, ORANGE = (0, 158, 115), (230, 159, 0)
RUN_PLOTS = ("pr_overall", "pr_per_class", "score_threshold_all", "score_threshold_per_class",
             "ap_per_class")  # fmt: skip


def svg_gids(path: Path) -> dict[str, list[str]]:
    """gid -> the ``d`` of every path inside the element with that id."""
    out = {}
    for g in ET.parse(path).getroot().iter():
        if g.get("id"):
            out[g.get("id")] = [p.get("d") for p in g.iter(f"{SVG}path") if p.get("d")]
    return out


def svg_text(path: Path) -> str:
    """Every text of the SVG, joined by spaces (matplotlib keeps text as text)."""
    return " ".join(t.text or "" for t in ET.parse(path).getroot().iter(f"{SVG}text"))


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def doc():
    return json.loads(run(GT, PREDS, "-f", "json").out)


# ------------------------------------------------------------- --plots, -f html


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One run with every picture: --plots DIR, -f html -o FILE, --images, --worst 3."""
    out = tmp_path_factory.mktemp("report")
    r = run(GT, PREDS, "--plots", out / "plots", "-f", "html", "-o", out / "report.html",
            "--images", IMAGES, "--worst", "3")  # fmt: skip
    return out, r


def test_plots_show_the_curves_the_numbers_come_from(report, doc):
    out, _ = report
    plots = out / "plots"
    assert sorted(p.name for p in plots.iterdir()) == sorted(
        f"{s}.{e}" for s in RUN_PLOTS for e in ("png", "svg")
    )
    for png in plots.glob("*.png"):
        with Image.open(png) as im:
            im.verify()
    # One vertex per recall point on the overall curves; their means are AP50 and AP.
    paths = svg_gids(plots / "pr_overall.svg")
    assert [len(re.findall(r"[ML]", d)) for d in paths["pr-overall-IoU 0.50"]] == [101]
    legend = svg_text(plots / "pr_overall.svg")
    assert f"IoU 0.50: AP {doc['summary']['AP50']:.3f}" in legend
    assert f"IoU 0.50:0.95 (mean): AP {doc['summary']['AP']:.3f}" in legend
    # Each class's panel stars the per-class table's best F1 at its score.
    per_class = svg_text(plots / "score_threshold_per_class.svg")
    for row in doc["per_class"]:
        assert f"best F1 {row['best_F1']:.2f} @ {row['best_F1_score']:.2f}" in per_class
        assert row["class"] in svg_text(plots / "pr_per_class.svg")
    bars = svg_text(plots / "ap_per_class.svg")
    assert all(f"{row['AP']:.3f}" in bars for row in doc["per_class"])


def test_html_report_holds_the_numbers_plots_and_drawings(report, doc):
    out, r = report
    assert r.out == ""
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<script") == 1
    for key, value in doc["summary"].items():
        assert (
            f'data-metric="{key}"><div class="name">{key}</div><div class="value">{value:.4f}'
            in page
        )
    # The plots --plots wrote are the ones embedded (not drawn twice).
    for stem in RUN_PLOTS:
        svg = (out / "plots" / f"{stem}.svg").read_bytes()
        assert base64.b64encode(svg).decode() in page
    assert page.count("data:image/svg+xml;base64,") == len(RUN_PLOTS)
    # The three worst images, in --sort order, each drawn (JPEG or PNG, as its source).
    worst = re.findall(r"<figcaption>(street_\d+\.jpg) \(image", page)
    assert worst == ["street_10.jpg", "street_07.jpg", "street_09.jpg"]
    assert page.count("data:image/jpeg;base64,") == 2 and page.count("data:image/png;base64,") == 1
    assert "The 3 images with the most false positives + misses, of 12" in page
    assert "dashed: false positives" in page
    assert "http://" not in page.replace("http://www.w3.org", "")


def test_plots_of_a_voc_run_are_the_sweeps_and_bars():
    from iou_eval.api import evaluate
    from iou_eval.reporters.report import plot_inputs

    kw = plot_inputs(evaluate(GT, PREDS, protocol="voc12"))
    assert "precision" not in kw  # the devkit has no pycocotools arrays
    assert set(kw["sweeps"]) == {"bicycle", "car", "dog", "person", "traffic light"}
    assert kw["overall_sweep"] is not None and kw["class_ap"]["car"] is not None


def test_a_batch_plots_its_leaderboard(tmp_path):
    preds = json.loads(Path(PREDS).read_text())
    a, b = tmp_path / "model_a.json", tmp_path / "model_b.json"
    a.write_text(json.dumps(preds))
    b.write_text(json.dumps(preds[::2]))
    out = tmp_path / "plots"
    page = run(GT, a, b, "--plots", out, "-f", "html").out
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.png", "leaderboard.svg"]
    text = svg_text(out / "leaderboard.svg")
    assert "model_a.json" in text and "model_b.json" in text and "Leaderboard by AP" in text
    assert "iou-eval leaderboard" in page and "model_b.json" in page
    assert base64.b64encode((out / "leaderboard.svg").read_bytes()).decode() in page


def test_plots_without_matplotlib_say_how_to_install_it(tmp_path, monkeypatch):
    hide(monkeypatch, "matplotlib")
    r = run(GT, PREDS, "--plots", tmp_path / "plots", expect=2)
    assert "plots need matplotlib" in r.err and "pip install 'iou-eval[plots]'" in r.err
    assert not (tmp_path / "plots").exists() and r.out == ""
    run(GT, PREDS, "-f", "json")  # the rest works
    page = run(GT, PREDS, "-f", "html").out
    assert "pip install &#x27;iou-eval[plots]&#x27;" in page and "data:image/svg" not in page


def test_html_without_pillow_notes_the_drawings_and_keeps_the_rest(monkeypatch):
    hide(monkeypatch, "PIL")
    hide(monkeypatch, "matplotlib")  # (plots are not what this is about)
    page = run(GT, PREDS, "-f", "html", "--images", IMAGES).out
    assert "Drawings need Pillow" in page and "pip install &#x27;iou-eval[draw]&#x27;" in page
    assert "data:image/jpeg" not in page and 'id="worst"' in page


def test_html_shows_the_gates_and_their_exit_code_stands(monkeypatch):
    hide(monkeypatch, "matplotlib")  # (plots are not what this is about)
    r = run(GT, PREDS, "-f", "html", "--fail-under", "AP=0.9", "--fail-under", "AP50=0.5",
            expect=3)  # fmt: skip
    assert '<span class="badge fail">1 of 2 failed</span>' in r.out
    assert "AP=0.9" in r.out and "FAIL" in r.out and 'id="warnings"' in r.out


def test_images_go_with_html_only():
    r = run(GT, PREDS, "--images", IMAGES, expect=2)
    assert "-f html" in r.err and "iou-eval draw" in r.err


def hostile_scene(tmp_path) -> tuple[Path, Path, Path]:
    """The sample with a class and a file named to break out of HTML, and that file's image."""
    gt = json.loads(Path(GT).read_text())
    gt["categories"][3]["name"] = XSS  # person
    name = '"><img src=x onerror=alert(2)>'
    gt["images"][9]["file_name"] = f"{name}.jpg"  # street_10, the worst image
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    images = tmp_path / "images"
    images.mkdir()
    (images / f"{name}.jpg").write_bytes((IMAGES / "street_10.jpg").read_bytes())
    return g, Path(PREDS), images


def test_hostile_names_only_ever_show_as_text(tmp_path, monkeypatch):
    hide(monkeypatch, "matplotlib")  # the plots carry names as base64: not what is tested here
    g, p, images = hostile_scene(tmp_path)
    page = run(g, p, "-f", "html", "--images", images, "-q").out
    assert page.count("<script") == 1 and "<img src=x" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 2  # per-class row, categories
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;.jpg" in page  # table and caption
    assert page.count('<figure class="drawing">') == 1  # the one image in the folder


# ----------------------------------------------------------------------- draw


def test_draw_keeps_each_images_name_size_and_format(tmp_path):
    before = digest(IMAGES)
    out = tmp_path / "drawn"
    r = run("draw", GT, PREDS, "--images", IMAGES, "-o", out)
    assert "drew 12 image(s)" in r.err and r.out == ""
    assert digest(IMAGES) == before  # the sources are only read
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in IMAGES.iterdir())
    for src in IMAGES.iterdir():
        with Image.open(src) as a, Image.open(out / src.name) as b:
            assert (a.size, a.format) == (b.size, b.format)
            assert (
                np.abs(np.asarray(a.convert("RGB"), int) - np.asarray(b.convert("RGB"), int)).max()
                > 100
            )


def px(path: Path, x: int, y: int) -> tuple[int, ...]:
    with Image.open(path) as im:
        return im.convert("RGB").getpixel((x, y))


def test_draw_colours_ground_truth_and_dashes_false_positives(tmp_path):
    """PNG outputs (exact pixels).  street_08: a car found (IoU 0.94) and a traffic light
    missed; street_09: a traffic light predicted on the sky, a false positive at
    (600, 40)-(616, 80), dashes 9 pixels long with gaps of 7 at a 2-pixel stroke."""
    out = tmp_path / "drawn"
    run("draw", GT, PREDS, "--images", IMAGES, "-o", out, "--image-ids", "8,9")
    assert px(out / "street_08.png", 300, 420) == GREEN  # the car's left edge, x 300
    assert px(out / "street_08.png", 296, 420) == ORANGE  # its prediction's, x 296
    assert px(out / "street_08.png", 200, 70) == GREEN  # the missed traffic light
    fp = out / "street_09.png"
    assert [px(fp, 600, y) == ORANGE for y in (44, 52, 60, 68, 76)] == [
        True,
        False,
        True,
        False,
        True,
    ]
    with Image.open(IMAGES / "street_09.png") as im:
        assert px(fp, 608, 60) == im.convert("RGB").getpixel((608, 60))  # inside: untouched


def test_draw_worst_and_image_ids_choose_the_images(tmp_path):
    run("draw", GT, PREDS, "--images", IMAGES, "-o", tmp_path / "worst", "--worst", "3")
    assert sorted(p.name for p in (tmp_path / "worst").iterdir()) == [
        "street_07.jpg", "street_09.png", "street_10.jpg"]  # fmt: skip
    run("draw", GT, PREDS, "--images", IMAGES, "-o", tmp_path / "ids",
        "--image-ids", "5, street_12.jpg, street_02")  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "ids").iterdir()) == [
        "street_02.jpg", "street_05.jpg", "street_12.jpg"]  # fmt: skip
    r = run("draw", GT, PREDS, "--images", IMAGES, "-o", tmp_path / "x", "--image-ids", "99,7",
            expect=2)  # fmt: skip
    assert "--image-ids: 99 not in the ground truth (known: 1, 2, 3, 4, 5, …)" in r.err


def test_draw_never_writes_into_the_images_folder(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    for p in IMAGES.iterdir():
        (images / p.name).write_bytes(p.read_bytes())
    before = digest(images)
    r = run("draw", GT, PREDS, "--images", images, "-o", images, expect=2)
    assert "is the images folder" in r.err
    r = run("draw", GT, PREDS, "--images", images, "-o", tmp_path / "images" / ".." / "images",
            expect=2)  # fmt: skip
    assert digest(images) == before


def test_draw_names_the_images_it_cannot_find(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    (images / "street_03.jpg").write_bytes((IMAGES / "street_03.jpg").read_bytes())
    # Found by stem in another format.
    (images / "street_07.png").write_bytes((IMAGES / "street_08.png").read_bytes())
    r = run("draw", GT, PREDS, "--images", images, "-o", tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "street_03.jpg",
        "street_07.png",
    ]
    # Named in the order they would have been drawn (most errors first).
    assert re.search(
        r"10 image\(s\) not found in \S+ \(by file name or stem\): street_10.jpg, ", r.err
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("draw", GT, PREDS, "--images", empty, "-o", tmp_path / "none", expect=1)
    assert "no image found" in r.err


def test_draw_without_pillow_says_how_to_install_it(tmp_path, monkeypatch):
    hide(monkeypatch, "PIL")
    r = run("draw", GT, PREDS, "--images", IMAGES, "-o", tmp_path / "out", expect=2)
    assert "pip install 'iou-eval[draw]'" in r.err
    assert not (tmp_path / "out").exists()


def test_draw_a_file_name_never_leads_out_of_the_folders(tmp_path):
    gt = json.loads(Path(GT).read_text())
    gt["images"][0]["file_name"] = "../../street_01.jpg"
    g = tmp_path / "deep" / "gt.json"
    g.parent.mkdir()
    g.write_text(json.dumps(gt))
    images = tmp_path / "deep" / "images"
    images.mkdir()
    (images / "street_01.jpg").write_bytes((IMAGES / "street_01.jpg").read_bytes())
    (tmp_path / "street_01.jpg").write_bytes(b"not this one")
    out = tmp_path / "deep" / "out"
    run("draw", g, PREDS, "--images", images, "-o", out, "--image-ids", "1")
    assert [p.name for p in out.iterdir()] == ["street_01.jpg"]
    assert (tmp_path / "street_01.jpg").read_bytes() == b"not this one"


def segm_scene(tmp_path) -> tuple[Path, Path, Path]:
    """One 200 x 160 image; a triangle and a prediction of it (mask IoU about 0.9)."""
    gt = {
        "images": [{"id": 1, "file_name": "tri.png", "width": 200, "height": 160}],
        "categories": [{"id": 1, "name": "tri"}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "iscrowd": 0,
                         "segmentation": [[20.0, 30.0, 180.0, 30.0, 20.0, 120.0]],
                         "bbox": [20, 30, 160, 90], "area": 7200.0}],
    }  # fmt: skip
    preds = [{"image_id": 1, "category_id": 1, "score": 0.9, "bbox": [20, 30, 150, 85],
              "segmentation": [[20.0, 30.0, 170.0, 30.0, 20.0, 115.0]]}]  # fmt: skip
    g, p = tmp_path / "gt.json", tmp_path / "preds.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(preds))
    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (200, 160), (128, 128, 128)).save(images / "tri.png")
    return g, p, images


def test_draw_masks_as_outlines_with_segm(tmp_path):
    g, p, images = segm_scene(tmp_path)
    run("draw", g, p, "--images", images, "-o", tmp_path / "segm", "--iou-type", "segm")
    run("draw", g, p, "--images", images, "-o", tmp_path / "bbox")

    def inner(path: Path) -> np.ndarray:
        """``[y, x]`` of drawn pixels away from the boxes' edges and tags."""
        with Image.open(path) as im:
            a = np.asarray(im.convert("RGB"), dtype=int)[40:100, 30:160]
        return np.argwhere(np.abs(a - 128).sum(axis=2) > 0) + [40, 30]

    assert len(inner(tmp_path / "bbox" / "tri.png")) == 0
    drawn = inner(tmp_path / "segm" / "tri.png")
    # The two hypotenuses, in outline: every drawn pixel lies near one of them.
    y, x = drawn[:, 0] + 0.5, drawn[:, 1] + 0.5
    near_gt = np.abs(90 * x + 160 * y - (90 * 180 + 160 * 30)) / np.hypot(90, 160) < 3
    near_pred = np.abs(85 * x + 150 * y - (85 * 170 + 150 * 30)) / np.hypot(85, 150) < 3
    assert len(drawn) > 100 and (near_gt | near_pred).all()
