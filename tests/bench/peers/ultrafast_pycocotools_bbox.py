"""ultrafast-pycocotools: its drop-in COCO/COCOeval (Rust core), the 12 stats as JSON.

Usage: python ultrafast_pycocotools_bbox.py GT.json PRED.json OUT.json

Writes ``{"stats": [AP, AP50, ..., ARl]}`` to OUT.json.
"""

import json
import sys

from ultrafast_pycocotools import COCO, COCOeval


def main(gt_path: str, pred_path: str, out_path: str) -> None:
    gt = COCO(gt_path)
    dt = gt.loadRes(pred_path)
    ev = COCOeval(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
    with open(out_path, "w") as out:
        json.dump({"stats": [float(s) for s in ev.stats]}, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
