"""Box overlaps: IoU of ``xyxy`` boxes, continuous or VOC's plus-one.

Boxes arrive as ``xyxy`` float64 with the ``w * h`` area the file gave
(:func:`iou_eval.data.box_format.to_xyxy`): pycocotools divides by that
product, so the overlaps here take it as given.  numpy is the reference; the
optional box kernel (``_boxkernel.c``) finds the matcher's pairs with the
same operations.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from iou_eval.geometry.pairs import _PAIR_CHUNK, BoxColumns, candidate_pairs, join_pairs


class PixelConvention(str, Enum):
    """How a box's extent is measured."""

    CONTINUOUS = "continuous"  # area = (x2 - x1) * (y2 - y1) — COCO
    PLUS_ONE = "plus-one"  # area = (x2 - x1 + 1) * (y2 - y1 + 1) — VOC devkit


def pair_iou_columns(
    dt: np.ndarray,
    dt_area: np.ndarray,
    gt: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
) -> np.ndarray:
    """:func:`pair_iou` on boxes given as columns ``[4, P]`` (x1, y1, x2, y2 rows)."""
    iw = np.minimum(dt[2], gt[2]) - np.maximum(dt[0], gt[0])
    ih = np.minimum(dt[3], gt[3]) - np.maximum(dt[1], gt[1])
    hit = (iw > 0) & (ih > 0)
    inter = np.where(hit, iw * ih, 0.0)
    union = np.where(gt_crowd, dt_area, dt_area + gt_area - inter)
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=hit)
    return out


def pair_iou(
    dt_xyxy: np.ndarray,
    dt_area: np.ndarray,
    gt_xyxy: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
) -> np.ndarray:
    """COCO overlap of aligned pairs: IoU, or IoF for crowd ground truths.

    Args:
        dt_xyxy, gt_xyxy: ``[P, 4]`` the two boxes of each pair.
        dt_area, gt_area: ``[P]`` their ``w * h`` areas.
        gt_crowd: ``[P]`` bool; a crowd region is matched by intersection
            over the prediction's area (IoF).

    Returns:
        ``[P]`` float64.  Mirrors pycocotools' ``bbIou`` operation for
        operation — ``min(x2) - max(x1)``, zero unless both sides are
        positive, union ``(da + ga) - i`` — so values that land exactly on a
        threshold land there in both tools.
    """
    return pair_iou_columns(dt_xyxy.T, dt_area, gt_xyxy.T, gt_area, gt_crowd)


def pair_iou_plus_one(dt_xyxy: np.ndarray, gt_xyxy: np.ndarray) -> np.ndarray:
    """VOC devkit overlap of aligned pairs ``[P]`` with +1-pixel extents.

    Follows ``voc_eval``: ``iw = max(min(x2) - max(x1) + 1, 0)``, union
    ``(dt_area + gt_area) - inter`` with areas ``(x2 - x1 + 1) * (y2 - y1 + 1)``.
    """
    iw = np.maximum(
        np.minimum(dt_xyxy[:, 2], gt_xyxy[:, 2]) - np.maximum(dt_xyxy[:, 0], gt_xyxy[:, 0]) + 1.0,
        0.0,
    )
    ih = np.maximum(
        np.minimum(dt_xyxy[:, 3], gt_xyxy[:, 3]) - np.maximum(dt_xyxy[:, 1], gt_xyxy[:, 1]) + 1.0,
        0.0,
    )
    inter = iw * ih
    dt_a = (dt_xyxy[:, 2] - dt_xyxy[:, 0] + 1.0) * (dt_xyxy[:, 3] - dt_xyxy[:, 1] + 1.0)
    gt_a = (gt_xyxy[:, 2] - gt_xyxy[:, 0] + 1.0) * (gt_xyxy[:, 3] - gt_xyxy[:, 1] + 1.0)
    union = dt_a + gt_a - inter
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def pair_iou_continuous(dt_xyxy: np.ndarray, gt_xyxy: np.ndarray) -> np.ndarray:
    """Plain IoU of aligned pairs ``[P]`` with continuous extents (no crowd)."""
    dt_a = (dt_xyxy[:, 2] - dt_xyxy[:, 0]) * (dt_xyxy[:, 3] - dt_xyxy[:, 1])
    gt_a = (gt_xyxy[:, 2] - gt_xyxy[:, 0]) * (gt_xyxy[:, 3] - gt_xyxy[:, 1])
    return pair_iou(dt_xyxy, dt_a, gt_xyxy, gt_a, np.zeros(len(dt_a), dtype=bool))


def iou_matrix(a_xyxy: np.ndarray, b_xyxy: np.ndarray) -> np.ndarray:
    """Continuous IoU of every box of ``a[N, 4]`` with every box of ``b[M, 4]`` -> ``[N, M]``."""
    n, m = len(a_xyxy), len(b_xyxy)
    ia = np.repeat(np.arange(n), m)
    ib = np.tile(np.arange(m), n)
    return pair_iou_continuous(a_xyxy[ia], b_xyxy[ib]).reshape(n, m)


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
        from iou_eval.geometry.kernel import box_kernel

        kernel = box_kernel()
        if kernel is not None:
            c = np.ascontiguousarray  # a view of another array's columns: copied
            pd, pg, iou = kernel.pairs(
                c(d_groups), c(gt_sorted), c(g_starts), c(dt_rows), float(floor),
                c(self.dt_xyxy), c(self.dt_box_area), c(self.gt_xyxy), c(self.gt_box_area),
                c(self.gt_crowd),
            )  # fmt: skip
            return (
                np.frombuffer(pd, dtype=np.int64),
                np.frombuffer(pg, dtype=np.int64),
                np.frombuffer(iou, dtype=np.float64),
            )
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

    def box_columns(self) -> BoxColumns:
        """The coordinates, for a matcher that computes the overlaps as it matches."""
        return BoxColumns(
            self.dt_xyxy, self.dt_box_area, self.gt_xyxy, self.gt_box_area, self.gt_crowd
        )

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
