"""Both inputs read as the options say, and what was read checked for doubts.

The steps between the loaders and the scoring, in order:

1. :func:`load_input`: a path (any registered format, ``-`` for standard
   input) or an in-memory object (:mod:`iou_eval.io.loaders.memory`) read with
   the options of its side: ``--gt-box-format`` / ``--pred-box-format`` win
   over ``--box-format``, ``--gt-normalized`` / ``--pred-normalized`` add to
   ``--normalized``; ``--split`` picks a data.yaml split; the ground truth
   takes its image sizes and images without objects from ``--images DIR``;
   the scale of the numbers is checked (:func:`~iou_eval.data.plausibility.scale_doubts`).
2. :func:`prepare_pair`: ``--class-offset`` / ``--class-map`` applied to
   the predictions' class ids, or, without them, a shift of the class ids
   detected and said as a doubt.
3. :func:`pair_doubts` after the alignment: box layouts against the image
   sizes, most predictions in classes the ground truth lacks.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Dataset
from iou_eval.data.doubts import STREAM_SOURCE, Doubt
from iou_eval.data.plausibility import (
    class_coverage_doubts,
    class_shift_doubt,
    fraction_doubts,
    layout_doubts,
    scale_doubts,
)
from iou_eval.data.readings import (
    Readings,
    class_name_doubts,
    image_id_doubts,
    layout_reading_doubts,
    offset_image_ids,
)
from iou_eval.data.reconcile import Alignment, unpredicted_text
from iou_eval.io.loaders import LoadOptions, detect_format
from iou_eval.io.loaders import load as load_path
from iou_eval.io.loaders.common import KEYPOINT_HINT
from iou_eval.io.loaders.registry import find as find_format
from iou_eval.io.loaders.registry import holds_oriented
from iou_eval.io.loaders.registry import traits as format_traits
from iou_eval.options import ReadOptions


def is_path(source: Any) -> bool:
    return isinstance(source, (str, os.PathLike))


def load_options(
    read: ReadOptions,
    role: str,
    fmt: str,
    workers: int = 1,
    masks: bool = False,
    executor: Any = None,
    keypoints: bool = False,
) -> LoadOptions:
    """How the ``role`` file of format ``fmt`` is read.

    Layout and scale apply to the formats that leave them open (CSV,
    per-image text, devkit results, in-memory tables and arrays); COCO JSON,
    VOC XML and the training tools' formats hold their own.
    """
    textual = format_traits(fmt).option_layout
    layout = read.layout(role)
    return LoadOptions(
        box_format=BoxFormat(layout) if layout and textual else None,
        normalized=read.fractions(role) and textual,
        names=read.names,
        workers=workers,
        split=read.split,
        masks=masks,
        executor=executor,
        angle_unit=read.angle_unit,
        keypoints=keypoints,
        score_column=read.score_column,
    )


# What the note says when Ultralytics predictions were recognised.
_ULTRALYTICS = (
    "Ultralytics predictions ('class cx cy w h conf' or 'class x1 y1 ... conf', fractions, "
    "confidence last)"
)


def detect_pred_format(path: Any, gt_format: str | None) -> tuple[str | None, str | None]:
    """The predictions' format from their content and the ground truth's, and a note saying so.

    Beside a YOLO dataset, a folder of ``.txt`` files that reads as
    Ultralytics ``predict`` output (6 numbers a line, or a polygon and a
    confidence; every coordinate in [0, 1]) is YOLO predictions, where its
    content alone would make it the ``txt`` format (score second).  A
    ``predict`` run folder (``labels/`` inside) is YOLO predictions beside
    any ground truth.

    Returns ``(format, note)``; ``(None, None)`` when the content says
    nothing: the loader then says what is wrong, after the ground truth's
    own errors.
    """
    if not is_path(path):
        return None, None
    from iou_eval.errors import IouEvalError

    path = os.fspath(path)
    try:
        fmt: str | None = detect_format(path)
    except IouEvalError:
        fmt = None
    folder = path != "-" and os.path.isdir(path)
    found, gt_found = find_format(fmt), find_format(gt_format)
    if found is not None and found.ultralytics_dataset and folder and _predict_run(path):
        return fmt, f"{path}: read as {_ULTRALYTICS}: the labels/ folder of a predict run"
    if (
        gt_found is not None
        and gt_found.ultralytics_dataset
        and (fmt is None or (found is not None and found.ultralytics_lines))
        and folder
        and _ultralytics_lines(path)
    ):
        return gt_found.name, f"{path}: read as {_ULTRALYTICS}, beside a YOLO dataset"
    lines = fmt is None or (found is not None and found.ultralytics_lines)
    if holds_oriented(gt_format) and lines and folder:
        return _beside_oriented(path, fmt)
    return fmt, None


def _predict_run(path: str) -> bool:
    from iou_eval.io.loaders.yolo import is_predict_run  # the YOLO reader only beside YOLO

    return is_predict_run(path)


def _ultralytics_lines(path: str) -> bool:
    from iou_eval.io.loaders.yolo import ultralytics_prediction_lines

    return ultralytics_prediction_lines(path)


def _beside_oriented(path: str, fmt: str | None) -> tuple[str | None, str | None]:
    """A folder of ``.txt`` beside an oriented ground truth (DOTA's ``labelTxt/``).

    Ten numbers a line, the coordinates in [0, 1], are Ultralytics OBB
    predictions (``class x1 y1 ... x4 y4 conf``); ``image score x1 y1 ...
    x4 y4`` lines are the DOTA devkit's task-1 results in files named by
    their class alone (the devkit names them ``Task1_<class>.txt``).
    """
    from iou_eval.io.loaders.yolo import task1_lines, ultralytics_prediction_lines

    if ultralytics_prediction_lines(path, obb=True):
        return "yolo", (
            f"{path}: read as Ultralytics OBB predictions ('class x1 y1 ... x4 y4 conf', "
            "fractions, confidence last), beside an oriented ground truth"
        )
    if task1_lines(path):
        return "dota-results", None  # the reader names the files' classes
    return fmt, None


def check_class_files(gt: Dataset, pred: Dataset) -> None:
    """Refuse DOTA task-1 results named by their class alone when a name is no ground-truth class.

    Files named ``<class>.txt`` instead of the devkit's ``Task1_<class>.txt``
    are read by their names only when every name is a class of the ground
    truth: any other file name says the folder is something else.
    """
    if not holds_oriented(pred.format):  # task-1 results are oriented boxes: no others read so
        return
    from iou_eval.errors import InputError
    from iou_eval.io.loaders.dota import class_stem, plain_named

    if not plain_named(pred):
        return
    known = {str(n) for n in gt.categories.names}
    stray = next((f for f in pred.files if class_stem(f) not in known), None)
    if stray is not None:
        shown = ", ".join(sorted(known)[:8]) + (", ..." if len(known) > 8 else "")
        raise InputError(
            stray,
            f"lines read as DOTA task-1 results ('image score x1 y1 ... x4 y4'), but the file name "
            f"{class_stem(stray)!r} is not a class of the ground truth (known: {shown})",
            hint="the DOTA devkit names its results Task1_<class>.txt, one file per class "
            "(--pred-format dota-results)",
        )


def with_note(ds: Dataset, note: str | None) -> Dataset:
    """``ds`` with ``note`` appended to its warnings (None: unchanged)."""
    return _with_warnings(ds, [note] if note else [])


def _with_warnings(ds: Dataset, more: list[str]) -> Dataset:
    return dataclasses.replace(ds, warnings=(*ds.warnings, *more)) if more else ds


def load_input(
    source: Any,
    role: str,
    fmt: str | None,
    read: ReadOptions,
    workers: int = 1,
    masks: bool = False,
    executor: Any = None,
    keypoints: bool = False,
) -> Dataset:
    """Read one side (see the module docstring, step 1); ``executor``: where parts may run."""
    if isinstance(source, Dataset):
        return source
    if is_path(source):
        path = os.fspath(source)
        fmt = fmt or detect_format(path)
        how = load_options(read, role, fmt, workers, masks, executor, keypoints)
        ds = load_path(path, role, fmt, how)
    else:
        from iou_eval.io.loaders.memory import in_memory_format, load_object

        kind = in_memory_format(source)
        ds = load_object(
            source, role, load_options(read, role, kind, workers, masks, keypoints=keypoints)
        )
    return finish_loaded(ds, role, read, source)


def finish_loaded(ds: Dataset, role: str, read: ReadOptions, source: Any = None) -> Dataset:
    """What every side read goes through (step 1's end): the ground truth's sizes from
    ``--images`` (or, for Open Images, an ``images/`` folder beside ``source``), and the
    scale of its numbers checked."""
    if role == "gt":
        ds = _with_sizes(ds, source, read.images)
    own = read.gt_normalized if role == "gt" else read.pred_normalized
    fractions = load_options(read, role, ds.format).normalized
    shared = read.normalized and not own
    return _with_warnings(ds, scale_doubts(ds, role, fractions, shared))


def unsized(ds: Dataset) -> bool:
    """Whether ``ds`` is a ground truth of unit images (Open Images without sizes).

    Its area ranges (small, medium, large) then compare fractions of a
    1 x 1 image with pixel bounds: the numbers that read them are undefined.
    """
    return ds.traits.unit_image and not ds.fractions


def images_beside(source: Any) -> str | None:
    """The ``images/`` folder beside a ground-truth file (or inside a ground-truth folder)."""
    if not is_path(source) or os.fspath(source) == "-":
        return None
    path = os.fspath(source)
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    candidate = os.path.join(folder, "images")
    return candidate if os.path.isdir(candidate) else None


def _with_sizes(ds: Dataset, source: Any, images: str | None) -> Dataset:
    """The ground truth with ``--images DIR``'s sizes, or (Open Images) those of ``images/`` beside it.

    An Open Images ground truth says where its sizes came from in a note; an
    ``images/`` folder beside the CSV is read as ``--images`` would read it,
    and left alone when it holds none of the ground truth's images.
    """
    unit = unsized(ds)
    if images is None and not unit:
        return ds
    from iou_eval.io.loaders.image_folder import folder_images, match_images, with_image_folder

    folder, how = images, "--images"
    if folder is None and unit:
        folder, how = images_beside(source), "the images/ folder beside the ground truth"
        if folder is not None and not (match_images(ds.images, folder_images(folder)) >= 0).any():
            note = f"{ds.source}: {folder} holds none of the ground truth's images: not used"
            return _with_warnings(ds, [note])
    if folder is None:
        return ds
    out = with_image_folder(ds, folder)
    if not unit or unsized(out):
        return out
    return _with_warnings(out, [f"{ds.source}: image sizes from {folder} ({how})"])


def prepare_pair(gt: Dataset, pred: Dataset, read: ReadOptions) -> tuple[Dataset, Dataset, bool]:
    """The predictions' class ids mapped as asked, or a shift detected (step 2).

    Returns the datasets and whether a class-shift doubt was raised.
    """
    pred = _open_images_scaled(gt, pred)
    if read.image_id_offset:
        pred = offset_image_ids(pred, read.image_id_offset)
    rule = read.class_rule()
    if read.class_offset is not None or rule is not None:
        from iou_eval.data.class_shift import remap_categories

        if not read.class_offset and rule is None:
            return gt, pred, False  # --class-offset 0: the ids as given
        mapped = remap_categories(
            pred, offset=read.class_offset or 0, class_map=rule, gt_category_ids=gt.categories.ids
        )
        return gt, mapped, False
    pred = _ultralytics_numbered(gt, pred)
    shift = class_shift_doubt(gt, pred)
    if shift is None:
        return gt, pred, False
    return gt, _with_warnings(pred, [shift]), True


def _ultralytics_numbered(gt: Dataset, pred: Dataset) -> Dataset:
    """A ``predictions.json`` beside a YOLO dataset, its class ids read as Ultralytics writes them.

    Only a results list (categories numbered, not named) is read so; the
    numbering is said in a note, or a doubt when the ids fit either of
    Ultralytics' numberings (:func:`~iou_eval.data.class_shift.ultralytics_numbering`).
    """
    gt_fmt, pred_fmt = find_format(gt.format), find_format(pred.format)
    if gt_fmt is None or pred_fmt is None or not len(pred):
        return pred
    if not (gt_fmt.ultralytics_dataset and pred_fmt.ultralytics_results):
        return pred
    from iou_eval.data.class_shift import class_counts, remap_categories, ultralytics_numbering

    ids, counts = class_counts(pred)
    names = pred.categories.names
    if any(name != str(k) for k, name in zip(ids, names, strict=True)):
        return pred  # the file names its classes: they join by name
    used = [k for k, c in zip(ids, counts.tolist(), strict=True) if c]
    read = ultralytics_numbering(pred.source, gt.categories.ids, used)
    if read is None:
        return pred
    if read.offset:
        pred = remap_categories(pred, offset=read.offset)
    return _with_warnings(pred, [Doubt(read.message) if read.both_fit else read.message])


def _open_images_scaled(gt: Dataset, pred: Dataset) -> Dataset:
    """Open Images predictions (fractions of 1 x 1 images) in the ground truth's pixels.

    Against a ground truth of unit images (Open Images without sizes) they
    stay as they are; against one with sizes they become fractions that the
    alignment scales by each image's size.  Images the ground truth lacks
    keep the unit size (their predictions are set aside anyway).
    """
    unit = gt.traits.unit_image and not gt.fractions
    if not pred.traits.unit_image or pred.fractions or unit:
        return pred
    from iou_eval.data.reconcile import image_map
    from iou_eval.io.loaders.image_folder import as_fractions

    out = as_fractions(pred)
    absent = image_map(gt.images, pred.images)[0] < 0
    if absent.any():
        w, h = out.images.width.copy(), out.images.height.copy()
        w[absent], h[absent] = 1.0, 1.0
        out = dataclasses.replace(out, images=dataclasses.replace(out.images, width=w, height=h))
    return out


def fraction_layout(read: ReadOptions, role: str, ds: Dataset) -> BoxFormat:
    """The layout ``ds``'s numbers would be read in with ``--gt-normalized`` / ``--pred-normalized``."""
    given = read.layout(role)
    if given:
        return BoxFormat(given)
    if ds.traits.fraction_layout:
        return BoxFormat(ds.traits.fraction_layout)  # the format's default for fractions
    return ds.box_format or BoxFormat.XYWH


def pair_doubts(
    alignment: Alignment, shift_found: bool = False, read: ReadOptions | None = None
) -> list[str]:
    """Doubts about the aligned pair (step 3): layouts, scales, classes that do not join.

    ``read``: the options the files were read with (which file was read as
    fractions, which layout a flag would give).
    """
    read = read or ReadOptions()
    out: list[str] = []
    out += layout_doubts(alignment.gt, "gt")
    out += layout_doubts(alignment.pred, "pred")
    for role, ds, other in (("gt", alignment.gt, None), ("pred", alignment.pred, alignment.gt)):
        if ds.traits.layout_open and not load_options(read, role, ds.format).normalized:
            out += fraction_doubts(ds, role, fraction_layout(read, role, ds), other)
    if not out:
        out += reading_doubts(alignment, shift_found)
    if not shift_found:
        out += class_coverage_doubts(alignment.gt, alignment.pred, alignment.n_categories)
        out += class_name_doubts(alignment.gt, alignment.pred, alignment.n_categories)
    return out + unpredicted_images_warnings(alignment)


def unpredicted_images_warnings(alignment: Alignment) -> list[str]:
    """A note when some ground-truth images with objects have no predictions; a doubt when
    most do (more than half) while there are predictions at all: they were made for
    part of the ground truth (a split), or joined few of its images.

    No predictions at all is no doubt of that kind: the report says so plainly.
    """
    n, m = alignment.unpredicted_images()
    if not n:
        return []
    text = f"{alignment.pred.source}: {unpredicted_text(n, m)}"
    if n * 2 <= m or not len(alignment.pred):
        return [text]
    return [
        Doubt(
            f"{text}; were they made for part of the ground truth? score that part alone "
            "(--split for a VOCdevkit folder or a data.yaml, --img-ids), or declare "
            "the rest as images without objects"
        )
    ]


def keypoint_notes(gt_source: Any, pred_source: Any, gt: Dataset, pred: Dataset) -> list[str]:
    """A note when both files carry keypoints and their boxes are scored (no ``--iou-type``).

    The ground truth: a COCO file whose annotations have ``num_keypoints``,
    or a pose data.yaml (``kpt_shape``); the predictions: a COCO results
    file with ``keypoints`` in its first megabyte.  Call it only when no
    iou type was asked for.
    """
    gt_fmt, pred_fmt = find_format(gt.format), find_format(pred.format)
    if not (is_path(gt_source) and is_path(pred_source)) or gt_fmt is None or pred_fmt is None:
        return []
    gt_path, pred_path = os.fspath(gt_source), os.fspath(pred_source)
    if not gt_fmt.has_keypoints(gt_path, "gt") or not pred_fmt.has_keypoints(pred_path, "pred"):
        return []
    return [
        f"{pred.source}: the ground truth and the predictions carry keypoints; their boxes were "
        f"scored (iou type bbox, the default): {KEYPOINT_HINT}"
    ]


def reading_doubts(alignment: Alignment, shift_found: bool = False) -> list[str]:
    """The box layouts and image ids tried on the data (:mod:`iou_eval.data.readings`).

    Keypoint results are left alone (their boxes may be the keypoints' extent);
    after a class shift the overlaps say nothing of the images.
    """
    gt, pred = alignment.gt, alignment.pred
    if gt.keypoints is not None or pred.keypoints is not None:
        return []
    r = Readings.of(gt, pred)
    if r is None:
        return []
    out = layout_reading_doubts(r, layout_fix)
    if not out and not shift_found:
        out += image_id_doubts(r, alignment.unknown_image_rows)
    return out


def layout_fix(ds: Dataset, side: str, layout: BoxFormat) -> str:
    """How ``side``'s boxes are read in ``layout``: the flag to paste, or what to convert."""
    what = {"gt": "ground-truth", "pred": "prediction"}.get(side, "ground-truth and prediction")
    fmt = layout.value
    if ds.source == STREAM_SOURCE:
        return f'if the boxes are {fmt}, create the Evaluator with box_format="{fmt}"'
    if ds.traits.option_layout:
        flag = {"gt": "--gt-box-format", "pred": "--pred-box-format"}.get(side, "--box-format")
        return f"if the {what} numbers are {fmt}, pass {flag} {fmt}"
    return f"COCO's bbox is [x, y, width, height]: if the {what} boxes are {fmt}, convert them"


def strict_error(warnings: list[str]) -> Exception | None:
    """Under ``--strict``: the error that the doubts among ``warnings`` give, or None."""
    from iou_eval.errors import InputError

    found = [w for w in warnings if isinstance(w, Doubt)]
    if not found:
        return None
    return InputError(
        None,
        f"--strict: {len(found)} doubt(s) about the input: " + "; ".join(found),
        hint="fix the input or the options named in each doubt, or drop --strict",
    )
