"""The reading options (``ReadOptions``), standard input detection and ``--images DIR``."""

from __future__ import annotations

import gzip
import io
import sys

import numpy as np
import pytest

from iou_eval import evaluate, load
from iou_eval.errors import InputError, UsageError
from iou_eval.io import source
from iou_eval.io.inputs import load_options
from iou_eval.io.loaders.image_folder import match_images, with_image_folder
from iou_eval.io.loaders.registry import detect_format
from iou_eval.io.option_files import resolve
from iou_eval.options import EvalOptions, ReadOptions

from .formats_helpers import image, write


def test_each_option_is_one_field_with_its_flag():
    from iou_eval.options import cli_fields

    flags = {cli.flag for _, cli, _ in cli_fields(ReadOptions)}
    assert {"--split", "--class-offset", "--class-map", "--gt-box-format", "--pred-box-format",
            "--gt-normalized", "--pred-normalized", "--images", "--strict"} <= flags  # fmt: skip


def test_per_file_layout_and_scale_win_over_or_add_to_the_shared_ones():
    r = ReadOptions(box_format="xywh", pred_box_format="xyxy", pred_normalized=True)
    assert (r.layout("gt"), r.layout("pred")) == ("xywh", "xyxy")
    assert (r.fractions("gt"), r.fractions("pred")) == (False, True)
    assert ReadOptions(normalized=True).fractions("gt") is True
    gt, pred = load_options(r, "gt", "csv"), load_options(r, "pred", "txt")
    assert (gt.box_format.value, gt.normalized, pred.box_format.value, pred.normalized) == (
        "xywh", False, "xyxy", True,
    )  # fmt: skip
    assert load_options(r, "pred", "coco").box_format is None  # COCO holds [x, y, w, h]
    assert load_options(ReadOptions(split="test"), "gt", "yolo").split == "test"


def test_class_options_from_keywords_and_files(tmp_path):
    o = EvalOptions.of(class_offset=-1, class_map={"1": 0, 2: "1"})
    assert o.read.class_offset == -1 and o.read.class_rule() == {"1": 0, 2: "1"}
    f = write(tmp_path / "map.txt", "7 cat\n8 dog\n")
    # A class map file named through the API is read once, before anything is loaded.
    assert EvalOptions.of(class_map=str(f)).read.class_map == str(f)
    assert resolve(EvalOptions.of(class_map=str(f))).read.class_rule() == {7: "cat", 8: "dog"}
    assert EvalOptions.of(class_map="COCO80").read.class_map == "coco80"
    with pytest.raises(UsageError, match="--class-offset: expected a whole number"):
        EvalOptions.of(class_offset=1.5)
    with pytest.raises(UsageError, match="--pred-box-format: expected one of"):
        EvalOptions.of(pred_box_format="ltrb")
    with pytest.raises(InputError, match="class 7 is mapped twice"):
        resolve(EvalOptions.of(class_map=str(write(tmp_path / "twice.txt", "7 1\n7 2\n"))))


def test_a_class_map_with_an_offset_maps_then_shifts():
    from iou_eval.data.class_shift import apply_class_map

    assert apply_class_map([1, 2, 9], class_map={1: 10, 2: 20}, offset=-1) == (9, 19, 8)
    assert apply_class_map(["3", 4], class_map={3: "cat"}) == ("cat", 4)


def test_cli_help_lists_the_reading_flags():
    from ..cli.helpers import run

    text = run("eval", "--help").out
    for flag in ("--split", "--class-offset", "--class-map FILE|FROM=TO,...|coco80",
                 "--image-id-offset N", "--gt-box-format", "--pred-normalized", "--images DIR",
                 "--strict"):  # fmt: skip
        assert flag in text


def test_a_class_map_given_inline_as_from_to_pairs(tmp_path):
    from iou_eval.errors import UsageError
    from iou_eval.io.option_files import inline_class_map, resolve_read
    from iou_eval.options import ReadOptions

    assert inline_class_map("small_vehicle=small-vehicle, 3=2") == {
        "small_vehicle": "small-vehicle",
        3: 2,
    }
    read = resolve_read(ReadOptions(class_map="small_vehicle=small-vehicle"))
    assert read.class_rule() == {"small_vehicle": "small-vehicle"}
    with pytest.raises(UsageError, match="FROM=TO pairs"):
        inline_class_map("a=b,c")
    with pytest.raises(UsageError, match="mapped twice"):
        inline_class_map("a=b,a=c")
    path = tmp_path / "a=b.txt"  # an existing file is a file, '=' or not
    path.write_text("1 2\n")
    assert inline_class_map(str(path)) is None
    assert resolve_read(ReadOptions(class_map=str(path))).class_rule() == {1: 2}


