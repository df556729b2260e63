"""In-memory inputs of the Python API (``iou_eval.io.loaders.memory``; CONVENTIONS "In-memory inputs")."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iou_eval import evaluate, load
from iou_eval.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
sys.path.insert(0, str(SAMPLE))
import make_sample  # noqa: E402


def stats(result) -> dict:
    return result.summary


@pytest.fixture(scope="module")
def reference():
    """The sample scene scored from its COCO files."""
    return stats(evaluate(str(SAMPLE / "coco/gt.json"), str(SAMPLE / "coco/preds.json")))


def coco():
    return make_sample.coco_dicts(crowd=True)


def arrays_of(preds: list[dict], box_format: str = "xywh") -> dict:
    """``{image_id: (boxes, category_ids, scores)}`` of a results list, in its order."""
    out: dict = {}
    for r in preds:
        out.setdefault(r["image_id"], ([], [], []))
        b = r["bbox"]
        if box_format == "xyxy":
            b = [b[0], b[1], b[0] + b[2], b[1] + b[3]]
        out[r["image_id"]][0].append(b)
        out[r["image_id"]][1].append(r["category_id"])
        out[r["image_id"]][2].append(r["score"])
    return {
        k: (np.array(b, dtype=np.float64), np.array(c), np.array(s)) for k, (b, c, s) in out.items()
    }


def test_a_coco_dict_and_records_score_as_the_files_do(reference):
    gt, preds = coco()
    assert stats(evaluate(gt, preds)) == reference
    assert stats(evaluate(str(SAMPLE / "coco/gt.json"), preds)) == reference


def test_a_dataframe_scores_as_the_csv_does():
    expect = stats(evaluate(str(SAMPLE / "csv/gt.csv"), str(SAMPLE / "csv/preds.csv")))
    gt = pd.read_csv(SAMPLE / "csv/gt.csv")
    preds = pd.read_csv(SAMPLE / "csv/preds.csv")
    assert stats(evaluate(gt, preds)) == expect
    ds = load(preds, "pred")
    assert ds.format == "dataframe" and len(ds) == len(preds)


@pytest.mark.parametrize("box_format", ["xywh", "xyxy"])
def test_per_image_arrays_score_as_the_results_list(reference, box_format):
    gt, preds = coco()
    got = evaluate(gt, arrays_of(preds, box_format), box_format=box_format)
    # xyxy corners are x + w: the same boxes up to rounding of the last bit.
    if box_format == "xywh":
        assert stats(got) == reference
    else:
        assert stats(got) == pytest.approx(reference, abs=1e-12)


def test_an_image_missing_from_the_dict_or_with_empty_arrays_has_no_predictions(reference):
    gt, preds = coco()
    arrays = arrays_of(preds)
    hits = 1  # street_01: three predictions, three hits
    without = {k: v for k, v in arrays.items() if k != hits}
    empty = {**without, hits: (np.zeros((0, 4)), np.zeros(0, dtype=int), np.zeros(0))}
    a, b = evaluate(gt, without, box_format="xywh"), evaluate(gt, empty, box_format="xywh")
    assert stats(a) == stats(b) != reference


def test_ground_truth_as_arrays_and_as_records():
    boxes = {1: (np.array([[10.0, 10, 50, 50]]), np.array([3])), 2: (np.zeros((0, 4)), np.zeros(0))}
    preds = {2: (np.array([[10.0, 10, 50, 50]]), np.array([3]), np.array([0.9])),
             1: (np.array([[11.0, 10, 50, 50]]), np.array([3]), np.array([0.8]))}  # fmt: skip
    r = evaluate(boxes, preds)
    assert r.summary["AP50"] == pytest.approx(0.5, abs=0.01)  # image 2 is declared: its FP counts
    records = [{"image_id": 1, "category_id": 3, "bbox": [10, 10, 40, 40]}]
    assert evaluate(records, preds).summary["AP50"] == pytest.approx(1.0)  # image 2 unknown


@pytest.mark.parametrize("kind", ["records", "dataframe", "arrays"])
def test_equal_scores_keep_the_order_given(kind, tmp_path):
    """Two predictions at 0.9 on one object: IoU 0.9 and IoU 0.6.

    At IoU 0.75 the one listed first takes the object when it can; listed
    first, the loose one is a false positive before the hit, and AP75
    drops, as pycocotools ranks equal scores in file order.
    """
    import contextlib
    import io
    import json

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt = {"images": [{"id": 1, "width": 100, "height": 100}], "categories": [{"id": 1}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 50, 50],
                           "area": 2500, "iscrowd": 0}]}  # fmt: skip
    tight = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 50, 47.5], "score": 0.9}
    loose = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 50, 30], "score": 0.9}
    for order in ([tight, loose], [loose, tight]):
        (tmp_path / "g.json").write_text(json.dumps(gt))
        (tmp_path / "r.json").write_text(json.dumps(order))
        with contextlib.redirect_stdout(io.StringIO()):
            cg = COCO(str(tmp_path / "g.json"))
            ev = COCOeval(cg, cg.loadRes(str(tmp_path / "r.json")), "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        if kind == "records":
            preds: object = order
        elif kind == "dataframe":
            preds = pd.DataFrame([{"image_id": 1, "category_id": 1, "x": r["bbox"][0], "y": r["bbox"][1],
                                   "w": r["bbox"][2], "h": r["bbox"][3], "score": 0.9} for r in order])  # fmt: skip
        else:
            preds = {
                1: (np.array([r["bbox"] for r in order]), np.array([1, 1]), np.array([0.9, 0.9]))
            }
        got = evaluate(gt, preds, box_format="xywh").summary["AP75"]
        assert got == pytest.approx(float(ev.stats[2]), abs=1e-15)
    assert [evaluate(gt, [a, b]).summary["AP75"] for a, b in ((tight, loose), (loose, tight))] == [
        pytest.approx(1.0),
        pytest.approx(0.5, abs=0.01),
    ]


def test_inputs_are_never_modified():
    gt, preds = coco()
    frame = pd.read_csv(SAMPLE / "csv/preds.csv")
    arrays = arrays_of(preds)
    before = (copy.deepcopy(gt), copy.deepcopy(preds), frame.copy(deep=True), copy.deepcopy(arrays))
    evaluate(gt, preds)
    evaluate(str(SAMPLE / "csv/gt.csv"), frame)
    evaluate(gt, arrays, box_format="xywh")
    assert gt == before[0] and preds == before[1]
    pd.testing.assert_frame_equal(frame, before[2])
    for k, (b, c, s) in arrays.items():
        b0, c0, s0 = before[3][k]
        assert np.array_equal(b, b0) and np.array_equal(c, c0) and np.array_equal(s, s0)


def error(*args, **kw) -> InputError:
    with pytest.raises(InputError) as e:
        evaluate(*args, **kw)
    return e.value


def test_malformed_records_name_the_record_index():
    gt, preds = coco()
    bad = copy.deepcopy(preds)
    bad[3]["bbox"] = [1, 2, 3]
    assert (
        error(gt, bad).format().startswith("<records>:[3].bbox: expected 4 box numbers, got fewer")
    )
    bad = copy.deepcopy(preds)
    bad[5]["score"] = float("nan")
    assert error(gt, bad).format().startswith("<records>:[5]: prediction has no 'score'")
    bad = copy.deepcopy(gt)
    bad["annotations"][2]["image_id"] = [1]
    assert "<COCO dict>:annotations[2].image_id" in error(bad, preds).format()


def test_malformed_arrays_name_the_image_and_the_part():
    gt, preds = coco()
    arrays = arrays_of(preds)
    k = next(iter(arrays))
    b, c, s = arrays[k]
    cases = {
        "boxes of image 1 must be [N, 4], got shape [": (b[:, :3], c, s),
        "category_ids of image 1 must be [N]": (b, c[:-1] if len(c) > 1 else np.array([1, 2]), s),
        "scores of image 1 must be [N]": (b, c, np.append(s, 0.1)),
        f"category_ids of image 1: {c[0] + 0.5:g} is not a class id": (b, c + 0.5, s),
        "image 1: expected a tuple (boxes, category_ids, scores)": (b, c),
    }
    for message, value in cases.items():
        assert message in error(gt, {**arrays, k: value}).format(), message
    flipped = b.copy()
    flipped[0, 2] = -1.0
    e = error(gt, {**arrays, k: (flipped, c, s)}, box_format="xywh")
    assert e.format().startswith("<arrays>[1]:row[0]: box has negative width or height")


def test_malformed_dataframes_name_the_column_and_the_row():
    frame = pd.read_csv(SAMPLE / "csv/preds.csv")
    gt = str(SAMPLE / "csv/gt.csv")
    e = error(gt, frame.drop(columns=["score"]))
    assert "cannot find a score column for predictions" in e.format()
    bad = frame.astype({"score": object})
    bad.loc[2, "score"] = "high"
    assert error(gt, bad).format() == "<DataFrame>:row[2]: score must be a number, got 'high'"
    bad = frame.copy()
    bad.loc[4, "xmax"] = 0.0
    assert error(gt, bad).format().startswith("<DataFrame>:row[4]: box has x2 < x1")
    assert "columns must be named" in error(gt, pd.DataFrame(np.zeros((2, 7)))).format()


def test_the_same_checks_apply_to_in_memory_inputs():
    """Corners given as x y w h: the layout doubt names the option, as for a file."""
    gt, preds = coco()
    result = evaluate(gt, arrays_of(preds, "xyxy"), box_format="xywh")
    assert any("pass --pred-box-format xyxy" in w for w in result.warnings)
    with pytest.raises(InputError, match="--strict: 1 doubt"):
        evaluate(gt, arrays_of(preds, "xyxy"), box_format="xywh", strict=True)


def test_other_objects_are_refused_clearly():
    gt, _ = coco()
    with pytest.raises(InputError, match="cannot read a set as detections"):
        evaluate(gt, {1, 2})
