"""The text loaders: per-image ``.txt`` files and devkit results files."""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import ImageTable
from iou_eval.data.reconcile import scale_fractions
from iou_eval.errors import InputError
from iou_eval.io.loaders import LoadOptions, detect_format, load
from iou_eval.io.loaders.registry import get
from iou_eval.io.loaders.text import load_txt, load_voc_results, results_class

from ..conftest import by_reference


def _write(folder, name, text, encoding="utf-8"):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return str(p)


def _error(loader, path, role="gt", options=None) -> InputError:
    with pytest.raises(InputError) as info:
        loader(str(path), role, options or LoadOptions())
    return info.value


def _cites(err: InputError, file: str, line: int, *found: str) -> str:
    """``str(err)`` after checking it starts with ``file:line:`` and names ``found``."""
    text = str(err)
    assert text.startswith(f"{file}:{line}: "), text
    for f in found:
        assert f in text, text
    return text


# --- txt: ground truth -------------------------------------------------------


def test_gt_folder_reads_boxes_difficult_ids_and_categories_in_file_order(tmp_path):
    """Two files, read in sorted name order (00002 is written first)::

    00001.txt  line 2  dog    10,20 w30 h40
               line 4  person  0, 0 w 5 h 5  difficult
    00002.txt  line 1  person 100,50 w10 h20  (tab separated, difficult 0)
    """
    d = tmp_path / "gt"
    _write(d, "00002.txt", "person\t100 50\t 10 20 0\n")
    _write(d, "00001.txt", "# class x y w h\ndog 10 20 30 40\n\n  person 0 0 5 5 1\n")
    ds = load_txt(str(d), "gt", LoadOptions())

    assert ds.format == "txt"
    assert ds.images.ids == ("00001", "00002")
    assert ds.categories.ids == ("dog", "person")
    assert ds.categories.names == ("dog", "person")
    assert ds.image_idx.tolist() == [0, 0, 1]
    assert ds.category_idx.tolist() == [0, 1, 1]
    assert ds.xyxy.tolist() == [[10, 20, 40, 60], [0, 0, 5, 5], [100, 50, 110, 70]]
    assert ds.area.tolist() == [1200, 25, 200]
    assert ds.ignore.tolist() == [False, True, False]
    assert ds.is_crowd.tolist() == [False, False, False]
    assert ds.score is None
    assert ds.origin.tolist() == [2, 4, 1]
    assert ds.origin_file.tolist() == [0, 0, 1]
    assert ds.files == (str(d / "00001.txt"), str(d / "00002.txt"))
    assert ds.where(1) == (str(d / "00001.txt"), "4")


def test_empty_image_file_is_still_an_image(tmp_path):
    """00001 has a box, 00002 is an empty file, 00003 holds only a comment."""
    d = tmp_path / "gt"
    _write(d, "00001.txt", "cat 1 2 3 4\n")
    _write(d, "00002.txt", "")
    _write(d, "00003.txt", "# nothing here\n")
    ds = load_txt(str(d), "gt", LoadOptions())
    assert ds.images.ids == ("00001", "00002", "00003")
    assert ds.image_idx.tolist() == [0]


def test_folder_of_empty_files_has_images_and_no_rows(tmp_path):
    d = tmp_path / "pred"
    _write(d, "a.txt", "")
    ds = load_txt(str(d), "pred", LoadOptions())
    assert ds.images.ids == ("a",)
    assert len(ds) == 0
    assert ds.score is not None and ds.score.shape == (0,)
    assert ds.xyxy.shape == (0, 4)


def test_single_file_is_one_image(tmp_path):
    p = _write(tmp_path, "img_7.txt", "cat 1 2 3 4\ncat 5 6 7 8\n")
    ds = load_txt(p, "gt", LoadOptions())
    assert ds.images.ids == ("img_7",)
    assert ds.image_idx.tolist() == [0, 0]
    assert ds.files == (p,)


def test_non_txt_and_hidden_files_in_the_folder_are_skipped(tmp_path):
    d = tmp_path / "gt"
    _write(d, "00001.txt", "cat 1 2 3 4\n")
    _write(d, "._00001.txt", b"\x00\x05\x16\x07")
    _write(d, "00001.jpg", b"\xff\xd8")
    (d / "sub.txt").mkdir()
    ds = load_txt(str(d), "gt", LoadOptions())
    assert ds.images.ids == ("00001",)


