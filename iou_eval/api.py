"""The Python API, mirroring the command line.

>>> from iou_eval import evaluate
>>> result = evaluate("gt.json", "preds.json")
>>> result.summary["AP"], result.per_class.head()
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from iou_eval.analysis.records import Analysis
from iou_eval.data.dataset import Dataset
from iou_eval.data.reconcile import Alignment, align
from iou_eval.data.subsets import select
from iou_eval.engine.memory import release_free_memory
from iou_eval.engine.parallel import resolve_workers, start
from iou_eval.errors import IouEvalError, UsageError
from iou_eval.io.inputs import (
    check_class_files,
    detect_pred_format,
    is_path,
    keypoint_notes,
    load_input,
    pair_doubts,
    prepare_pair,
    strict_error,
    unsized,
    with_note,
)
from iou_eval.io.loaders import detect_format
from iou_eval.io.loaders.registry import crowd_word
from iou_eval.io.option_files import resolve, resolve_read
from iou_eval.options import EvalOptions, ReadOptions
from iou_eval.protocols.builtin import federation_notes
from iou_eval.protocols.lvis import federated_ground_truth
from iou_eval.protocols.params import AUTO, Protocol
from iou_eval.protocols.records import RunContext
from iou_eval.protocols.registry import build_protocols, record_of
from iou_eval.results import EvaluationResult, ProtocolResult

# Reading the ground truth in a child pays off only beside a large predictions file.
PARALLEL_MIN_BYTES = 4 << 20


def load(
    path: Any,
    role: str = "gt",
    fmt: str | None = None,
    *,
    read: ReadOptions | None = None,
    workers: int = 1,
    masks: bool = False,
    executor: Any = None,
    keypoints: bool = False,
    **keywords: Any,
) -> Dataset:
    """Read a ground-truth (``role="gt"``) or prediction (``"pred"``) file, folder or object.

    ``path``: a path (``-``: standard input), or in memory a COCO dict, a
    list of records, a pandas DataFrame or per-image numpy arrays (see
    :mod:`iou_eval.io.loaders.memory`).  ``read`` (or its fields as keywords:
    ``box_format``, ``normalized``, ``names``, ``split``, ``images``...)
    says how; layout and scale apply to the formats that leave them open
    (CSV, per-image text, devkit results, DataFrames, arrays): COCO JSON and
    VOC XML always hold absolute pixels in their own layout.  Normalized
    boxes whose file gives no image sizes come back as fractions
    (``Dataset.fractions``); :func:`~iou_eval.data.reconcile.align` scales them.
    ``workers`` processes may share the decoding of a large COCO results
    file (0: one per core), or ``executor``'s (a Dask cluster's) workers.
    ``masks``: read instance masks too (for ``segm``); ``keypoints``: read
    keypoints too (for ``keypoints``).
    """
    r = resolve_read(
        dataclasses.replace(read or ReadOptions(), **keywords)
        if keywords
        else read or ReadOptions()
    )
    return load_input(path, role, fmt, r, resolve_workers(workers), masks, executor, keypoints)


def quirk_warnings(alignment: Alignment, protocol: Protocol) -> list[str]:
    """Where the input meets a rule of the reference that the protocol reproduces."""
    return record_of(protocol).notes(alignment, protocol)


def _shapes(ds: Dataset) -> str | None:
    """What an oriented dataset holds (:func:`iou_eval.data.oriented.describe`)."""
    from iou_eval.data.oriented import describe

    return describe(ds)


def describe_inputs(gt: Dataset, pred: Dataset, alignment: Alignment) -> dict[str, object]:
    """What was read and how the two files were joined, for reports."""
    k = alignment.n_categories
    names = alignment.gt.categories.names
    predicted = np.bincount(alignment.pred.category_idx, minlength=len(names)) > 0
    annotated = np.bincount(alignment.gt.category_idx, minlength=len(names)) > 0
    unpredicted, with_objects = alignment.unpredicted_images()
    return {
        "ground_truth": {
            "path": gt.source,
            "format": gt.format,
            **({"shapes": _shapes(gt)} if gt.oriented is not None else {}),
            "images": len(gt.images),
            "boxes": len(gt),
            "crowd": int(gt.is_crowd.sum()),
            **({"crowd_word": word} if (word := crowd_word(gt.format)) != "crowd" else {}),
            "categories": alignment.n_categories,
        },
        "predictions": {
            "path": pred.source,
            "format": pred.format,
            **({"shapes": _shapes(pred)} if pred.oriented is not None else {}),
            "boxes": len(pred),
            "scored_boxes": len(alignment.pred),
            "unknown_image_boxes": alignment.unknown_image_rows,
            "prediction_only_categories": len(alignment.pred_only_categories),
            "images_without_predictions": unpredicted,
            "images_with_objects": with_objects,
        },
        "image_match": alignment.image_match,
        "category_match": alignment.category_match,
        "categories_only_in_predictions": [names[i] for i in range(k, len(names))],
        "categories_without_predictions": [
            names[i] for i in range(k) if annotated[i] and not predicted[i]
        ],
    }


def _size(path: Any) -> int:
    if not is_path(path):
        return 0
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _loaded_pair(
    gt: Any,
    preds: Any,
    read: ReadOptions,
    workers: int,
    masks: bool = False,
    executor: Any = None,
    keypoints: bool = False,
) -> tuple[Dataset, Dataset]:
    """Both datasets (:func:`_load_pair`), the predictions' files checked against the ground truth."""
    gt_ds, pred_ds = _load_pair(gt, preds, read, workers, masks, executor, keypoints)
    check_class_files(gt_ds, pred_ds)
    return gt_ds, pred_ds


