"""The Python API, mirroring the command line.

>>> from iou_eval import evaluate
>>> result = evaluate("gt.json", "preds.json")
>>> result.summary["AP"], result.per_class.head()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from .bootstrap import run_bootstrap
from .boxes import BoxFormat
from .coco import run_coco
from .dataset import Dataset
from .errors import IouEvalError, UsageError
from .loaders import LoadOptions, detect_format
from .loaders import load as _load
from .parallel import resolve_workers, start
from .protocols import BY_NAME, AreaRange, Protocol
from .reconcile import Alignment, align
from .results import EvaluationResult, ProtocolResult, coco_result, voc_result
from .voc import run_voc

TEXT_FORMATS = ("csv", "txt", "voc-results")

# Reading the ground truth in a child pays off only beside a large predictions file.
PARALLEL_MIN_BYTES = 4 << 20


def load(
    path: str,
    role: str = "gt",
    fmt: str | None = None,
    box_format: str | BoxFormat | None = None,
    normalized: bool = False,
    names: Sequence[str] | None = None,
    reference: Dataset | None = None,
    image_size: tuple[float, float] | None = None,
    workers: int = 1,
) -> Dataset:
    """Read a ground-truth (``role="gt"``) or prediction (``"pred"``) file or folder.

    ``normalized`` and ``box_format`` concern the text formats (CSV, per-image
    text, devkit results); COCO JSON and VOC XML always hold absolute pixels
    in their own layout, so a VOC ground truth pairs with YOLO-style
    predictions under one ``--normalized`` flag.  ``workers`` processes may
    share the decoding of a large COCO results file (0: one per core).
    """
    fmt = fmt or detect_format(path)
    textual = fmt in TEXT_FORMATS
    options = LoadOptions(
        box_format=BoxFormat(box_format) if box_format and textual else None,
        normalized=normalized and textual,
        names=tuple(names) if names else None,
        reference_images=reference.images if reference is not None else None,
        image_size=image_size,
        workers=resolve_workers(workers),
    )
    return _load(path, role, fmt, options)


def make_protocol(
    name: str,
    *,
    iou_thresholds: Sequence[float] | None = None,
    area_ranges: Sequence[AreaRange] | None = None,
    max_dets: Sequence[int] | None = None,
    class_agnostic: bool = False,
    zero_id_quirk: bool = True,
    honour_ignore: bool = False,
    pixel_convention: str | None = None,
) -> Protocol:
    """A :class:`Protocol` by name with the command line's overrides applied."""
    if name not in BY_NAME:
        raise UsageError(f"unknown protocol {name!r} (known: {', '.join(BY_NAME)})")
    p = BY_NAME[name]()
    changes: dict[str, object] = {"class_agnostic": class_agnostic}
    if not p.is_voc:
        changes["zero_id_quirk"] = zero_id_quirk
        changes["honour_ignore"] = honour_ignore
        if iou_thresholds:
            changes["iou_thresholds"] = tuple(float(t) for t in iou_thresholds)
        if area_ranges:
            changes["area_ranges"] = (p.area_ranges[0], *area_ranges)
        if max_dets:
            changes["max_dets"] = tuple(sorted(int(m) for m in max_dets))
    if pixel_convention:
        from .boxes import PixelConvention

        changes["pixel_convention"] = PixelConvention(pixel_convention)
    return replace(p, **changes)  # type: ignore[arg-type]


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
    gt: str | Dataset,
    preds: str | Dataset,
    gt_format: str | None,
    pred_format: str | None,
    box_format: str | None,
    normalized: bool,
    names: Sequence[str] | None,
    image_size: tuple[float, float] | None,
    workers: int,
) -> tuple[Dataset, Dataset]:
    """Both datasets; with workers, the ground truth is read in a child meanwhile.

    Text predictions need the ground truth first (its image sizes), so they
    are read after it.  A ground-truth error is reported before a
    predictions error, as when the files are read one after the other.
    """

    def load_gt() -> Dataset:
        if isinstance(gt, Dataset):
            return gt
        return load(gt, "gt", gt_format, box_format, normalized, names, image_size=image_size)

    if isinstance(preds, Dataset):
        return load_gt(), preds
    pred_fmt = pred_format
    concurrent = workers > 1 and not isinstance(gt, Dataset) and _size(preds) >= PARALLEL_MIN_BYTES
    if concurrent and pred_fmt is None:
        try:
            pred_fmt = detect_format(preds)
        except IouEvalError:
            pred_fmt = None  # reported when the predictions are read, after the ground truth
    if not concurrent or pred_fmt in (None, *TEXT_FORMATS):
        gt_ds = load_gt()
        return gt_ds, load(
            preds, "pred", pred_format, box_format, normalized, names, gt_ds, image_size, workers
        )
    job = start(load_gt)
    try:
        try:
            pred_ds = load(
                preds, "pred", pred_fmt, box_format, normalized, names, None, image_size, workers
            )
        except IouEvalError:
            job.result()  # the ground truth's own error comes first
            raise
        return job.result(), pred_ds
    finally:
        job.cancel()