def test_stem_ids_stay_strings_with_their_leading_zeros(tmp_path):
    d = tmp_path / "gt"
    _write(d, "007.txt", "cat 1 2 3 4\n")
    ds = load_txt(str(d), "gt", LoadOptions())
    assert ds.images.ids == ("007",)
    assert isinstance(ds.images.ids[0], str)


# --- txt: predictions --------------------------------------------------------


def test_predictions_read_class_score_box_in_file_order(tmp_path):
    """Scores tie at .5: rows keep file order (00001 before 00002, then line order)."""
    d = tmp_path / "pred"
    _write(d, "00002.txt", "dog .5 0 0 10 10\n")
    _write(d, "00001.txt", "cat .5 1 2 3 4\ncat 0.25 5 6 7 8\n")
    ds = load_txt(str(d), "pred", LoadOptions())
    assert ds.score.tolist() == [0.5, 0.25, 0.5]
    assert ds.xyxy.tolist() == [[1, 2, 4, 6], [5, 6, 12, 14], [0, 0, 10, 10]]
    assert ds.bbox_area.tolist() == [12, 56, 100]
    assert ds.image_idx.tolist() == [0, 0, 1]
    assert ds.categories.ids == ("cat", "dog")
    assert ds.ignore.tolist() == [False, False, False]


def test_box_format_option_reads_xyxy(tmp_path):
    d = tmp_path / "pred"
    _write(d, "a.txt", "cat 0.9 10 20 30 60\n")
    ds = load_txt(str(d), "pred", LoadOptions(box_format=BoxFormat.XYXY))
    assert ds.xyxy.tolist() == [[10, 20, 30, 60]]
    assert ds.bbox_area.tolist() == [800]


# --- txt: classes ------------------------------------------------------------


def test_integer_classes_index_the_given_names_and_every_name_is_a_category(tmp_path):
    """names: cat dog bird; lines use index 1, the name cat, index 0 — bird has no box."""
    d = tmp_path / "gt"
    _write(d, "a.txt", "1 0 0 1 1\ncat 0 0 2 2\n0 0 0 3 3\n")
    ds = load_txt(str(d), "gt", LoadOptions(names=("cat", "dog", "bird")))
    assert ds.categories.ids == ("cat", "dog", "bird")
    assert ds.categories.names == ("cat", "dog", "bird")
    assert ds.category_idx.tolist() == [1, 0, 0]


def test_integer_class_without_names_is_an_integer_id(tmp_path):
    """``07`` and ``7`` are the same class 7; ``3`` comes second."""
    d = tmp_path / "gt"
    _write(d, "a.txt", "07 0 0 1 1\n3 0 0 1 1\n7 0 0 1 1\n")
    ds = load_txt(str(d), "gt", LoadOptions())
    assert ds.categories.ids == (7, 3)
    assert ds.categories.names == ("7", "3")
    assert ds.category_idx.tolist() == [0, 1, 0]


# --- txt: normalized ---------------------------------------------------------


def test_normalized_defaults_to_cxcywh_scaled_by_image_size(tmp_path):
    """A 200x100 image: centre (0.5, 0.5), size 0.2 x 0.4 -> 80,30-120,70."""
    d = tmp_path / "gt"
    _write(d, "a.txt", "cat 0.5 0.5 0.2 0.4\n")
    ds = scale_fractions(load_txt(str(d), "gt", LoadOptions(normalized=True)), (200, 100))
    assert ds.xyxy.tolist() == [[80, 30, 120, 70]]
    assert ds.bbox_area.tolist() == [1600]
    assert ds.images.width.tolist() == [200]
    assert ds.images.height.tolist() == [100]


def test_normalized_predictions_take_sizes_from_reference_images_by_stem(tmp_path):
    """Reference ids are integers; a.txt and b.txt find a.jpg (100x50) and b.jpg (400x300)."""
    ref = ImageTable.build([1, 2], ["a.jpg", "b.jpg"], [100, 400], [50, 300])
    d = tmp_path / "pred"
    _write(d, "b.txt", "cat 0.9 0.5 0.5 0.5 0.5\n")
    _write(d, "a.txt", "cat 0.8 0.5 0.5 0.5 0.5\n")
    ds = by_reference(load_txt(str(d), "pred", LoadOptions(normalized=True)), ref, (9, 9))
    assert ds.xyxy.tolist() == [[25, 12.5, 75, 37.5], [100, 75, 300, 225]]
    assert ds.images.width.tolist() == [100, 400]


