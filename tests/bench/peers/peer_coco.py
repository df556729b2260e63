"""Run one peer evaluator on a COCO ground truth and results file; write the 12 stats as JSON.

Usage: python peer_coco.py PEER GT.json PRED.json OUT.json [bbox|segm|boundary|keypoints]

PEER is pycocotools, faster_coco_eval, hotcoco, ultrafast_pycocotools (each
through its pycocotools-style API: COCO, loadRes, COCOeval, evaluate,
accumulate, summarize) or vernier (its own API on the files' bytes, in its
bit-exact ``parity_mode="strict"``).  The last argument is the iou type
(default bbox; ``boundary``: faster-coco-eval's ``iouType="boundary"``, the
only peer here that scores Boundary IoU).  Writes ``{"stats": [AP, AP50, ..., ARl]}`` to OUT.json
(10 stats for keypoints).
Only the named peer is imported, so a run times that peer alone.

Exit code 3 (with a message) means the peer cannot score this iou type.
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
UNSUPPORTED = 3
# The peers that score each iou type beyond bbox and segm.
BOUNDARY_PEERS = ("faster_coco_eval",)


class Unsupported(Exception):
    """The peer cannot score this iou type."""


def pycocotools_style(peer: str, gt_path: str, pred_path: str, iou_type: str) -> list[float]:
    coco_module, eval_module, eval_class = PEERS[peer]
    coco = importlib.import_module(coco_module).COCO
    evaluator = getattr(importlib.import_module(eval_module), eval_class)
    gt = coco(gt_path)
    dt = gt.loadRes(pred_path)
    ev = evaluator(gt, dt, iou_type)
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
    return [float(s) for s in ev.stats]


def vernier(gt_path: str, pred_path: str, iou_type: str) -> list[float]:
    # Its documented fast path: both files' bytes straight into the native
    # reader; "strict" is the mode that reproduces pycocotools bit for bit.
    from vernier import instance

    kernels = {"bbox": instance.Bbox, "segm": instance.Segm}
    if hasattr(instance, "Keypoints"):  # COCO's 17 sigmas by default
        kernels["keypoints"] = instance.Keypoints
    if iou_type not in kernels:
        raise Unsupported(f"vernier: no {iou_type} kernel in its instance API")
    evaluator = instance.Evaluator(iou=kernels[iou_type](), parity_mode="strict")
    with open(gt_path, "rb") as gt, open(pred_path, "rb") as dt:
        summary = evaluator.evaluate(gt.read(), dt.read())
    return [float(s) for s in summary.stats]


def main(peer: str, gt_path: str, pred_path: str, out_path: str, iou_type: str = "bbox") -> int:
    boundary = iou_type == "boundary" and peer in BOUNDARY_PEERS
    if iou_type not in ("bbox", "segm", "keypoints") and not boundary:
        print(f"{peer}: cannot score iou type {iou_type!r}", file=sys.stderr)
        return UNSUPPORTED
    try:
        if peer == "vernier":
            stats = vernier(gt_path, pred_path, iou_type)
        else:
            stats = pycocotools_style(peer, gt_path, pred_path, iou_type)
    except Unsupported as exc:
        print(exc, file=sys.stderr)
        return UNSUPPORTED
    with open(out_path, "w") as out:
        json.dump({"stats": stats}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
