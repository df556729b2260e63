"""Boxes drawn on images: colours at the edges, dashes with gaps, size and format kept."""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from iou_eval.errors import InputError, UsageError
from iou_eval.reporters.draw import (
    GT_COLOUR,
    PRED_COLOUR,
    dash_pattern,
    draw_image,
    line_width,
    pred_text,
    worst_images,
)

Image = pytest.importorskip("PIL.Image")
GREY = (128, 128, 128)


def make_image(path, size=(400, 300), fmt="PNG", mode="RGB"):
    colour = GREY if mode == "RGB" else (*GREY, 255)
    Image.new(mode, size, colour).save(path, format=fmt)
    return path


def scene(tmp_path, fmt="PNG", mode="RGB", size=(400, 300)):
    """One ground truth, a true positive on it and a false positive elsewhere::

    gt    (40, 50)-(160, 150)  solid green
    tp    (45, 55)-(170, 160)  solid orange
    fp   (220, 60)-(360, 200)  dashed orange
    """
    ext = {"PNG": "png", "JPEG": "jpg"}[fmt]
    src = make_image(tmp_path / f"in.{ext}", size, fmt, mode)
    dst = tmp_path / "out" / f"drawn.{ext}"
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    draw_image(
        src, dst,
        np.array([[40, 50, 160, 150]]), ["cat"],
        np.array([[45, 55, 170, 160], [220, 60, 360, 200]]), ["cat", "dog"],
        np.array([0.9, 0.4]), np.array([0.81, 0.0]), np.array([False, True]),
    )  # fmt: skip
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before  # the source is only read
    return src, dst


