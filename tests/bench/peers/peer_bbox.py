"""Run one peer evaluator through its pycocotools-style API; write the 12 stats as JSON.

Usage: python peer_bbox.py PEER GT.json PRED.json OUT.json

PEER is pycocotools, faster_coco_eval, hotcoco or ultrafast_pycocotools.
Writes ``{"stats": [AP, AP50, ..., ARl]}`` to OUT.json.  Only the named
peer is imported, so a run times that peer alone.
"""

import importlib
import json
import sys

# peer -> (module holding COCO, module holding the evaluator, evaluator class).
# faster-coco-eval documents COCOeval_faster as its drop-in for COCOeval.
PEERS = {
    "pycocotools": ("pycocotools.coco", "pycocotools.cocoeval", "COCOeval"),
    "faster_coco_eval": ("faster_coco_eval", "faster_coco_eval", "COCOeval_faster"),
    "hotcoco": ("hotcoco", "hotcoco", "COCOeval"),
    "ultrafast_pycocotools": ("ultrafast_pycocotools", "ultrafast_pycocotools", "COCOeval"),
}


def main(peer: str, gt_path: str, pred_path: str, out_path: str) -> None:
    coco_module, eval_module, eval_class = PEERS[peer]
    coco = importlib.import_module(coco_module).COCO
    evaluator = getattr(importlib.import_module(eval_module), eval_class)
    gt = coco(gt_path)
    dt = gt.loadRes(pred_path)
    ev = evaluator(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
    with open(out_path, "w") as out:
        json.dump({"stats": [float(s) for s in ev.stats]}, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