def _load_pair(
    gt: Any,
    preds: Any,
    read: ReadOptions,
    workers: int,
    masks: bool = False,
    executor: Any = None,
    keypoints: bool = False,
) -> tuple[Dataset, Dataset]:
    """Both datasets; with workers, the ground truth is read in a child meanwhile.

    A ground-truth error is reported before a predictions error, as when the
    files are read one after the other.  The predictions' format, unless
    given, is judged from their content and the ground truth's format
    (:func:`~iou_eval.io.inputs.detect_pred_format`).
    """

    def load_gt() -> Dataset:
        if isinstance(gt, Dataset):
            return gt
        return load(gt, "gt", read.gt_format, read=read, masks=masks, keypoints=keypoints)

    if not is_path(preds):
        return load_gt(), load(
            preds, "pred", read.pred_format, read=read, masks=masks, keypoints=keypoints
        )
    pred_fmt, note = read.pred_format, None
    if pred_fmt is None:
        pred_fmt, note = detect_pred_format(preds, _gt_format(gt, read))
    read = dataclasses.replace(read, pred_format=pred_fmt)
    if executor is not None:
        gt_ds, pred_ds = _load_beside_cluster(load_gt, preds, read, masks, executor, keypoints)
        return gt_ds, with_note(pred_ds, note)
    concurrent = workers > 1 and is_path(gt) and _size(preds) >= PARALLEL_MIN_BYTES
    if not concurrent or pred_fmt is None:
        gt_ds = load_gt()
        pred_ds = load(
            preds, "pred", pred_fmt, read=read, workers=workers, masks=masks, keypoints=keypoints
        )
        return gt_ds, with_note(pred_ds, note)
    if not masks and _read_by_threads(_gt_format(gt, read), pred_fmt):
        # The compiled reader releases the GIL: both files are read in
        # threads of this process, nothing forked or sent back.
        from iou_eval.engine.parallel import run_threads

        pair = run_threads(
            lambda i: load_gt() if i == 0 else load(
                preds, "pred", pred_fmt, read=read, workers=workers, keypoints=keypoints
            ),
            [0, 1],
        )  # fmt: skip
        return pair[0], with_note(pair[1], note)
    _import_readers((read.gt_format, pred_fmt), gt, masks)
    # With masks the ground truth's child rasterises polygons for about as
    # long as the results take to read: it keeps one of the workers busy.
    pred_workers = max(1, workers - 1) if masks else workers
    job = start(load_gt)
    try:
        try:
            pred_ds = load(
                preds, "pred", pred_fmt, read=read, workers=pred_workers, masks=masks,
                keypoints=keypoints,
            )  # fmt: skip
        except IouEvalError:
            job.result()  # the ground truth's own error comes first
            raise
        return job.result(), with_note(pred_ds, note)
    finally:
        job.cancel()


def _gt_format(gt: Any, read: ReadOptions) -> str | None:
    """The ground truth's format as given or detected (None if it cannot be told yet)."""
    if isinstance(gt, Dataset):
        return gt.format
    if read.gt_format or not is_path(gt):
        return read.gt_format
    try:
        return detect_format(os.fspath(gt))
    except IouEvalError:
        return None  # the ground truth's reader says what is wrong, first


