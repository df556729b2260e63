"""``--images DIR``: image sizes from the image files, and images without objects declared.

Some ground truths give no image sizes (Open Images, per-image text files,
a CSV without size columns): the area ranges (small, medium, large) then
say nothing, and normalized boxes cannot be scaled.  The images themselves
know their size: :func:`with_image_folder` reads it from each file's header
(:mod:`.image_header`: no pixels decoded, EXIF orientation applied).

Rules:

- The folder is searched recursively for image files (Ultralytics' image
  extensions).  A ground-truth image is found by its file name, else by
  the file name's stem, else by its id as a stem (``"000005"`` finds
  ``000005.jpg``); a stem shared by two files is ambiguous and finds none.
- A size the ground truth gives is kept (a disagreeing header is noted);
  an unknown size is taken from the header.
- Images of the folder that the ground truth does not list are added as
  images without objects (id: the file's stem), so that false positives
  on them count; a note says how many.
- Open Images boxes are fractions of an image whose size the file does not
  give (read as a 1 x 1 image): with the folder they are scaled to pixels,
  and an image not found keeps the unit size with a doubt (its area-range
  numbers are not pixels).
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Dataset, ImageTable
from iou_eval.data.doubts import Doubt
from iou_eval.errors import InputError
from iou_eval.io.loaders.image_header import image_size
from iou_eval.io.loaders.yolo import IMG_FORMATS


def folder_images(folder: str) -> list[str]:
    """The image files under ``folder`` (recursive, hidden names skipped), sorted by path."""
    if not os.path.isdir(folder):
        raise InputError(folder, "--images: expected a folder of images")
    found = []
    for root, dirs, files in os.walk(folder, onerror=_unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in files:
            if not f.startswith(".") and f.rpartition(".")[-1].lower() in IMG_FORMATS:
                found.append(os.path.join(root, f))
    return sorted(found)


def _unlisted(exc: OSError) -> None:
    """``os.walk`` skips a folder it cannot list; ``--images`` says so instead."""
    from iou_eval.io.source import list_folder

    list_folder(exc.filename or "")  # raises the located error (or lists it after all)


def _stem(name: str) -> str:
    return os.path.splitext(os.path.basename(name))[0]


def _index(files: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Positions of ``files`` by base name and by stem; -1 where a key is shared."""
    by_name: dict[str, int] = {}
    by_stem: dict[str, int] = {}
    for i, f in enumerate(files):
        for table, key in ((by_name, os.path.basename(f)), (by_stem, _stem(f))):
            table[key] = i if key not in table else -1
    return by_name, by_stem


def match_images(images: ImageTable, files: list[str]) -> np.ndarray:
    """``[I]`` the position in ``files`` of each image (-1: not found); rules in the module doc."""
    by_name, by_stem = _index(files)
    out = np.full(len(images), -1, dtype=np.int64)
    for i, (key, name) in enumerate(zip(images.ids, images.file_names, strict=True)):
        for table, k in ((by_name, os.path.basename(name or "")), (by_stem, _stem(name or "")),
                         (by_stem, str(key)), (by_name, str(key)), (by_stem, _stem(str(key)))):  # fmt: skip
            j = table.get(k, -1) if k else -1
            if j >= 0:
                out[i] = j
                break
    return out


def as_fractions(ds: Dataset) -> Dataset:
    """A dataset of unit images (Open Images) as fractions waiting for sizes (``Dataset.fractions``)."""
    if not ds.traits.unit_image or ds.fractions:
        return ds
    n = len(ds.images)
    images = ImageTable(ds.images.ids, ds.images.file_names, np.full(n, np.nan), np.full(n, np.nan))
    return replace(ds, images=images, fraction_boxes=ds.xyxy.copy(), fraction_format=BoxFormat.XYXY)


def with_image_folder(gt: Dataset, folder: str) -> Dataset:
    """``gt`` with sizes from the headers of ``folder``'s images and its other images added.

    Returns the dataset with notes (and a doubt for unit images not found)
    appended to its warnings.
    """
    files = folder_images(folder)
    unit = gt.traits.unit_image and not gt.fractions
    at = match_images(gt.images, files)
    if unit and not (at >= 0).any():
        # No size found: the boxes stay fractions of unit images, whose
        # area-range numbers are left undefined (api).
        return replace(gt, warnings=(*gt.warnings, Doubt(
            f"{gt.source}: none of its {len(gt.images)} images are in {folder}: no image sizes, "
            "the area ranges stay undefined"
        )))  # fmt: skip
    ds = as_fractions(gt) if unit else gt
    width, height = ds.images.width.copy(), ds.images.height.copy()
    unknown = ~(np.isfinite(width) & np.isfinite(height))
    notes: list[str] = []
    differ = 0
    for i in np.flatnonzero(at >= 0).tolist():
        w, h = image_size(files[at[i]])
        if unknown[i]:
            width[i], height[i] = w, h
        elif (width[i], height[i]) != (w, h):
            differ += 1
    if differ:
        notes.append(
            f"{gt.source}: {differ} image size(s) differ from the headers of the images in "
            f"{folder}; the ground truth's sizes are used"
        )
    missing = np.flatnonzero(~(np.isfinite(width) & np.isfinite(height)))
    if unit and len(missing):
        notes.append(Doubt(
            f"{gt.source}: {len(missing)} image(s) are not in {folder} (e.g. "
            f"{ds.images.ids[int(missing[0])]!r}); their boxes stay fractions of a 1 x 1 image, "
            "so their area-range numbers are not in pixels"
        ))  # fmt: skip
        width[missing], height[missing] = 1.0, 1.0
    images = ImageTable(ds.images.ids, ds.images.file_names, width, height)
    images, added = _add_unlisted(images, files, at, folder)
    kept = ds.warnings
    if unit:
        from iou_eval.io.loaders.openimages import UNIT_NOTE

        kept = tuple(w for w in kept if UNIT_NOTE not in w)  # the sizes are known now
    if added:
        notes.append(
            f"{gt.source}: {added} image(s) in {folder} are not in the ground truth: "
            "declared as images without objects"
        )
    return replace(ds, images=images, warnings=(*kept, *notes))


def _add_unlisted(
    images: ImageTable, files: list[str], at: np.ndarray, folder: str
) -> tuple[ImageTable, int]:
    """``images`` with the folder's unmatched files appended (id = stem), and how many."""
    used = np.zeros(len(files), dtype=bool)
    used[at[at >= 0]] = True
    known_ids = {str(k) for k in images.ids}
    extra = [f for i, f in enumerate(files) if not used[i] and _stem(f) not in known_ids]
    stems: dict[str, str] = {}
    for f in extra:
        if _stem(f) in stems:
            raise InputError(
                f, f"--images: the image id {_stem(f)!r} (the file stem) is also {stems[_stem(f)]}"
            )
        stems[_stem(f)] = f
    if not extra:
        return images, 0
    sizes = np.array([image_size(f) for f in extra], dtype=np.float64).reshape(-1, 2)
    return (
        ImageTable(
            (*images.ids, *stems),
            (*images.file_names, *(os.path.relpath(f, folder) for f in extra)),
            np.concatenate([images.width, sizes[:, 0]]),
            np.concatenate([images.height, sizes[:, 1]]),
        ),
        len(extra),
    )
