"""One conversion: an input read as for an evaluation, written in a target format.

:func:`convert` reads ``source`` (:func:`~iou_eval.io.writers.labels.read_labels`),
refuses a doubtful input under ``strict``, asks the target's writer for its
files and notes, and writes them whole or not at all (:mod:`.staging`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from iou_eval.io.writers.labels import Labels, guess_role, read_labels
from iou_eval.io.writers.registry import Context, Target, get_target
from iou_eval.io.writers.staging import check_target, write_files
from iou_eval.options import ReadOptions


@dataclass(frozen=True)
class Converted:
    """What a conversion did: the role read, rows written, images read, and its notes."""

    role: str
    source_format: str
    target: str
    rows: int
    images: int
    notes: tuple[str, ...]


def convert(
    source: str,
    output: str,
    to: str,
    read: ReadOptions | None = None,
    *,
    role: str | None = None,
    gt_ref: str | None = None,
    overwrite: bool = False,
) -> Converted:
    """Convert ``source`` to format ``to`` at ``output``.

    Args:
        role: ``"gt"`` or ``"pred"``; None: predictions when ``gt_ref`` is
            given or the file reads as predictions (scores present).
        gt_ref: the ground truth the predictions belong to: their images and
            classes are named as its conversion names them.
        overwrite: replace an existing ``output``.

    Raises:
        InputError: the input cannot be read, or (``read.strict``) it raises a doubt.
        UsageError: ``output`` exists (without ``overwrite``) or is an input.
    """
    read = read or ReadOptions()
    target = get_target(to)
    check_target(output, target.folder, overwrite, [source, gt_ref, read.images])
    if role is None:
        role = "pred" if gt_ref is not None else guess_role(source, read.gt_format, read)
    labels = read_labels(source, role, read, gt_ref)
    if read.strict:
        from iou_eval.io.inputs import strict_error

        error = strict_error(list(labels.notes))
        if error is not None:
            raise error
    dest = os.path.abspath(output)
    context = Context(
        dest=dest, split=read.split or "val", image_files=_image_files(labels, read, target),
        class_list=read.names is not None,
    )  # fmt: skip
    written = target.load()(labels, context)
    write_files(output, written.files, target.folder)
    return Converted(
        role=role, source_format=labels.fmt, target=to,
        rows=written.rows if written.rows >= 0 else len(labels.rows),
        images=len(labels.images), notes=(*labels.notes, *written.notes, *_unjoined(labels, to)),
    )  # fmt: skip


def _unjoined(labels: Labels, to: str) -> list[str]:
    """A note when predictions named by file and class name were numbered on their own."""
    if not labels.is_prediction or labels.joined or not get_target(to).numbered:
        return []
    named = [
        what for what, ids in (("images", labels.images.ids), ("classes", labels.categories.ids))
        if not all(isinstance(k, int) for k in ids)
    ]  # fmt: skip
    if not named:
        return []
    return [
        f"{labels.source}: predictions read without their ground truth: their "
        f"{' and '.join(named)} were numbered in their own order, which need not be the "
        "ground truth's; pass --gt REF to number them as its conversion does"
    ]


def _image_files(
    labels: Labels, read: ReadOptions, target: Target
) -> tuple[str | None, ...] | None:
    """Each image's file, for targets that place the images beside their labels."""
    if not target.wants_images or labels.is_prediction:
        return None
    from iou_eval.io.inputs import images_beside
    from iou_eval.io.loaders.image_folder import folder_images, match_images

    source = labels.source
    folder = read.images or images_beside(source)
    if folder is None and os.path.isfile(source):
        folder = images_beside(os.path.dirname(os.path.abspath(source)))
    if folder is None:
        return None
    files = folder_images(folder)
    at = match_images(labels.images, files)
    return tuple(files[j] if j >= 0 else None for j in at.tolist())
