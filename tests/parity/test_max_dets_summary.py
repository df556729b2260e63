"""Summary statistics under custom ``--max-dets``, against pycocotools' ``summarize``.

pycocotools' ``_summarizeDets`` asks for AP at the maxDets *value* 100 and
for the other statistics at ``maxDets[0]``, ``[1]`` and ``[2]``: without a
100 its AP is -1 (undefined), whatever the other caps.
"""

from __future__ import annotations

import numpy as np
import pytest

from iou_eval import evaluate
from iou_eval.errors import UsageError

from .synth import make_scene, run_pycocotools
from .test_coco_parity import assert_same


@pytest.mark.parametrize(
    ("seed", "max_dets"),
    [(900, [1, 10, 50]), (901, [1, 10, 50]), (902, [1, 10, 100, 300]), (903, [5, 20, 200])],
)
def test_summary_uses_the_max_dets_pycocotools_uses(seed, max_dets, write_json):
    gt, preds = make_scene(seed)
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds), max_dets=max_dets)
    ref = run_pycocotools(gt, preds, maxDets=max_dets)
    assert_same(ours, ref, f"seed {seed}, maxDets {max_dets}")


def test_ap_without_a_cap_of_100_is_undefined_with_a_warning(write_json):
    gt, preds = make_scene(904)
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds), max_dets=[1, 10, 50])
    assert ours.summary["AP"] is None
    assert ours.summary["AP50"] is not None  # maxDets[2] = 50 in pycocotools as well
    doc = ours.to_dict()
    assert doc["summary"]["AP"] is None
    warned = [w for w in doc["warnings"] if "maxDets" in w and "AP" in w]
    assert len(warned) == 1, doc["warnings"]
    assert "100" in warned[0] and "undefined" in warned[0]


def test_default_max_dets_give_no_warning(write_json):
    gt, preds = make_scene(905)
    ours = evaluate(write_json("gt.json", gt), write_json("p.json", preds))
    assert not [w for w in ours.warnings if "maxDets" in w]


def test_summary_labels_name_the_caps_used():
    from iou_eval.protocols.params import coco

    labels = coco(max_dets=(1, 10, 50)).summary_labels()
    assert labels["AP"].endswith("maxDets=100")
    assert labels["AP50"].endswith("maxDets=50")
    assert labels["AR100"].endswith("maxDets=50")
    assert labels["AR10"].endswith("maxDets=10")
    default = coco().summary_labels()
    assert default["AP"] == "IoU=0.50:0.95  area=all     maxDets=100"
    assert default["AP75"] == "IoU=0.75       area=all     maxDets=100"
    assert default["ARl"] == "IoU=0.50:0.95  area=large   maxDets=100"


@pytest.mark.parametrize("max_dets", [[1, 10, 100, 100], [10, 10, 100], [100, 1, 100]])
def test_a_repeated_cap_is_refused(max_dets, write_json):
    gt, preds = make_scene(906, n_images=5)
    with pytest.raises(UsageError, match="--max-dets"):
        evaluate(write_json("gt.json", gt), write_json("p.json", preds), max_dets=max_dets)


def test_a_repeated_cap_is_a_usage_error_on_the_command_line(write_json):
    from tests.cli.helpers import run

    gt, preds = make_scene(907, n_images=5)
    r = run(write_json("gt.json", gt), write_json("p.json", preds), "--max-dets", "1,10,100,100",
            expect=2)  # fmt: skip
    assert "--max-dets" in r.err and "100" in r.err, r


def test_max_dets_is_sorted_as_pycocotools_sorts_it(write_json):
    """pycocotools' ``evaluate`` sorts ``maxDets``: 100,1,10 is 1,10,100."""
    gt, preds = make_scene(908)
    files = write_json("gt.json", gt), write_json("p.json", preds)
    ours = evaluate(*files, max_dets=[100, 1, 10])
    ref = run_pycocotools(gt, preds, maxDets=[100, 1, 10])
    assert_same(ours, ref, "unsorted maxDets")
    assert np.array_equal(ours.primary.arrays.precision, evaluate(*files).primary.arrays.precision)
