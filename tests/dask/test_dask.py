"""On a Dask cluster the numbers are those of one process, bit for bit.

A ``LocalCluster`` of two worker processes runs the parts: COCO categories
matched and accumulated, chunks of a results file decoded, bootstrap
replicates, one prediction file per batch task.  Every document, array and
replicate is compared whole against ``--workers 1``, and the scenes also
against pycocotools; the task stream proves the parts ran on the workers.
Skipped when dask is not installed.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.engine.cluster import DaskParts

from ..acceptance.helpers import assert_stats, case_dir, expected
from ..cli.helpers import run
from ..conftest import ROOT
from ..parity.synth import make_scene, run_pycocotools
from ..parity.test_coco_parity import assert_same
from .helpers import KillingExecutor

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


def same_document(a, b) -> None:
    """Two results' JSON documents, as written (NaN included), equal."""
    ta = json.dumps(a.to_dict(), sort_keys=True)
    tb = json.dumps(b.to_dict(), sort_keys=True)
    assert ta == tb


def same_arrays(a, b) -> None:
    """Every protocol's arrays, operating point and bootstrap replicates equal bit for bit."""
    assert len(a.results) == len(b.results)
    for ra, rb in zip(a.results, b.results, strict=True):
        ea, eb = ra.evaluation, rb.evaluation
        if hasattr(ea, "arrays"):
            for name in ("precision", "recall", "scores"):
                x, y = getattr(ea.arrays, name), getattr(eb.arrays, name)
                assert np.array_equal(x, y), name
            for name in ("dt_rows", "tp", "fp", "match_gt", "match_iou", "gt_counts"):
                assert np.array_equal(getattr(ea.point, name), getattr(eb.point, name)), name
        if ra.bootstrap is not None or rb.bootstrap is not None:
            assert ra.bootstrap.replicates.keys() == rb.bootstrap.replicates.keys()
            for k, v in ra.bootstrap.replicates.items():
                assert np.array_equal(v, rb.bootstrap.replicates[k], equal_nan=True), k
            assert np.array_equal(ra.bootstrap.class_ap, rb.bootstrap.class_ap, equal_nan=True)


def tasks_run(stream, client) -> collections.Counter:
    """Part function -> tasks of it that ran, all on the cluster's workers."""
    workers = set(client.scheduler_info()["workers"])
    ran: collections.Counter = collections.Counter()
    for t in stream.data:
        assert t["worker"] in workers, t
        key = t["key"] if isinstance(t["key"], str) else t["key"][0]
        if key.startswith("iou-eval-"):
            ran[key.removeprefix("iou-eval-").rsplit("-", 2)[0]] += 1
    return ran


def _files(write_json, gt, preds):
    return write_json("gt.json", gt), write_json("preds.json", preds)


@pytest.mark.parametrize(
    ("seed", "kw"),
    [(700, {}), (701, {"crowd_rate": 0.2, "tie_decimals": 1}), (702, {"string_ids": True})],
)
def test_a_scene_on_the_cluster_equals_one_process_and_pycocotools(
    seed, kw, client, write_json, parts_everywhere
):
    gt, preds = make_scene(seed, n_images=120, n_categories=9, **kw)
    files = _files(write_json, gt, preds)
    with distributed.get_task_stream(client) as stream:
        ours = evaluate(*files, client=client, bootstrap=30, seed=seed)
    ran = tasks_run(stream, client)
    # Two workers of one thread: four category parts, chunks decoded by the
    # workers, and the 30 replicates in 16 runs.
    assert ran["match_and_accumulate"] == 4, ran
    assert ran["decode_file_spans"] >= 2, ran
    assert ran["replicate_rows"] == 16, ran
    one = evaluate(*files, workers=1, bootstrap=30, seed=seed)
    same_document(ours, one)
    same_arrays(ours, one)
    assert_same(ours, run_pycocotools(gt, preds), f"seed {seed} on Dask")


def test_a_worker_killed_mid_run_is_replaced_and_the_numbers_are_exact(
    client, write_json, tmp_path, parts_everywhere
):
    """The first matching part ends its own worker process; Dask runs it again elsewhere."""
    gt, preds = make_scene(705, n_images=120, n_categories=9)
    files = _files(write_json, gt, preds)
    marker = tmp_path / "killed"
    killing = KillingExecutor(DaskParts(client), str(marker), only="match_and_accumulate")
    ours = evaluate(*files, client=killing)
    assert marker.exists(), "no worker was killed"
    dead = int(marker.read_text())
    client.wait_for_workers(2, timeout=60)  # the nanny started a new one
    assert dead not in client.run(os.getpid).values()
    one = evaluate(*files, workers=1)
    same_document(ours, one)
    same_arrays(ours, one)