def pixels(path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def close(px, colour, tol=0) -> bool:
    return bool(np.abs(np.asarray(px)[..., :3] - np.asarray(colour)).max() <= tol)


def test_edges_have_their_colours_and_false_positives_are_dashed(tmp_path):
    _, dst = scene(tmp_path)
    px = pixels(dst)
    assert close(px[100, 40], GT_COLOUR)  # left edge of the ground truth, mid-height
    assert close(px[100, 160], GT_COLOUR)  # right edge
    assert close(px[110, 170], PRED_COLOUR)  # right edge of the true positive: solid
    assert all(close(px[y, 170], PRED_COLOUR) for y in range(60, 155))
    # The false positive's right edge: orange dashes with background gaps.
    column = [close(px[y, 360], PRED_COLOUR) for y in range(62, 198)]
    gaps = [close(px[y, 360], GREY) for y in range(62, 198)]
    assert sum(column) > 40 and sum(gaps) > 20
    changes = sum(a != b for a, b in zip(column, column[1:], strict=False))
    dash, gap = dash_pattern(line_width(400, 300))
    assert changes >= 2 * int(136 // (dash + gap)) - 1
    assert close(px[10, 10], GREY) and close(px[250, 300], GREY)  # untouched elsewhere


def test_labels_carry_class_score_and_iou():
    assert pred_text("cat", 0.9, 0.8123, False) == "cat 0.90 IoU 0.81"
    assert pred_text("dog", 0.4, 0.0, True) == "dog 0.40 FP"
    assert pred_text("dog", 0.4, 0.3, True) == "dog 0.40 FP IoU 0.30"
    assert pred_text("dog", 0.4, float("nan"), False) == "dog 0.40"


def test_a_tag_is_drawn_above_the_ground_truth_and_below_the_prediction(tmp_path):
    _, dst = scene(tmp_path)
    px = pixels(dst)
    above_gt = px[40:50, 41:60]  # the tag sits on the box's top edge, outside
    below_fp = px[201:212, 221:240]
    assert (np.abs(above_gt - GT_COLOUR).max(axis=2) == 0).mean() > 0.3
    assert (np.abs(below_fp - PRED_COLOUR).max(axis=2) == 0).mean() > 0.3


@pytest.mark.parametrize(("fmt", "mode"), [("PNG", "RGB"), ("PNG", "RGBA"), ("JPEG", "RGB")])
def test_size_and_format_are_kept(tmp_path, fmt, mode):
    src, dst = scene(tmp_path, fmt, mode, size=(333, 222))
    with Image.open(src) as a, Image.open(dst) as b:
        assert (b.format, b.size) == (a.format, a.size)
        assert b.mode == (mode if fmt == "PNG" else "RGB")
    tol = 0 if fmt == "PNG" else 40  # JPEG rounds colours
    assert close(pixels(dst)[100, 40], GT_COLOUR, tol)


def test_mask_outlines_are_drawn(tmp_path):
    src = make_image(tmp_path / "in.png")
    dst = tmp_path / "out.png"
    triangle = [300.0, 50.0, 380.0, 250.0, 220.0, 250.0]
    draw_image(src, dst, np.zeros((1, 4)) + [200, 40, 390, 260], ["tent"], np.zeros((0, 4)),
               [], [], [], [], outlines={"gt": [[triangle]]})  # fmt: skip
    px = pixels(dst)
    assert close(px[250, 300], GT_COLOUR)  # on the triangle's base
    assert close(px[150, 340], GT_COLOUR)  # on its right side, (300,50)-(380,250) at y=150
    assert close(px[200, 300], GREY)  # inside


def test_the_source_is_never_the_destination(tmp_path):
    src = make_image(tmp_path / "in.png")
    with pytest.raises(UsageError, match="overwrite its source"):
        draw_image(src, tmp_path / "." / "in.png", np.zeros((0, 4)), [], np.zeros((0, 4)),
                   [], [], [], [])  # fmt: skip


def test_shapes_that_disagree_are_refused(tmp_path):
    src = make_image(tmp_path / "in.png")
    with pytest.raises(
        UsageError, match=r"pred_scores must be \[2\] \(one per box\), got shape \[1\]"
    ):
        draw_image(src, tmp_path / "o.png", np.zeros((0, 4)), [], np.zeros((2, 4)),
                   ["a", "b"], [0.5], [0, 0], [False, True])  # fmt: skip
    assert not (tmp_path / "o.png").exists()


def test_an_unreadable_image_names_the_file(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_text("not an image")
    with pytest.raises(InputError) as err:
        draw_image(bad, tmp_path / "o.png", np.zeros((0, 4)), [], np.zeros((0, 4)), [], [], [], [])
    assert str(bad) in err.value.format() and "cannot read the image" in err.value.format()
    with pytest.raises(InputError, match="image not found"):
        draw_image(tmp_path / "missing.png", tmp_path / "o.png", np.zeros((0, 4)), [],
                   np.zeros((0, 4)), [], [], [], [])  # fmt: skip


def test_without_pillow_a_usage_error_says_how_to_install(tmp_path, monkeypatch):
    src = make_image(tmp_path / "in.png")
    for name in [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(UsageError) as err:
        draw_image(src, tmp_path / "o.png", np.zeros((0, 4)), [], np.zeros((0, 4)), [], [], [], [])
    assert "pip install 'iou-eval[draw]'" in err.value.format()


def test_worst_images_most_errors_first_then_lower_recall():
    fp = [0, 3, 1, 0, 2, 1]
    fn = [0, 0, 1, 2, 0, 1]
    recall = [1.0, 1.0, 0.5, 0.0, None, 0.25]
    # errors: 0, 3, 2, 2, 2, 2 -> image 1; then 3 (recall 0), 5 (.25), 2 (.5), 4 (undefined); 0
    assert worst_images(fp, fn, None, recall).tolist() == [1, 3, 5, 2, 4, 0]
    assert worst_images(fp, fn, 2, recall).tolist() == [1, 3]
    assert worst_images(fp, fn, 3).tolist() == [1, 2, 3]  # no recall: ties in image order
    assert worst_images([], [], 5).tolist() == []
    with pytest.raises(UsageError, match=">= 0"):
        worst_images(fp, fn, -1)
