"""The COCO protocol's driver: one evaluation, in category parts where it pays.

:mod:`iou_eval.protocols.coco` holds the steps (setup, matching and
accumulation of a group of categories, the operating point, the summary);
this module runs them over the whole set, in forked processes or a Dask
cluster's workers (:mod:`.partition`), or in bounded parts that keep only
what the reports read (:mod:`.point_parts`).
"""

from __future__ import annotations

from dataclasses import replace

from iou_eval.data.reconcile import Alignment
from iou_eval.geometry.pairs import with_threads
from iou_eval.protocols.coco import (
    CocoEvaluation,
    accumulation_inputs,
    operating_point,
    prepare,
    summarize,
)
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.partition import PartExecutor, match_in_parts
from iou_eval.protocols.point_parts import point_in_parts


def run_coco(
    alignment: Alignment,
    protocol: Protocol,
    iou_thr: float = 0.5,
    workers: int = 1,
    executor: PartExecutor | None = None,
    keep_accumulation: bool = True,
) -> CocoEvaluation:
    """Evaluate under COCO rules; ``iou_thr`` picks the operating point of the count tables.

    The protocol's ``iou_type`` picks the geometry (boxes, or masks that
    :func:`iou_eval.geometry.segm.with_masks` encoded).  With ``workers > 1`` (and
    enough predictions) categories are matched and accumulated in that many
    processes, or by ``executor`` (a Dask cluster); the results are identical.
    ``keep_accumulation``: keep what bootstrap replicates re-accumulate
    (about 40 bytes a prediction).
    """
    setup = prepare(alignment, protocol, iou_thr, protocol.iou_type)
    if executor is None:  # a geometry whose kernel shares its pairs among threads
        setup = replace(setup, geometry=with_threads(setup.geometry, workers))
    if not keep_accumulation and executor is None:
        # Bounded parts that keep only the arrays and the operating point.
        arrays, point = point_in_parts(setup, workers, iou_thr)
        return CocoEvaluation(protocol, arrays, summarize(arrays, protocol), point, None)
    m, arrays, order = match_in_parts(setup, workers, executor)
    return CocoEvaluation(
        protocol=protocol,
        arrays=arrays,
        summary=summarize(arrays, protocol),
        point=operating_point(setup, m, order, iou_thr),
        accumulation=accumulation_inputs(setup, m, order),
    )