def evaluate(
    gt: str | Dataset,
    preds: str | Dataset,
    *,
    protocol: str | Sequence[str] = "coco",
    iou_thr: float = 0.5,
    score_thr: float = 0.0,
    gt_format: str | None = None,
    pred_format: str | None = None,
    box_format: str | None = None,
    normalized: bool = False,
    names: Sequence[str] | None = None,
    image_size: tuple[float, float] | None = None,
    iou_thresholds: Sequence[float] | None = None,
    area_ranges: Sequence[AreaRange] | None = None,
    max_dets: Sequence[int] | None = None,
    class_agnostic: bool = False,
    zero_id_quirk: bool = True,
    honour_ignore: bool = False,
    pixel_convention: str | None = None,
    bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
    on_stage: Callable[[str], None] | None = None,
) -> EvaluationResult:
    """Score predictions against ground truth.

    Args:
        gt, preds: paths (format detected from content unless ``gt_format`` /
            ``pred_format`` say) or already loaded :class:`Dataset` objects.
        protocol: ``"coco"``, ``"voc07"``, ``"voc12"``, or several (a list or
            ``"coco,voc12"``), reported side by side from one parse.
        iou_thr, score_thr: the operating point of the count tables.
        bootstrap, seed, confidence: resample images ``bootstrap`` times
            (seeded) for ``confidence`` intervals of the summary metrics.
        progress: called with 1 after each bootstrap replicate.
        on_stage: called with a short description as each stage starts
            (reading, then each protocol), for progress displays.
        workers: processes to use (forked, Linux only; 0: one per core).
            The ground truth is read while the predictions are, a large
            results file is decoded in parts, and the COCO protocol matches
            and accumulates categories in parts.  Results are identical.
        others: as the command-line options of the same names.

    Returns:
        :class:`~iou_eval.results.EvaluationResult`.
    """
    names_list = [protocol] if isinstance(protocol, str) else list(protocol)
    names_list = [n.strip() for item in names_list for n in item.split(",") if n.strip()]
    if not names_list:
        raise UsageError("no protocol given")
    protocols = [
        make_protocol(
            n,
            iou_thresholds=iou_thresholds,
            area_ranges=area_ranges,
            max_dets=max_dets,
            class_agnostic=class_agnostic,
            zero_id_quirk=zero_id_quirk,
            honour_ignore=honour_ignore,
            pixel_convention=pixel_convention,
        )
        for n in names_list
    ]
    stage = on_stage or (lambda _name: None)
    n_workers = resolve_workers(workers)
    stage("reading")
    gt_ds, pred_ds = _load_pair(
        gt, preds, gt_format, pred_format, box_format, normalized, names, image_size, n_workers
    )
    alignment = align(gt_ds, pred_ds)
    warnings = list(alignment.warnings)
    results: list[ProtocolResult] = []
    for p in protocols:
        stage(f"evaluating ({p.name})")
        warnings.extend(w for w in quirk_warnings(alignment, p) if w not in warnings)
        if p.is_voc:
            results.append(voc_result(alignment, run_voc(alignment, p, iou_thr), score_thr))
        else:
            evaluation = run_coco(alignment, p, iou_thr, workers=n_workers)
            results.append(coco_result(alignment, evaluation, score_thr))
        if bootstrap > 0:
            r = results[-1]
            r.bootstrap = run_bootstrap(
                r.evaluation.replicate,
                alignment.gt.images.ids,
                bootstrap,
                seed,
                confidence,
                progress=progress,
            )
    return EvaluationResult(
        results=results,
        inputs=describe_inputs(gt_ds, pred_ds, alignment),
        settings={"iou_thr": iou_thr, "score_thr": score_thr},
        warnings=warnings,
    )
