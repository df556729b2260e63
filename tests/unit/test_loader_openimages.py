"""Open Images CSV (``iou_eval.io.loaders.openimages``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import InputError
from iou_eval.io.loaders import load
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.openimages import (
    load_openimages,
    looks_like_openimages,
    read_class_descriptions,
)

from .formats_helpers import register, write

HEADER = "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside\n"
ACCEPTANCE = Path("/work/shared/acceptance/cases/03_rdm_voc_database_100")


def test_columns_x_x_y_y_become_xyxy_fractions_of_a_unit_image(tmp_path):
    f = write(tmp_path / "gt.csv", HEADER
              + "img1,xclick,/m/01g317,1,0.1,0.5,0.2,0.6,0,1,0,0,0\n"
              + "img1,xclick,/m/01g317,1,0.0,1.0,0.0,1.0,-1,-1,1,-1,-1\n")  # fmt: skip
    d = load_openimages(str(f), "gt", LoadOptions())
    assert d.format == "openimages" and d.images.ids == ("img1",)
    assert d.images.width.tolist() == [1.0] and d.images.height.tolist() == [1.0]
    np.testing.assert_array_equal(d.xyxy, [[0.1, 0.2, 0.5, 0.6], [0, 0, 1, 1]])
    assert d.is_crowd.tolist() == [False, True]  # IsGroupOf = 1: a crowd region
    assert d.categories.ids == ("/m/01g317",)
    assert "APs, APm, APl, ARs, ARm and ARl are left undefined (null)" in d.warnings[0]


def test_predictions_columns_in_any_order(tmp_path):
    f = write(
        tmp_path / "p.csv",
        "Score,XMin,YMin,XMax,YMax,ImageID,LabelName\n0.7,0.1,0.2,0.5,0.6,i,/m/x\n",
    )
    d = load_openimages(str(f), "pred", LoadOptions())
    assert d.score.tolist() == [0.7]
    np.testing.assert_array_equal(d.xyxy, [[0.1, 0.2, 0.5, 0.6]])


def test_names_from_class_descriptions_with_or_without_header(tmp_path):
    write(tmp_path / "a.csv", "/m/01g317,Person\n/m/0k4j,Car\n")
    write(tmp_path / "b.csv", 'LabelName,DisplayName\n/m/0k4j,"Car, small"\n')
    assert read_class_descriptions(str(tmp_path / "a.csv")) == {
        "/m/01g317": "Person",
        "/m/0k4j": "Car",
    }
    assert read_class_descriptions(str(tmp_path / "b.csv")) == {"/m/0k4j": "Car, small"}
    f = write(tmp_path / "gt.csv", HEADER + "i,x,/m/0k4j,1,0.1,0.5,0.2,0.6,0,0,0,0,0\n")
    d = load_openimages(str(f), "gt", LoadOptions(names=("/m/0k4j,Car", "/m/01g317,Person")))
    assert d.categories.ids == ("/m/0k4j",) and d.categories.names == ("Car",)


def test_folder_with_image_list_and_descriptions(tmp_path):
    """img2 is only in the image list: an image without boxes."""
    write(
        tmp_path / "validation-annotations-bbox.csv",
        HEADER + "img1,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\n",
    )
    write(
        tmp_path / "validation-images-with-rotation.csv",
        "ImageID,Subset,Rotation\nimg1,validation,0\nimg2,validation,\n",
    )
    write(tmp_path / "class-descriptions.csv", "/m/a,Apple\n")
    write(
        tmp_path / "preds.csv",
        "ImageID,LabelName,Score,XMin,XMax,YMin,YMax\nimg2,/m/a,0.5,0.1,0.5,0.2,0.6\n",
    )
    gt = load_openimages(str(tmp_path), "gt", LoadOptions())
    assert gt.images.ids == ("img1", "img2") and len(gt) == 1
    assert gt.categories.names == ("Apple",)
    pred = load_openimages(str(tmp_path), "pred", LoadOptions())
    assert pred.score.tolist() == [0.5]
    assert looks_like_openimages(str(tmp_path)) and looks_like_openimages(
        str(tmp_path / "preds.csv")
    )
    assert not looks_like_openimages(str(tmp_path / "class-descriptions.csv"))


def test_decimal_commas_quoted_or_semicolon_separated(tmp_path):
    quoted = write(tmp_path / "q.csv", HEADER + 'i,,/m/a,,"0,25","0,75","0,5",1,,,,,\n')
    semi = write(tmp_path / "s.csv", HEADER.replace(",", ";") + "i;;/m/a;;0,25;0,75;0,5;1;;;;;\n")
    for f in (quoted, semi):
        np.testing.assert_array_equal(
            load_openimages(str(f), "gt", LoadOptions()).xyxy, [[0.25, 0.5, 0.75, 1]]
        )


def test_unquoted_decimal_comma_is_refused_with_the_line(tmp_path):
    f = write(
        tmp_path / "g.csv",
        HEADER + "i,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\ni,x,/m/a,1,0,25,0.5,0.2,0.6,0,0,0,0,0\n",
    )
    with pytest.raises(InputError) as e:
        load_openimages(str(f), "gt", LoadOptions())
    assert str(e.value).startswith(f"{f}:3: expected 13 cells as in the header, found 14")
    assert "quote such numbers" in str(e.value)


@pytest.mark.parametrize(
    "row, message",
    [
        ("i,x,/m/a,1,0.1,0.5,0.2,abc,0,0,0,0,0", "expected a number for YMax, got 'abc'"),
        ("i,x,/m/a,1,10,50,20,60,0,0,0,0,0", "fractions of the image in [0, 1]"),
        ("i,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,2,0,0", "expected 1, 0 or -1 for IsGroupOf, got '2'"),
        ("i,x,/m/a,1,0.5,0.1,0.2,0.6,0,0,0,0,0", "x2 < x1"),
    ],
)
def test_errors_cite_file_and_line(tmp_path, row, message):
    f = write(tmp_path / "g.csv", HEADER + "i,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\n" + row + "\n")
    with pytest.raises(InputError) as e:
        load_openimages(str(f), "gt", LoadOptions())
    assert str(e.value).startswith(f"{f}:3: ") and message in str(e.value)


def test_missing_columns_and_predictions_without_score(tmp_path):
    f = write(tmp_path / "g.csv", HEADER)
    with pytest.raises(InputError, match="missing Score") as e:
        load_openimages(str(f), "pred", LoadOptions())
    assert "is this the ground truth?" in str(e.value)


def test_gz_bom_and_crlf(tmp_path):
    text = HEADER + "i,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\n"
    for name, kw in (("a.csv.gz", {"gz": True}), ("b.csv", {"bom": True, "crlf": True})):
        d = load_openimages(str(write(tmp_path / name, text, **kw)), "gt", LoadOptions())
        np.testing.assert_array_equal(d.xyxy, [[0.1, 0.2, 0.5, 0.6]])


def test_scale_free_numbers_through_the_api(tmp_path, monkeypatch):
    """One hit, one miss, one false positive: AP50 at recall 1/2 with precision 1 -> 0.5."""
    register(monkeypatch)
    gt = write(
        tmp_path / "gt.csv",
        HEADER + "i,x,/m/a,1,0.1,0.5,0.2,0.6,0,0,0,0,0\ni,x,/m/a,1,0.6,0.9,0.6,0.9,0,0,0,0,0\n",
    )
    pred = write(
        tmp_path / "p.csv",
        "ImageID,LabelName,Score,XMin,XMax,YMin,YMax\ni,/m/a,0.9,0.1,0.5,0.2,0.6\ni,/m/a,0.2,0,0.05,0,0.05\n",
    )
    r = evaluate(str(gt), str(pred), gt_format="openimages", pred_format="openimages")
    assert r.results[0].summary["AP50"] == pytest.approx(
        0.5049504950495051
    )  # 51 of 101 recall points


@pytest.mark.skipif(not ACCEPTANCE.exists(), reason="acceptance cases not present")
def test_acceptance_case_03_decimal_commas_give_the_voc_boxes():
    """Quoted decimal commas; the boxes equal the VOC XML twin's divided by its image sizes."""
    oi = load_openimages(
        str(ACCEPTANCE / "gts/openimages_format/all_bounding_boxes.csv"), "gt", LoadOptions()
    )
    voc = load(str(ACCEPTANCE / "gts/pascalvoc_format"), "gt")
    assert (len(oi), len(oi.images)) == (273, 100)
    key = {f"{i}.jpg": j for j, i in enumerate(voc.images.ids)}
    j = np.array([key[oi.images.ids[i]] for i in oi.image_idx])
    size = np.stack([voc.images.width[j], voc.images.height[j]] * 2, axis=1)
    ours = sorted((int(a), *np.round(b, 3)) for a, b in zip(j, oi.xyxy * size, strict=True))
    theirs = sorted((int(a), *np.round(b, 3)) for a, b in zip(voc.image_idx, voc.xyxy, strict=True))
    assert ours == theirs