@pytest.mark.parametrize(
    ("iou_type", "results"),
    [("bbox", "instances_val2014_fakebbox100_results.json"),
     ("segm", "instances_val2014_fakesegm100_results.json")],
)  # fmt: skip
def test_acceptance_case_04_bbox_and_segm_on_the_cluster(
    iou_type, results, client, parts_everywhere
):
    """Boxes and masks (the mask geometry is scattered with the setup)."""
    d = case_dir("04_cocoapi_val2014_100_bbox_segm")
    files = (str(d / "instances_val2014_100.json"), str(d / results))
    with distributed.get_task_stream(client) as stream:
        ours = evaluate(*files, client=client, iou_type=iou_type)
    assert tasks_run(stream, client)["match_and_accumulate"] == 4
    one = evaluate(*files, workers=1, iou_type=iou_type)
    same_document(ours, one)
    same_arrays(ours, one)
    exp = next(e for e in expected(d.name)["expected"] if e["iou_type"] == iou_type)
    assert_stats(ours.summary, exp["stats"], exp["tolerance"], f"{d.name} {iou_type}")


@pytest.mark.parametrize(
    ("case", "gt_name", "dt_name"),
    [
        (
            "05_rdm_coco_sampled_bbox_area",
            "sampled_gts_bbox_area.json",
            "sampled_bbox_results.json",
        ),
        ("08_fce_crowd_region_ignore", "gt_ignore_test.json", "dt_ignore_test.json"),
    ],
)
def test_acceptance_cases_on_the_cluster(case, gt_name, dt_name, client, parts_everywhere):
    d = case_dir(case)
    files = (str(d / gt_name), str(d / dt_name))
    ours = evaluate(*files, client=client)
    one = evaluate(*files, workers=1)
    same_document(ours, one)
    same_arrays(ours, one)
    exp = next(e for e in expected(d.name)["expected"] if e.get("iou_type", "bbox") == "bbox")
    assert_stats(ours.summary, exp["stats"], exp["tolerance"], d.name)


@pytest.fixture
def models(tmp_path) -> list[str]:
    """Three model outputs, a broken one, and the first given twice."""
    preds = sorted(json.loads(Path(PREDS).read_text()), key=lambda p: -p["score"])
    out = []
    for name, subset in (("a_full", preds), ("b_minus1", preds[1:]), ("c_half", preds[::2])):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(subset))
        out.append(str(path))
    broken = tmp_path / "d_broken.json"
    broken.write_text(json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1]}]))
    return [*out, str(broken), out[0]]


def test_a_batch_on_the_cluster_equals_the_one_process_batch(client, models):
    """One task per distinct file; reports, errors and exit code as with --workers 1."""
    args = (GT, *models, "-f", "json", "--bootstrap", "20", "--fail-under", "AP=0.3")
    with distributed.get_task_stream(client) as stream:
        on_dask = run(*args, "--dask", client.scheduler.address, expect=None)
    assert tasks_run(stream, client)["score_file"] == 4
    alone = run(*args, "--workers", "1", expect=None)
    assert on_dask.code == alone.code == 1, on_dask
    assert on_dask.out == alone.out
    assert on_dask.err == alone.err
    doc = json.loads(on_dask.out)
    assert len(doc["results"]) == 3 and "expected 4 box numbers" in on_dask.err


def test_compare_with_bootstrap_on_the_cluster_gives_the_same_intervals(client, models):
    args = ("compare", GT, models[0], models[2], "--bootstrap", "100", "--seed", "7", "-f", "json")
    with distributed.get_task_stream(client) as stream:
        on_dask = run(*args, "--dask", client.scheduler.address)
    assert tasks_run(stream, client)["replicate_rows"] == 2 * 16
    alone = run(*args, "--workers", "1")
    assert on_dask.out == alone.out
    rows = json.loads(alone.out)
    assert rows  # a real comparison, intervals included


def test_dask_local_starts_its_own_cluster_and_changes_nothing(parts_everywhere):
    on_dask = run(GT, PREDS, "-f", "json", "--dask", "local:2")
    assert on_dask.out == run(GT, PREDS, "-f", "json", "--workers", "1").out


class Bar:
    """Stands in for tqdm: records what the executor tells it."""

    made: list[Bar] = []

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.n, self.closed = total, desc, 0, False
        Bar.made.append(self)

    def update(self, n: int) -> None:
        self.n += n

    def close(self) -> None:
        self.closed = True


def test_a_progress_bar_follows_the_cluster_tasks(client, write_json, parts_everywhere):
    """One bar per job that no caller follows, counting its tasks as they finish."""
    Bar.made = []
    gt, preds = make_scene(706, n_images=60, n_categories=9)
    files = _files(write_json, gt, preds)
    followed: list[int] = []
    evaluate(*files, client=DaskParts(client, bar=Bar), bootstrap=10, progress=followed.append)
    jobs = {b.desc.removeprefix("iou-eval-"): b for b in Bar.made}
    assert set(jobs) == {"decode_file_spans", "match_and_accumulate"}, jobs
    assert all(b.n == b.total and b.closed for b in Bar.made)
    assert jobs["match_and_accumulate"].total == 4
    assert sum(followed) == 10  # the bootstrap's own bar: replicates, not tasks


def test_voc_bootstrap_replicates_on_the_cluster(client):
    """VOC's evaluation travels to the workers as well; its replicates are the same."""
    with distributed.get_task_stream(client) as stream:
        ours = evaluate(GT, PREDS, client=client, protocol="voc12", bootstrap=40, seed=5)
    assert tasks_run(stream, client)["replicate_rows"] == 16
    one = evaluate(GT, PREDS, workers=1, protocol="voc12", bootstrap=40, seed=5)
    same_document(ours, one)
    same_arrays(ours, one)