def _read_by_threads(gt_fmt: str | None, pred_fmt: str) -> bool:
    """Whether the compiled reader reads both files (COCO JSON boxes, keypoints)."""
    from iou_eval.io.compiled import json_reader
    from iou_eval.io.loaders.registry import formats

    read = {f.name for f in formats() if f.compiled_json}
    return gt_fmt in read and pred_fmt in read and json_reader() is not None


def _import_readers(fmts: tuple[str | None, str], gt: str, masks: bool) -> None:
    """Import the readers of both files before the ground truth's child is forked.

    Each process would otherwise import them for itself, parsing the same
    modules twice (masks: the loader, the mask modules, pycocotools' and the
    compiled kernels).  An unreadable ground truth is left to its reader,
    which says what is wrong in its turn.
    """
    from iou_eval.geometry.kernel import compiled
    from iou_eval.io.compiled import json_reader
    from iou_eval.io.loaders import get

    names = {f for f in fmts if f is not None}
    if None in fmts:
        with contextlib.suppress(IouEvalError):
            names.add(detect_format(gt))
    for name in names:
        get(name).load()
    if masks:
        import iou_eval.geometry.masks  # noqa: F401  (imported before the fork)

        compiled()
        json_reader()


def _load_beside_cluster(
    load_gt: Callable[[], Dataset],
    preds: str,
    read: ReadOptions,
    masks: bool,
    executor: Any,
    keypoints: bool = False,
) -> tuple[Dataset, Dataset]:
    """The ground truth read here while a cluster's workers decode the predictions' chunks.

    A thread waits for the cluster; a ground-truth error still comes first.
    """
    from concurrent.futures import ThreadPoolExecutor

    def load_pred() -> Dataset:
        return load(
            preds, "pred", read.pred_format, read=read, masks=masks, executor=executor,
            keypoints=keypoints,
        )  # fmt: skip

    if _size(preds) < PARALLEL_MIN_BYTES:
        return load_gt(), load_pred()
    with ThreadPoolExecutor(1, thread_name_prefix="iou-eval-preds") as pool:
        pending = pool.submit(load_pred)
        gt_ds = load_gt()  # raises first; the pool waits for the predictions
        return gt_ds, pending.result()


def _unit_images(gt_ds: Dataset, protocols: list[Protocol]) -> tuple[Dataset, list[Protocol]]:
    """Without pixel sizes (Open Images) the area ranges would compare fractions with pixel
    bounds: they are dropped, and the reader's note on them is kept only for a protocol that has
    them (COCO, LVIS), not for ``openimages`` alone."""
    if not unsized(gt_ds):
        return gt_ds, protocols
    kept = [p.without_area_ranges() for p in protocols]
    if any(len(p.area_ranges) > 1 for p in protocols):
        return gt_ds, kept
    from iou_eval.io.loaders.openimages import UNIT_NOTE

    notes = tuple(w for w in gt_ds.warnings if UNIT_NOTE not in w)
    return dataclasses.replace(gt_ds, warnings=notes), kept


def _challenge_inputs(
    gt: Any, gt_ds: Dataset, protocols: list[Protocol], opts: EvalOptions
) -> tuple[Dataset, Callable[[Alignment], Alignment], list[str]]:
    """The ground truth as the Open Images protocol scores it, and how its labels join the alignment.

    Returns the ground truth (expanded along ``--oi-hierarchy``, with the
    images only the labels name), a step that attaches the verified labels
    to an alignment, and notes.  Without ``--protocol openimages`` nothing
    changes (its options are refused).
    """
    po = opts.protocol
    if not any(record_of(p).image_labels for p in protocols):
        given = [f for f, v in (("--oi-hierarchy", po.oi_hierarchy),
                                ("--oi-image-labels", po.oi_image_labels),
                                ("--oi-group-of-weight", po.oi_group_of_weight != 1.0)) if v]  # fmt: skip
        if given:
            raise UsageError(f"{' and '.join(given)} apply to --protocol openimages")
        return gt_ds, lambda a: a, []
    from iou_eval.data.image_labels import verified_labels, with_class_names
    from iou_eval.io.loaders.openimages_labels import challenge_inputs

    names = opts.read.names if not isinstance(opts.read.names, str) else None
    inputs = challenge_inputs(gt, gt_ds, po.oi_hierarchy, po.oi_image_labels, names)

    def attach(a: Alignment) -> Alignment:
        labels = verified_labels(a, inputs.labels, tuple(inputs.names))
        return dataclasses.replace(with_class_names(a, inputs.names), verified=labels)

    return inputs.ground_truth, attach, list(inputs.notes)


