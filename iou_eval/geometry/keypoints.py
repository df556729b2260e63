"""Keypoints: OKS (object keypoint similarity) as pycocotools' ``computeOks``, behind the seam.

A row's keypoints are ``K`` points ``(x, y)``; a ground truth's also say which
are labelled (``v > 0``).  The overlap of a prediction ``d`` and a ground
truth ``g`` is, operation for operation as ``COCOeval.computeOks``::

    var = (sigmas * 2) ** 2                       # per keypoint
    e   = (dx ** 2 + dy ** 2) / var / (area_g + eps) / 2
    oks = sum(exp(-e)) / len(e)

with ``area_g`` the ground truth's ``area`` field and ``eps = np.spacing(1)``:

* a ground truth with labelled keypoints: ``dx = x_d - x_g`` (likewise
  ``dy``), and only its labelled keypoints enter ``e``;
* a ground truth with none labelled: each predicted keypoint's distance to
  its box enlarged by the box's width (height) on each side, 0 inside
  (``x0 = x - w``, ``x1 = x + 2 w``), and every keypoint enters ``e``.

The sums are numpy's over the same number of terms in the same order, so
the bits are the reference's; the compiled kernel (``_kptkernel.c``, where
it is built) computes the same floats in the same order, numpy's pairwise
sum included.  A ground truth whose ``num_keypoints`` is 0
is ignored (pycocotools: ``ignore = num_keypoints == 0 or iscrowd``); a crowd
region is matched by OKS like any ground truth and absorbs any number of
predictions (the matcher's rule).  A prediction's own ``v`` (a confidence)
is never read.

Rows of a category hold that category's ``K`` keypoints; categories may
differ in ``K`` (columns are padded with NaN past a row's ``count``), each
with its own sigmas.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from iou_eval.data.ordering import distinct
from iou_eval.errors import UsageError
from iou_eval.geometry.pairs import _PAIR_CHUNK, candidate_pairs, join_pairs, pairs_in_threads

# pycocotools' Params.kpt_oks_sigmas: the 17 COCO person keypoints, the same
# expression so the floats are the same.
COCO_SIGMAS = (
    np.array([0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07,
              0.87, 0.87, 0.89, 0.89]) / 10.0
)  # fmt: skip
_EPS = np.spacing(1)


@dataclass(frozen=True)
class KeypointColumn:
    """The keypoints of ``N`` rows, in pixels.

    Attributes:
        x, y: ``[N, K]`` float64; NaN past a row's ``count``.
        count: ``[N]`` int64 the row's number of keypoints (its category's K).
        visible: ``[N, K]`` bool labelled (``v > 0``), ground truth; None for predictions.
        num_keypoints: ``[N]`` int64 the ground truth's ``num_keypoints`` (0: ignored); None
            for predictions.
        box: ``[N, 4]`` float64 the ground truth's ``bbox`` as given (``x, y, w, h``),
            which an unlabelled ground truth's distances are measured to; None for predictions.
        sigmas: ``[C, K]`` float64 each ground-truth category's sigmas (NaN past its K),
            set when the two sides are aligned (:func:`with_keypoints`).
    """

    x: np.ndarray
    y: np.ndarray
    count: np.ndarray
    visible: np.ndarray | None = None
    num_keypoints: np.ndarray | None = None
    box: np.ndarray | None = None
    sigmas: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        n, k = self.x.shape if self.x.ndim == 2 else (-1, -1)
        expect = {
            "x": (self.x, np.float64, (n, k)),
            "y": (self.y, np.float64, (n, k)),
            "count": (self.count, np.int64, (n,)),
            "visible": (self.visible, np.bool_, (n, k)),
            "num_keypoints": (self.num_keypoints, np.int64, (n,)),
            "box": (self.box, np.float64, (n, 4)),
        }
        for name, (arr, dtype, shape) in expect.items():
            if arr is None and name in ("visible", "num_keypoints", "box"):
                continue
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape != shape:
                found = (
                    f"{arr.dtype}{arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
                )
                raise ValueError(
                    f"KeypointColumn.{name}: expected {np.dtype(dtype)}{shape}, found {found}"
                )

    def __len__(self) -> int:
        return len(self.count)

    @property
    def width(self) -> int:
        """``K``: the most keypoints of any row."""
        return int(self.x.shape[1])

    def take(self, rows: np.ndarray) -> KeypointColumn:
        """The rows selected by an integer or boolean index."""

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[rows]

        return KeypointColumn(
            x=self.x[rows], y=self.y[rows], count=self.count[rows], visible=pick(self.visible),
            num_keypoints=pick(self.num_keypoints), box=pick(self.box), sigmas=self.sigmas,
        )  # fmt: skip

    @staticmethod
    def of_points(
        x: np.ndarray,
        y: np.ndarray,
        visible: np.ndarray,
        count: np.ndarray,
        gt: bool,
        num_keypoints: np.ndarray | None = None,
        box: np.ndarray | None = None,
    ) -> KeypointColumn:
        """A column from every row's keypoints back to back.

        Args:
            x, y: ``[B]`` float64 and visible: ``[B]`` bool (``v > 0``), every
                row's keypoints in row order.
            count: ``[N]`` int64 keypoints of each row.
            gt: keep the labels and ``num_keypoints`` / ``box``.

        Rows of one K (the usual case) are the columns reshaped, not copied.
        """
        n = len(count)
        count = count.astype(np.int64, copy=False)
        k = int(count.max()) if n else 0
        if n and (count == k).all():  # one K for every row: a reshape
            x, y, visible = x.reshape(n, k), y.reshape(n, k), visible.reshape(n, k)
        else:
            row = np.repeat(np.arange(n), count)
            col = np.arange(len(x)) - np.repeat(np.cumsum(count) - count, count)
            flat_x, flat_y, flat_v = x, y, visible
            x, y = np.full((n, k), np.nan), np.full((n, k), np.nan)
            visible = np.zeros((n, k), dtype=bool)
            x[row, col], y[row, col], visible[row, col] = flat_x, flat_y, flat_v
        if not gt:
            return KeypointColumn(x, y, count)
        return KeypointColumn(x, y, count, visible.astype(bool, copy=False), num_keypoints, box)


@dataclass(frozen=True)
class PendingKeypoints:
    """Keypoints of ``N`` rows still to be read with their category's K and image size.

    Ultralytics' ``predict`` text writes ``x y [conf]`` per keypoint as
    fractions of the image, how many numbers a keypoint takes following the
    model's ``kpt_shape``: the ground truth's K of the row's category decides
    it, and the image's size scales it, once the two sides are aligned.

    Attributes:
        values: ``[B]`` float64 the numbers between the box and the confidence.
        start, length: ``[N]`` int64 each row's numbers in ``values``.
        files: the files read; origin_file: ``[N]`` int32 index into them;
        lines: ``[N]`` int64 each row's line.
    """

    values: np.ndarray
    start: np.ndarray
    length: np.ndarray
    files: tuple[str, ...]
    origin_file: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def take(self, rows: np.ndarray) -> PendingKeypoints:
        return PendingKeypoints(
            self.values, self.start[rows], self.length[rows], self.files,
            self.origin_file[rows], self.lines[rows],
        )  # fmt: skip


# --------------------------------------------------------------------------- OKS


@dataclass(frozen=True)
class _GroundTruths:
    """What OKS reads of the ground truths, prepared once.

    Attributes:
        kp: the keypoints; area: ``[G]`` the ``area`` field (the OKS scale);
        var: ``[G, K]`` ``(sigma * 2) ** 2`` of each row's category.
        labelled: ``[G]`` number of labelled keypoints; order: ``[G, K]`` each
            row's keypoint indices, the labelled first (in order).
    """

    kp: KeypointColumn
    area: np.ndarray
    var: np.ndarray
    labelled: np.ndarray
    order: np.ndarray

    @staticmethod
    def of(kp: KeypointColumn, area: np.ndarray, category: np.ndarray) -> _GroundTruths:
        if kp.visible is None or kp.box is None or kp.sigmas is None:
            raise ValueError("ground-truth keypoints need labels, boxes and sigmas")
        # pycocotools: vars = (sigmas * 2)**2, elementwise.
        var_table = (kp.sigmas * 2) ** 2
        var = var_table[category] if len(category) else np.zeros((0, kp.width))
        order = np.argsort(~kp.visible, axis=1, kind="stable")
        return _GroundTruths(kp, area, var, kp.visible.sum(axis=1), order)


def _labelled_terms(
    gt: _GroundTruths, dt: KeypointColumn, d: np.ndarray, g: np.ndarray, n: int
) -> np.ndarray:
    """``[P, n]`` ``dx ** 2 + dy ** 2`` over the ``n`` labelled keypoints of each pair's ground truth."""
    k = gt.order[g, :n]
    # Gathers from the flattened columns: faster than 2-D fancy indexing.
    width = dt.x.shape[1]
    at_d, at_g = d[:, None] * width + k, g[:, None] * width + k
    dx = np.take(dt.x, at_d) - np.take(gt.kp.x, at_g)
    dy = np.take(dt.y, at_d) - np.take(gt.kp.y, at_g)
    return dx**2 + dy**2


