"""A plain-Python reference of the DOTA devkit's task-1 evaluation, for parity tests.

Written from the rules of ``dota_evaluation_task1.py`` and its C++ extension
``polyiou`` (``iou_poly``), one detection and one point at a time with
Python floats (IEEE doubles, each operation rounded as the C++ rounds it
on x86-64): clarity over speed.  Nothing of the devkit is imported.

The rules:

* polygon IoU: each polygon whose shoelace area is negative is reversed;
  the intersection is the sum, over every ground-truth edge (outer loop) and
  prediction edge (inner loop), of the signed overlap of the triangles the
  two edges make with the origin; a triangle is clipped by the three sides
  of the other with a tolerance of 1e-8 (points within 1e-8 of a line are on
  it, points within 1e-8 on both axes are one);
* per class: predictions by ``np.argsort(-confidence)`` over the class's
  lines in file order, as the devkit sorts them (equal confidences in the
  order numpy's default sort leaves them);
  a prediction looks only at the ground truths of its image whose enclosing
  boxes overlap its own (+1 pixel, IoU > 0), takes the one of highest
  polygon IoU (the first of equal ones), and is a true positive when that
  IoU exceeds 0.5, the object is not difficult and not taken; a difficult
  object neither counts nor is counted;
* AP: VOC's 11-point interpolation (the devkit's default) or the area under
  the precision envelope.
"""

from __future__ import annotations

import math

import numpy as np

EPS = 1e-8


def _sig(d: float) -> int:
    return (d > EPS) - (d < -EPS)


def _cross(o, a, b) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (b[0] - o[0]) * (a[1] - o[1])


def _area(ps: list) -> float:
    res = 0.0
    n = len(ps)
    for i in range(n):
        q = ps[(i + 1) % n]
        res += ps[i][0] * q[1] - ps[i][1] * q[0]
    return res / 2.0


def _same(p, q) -> bool:
    return _sig(p[0] - q[0]) == 0 and _sig(p[1] - q[1]) == 0


def _line_cross(a, b, c, d, sc: int, sd: int):
    s1 = _cross(a, b, c)
    s2 = _cross(a, b, d)
    if _sig(s2 - s1) == 0:
        # The devkit leaves the point unwritten; the end on the line stands in.
        return c if sc == 0 else d
    return ((c[0] * s2 - d[0] * s1) / (s2 - s1), (c[1] * s2 - d[1] * s1) / (s2 - s1))


def _cut(p: list, a, b) -> list:
    n = len(p)
    pp = []
    for i in range(n):
        cur, nxt = p[i], p[(i + 1) % n]
        s_cur, s_nxt = _sig(_cross(a, b, cur)), _sig(_cross(a, b, nxt))
        if s_cur > 0:
            pp.append(cur)
        if s_cur != s_nxt:
            pp.append(_line_cross(a, b, cur, nxt, s_cur, s_nxt))
    out = [q for i, q in enumerate(pp) if i == 0 or not _same(q, pp[i - 1])]
    while len(out) > 1 and _same(out[-1], out[0]):
        out.pop()
    return out


def _triangle_overlap(a, b, c, d) -> float:
    o = (0.0, 0.0)
    s1 = _sig(_cross(o, a, b))
    s2 = _sig(_cross(o, c, d))
    if s1 == 0 or s2 == 0:
        return 0.0
    if s1 == -1:
        a, b = b, a
    if s2 == -1:
        c, d = d, c
    p = [o, a, b]
    p = _cut(p, o, c)
    p = _cut(p, c, d)
    p = _cut(p, d, o)
    res = math.fabs(_area(p))
    return -res if s1 * s2 == -1 else res


