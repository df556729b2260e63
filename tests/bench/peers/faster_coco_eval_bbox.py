"""faster-coco-eval: its pycocotools-style API (C++ matching), the 12 stats as JSON.

Usage: python faster_coco_eval_bbox.py GT.json PRED.json OUT.json

Writes ``{"stats": [AP, AP50, ..., ARl]}`` to OUT.json. ``COCOeval_faster`` is
the class the project documents as the drop-in for pycocotools' ``COCOeval``.
"""

import json
import sys

from faster_coco_eval import COCO, COCOeval_faster


def main(gt_path: str, pred_path: str, out_path: str) -> None:
    gt = COCO(gt_path)
    dt = gt.loadRes(pred_path)
    ev = COCOeval_faster(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
    with open(out_path, "w") as out:
        json.dump({"stats": [float(s) for s in ev.stats]}, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
