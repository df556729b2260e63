"""The Python API, mirroring the command line.

>>> from iou_eval import evaluate
>>> result = evaluate("gt.json", "preds.json")
>>> result.summary["AP"], result.per_class.head()
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .bootstrap import run_bootstrap
from .boxes import BoxFormat
from .coco import run_coco
from .dataset import Dataset
from .errors import IouEvalError
from .loaders import LoadOptions, detect_format
from .loaders import load as _load
from .loaders.registry import get as get_format
from .memory import release_free_memory
from .options import EvalOptions, ReadOptions
from .parallel import resolve_workers, start
from .protocols import Protocol
from .reconcile import Alignment, align
from .results import EvaluationResult, ProtocolResult, coco_result, voc_result
from .voc import run_voc

# Reading the ground truth in a child pays off only beside a large predictions file.
PARALLEL_MIN_BYTES = 4 << 20


def load(
    path: str,
    role: str = "gt",
    fmt: str | None = None,
    *,
    read: ReadOptions | None = None,
    workers: int = 1,
    masks: bool = False,
    **keywords: Any,
) -> Dataset:
    """Read a ground-truth (``role="gt"``) or prediction (``"pred"``) file or folder.

    ``read`` (or its fields as keywords: ``box_format``, ``normalized``,
    ``names``) says how; layout and scale apply to the formats that leave
    them open (CSV, per-image text, devkit results): COCO JSON and VOC XML
    always hold absolute pixels in their own layout, so a VOC ground truth
    pairs with YOLO-style predictions under one ``--normalized`` flag.
    Normalized boxes whose file gives no image sizes come back as fractions
    (``Dataset.fractions``); :func:`~iou_eval.reconcile.align` scales them.
    ``workers`` processes may share the decoding of a large COCO results
    file (0: one per core).  ``masks``: read instance masks too (for ``segm``).
    """
    r = (
        dataclasses.replace(read or ReadOptions(), **keywords)
        if keywords
        else read or ReadOptions()
    )
    fmt = fmt or detect_format(path)
    textual = get_format(fmt).textual
    options = LoadOptions(
        box_format=BoxFormat(r.box_format) if r.box_format and textual else None,
        normalized=r.normalized and textual,
        names=r.names,
        workers=resolve_workers(workers),
        masks=masks,
    )
    return _load(path, role, fmt, options)


def quirk_warnings(alignment: Alignment, protocol: Protocol) -> list[str]:
    """Where the input triggers a pycocotools defect that the protocol reproduces."""
    gt = alignment.gt
    out: list[str] = []
    if protocol.is_voc:
        return out
    out.extend(protocol.summary_warnings())
    if protocol.zero_id_quirk:
        n0 = int((gt.ann_id == 0).sum())
        if n0:
            out.append(
                f"{gt.source}: {n0} ground truth(s) have annotation id 0; like pycocotools, a "
                "prediction matched to one counts as a false positive (pass --count-id-zero "
                "to count it)"
            )
    if not protocol.honour_ignore:
        flagged = int((gt.ignore & ~gt.is_crowd).sum())
        if flagged:
            out.append(
                f"{gt.source}: {flagged} ground truth(s) are flagged ignore/difficult but not "
                "crowd; like pycocotools, they count as ordinary objects (pass --honour-ignore "
                "to ignore them)"
            )
    return out


def describe_inputs(gt: Dataset, pred: Dataset, alignment: Alignment) -> dict[str, object]:
    """What was read and how the two files were joined, for reports."""
    k = alignment.n_categories
    names = alignment.gt.categories.names
    predicted = np.bincount(alignment.pred.category_idx, minlength=len(names)) > 0
    annotated = np.bincount(alignment.gt.category_idx, minlength=len(names)) > 0
    return {
        "ground_truth": {
            "path": gt.source,
            "format": gt.format,
            "images": len(gt.images),
            "boxes": len(gt),
            "crowd": int(gt.is_crowd.sum()),
            "categories": alignment.n_categories,
        },
        "predictions": {
            "path": pred.source,
            "format": pred.format,
            "boxes": len(pred),
            "scored_boxes": len(alignment.pred),
            "unknown_image_boxes": alignment.unknown_image_rows,
            "prediction_only_categories": len(alignment.pred_only_categories),
        },
        "image_match": alignment.image_match,
        "category_match": alignment.category_match,
        "categories_only_in_predictions": [names[i] for i in range(k, len(names))],
        "categories_without_predictions": [
            names[i] for i in range(k) if annotated[i] and not predicted[i]
        ],
    }


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _load_pair(
    gt: str | Dataset, preds: str | Dataset, read: ReadOptions, workers: int, masks: bool = False
) -> tuple[Dataset, Dataset]:
    """Both datasets; with workers, the ground truth is read in a child meanwhile.

    A ground-truth error is reported before a predictions error, as when the
    files are read one after the other.
    """

    def load_gt() -> Dataset:
        if isinstance(gt, Dataset):
            return gt
        return load(gt, "gt", read.gt_format, read=read, masks=masks)

    if isinstance(preds, Dataset):
        return load_gt(), preds
    pred_fmt = read.pred_format
    concurrent = workers > 1 and not isinstance(gt, Dataset) and _size(preds) >= PARALLEL_MIN_BYTES
    if concurrent and pred_fmt is None:
        try:
            pred_fmt = detect_format(preds)
        except IouEvalError:
            pred_fmt = None  # reported when the predictions are read, after the ground truth
    if not concurrent or pred_fmt is None:
        gt_ds = load_gt()
        return gt_ds, load(preds, "pred", read.pred_format, read=read, workers=workers, masks=masks)
    job = start(load_gt)
    try:
        try:
            pred_ds = load(preds, "pred", pred_fmt, read=read, workers=workers, masks=masks)
        except IouEvalError:
            job.result()  # the ground truth's own error comes first
            raise
        return job.result(), pred_ds
    finally:
        job.cancel()


def score(
    alignment: Alignment,
    protocol: Protocol,
    options: EvalOptions,
    workers: int,
    progress: Callable[[int], None] | None = None,
) -> ProtocolResult:
    """One protocol's result on an aligned pair, with bootstrap replicates when asked for."""
    point, boot = options.point, options.bootstrap
    if protocol.is_voc:
        result = voc_result(alignment, run_voc(alignment, protocol, point.iou_thr), point.score_thr)
    else:
        evaluation = run_coco(
            alignment, protocol, point.iou_thr, workers=workers,
            keep_accumulation=options.runtime.keep_accumulation or boot.bootstrap > 0,
        )  # fmt: skip
        result = coco_result(alignment, evaluation, point.score_thr)
    if boot.bootstrap <= 0:
        return result
    replicates = run_bootstrap(
        result.evaluation.replicate,
        alignment.gt.images.ids,
        boot.bootstrap,
        boot.seed,
        boot.confidence,
        progress=progress,
    )
    return dataclasses.replace(result, bootstrap=replicates)


