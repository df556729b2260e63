"""What the matcher asks of a geometry, and the pair machinery every geometry shares.

The matcher never looks at coordinates.  It asks a geometry for the
(prediction, ground truth) pairs of each group whose overlap reaches the
lowest threshold, and for the overlap of given pairs.  An overlap is IoU,
or IoF (intersection over the prediction's area) when the ground truth is a
crowd region, as pycocotools' ``iou(..., iscrowd)`` computes it for boxes
and masks alike.

A geometry also says which area of a prediction decides whether an
unmatched prediction falls outside an area range (pycocotools' ``dt['area']``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol as TypingProtocol

import numpy as np


class Geometry(TypingProtocol):
    """What the matcher needs of a pair of datasets' shapes.

    Rows are the rows of the prediction and ground-truth datasets the
    geometry was built over.
    """

    @property
    def name(self) -> str:
        """``bbox`` or ``segm``."""
        ...

    @property
    def dt_area(self) -> np.ndarray:
        """``[D]`` float64, the area an area range tests for an unmatched prediction."""
        ...

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Same-group pairs whose overlap reaches ``floor``: ``(dt_pos[P], gt_row[P], iou[P])``."""
        ...

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        """``[P]`` overlaps of the aligned pairs ``dt_rows[P]``, ``gt_rows[P]``."""
        ...

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> Geometry:
        """The geometry of a subset (rows renumbered from 0)."""
        ...


@dataclass(frozen=True)
class BoxColumns:
    """A box geometry's coordinates where they lie, for a matcher that computes overlaps itself.

    The compiled COCO core matches boxes as it finds their pairs (no pair
    arrays); it reads these columns in place, with pycocotools' ``bbIou``
    (the box kernel's operations).

    Attributes:
        dt_xyxy: ``[N, 4]``; dt_area: ``[N]`` the boxes' ``w * h``.
        gt_xyxy: ``[M, 4]``; gt_area: ``[M]``; gt_crowd: ``[M]`` bool, overlap
            by intersection over the prediction's area.
        dt_rows: ``[D]`` the row of these columns of each of the geometry's
            predictions; gt_rows: ``[G]`` likewise (None: the same rows).
    """

    dt_xyxy: np.ndarray
    dt_area: np.ndarray
    gt_xyxy: np.ndarray
    gt_area: np.ndarray
    gt_crowd: np.ndarray
    dt_rows: np.ndarray | None = None
    gt_rows: np.ndarray | None = None


def box_columns(geometry: Geometry) -> BoxColumns | None:
    """The columns of a box geometry (:class:`BoxColumns`), or None for any other.

    A geometry offers them through an optional ``box_columns()`` method.
    """
    offer = getattr(geometry, "box_columns", None)
    return None if offer is None else offer()


def with_threads(geometry: Geometry, threads: int) -> Geometry:
    """``geometry``, its pairs found by up to ``threads`` threads where it offers that.

    A geometry offers it through an optional ``with_threads(n)`` method (the
    mask kernel releases the GIL); the pairs are the same for any number.
    """
    offer = getattr(geometry, "with_threads", None)
    return geometry if offer is None else offer(threads)


def thread_cuts(
    groups: np.ndarray, g_starts: np.ndarray, threads: int, min_pairs: int
) -> list[int]:
    """``[0, ..., D]``: where runs of predictions start, about equal in candidate pairs.

    ``groups[D]`` each prediction's group, ``g_starts`` each group's offset
    among the ground truths; one run (``[0, D]``) for one thread, or for
    fewer than ``min_pairs`` candidate pairs, below which a thread costs more
    than it saves.
    """
    n = len(groups)
    if threads <= 1 or n < 2:
        return [0, n]
    weight = np.cumsum(g_starts[groups + 1] - g_starts[groups])
    total = int(weight[-1])
    if total < min_pairs:
        return [0, n]
    marks = np.searchsorted(weight, total * np.arange(1, threads) / threads)
    return sorted({0, n, *(int(m) for m in marks if 0 < m < n)})


