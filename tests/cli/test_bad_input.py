"""Bad input: a located message on stderr, exit code 1, never a traceback."""

from __future__ import annotations

import json

import pytest

from .helpers import run

GT = {
    "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
    "categories": [{"id": 1, "name": "cat"}],
    "annotations": [
        {
            "id": 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": [10, 10, 20, 20],
            "area": 400,
            "iscrowd": 0,
        }
    ],
}
PRED = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]


def fail(*args, needles):
    r = run(*args, expect=1)
    assert r.err.startswith("iou-eval: error: "), r
    assert "Traceback" not in r.err
    for n in needles:
        assert n in r.err, f"{n!r} not in:\n{r.err}"
    return r


def test_missing_path(tmp_path, write_json):
    fail(write_json("gt.json", GT), tmp_path / "nope.json", needles=["nope.json", "no such file"])


def test_empty_file(tmp_path, write_json):
    (tmp_path / "empty.json").write_text("")
    fail(
        write_json("gt.json", GT), tmp_path / "empty.json", needles=["empty.json", "file is empty"]
    )


def test_malformed_json_names_line_and_column(tmp_path, write_json):
    (tmp_path / "p.json").write_text('[\n  {"image_id": 1,\n   "bbox": [1, 2, 3,]}\n]')
    fail(write_json("gt.json", GT), tmp_path / "p.json", needles=["p.json:3:", "malformed JSON"])


def test_truncated_json(tmp_path, write_json):
    (tmp_path / "p.json").write_text('[{"image_id": 1, "bbox": [1, 2')
    fail(
        write_json("gt.json", GT), tmp_path / "p.json", needles=["p.json:1:", "ends in the middle"]
    )


def test_nan_is_not_json(tmp_path, write_json):
    (tmp_path / "p.json").write_text(
        '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, NaN], "score": 1}]'
    )
    fail(write_json("gt.json", GT), tmp_path / "p.json", needles=["p.json:1:", "NaN"])


def test_bbox_with_three_numbers(write_json):
    bad = [{**PRED[0], "bbox": [1, 2, 3]}]
    fail(write_json("gt.json", GT), write_json("p.json", bad),
         needles=["p.json:[0].bbox", "expected 4 box numbers, got fewer"])  # fmt: skip


def test_score_that_is_not_a_number(write_json):
    bad = [PRED[0], {**PRED[0], "score": "high"}]
    fail(write_json("gt.json", GT), write_json("p.json", bad),
         needles=["p.json:[1].score", "expected `float | null`, got `str`"])  # fmt: skip


def test_prediction_without_score(write_json):
    bad = [{k: v for k, v in PRED[0].items() if k != "score"}]
    fail(write_json("gt.json", GT), write_json("p.json", bad), needles=["p.json:[0]", "no 'score'"])


def test_negative_width(write_json):
    gt = json.loads(json.dumps(GT))
    gt["annotations"][0]["bbox"] = [10, 10, -5, 20]
    fail(write_json("gt.json", gt), write_json("p.json", PRED),
         needles=["gt.json:annotations[0]", "negative width or height", "-5.0"])  # fmt: skip


def test_infinite_number(tmp_path, write_json):
    (tmp_path / "p.json").write_text(
        '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 1e999], "score": 1}]'
    )
    fail(
        write_json("gt.json", GT),
        tmp_path / "p.json",
        needles=["p.json:[0].bbox[3]", "out of range"],
    )


def test_ground_truth_given_as_results_list(write_json):
    fail(write_json("p.json", PRED), write_json("gt.json", GT),
         needles=["p.json", "ground truth must be a COCO dataset", "swap"])  # fmt: skip


def test_ground_truth_without_images(write_json):
    gt = {k: v for k, v in GT.items() if k != "images"}
    fail(write_json("gt.json", gt), write_json("p.json", PRED), needles=["gt.json", "'images'"])


def test_wrong_type_of_image_id(write_json):
    bad = [{**PRED[0], "image_id": [1]}]
    fail(write_json("gt.json", GT), write_json("p.json", bad),
         needles=["p.json:[0].image_id", "expected `int | float | str`, got `array`"])  # fmt: skip


def test_duplicate_image_ids(write_json):
    gt = json.loads(json.dumps(GT))
    gt["images"].append(dict(gt["images"][0]))
    fail(write_json("gt.json", gt), write_json("p.json", PRED),
         needles=["gt.json:images[1].id", "appears twice"])  # fmt: skip


def test_folder_of_unknown_files(tmp_path, write_json):
    d = tmp_path / "stuff"
    d.mkdir()
    (d / "readme.md").write_text("x")
    fail(write_json("gt.json", GT), d, needles=["stuff", "cannot tell the format"])


@pytest.mark.parametrize("fmt", ["csv", "voc-xml"])
def test_forced_wrong_format_is_a_clear_error(fmt, write_json):
    fail(
        write_json("gt.json", GT),
        write_json("p.json", PRED),
        "--pred-format",
        fmt,
        needles=["p.json"],
    )


def test_predictions_on_unknown_images_warn_but_score(write_json):
    preds = PRED + [{**PRED[0], "image_id": 99}]
    r = run(write_json("gt.json", GT), write_json("p.json", preds), "-f", "json")
    assert "1 prediction(s) on 1 image(s) that are not in the ground truth" in r.err
    assert json.loads(r.out)["inputs"]["predictions"]["unknown_image_boxes"] == 1


def test_warnings_can_be_silenced(write_json):
    preds = PRED + [{**PRED[0], "image_id": 99}]
    r = run(write_json("gt.json", GT), write_json("p.json", preds), "-q")
    assert r.err == ""


def test_results_list_rows_are_cited_by_list_index(write_json):
    bad = [PRED[0], {**PRED[0], "bbox": [10, 10, -5, 20]}]
    fail(write_json("gt.json", GT), write_json("p.json", bad),
         needles=["p.json:[1]:", "negative width or height"])  # fmt: skip


@pytest.fixture
def parallel_reads(monkeypatch):
    """The ground truth read in a child beside the predictions, whatever the sizes."""
    import iou_eval.api

    monkeypatch.setattr(iou_eval.api, "PARALLEL_MIN_BYTES", 0)


def test_a_bad_ground_truth_is_reported_first_when_both_files_are_bad(write_json, parallel_reads):
    gt = json.loads(json.dumps(GT))
    gt["annotations"][0]["bbox"] = [10, 10, 20]
    pred = [dict(PRED[0], bbox=[1, 2])]
    for workers in ("1", "2"):
        r = fail(write_json("gt.json", gt), write_json("p.json", pred), "--workers", workers,
                 needles=["gt.json:annotations[0].bbox"])  # fmt: skip
        assert "p.json" not in r.err


def test_bad_predictions_beside_a_good_ground_truth_read_in_a_child(write_json, parallel_reads):
    pred = [dict(PRED[0], bbox=[1, 2])]
    fail(write_json("gt.json", GT), write_json("p.json", pred), "--workers", "2",
         needles=["p.json:[0].bbox", "4"])  # fmt: skip