def test_image_id_offset_must_be_a_whole_number():
    from iou_eval.errors import UsageError
    from iou_eval.options import ReadOptions

    with pytest.raises(UsageError, match="--image-id-offset"):
        ReadOptions(image_id_offset=1.5)


# --------------------------------------------------------------------------- standard input


@pytest.fixture
def stdin(monkeypatch):
    source._stdin_cache.clear()

    def feed(data: bytes) -> None:
        source._stdin_cache.clear()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    yield feed
    source._stdin_cache.clear()


OPEN_IMAGES = b"ImageID,LabelName,Score,XMin,XMax,YMin,YMax\ni,/m/a,0.9,0.1,0.5,0.2,0.6\n"


@pytest.mark.parametrize(
    ("data", "fmt"),
    [(OPEN_IMAGES, "openimages"), (b'{"shapes": [], "imageWidth": 4}', "labelme"),
     (b"<annotations><image id='0' name='a' width='4' height='4'/></annotations>", "cvat-xml"),
     (b'[{"image_id": 1}]', "coco"), (b"image,label,x,y,w,h,score\n", "csv"),
     (gzip.compress(b"\xef\xbb\xbf" + OPEN_IMAGES.replace(b"\n", b"\r\n")), "openimages")],
)  # fmt: skip
def test_standard_input_is_detected_from_its_bytes_and_kept_for_the_loader(stdin, data, fmt):
    stdin(data)
    assert detect_format("-") == fmt
    raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    assert source.read_source("-").data == raw.removeprefix(b"\xef\xbb\xbf")  # nothing consumed


def test_standard_input_is_loaded_after_detection(stdin):
    stdin(gzip.compress(OPEN_IMAGES))
    ds = load("-", "pred")
    assert ds.format == "openimages" and ds.score.tolist() == [0.9]


# --------------------------------------------------------------------------- --images DIR


def test_images_are_found_by_file_name_stem_or_id(tmp_path):
    from iou_eval.data.dataset import ImageTable

    files = [str(tmp_path / n) for n in ("a.jpg", "sub/b.png", "c.png", "x/d.png", "y/d.png")]
    table = ImageTable.build(["k1", "k2", "c", 7, "d"], ["a.jpg", "dir/b.jpg", None, None, None])
    assert match_images(table, files).tolist() == [0, 1, 2, -1, -1]  # "d" is two files: none


def test_images_folder_gives_sizes_and_declares_images(tmp_path):
    write(tmp_path / "gt/a.txt", "cat 0.5 0.5 0.2 0.2\n")
    image(tmp_path / "img/a.png", 200, 100)
    image(tmp_path / "img/nested/b.png", 50, 40)
    ds = load(str(tmp_path / "gt"), "gt", normalized=True, images=str(tmp_path / "img"))
    assert ds.images.ids == ("a", "b")
    assert ds.images.width.tolist() == [200.0, 50.0] and ds.images.height.tolist() == [100.0, 40.0]
    assert any(
        "1 image(s) in" in w and "declared as images without objects" in w for w in ds.warnings
    )


def test_open_images_boxes_become_pixels_with_the_folder(tmp_path):
    header = "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside\n"
    gt = write(
        tmp_path / "gt.csv",
        header + "a,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\nb,x,/m/a,1,0,1,0,1,0,0,0,0,0\n",
    )
    pred = write(
        tmp_path / "p.csv",
        "ImageID,LabelName,Score,XMin,XMax,YMin,YMax\na,/m/a,0.9,0.1,0.5,0.2,0.6\n",
    )
    image(tmp_path / "img/a.jpg", 200, 100)
    ds = with_image_folder(load(str(gt), "gt"), str(tmp_path / "img"))
    assert ds.fractions and ds.images.width.tolist() == [200.0, 1.0]
    assert any("1 image(s) are not in" in w and "1 x 1 image" in w for w in ds.warnings)
    r = evaluate(str(gt), str(pred), images=str(tmp_path / "img"))
    assert r.summary["AP50"] == pytest.approx(0.5, abs=0.01)
    assert any("fractions of a 1 x 1 image" in w for w in r.warnings)
    scaled = load(str(gt), "gt", images=str(tmp_path / "img"))
    np.testing.assert_allclose(
        scaled.scaled(scaled.images.width, scaled.images.height).xyxy[0], [20, 20, 100, 60]
    )


def test_images_option_needs_a_folder(tmp_path):
    write(tmp_path / "gt/a.txt", "cat 1 1 2 2\n")
    with pytest.raises(InputError, match="--images: expected a folder of images"):
        load(str(tmp_path / "gt"), "gt", images=str(tmp_path / "nothing"))
