"""CVAT for images 1.1 XML (``iou_eval.io.loaders.cvat_xml``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import InputError
from iou_eval.io.loaders.common import LoadOptions
from iou_eval.io.loaders.cvat_xml import load_cvat_xml, looks_like_cvat_xml, read_cvat_xml

from .formats_helpers import register, write


def cvat(path: Path, images: str, **kw) -> Path:
    text = (
        '<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n'
        f"  <meta><task><name>t</name></task></meta>\n{images}</annotations>\n"
    )
    return write(path, text, **kw)


GT = """  <image id="0" name="dir/a.jpg" width="100" height="50">
    <box label="cat" occluded="1" xtl="40.00" ytl="15.00" xbr="60.00" ybr="35.00" z_order="0"/>
    <polygon label="dog" occluded="0" points="10.00,10.00;50.00,10.00;30.00,40.00" z_order="0"/>
    <box label="cat" occluded="0" xtl="0.00" ytl="0.00" xbr="99.00" ybr="49.00" z_order="0">
      <attribute name="is_crowd">true</attribute>
      <attribute name="difficult">1</attribute>
    </box>
    <polyline label="cat" occluded="0" points="1,1;2,2" z_order="0"/>
  </image>
  <image id="1" name="b.jpg" width="200" height="100"/>
"""


def test_boxes_polygons_empty_images_and_attributes(tmp_path):
    d, polygons = read_cvat_xml(str(cvat(tmp_path / "gt.xml", GT)), "gt", LoadOptions())
    assert d.format == "cvat-xml"
    assert d.images.ids == ("dir/a.jpg", "b.jpg")  # b: no objects, still an image
    assert d.images.width.tolist() == [100, 200] and d.images.height.tolist() == [50, 100]
    np.testing.assert_array_equal(d.xyxy, [[40, 15, 60, 35], [10, 10, 50, 40], [0, 0, 99, 49]])
    assert polygons[0] is None and polygons[2] is None
    np.testing.assert_array_equal(polygons[1], [10, 10, 50, 10, 30, 40])
    assert d.is_crowd.tolist() == [False, False, True]
    assert d.ignore.tolist() == [False, False, True]
    assert d.categories.names == ("cat", "dog")
    assert "1 CVAT <polyline> element(s) skipped" in d.warnings[0]
    assert 'image[0] name="dir/a.jpg" > polyline[3]' in d.warnings[0]


def test_prediction_score_attribute_and_missing_score(tmp_path):
    pred = cvat(tmp_path / "p.xml", """  <image id="0" name="a.jpg" width="100" height="50">
    <box label="cat" occluded="0" xtl="1" ytl="1" xbr="5" ybr="5"><attribute name="score">0.8</attribute></box>
    <box label="cat" occluded="0" xtl="1" ytl="1" xbr="5" ybr="5"/>
  </image>
""")  # fmt: skip
    with pytest.raises(InputError) as e:
        load_cvat_xml(str(pred), "pred", LoadOptions())
    assert str(e.value).startswith(
        f'{pred}:image[0] name="a.jpg" > box[1]: prediction has no score'
    )


@pytest.mark.parametrize(
    "element, message",
    [
        (
            '<box label="cat" xtl="1" ytl="1" xbr="5" ybr="5" rotation="30.0"/>',
            "a rotated box (rotation=30.0)",
        ),
        ('<box label="cat" xtl="1" ytl="x" xbr="5" ybr="5"/>', "ytl must be a number, got 'x'"),
        ('<polygon label="cat" points="1,1;2"/>', "points must be finite 'x,y' pairs"),
        ('<box xtl="1" ytl="1" xbr="5" ybr="5"/>', "<box> has no label"),
    ],
)
def test_errors_cite_image_and_element(tmp_path, element, message):
    f = cvat(
        tmp_path / "gt.xml",
        f'  <image id="0" name="a.jpg" width="9" height="9">{element}</image>\n',
    )
    with pytest.raises(InputError) as e:
        load_cvat_xml(str(f), "gt", LoadOptions())
    assert str(e.value).startswith(f'{f}:image[0] name="a.jpg" > ') and message in str(e.value)


def test_zero_rotation_is_an_ordinary_box(tmp_path):
    f = cvat(
        tmp_path / "gt.xml",
        '  <image id="0" name="a.jpg"><box label="c" xtl="1" ytl="1" xbr="5" ybr="5" rotation="0.0"/></image>\n',
    )
    assert len(load_cvat_xml(str(f), "gt", LoadOptions())) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ('<!DOCTYPE a [<!ENTITY x "y">]>\n<annotations/>', "declares a DTD or entities"),
        ("<annotations><image name='a'></annotations>", "malformed XML"),
        ("<annotation><filename>a</filename></annotation>", "expected a CVAT <annotations> root"),
        ("<annotations><track id='0' label='c'/></annotations>", "CVAT for video"),
    ],
)
def test_refused_documents(tmp_path, text, message):
    f = write(tmp_path / "x.xml", text)
    with pytest.raises(InputError) as e:
        load_cvat_xml(str(f), "gt", LoadOptions())
    assert message in str(e.value) and str(f) in str(e.value)


def test_gz_bom_crlf_folder_and_detection(tmp_path):
    cvat(tmp_path / "zip/annotations.xml.gz", GT, gz=True)
    f = cvat(tmp_path / "annotations.xml", GT, bom=True, crlf=True)
    assert len(load_cvat_xml(str(tmp_path / "zip/annotations.xml.gz"), "gt", LoadOptions())) == 3
    assert len(load_cvat_xml(str(tmp_path), "gt", LoadOptions())) == 3  # the folder's file
    assert looks_like_cvat_xml(str(f)) and looks_like_cvat_xml(str(tmp_path))
    voc = write(tmp_path / "voc.xml", "<annotation><filename>a.jpg</filename></annotation>")
    assert not looks_like_cvat_xml(str(voc))


def test_evaluate_through_the_api(tmp_path, monkeypatch):
    """The crowd box swallows the prediction inside it: no false positive; cat found, dog missed."""
    register(monkeypatch)
    gt = cvat(tmp_path / "gt.xml", GT)
    pred = cvat(tmp_path / "p.xml", """  <image id="0" name="dir/a.jpg" width="100" height="50">
    <box label="cat" xtl="40" ytl="15" xbr="60" ybr="35"><attribute name="score">0.9</attribute></box>
    <box label="cat" xtl="70" ytl="5" xbr="90" ybr="45"><attribute name="score">0.8</attribute></box>
  </image>
""")  # fmt: skip
    r = evaluate(str(gt), str(pred), gt_format="cvat-xml", pred_format="cvat-xml")
    cat = r.results[0].per_class.set_index("class").loc["cat"]
    assert (cat["TP"], cat["FP"]) == (1, 0)
