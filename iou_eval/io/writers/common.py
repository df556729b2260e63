"""What the writers share: numbers written exactly, ids, and what a target cannot hold.

Numbers are written with Python's shortest round-trip spelling (``repr``):
reading them back gives the same float64, bit for bit; whole numbers are
written without a fraction (``40``, not ``40.0``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from iou_eval.data.dataset import Key
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Keeps


def num(value: float) -> str:
    """``value`` spelled so that reading it back gives the same float64."""
    v = float(value)
    if math.isfinite(v) and v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    return repr(v)


def plain(value: float) -> int | float:
    """``value`` as JSON writes it exactly: an int when whole, else the float."""
    v = float(value)
    return int(v) if math.isfinite(v) and v.is_integer() and abs(v) < 2**53 else v


def integer_ids(ids: Sequence[Key]) -> list[int]:
    """The ids as integers when they all are, else ``1..n`` in the given order."""
    if all(isinstance(k, int) for k in ids):
        return [int(k) for k in ids]
    return list(range(1, len(ids) + 1))


def stem(name: str) -> str:
    """A file name without folder and extension (``images/val/a.jpg`` -> ``a``)."""
    return os.path.splitext(os.path.basename(name.replace("\\", "/")))[0]


def unique_stems(labels: Labels) -> list[str]:
    """Each image's file stem, checked unique (per-image files are named by it)."""
    from iou_eval.errors import InputError

    out = [stem(labels.image_name(i)) for i in range(len(labels.images))]
    seen: dict[str, int] = {}
    for i, s in enumerate(out):
        if not s or s in (".", ".."):
            raise InputError(labels.source, f"image {labels.images.ids[i]!r} has no usable name")
        if s in seen:
            raise InputError(
                labels.source,
                f"images {labels.image_name(seen[s])!r} and {labels.image_name(i)!r} share the "
                f"file stem {s!r}: a per-image format names its files by it",
            )
        seen[s] = i
    return out


def dropped(labels: Labels, keeps: Keeps, target: str) -> tuple[np.ndarray, list[str]]:
    """``(rows[N] bool to write, notes)``: what ``target`` cannot hold, counted.

    Crowd regions are left out (an ordinary object in their place would
    count as missed); a difficult flag is dropped and its object written as
    an ordinary one; outlines and oriented boxes the target cannot hold are
    written as their enclosing boxes.
    """
    rows = labels.rows
    keep = np.ones(len(rows), dtype=bool)
    notes: list[str] = []
    src = labels.source
    if not labels.is_prediction:
        crowd = int(rows.is_crowd.sum())
        if crowd and not keeps.crowd:
            keep &= ~rows.is_crowd
            notes.append(f"{src}: {crowd} crowd region(s) left out: {target} has no crowd flag")
        flagged = int((rows.ignore & ~rows.is_crowd).sum())
        if flagged and not keeps.difficult:
            notes.append(
                f"{src}: {flagged} difficult/ignore flag(s) dropped: {target} has none; "
                "written as ordinary objects"
            )
    if labels.polygons is not None and not keeps.polygons:
        n = sum(p is not None for p, k in zip(labels.polygons, keep, strict=True) if k)
        if n:
            notes.append(f"{src}: {n} outline(s) written as their boxes: {target} holds boxes")
    if labels.rles is not None and not keeps.rles:
        n = sum(r is not None for r, k in zip(labels.rles, keep, strict=True) if k)
        if n:
            notes.append(
                f"{src}: {n} mask(s) given as RLE written as their boxes: {target} holds no RLE"
            )
    if labels.corners is not None and not keeps.oriented:
        notes.append(
            f"{src}: {int(keep.sum())} oriented box(es) written as their enclosing "
            f"axis-aligned boxes: {target} holds no oriented boxes"
        )
    return keep, notes


def corners_of(labels: Labels) -> np.ndarray:
    """``[N, 4, 2]`` each row's corners: its oriented box, else its box's (clockwise from x1, y1)."""
    if labels.corners is not None:
        return labels.corners
    x1, y1, x2, y2 = labels.rows.xyxy.T
    return np.stack(
        [np.stack([x1, y1], 1), np.stack([x2, y1], 1), np.stack([x2, y2], 1),
         np.stack([x1, y2], 1)], axis=1,
    )  # fmt: skip


def rectangle(xyxy: np.ndarray) -> np.ndarray:
    """A box as the flat polygon ``[x1, y1, x2, y1, x2, y2, x1, y2]`` (the loaders' own outline)."""
    x1, y1, x2, y2 = (float(v) for v in xyxy)
    return np.array([x1, y1, x2, y1, x2, y2, x1, y2], dtype=np.float64)


def outline(labels: Labels, row: int) -> np.ndarray | None:
    """Row ``row``'s one outline (the largest part of a multi-part one), or None."""
    if labels.polygons is None or labels.polygons[row] is None:
        return None
    parts = labels.polygons[row] or []
    return max(parts, key=len) if parts else None


def multipart_note(labels: Labels, keep: np.ndarray, target: str) -> list[str]:
    if labels.polygons is None:
        return []
    n = sum(p is not None and len(p) > 1 for p, k in zip(labels.polygons, keep, strict=True) if k)
    if not n:
        return []
    return [
        f"{labels.source}: {n} outline(s) of several parts written as their largest part: "
        f"{target} holds one polygon per object"
    ]


def xml_text(value: str) -> str:
    """``value`` escaped for XML text and attributes."""
    from xml.sax.saxutils import escape

    return escape(value, {'"': "&quot;"})
