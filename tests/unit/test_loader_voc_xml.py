"""The Pascal VOC XML loader: columns, options and located errors."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import ImageTable
from iou_eval.data.reconcile import scale_fractions
from iou_eval.errors import InputError
from iou_eval.io.loaders import LoadOptions, detect_format, load
from iou_eval.io.loaders.voc_xml import load_voc_xml

from ..conftest import by_reference


def _obj(name="person", box=(10, 20, 50, 80), difficult=None, score=None, extra=""):
    x1, y1, x2, y2 = box
    parts = [f"<name>{name}</name>"]
    if difficult is not None:
        parts.append(f"<difficult>{difficult}</difficult>")
    parts.append(
        f"<bndbox><xmin>{x1}</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox>"
    )
    if score is not None:
        parts.append(f"<score>{score}</score>")
    return "<object>" + "".join(parts) + extra + "</object>"


def _xml(objects=(), filename="x.jpg", size=(500, 375)):
    head = f"<annotation><filename>{filename}</filename>" if filename else "<annotation>"
    if size is not None:
        head += f"<size><width>{size[0]}</width><height>{size[1]}</height><depth>3</depth></size>"
    return head + "".join(objects) + "</annotation>"


def _write(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(text)
    return str(p)


def _error(path, role="gt", options=None) -> InputError:
    with pytest.raises(InputError) as info:
        load_voc_xml(str(path), role, options or LoadOptions())
    return info.value


def test_folder_reads_images_boxes_flags_and_categories_in_file_order(tmp_path):
    """Three files, read in sorted name order (000009 is written first)::

    000005.xml  chair (difficult) 263,211-324,339   person 10,20-50,80
    000007.xml  car 0,0-100,40 (iscrowd)
    000009.xml  no objects
    """
    d = tmp_path / "ann"
    _write(d, "000009.xml", _xml(filename="000009.jpg", size=(640, 480)))
    _write(
        d,
        "000005.xml",
        _xml(
            [_obj("chair", (263, 211, 324, 339), difficult=1), _obj("person", difficult=0)],
            filename="000005.jpg",
        ),
    )
    _write(
        d,
        "000007.xml",
        _xml([_obj("car", (0, 0, 100, 40), extra="<iscrowd>1</iscrowd>")], filename=None),
    )
    ds = load(str(d), "gt")

    assert ds.format == "voc-xml"
    assert ds.images.ids == ("000005", "000007", "000009")
    assert ds.images.file_names == ("000005.jpg", None, "000009.jpg")
    np.testing.assert_array_equal(ds.images.width, [500, 500, 640])
    np.testing.assert_array_equal(ds.images.height, [375, 375, 480])
    np.testing.assert_array_equal(
        ds.xyxy, [[263, 211, 324, 339], [10, 20, 50, 80], [0, 0, 100, 40]]
    )
    np.testing.assert_array_equal(ds.bbox_area, [61 * 128, 40 * 60, 100 * 40])
    np.testing.assert_array_equal(ds.area, ds.bbox_area)
    np.testing.assert_array_equal(ds.ignore, [True, False, False])
    np.testing.assert_array_equal(ds.is_crowd, [False, False, True])
    assert ds.categories.ids == ("chair", "person", "car")
    assert ds.categories.names == ("chair", "person", "car")
    np.testing.assert_array_equal(ds.category_idx, [0, 1, 2])
    np.testing.assert_array_equal(ds.image_idx, [0, 0, 1])
    np.testing.assert_array_equal(ds.origin, [0, 1, 0])
    np.testing.assert_array_equal(ds.origin_file, [0, 0, 1])
    assert ds.score is None
    assert ds.where(1) == (str(d / "000005.xml"), "object[1]")


def test_single_file_with_crowd_element_and_no_size(tmp_path):
    p = _write(
        tmp_path,
        "street_01.xml",
        _xml([_obj("dog", (1, 2, 3, 4), extra="<crowd>true</crowd>")], size=None),
    )
    ds = load_voc_xml(p, "gt", LoadOptions())
    assert ds.images.ids == ("street_01",)
    assert np.isnan(ds.images.width).all() and np.isnan(ds.images.height).all()
    np.testing.assert_array_equal(ds.is_crowd, [True])
    assert ds.files == (p,)


def test_image_without_objects_is_still_an_image(tmp_path):
    p = _write(tmp_path, "empty.xml", _xml([]))
    ds = load_voc_xml(p, "pred", LoadOptions())
    assert ds.images.ids == ("empty",)
    assert len(ds) == 0
    assert ds.score is not None and ds.score.shape == (0,)


def test_predictions_read_score_or_confidence(tmp_path):
    extra = "<confidence>0.25</confidence>"
    p = _write(
        tmp_path,
        "a.xml",
        _xml([_obj("cat", score=0.9), _obj("dog", (0, 0, 5, 5), extra=extra)]),
    )
    ds = load_voc_xml(p, "pred", LoadOptions())
    np.testing.assert_array_equal(ds.score, [0.9, 0.25])
    np.testing.assert_array_equal(ds.xyxy, [[10, 20, 50, 80], [0, 0, 5, 5]])


def test_numeric_names_index_the_given_names(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj("2"), _obj("cat"), _obj("0")]))
    ds = load_voc_xml(p, "gt", LoadOptions(names=("bird", "cat", "dog")))
    assert ds.categories.ids == ("bird", "cat", "dog")
    np.testing.assert_array_equal(ds.category_idx, [2, 1, 0])


def test_box_format_option_reads_the_four_numbers_as_xywh(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(box=(10, 20, 30, 40))]))
    ds = load_voc_xml(p, "gt", LoadOptions(box_format=BoxFormat.XYWH))
    np.testing.assert_array_equal(ds.xyxy, [[10, 20, 40, 60]])
    np.testing.assert_array_equal(ds.bbox_area, [1200])


def test_normalized_boxes_are_scaled_by_the_size_element(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(box=(0.1, 0.2, 0.5, 1.0))], size=(200, 100)))
    ds = load_voc_xml(p, "gt", LoadOptions(normalized=True))
    np.testing.assert_allclose(ds.xyxy, [[20, 20, 100, 100]])


def test_normalized_predictions_take_sizes_from_the_reference_images(tmp_path):
    p = _write(tmp_path, "img7.xml", _xml([_obj(box=(0.5, 0.5, 1, 1), score=0.5)], size=None))
    ref = ImageTable.build([7], ["img7.jpg"], [640.0], [480.0])
    ds = by_reference(load_voc_xml(p, "pred", LoadOptions(normalized=True)), ref)
    np.testing.assert_allclose(ds.xyxy, [[320, 240, 640, 480]])


def test_normalized_without_any_size_is_an_error(tmp_path):
    p = _write(tmp_path, "img7.xml", _xml([_obj(box=(0.5, 0.5, 1, 1))], size=(0, 0)))
    ds = load_voc_xml(p, "gt", LoadOptions(normalized=True))
    with pytest.raises(InputError) as info:
        scale_fractions(ds, None)
    err = info.value
    assert err.where == "object[0]"
    assert "size of image 'img7'" in str(err)


def test_detect_format_sees_a_folder_of_xml(tmp_path):
    _write(tmp_path / "ann", "a.xml", _xml())
    assert detect_format(str(tmp_path / "ann")) == "voc-xml"


# Bad input: each error names the file, the place and what was found.


def test_malformed_xml_cites_the_parser_line(tmp_path):
    p = _write(tmp_path, "bad.xml", "<annotation>\n<object>\n<name>cat</nam>\n</annotation>\n")
    err = _error(p)
    assert err.path == p
    assert err.where == "line 3"
    assert str(err).startswith(f"{p}:line 3: malformed XML: mismatched tag")


def test_missing_bndbox(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(), "<object><name>dog</name></object>"]))
    err = _error(p)
    assert (err.path, err.where) == (p, "object[1]")
    assert "a.xml:object[1]: object has no <bndbox>" in str(err)


def test_coordinate_that_is_not_a_number(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(box=(1, 2, "abc", 4))]))
    err = _error(p)
    assert (err.path, err.where) == (p, "object[0]")
    assert "a.xml:object[0]: xmax must be a number, got 'abc'" in str(err)


def test_missing_coordinate(tmp_path):
    obj = (
        "<object><name>x</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax></bndbox></object>"
    )
    p = _write(tmp_path, "a.xml", _xml([obj]))
    err = _error(p)
    assert "a.xml:object[0]: <bndbox> has no <ymax>" in str(err)


def test_missing_name(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(), _obj(), _obj(name="  ")]))
    err = _error(p)
    assert (err.path, err.where) == (p, "object[2]")
    assert "a.xml:object[2]: object has no <name>" in str(err)


def test_prediction_without_score_names_file_and_object(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(score=0.5), _obj()]))
    err = _error(p, role="pred")
    assert (err.path, err.where) == (p, "object[1]")
    assert "a.xml:object[1]: prediction has no <score>" in str(err)
    assert "hint:" in str(err)


def test_score_that_is_not_a_number(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(score="high")]))
    err = _error(p, role="pred")
    assert "a.xml:object[0]: score must be a number, got 'high'" in str(err)


def test_difficult_that_is_not_a_flag(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(difficult="maybe")]))
    err = _error(p)
    assert "a.xml:object[0]: difficult must be 0 or 1, got 'maybe'" in str(err)


def test_bad_size(tmp_path):
    p = _write(tmp_path, "a.xml", _xml(size=("wide", 10)))
    err = _error(p)
    assert "a.xml:size: width must be a number, got 'wide'" in str(err)


def test_empty_folder(tmp_path):
    d = tmp_path / "ann"
    _write(d, "notes.txt", "hello")
    err = _error(d)
    assert err.path == str(d)
    assert "expected Pascal VOC .xml files in this folder, found none" in str(err)
    assert "found: notes.txt" in str(err)


def test_wrong_root_element(tmp_path):
    p = _write(tmp_path, "a.xml", "<dataset><image/></dataset>")
    err = _error(p)
    assert "expected a Pascal VOC <annotation> root element, found <dataset>" in str(err)


def test_empty_file(tmp_path):
    d = tmp_path / "ann"
    _write(d, "a.xml", _xml())
    p = _write(d, "b.xml", "")
    err = _error(d)
    assert (err.path, str(err)) == (p, f"{p}: file is empty")


def test_numeric_name_out_of_range_of_names(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj("3")]))
    err = _error(p, options=LoadOptions(names=("cat", "dog")))
    assert "a.xml:object[0]: class index 3 is out of range: 2 names were given" in str(err)


def test_name_not_among_the_given_names(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj("dgo")]))
    err = _error(p, options=LoadOptions(names=("cat", "dog")))
    assert "class 'dgo' is not among the given names (known: cat, dog)" in str(err)


def test_inverted_box_is_reported_by_the_shared_checks(tmp_path):
    p = _write(tmp_path, "a.xml", _xml([_obj(), _obj(box=(50, 20, 10, 80))]))
    err = _error(p)
    assert "a.xml:object[1]: box has x2 < x1 or y2 < y1: [50.0, 20.0, 10.0, 80.0]" in str(err)
