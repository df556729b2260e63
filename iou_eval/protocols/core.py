"""The optional compiled COCO core (``iou_eval/protocols/_cococore.c``), when it was built.

It matches (:func:`iou_eval.protocols.matching.greedy_rounds`) and
accumulates (:func:`iou_eval.protocols.accumulate.accumulate_coco`) with
pycocotools' rules and float operations, bit for bit, many times faster
than numpy and with the GIL released.  Without it (no C compiler at
install, or ``IOU_EVAL_NO_KERNEL=1``) numpy does both: numpy is the
reference, and the parity suite runs on both.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from iou_eval.data.ordering import group_score_order, narrow_index
from iou_eval.engine.compiled import load


def coco_core() -> ModuleType | None:
    """The compiled COCO core, or None (not built, or ``IOU_EVAL_NO_KERNEL`` set)."""
    return load("iou_eval.protocols._cococore")


def score_order(
    group: np.ndarray,
    score: np.ndarray,
    n_groups: int | None = None,
    rank: tuple[np.ndarray, int] | None = None,
) -> np.ndarray:
    """Stable order ``[N]`` by ``group`` ascending, then ``score`` descending.

    :func:`~iou_eval.data.ordering.group_score_order`'s order (equal rows in
    input order, as pycocotools' mergesort keeps them), from the compiled
    core where it is built: one counting pass by group and a merge sort of
    each group's scores, instead of a sort of every score and radix passes.
    ``n_groups``: groups lie in ``[0, n_groups)`` (default: the largest + 1);
    ``rank``: the scores' :func:`~iou_eval.data.ordering.score_rank`, when
    known (the numpy path uses it).
    """
    core = coco_core()
    if core is None or not len(group):
        return group_score_order(group, score, rank)
    n = int(group.max()) + 1 if n_groups is None else n_groups
    c = np.ascontiguousarray
    order = core.group_order(c(group), c(score, dtype=np.float64), n)
    return narrow_index(np.frombuffer(order, dtype=np.int64))