def _box_terms(gt: _GroundTruths, dt: KeypointColumn, d: np.ndarray, g: np.ndarray, n: int):
    """``([P, n] dx ** 2 + dy ** 2, k[P, n])``: distances to each ground truth's enlarged box."""
    box = gt.kp.box[g]  # type: ignore[index]
    bx, by, bw, bh = (box[:, i : i + 1] for i in range(4))
    x0, x1 = bx - bw, bx + bw * 2
    y0, y1 = by - bh, by + bh * 2
    xd, yd = dt.x[d, :n], dt.y[d, :n]
    dx = np.maximum(0.0, x0 - xd) + np.maximum(0.0, xd - x1)
    dy = np.maximum(0.0, y0 - yd) + np.maximum(0.0, yd - y1)
    return dx**2 + dy**2, np.broadcast_to(np.arange(n), (len(d), n))


def _block_oks(
    gt: _GroundTruths, dt: KeypointColumn, d: np.ndarray, g: np.ndarray, n: int, labelled: bool
) -> np.ndarray:
    """``[P]`` OKS of pairs whose ground truths all sum ``n`` terms of one kind."""
    if labelled:
        sq, k = _labelled_terms(gt, dt, d, g, n), gt.order[g, :n]
    else:
        sq, k = _box_terms(gt, dt, d, g, n)
    var = np.take(gt.var, g[:, None] * gt.var.shape[1] + k)
    e = sq / var / (gt.area[g][:, None] + _EPS) / 2
    # Contiguous rows of n terms: numpy sums each as it sums a 1-D array of n.
    return np.ascontiguousarray(np.exp(-e)).sum(axis=1) / n


