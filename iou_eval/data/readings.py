"""Doubts that try the other reading on the data itself: no image sizes needed.

Where the two files could be read another way, the readings are compared
on the data: how well the predictions overlap the ground truth under each
(:func:`hit_share`: the share of a seeded sample of predictions whose best
IoU with a ground truth of their class and image reaches 0.5).  Where
overlaps cannot decide, a reading's own signature does.  Three questions
are asked so, after the alignment (both datasets in one vocabulary):

- :func:`layout_reading_doubts`: the box layout of either file (``xyxy``,
  ``xywh``, ``cxcywh``), in any format, with or without image sizes.  Read
  as ``xywh`` (or ``cxcywh``), ``x1 y1 x2 y2`` numbers always have
  ``w > x`` and ``h > y``, which real boxes away from the origin rarely
  have: that signature decides where weak detections overlap better under
  the wrong reading (larger boxes overlap more);
- :func:`image_id_doubts`: image ids shifted by an offset or permuted:
  predictions that overlap another image's ground truth far better than
  their own;
- :func:`class_name_doubts`: a prediction-only class whose name differs
  from a never-predicted ground-truth class only by case, ``_``/``-``/space
  or a plural.

Every check looks at a sample of at most :data:`SAMPLE` predictions and a
bounded number of box pairs, so its cost does not grow with the files.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iou_eval.data.box_format import BoxFormat, to_xyxy
from iou_eval.data.dataset import Dataset, Key, normalize_id
from iou_eval.data.doubts import Doubt

# Predictions looked at (a seeded sample of the better-scored ones).
SAMPLE = 2000
# Box pairs compared at most per reading, and when predictions look for their image.
MAX_PAIRS = 1 << 19
VOTE_PAIRS = 1 << 17
# Predictions looking for their image: the best-scored few of each of a sample of images.
VOTE_IMAGES = 64
VOTE_PER_IMAGE = 4
# A prediction "hits" when its best IoU with a ground truth reaches this.
HIT_IOU = 0.5
# A reading whose share of hits reaches SURE needs no other; another reading
# is clearly better when it reaches STRONG and twice the share (plus a few hits).
SURE = 0.5
STRONG = 0.3
# The corner signature needs this many boxes, this share of them away from the origin.
SIGNATURE_MIN = 8
SIGNATURE_AWAY = 0.2
# The offsets of image ids tried directly (0- against 1-based numbering, one skipped).
OFFSETS = (-1, 1, -2, 2)

# How a side's layout is changed, given the side and the layout that reads it better.
LayoutFix = Callable[[Dataset, str, BoxFormat], str]


@dataclass(frozen=True)
class Scene:
    """What :func:`hit_share` reads: the ground truth by (image, class), and sampled predictions.

    Attributes:
        gt_rows: ``[G']`` the ground truth's non-crowd rows, sorted by ``gt_keys``.
        gt_keys: ``[G']`` ``image_idx * K + category_idx`` of those rows, sorted.
        k: ``K``, the categories of the shared table.
        rows: ``[S]`` sampled prediction rows, in random order.
    """

    gt_rows: np.ndarray
    gt_keys: np.ndarray
    k: int
    rows: np.ndarray


def scene(gt: Dataset, pred: Dataset, size: int = SAMPLE, seed: int = 0) -> Scene | None:
    """The ground truth keyed for look-ups and a seeded sample of at most ``size`` predictions.

    Past ``size`` predictions, the sample is drawn among the best-scored
    tenth (``size`` at least): a detector's low-scored tail is mostly misses
    under any reading.  None when either side is empty.
    """
    if not len(gt) or not len(pred):
        return None
    k = max(len(gt.categories), len(pred.categories))
    real = np.flatnonzero(~gt.is_crowd)
    keys = gt.image_idx[real].astype(np.int64) * k + gt.category_idx[real]
    order = np.argsort(keys, kind="stable")
    rng = np.random.default_rng(seed)
    if len(pred) <= size:
        rows = rng.permutation(len(pred))
    else:
        score = pred.scores
        top = max(size, len(score) // 10)
        best = np.argpartition(-score, top - 1)[:top]
        rows = best[rng.permutation(top)[:size]]
    return Scene(real[order], keys[order], k, rows.astype(np.int64))


def reread(xyxy: np.ndarray, chosen: BoxFormat, other: BoxFormat) -> np.ndarray:
    """``xyxy[N, 4]`` boxes read in ``chosen`` as they would be read in ``other``."""
    if other is chosen:
        return xyxy
    from iou_eval.data.plausibility import from_xyxy

    return to_xyxy(from_xyxy(xyxy, chosen), other)[0]


def pair_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[P]`` IoU of the boxes ``a[P, 4]`` and ``b[P, 4]`` (xyxy) row by row; 0 for empty boxes."""
    iw = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    ih = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    wa = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    wb = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = wa + wb - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def _spans(
    sorted_keys: np.ndarray, keys: np.ndarray, max_pairs: int = MAX_PAIRS
) -> tuple[np.ndarray, np.ndarray]:
    """``(first, count)`` of each key's rows among ``sorted_keys`` (count 0 for a key < 0),
    the counts cut where their total passes ``max_pairs``."""
    lo = np.searchsorted(sorted_keys, keys, side="left")
    counts = np.searchsorted(sorted_keys, keys, side="right") - lo
    counts[keys < 0] = 0
    over = np.cumsum(counts) > max_pairs
    counts[over] = 0
    return lo, counts


def _pairs(lo: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query[P], position[P], starts[Q])`` of every (query, sorted row) pair the spans hold."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    query = np.repeat(np.arange(len(counts)), counts)
    position = np.arange(total) - np.repeat(starts - lo, counts)
    return query, position, starts


def best_iou(sc: Scene, gt_xyxy: np.ndarray, pred_xyxy: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``[S]`` each sampled prediction's best IoU with a ground truth of its key.

    Args:
        gt_xyxy: ``[G', 4]`` the ground-truth boxes in ``sc.gt_rows`` order.
        pred_xyxy: ``[S, 4]`` the sampled predictions' boxes.
        keys: ``[S]`` ``image_idx * K + category_idx`` to look for (-1: none).
    """
    lo, counts = _spans(sc.gt_keys, keys)
    best = np.zeros(len(keys))
    if not counts.any():
        return best
    query, position, starts = _pairs(lo, counts)
    iou = pair_iou(pred_xyxy[query], gt_xyxy[position])
    some = counts > 0
    best[some] = np.maximum.reduceat(iou, starts[some])
    return best


def hit_share(sc: Scene, gt_xyxy: np.ndarray, pred_xyxy: np.ndarray, keys: np.ndarray) -> int:
    """How many sampled predictions reach IoU :data:`HIT_IOU` with a ground truth of their key."""
    return int((best_iou(sc, gt_xyxy, pred_xyxy, keys) >= HIT_IOU).sum())


def clearly_better(hits: int, base: int, n: int) -> bool:
    """Whether ``hits`` of ``n`` is clearly better than ``base`` of ``n``."""
    return n > 0 and hits >= STRONG * n and hits >= 2 * base + 3


@dataclass(frozen=True)
class Readings:
    """The aligned pair sampled once for every question of this module.

    Attributes:
        gt, pred: the aligned datasets.
        sc: the sample (None: a side is empty).
        gt_xyxy: ``[G', 4]`` the ground truth as read, in ``sc.gt_rows`` order.
        pred_xyxy: ``[S, 4]`` the sampled predictions as read.
        keys: ``[S]`` the sampled predictions' (image, class) keys.
        base: hits as read.
    """

    gt: Dataset
    pred: Dataset
    sc: Scene
    gt_xyxy: np.ndarray
    pred_xyxy: np.ndarray
    keys: np.ndarray
    base: int

    @property
    def n(self) -> int:
        return len(self.sc.rows)

    @staticmethod
    def of(gt: Dataset, pred: Dataset) -> Readings | None:
        sc = scene(gt, pred)
        if sc is None or gt.oriented is not None or pred.oriented is not None:
            return None
        gt_xyxy = gt.xyxy[sc.gt_rows]
        pred_xyxy = pred.xyxy[sc.rows]
        keys = pred.image_idx[sc.rows].astype(np.int64) * sc.k + pred.category_idx[sc.rows]
        base = hit_share(sc, gt_xyxy, pred_xyxy, keys)
        return Readings(gt, pred, sc, gt_xyxy, pred_xyxy, keys, base)


# ------------------------------------------------------------------ box layouts


def _layouts(ds: Dataset) -> list[BoxFormat]:
    """The layouts to try for a side: the one read first, then the others where the format is open."""
    chosen = ds.box_format
    if chosen is None or not ds.traits.layout_open:
        return [chosen or BoxFormat.XYXY]
    return [chosen, *(f for f in BoxFormat if f is not chosen)]


def corner_signature(raw: np.ndarray) -> bool:
    """Whether the numbers ``raw[N, 4]`` read as ``x y w h`` (or ``cx cy w h``) look like corners.

    ``x1 y1 x2 y2`` always have ``x2 > x1`` and ``y2 > y1``: read as a
    width and height, every box is wider than its offset from the origin
    and taller than its offset.  Real boxes have that only near the origin
    or when they are large; the corners of a box away from the origin have
    it too, with an offset over half the "width" (``x1 > x2 / 2``).  So
    every box must have it, and a share of them so far out.
    """
    if len(raw) < SIGNATURE_MIN:
        return False
    x, y, w, h = raw.T
    if not ((w > x) & (h > y)).all():
        return False
    away = (2 * x >= w) & (2 * y >= h)
    return bool(away.mean() >= SIGNATURE_AWAY)


def _signature_sides(r: Readings) -> list[str]:
    """The sides whose numbers, read as widths and heights, carry the corner signature."""
    from iou_eval.data.plausibility import from_xyxy

    out = []
    rng = np.random.default_rng(1)
    for side, ds in (("gt", r.gt), ("pred", r.pred)):
        if ds.box_format not in (BoxFormat.XYWH, BoxFormat.CXCYWH):
            continue
        if side == "pred":
            rows = r.sc.rows
        else:
            rows = np.arange(len(ds)) if len(ds) <= 4 * SAMPLE else rng.choice(len(ds), 4 * SAMPLE)
        keep = rows[~ds.is_crowd[rows]]
        if corner_signature(from_xyxy(ds.xyxy[keep], ds.box_format)):
            out.append(side)
    return out


def _null_keys(r: Readings) -> np.ndarray:
    """``[S]`` the sampled predictions' keys on another image (each image to one far in the list)."""
    n_img = len(r.gt.images)
    image = r.pred.image_idx[r.sc.rows].astype(np.int64)
    return (image + max(1, n_img // 2)) % n_img * r.sc.k + r.pred.category_idx[r.sc.rows]


def _best_layouts(r: Readings) -> tuple[BoxFormat, BoxFormat, int, int, int]:
    """The layouts of (ground truth, predictions) under which predictions hit their own image most
    beyond what they hit on another image (larger boxes overlap more, wherever they are).

    Returns the layouts, their hits and that excess, and the excess as read;
    fewer sides changed win ties.
    """
    g0, p0 = r.gt.box_format or BoxFormat.XYXY, r.pred.box_format or BoxFormat.XYXY
    null = _null_keys(r) if len(r.gt.images) > 1 else None

    def excess(gt_xyxy: np.ndarray, pred_xyxy: np.ndarray, hits: int) -> int:
        return hits if null is None else hits - hit_share(r.sc, gt_xyxy, pred_xyxy, null)

    base = excess(r.gt_xyxy, r.pred_xyxy, r.base)
    best = (g0, p0, r.base, base)
    combos = [(g, p) for g in _layouts(r.gt) for p in _layouts(r.pred)]
    combos.sort(key=lambda c: (c[0] is not g0) + (c[1] is not p0))
    gt_all = {g0: r.gt_xyxy}
    for g, p in combos[1:]:
        if g not in gt_all:
            gt_all[g] = reread(r.gt_xyxy, g0, g)
        pred_xyxy = reread(r.pred_xyxy, p0, p)
        hits = hit_share(r.sc, gt_all[g], pred_xyxy, r.keys)
        if hits - 3 > 2 * max(base, 0) and (more := excess(gt_all[g], pred_xyxy, hits)) > best[3]:
            best = (g, p, hits, more)
    return (*best, base)


def layout_reading_doubts(r: Readings, fix: LayoutFix) -> list[str]:
    """A doubt when another box layout of either file reads the data clearly better.

    Overlaps decide first: another reading under which far more predictions
    hit.  Where they cannot (no reading is clearly better), the corner
    signature does, unless the reading as made is sure and the other poor.

    Args:
        r: the sampled pair.
        fix: how a side's layout is changed, in words (a flag to paste).
    """
    g0, p0 = r.gt.box_format or BoxFormat.XYXY, r.pred.box_format or BoxFormat.XYXY
    if r.base < SURE * r.n:
        g, p, hits, more, base = _best_layouts(r)
        if (g, p) != (g0, p0) and clearly_better(more, max(base, 0), r.n):
            changed = [(s, d, f) for s, d, f, f0 in (("gt", r.gt, g, g0), ("pred", r.pred, p, p0))
                       if f is not f0]  # fmt: skip
            read = " and ".join(f"the {_what(s)} boxes as {f.value}" for s, _, f in changed)
            return [Doubt(
                f"{r.pred.source}: {hits} of {r.n} sampled predictions overlap a ground truth "
                f"(IoU >= {HIT_IOU}) reading {read}, {r.base} as read "
                f"({_as_read(r)}): the box layout is in doubt; " + _fixes(changed, fix)
            )]  # fmt: skip
    sides = [s for s in _signature_sides(r) if (r.gt if s == "gt" else r.pred).traits.layout_open]
    if not sides or _overlaps_refute(r, sides):
        return []
    ds = {"gt": r.gt, "pred": r.pred}
    what = " and ".join(f"{_what(s)} ({ds[s].box_format.value})" for s in sides)  # type: ignore[union-attr]
    return [Doubt(
        f"{ds[sides[0]].source}: every {what} box read as width and height is wider than its x "
        "and taller than its y, as x1 y1 x2 y2 corners always are (real boxes away from the "
        "origin rarely are): the box layout is in doubt; "
        + _fixes([(s, ds[s], BoxFormat.XYXY) for s in sides], fix)
    )]  # fmt: skip


def _fixes(changed: list[tuple[str, Dataset, BoxFormat]], fix: LayoutFix) -> str:
    """The fixes of the sides read in another layout; one (side ``"both"``) when both take the same."""
    if len(changed) == 2 and changed[0][2] is changed[1][2]:
        both = fix(changed[1][1], "both", changed[0][2])
        if both != fix(changed[1][1], "pred", changed[0][2]):
            return both
    return "; ".join(dict.fromkeys(fix(d, s, f) for s, d, f in changed))


def _overlaps_refute(r: Readings, sides: list[str]) -> bool:
    """Whether the overlaps are sure of the reading as made and poor under the corners' one."""
    if r.base < SURE * r.n:
        return False
    g0, p0 = r.gt.box_format or BoxFormat.XYXY, r.pred.box_format or BoxFormat.XYXY
    g = BoxFormat.XYXY if "gt" in sides else g0
    p = BoxFormat.XYXY if "pred" in sides else p0
    hits = hit_share(r.sc, reread(r.gt_xyxy, g0, g), reread(r.pred_xyxy, p0, p), r.keys)
    return 2 * hits < r.base


def _what(side: str) -> str:
    return "ground-truth" if side == "gt" else "prediction"


def _as_read(r: Readings) -> str:
    g, p = r.gt.box_format, r.pred.box_format
    return f"ground truth {g.value if g else 'xyxy'}, predictions {p.value if p else 'xyxy'}"


# ------------------------------------------------------------------ image ids


def _numeric_ids(ids: tuple[Key, ...]) -> np.ndarray | None:
    """``[I]`` the ids as integers, or None when one is not a whole number."""
    if all(type(k) is int for k in ids):  # COCO's ids: no parsing
        try:
            return np.array(ids, dtype=np.int64)
        except OverflowError:
            return None
    out = np.empty(len(ids), dtype=np.int64)
    for i, k in enumerate(ids):
        try:
            v = normalize_id(k)
        except ValueError:
            return None
        if not isinstance(v, int) or abs(v) >= 1 << 62:
            return None
        out[i] = v
    return out


def _offset_keys(r: Readings, ids: np.ndarray, shift: int) -> np.ndarray:
    """``[S]`` the sampled predictions' keys were their image ids ``shift`` more than the truth."""
    order = np.argsort(ids, kind="stable")
    want = ids[r.pred.image_idx[r.sc.rows]] - shift
    at = np.clip(np.searchsorted(ids[order], want), 0, len(ids) - 1)
    found = ids[order][at] == want
    image = np.where(found, order[at], -1)
    return np.where(found, image * r.sc.k + r.pred.category_idx[r.sc.rows], -1)


def _offset_doubt(r: Readings, ids: np.ndarray | None, unknown: int) -> str | None:
    if ids is None:
        return None
    best = max(
        ((hit_share(r.sc, r.gt_xyxy, r.pred_xyxy, _offset_keys(r, ids, s)), s) for s in OFFSETS),
        key=lambda t: t[0],
    )
    hits, shift = best
    if not clearly_better(hits, r.base, r.n):
        return None
    evidence = (
        f"{hits} of {r.n} sampled predictions overlap a ground truth (IoU >= {HIT_IOU}) so, "
        f"{r.base} on their own image"
    )
    return _shift_text(r, shift, evidence, unknown)


def _shift_text(r: Readings, shift: int, evidence: str, unknown: int = 0) -> str:
    lost = (
        f"; the {unknown} prediction(s) on images the ground truth does not list are the same "
        "shift, not images to declare"
        if unknown
        else ""
    )
    return (
        f"{r.pred.source}: image ids look shifted by {shift:+d}: predictions on image k overlap "
        f"the ground truth of image k{-shift:+d} ({evidence}); pass --image-id-offset {-shift} "
        f"to score them so{lost}"
    )


def image_id_doubts(r: Readings, unknown: int = 0) -> list[str]:
    """A doubt when predictions overlap another image's ground truth far better than their own.

    An offset of the ids (:data:`OFFSETS`) is tried directly; then each
    sampled prediction is compared with every ground truth of its class, and
    the images whose predictions mostly land on one other image are counted
    (:func:`_moved_images`).  Nothing is tried when the predictions already
    hit their own images' ground truth often.  ``unknown``: prediction rows
    on images the ground truth does not list (an offset explains them).
    """
    if r.base >= SURE * r.n or r.n < 4:
        return []
    ids = _numeric_ids(r.gt.images.ids)
    text = _offset_doubt(r, ids, unknown)
    if text is not None:
        return [Doubt(text)]
    moved = _moved_images(r)
    if moved is None:
        return []
    own, other, votes, n_own, eligible = moved
    if ids is not None:
        diffs = ids[other] - ids[own]
        values, counts = _counted(diffs)
        if counts.max() >= 0.8 * len(diffs):
            shift = -int(values[np.argmax(counts)])
            evidence = f"on {len(own)} of {eligible} images checked"
            return [Doubt(_shift_text(r, shift, evidence, unknown))]
    gi = r.gt.images.ids
    return [Doubt(
        f"{r.pred.source}: on {len(own)} of {eligible} images checked, the predictions overlap "
        f"another image's ground truth far better than their own (e.g. the predictions on image "
        f"{gi[own[0]]!r} overlap the ground truth of image {gi[other[0]]!r}: {votes[0]} at IoU >= "
        f"{HIT_IOU}, {n_own[0]} on their own): are the predictions' image ids the ground truth's? "
        "(another numbering, or a join by file name that disagrees with the ids)"
    )]  # fmt: skip


def _counted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct values[U], how many times each[U])``, sorted; ``np.unique`` would import
    ``numpy.ma`` (start-up time)."""
    v = np.sort(values)
    start = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if len(v) else np.zeros(0, np.int64)
    return v[start], np.diff(np.r_[start, len(v)])


def _vote_rows(r: Readings) -> np.ndarray:
    """The best-scored :data:`VOTE_PER_IMAGE` predictions of up to :data:`VOTE_IMAGES` images
    (seeded, among the images of the sample), grouped by image."""
    pred = r.pred
    images = _counted(pred.image_idx[r.sc.rows])[0]
    rng = np.random.default_rng(2)
    chosen = rng.permutation(images)[:VOTE_IMAGES]
    mark = np.zeros(len(r.gt.images), dtype=bool)
    mark[chosen] = True
    rows = np.flatnonzero(mark[pred.image_idx])
    image = pred.image_idx[rows]
    rows = rows[np.lexsort((-pred.scores[rows], image))]
    image = pred.image_idx[rows]
    start = np.flatnonzero(np.r_[True, image[1:] != image[:-1]])
    rank = np.arange(len(rows)) - np.repeat(start, np.diff(np.r_[start, len(rows)]))
    return rows[rank < VOTE_PER_IMAGE]


def _window_hits(r: Readings, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(prediction[H], ground-truth image[H], compared[len(rows)])``: the distinct pairs of a
    prediction of ``rows`` and an image where a ground truth of its class overlaps it at
    :data:`HIT_IOU`, and which predictions were compared (the pairs are bounded).

    IoU 0.5 needs the overlap to span half of either box's width, so a
    ground truth can only start between ``x1 - w`` and ``x1 + w / 2`` of the
    prediction: only those, found by a sorted ``(class, x1)`` key, are compared.
    """
    gt_rows = r.sc.gt_rows
    gx = r.gt.xyxy[gt_rows]
    px = r.pred.xyxy[rows]
    span = 4.0 * float(max(np.abs(gx).max(initial=0.0), np.abs(px).max(initial=0.0))) + 1.0
    gkey = r.gt.category_idx[gt_rows] * span + gx[:, 0]
    order = np.argsort(gkey, kind="stable")
    gkey = gkey[order]
    w = np.clip(px[:, 2] - px[:, 0], 0.0, None)
    base = r.pred.category_idx[rows] * span + px[:, 0]
    lo = np.searchsorted(gkey, base - w, side="left")
    counts = np.searchsorted(gkey, base + 0.5 * w, side="right") - lo
    compared = np.cumsum(counts) <= VOTE_PAIRS
    counts[~compared] = 0
    query, position, _ = _pairs(lo, counts)
    gt_at = order[position]
    hit = pair_iou(px[query], gx[gt_at]) >= HIT_IOU
    n_img = len(r.gt.images)
    img = r.gt.image_idx[gt_rows[gt_at[hit]]].astype(np.int64)
    pairs = _counted(query[hit].astype(np.int64) * n_img + img)[0]
    return pairs // n_img, pairs % n_img, compared


def _moved_images(
    r: Readings,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int] | None:
    """Images whose predictions mostly hit one other image's ground truth.

    The best-scored predictions of a sample of images (:func:`_vote_rows`)
    are compared with every ground truth of their class that may overlap
    them (:func:`_window_hits`); each hit is a vote for an image.

    Returns ``(image[M], other image[M], hits there[M], hits on its own[M],
    images with two predictions or more checked)``, or None when fewer than
    three images (or fewer than half of those checked) moved.
    """
    n_img = len(r.gt.images)
    rows = _vote_rows(r)
    q, g, compared = _window_hits(r, rows)
    pred_img = r.pred.image_idx[rows].astype(np.int64)
    votes_key, votes = _counted(pred_img[q] * n_img + g)
    p_img, g_img = votes_key // n_img, votes_key % n_img
    checked = np.bincount(pred_img[compared], minlength=n_img)
    own = np.zeros(n_img, dtype=np.int64)
    own[p_img[p_img == g_img]] = votes[p_img == g_img]
    # The other image with the most votes, per image (ties: the lowest index).
    away = p_img != g_img
    pa, ga, va = p_img[away], g_img[away], votes[away]
    top = np.lexsort((ga, -va, pa))
    first = np.ones(len(top), dtype=bool)
    first[1:] = pa[top][1:] != pa[top][:-1]
    pa, ga, va = pa[top][first], ga[top][first], va[top][first]
    moved = (va >= np.maximum(2, 0.5 * checked[pa])) & (va >= 2 * own[pa] + 1)
    eligible = int((checked >= 2).sum())
    if moved.sum() < max(3, 0.5 * eligible):
        return None
    return pa[moved], ga[moved], va[moved], own[pa[moved]], eligible


# ------------------------------------------------------------------ class names


def name_forms(name: str) -> set[str]:
    """The spellings a class name is compared by: lower case, ``_``/``-``/spaces as one, singular."""
    s = re.sub(r"[\s_\-]+", " ", name.strip().lower())
    forms = {s}
    if len(s) > 3 and s.endswith("es"):
        forms.add(s[:-2])
    if len(s) > 2 and s.endswith("s"):
        forms.add(s[:-1])
    return forms


def class_name_doubts(gt: Dataset, pred: Dataset, n_categories: int) -> list[str]:
    """A doubt naming ``--class-map FROM=TO`` for prediction-only classes that nearly match.

    Args:
        gt, pred: the aligned datasets (one category table: the ground
            truth's ``n_categories`` first, prediction-only ones after).
    """
    cats = pred.categories
    if len(cats) <= n_categories or not len(pred):
        return []
    counts = np.bincount(pred.category_idx, minlength=len(cats))
    idle = [i for i in range(n_categories) if counts[i] == 0]
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for j in range(n_categories, len(cats)):
        if not counts[j]:
            continue
        forms = name_forms(cats.names[j]) | name_forms(str(cats.ids[j]))
        near = [i for i in idle if i not in taken and forms & name_forms(cats.names[i])]
        if len(near) == 1:
            pairs.append((j, near[0]))
            taken.add(near[0])
    if not pairs:
        return []
    spelled = ",".join(f"{cats.ids[j]}={cats.ids[i]}" for j, i in pairs)
    shown = ", ".join(f"{cats.names[j]!r} ({int(counts[j])} predictions) for {cats.names[i]!r}"
                      for j, i in pairs[:5])  # fmt: skip
    return [Doubt(
        f"{pred.source}: {len(pairs)} prediction class(es) the ground truth does not have are "
        f"spelled like a ground-truth class that has no predictions: {shown}; pass "
        f"--class-map {shlex.quote(spelled)} to score them as those classes"
    )]  # fmt: skip


def offset_image_ids(ds: Dataset, offset: int) -> Dataset:
    """``ds`` with ``offset`` added to its image ids (``--image-id-offset N``).

    The ids must be whole numbers (``"00012"`` is 12); the shifted images
    join the ground truth by id only (a file name would join them unshifted).
    """
    from dataclasses import replace

    from iou_eval.errors import UsageError

    ids = _numeric_ids(ds.images.ids)
    if ids is None:
        bad = next(k for k in ds.images.ids if not isinstance(_whole(k), int))
        raise UsageError(f"--image-id-offset: {ds.source}: image id {bad!r} is not a whole number")
    images = replace(
        ds.images,
        ids=tuple(int(v) + offset for v in ids.tolist()),
        file_names=(None,) * len(ids),
    )
    return replace(ds, images=images)


def _whole(key: Key) -> Key | None:
    try:
        return normalize_id(key)
    except ValueError:
        return None
