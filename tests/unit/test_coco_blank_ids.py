"""COCO ids that name nothing, and objects on images the list lacks: the same verdict on both readers.

Found by a hostile run: ``images[0].id == ""`` was accepted, image 1's objects
dropped with a plain warning and its predictions set aside, exit 0.  An
empty or blank id is now bad input naming the element; annotations on an
image ``images`` lacks are dropped as pycocotools drops them, and that is a
doubt (``strict=True`` / ``--strict`` refuse it).  The compiled COCO reader
gives up on string ids, so msgspec's path decides; on integer ids it reads
the file itself and must give the same warnings and numbers.
"""

from __future__ import annotations

import json

import pytest

from iou_eval import evaluate
from iou_eval.data.doubts import is_doubt
from iou_eval.errors import InputError

from ..cli.helpers import run
from ..skip_reasons import compiled_missing


def _gt(image_id=1, ann_image_ids=(1, 1)):
    return {
        "images": [{"id": image_id, "width": 100, "height": 100},
                   {"id": 3, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "cat"}],
        "annotations": [
            {"id": k + 1, "image_id": i, "category_id": 1, "bbox": [10 + 20 * k, 10, 15, 15],
             "area": 225, "iscrowd": 0}
            for k, i in enumerate(ann_image_ids)
        ],
    }  # fmt: skip


def _preds(image_ids=(1, 1)):
    return [{"image_id": i, "category_id": 1, "bbox": [10 + 20 * k, 10, 15, 15], "score": 0.9}
            for k, i in enumerate(image_ids)]  # fmt: skip


@pytest.fixture(params=["compiled", "numpy"])
def reader(request, monkeypatch):
    """The compiled COCO reader where built, and msgspec's path (``IOU_EVAL_NO_KERNEL=1``)."""
    if request.param == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    else:
        monkeypatch.delenv("IOU_EVAL_NO_KERNEL", raising=False)
        reason = compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
        if reason:
            pytest.skip(reason)
    return request.param


@pytest.mark.parametrize(
    ("gt", "preds", "where"),
    [
        (_gt(image_id=""), _preds(), "gt.json:images[0].id: image id: expected an integer or a "
                                     "non-empty string, got ''"),
        (_gt(image_id="  "), _preds(), "gt.json:images[0].id: image id: expected"),
        (_gt(ann_image_ids=(1, "")), _preds(), "gt.json:annotations[1].image_id: expected an "
                                               "integer or a non-empty string, got ''"),
        (_gt(), _preds((1, "")), "preds.json:[1].image_id: expected an integer or a non-empty "
                                 "string, got ''"),
    ],
    ids=["images-id", "images-id-blank", "annotation-image-id", "prediction-image-id"],
)  # fmt: skip
def test_an_empty_string_id_is_refused_naming_the_element(gt, preds, where, reader, write_json):
    files = write_json("gt.json", gt), write_json("preds.json", preds)
    with pytest.raises(InputError) as err:
        evaluate(*files)
    assert where in str(err.value)  # the path ends with the file's name
    r = run(*files, expect=1)
    assert where in r.err and "Traceback" not in r.err


def test_annotations_on_unlisted_images_are_a_doubt(reader, write_json):
    """Image 2 is not in ``images``: its object is dropped (pycocotools too), and doubted."""
    files = write_json("gt.json", _gt(ann_image_ids=(1, 2))), write_json("preds.json", _preds())
    result = evaluate(*files)
    (dropped,) = [w for w in result.warnings if "refer to images not in 'images'" in w]
    assert is_doubt(dropped)
    assert "(first: annotations[1] image_id 2); ignored" in dropped
    assert result.per_class["gt"].tolist() == [1]
    with pytest.raises(InputError, match="doubt"):
        evaluate(*files, strict=True)
    run(*files, "--quiet")
    assert "refer to images not in 'images'" in run(*files, "--strict", expect=1).err


def test_both_readers_give_the_same_verdict(monkeypatch, write_json):
    """Warnings, doubts and numbers equal, with the compiled reader reading the file itself."""
    from iou_eval.io.loaders import coco

    reason = compiled_missing("the compiled COCO reader", "iou_eval.io._cocojson")
    if reason:
        pytest.skip(reason)
    gt = _gt(ann_image_ids=(1, 2))
    assert coco._read_compiled_dataset(json.dumps(gt).encode(), "gt.json") is not None
    files = write_json("gt.json", gt), write_json("preds.json", _preds())
    compiled = evaluate(*files)
    monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    numpy = evaluate(*files)
    assert compiled.to_dict() == numpy.to_dict()
    assert [is_doubt(w) for w in compiled.warnings] == [is_doubt(w) for w in numpy.warnings]
