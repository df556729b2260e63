"""An independent LRP reference on top of pycocotools' ``COCOeval.evaluate()``.

The official implementation (Oksuz et al.'s ``LRP-Error`` repository) is a
pycocotools fork whose ``evaluateImg`` also records each match's IoU and
whose ``accumulate`` computes the optimal LRP per class at the first IoU
threshold (0.5), area ``all``, the last maxDets.  This module recomputes
the same from stock pycocotools: the matches of its ``evalImgs``, each
match's IoU read back from its ``ious`` matrix, the detections of a class
concatenated image by image and sorted by score (mergesort), and the LRP
error at every position of that list, in the official float operations.
"""

from __future__ import annotations

import contextlib
import copy
import io

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def run_cocoeval(gt: dict, results: list, iou_type: str, sigmas=None) -> COCOeval:
    """pycocotools' evaluate() on the scene (quietly)."""
    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO()
        cg.dataset = copy.deepcopy(gt)
        cg.createIndex()
        cd = cg.loadRes(copy.deepcopy(results))
        ev = COCOeval(cg, cd, iou_type)
        if sigmas is not None:
            ev.params.kpt_oks_sigmas = np.asarray(sigmas, dtype=np.float64)
        ev.evaluate()
    return ev


def _match_ious(ev: COCOeval, e: dict, max_det: int) -> np.ndarray:
    """``[D]`` the IoU of each detection of an evalImg with the ground truth it matched at 0.5."""
    ious = ev.ious[e["image_id"], e["category_id"]]
    gts = ev._gts[e["image_id"], e["category_id"]]
    column = {g["id"]: j for j, g in enumerate(gts)}
    out = np.zeros(len(e["dtIds"][:max_det]))
    for d, gid in enumerate(e["dtMatches"][0, :max_det]):
        if gid != 0:
            out[d] = ious[d, column[gid]]
    return out


def official_lrp(ev: COCOeval) -> dict:
    """Per-class ``olrp``, ``loc``, ``fp``, ``fn``, ``thr`` (``[K]``, -1: no ground truth,
    NaN: undefined) and the four means, as the official accumulate/summarize compute them."""
    p = ev.params
    n_img, n_area, k_all = len(p.imgIds), len(p.areaRng), len(p.catIds)
    max_det = p.maxDets[-1]
    out = {name: -np.ones(k_all) for name in ("olrp", "loc", "fp", "fn", "thr")}
    for k in range(k_all):
        evals = [ev.evalImgs[k * n_area * n_img + i] for i in range(n_img)]  # area "all"
        evals = [e for e in evals if e is not None]
        if not evals:
            continue
        scores = np.concatenate([e["dtScores"][:max_det] for e in evals])
        inds = np.argsort(-scores, kind="mergesort")
        dtm = np.concatenate([e["dtMatches"][:, :max_det] for e in evals], axis=1)[:, inds]
        dtig = np.concatenate([e["dtIgnore"][:, :max_det] for e in evals], axis=1)[:, inds]
        dtiou = np.concatenate([_match_ious(ev, e, max_det) for e in evals])[inds]
        gtig = np.concatenate([e["gtIgnore"] for e in evals])
        npig = np.count_nonzero(gtig == 0)
        if npig == 0:
            continue
        tps = np.logical_and(dtm, np.logical_not(dtig))[0]
        fps = np.logical_and(np.logical_not(dtm), np.logical_not(dtig))[0]
        dtiou = np.multiply(dtiou, tps)
        tp_num, fp_num = np.cumsum(tps), np.cumsum(fps)
        fn_num = npig - tp_num
        if tp_num.shape[0] == 0 or tp_num[-1] == 0:
            for name, v in (("olrp", 1.0), ("loc", np.nan), ("fp", np.nan), ("fn", 1.0),
                            ("thr", np.nan)):  # fmt: skip
                out[name][k] = v
            continue
        total_loc = tp_num - np.cumsum(dtiou)
        lrps = (total_loc / (1 - p.iouThrs[0]) + fp_num + fn_num) / (tp_num + fp_num + fn_num)
        i = np.argmin(lrps)
        out["olrp"][k] = lrps[i]
        out["loc"][k] = total_loc[i] / tp_num[i]
        out["fp"][k] = fp_num[i] / (tp_num[i] + fp_num[i])
        out["fn"][k] = fn_num[i] / npig
        out["thr"][k] = scores[inds][i]
    for key, name in (("moLRP", "olrp"), ("moLRP_Loc", "loc"), ("moLRP_FP", "fp"),
                      ("moLRP_FN", "fn")):  # fmt: skip
        s = out[name][~np.isnan(out[name])]
        s = s[s > -1]
        out[key] = float(np.mean(s)) if s.size else None
    return out
