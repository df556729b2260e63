"""The CSV/TSV loader: columns, aliases, options and located errors."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import ImageTable
from iou_eval.errors import InputError
from iou_eval.io.loaders import LoadOptions, detect_format, load
from iou_eval.io.loaders.table import load_csv

from ..conftest import by_reference


@pytest.fixture
def write(tmp_path):
    """``write(text, name="t.csv") -> path``."""

    def _write(text: str, name: str = "t.csv") -> str:
        p = tmp_path / name
        p.write_text(text)
        return str(p)

    return _write


def _load(path, role="gt", **options):
    return load_csv(path, role, LoadOptions(**options))


def _error(path, role="gt", **options) -> InputError:
    with pytest.raises(InputError) as info:
        _load(path, role, **options)
    return info.value


def test_ground_truth_columns(write):
    """Three boxes on two images; "2299" is numeric (an int id), the other a file name::

    line 2  2299        car     10,20-50,80   crowd
    line 4  street.jpg  person  0,0-4,5       difficult, area 7
    line 5  2299        3       1,1-2,2
    """
    p = write(
        "image,label,xmin,ymin,xmax,ymax,iscrowd,difficult,area\n"
        "2299,car,10,20,50,80,1,0,\n"
        "\n"
        "street.jpg,person,0,0,4,5,0,1,7\n"
        "2299,3,1,1,2,2,,,\n"
    )
    ds = _load(p)
    assert ds.format == "csv"
    assert ds.images.ids == (2299, "street.jpg")
    assert ds.images.file_names == (None, "street.jpg")
    np.testing.assert_array_equal(ds.image_idx, [0, 1, 0])
    np.testing.assert_array_equal(ds.xyxy, [[10, 20, 50, 80], [0, 0, 4, 5], [1, 1, 2, 2]])
    np.testing.assert_array_equal(ds.bbox_area, [2400, 20, 1])
    np.testing.assert_array_equal(ds.area, [2400, 7, 1])
    np.testing.assert_array_equal(ds.is_crowd, [True, False, False])
    np.testing.assert_array_equal(ds.ignore, [False, True, False])
    assert ds.categories.ids == ("car", "person", 3)
    assert ds.categories.names == ("car", "person", "3")
    np.testing.assert_array_equal(ds.category_idx, [0, 1, 2])
    np.testing.assert_array_equal(ds.origin, [2, 4, 5])
    assert ds.score is None
    assert ds.where(1) == (p, "4")


def test_predictions_read_the_score(write):
    p = write("img,cls,x1,y1,x2,y2,conf\na.jpg,1,0,0,10,10,0.75\na.jpg,2,5,5,6,6,0.5\n")
    ds = _load(p, "pred")
    np.testing.assert_array_equal(ds.score, [0.75, 0.5])
    assert ds.categories.ids == (1, 2)


XYXY = [[10, 20, 40, 60]]


@pytest.mark.parametrize(
    "header,row,fmt",
    [
        ("image,label,x1,y1,x2,y2", "10,20,40,60", "xyxy"),
        ("Image_ID,Class,XMin,YMin,XMax,YMax", "10,20,40,60", "xyxy"),
        ("file_name,category_id,left,top,right,bottom", "10,20,40,60", "xyxy"),
        ("filename,class_name,x_min,y_min,x_max,y_max", "10,20,40,60", "xyxy"),
        ("image_name,name,x,y,w,h", "10,20,30,40", "xywh"),
        ("path,category,x,y,width,height", "10,20,30,40", "xywh"),
        ("file,cls,xmin,ymin,w,h", "10,20,30,40", "xywh"),
        ("image,label,left,top,width,height", "10,20,30,40", "xywh"),
        ("image,label,cx,cy,w,h", "25,40,30,40", "cxcywh"),
        ("image,label,x_center,y_center,width,height", "25,40,30,40", "cxcywh"),
        ("image,label,xc,yc,w,h", "25,40,30,40", "cxcywh"),
        ("Image ID,Class-Name,center_x,center_y,W,H", "25,40,30,40", "cxcywh"),
    ],
)
def test_header_aliases(write, header, row, fmt):
    p = write(f"{header}\nim1,dog,{row}\n")
    ds = _load(p)
    np.testing.assert_array_equal(ds.xyxy, XYXY)
    assert ds.images.ids == ("im1",)
    assert ds.categories.ids == ("dog",)


@pytest.mark.parametrize("alias", ["score", "confidence", "conf", "prob", "probability"])
def test_score_aliases(write, alias):
    p = write(f"image,label,x1,y1,x2,y2,{alias.upper()}\na,b,0,0,1,1,0.25\n")
    np.testing.assert_array_equal(_load(p, "pred").score, [0.25])


@pytest.mark.parametrize(
    "crowd,ignore", [("iscrowd", "difficult"), ("crowd", "ignore"), ("is_crowd", "is_difficult")]
)
def test_flag_aliases(write, crowd, ignore):
    p = write(f"image,label,x1,y1,x2,y2,{crowd},{ignore}\na,b,0,0,1,1,true,0\na,b,0,0,1,1,0,yes\n")
    ds = _load(p)
    np.testing.assert_array_equal(ds.is_crowd, [True, False])
    np.testing.assert_array_equal(ds.ignore, [False, True])


def test_tsv(write):
    p = write("image\tlabel\txmin\tymin\txmax\tymax\tscore\na b.jpg\tcar\t1\t2\t3\t4\t0.5\n")
    ds = _load(p, "pred")
    assert ds.images.ids == ("a b.jpg",)
    np.testing.assert_array_equal(ds.xyxy, [[1, 2, 3, 4]])


def test_semicolons_with_decimal_commas(write):
    p = write("image;label;xmin;ymin;xmax;ymax;score\na;car;1,5;2;3,25;4;0,9\nb;car;1.5;2;3;4;1\n")
    ds = _load(p, "pred")
    np.testing.assert_array_equal(ds.xyxy, [[1.5, 2, 3.25, 4], [1.5, 2, 3, 4]])
    np.testing.assert_array_equal(ds.score, [0.9, 1.0])


def test_quoted_cells_spaces_bom_and_trailing_delimiter(write):
    p = write('\ufeffimage, label, x1, y1, x2, y2,\n"a,1.jpg", traffic light , 0, 0, 2, 3,\n')
    ds = _load(p)
    assert ds.images.ids == ("a,1.jpg",)
    assert ds.categories.ids == ("traffic light",)
    np.testing.assert_array_equal(ds.xyxy, [[0, 0, 2, 3]])


def test_image_only_row_declares_an_image_without_boxes(write):
    p = write("image,label,x1,y1,x2,y2,score\na.jpg,car,0,0,1,1,0.5\nb.jpg,,,,,,\n")
    ds = _load(p, "pred")
    assert ds.images.ids == ("a.jpg", "b.jpg")
    np.testing.assert_array_equal(ds.image_idx, [0])
    np.testing.assert_array_equal(ds.origin, [2])


def test_header_only_is_an_empty_dataset(write):
    ds = _load(write("image,label,x1,y1,x2,y2,score\n"), "pred")
    assert len(ds) == 0 and len(ds.images) == 0


def test_label_id_and_name_columns_together(write):
    p = write("image,category_id,category_name,x1,y1,x2,y2\na,3,dog,0,0,1,1\na,1,cat,0,0,1,1\n")
    ds = _load(p)
    assert ds.categories.ids == (3, 1)
    assert ds.categories.names == ("dog", "cat")


def test_image_id_and_file_name_columns_together(write):
    p = write("image_id,file_name,label,x1,y1,x2,y2\n7,a.jpg,dog,0,0,1,1\n")
    ds = _load(p)
    assert ds.images.ids == (7,)
    assert ds.images.file_names == ("a.jpg",)


def test_an_id_column_beside_a_generic_one_makes_the_generic_one_the_name(write):
    p = write("category,image,image_id,category_id,x1,y1,x2,y2\ndog,a.jpg,7,3,0,0,1,1\n")
    ds = _load(p)
    assert (ds.images.ids, ds.images.file_names) == ((7,), ("a.jpg",))
    assert (ds.categories.ids, ds.categories.names) == ((3,), ("dog",))


def test_integer_labels_index_the_given_names(write):
    p = write("image,label,x1,y1,x2,y2\na,1,0,0,1,1\na,dog,0,0,1,1\n")
    ds = _load(p, names=("cat", "dog", "bird"))
    assert ds.categories.ids == ("cat", "dog", "bird")
    np.testing.assert_array_equal(ds.category_idx, [1, 1])


def test_annotation_ids(write):
    p = write("id,image,label,x1,y1,x2,y2\n5,a,dog,0,0,1,1\n0,a,dog,0,0,1,1\n")
    np.testing.assert_array_equal(_load(p).ann_id, [5, 0])


def test_ambiguous_xywh_columns_follow_the_box_format_option(write):
    p = write("image,label,x,y,w,h\na,dog,25,40,30,40\n")
    np.testing.assert_array_equal(_load(p).xyxy, [[25, 40, 55, 80]])
    ds = _load(p, box_format=BoxFormat.CXCYWH)
    np.testing.assert_array_equal(ds.xyxy, XYXY)
    assert ds.warnings == ()


def test_box_format_option_against_explicit_names_warns(write):
    p = write("image,label,xmin,ymin,xmax,ymax\na,dog,10,20,30,40\n")
    ds = _load(p, box_format=BoxFormat.XYWH)
    np.testing.assert_array_equal(ds.xyxy, XYXY)
    assert len(ds.warnings) == 1
    assert "read as xywh as asked, although their names say xyxy" in ds.warnings[0]


def test_tensorflow_csv_width_height_are_the_image_size(write):
    p = write(
        "filename,width,height,class,xmin,ymin,xmax,ymax\n"
        "a.jpg,640,480,dog,0.25,0.5,0.5,1\n"
        "b.jpg,100,50,cat,0,0,1,1\n"
    )
    ds = _load(p, normalized=True)
    np.testing.assert_array_equal(ds.images.width, [640, 100])
    np.testing.assert_array_equal(ds.images.height, [480, 50])
    np.testing.assert_array_equal(ds.xyxy, [[160, 240, 320, 480], [0, 0, 100, 50]])


def test_plain_width_height_equal_to_the_box_size_are_not_the_image_size(write):
    p = write("image,label,xmin,ymin,xmax,ymax,width,height\na,dog,10,20,40,60,30,40\n")
    ds = _load(p)
    assert np.isnan(ds.images.width).all() and np.isnan(ds.images.height).all()


def test_normalized_with_image_size_columns(write):
    p = write("image,label,cx,cy,w,h,img_width,img_height\na,dog,0.5,0.5,0.5,1,200,100\n")
    ds = _load(p, normalized=True)
    np.testing.assert_allclose(ds.xyxy, [[50, 0, 150, 100]])
    np.testing.assert_array_equal(ds.bbox_area, [100 * 100])


def test_normalized_predictions_take_sizes_from_the_reference_images(write):
    p = write(
        "image,label,x1,y1,x2,y2,score\nfolder/b.jpg,dog,0,0,0.5,0.5,0.9\n7,dog,0,0,1,1,0.8\n"
    )
    ref = ImageTable.build([7, 8], ["a.jpg", "b.jpg"], [640.0, 100.0], [480.0, 50.0])
    ds = by_reference(_load(p, "pred", normalized=True), ref)
    np.testing.assert_allclose(ds.xyxy, [[0, 0, 50, 25], [0, 0, 640, 480]])


def test_detect_format_sees_csv(write):
    assert detect_format(write("image,label,x1,y1,x2,y2\n")) == "csv"
    ds = load(write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\n", "u.txt"), "gt", fmt="csv")
    assert len(ds) == 1


# Bad input: each error names the file, the line and what was found.


def test_empty_file(write):
    p = write("")
    assert str(_error(p)) == f"{p}: file is empty"
    p = write("\n  \n", "blank.csv")
    assert str(_error(p)) == f"{p}: file is empty"


def test_no_header(write):
    p = write("a.jpg,1,10,20,30,40\n")
    err = _error(p)
    assert (err.path, err.where) == (p, 1)
    assert "t.csv:1: expected a header line naming the columns, found data" in str(err)
    assert "'a.jpg,1,10,20,30,40'" in str(err)


def test_unrecognised_box_columns_list_what_was_found(write):
    p = write("image,label,a,b,c,d\nx,y,1,2,3,4\n")
    err = _error(p)
    assert err.where == 1
    assert "t.csv:1: cannot find the four box columns in the header" in str(err)
    assert "(found: image, label, a, b, c, d)" in str(err)
    assert "hint: expected xmin,ymin,xmax,ymax" in str(err)


def test_missing_image_column(write):
    err = _error(write("pic,label,x1,y1,x2,y2\n"))
    assert "cannot find an image column in the header (found: pic, label, x1" in str(err)
    assert "image, image_id" in str(err)


def test_missing_label_column(write):
    err = _error(write("image,kind,x1,y1,x2,y2\n"))
    assert "cannot find a label column in the header (found: image, kind, x1" in str(err)


def test_space_separated_header_gets_a_hint(write):
    err = _error(write("image label x1 y1 x2 y2\n"))
    assert "(found: image label x1 y1 x2 y2)" in str(err)
    assert "separated by commas, tabs or semicolons" in str(err)


def test_predictions_without_a_score_column(write):
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\n")
    err = _error(p, "pred")
    assert "t.csv:1: cannot find a score column for predictions" in str(err)
    assert "is this the ground-truth file?" in str(err)


def test_ground_truth_with_a_score_column_warns(write):
    p = write("image,label,x1,y1,x2,y2,score\na,b,0,0,1,1,0.5\n")
    ds = _load(p)
    assert ds.score is None
    assert "the ground truth has a 'score' column" in ds.warnings[0]


def test_score_that_is_not_a_number(write):
    p = write("image,label,x1,y1,x2,y2,score\n" + "a,b,0,0,1,1,0.5\n" * 5 + "a,b,0,0,1,1,high\n")
    err = _error(p, "pred")
    assert (err.path, err.where) == (p, 7)
    assert str(err) == f"{p}:7: score must be a number, got 'high'"


def test_coordinate_that_is_not_a_number(write):
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\na,b,0,0,1,\n")
    assert "t.csv:3: y2 is empty, expected a number" in str(_error(p))
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\na,b,0,0,1,2px\n", "u.csv")
    assert "u.csv:3: y2 must be a number, got '2px'" in str(_error(p))


def test_missing_label_on_a_box_row(write):
    p = write("image,label,x1,y1,x2,y2\na,,0,0,1,1\n")
    assert "t.csv:2: label is empty, expected a class" in str(_error(p))


def test_wrong_number_of_cells(write):
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\na,b,0,0,1\n")
    err = _error(p)
    assert (err.where, err.message) == (3, "expected 6 cells as in the header, found 5")
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1,9\n", "u.csv")
    err = _error(p)
    assert "u.csv:2: expected 6 cells as in the header, found 7" in str(err)
    assert "needs quotes" in str(err)


def test_flag_that_is_not_a_flag(write):
    p = write("image,label,x1,y1,x2,y2,iscrowd\na,b,0,0,1,1,0\na,b,0,0,1,1,crowd\n")
    assert "t.csv:3: iscrowd must be 0 or 1, got 'crowd'" in str(_error(p))


def test_image_sizes_that_disagree(write):
    p = write("image,label,x1,y1,x2,y2,img_width\na,b,0,0,1,1,640\na,b,0,0,1,1,800\n")
    err = _error(p)
    assert "t.csv:3: img_width 800 differs from the 640 given for the same image on line 2" in (
        str(err)
    )


def test_duplicate_and_competing_columns(write):
    err = _error(write("image,label,x1,y1,x2,y2,label\n"))
    assert "column 'label' appears twice (columns 2 and 7)" in str(err)
    err = _error(write("image,img,label,x1,y1,x2,y2\n", "u.csv"))
    assert "columns 'image' and 'img' could each be the image id" in str(err)
    err = _error(write("image,label,class_name,name,x1,y1,x2,y2\n", "v.csv"))
    assert "columns 'class_name' and 'name' could each be the label name" in str(err)


def test_label_index_out_of_range_of_names(write):
    p = write("image,label,x1,y1,x2,y2\na,5,0,0,1,1\n")
    err = _error(p, names=("cat", "dog"))
    assert "t.csv:2: class index 5 is out of range: 2 names were given" in str(err)


def test_non_integer_annotation_id(write):
    p = write("id,image,label,x1,y1,x2,y2\n1.5,a,b,0,0,1,1\n")
    assert "t.csv:2: id must be an integer, got 1.5" in str(_error(p))


def test_inverted_box_is_reported_with_its_line(write):
    p = write("image,label,x1,y1,x2,y2\na,b,0,0,1,1\n\na,b,5,0,1,1\n")
    assert "t.csv:4: box has x2 < x1 or y2 < y1" in str(_error(p))


def test_not_utf8(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes("image,label,x1,y1,x2,y2\nb\xe9b\xe9,b,0,0,1,1\n".encode("latin-1"))
    err = _error(str(p))
    assert "t.csv:2: not UTF-8 text: byte 0xe9 cannot be decoded" in str(err)


# The two readers: pandas for simple files, the csv module for the rest.

AGREE = {
    "blank lines, spreadsheet rows, spaces, CRLF": (
        "\r\n"
        "image , label,xmin,ymin,xmax,ymax,score,iscrowd,difficult,area,id,img_width,img_height\r\n"
        "a.jpg,car , 1,2,3,4,0.5,0,1,,7,640,480\r\n"
        "\r\n"
        ",,,,,,,,,,,,\r\n"
        "  \r\n"
        "7, traffic light,0.25,0,10,10.5,0.125,true,,3,8,,\r\n"
        "b.jpg,,,,,,,,,,,100,50\r\n"
        "a.jpg,7,5,5,6,6,1e-3,no,yes,1,9,640,\r\n"
        "\r\n"
    ),
    "tsv with unicode": "img\tcls\tx\ty\tw\th\tconf\nstraße.jpg\tfußgänger\t1\t2\t3\t4\t0.9\n",
    "semicolons and decimal commas": (
        "image;label;cx;cy;w;h;score\na;dog;1,5;2;3;4,25;0,75\nb;;;;;;\na;cat;1;2;3;4;1\n"
    ),
    "header only": "image,label,x1,y1,x2,y2,score\n",
    "no final newline": "image,label,x1,y1,x2,y2,score\na,b,0,0,1,1,0.5",
}


def _both(path, role):
    from iou_eval.io.loaders import table

    data, text = table._read_text(path)
    header = table._Header(path, text)
    cols = table._Columns(header, role, None)
    fast = table._FastRows.read(header, data, text, cols.used(), cols.numeric())
    careful = table._ParsedRows(header, text)
    return fast, careful, cols


def _same(a, b):
    assert a.images.ids == b.images.ids
    assert a.images.file_names == b.images.file_names
    np.testing.assert_array_equal(a.images.width, b.images.width)
    np.testing.assert_array_equal(a.images.height, b.images.height)
    assert a.categories == b.categories
    for name in ("image_idx", "category_idx", "xyxy", "bbox_area", "area", "is_crowd"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("ignore", "ann_id", "score", "origin"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.warnings == b.warnings


@pytest.mark.parametrize("case", sorted(AGREE))
@pytest.mark.parametrize("role", ["gt", "pred"])
def test_fast_and_careful_readers_agree(write, case, role):
    from iou_eval.io.loaders.table import _dataset

    p = write(AGREE[case])
    fast, careful, cols = _both(p, role)
    assert fast is not None, "a simple file should take the fast reader"
    options = LoadOptions()
    _same(_dataset(fast, cols, role, options), _dataset(careful, cols, role, options))


def test_the_irregular_file_of_the_first_case_has_the_expected_rows(write):
    p = write(AGREE["blank lines, spreadsheet rows, spaces, CRLF"])
    ds = _load(p, "pred")
    assert ds.images.ids == ("a.jpg", 7, "b.jpg")
    np.testing.assert_array_equal(ds.images.width, [640, np.nan, 100])
    np.testing.assert_array_equal(ds.images.height, [480, np.nan, 50])
    assert ds.categories.ids == ("car", "traffic light", 7)
    np.testing.assert_array_equal(ds.origin, [3, 7, 9])
    np.testing.assert_array_equal(ds.score, [0.5, 0.125, 0.001])
    np.testing.assert_array_equal(ds.is_crowd, [False, True, False])
    np.testing.assert_array_equal(ds.ignore, [True, False, True])
    np.testing.assert_array_equal(ds.area, [4, 3, 1])
    np.testing.assert_array_equal(ds.ann_id, [7, 8, 9])


@pytest.mark.parametrize(
    "text",
    [
        'image,label,x1,y1,x2,y2\n"a,1",b,0,0,1,1\n',  # quotes
        "image,label,x1,y1,x2,y2,\na,b,0,0,1,1,\n",  # trailing delimiter on every line
        "image,label,x1,y1,x2,y2\na,b,0,0,1,1,\n",  # ...on data lines only
        "image,label,x1,y1,x2,y2\na,b,0,0,1,nan\n",  # a number pandas will not read
        "image,label,x1,y1,x2,y2\ra,b,0,0,1,1\r",  # old Mac line ends
    ],
)
def test_irregular_files_take_the_careful_reader(write, text):
    fast, careful, _ = _both(write(text), "gt")
    assert fast is None
    assert len(careful) == 1
