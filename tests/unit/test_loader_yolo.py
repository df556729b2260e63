"""YOLO / Ultralytics datasets and predictions (``iou_eval.io.loaders.yolo``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.text import load_txt
from iou_eval.io.loaders.yolo import (
    guess_score_column,
    img2label_path,
    load_yolo,
    looks_like_yolo,
    read_yolo,
)

from .formats_helpers import image, register, write

NAMES = "names:\n  0: cat\n  1: dog\n"


def dataset(root: Path, yaml: str = "val: images/val\n" + NAMES, **labels: str) -> Path:
    """Two images (a: 100x50 PNG, b: 200x100 PNG) and the given label files.

    ``labels`` maps an image stem to its label file's text.
    """
    image(root / "images/val/a.png", 100, 50)
    image(root / "images/val/b.png", 200, 100)
    for stem, text in labels.items():
        write(root / "labels/val" / f"{stem}.txt", text)
    return write(root / "data.yaml", yaml)


def gt(path: Path | str, **options) -> object:
    return load_yolo(str(path), "gt", LoadOptions(**options))


# --------------------------------------------------------------------------- data.yaml


def test_boxes_are_scaled_by_each_images_header_size(tmp_path):
    """a: 100x50, box centred at (0.5, 0.5) of size (0.2, 0.4) -> x 40..60, y 15..35."""
    d = gt(dataset(tmp_path, a="1 0.5 0.5 0.2 0.4\n", b="0 0.25 0.5 0.5 1\n"))
    assert d.format == "yolo"
    assert d.images.ids == ("a", "b")
    assert d.images.width.tolist() == [100, 200] and d.images.height.tolist() == [50, 100]
    assert d.categories.ids == (0, 1) and d.categories.names == ("cat", "dog")
    np.testing.assert_allclose(d.xyxy, [[40, 15, 60, 35], [0, 0, 100, 100]])
    assert d.category_idx.tolist() == [1, 0]
    assert d.origin.tolist() == [1, 1] and d.where(1)[0].endswith(
        os.path.join("labels", "val", "b.txt")
    )


def test_missing_or_empty_label_file_is_an_image_without_objects(tmp_path):
    d = gt(dataset(tmp_path, a="\n\n"))  # b has no label file at all
    assert d.images.ids == ("a", "b") and len(d) == 0


@pytest.mark.parametrize(
    "names, expected",
    [
        ("names: [cat, dog]\n", ("cat", "dog")),
        ("names:\n  0: cat\n  1: dog\n", ("cat", "dog")),
        ("names:\n  '1': dog\n  '0': cat\n", ("cat", "dog")),
        ("nc: 2\n", ("class_0", "class_1")),
    ],
)
def test_names_as_a_list_a_mapping_or_nc(tmp_path, names, expected):
    d = gt(dataset(tmp_path, "val: images/val\n" + names, a="1 0.5 0.5 0.2 0.2\n"))
    assert d.categories.names == expected
    assert d.categories.names[d.category_idx[0]] == expected[1]


def test_data_yaml_names_are_not_read_as_classes_or_images(tmp_path):
    """A classes.txt beside the labels names the classes; it is no image, no label file."""
    root = tmp_path / "ds"
    image(root / "images/a.png", 10, 10)
    write(root / "labels/a.txt", "1 0.5 0.5 0.2 0.2\n")
    write(root / "labels/classes.txt", "cat\ndog\n")
    d = gt(root / "labels")
    assert d.images.ids == ("a",) and len(d) == 1
    assert d.categories.names == ("cat", "dog") and d.category_idx.tolist() == [1]


@pytest.mark.parametrize(
    "yaml, message",
    [
        ("val: images/val\nnames: [cat]\nnc: 2\n", "'names' has 1 entries but 'nc' is 2"),
        ("val: images/val\nnames:\n  0: cat\n  2: dog\n", "'names' keys must be 0..1"),
        ("val: images/val\n", "neither 'names' nor 'nc'"),
        ("val: images/val\nnc: 1000000000000\n", "'nc' must be a whole number up to 1,000,000"),
        ("train: images/val\nnames: [cat]\n", "no 'val' split"),
        ("val: [unclosed\n", "malformed YAML"),
    ],
)
def test_data_yaml_errors_name_the_file(tmp_path, yaml, message):
    path = dataset(tmp_path, yaml)
    with pytest.raises(InputError) as e:
        gt(path)
    assert message in str(e.value) and str(path) in str(e.value)


def test_validation_key_stands_for_val_and_split_option_chooses(tmp_path):
    image(tmp_path / "test/c.png", 10, 10)
    path = dataset(tmp_path, "validation: images/val\ntest: test\n" + NAMES)
    assert gt(path).images.ids == ("a", "b")
    assert gt(path, split="test").images.ids == ("c",)


def test_root_is_path_from_the_current_folder(tmp_path, monkeypatch):
    dataset(tmp_path / "data")
    yaml = write(tmp_path / "cfg/data.yaml", "path: data\nval: images/val\n" + NAMES)
    monkeypatch.chdir(tmp_path)
    d = gt(yaml)
    assert d.images.ids == ("a", "b") and d.warnings == ()


def test_root_falls_back_to_the_yamls_folder_with_a_warning(tmp_path, monkeypatch):
    dataset(tmp_path / "ds", "path: ../datasets/ds\nval: images/val\n" + NAMES)
    monkeypatch.chdir(tmp_path)  # ../datasets/ds does not exist from here
    d = gt(tmp_path / "ds/data.yaml")
    assert d.images.ids == ("a", "b")
    assert "does not hold the 'val' split" in d.warnings[0]


def test_roboflow_parent_path_falls_back(tmp_path):
    path = dataset(tmp_path, "val: ../images/val\n" + NAMES)
    assert gt(path).images.ids == ("a", "b")


def test_list_file_lines_relative_to_the_list_and_lists_of_entries(tmp_path):
    dataset(tmp_path)
    image(tmp_path / "images/extra/c.png", 10, 10)
    write(tmp_path / "val.txt", "./images/val/b.png\n\n./images/val/a.png\n")
    path = write(tmp_path / "data.yaml", "val: [val.txt, images/extra]\n" + NAMES)
    assert gt(path).images.ids == ("c", "a", "b")  # sorted paths: images/extra first


def test_download_block_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    path = write(
        tmp_path / "data.yaml",
        f"val: images/val\nnames: [cat]\ndownload: |\n  open({str(marker)!r}, 'w').write('x')\n",
    )
    with pytest.raises(InputError) as e:
        gt(path)
    assert not marker.exists()
    assert "never runs the 'download:' block" in str(e.value)


def test_folder_with_data_yaml_and_labels_folder_inputs(tmp_path):
    dataset(tmp_path, a="0 0.5 0.5 0.2 0.2\n")
    assert gt(tmp_path).images.ids == ("a", "b")
    d = gt(tmp_path / "labels/val", names=("cat", "dog"))
    assert d.images.ids == ("a", "b") and d.categories.names == ("cat", "dog")


def test_labels_without_images_are_refused_clearly(tmp_path):
    write(tmp_path / "labels/a.txt", "0 0.5 0.5 0.2 0.2\n")
    with pytest.raises(InputError, match="need their images"):
        gt(tmp_path / "labels")


def test_img2label_replaces_the_last_images_part():
    p = os.path.join("", "d", "images", "x", "images", "a.b.jpg")
    assert img2label_path(p) == os.path.join("", "d", "images", "x", "labels", "a.b.txt")


def test_exif_orientation_6_swaps_width_and_height(tmp_path):
    """A JPEG stored 50x100 with orientation 6 is 100x50 upright; labels are fractions of that."""
    image(tmp_path / "images/r.jpg", 100, 50, orientation=6)
    image(tmp_path / "images/s.jpg", 100, 50, orientation=3)
    write(tmp_path / "labels/r.txt", "0 0.5 0.5 1 1\n")
    d = gt(tmp_path, names=("cat",))
    assert d.images.width.tolist() == [100, 100] and d.images.height.tolist() == [50, 50]
    np.testing.assert_allclose(d.xyxy, [[0, 0, 100, 50]])


def test_polygon_rows_give_bounds_and_keep_the_polygon(tmp_path):
    """a: 100x50; triangle (0.1,0.2) (0.5,0.2) (0.3,0.8) -> x 10..50, y 10..40."""
    path = dataset(tmp_path, a="0 0.1 0.2 0.5 0.2 0.3 0.8\n1 0.5 0.5 0.2 0.2\n")
    d, polygons = read_yolo(str(path), "gt", LoadOptions())
    np.testing.assert_allclose(d.xyxy[0], [10, 10, 50, 40])
    np.testing.assert_allclose(polygons[0], [10, 10, 50, 10, 30, 40])
    assert polygons[0].dtype == np.float64 and polygons[1] is None


def test_duplicate_lines_are_dropped_as_ultralytics_drops_them(tmp_path):
    d = gt(dataset(tmp_path, a="0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n"))
    assert len(d) == 2 and d.origin.tolist() == [1, 3]
    assert "1 duplicate label line(s) dropped" in d.warnings[0]


@pytest.mark.parametrize(
    "line, message",
    [
        ("x 0.5 0.5 0.2 0.2", "expected a class number first, got 'x'"),
        ("5 0.5 0.5 0.2 0.2", "class '5' is not a class index (the dataset has 2 classes"),
        ("0 0.5 0.5 0.2 0.2 0.9", "got 6 numbers"),
        ("0 0.1 0.2 0.5 0.2 0.3 0.8 0.9", "got 8 numbers"),
        ("0 0.5 0.5 0.2 abc", "expected a number, got 'abc'"),
        ("0 50 50 20 20", "coordinates must be fractions of the image size"),
    ],
)
def test_label_errors_cite_file_and_line(tmp_path, line, message):
    path = dataset(tmp_path, a=f"0 0.5 0.5 0.2 0.2\n{line}\n")
    with pytest.raises(InputError) as e:
        gt(path)
    assert message in str(e.value)
    assert str(e.value).startswith(f"{tmp_path / 'labels/val/a.txt'}:2: ")


def test_unreadable_image_is_left_out_with_a_warning(tmp_path):
    path = dataset(tmp_path)
    (tmp_path / "images/val/c.png").write_bytes(b"not an image")
    d = gt(path)
    assert d.images.ids == ("a", "b")
    assert "1 image(s) could not be read" in d.warnings[0] and "c.png" in d.warnings[0]


def test_looks_like_yolo(tmp_path):
    dataset(tmp_path)
    assert looks_like_yolo(str(tmp_path)) and looks_like_yolo(str(tmp_path / "data.yaml"))
    assert looks_like_yolo(str(tmp_path / "labels/val")) is False  # no label file written yet
    write(tmp_path / "labels/val/a.txt", "")
    assert looks_like_yolo(str(tmp_path / "labels/val"))
    write(tmp_path / "other/x.txt", "0 1 2 3 4\n")
    assert not looks_like_yolo(str(tmp_path / "other"))
    write(tmp_path / "bare/labels/x.txt", "0 1 2 3 4\n")  # a txt folder that happens to be "labels"
    assert not looks_like_yolo(str(tmp_path / "bare/labels"))
    image(tmp_path / "bare/x.png", 10, 10)  # now a `predict` run: images beside labels/
    assert looks_like_yolo(str(tmp_path / "bare/labels")) and looks_like_yolo(
        str(tmp_path / "bare")
    )
    assert not looks_like_yolo(str(tmp_path / "missing"))


def test_detectors_never_read_standard_input(monkeypatch):
    """``-`` (standard input) is no file or folder to any detector: nothing is read from it."""
    import io
    import sys

    from iou_eval.io.loaders.cvat_xml import looks_like_cvat_xml
    from iou_eval.io.loaders.labelme import looks_like_labelme
    from iou_eval.io.loaders.openimages import looks_like_openimages

    class Untouchable(io.StringIO):
        def read(self, *a):  # pragma: no cover - failing is the point
            raise AssertionError("standard input was read")

    monkeypatch.setattr(sys, "stdin", Untouchable())
    for detect in (looks_like_yolo, looks_like_labelme, looks_like_cvat_xml, looks_like_openimages):
        assert detect("-") is False


# --------------------------------------------------------------------------- predictions


def predictions(root: Path, size: tuple[int, int] = (100, 50), **files: str) -> Path:
    """A `predict` run folder: ``labels/<stem>.txt`` and the images saved beside ``labels/``."""
    for stem, text in files.items():
        write(root / "labels" / f"{stem}.txt", text)
        image(root / f"{stem}.png", *size)
    return root / "labels"


def test_ultralytics_predictions_read_the_last_number_as_the_confidence(tmp_path):
    """The trap: `class cx cy w h conf`; the txt loader takes the 2nd number for the score."""
    path = predictions(tmp_path, a="1 0.5 0.5 0.2 0.4 0.9\n0 0.25 0.5 0.3 0.3 0.4\n")
    d = load_yolo(str(path), "pred", LoadOptions())
    assert d.score.tolist() == [0.9, 0.4]
    np.testing.assert_allclose(d.xyxy[0], [40, 15, 60, 35])
    sizes = {"image_size": (100, 50)} if "image_size" in LoadOptions.__dataclass_fields__ else {}
    old = load_txt(str(path), "pred", LoadOptions(normalized=True, **sizes))
    assert old.score.tolist() == [0.5, 0.25]  # the wrong column


def test_prediction_sizes_come_from_the_ground_truth(tmp_path, monkeypatch):
    """a has one hit; b has no prediction file, so its object is missed."""
    register(monkeypatch)
    yaml = dataset(tmp_path / "ds", a="1 0.5 0.5 0.2 0.4\n", b="0 0.25 0.5 0.5 1\n")
    preds = predictions(tmp_path / "run", a="1 0.5 0.5 0.2 0.4 0.9\n")
    r = evaluate(str(yaml), str(tmp_path / "run"), gt_format="yolo", pred_format="yolo")
    coco = r.results[0]
    assert coco.summary["AR100"] == pytest.approx(0.5)  # dog found, cat missed
    assert r.inputs["predictions"]["scored_boxes"] == 1
    assert os.path.isdir(preds)


def test_predicted_polygons_take_the_last_number_as_confidence(tmp_path):
    path = predictions(tmp_path, a="0 0.1 0.2 0.5 0.2 0.3 0.8 0.75\n")
    d, polygons = read_yolo(str(path), "pred", LoadOptions())
    assert d.score.tolist() == [0.75]
    np.testing.assert_allclose(polygons[0], [10, 10, 50, 10, 30, 40])


def test_prediction_sizes_from_images_saved_beside_labels(tmp_path):
    image(tmp_path / "a.png", 100, 50)
    path = predictions(tmp_path, a="0 0.5 0.5 0.2 0.4 0.9\n")
    d = load_yolo(str(tmp_path), "pred", LoadOptions())  # the run folder
    assert d.images.width.tolist() == [100] and path.is_dir()


def test_gz_bom_and_crlf_prediction_files(tmp_path):
    write(tmp_path / "labels/a.txt.gz", "0 0.5 0.5 0.2 0.4 0.9\n", gz=True)
    write(
        tmp_path / "labels/b.txt",
        "0 0.5 0.5 0.2 0.4 0.8\n1 0.5 0.5 0.2 0.4 0.7\n",
        bom=True,
        crlf=True,
    )
    image(tmp_path / "a.png", 10, 10)
    image(tmp_path / "b.png", 10, 10)
    d = load_yolo(str(tmp_path / "labels"), "pred", LoadOptions())
    assert d.images.ids == ("a", "b") and d.score.tolist() == [0.9, 0.8, 0.7]


def test_prediction_errors_cite_file_and_line(tmp_path):
    path = predictions(tmp_path, a="0 0.5 0.5 0.2 0.4 0.9\n0 0.5 0.5 0.2 0.4\n")
    with pytest.raises(InputError) as e:
        load_yolo(str(path), "pred", LoadOptions())
    assert str(e.value).startswith(f"{path / 'a.txt'}:2: ")
    assert "predictions need a confidence last" in str(e.value)


# --------------------------------------------------------------------------- the score column


def rows(*lines: str) -> np.ndarray:
    return np.array([[float(v) for v in ln.split()] for ln in lines])


def test_score_column_decided_by_ranges():
    assert guess_score_column(rows("0 3 0.5 0.5 0.2 0.2"), np.zeros(1)).last is True
    assert guess_score_column(rows("0 0.5 0.5 0.2 0.2 7"), np.zeros(1)).last is False
    g = guess_score_column(rows("0 0.5 0.5 0.5 0.2 0.2"), np.zeros(1))
    assert g.last is True and g.doubt  # both readings fit: the default, with a doubt


def test_score_column_decided_by_boxes_inside_the_image():
    """Read the other way, each of these boxes would cross an edge of the image."""
    g = guess_score_column(rows("0 0.5 0.5 0.2 0.2 0.95"), np.zeros(1))  # h 0.95 at cy 0.2
    assert g.last is True and g.doubt is None and "leave the image" in g.evidence
    g = guess_score_column(rows("0 0.9 0.5 0.5 0.2 0.2"), np.zeros(1))  # w 0.5 at cx 0.9
    assert g.last is False and g.doubt is None


def test_score_column_decided_by_falling_confidences():
    """Either reading keeps these boxes inside; only the 6th numbers fall within the file."""
    lines = rows("0 0.5 0.5 0.4 0.4 0.8", "0 0.3 0.5 0.4 0.4 0.7", "0 0.6 0.5 0.4 0.4 0.2")
    g = guess_score_column(lines, np.zeros(3))
    assert g.last is True and g.doubt is None and "fall" in g.evidence
    swapped = lines[:, [0, 5, 2, 3, 4, 1]]
    assert guess_score_column(swapped, np.zeros(3)).last is False
    assert guess_score_column(lines, np.arange(3)).doubt  # one line per file: no order to see


def test_ambiguous_predictions_warn_with_the_flag_to_force_the_other_order(tmp_path):
    path = predictions(tmp_path, a="0 0.5 0.5 0.5 0.2 0.2\n", b="0 0.4 0.5 0.5 0.2 0.3\n")
    d = load_yolo(str(path), "pred", LoadOptions())
    assert d.score.tolist() == [0.2, 0.3]
    assert "--pred-format txt --normalized" in d.warnings[0]


def test_score_second_layout_is_read_with_a_warning(tmp_path):
    path = predictions(tmp_path, (100, 100), a="0 0.9 0.5 0.5 0.2 0.2\n")
    d = load_yolo(str(path), "pred", LoadOptions())
    assert d.score.tolist() == [0.9]
    np.testing.assert_allclose(d.xyxy[0], [40, 40, 60, 60])
    assert "read 6-number lines as 'class score cx cy w h'" in d.warnings[0]