def iou_poly(gt8, dt8) -> float:
    """The devkit's polygon IoU of a ground truth and a prediction, ``[x1, y1, ..., x4, y4]`` each."""
    ps1 = [(float(gt8[2 * i]), float(gt8[2 * i + 1])) for i in range(4)]
    ps2 = [(float(dt8[2 * i]), float(dt8[2 * i + 1])) for i in range(4)]
    if _area(ps1) < 0:
        ps1.reverse()
    if _area(ps2) < 0:
        ps2.reverse()
    inter = 0.0
    for i in range(4):
        for j in range(4):
            inter += _triangle_overlap(ps1[i], ps1[(i + 1) % 4], ps2[j], ps2[(j + 1) % 4])
    union = math.fabs(_area(ps1)) + math.fabs(_area(ps2)) - inter
    return inter / union


def _enclosure_overlaps(bb, gts) -> np.ndarray:
    """The devkit's prefilter: IoU of enclosing boxes with +1-pixel extents, ``[G]``."""
    g = np.asarray(gts, dtype=float).reshape(-1, 8)
    b = np.asarray(bb, dtype=float)
    gx1, gy1 = g[:, 0::2].min(axis=1), g[:, 1::2].min(axis=1)
    gx2, gy2 = g[:, 0::2].max(axis=1), g[:, 1::2].max(axis=1)
    bx1, by1, bx2, by2 = b[0::2].min(), b[1::2].min(), b[0::2].max(), b[1::2].max()
    iw = np.maximum(np.minimum(gx2, bx2) - np.maximum(gx1, bx1) + 1.0, 0.0)
    ih = np.maximum(np.minimum(gy2, by2) - np.maximum(gy1, by1) + 1.0, 0.0)
    inters = iw * ih
    uni = (bx2 - bx1 + 1.0) * (by2 - by1 + 1.0) + (gx2 - gx1 + 1.0) * (gy2 - gy1 + 1.0) - inters
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


def task1_class(gts, dets, classname, thr=0.5, eleven_point=True):
    """``(ap, tp[D], fp[D])`` of one class; ``ap`` None without (non-difficult) ground truth.

    Args:
        gts: ``(image, class, [x1, y1, ..., x4, y4], difficult)`` in file order.
        dets: ``(image, class, score, [x1, y1, ..., x4, y4])`` in file order.
    """
    recs: dict = {}
    npos = 0
    for img, cls, poly, diff in gts:
        if cls != classname:
            continue
        r = recs.setdefault(img, {"poly": [], "difficult": [], "det": []})
        r["poly"].append(poly)
        r["difficult"].append(bool(diff))
        r["det"].append(False)
        npos += 0 if diff else 1
    mine = [d for d in dets if d[1] == classname]
    conf = np.array([d[2] for d in mine], dtype=float)
    order = np.argsort(-conf)
    tp = np.zeros(len(mine))
    fp = np.zeros(len(mine))
    for k, idx in enumerate(order):
        img, _, _, bb = mine[idx]
        r = recs.get(img)
        ovmax = -np.inf
        jmax = -1
        if r is not None and r["poly"]:
            keep = np.flatnonzero(_enclosure_overlaps(bb, r["poly"]) > 0)
            if len(keep):
                ov = [iou_poly(r["poly"][g], bb) for g in keep]
                ovmax = max(ov)
                jmax = int(keep[int(np.argmax(ov))])
        if ovmax > thr:
            if not r["difficult"][jmax]:
                if not r["det"][jmax]:
                    tp[k] = 1.0
                    r["det"][jmax] = True
                else:
                    fp[k] = 1.0
        else:
            fp[k] = 1.0
    if npos == 0:
        return None, tp, fp
    tp_c, fp_c = np.cumsum(tp), np.cumsum(fp)
    rec = tp_c / float(npos)
    prec = tp_c / np.maximum(tp_c + fp_c, np.finfo(np.float64).eps)
    return ap_from_curve(rec, prec, eleven_point), tp, fp


def task1(gts, dets, classnames, thr=0.5, eleven_point=True):
    """``({class: ap or None}, mAP over the classes with ground truth)`` in ``classnames`` order."""
    aps = {c: task1_class(gts, dets, c, thr, eleven_point)[0] for c in classnames}
    defined = [a for a in aps.values() if a is not None]
    return aps, (float(np.mean(defined)) if defined else None)
