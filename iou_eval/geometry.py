"""The one place where overlaps are computed: boxes today, masks through the same seam.

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

from dataclasses import dataclass
from typing import Protocol as TypingProtocol

import numpy as np

from .boxes import pair_iou_columns


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
class BoxGeometry:
    """Axis-aligned boxes, overlaps as pycocotools' ``bbIou``.

    Attributes:
        dt_xyxy: ``[D, 4]``; dt_box_area: ``[D]`` the boxes' ``w * h``.
        gt_xyxy: ``[G, 4]``; gt_box_area: ``[G]``; gt_crowd: ``[G]`` bool.
        dt_range_area: ``[D]`` the area the area ranges test (``loadRes``'s
            ``area``: the box's ``w * h``, or a mask's area); None: the box's.
    """

    dt_xyxy: np.ndarray
    dt_box_area: np.ndarray
    gt_xyxy: np.ndarray
    gt_box_area: np.ndarray
    gt_crowd: np.ndarray
    dt_range_area: np.ndarray | None = None
    name: str = "bbox"

    @property
    def dt_area(self) -> np.ndarray:
        # pycocotools' loadRes sets a box result's area to its w * h.
        return self.dt_box_area if self.dt_range_area is None else self.dt_range_area

    def pairs(
        self,
        d_groups: np.ndarray,
        gt_sorted: np.ndarray,
        g_starts: np.ndarray,
        dt_rows: np.ndarray,
        floor: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Same-group pairs whose overlap reaches ``floor``.

        Args:
            d_groups: ``[D']`` group of each prediction (sorted).
            gt_sorted: ``[G]`` ground-truth rows by group; g_starts: ``[groups + 1]``.
            dt_rows: ``[D']`` the predictions' rows, aligned with ``d_groups``.
            floor: the lowest matching threshold; pairs below it never match.

        Returns:
            ``(dt_pos[P], gt_row[P], iou[P])`` ordered by prediction, then
            ground truth; ``dt_pos`` indexes ``d_groups``.  Predictions are
            taken a chunk at a time so that the all-pairs arrays stay small.
        """
        # Column-wise gathers: much faster than gathering rows of [N, 4]
        # arrays.  The predictions' columns are built a chunk at a time
        # (small, reused memory), the ground truths' once.
        gt_cols = np.vstack([self.gt_xyxy.T, self.gt_box_area])
        parts_d, parts_g, parts_iou = [], [], []
        for lo in range(0, len(d_groups), _PAIR_CHUNK):
            rows = dt_rows[lo : lo + _PAIR_CHUNK]
            dt_cols = np.empty((5, len(rows)))
            dt_cols[:4] = np.take(self.dt_xyxy, rows, axis=0).T
            dt_cols[4] = self.dt_box_area[rows]
            pd, pg = candidate_pairs(d_groups[lo : lo + _PAIR_CHUNK], g_starts)
            pg = gt_sorted[pg]
            # Most pairs of a group do not even overlap horizontally: drop
            # them before gathering the rest (IoU 0, below any usable floor).
            if floor > 0:
                iw = np.minimum(dt_cols[2, pd], gt_cols[2, pg]) - np.maximum(
                    dt_cols[0, pd], gt_cols[0, pg]
                )
                near = iw > 0
                pd, pg = pd[near], pg[near]
            dt_p = dt_cols[:, pd]
            gt_p = gt_cols[:, pg]
            iou = pair_iou_columns(dt_p[:4], dt_p[4], gt_p[:4], gt_p[4], self.gt_crowd[pg])
            keep = iou >= floor
            pd += lo
            parts_d.append(pd[keep])
            parts_g.append(pg[keep])
            parts_iou.append(iou[keep])
        return join_pairs(parts_d, parts_g, parts_iou)

    def pair(self, dt_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        return pair_iou_columns(
            np.take(self.dt_xyxy, dt_rows, axis=0).T,
            self.dt_box_area[dt_rows],
            np.take(self.gt_xyxy, gt_rows, axis=0).T,
            self.gt_box_area[gt_rows],
            self.gt_crowd[gt_rows],
        )

    def take(self, gt_rows: np.ndarray, dt_rows: np.ndarray) -> BoxGeometry:
        return BoxGeometry(
            dt_xyxy=np.take(self.dt_xyxy, dt_rows, axis=0),
            dt_box_area=self.dt_box_area[dt_rows],
            gt_xyxy=np.take(self.gt_xyxy, gt_rows, axis=0),
            gt_box_area=self.gt_box_area[gt_rows],
            gt_crowd=self.gt_crowd[gt_rows],
            dt_range_area=None if self.dt_range_area is None else self.dt_range_area[dt_rows],
            name=self.name,
        )


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


class IouType:
    """The geometries a run can score, as the command line names them."""

    BBOX = "bbox"
    SEGM = "segm"
    ALL = (BBOX, SEGM)


def geometry_for(gt, pred, iou_type: str = IouType.BBOX) -> Geometry:
    """The geometry of an aligned pair of datasets for ``iou_type`` (``bbox`` or ``segm``)."""
    if iou_type == IouType.BBOX:
        # A prediction's area is its box's w * h, unless loadRes set it from
        # its mask (results without boxes): ``area`` holds either.
        range_area = None if pred.area is pred.bbox_area else pred.area
        return BoxGeometry(
            pred.xyxy, pred.bbox_area, gt.xyxy, gt.bbox_area, gt.is_crowd, range_area
        )
    if iou_type == IouType.SEGM:
        from .masks import MaskGeometry

        return MaskGeometry.of(gt, pred)
    raise ValueError(f"unknown iou type {iou_type!r} (known: {', '.join(IouType.ALL)})")