def _kernel_columns(gt: _GroundTruths, dt: KeypointColumn) -> tuple:
    """The columns the compiled kernel reads (see ``_kptkernel.c``), contiguous."""
    c = np.ascontiguousarray
    return (
        c(dt.x), c(dt.y), c(dt.count), c(gt.kp.x), c(gt.kp.y), c(gt.kp.visible),
        c(gt.kp.box, dtype=np.float64), c(gt.area, dtype=np.float64),
        c(gt.var[:, : gt.kp.width]), c(gt.kp.count),
    )  # fmt: skip


def pair_oks(gt: _GroundTruths, dt: KeypointColumn, d: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``[P]`` OKS of the pairs ``dt`` row ``d[P]``, ground-truth row ``g[P]``.

    From the compiled kernel where it is built (the same bits), else numpy.
    """
    from iou_eval.geometry.kernel import keypoint_kernel

    kernel = keypoint_kernel()
    if kernel is not None and len(d):
        c = np.ascontiguousarray
        oks = kernel.pair(c(d), c(g), *_kernel_columns(gt, dt))
        if oks is not None:  # None: counts differ, which numpy's path reports
            return np.frombuffer(oks, dtype=np.float64)
    return _numpy_pair_oks(gt, dt, d, g)


def _numpy_pair_oks(
    gt: _GroundTruths, dt: KeypointColumn, d: np.ndarray, g: np.ndarray
) -> np.ndarray:
    """:func:`pair_oks` in numpy (the reference)."""
    out = np.empty(len(d), dtype=np.float64)
    if not len(d):
        return out
    count = gt.kp.count[g]
    if (dt.count[d] != count).any():
        p = int(np.flatnonzero(dt.count[d] != count)[0])
        raise UsageError(
            f"--iou-type keypoints: a prediction of {int(dt.count[d[p]])} keypoints meets a "
            f"ground truth of {int(count[p])}"
        )
    labelled = gt.labelled[g]
    terms = np.where(labelled > 0, labelled, count)
    for n in distinct(terms).tolist():
        for kind in (True, False):
            sel = np.flatnonzero((terms == n) & ((labelled > 0) == kind))
            if len(sel):
                out[sel] = _block_oks(gt, dt, d[sel], g[sel], n, kind)
    return out


def oks_matrix(
    gt: KeypointColumn, gt_area: np.ndarray, gt_category: np.ndarray, dt: KeypointColumn
) -> np.ndarray:
    """``[G, D]`` OKS of every ground truth with every prediction (``gt.sigmas`` set)."""
    prepared = _GroundTruths.of(gt, gt_area, gt_category)
    n_g, n_d = len(gt), len(dt)
    g = np.repeat(np.arange(n_g), n_d)
    d = np.tile(np.arange(n_d), n_g)
    return pair_oks(prepared, dt, d, g).reshape(n_g, n_d)


# --------------------------------------------------------------------------- the geometry


@dataclass(frozen=True)
class KeypointGeometry:
    """Keypoints, overlaps as pycocotools' ``computeOks``.

    Attributes:
        gt: the ground truths' keypoints (with sigmas); gt_area: ``[G]`` their ``area``;
        gt_category: ``[G]`` their category (picks the sigmas).
        dt: the predictions' keypoints; dt_range_area: ``[D]`` the area ``loadRes``
            gave each (its box's ``w * h``), which the area ranges test.
        threads: threads that share :meth:`pairs` with the compiled kernel (it
            releases the GIL), each a run of predictions of about as many
            candidate pairs; the pairs are the same for any number.
    """

    gt: KeypointColumn
    gt_area: np.ndarray
    gt_category: np.ndarray
    dt: KeypointColumn
    dt_range_area: np.ndarray
    name: str = "keypoints"
    threads: int = 1

    @staticmethod
    def of(gt, pred) -> KeypointGeometry:
        """The geometry of an aligned pair of datasets (:func:`with_keypoints` applied)."""
        if not isinstance(gt.keypoints, KeypointColumn) or not isinstance(
            pred.keypoints, KeypointColumn
        ):
            raise ValueError("keypoints are read with --iou-type keypoints, then aligned")
        return KeypointGeometry(gt.keypoints, gt.area, gt.category_idx, pred.keypoints, pred.area)

    @cached_property
    def _prepared(self) -> _GroundTruths:
        return _GroundTruths.of(self.gt, self.gt_area, self.gt_category)

    @cached_property
    def _kernel_columns(self) -> tuple:
        return _kernel_columns(self._prepared, self.dt)

    @property
    def dt_area(self) -> np.ndarray:
        return self.dt_range_area

    @property
    def gt_ignored(self) -> np.ndarray:
        """``[G]`` bool: ground truths pycocotools ignores for keypoints (``num_keypoints == 0``)."""
        num = self.gt.num_keypoints
        return np.zeros(len(self.gt), dtype=bool) if num is None else num == 0

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Same-group pairs whose OKS reaches ``floor`` (see ``BoxGeometry.pairs``)."""
        from iou_eval.geometry.kernel import keypoint_kernel

        kernel = keypoint_kernel()
        if kernel is not None:
            found = _kernel_pairs(kernel, self, d_groups, gt_sorted, g_starts, dt_rows, floor)
            if found is not None:  # None: counts differ, which numpy's path reports
                return found
        parts_d, parts_g, parts_iou = [], [], []
        for lo in range(0, len(d_groups), _PAIR_CHUNK):
            pd, pg = candidate_pairs(d_groups[lo : lo + _PAIR_CHUNK], g_starts)
            pg = gt_sorted[pg]
            oks = pair_oks(self._prepared, self.dt, dt_rows[lo + pd], pg)
            keep = oks >= floor
            parts_d.append(pd[keep] + lo)
            parts_g.append(pg[keep])
            parts_iou.append(oks[keep])
        return join_pairs(parts_d, parts_g, parts_iou)

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        return pair_oks(self._prepared, self.dt, dt_rows, gt_rows)

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> KeypointGeometry:
        return KeypointGeometry(
            self.gt.take(gt_rows), self.gt_area[gt_rows], self.gt_category[gt_rows],
            self.dt.take(dt_rows), self.dt_range_area[dt_rows], self.name, self.threads,
        )  # fmt: skip

    def with_threads(self, threads: int) -> KeypointGeometry:
        """This geometry, its pairs found by ``threads`` threads (see ``threads``)."""
        return replace(self, threads=max(1, int(threads)))


# Below this many candidate pairs a second thread costs more than it saves.
_THREAD_MIN_PAIRS = 20_000


def _kernel_pairs(
    kernel: Any,
    geo: KeypointGeometry,
    d_groups: np.ndarray,
    gt_sorted: np.ndarray,
    g_starts: np.ndarray,
    dt_rows: np.ndarray,
    floor: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:meth:`KeypointGeometry.pairs` by the compiled kernel, or None where counts differ.

    The predictions are cut into ``geo.threads`` runs of about as many
    candidate pairs, each run one kernel call in a thread; their pairs are
    joined in run order, which is the order of one call.
    """
    c = np.ascontiguousarray
    groups, rows, sorted_rows, starts = c(d_groups), c(dt_rows), c(gt_sorted), c(g_starts)
    columns = geo._kernel_columns

    def pairs_of(lo: int, hi: int) -> tuple | None:
        return kernel.pairs(groups[lo:hi], sorted_rows, starts, rows[lo:hi], float(floor), *columns)

    return pairs_in_threads(pairs_of, groups, starts, geo.threads, _THREAD_MIN_PAIRS)


# --------------------------------------------------------------------------- the aligned pair


def with_keypoints(alignment, sigmas=None):
    """The alignment with both sides' keypoints ready for :class:`KeypointGeometry`.

    Each ground-truth category's K is its ground truths'; predictions of a
    category have that K (a located :class:`~iou_eval.errors.InputError`
    otherwise), predictions still in fractions (Ultralytics' ``predict``
    text) are read with it and scaled by their image's size, and every
    category gets its sigmas (:func:`sigma_table`).

    Args:
        alignment: an :class:`~iou_eval.data.reconcile.Alignment` read with keypoints.
        sigmas: ``--kpt-sigmas`` as read (:func:`iou_eval.io.option_files.read_kpt_sigmas`).
    """
    gt, pred = alignment.gt, alignment.pred
    gt_kp = _keypoints_of(gt)
    k_of = _category_k(gt, gt_kp, alignment.n_categories)
    pred_kp = pred.keypoints
    if isinstance(pred_kp, PendingKeypoints):
        pred_kp = _read_pending(pred, pred_kp, k_of)
    elif not isinstance(pred_kp, KeypointColumn):
        pred_kp = _keypoints_of(pred)
    _check_prediction_k(pred, pred_kp, k_of)
    table, notes = sigma_table(gt.categories, k_of, sigmas)
    return replace(
        alignment,
        gt=replace(gt, keypoints=replace(gt_kp, sigmas=table)),
        pred=replace(pred, keypoints=pred_kp),
        warnings=(*alignment.warnings, *notes),
    )


def _keypoints_of(ds) -> KeypointColumn:
    if isinstance(ds.keypoints, KeypointColumn):
        return ds.keypoints
    from iou_eval.errors import InputError

    raise InputError(
        ds.source,
        f"--iou-type keypoints: {ds.format} input without keypoints",
        hint="keypoints are read from COCO 'keypoints' and from Ultralytics pose datasets "
        "(kpt_shape in data.yaml) and predictions",
    )


def _category_k(gt, kp: KeypointColumn, n_categories: int) -> np.ndarray:
    """``[K]`` each ground-truth category's number of keypoints (-1: it has no ground truth)."""
    k_of = np.full(n_categories, -1, dtype=np.int64)
    cat = gt.category_idx
    present, first = np.unique(cat, return_index=True)
    k_of[present] = kp.count[first]  # each category's first ground truth sets its K
    bad = np.flatnonzero(kp.count != k_of[cat]) if len(cat) else np.zeros(0, dtype=np.int64)
    if len(bad):
        from iou_eval.errors import InputError

        r = int(bad[0])
        file, place = gt.where(r)
        raise InputError(
            file,
            f"ground truth has {int(kp.count[r])} keypoints; its category "
            f"{gt.categories.names[int(cat[r])]!r} has {int(k_of[cat[r]])}",
            where=place,
        )
    return k_of


def _check_prediction_k(pred, kp: KeypointColumn, k_of: np.ndarray) -> None:
    """A prediction of a ground-truth category has that category's K (else a located error)."""
    cat = pred.category_idx
    of_gt = cat < len(k_of)
    want = np.where(of_gt, k_of[np.where(of_gt, cat, 0)], -1)
    bad = np.flatnonzero((want >= 0) & (kp.count != want))
    if len(bad):
        from iou_eval.errors import InputError

        r = int(bad[0])
        file, place = pred.where(r)
        raise InputError(
            file,
            f"prediction has {int(kp.count[r])} keypoints; its category "
            f"{pred.categories.names[int(cat[r])]!r} has {int(want[r])} in the ground truth",
            where=place,
        )


def _read_pending(pred, pending: PendingKeypoints, k_of: np.ndarray) -> KeypointColumn:
    """Ultralytics ``predict`` keypoints: ``x y`` or ``x y conf`` per keypoint, fractions.

    The row's category's K says how many numbers a keypoint takes; the
    numbers are scaled by the (ground truth's) image size.
    """
    from iou_eval.errors import InputError

    n = len(pending)
    cat = pred.category_idx
    of_gt = cat < len(k_of)
    k = np.where(of_gt, k_of[np.where(of_gt, cat, 0)], -1)
    length = pending.length
    # Categories without ground truth: triplets where the count allows, else pairs.
    k = np.where(k > 0, k, np.where(length % 3 == 0, length // 3, length // 2))
    dim = np.where(k > 0, length // np.maximum(k, 1), 0)
    bad = np.flatnonzero((k <= 0) | (dim * k != length) | ((dim != 2) & (dim != 3)))
    if len(bad):
        r = int(bad[0])
        kr = int(k[r])
        raise InputError(
            pending.files[int(pending.origin_file[r])],
            f"a pose line is 'class cx cy w h' + {kr} keypoints of 'x y' or 'x y conf' + "
            f"'conf': {6 + 2 * kr} or {6 + 3 * kr} numbers, got {6 + int(length[r])}",
            where=int(pending.lines[r]),
            hint="the ground truth's category gives K; check kpt_shape",
        )
    width = pred.images.width[pred.image_idx]
    height = pred.images.height[pred.image_idx]
    unknown = np.flatnonzero(~(np.isfinite(width) & np.isfinite(height)))
    if len(unknown):
        r = int(unknown[0])
        raise InputError(
            pending.files[int(pending.origin_file[r])],
            "keypoints are fractions of the image, whose size is unknown",
            where=int(pending.lines[r]),
            hint="give a ground truth with image sizes (a YOLO dataset, or COCO width/height)",
        )
    x = np.full((n, int(k.max()) if n else 0), np.nan)
    y = np.full_like(x, np.nan)
    for d in (2, 3):
        rows = np.flatnonzero(dim == d)
        for kk in distinct(k[rows]).tolist():
            sel = rows[k[rows] == kk]
            index = pending.start[sel][:, None] + np.arange(kk * d)[None, :]
            block = pending.values[index].reshape(len(sel), kk, d)
            x[sel, :kk] = block[:, :, 0] * width[sel, None]
            y[sel, :kk] = block[:, :, 1] * height[sel, None]
    return KeypointColumn(x, y, k.astype(np.int64))


def sigma_table(categories, k_of: np.ndarray, sigmas=None) -> tuple[np.ndarray, list[str]]:
    """``([K_cat, K] sigmas, notes)``: each ground-truth category's sigmas.

    ``sigmas``: None, K numbers for every category, or ``(category id or
    name, numbers)`` pairs.  A category without its own takes the shared
    numbers; without those, COCO's 17 when it has 17 keypoints, else
    ``1 / K`` each (Ultralytics' rule for other keypoint sets), with a note.
    """
    width = int(k_of.max()) if len(k_of) and k_of.max() > 0 else 0
    table = np.full((len(k_of), width), np.nan)
    own = _own_sigmas(categories, len(k_of), sigmas)
    shared = sigmas if sigmas and not isinstance(sigmas[0], tuple) else None
    uniform: list[str] = []
    for c, k in enumerate(k_of.tolist()):
        if k <= 0:
            continue
        name = categories.names[c]
        given = own.get(c, shared)
        if given is not None:
            if len(given) != k:
                raise UsageError(
                    f"--kpt-sigmas: {len(given)} sigmas for category {name!r}, which has {k} "
                    "keypoints (categories of different K take a file {category: [sigmas]})"
                )
            table[c, :k] = np.asarray(given, dtype=np.float64)
        elif k == len(COCO_SIGMAS):
            table[c, :k] = COCO_SIGMAS
        else:
            table[c, :k] = np.ones(k) / k  # Ultralytics: np.ones(nkpt) / nkpt
            uniform.append(f"{name!r} ({k})")
    notes = []
    if uniform:
        notes.append(
            f"--kpt-sigmas not given for {', '.join(uniform[:5])}"
            f"{', ...' if len(uniform) > 5 else ''}: their keypoints are not COCO's 17, so OKS "
            "uses the sigmas 1/K each, as Ultralytics does; give --kpt-sigmas for the "
            "dataset's own"
        )
    return table, notes


def _own_sigmas(categories, n_gt: int, sigmas) -> dict[int, tuple[float, ...]]:
    """Category position -> its own sigmas, from ``(id or name, numbers)`` pairs."""
    if not sigmas or not isinstance(sigmas[0], tuple):
        return {}
    from iou_eval.data.dataset import normalize_id

    by_key: dict = {}
    for c in range(n_gt):
        by_key.setdefault(str(categories.names[c]), c)
        with contextlib.suppress(ValueError):
            by_key.setdefault(normalize_id(categories.ids[c]), c)
    out = {}
    for key, values in sigmas:
        found = by_key.get(key, by_key.get(str(key)))
        if found is None:
            known = ", ".join(repr(n) for n in categories.names[:n_gt][:10])
            raise UsageError(f"--kpt-sigmas: no category {key!r} in the ground truth ({known})")
        out[found] = tuple(values)
    return out