def score(
    alignment: Alignment,
    protocol: Protocol,
    options: EvalOptions,
    workers: int,
    progress: Callable[[int], None] | None = None,
    executor: Any = None,
) -> ProtocolResult:
    """One protocol's result on an aligned pair, with bootstrap replicates when asked for.

    ``executor``: a Dask cluster's, to match COCO categories and draw the
    replicates on; the numbers are the same.
    """
    boot = options.bootstrap
    record = record_of(protocol)
    if boot.bootstrap > 0 and not record.bootstrap:
        raise UsageError(
            f"--bootstrap: --protocol {protocol.name} has no bootstrap replicates (its optimum "
            "over every position of a resampled list is not computed); pass --bootstrap 0"
        )
    context = RunContext(
        iou_thr=options.point.iou_thr,
        score_thr=options.point.score_thr,
        workers=workers,
        executor=executor,
        keep_accumulation=(
            options.runtime.keep_accumulation or boot.bootstrap > 0 or options.analysis.any
        ),
    )
    result = ProtocolResult.of(*record.score(alignment, protocol, context))
    if boot.bootstrap <= 0 or result.evaluation is None:
        return result
    from iou_eval.analysis.bootstrap import PARALLEL_MIN_WORK, run_bootstrap

    big = len(alignment.pred) * boot.bootstrap >= PARALLEL_MIN_WORK
    replicates = run_bootstrap(
        result.evaluation.replicate,
        alignment.gt.images.ids,
        boot.bootstrap,
        boot.seed,
        boot.confidence,
        progress=progress,
        workers=workers if big else 1,
        executor=executor,
        # An evaluation whose replicates release the GIL says so (COCO's, compiled).
        threads=getattr(result.evaluation, "replicates_in_threads", False),
    )
    return dataclasses.replace(result, bootstrap=replicates)


def evaluate(
    gt: Any,
    preds: Any,
    options: EvalOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    client: Any = None,
    warn: bool = True,
    **keywords: object,
) -> EvaluationResult:
    """Score predictions against ground truth.

    Args:
        gt, preds: paths (format detected from content unless ``gt_format`` /
            ``pred_format`` say; ``-`` is standard input), already loaded
            :class:`Dataset` objects, or in-memory inputs: a COCO dict, a list
            of records, a pandas DataFrame, per-image numpy arrays
            (:mod:`iou_eval.io.loaders.memory`; ``box_format=`` names the
            layout of DataFrame and array boxes).  Inputs are never modified.
        options: an :class:`~iou_eval.options.EvalOptions`, or its fields as
            keywords (``protocol="coco,voc12"``, ``iou_thr=0.75``,
            ``box_format="xyxy"``, ``bootstrap=200``, ``workers=0`` ...):
            each keyword is one field of one of its records, documented there.
        progress: called with 1 after each bootstrap replicate.
        on_stage: called with a short description as each stage starts
            (reading, then each protocol), for progress displays.
        client: a ``dask.distributed.Client``: the predictions' chunks, the
            COCO categories and the bootstrap replicates run on its cluster
            (``dask="local:2"`` starts one for this call instead).  The
            numbers do not depend on it.
        warn: issue each doubt as an :class:`~iou_eval.errors.IouEvalDoubt`
            warning (the command line says them itself).

    Returns:
        :class:`~iou_eval.results.EvaluationResult`; its ``warnings`` hold
        notes and doubts (:mod:`iou_eval.data.doubts`).

    Raises:
        InputError: with ``strict=True``, when any warning doubts the numbers.

    Warns:
        IouEvalDoubt: for each doubt about the numbers as the inputs were read.
    """
    opts = resolve(EvalOptions.of(options, **keywords))
    if client is None and opts.runtime.dask is None:
        result = _evaluate(gt, preds, opts, progress, on_stage, None)
    else:
        from iou_eval.engine.cluster import executor_for

        with executor_for(opts.runtime.dask, client) as executor:
            result = _evaluate(gt, preds, opts, progress, on_stage, executor)
    if warn:
        issue_doubts(result.warnings)
    return result


