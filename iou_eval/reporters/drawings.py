"""Drawings of a run's images: find each image file, draw its boxes, write a copy.

The boxes and their outcome come from
:func:`iou_eval.reporters.detections.image_detections` (the matches the numbers come
from); :func:`~iou_eval.reporters.draw.draw_image` draws them.  Images are
looked up in one folder by the ground truth's file name, else by file stem
(or the image id when the ground truth names no file); the folder is only
ever read.  Pillow is imported by the drawing module, on first use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.errors import InputError, UsageError
from iou_eval.reporters.draw import draw_image

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.reporters.detections import ImageDetections
    from iou_eval.results import EvaluationResult

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
# Formats a browser shows; a page's copy of any other image is a PNG.
WEB_SUFFIXES = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG"}


class ImageFolder:
    """The image files of one folder, looked up by file name, else by stem.

    Only the folder's own files are indexed for stems; a file name with
    folders (``val/0001.jpg``) is found below the folder too, never outside it.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.root = Path(folder)
        if not self.root.is_dir():
            raise InputError(str(folder), "--images: not a folder of images")
        self.real_root = self.root.resolve()
        self.by_stem: dict[str, Path] = {}
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            path = Path(entry.path)
            if path.suffix.lower() in IMAGE_SUFFIXES and entry.is_file():
                # Of two files with one stem (a.jpg, a.png), the first by name.
                self.by_stem.setdefault(path.stem, path)

    def _inside(self, path: Path) -> bool:
        try:
            real = path.resolve()
        except OSError:
            return False
        return real.is_file() and (real == self.real_root or self.real_root in real.parents)

    def find(self, file_name: str | None, image_id: Any) -> Path | None:
        """The file of an image: ``folder/file_name``, ``folder/basename``, else by stem."""
        names = []
        if file_name:
            text = str(file_name).replace("\\", "/")
            if not os.path.isabs(text):
                names.append(text)
            names.append(os.path.basename(text))
        for name in names:
            candidate = self.root / name
            # A file name from the data never leads out of the folder (``../``).
            if candidate.suffix.lower() in IMAGE_SUFFIXES and self._inside(candidate):
                return candidate
        stem = Path(os.path.basename(str(file_name).replace("\\", "/"))).stem if file_name else ""
        return self.by_stem.get(stem) or self.by_stem.get(str(image_id))

    def relative(self, path: Path) -> Path:
        """``path`` relative to the folder (where its drawing goes in the output folder)."""
        return path.relative_to(self.root)


def gt_tags(det: ImageDetections) -> list[str]:
    """Ground-truth labels: the class, and ``FN`` (missed), ``crowd`` or ``ignored``."""
    out = []
    for name, crowd, counted, matched in zip(det.gt_labels, det.gt_crowd.tolist(),
                                             det.gt_counted.tolist(), det.gt_matched.tolist(),
                                             strict=True):  # fmt: skip
        if crowd:
            out.append(f"{name} crowd")
        elif not counted:
            out.append(f"{name} ignored")
        else:
            out.append(name if matched else f"{name} FN")
    return out


def pred_tags(det: ImageDetections) -> tuple[list[str], np.ndarray]:
    """Prediction class labels (``(on crowd)``, ``(on difficult)`` when ignored) and the
    IoU to print (NaN: none)."""
    labels = []
    for name, ignored, g in zip(det.pred_labels, det.pred_ignored.tolist(),
                                det.pred_gt.tolist(), strict=True):  # fmt: skip
        if ignored:
            crowd = g >= 0 and bool(det.gt_crowd[g])
            name = f"{name} (on {'crowd' if crowd else 'difficult'})"
        labels.append(name)
    # An ignored prediction's overlap is an IoF with a crowd region: not printed as an IoU.
    iou = np.where(det.pred_ignored, np.nan, det.pred_iou)
    return labels, iou