def test_normalized_image_missing_from_reference_falls_back_to_image_size(tmp_path):
    ref = ImageTable.build(["a"], None, [100], [50])
    d = tmp_path / "pred"
    _write(d, "a.txt", "cat 0.9 0.5 0.5 1 1\n")
    _write(d, "z.txt", "cat 0.9 0.5 0.5 1 1\n")
    ds = by_reference(load_txt(str(d), "pred", LoadOptions(normalized=True)), ref, (10, 20))
    assert ds.xyxy.tolist() == [[0, 0, 100, 50], [0, 0, 10, 20]]


def test_normalized_image_missing_from_reference_without_image_size(tmp_path):
    ref = ImageTable.build(["a"], None, [100], [50])
    d = tmp_path / "pred"
    _write(d, "a.txt", "cat 0.9 0.5 0.5 1 1\n")
    z = _write(d, "z.txt", "\ncat 0.9 0.5 0.5 1 1\n")
    ds = load_txt(str(d), "pred", LoadOptions(normalized=True))
    with pytest.raises(InputError) as info:
        by_reference(ds, ref)
    err = info.value
    text = _cites(err, z, 2, "'z'", "the ground truth has no such image", "--image-size WxH")
    assert "hint:" in text


def test_normalized_without_any_size_says_how_to_give_one(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 0.5 0.5 0.2 0.4\n")
    ds = load_txt(str(d), "gt", LoadOptions(normalized=True))
    with pytest.raises(InputError) as info:
        scale_fractions(ds, None)
    _cites(info.value, p, 1, "'a'", "--image-size WxH", "sizes in the ground truth")


def test_normalized_image_without_boxes_needs_no_size(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.txt", "")
    ds = load_txt(str(d), "gt", LoadOptions(normalized=True))
    assert ds.images.ids == ("a",)
    assert np.isnan(ds.images.width).all()


def test_fractions_without_normalized_are_refused_with_a_hint(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.txt", "cat 0 0 1 1\n")
    b = _write(d, "b.txt", "cat 0.5 0.25 0.2 0.4\n")
    err = _error(load_txt, d)
    _cites(err, b, 1, "coordinates look normalized", "0.5 0.25 0.2 0.4", "pass --normalized")


def test_small_integer_boxes_are_not_taken_for_normalized(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.txt", "cat 0 0 1 1\n")
    ds = load_txt(str(d), "gt", LoadOptions())
    assert ds.xyxy.tolist() == [[0, 0, 1, 1]]


def test_normalized_boxes_with_pixel_sized_numbers_carry_a_warning(tmp_path):
    """The doubt is the plausibility check's (it knows which flag was given)."""
    from iou_eval.data.plausibility import scale_doubts

    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 0.5 0.5 0.2 0.2\ncat 120 80 30 40\n")
    ds = load_txt(str(d), "gt", LoadOptions(normalized=True))
    (w,) = scale_doubts(ds, "gt", True, False)
    assert f"{p}:2" in w
    assert "are they pixels" in w


# --- txt: errors -------------------------------------------------------------


def test_prediction_line_with_too_few_fields(tmp_path):
    d = tmp_path / "pred"
    p = _write(d, "00003.txt", "cat .9 1 2 3 4\ncat .8 1 2 3 4\n\ncat 1 2 3 4\n")
    err = _error(load_txt, d, "pred")
    _cites(err, p, 4, "expected 'class score x y w h' (6 fields), got 5", "ground truth?")


def test_gt_line_with_too_few_fields_names_the_box_format(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 1 2 3\n")
    err = _error(load_txt, d, "gt", LoadOptions(box_format=BoxFormat.XYXY))
    _cites(err, p, 1, "'class x1 y1 x2 y2'", "(5 or 6 fields), got 4")


def test_class_names_file_in_the_folder_gets_a_hint(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.txt", "cat 1 2 3 4\n")
    p = _write(d, "classes.txt", "cat\ndog\n")
    err = _error(load_txt, d)
    _cites(err, p, 1, "got 1", "--names")


def test_number_that_is_not_a_number(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.txt", "cat 1 2 3 4\n")
    p = _write(d, "b.txt", "cat 1 2 3 4\ncat 1 2 abc 4\n")
    err = _error(load_txt, d)
    _cites(err, p, 2, "expected a number for w, got 'abc'")


def test_score_that_is_not_a_number(tmp_path):
    d = tmp_path / "pred"
    p = _write(d, "a.txt", "cat high 1 2 3 4\n")
    err = _error(load_txt, d, "pred")
    _cites(err, p, 1, "expected a number for score, got 'high'")


def test_non_finite_box_number(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 1 2 3 4\ncat 1 nan 3 4\n")
    err = _error(load_txt, d)
    _cites(err, p, 2, "expected a finite number for y, got 'nan'")


def test_non_finite_score(tmp_path):
    d = tmp_path / "pred"
    p = _write(d, "a.txt", "cat inf 1 2 3 4\n")
    err = _error(load_txt, d, "pred")
    _cites(err, p, 1, "expected a finite number for score, got 'inf'")


def test_class_index_outside_the_names(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "0 1 2 3 4\n5 1 2 3 4\n")
    err = _error(load_txt, d, "gt", LoadOptions(names=("cat", "dog")))
    _cites(err, p, 2, "class index 5 is out of range: 2 names were given (0..1)", "cat, dog")


def test_class_name_not_among_the_names(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "dgo 1 2 3 4\n")
    err = _error(load_txt, d, "gt", LoadOptions(names=("cat", "dog")))
    _cites(err, p, 1, "class 'dgo' is not among the given names", "cat, dog")


def test_difficult_that_is_not_a_flag(tmp_path):
    """A predictions file given as ground truth: the 6th token is a box number."""
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 0 1 2 3 1\ncat .88 5 67 31 48\n")
    err = _error(load_txt, d)
    _cites(err, p, 2, "expected 0 or 1 for difficult (6th field), got '48'", "predictions")


def test_inverted_box_is_reported_by_the_shared_checks(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", "cat 1 2 3 4\ncat 1 2 -3 4\n")
    err = _error(load_txt, d)
    _cites(err, p, 2, "negative width or height", "-3.0")


def test_folder_without_txt_files(tmp_path):
    d = tmp_path / "gt"
    _write(d, "a.jpg", b"\xff\xd8")
    err = _error(load_txt, d)
    text = str(err)
    assert text.startswith(f"{d}: expected per-image .txt files in this folder, found none")
    assert "a.jpg" in text


def test_file_that_is_not_utf8(tmp_path):
    d = tmp_path / "gt"
    p = _write(d, "a.txt", b"cat 1 2 3 4\ncaf\xe9 1 2 3 4\n")
    err = _error(load_txt, d)
    _cites(err, p, 2, "expected UTF-8 text", "0xe9")


def test_two_files_for_one_image(tmp_path):
    d = tmp_path / "gt"
    first = _write(d, "a.TXT", "")  # sorts before a.txt
    second = _write(d, "a.txt", "")
    err = _error(load_txt, d)
    assert str(err).startswith(f"{second}: image id 'a' is also the id of {first}")


# --- voc-results -------------------------------------------------------------


def test_devkit_results_folder_reads_classes_from_file_names(tmp_path):
    """comp4_det_test_cat: 000005 (.9) and 000007 (.9, a tie kept in file order);
    comp4_det_test_dog: 000005 (.3); comp4_det_test_traffic_light: empty."""
    d = tmp_path / "results"
    _write(d, "comp4_det_test_traffic_light.txt", "")
    _write(d, "comp4_det_test_dog.txt", "000005 0.3 1 2 11 22\n")
    _write(d, "comp4_det_test_cat.txt", "000005 0.9 10 20 30 60\n\n000007 .9 0 0 5 5\n")
    ds = load_voc_results(str(d), "pred", LoadOptions())

    assert ds.format == "voc-results"
    assert ds.categories.ids == ("cat", "dog", "traffic_light")
    assert ds.images.ids == ("000005", "000007")
    assert ds.image_idx.tolist() == [0, 1, 0]
    assert ds.category_idx.tolist() == [0, 0, 1]
    assert ds.score.tolist() == [0.9, 0.9, 0.3]
    assert ds.xyxy.tolist() == [[10, 20, 30, 60], [0, 0, 5, 5], [1, 2, 11, 22]]
    assert ds.bbox_area.tolist() == [800, 25, 200]
    assert ds.origin.tolist() == [1, 3, 1]
    assert ds.origin_file.tolist() == [0, 0, 1]
    assert ds.files[0] == str(d / "comp4_det_test_cat.txt")


def test_devkit_results_single_file(tmp_path):
    p = _write(tmp_path, "comp3_det_val_sofa.txt", "2008_000001 0.5 1 1 2 2\n")
    ds = load_voc_results(p, "pred", LoadOptions())
    assert ds.categories.ids == ("sofa",)
    assert ds.images.ids == ("2008_000001",)


def test_devkit_results_with_names_keep_every_name(tmp_path):
    d = tmp_path / "results"
    _write(d, "comp4_det_test_dog.txt", "1 0.5 1 1 2 2\n")
    ds = load_voc_results(str(d), "pred", LoadOptions(names=("cat", "dog")))
    assert ds.categories.ids == ("cat", "dog")
    assert ds.category_idx.tolist() == [1]


def test_devkit_results_box_format_option(tmp_path):
    p = _write(tmp_path, "comp4_det_test_cat.txt", "5 0.5 10 20 30 40\n")
    ds = load_voc_results(p, "pred", LoadOptions(box_format=BoxFormat.XYWH))
    assert ds.xyxy.tolist() == [[10, 20, 40, 60]]


@pytest.mark.parametrize(
    ("stem", "cls"),
    [
        ("comp4_det_test_cat", "cat"),
        ("comp4_det_test_traffic_light", "traffic_light"),
        ("comp4_det_trainval_pottedplant", "pottedplant"),
        ("run_det_a_det_val_cow", "cow"),
        ("results_cat", "cat"),
        ("cat", "cat"),
    ],
)
def test_results_class_rule(stem, cls):
    assert results_class(stem) == cls


def test_devkit_results_as_ground_truth_is_refused(tmp_path):
    p = _write(tmp_path, "comp4_det_test_cat.txt", "5 0.5 1 1 2 2\n")
    err = _error(load_voc_results, p, "gt")
    assert "hold detections" in str(err)
    assert str(err).startswith(f"{p}: ")


def test_devkit_results_line_with_wrong_field_count(tmp_path):
    p = _write(tmp_path, "comp4_det_test_cat.txt", "5 0.5 1 1 2 2\n5 1 1 2 2\n")
    err = _error(load_voc_results, p, "pred")
    _cites(err, p, 2, "expected 'image_id score x1 y1 x2 y2' (6 fields), got 5")


def test_devkit_results_score_that_is_not_a_number(tmp_path):
    p = _write(tmp_path, "comp4_det_test_cat.txt", "5 0.5 1 1 2 2\n6 x 1 1 2 2\n")
    err = _error(load_voc_results, p, "pred")
    _cites(err, p, 2, "expected a number for score, got 'x'")


def test_devkit_results_two_files_for_one_class(tmp_path):
    d = tmp_path / "results"
    first = _write(d, "comp3_det_test_cat.txt", "")
    second = _write(d, "comp4_det_test_cat.txt", "")
    err = _error(load_voc_results, d, "pred")
    assert str(err).startswith(f"{second}: class 'cat' already came from {first}")


def test_devkit_results_class_not_among_the_names(tmp_path):
    p = _write(tmp_path, "comp4_det_test_kat.txt", "")
    err = _error(load_voc_results, p, "pred", LoadOptions(names=("cat", "dog")))
    assert str(err).startswith(f"{p}: class 'kat' (from the file name) is not among")


def test_devkit_results_file_name_without_a_class(tmp_path):
    p = _write(tmp_path, "results_.txt", "")
    err = _error(load_voc_results, p, "pred")
    assert str(err).startswith(f"{p}: expected the class at the end of the file name")


# --- detection and registry --------------------------------------------------


def test_both_formats_are_registered(tmp_path):
    assert get("txt").reader == "text:load_txt"
    assert get("voc-results").reader == "text:load_voc_results"
    d = tmp_path / "pred"
    _write(d, "a.txt", "cat 0.5 1 1 2 2\n")
    assert load(str(d), "pred", fmt="txt").format == "txt"


def test_detect_format_folder_of_per_image_txt(tmp_path):
    d = tmp_path / "labels"
    _write(d, "00001.txt", "cat 1 2 3 4\n")
    _write(d, "._00001.xml", b"\x00")  # macOS resource file: not VOC XML
    assert detect_format(str(d)) == "txt"
    assert load(str(d)).format == "txt"


def test_detect_format_folder_of_devkit_results(tmp_path):
    d = tmp_path / "results"
    _write(d, "comp4_det_test_cat.txt", "5 0.5 1 1 2 2\n")
    _write(d, "comp4_det_test_dog.txt", "")
    assert detect_format(str(d)) == "voc-results"
    assert load(str(d), "pred").format == "voc-results"


def test_detect_format_mixed_folder_is_per_image(tmp_path):
    d = tmp_path / "labels"
    _write(d, "comp4_det_test_cat.txt", "")
    _write(d, "00001.txt", "")
    assert detect_format(str(d)) == "txt"


def test_detect_format_single_devkit_results_file(tmp_path):
    p = _write(tmp_path, "comp4_det_test_cat.txt", "000005 0.5 1 1 2 2\n")
    assert detect_format(p) == "voc-results"