def issue_doubts(warnings: list[str], stacklevel: int = 3) -> None:
    """Each doubt among ``warnings`` as an :class:`~iou_eval.errors.IouEvalDoubt` warning."""
    import warnings as python_warnings

    from iou_eval.data.doubts import doubts_of
    from iou_eval.errors import IouEvalDoubt

    for text in dict.fromkeys(doubts_of(warnings)):
        python_warnings.warn(text, IouEvalDoubt, stacklevel=stacklevel)


def _oriented_doubts(
    alignment: Alignment, protocols: list[Protocol], opts: EvalOptions, oriented: bool
) -> list[str]:
    """The oriented boxes' doubts; none (and no import) for a run without them."""
    if not oriented and not any(p.iou_type == "obb" for p in protocols):
        return []
    from iou_eval.data.oriented import oriented_doubts

    a = opts.analysis
    hull = any(p.iou_type == "obb" and not record_of(p).devkit_polygons for p in protocols)
    return oriented_doubts(alignment, protocols, a.tide or a.confusion or a.calibration, hull=hull)


def _evaluate(
    gt: str | Dataset,
    preds: str | Dataset,
    opts: EvalOptions,
    progress: Callable[[int], None] | None,
    on_stage: Callable[[str], None] | None,
    executor: Any,
) -> EvaluationResult:
    """:func:`evaluate` with its options built; ``executor``: a cluster's, or None."""
    build_protocols(opts.protocol)  # a bad --protocol / --iou-type is said before any reading
    stage = on_stage or (lambda _name: None)
    # Beside a cluster this process forks no workers of its own.
    n_workers = resolve_workers(opts.runtime.workers) if executor is None else 1
    stage("reading")
    masks, keypoints = opts.protocol.masks, opts.protocol.keypoints
    gt_ds, pred_ds = _loaded_pair(gt, preds, opts.read, n_workers, masks, executor, keypoints)
    federated = federated_ground_truth(gt_ds)
    oriented = gt_ds.oriented is not None or pred_ds.oriented is not None
    protocols = build_protocols(opts.protocol, federated, oriented)
    protocol_notes = run_notes(gt, preds, gt_ds, pred_ds, opts, protocols, federated)
    gt_ds, pred_ds, shifted = prepare_pair(gt_ds, pred_ds, opts.read)
    gt_ds, protocols = _unit_images(gt_ds, protocols)
    gt_ds, attach_labels, oi_notes = _challenge_inputs(gt, gt_ds, protocols, opts)
    alignment = attach_labels(align(gt_ds, pred_ds, opts.read.image_size))
    alignment, selected = select(alignment, opts.analysis.img_ids, opts.analysis.cat_ids)
    plain = alignment
    inputs = {**describe_inputs(gt_ds, pred_ds, alignment), **selection_inputs(alignment, opts)}
    # The aligned columns replace the loaded ones: at ten million predictions
    # the loaded index columns alone hold 160 MB.
    del gt_ds, pred_ds
    release_free_memory()  # what loading freed, before the evaluation's large arrays
    alignment = _with_geometry(alignment, opts)
    # Under --strict the doubts decide whether to score at all: found first.
    doubts = _pair_doubts_meanwhile(alignment, shifted, opts, n_workers)
    warnings = list(alignment.warnings) + selected
    at_doubts = len(warnings)
    warnings += protocol_notes + oi_notes
    warnings += _oriented_doubts(alignment, protocols, opts, oriented)
    if opts.read.strict:
        warnings[at_doubts:at_doubts] = doubts()
        if (error := strict_error(warnings)) is not None:
            raise error
    results: list[ProtocolResult] = []
    said_by: list[tuple[list[str], tuple[str, ...]]] = []
    for p in protocols:
        stage(f"evaluating ({p.name})")
        scored = _boxes_of(plain, alignment) if masks and p.iou_type == "bbox" else alignment
        results.append(score(scored, p, opts, n_workers, progress, executor))
        said_by.append((quirk_warnings(alignment, p), tuple(results[-1].notes)))
    if not opts.read.strict:
        warnings[at_doubts:at_doubts] = doubts()
    for quirks, said in said_by:  # in the order each protocol adds them
        warnings.extend(w for w in quirks if w not in warnings)
        warnings.extend(said)
    analysis = Analysis()
    if opts.analysis.any:
        from iou_eval.analysis.run import run_analyses

        stage("analysing")
        analysis, notes = run_analyses(alignment, results, opts)
        warnings.extend(notes)
    return EvaluationResult(
        results=results,
        inputs=inputs,
        settings={
            "iou_thr": opts.point.iou_thr,
            "score_thr": opts.point.score_thr,
            **selection_settings(opts),
        },
        warnings=warnings,
        analysis=analysis,
        alignment=alignment,
    )