def evaluate(
    gt: str | Dataset,
    preds: str | Dataset,
    options: EvalOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    **keywords: object,
) -> EvaluationResult:
    """Score predictions against ground truth.

    Args:
        gt, preds: paths (format detected from content unless ``gt_format`` /
            ``pred_format`` say) or already loaded :class:`Dataset` objects.
        options: an :class:`~iou_eval.options.EvalOptions`, or its fields as
            keywords (``protocol="coco,voc12"``, ``iou_thr=0.75``,
            ``box_format="xyxy"``, ``bootstrap=200``, ``workers=0`` ...):
            each keyword is one field of one of its records, documented there.
        progress: called with 1 after each bootstrap replicate.
        on_stage: called with a short description as each stage starts
            (reading, then each protocol), for progress displays.

    Returns:
        :class:`~iou_eval.results.EvaluationResult`.
    """
    opts = EvalOptions.of(options, **keywords)
    protocols = opts.protocol.build()
    stage = on_stage or (lambda _name: None)
    n_workers = resolve_workers(opts.runtime.workers)
    stage("reading")
    masks = opts.protocol.masks
    gt_ds, pred_ds = _load_pair(gt, preds, opts.read, n_workers, masks)
    alignment = align(gt_ds, pred_ds, opts.read.image_size)
    inputs = describe_inputs(gt_ds, pred_ds, alignment)
    # The aligned columns replace the loaded ones: at ten million predictions
    # the loaded index columns alone hold 160 MB.
    del gt_ds, pred_ds
    release_free_memory()  # what loading freed, before the evaluation's large arrays
    if masks:
        from .segm import with_masks

        alignment = with_masks(alignment)
    warnings = list(alignment.warnings)
    results: list[ProtocolResult] = []
    for p in protocols:
        stage(f"evaluating ({p.name})")
        warnings.extend(w for w in quirk_warnings(alignment, p) if w not in warnings)
        results.append(score(alignment, p, opts, n_workers, progress))
    return EvaluationResult(
        results=results,
        inputs=inputs,
        settings={"iou_thr": opts.point.iou_thr, "score_thr": opts.point.score_thr},
        warnings=warnings,
    )