def mask_outlines(det: ImageDetections) -> dict[str, Sequence[Any]] | None:
    """``{"gt": [G], "pred": [D]}`` outlines of the image's masks (None without masks)."""
    if det.gt_masks is None and det.pred_masks is None:
        return None
    from iou_eval.reporters.outlines import rle_outlines

    def of(column: Any, n: int) -> list:
        if column is None:
            return [None] * n
        return [rle_outlines(r, int(h), int(w)) for r, h, w in
                zip(column.rle, column.height.tolist(), column.width.tolist(), strict=True)]  # fmt: skip

    return {"gt": of(det.gt_masks, len(det.gt_labels)),
            "pred": of(det.pred_masks, len(det.pred_labels))}  # fmt: skip


def draw_detections(det: ImageDetections, src: str | os.PathLike, dst: str | os.PathLike,
                    max_side: int | None = None, fmt: str | None = None) -> Path:  # fmt: skip
    """Draw one image's ground truths and predictions (and mask outlines) on a copy of ``src``."""
    labels, iou = pred_tags(det)
    return draw_image(
        src, dst, det.gt_xyxy, gt_tags(det), det.pred_xyxy, labels, det.pred_scores, iou,
        det.pred_is_fp, outlines=mask_outlines(det), max_side=max_side, fmt=fmt,
        corners=None if det.gt_corners is None else {"gt": det.gt_corners, "pred": det.pred_corners},
    )  # fmt: skip


@dataclass
class Drawn:
    """What :func:`draw_run` did.

    Attributes:
        written: ``(image, drawing)`` per image drawn, in the order asked.
        missing: the images whose file is not in the folder.
    """

    written: list[tuple[ImageDetections, Path]] = field(default_factory=list)
    missing: list[ImageDetections] = field(default_factory=list)


def draw_run(result: EvaluationResult, images_dir: str | os.PathLike,
             outdir: str | os.PathLike, positions: Sequence[int] | np.ndarray | None = None, *,
             score_thr: float | None = None, for_page: int | None = None) -> Drawn:  # fmt: skip
    """Draw the images ``positions`` (rows of the per-image table; None: all) of a run.

    Each drawing goes to ``outdir`` under the image's own name (and
    sub-folder), in its format and size, written whole.  ``for_page``:
    instead, copies at most this many pixels on a side, named by their
    place in the order, JPEG or PNG (for a page to embed).
    """
    from iou_eval.reporters.detections import image_detections

    folder = check_folders(images_dir, outdir)
    out = Path(outdir)
    drawn = Drawn()
    for rank, det in enumerate(image_detections(result, positions, score_thr=score_thr)):
        src = folder.find(det.file_name, det.image_id)
        if src is None:
            drawn.missing.append(det)
            continue
        if for_page is None:
            dst, fmt = out / folder.relative(src), None
        else:
            fmt = WEB_SUFFIXES.get(src.suffix.lower(), "PNG")
            dst = out / f"{rank:04d}.{'jpg' if fmt == 'JPEG' else 'png'}"
        drawn.written.append((det, draw_detections(det, src, dst, for_page, fmt)))
    return drawn


def check_folders(images_dir: str | os.PathLike, outdir: str | os.PathLike) -> ImageFolder:
    """The images folder, once Pillow, it and the output folder are known to do.

    Raises UsageError when Pillow is missing or the output folder is the
    images folder (the drawings would replace the images), InputError when
    the images folder is not one.
    """
    from iou_eval.reporters.draw import require_pillow

    require_pillow()
    folder = ImageFolder(images_dir)
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {outdir}: not a folder", hint="the drawings go into a folder")
    if out.resolve() == folder.real_root:
        raise UsageError(
            f"-o {outdir}: is the images folder; the drawings would replace the images",
            hint="choose another folder with -o",
        )
    return folder


def missing_note(missing: Sequence[ImageDetections], folder: str | os.PathLike) -> str:
    """``3 image(s) not found in DIR (by file name or stem): a.jpg, b.jpg, …``."""
    names = [str(d.file_name or d.image_id) for d in missing]
    shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    return f"{len(names)} image(s) not found in {folder} (by file name or stem): {shown}"