def _boxes_of(plain: Alignment, alignment: Alignment) -> Alignment:
    """The boxes a ``bbox`` protocol scores in a run with masks."""
    from iou_eval.geometry.segm import boxes_view

    return boxes_view(plain, alignment)


# From this many predictions the pair's doubts are found beside the scoring.
DOUBTS_BESIDE_MIN_PREDICTIONS = 1_000_000


def _pair_doubts_meanwhile(
    alignment: Alignment, shifted: bool, opts: EvalOptions, workers: int
) -> Callable[[], list[str]]:
    """:func:`pair_doubts` of the alignment, asked for by calling what this returns.

    With several workers and a large run (not under ``--strict``, whose
    doubts decide whether to score), they are found in a thread meanwhile:
    numpy steps that the scoring's compiled parts, which release the GIL,
    leave room for.  The doubts are the same.
    """
    beside = (
        workers > 1
        and not opts.read.strict
        and len(alignment.pred) >= DOUBTS_BESIDE_MIN_PREDICTIONS
    )
    if not beside:  # found now, before the scoring's arrays take their room
        found = pair_doubts(alignment, shifted, opts.read)
        return lambda: found
    from iou_eval.engine.parallel import in_thread

    return in_thread(pair_doubts, alignment, shifted, opts.read)


def _with_geometry(alignment: Alignment, opts: EvalOptions) -> Alignment:
    """The alignment with what its iou types score: masks encoded, boxes of results that give
    masks only, keypoints."""
    if opts.protocol.masks:
        from iou_eval.geometry.segm import with_masks

        alignment = with_masks(alignment)
    elif alignment.pred.masks is not None:
        from iou_eval.geometry.segm import boxes_from_masks

        alignment = boxes_from_masks(alignment)  # results that give masks without boxes
    if opts.protocol.keypoints:
        from iou_eval.geometry.keypoints import with_keypoints

        alignment = with_keypoints(alignment, opts.protocol.kpt_sigmas)
    return alignment


def run_notes(
    gt: Any,
    preds: Any,
    gt_ds: Dataset,
    pred_ds: Dataset,
    opts: EvalOptions,
    protocols: list[Protocol],
    federated: bool,
) -> list[str]:
    """What the run says about what it scores: :func:`lvis_notes`, and keypoints left
    unscored when no iou type was asked for."""
    out = lvis_notes(gt_ds, opts, protocols, federated)
    if not opts.protocol.iou_type:
        out += keypoint_notes(gt, preds, gt_ds, pred_ds)
    return out


def lvis_notes(
    gt: Dataset, opts: EvalOptions, protocols: list[Protocol], federated: bool
) -> list[str]:
    """What the run says about LVIS: which protocol an LVIS file got, and what a COCO run ignores."""
    return federation_notes(
        gt.source,
        federated,
        gt.categories.frequency is not None,
        protocols,
        AUTO in opts.protocol.protocol,
        opts.analysis.cat_ids is not None,
    )


def selection_inputs(alignment: Alignment, opts: EvalOptions) -> dict[str, object]:
    """``{"selection": ...}`` when ``--img-ids`` / ``--cat-ids`` chose what is scored, else nothing."""
    a = opts.analysis
    if a.img_ids is None and a.cat_ids is None:
        return {}
    return {
        "selection": {
            "images": len(alignment.gt.images),
            "categories": alignment.n_categories,
            "img_ids_given": None if a.img_ids is None else len(a.img_ids),
            "cat_ids_given": None if a.cat_ids is None else len(a.cat_ids),
        }
    }


def selection_settings(opts: EvalOptions) -> dict[str, str]:
    """The selection as parameters (so a baseline of other images is refused); nothing by default."""
    a = opts.analysis
    out = {}
    for key, ids in (("img_ids", a.img_ids), ("cat_ids", a.cat_ids)):
        if ids is not None:
            from iou_eval.analysis.bootstrap import images_digest

            out[key] = f"{len(ids)} ids, digest {images_digest(list(ids))}"
    return out
