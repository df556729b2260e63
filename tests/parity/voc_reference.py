"""A plain-Python reference of the VOC devkit's ``voc_eval`` rules, for parity tests.

Written from the rules as the devkit states them, one detection at a time,
with no vectorisation: clarity over speed.
"""

from __future__ import annotations

import numpy as np


def overlap(bb, gt, plus_one: bool) -> np.ndarray:
    """IoU of one box ``bb[4]`` with boxes ``gt[N, 4]`` (xyxy)."""
    e = 1.0 if plus_one else 0.0
    ixmin = np.maximum(gt[:, 0], bb[0])
    iymin = np.maximum(gt[:, 1], bb[1])
    ixmax = np.minimum(gt[:, 2], bb[2])
    iymax = np.minimum(gt[:, 3], bb[3])
    iw = np.maximum(ixmax - ixmin + e, 0.0)
    ih = np.maximum(iymax - iymin + e, 0.0)
    inters = iw * ih
    uni = (
        (bb[2] - bb[0] + e) * (bb[3] - bb[1] + e)
        + (gt[:, 2] - gt[:, 0] + e) * (gt[:, 3] - gt[:, 1] + e)
        - inters
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return inters / uni


def ap_from_curve(rec, prec, eleven_point: bool) -> float:
    if eleven_point:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            p = 0.0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
            ap = ap + p / 11.0
        return float(ap)
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    i = np.where(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def voc_eval_reference(gts, dets, classname, thr=0.5, eleven_point=False, plus_one=True):
    """AP, tp[D], fp[D] of one class.

    Args:
        gts: list of (image, class, [x1, y1, x2, y2], difficult) in file order.
        dets: list of (image, class, score, [x1, y1, x2, y2]) in input order.
    """
    recs = {}
    npos = 0
    for img, cls, box, diff in gts:
        if cls != classname:
            continue
        r = recs.setdefault(img, {"bbox": [], "difficult": [], "det": []})
        r["bbox"].append(box)
        r["difficult"].append(bool(diff))
        r["det"].append(False)
        npos += 0 if diff else 1
    mine = [d for d in dets if d[1] == classname]
    conf = np.array([d[2] for d in mine], dtype=float)
    order = np.argsort(-conf, kind="stable")
    tp = np.zeros(len(mine))
    fp = np.zeros(len(mine))
    for d, k in enumerate(order):
        img, _, _, box = mine[k]
        r = recs.get(img)
        ovmax = -np.inf
        if r is not None and r["bbox"]:
            ov = overlap(np.asarray(box, float), np.asarray(r["bbox"], float), plus_one)
            ovmax = ov.max()
            jmax = int(np.argmax(ov))
        if ovmax > thr:
            if not r["difficult"][jmax]:
                if not r["det"][jmax]:
                    tp[d] = 1.0
                    r["det"][jmax] = True
                else:
                    fp[d] = 1.0
        else:
            fp[d] = 1.0
    if npos == 0:
        return float("nan"), tp, fp
    tp_c = np.cumsum(tp)
    fp_c = np.cumsum(fp)
    rec = tp_c / float(npos)
    prec = tp_c / np.maximum(tp_c + fp_c, np.finfo(np.float64).eps)
    return ap_from_curve(rec, prec, eleven_point), tp, fp
