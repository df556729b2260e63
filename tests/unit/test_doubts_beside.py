"""A large run's pair doubts found in a thread beside the scoring: the same warnings, in the same order."""

from __future__ import annotations

import json
import threading

import pytest

import iou_eval.api as api
from iou_eval.api import evaluate
from iou_eval.engine.parallel import in_thread
from iou_eval.errors import InputError


@pytest.fixture
def files(tmp_path):
    """Four images, predictions on one (a doubt: most images unpredicted), and a
    ground truth of annotation id 0 (pycocotools' quirk, a protocol note)."""
    images = [{"id": i, "width": 100, "height": 100} for i in range(1, 5)]
    anns = [
        {"id": i, "image_id": i + 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
         "iscrowd": 0}
        for i in range(4)
    ]  # fmt: skip
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "a"}]}
    preds = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    return str(tmp_path / "gt.json"), str(tmp_path / "p.json")


def test_doubts_found_beside_the_scoring_keep_their_place_among_the_warnings(files, monkeypatch):
    gt, preds = files
    alone = evaluate(gt, preds, workers=1, warn=False).warnings
    threads: list[int] = []
    real = api.pair_doubts

    def recorded(*args):
        threads.append(threading.get_ident())
        return real(*args)

    monkeypatch.setattr(api, "pair_doubts", recorded)
    monkeypatch.setattr(api, "DOUBTS_BESIDE_MIN_PREDICTIONS", 0)
    beside = evaluate(gt, preds, workers=2, warn=False).warnings
    assert threads and threads[0] != threading.get_ident()
    assert any("most" in w or "part of the ground truth" in w for w in alone)
    assert any("annotation id 0" in w for w in alone)
    assert beside == alone


def test_strict_doubts_stop_the_run_before_scoring_with_workers(files, monkeypatch):
    gt, preds = files

    def never(*args, **kwargs):
        raise AssertionError("scored despite --strict doubts")

    monkeypatch.setattr(api, "DOUBTS_BESIDE_MIN_PREDICTIONS", 0)
    monkeypatch.setattr(api, "score", never)
    with pytest.raises(InputError, match="--strict"):
        evaluate(gt, preds, workers=2, strict=True, warn=False)


def test_a_thread_jobs_error_is_raised_where_its_value_is_asked_for():
    def fails() -> None:
        raise InputError("f.json", "bad")

    job = in_thread(fails)
    with pytest.raises(InputError, match="bad"):
        job()
    assert in_thread(sum, [1, 2, 3])() == 6
