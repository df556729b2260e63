"""Semantic segmentation scores from one confusion matrix over label maps.

Each image adds ``np.bincount(gt * C + pred)`` over its non-ignored pixels
to a ``[C, C]`` matrix (rows: ground truth, columns: prediction), so memory
stays at one image plus C * C counts however many images there are.  The
scores follow mmsegmentation's ``IoUMetric``: a class absent from both the
ground truth and the predictions has an undefined (NaN) IoU and is left out
of the mean; a class only predicted scores 0 and counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.errors import ArgumentError


class LabelMapError(ArgumentError):
    """A label map that cannot be scored; ``side`` is ``gt`` or ``pred``, ``detail`` says why."""

    def __init__(self, side: str, where: str, detail: str, hint: str | None = None) -> None:
        super().__init__(f"{side}{where}: {detail}", hint=hint)
        self.side = side
        self.detail = detail


@dataclass(frozen=True)
class LabelMapScores:
    """Per-class and overall scores of a confusion matrix.

    Attributes:
        confusion: ``[C, C]`` int64 pixel counts, rows ground truth, columns prediction.
        iou: ``[C]`` |gt ∩ pred| / |gt ∪ pred|, NaN where both are empty.
        accuracy: ``[C]`` |gt ∩ pred| / |gt| (mmsegmentation's per-class Acc), NaN where |gt| = 0.
        gt_pixels, pred_pixels: ``[C]`` int64.
        mean_iou, mean_accuracy: means over the defined classes (NaN if none).
        pixel_accuracy: correct pixels / scored pixels (mmsegmentation's aAcc).
    """

    confusion: np.ndarray
    iou: np.ndarray
    accuracy: np.ndarray
    gt_pixels: np.ndarray
    pred_pixels: np.ndarray
    mean_iou: float
    mean_accuracy: float
    pixel_accuracy: float


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _nanmean(x: np.ndarray) -> float:
    defined = x[~np.isnan(x)]
    return float(defined.mean()) if defined.size else float("nan")


def scores_from_confusion(confusion: np.ndarray) -> LabelMapScores:
    """Scores of a ``[C, C]`` confusion matrix (rows ground truth, columns prediction)."""
    cm = np.asarray(confusion, dtype=np.int64)
    inter = np.diag(cm).astype(np.float64)
    gt = cm.sum(axis=1)
    pred = cm.sum(axis=0)
    union = gt + pred - inter
    iou = _divide(inter, union)
    acc = _divide(inter, gt.astype(np.float64))
    total = float(gt.sum())
    return LabelMapScores(
        confusion=cm,
        iou=iou,
        accuracy=acc,
        gt_pixels=gt,
        pred_pixels=pred,
        mean_iou=_nanmean(iou),
        mean_accuracy=_nanmean(acc),
        pixel_accuracy=float(inter.sum() / total) if total else float("nan"),
    )


class ConfusionAccumulator:
    """Adds label maps one at a time into a ``[C, C]`` confusion matrix.

    Args:
        num_classes: C, or None to take it from the data (the largest label
            seen + 1; the matrix grows as needed).
        ignore_index: ground-truth value whose pixels are not scored (None: none).
    """

    def __init__(self, num_classes: int | None, ignore_index: int | None = 255) -> None:
        if num_classes is not None and (int(num_classes) != num_classes or num_classes < 1):
            raise ArgumentError(f"num_classes: expected a positive integer, got {num_classes!r}")
        self.fixed = num_classes is not None
        self.ignore_index = ignore_index
        self.confusion = np.zeros((num_classes or 0,) * 2, dtype=np.int64)
        self.images = 0

    @property
    def num_classes(self) -> int:
        return len(self.confusion)

    def _checked(self, gt: object, pred: object, where: str) -> tuple[np.ndarray, np.ndarray]:
        g, p = np.asarray(gt), np.asarray(pred)
        if g.ndim != 2:
            raise LabelMapError(
                "gt", where, f"expected a label map [H, W], got shape {list(g.shape)}"
            )
        if p.shape != g.shape:
            raise LabelMapError(
                "pred", where, f"size {_size(p)} differs from the ground truth's {_size(g)}"
            )
        for side, arr in (("gt", g), ("pred", p)):
            if arr.dtype != bool and not np.issubdtype(arr.dtype, np.integer):
                raise LabelMapError(side, where, f"label maps hold integers, got {arr.dtype}")
        return g, p

    def _check_range(self, side: str, values: np.ndarray, where: str) -> None:
        lo, hi = int(values.min()), int(values.max())
        top = self.num_classes - 1 if self.fixed else None
        if lo < 0 or (top is not None and hi > top):
            bad = lo if lo < 0 else hi
            expected = f"0..{top}" if top is not None else "0 or more"
            ignore = (
                "" if self.ignore_index is None else f" or the ignore index {self.ignore_index}"
            )
            raise LabelMapError(
                side,
                where,
                f"label {bad} is outside the classes {expected}{ignore}",
                hint="check the number of classes and the ignore index",
            )

    def add(self, gt: object, pred: object, where: str = "") -> None:
        """Count one image: ``gt`` and ``pred`` integer label maps ``[H, W]`` of one size."""
        g, p = self._checked(gt, pred, where)
        if self.ignore_index is not None:
            # mmsegmentation scores only where the ground truth is not ignored;
            # the prediction there is not looked at.
            keep = g != self.ignore_index
            g, p = g[keep], p[keep]
        else:
            g, p = g.ravel(), p.ravel()
        self.images += 1
        if g.size == 0:
            return
        self._check_range("gt", g, where)
        self._check_range("pred", p, where)
        if not self.fixed:
            self._grow(int(max(g.max(), p.max())) + 1)
        c = self.num_classes
        idx = g.astype(np.int64) * c + p
        self.confusion += np.bincount(idx, minlength=c * c).reshape(c, c)

    def _grow(self, c: int) -> None:
        if c > self.num_classes:
            grown = np.zeros((c, c), dtype=np.int64)
            n = self.num_classes
            grown[:n, :n] = self.confusion
            self.confusion = grown

    def scores(self) -> LabelMapScores:
        return scores_from_confusion(self.confusion)


def _size(arr: np.ndarray) -> str:
    return "x".join(map(str, arr.shape)) + " (H x W)" if arr.ndim == 2 else str(list(arr.shape))
