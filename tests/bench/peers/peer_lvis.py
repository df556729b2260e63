"""Run one LVIS evaluator on an LVIS ground truth and results file; write its 13 numbers as JSON.

Usage: python peer_lvis.py PEER GT.json PRED.json OUT.json [bbox|segm]

PEER is ``lvis`` (lvis-api's ``LVISEval``, the reference; numpy 2 needs
``np.float`` put back first), ``faster_coco_eval`` (``COCOeval_faster`` with
``lvis_style=True`` and ``maxDets=[300]``: it caps per image *and category*,
the same as lvis-api when no image has more than 300 results) or
``hotcoco`` (its lvis-api drop-in: ``LVISResults`` with the 300 cap, then
``LVISEval``).  Writes ``{"stats": {"AP": ..., "APr": ..., "AR300": ...}}``.
Only the named peer is imported, so a run times that peer alone.
"""

import json
import sys

KEYS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
        "AR300", "ARs", "ARm", "ARl")  # fmt: skip


def lvis_api(gt_path: str, pred_path: str, iou_type: str) -> dict:
    import numpy as np

    if not hasattr(np, "float"):
        np.float = float  # lvis-api 0.5.3 still spells np.float
    from lvis import LVISEval

    ev = LVISEval(gt_path, pred_path, iou_type)
    ev.run()
    names = {"AR@300": "AR300", "ARs@300": "ARs", "ARm@300": "ARm", "ARl@300": "ARl"}
    return {names.get(k, k): float(v) for k, v in ev.results.items()}


def faster_coco_eval(gt_path: str, pred_path: str, iou_type: str) -> dict:
    from faster_coco_eval import COCO, COCOeval_faster

    gt = COCO(gt_path)
    dt = gt.loadRes(pred_path)
    ev = COCOeval_faster(gt, dt, iou_type, lvis_style=True, print_function=lambda *a: None)
    ev.params.maxDets = [300]
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
    s = ev.all_stats
    # Its layout with four area ranges and one cap (padded to three AR slots):
    # AP..APl at 0-5, AR300 at 6, ARs..ARl at 9-11, APr/APc/APf at 14-16.
    at = {"AP": 0, "AP50": 1, "AP75": 2, "APs": 3, "APm": 4, "APl": 5, "AR300": 6,
          "ARs": 9, "ARm": 10, "ARl": 11, "APr": 14, "APc": 15, "APf": 16}  # fmt: skip
    return {k: float(s[at[k]]) for k in KEYS}


def hotcoco(gt_path: str, pred_path: str, iou_type: str) -> dict:
    import hotcoco as hc

    gt = hc.COCO(gt_path)
    dt = hc.LVISResults(gt, pred_path, max_dets=300)
    ev = hc.LVISEval(gt, dt, iou_type)
    ev.run()
    res = ev.get_results()
    names = {"AR@300": "AR300", "ARs@300": "ARs", "ARm@300": "ARm", "ARl@300": "ARl"}
    return {names.get(k, k): float(v) for k, v in res.items() if names.get(k, k) in KEYS}


PEERS = {"lvis": lvis_api, "faster_coco_eval": faster_coco_eval, "hotcoco": hotcoco}


def main(peer: str, gt_path: str, pred_path: str, out_path: str, iou_type: str = "bbox") -> int:
    stats = PEERS[peer](gt_path, pred_path, iou_type)
    with open(out_path, "w") as out:
        json.dump({"stats": stats}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