def pairs_in_threads(
    pairs_of: Callable[[int, int], tuple | None],
    groups: np.ndarray,
    g_starts: np.ndarray,
    threads: int,
    min_pairs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A compiled kernel's pairs over runs of predictions, one run per thread.

    ``pairs_of(lo, hi)`` gives the pairs of predictions ``[lo, hi)`` as three
    buffers (positions within the run as int64, ground-truth positions as
    int64, overlaps as float64), or None.  The runs are :func:`thread_cuts`'
    and their pairs are joined in run order, which is the order of one call:
    ``(dt_pos[P], gt_pos[P], overlap[P])``, or None when any run gave None.
    """
    from iou_eval.engine.parallel import run_threads

    def run(span: tuple[int, int]) -> tuple | None:
        lo, hi = span
        found = pairs_of(lo, hi)
        if found is None:
            return None
        pos, gt, value = found
        at = np.frombuffer(pos, dtype=np.int64)
        return (
            at + lo if lo else at,
            np.frombuffer(gt, dtype=np.int64),
            np.frombuffer(value, dtype=np.float64),
        )

    cuts = thread_cuts(groups, g_starts, threads, min_pairs)
    parts = run_threads(run, list(zip(cuts[:-1], cuts[1:], strict=True)))
    if any(p is None for p in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))  # type: ignore[return-value]


def candidate_pairs(dt_group: np.ndarray, gt_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (prediction, ground truth) pair that shares a group.

    Args:
        dt_group: ``[D]`` group of each prediction.
        gt_starts: ``[n_groups + 1]`` offsets of each group among the
            ground truths sorted by group.

    Returns:
        ``(dt_pos[P], gt_pos[P])``: positions into the two arrays, grouped by
        prediction in input order and, within one, by ground-truth position.
    """
    counts = gt_starts[dt_group + 1] - gt_starts[dt_group]
    total = int(counts.sum())
    dt_pos = np.repeat(np.arange(len(dt_group)), counts)
    # gt position = group start + (pair index - index of the prediction's first pair).
    shift = gt_starts[dt_group] - (np.cumsum(counts) - counts)
    gt_pos = np.repeat(shift, counts) + np.arange(total)
    return dt_pos, gt_pos


_PAIR_CHUNK = 1 << 16


@dataclass(frozen=True)
class SubsetGeometry:
    """Some rows of another geometry, renumbered from 0, without copying its columns.

    A category part of a large run sees its own predictions only; copying
    their coordinates would cost 40 bytes a prediction, an index costs 4.

    Attributes:
        base: the geometry over every row.
        gt_rows, dt_rows: ``[G']``, ``[D']`` the subset's rows in ``base``.
        gt_position: ``[G]`` each base ground-truth row's position in ``gt_rows`` (-1: not in it).
    """

    base: Geometry
    gt_rows: np.ndarray
    dt_rows: np.ndarray
    gt_position: np.ndarray

    @staticmethod
    def of(base: Geometry, gt_rows: np.ndarray, dt_rows: np.ndarray) -> SubsetGeometry:
        if isinstance(base, SubsetGeometry):  # a subset of a subset: one level
            return SubsetGeometry.of(base.base, base.gt_rows[gt_rows], base.dt_rows[dt_rows])
        n_gt = int(gt_rows.max()) + 1 if len(gt_rows) else 0
        position = np.full(n_gt, -1, dtype=np.int64)
        position[gt_rows] = np.arange(len(gt_rows))
        return SubsetGeometry(base, gt_rows, dt_rows, position)

    @property
    def name(self) -> str:
        return self.base.name

    @property
    def dt_area(self) -> np.ndarray:
        return self.base.dt_area[self.dt_rows]

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # The base computes the very same pairs, in the same order, on its own rows.
        pd, pg, iou = self.base.pairs(
            d_groups, self.gt_rows[gt_sorted], g_starts, self.dt_rows[dt_rows], floor
        )
        return pd, self.gt_position[pg], iou

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        return self.base.pair(self.dt_rows[dt_rows], self.gt_rows[gt_rows])

    def box_columns(self) -> BoxColumns | None:
        """The base's box columns, read through this subset's rows (None: not boxes)."""
        cols = box_columns(self.base)  # the base is never a subset itself
        if cols is None:
            return None
        return replace(cols, dt_rows=self.dt_rows, gt_rows=self.gt_rows)

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> SubsetGeometry:
        return SubsetGeometry.of(self, gt_rows, dt_rows)


def join_pairs(
    parts_d: list[np.ndarray], parts_g: list[np.ndarray], parts_iou: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of several chunks as one ``(dt_pos[P], gt_row[P], iou[P])``."""
    if not parts_d:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), np.zeros(0, dtype=np.float64)
    return np.concatenate(parts_d), np.concatenate(parts_g), np.concatenate(parts_iou)
