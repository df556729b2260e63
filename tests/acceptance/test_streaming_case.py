"""The streaming evaluator on torchmetrics' own inputs (acceptance case 09).

torchmetrics' test feeds ``MeanAveragePrecision`` four images of per-image
dicts and publishes its ``compute()`` dict to 3 decimals; the same dicts
through ``Evaluator.update`` and ``result.to_torchmetrics()`` give that dict.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iou_eval import Evaluator

from .helpers import STAT_NAMES, case_dir, expected

CASE = "09_torchmetrics_map_inputs"
# torchmetrics' keys for pycocotools' summary lines (as EXPECTED.json spells them).
KEYS = {
    "AP": "map", "AP50": "map_50", "AP75": "map_75", "AP_small": "map_small",
    "AP_medium": "map_medium", "AP_large": "map_large", "AR1": "mar_1", "AR10": "mar_10",
    "AR100": "mar_100", "AR_small": "mar_small", "AR_medium": "mar_medium",
    "AR_large": "mar_large",
}  # fmt: skip


def _batches():
    data = json.loads((case_dir(CASE) / "torchmetrics_inputs_xyxy.json").read_text())
    preds, targets = [], []
    for im in data["images"]:
        preds.append({k: np.asarray(v) for k, v in im["preds"].items()})
        targets.append({**{k: np.asarray(v) for k, v in im["target"].items()},
                        "image_id": im["image_id"]})  # fmt: skip
    return preds, targets


@pytest.mark.parametrize("batch", [1, 2, 4])
def test_09_to_torchmetrics_gives_the_published_dict(batch):
    preds, targets = _batches()
    ev = Evaluator(iou_type="bbox", box_format="xyxy")
    for at in range(0, len(preds), batch):
        ev.update(preds[at : at + batch], targets[at : at + batch])
    out = ev.compute().to_torchmetrics()
    summary, per_class = expected(CASE)["expected"]
    assert set(out) == {*KEYS.values(), "map_per_class", "mar_100_per_class", "classes"}
    for name, want in summary["stats"].items():
        got = out[KEYS[name]]
        assert isinstance(got, np.float32)
        assert abs(float(got) - want) <= summary["tolerance"], (name, float(got), want)
    table = per_class["per_class_AP_AR100"]
    assert out["classes"].dtype == np.int32
    assert out["classes"].tolist() == [int(k) for k in table]
    for j, (ap, ar) in enumerate(table.values()):
        assert abs(float(out["map_per_class"][j]) - ap) <= per_class["tolerance"]
        assert abs(float(out["mar_100_per_class"][j]) - ar) <= per_class["tolerance"]


def test_09_full_precision_is_pycocotools():
    """The float32 dict rounds the exact values; result.summary holds them whole."""
    preds, targets = _batches()
    ev = Evaluator()
    ev.update(preds, targets)
    result = ev.compute()
    ref = expected(CASE)["computed_reference"]
    for theirs, ours in STAT_NAMES.items():
        assert result.summary[ours] == ref["stats"][theirs]
    out = result.to_torchmetrics()
    assert out["map"] == np.float32(ref["stats"]["AP"])
    assert out["map_per_class"][3] == -1.0  # class 3: predicted, never in the ground truth
