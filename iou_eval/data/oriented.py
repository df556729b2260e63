"""Oriented boxes as four corners: reading them, checking them, their areas (pure numpy).

An oriented box is kept as its four corners ``[4, 2]`` (``x, y`` pixels of
the image, y down), in the order the file gave them when that order goes
round the box (either winding).  A file may also give a box as Ultralytics'
``xywhr``: centre, width, height and a rotation, whose corners are
``c + v1 + v2, c + v1 - v2, c - v1 - v2, c - v1 + v2`` with
``v1 = w/2 (cos r, sin r)`` and ``v2 = h/2 (-sin r, cos r)``, as
``ops.xywhr2xyxyxyxy`` builds them.

Four corners make a box when they are the corners of a convex
quadrilateral.  Given in a crossing order (``1 3 2 4``), they are put in
the order that goes round, and the dataset says so; corners of which one
lies inside the triangle of the others, or three on one line (a box of no
area), are refused with the file and line.

Every dataset keeps its axis-aligned ``xyxy`` too: the box enclosing the
corners, which drawings label and matchers use to skip pairs far apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.errors import InputError

ANGLE_UNITS = ("rad", "deg")

# The devkit's class lists, in its order (mAP is summed in it).
DOTA_V1_0 = (
    "plane", "baseball-diamond", "bridge", "ground-track-field", "small-vehicle",
    "large-vehicle", "ship", "tennis-court", "basketball-court", "storage-tank",
    "soccer-ball-field", "roundabout", "harbor", "swimming-pool", "helicopter",
)  # fmt: skip
DOTA_V1_5 = (*DOTA_V1_0, "container-crane")
DOTA_V2_0 = (*DOTA_V1_5, "airport", "helipad")
DOTA_CLASS_LISTS = {"DOTA-v1.0": DOTA_V1_0, "DOTA-v1.5": DOTA_V1_5, "DOTA-v2.0": DOTA_V2_0}


# The three ways of going round four points (up to the start and the winding).
_ORDERS = np.array([[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 1, 3]], dtype=np.int64)


@dataclass(frozen=True)
class OrientedBoxes:
    """The oriented boxes of a dataset's ``N`` rows.

    Attributes:
        corners: ``[N, 4, 2]`` float64, pixels; fractions of the image size
            while the dataset's boxes are (``Dataset.fractions``).
        angle_unit: ``"rad"`` or ``"deg"`` when the file gave ``cx, cy, w, h,
            angle``; None when it gave corners.
    """

    corners: np.ndarray
    angle_unit: str | None = None

    def __post_init__(self) -> None:
        c = self.corners
        if (
            not isinstance(c, np.ndarray)
            or c.dtype != np.float64
            or c.ndim != 3
            or c.shape[1:] != (4, 2)
        ):
            found = f"{c.dtype}{c.shape}" if isinstance(c, np.ndarray) else type(c).__name__
            raise ValueError(f"OrientedBoxes.corners: expected float64(N, 4, 2), found {found}")

    def __len__(self) -> int:
        return len(self.corners)

    def take(self, rows: np.ndarray) -> OrientedBoxes:
        return replace(self, corners=np.take(self.corners, rows, axis=0))

    def scaled(self, image_wh: np.ndarray) -> OrientedBoxes:
        """Fractions of the image size -> pixels; ``image_wh[N, 2]`` each row's image size."""
        return replace(self, corners=self.corners * image_wh[:, None, :])


def corners_from_xywhr(xywhr: np.ndarray, unit: str = "rad") -> np.ndarray:
    """``[N, 5]`` centre x, centre y, width, height, rotation -> corners ``[N, 4, 2]``.

    ``unit``: ``rad`` (Ultralytics' ``xywhr``) or ``deg``.
    """
    b = np.asarray(xywhr, dtype=np.float64).reshape(-1, 5)
    angle = np.deg2rad(b[:, 4]) if unit == "deg" else b[:, 4]
    cos, sin = np.cos(angle), np.sin(angle)
    half_w, half_h = b[:, 2] / 2, b[:, 3] / 2
    v1 = np.stack([half_w * cos, half_w * sin], axis=1)
    v2 = np.stack([-half_h * sin, half_h * cos], axis=1)
    ctr = b[:, :2]
    return np.stack([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2], axis=1)


def corners_of_xyxy(xyxy: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes ``[N, 4]`` as the corners ``[N, 4, 2]`` of rectangles."""
    b = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    x1, y1, x2, y2 = b.T
    return np.stack(
        [
            np.stack([x1, y1], 1),
            np.stack([x2, y1], 1),
            np.stack([x2, y2], 1),
            np.stack([x1, y2], 1),
        ],
        axis=1,
    )


def _turns(c: np.ndarray) -> np.ndarray:
    """``[N, 4]`` the cross product of each pair of consecutive edges going round ``c[N, 4, 2]``."""
    edge = np.roll(c, -1, axis=1) - c
    nxt = np.roll(edge, -1, axis=1)
    return edge[..., 0] * nxt[..., 1] - edge[..., 1] * nxt[..., 0]


def _convex(c: np.ndarray) -> np.ndarray:
    """``[N]`` whether ``c[N, 4, 2]`` goes round a convex quadrilateral (either winding)."""
    t = _turns(c)
    return np.asarray((t > 0).all(axis=1) | (t < 0).all(axis=1))


def convex_order(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corners in an order that goes round the box.

    Args:
        corners: ``[N, 4, 2]`` as given.

    Returns:
        ``(corners[N, 4, 2], reordered[N], bad[N])``: the given order where it
        goes round the box, else the one of the other two orders that does;
        ``reordered`` where the given order crossed itself; ``bad`` where no
        order does (not a convex quadrilateral): those rows are left as given.
    """
    c = np.asarray(corners, dtype=np.float64)
    out = c.copy()
    done = _convex(c)
    reordered = np.zeros(len(c), dtype=bool)
    for order in _ORDERS[1:]:
        left = np.flatnonzero(~done)
        if not len(left):
            break
        trial = c[left][:, order]
        ok = _convex(trial)
        out[left[ok]] = trial[ok]
        reordered[left[ok]] = True
        done[left[ok]] = True
    return out, reordered, ~done


def polygon_area(corners: np.ndarray) -> np.ndarray:
    """``[N]`` the area of each convex quadrilateral ``corners[N, 4, 2]`` (shoelace, either winding).

    Measured from the first corner, so that large coordinates (a corner at
    x = 20000) cost no precision.
    """
    c = np.asarray(corners, dtype=np.float64)
    d = c[:, 1:] - c[:, :1]
    twice = (d[:, 0, 0] * d[:, 1, 1] - d[:, 0, 1] * d[:, 1, 0]) + (
        d[:, 1, 0] * d[:, 2, 1] - d[:, 1, 1] * d[:, 2, 0]
    )
    return np.abs(twice) / 2.0


def enclosing_xyxy(corners: np.ndarray) -> np.ndarray:
    """``[N, 4]`` the axis-aligned box enclosing each of ``corners[N, 4, 2]``."""
    c = np.asarray(corners, dtype=np.float64)
    return np.concatenate([c.min(axis=1), c.max(axis=1)], axis=1)


def check_xywhr(xywhr: np.ndarray, fail: Callable[[int, str], InputError]) -> None:
    """Finite numbers and a positive width and height; the first bad row is cited through ``fail``."""
    b = np.asarray(xywhr, dtype=np.float64).reshape(-1, 5)
    bad = ~np.isfinite(b).all(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise fail(r, f"cx, cy, w, h, angle must be finite numbers, got {_numbers(b[r])}")
    flat = (b[:, 2] <= 0) | (b[:, 3] <= 0)
    if flat.any():
        r = int(np.flatnonzero(flat)[0])
        raise fail(
            r,
            f"an oriented box needs a positive width and height, got w {b[r, 2]:g} and "
            f"h {b[r, 3]:g}",
        )


def checked_corners(
    corners: np.ndarray, fail: Callable[[int, str], InputError]
) -> tuple[np.ndarray, np.ndarray]:
    """Corners ``[N, 4, 2]`` put in an order that goes round each box, and which rows were reordered.

    Raises, through ``fail(row, message)``, for the first row that is not
    four finite corners of a convex quadrilateral.
    """
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    finite = np.isfinite(c).all(axis=(1, 2))
    if not finite.all():
        r = int(np.flatnonzero(~finite)[0])
        raise fail(r, f"corners must be finite numbers, got {_numbers(c[r].ravel())}")
    ordered, reordered, bad = convex_order(c)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise fail(
            r,
            f"corners {_numbers(c[r].ravel())} do not make a convex quadrilateral (one "
            "lies inside the triangle of the others, or three are on one line)",
        )
    return ordered, reordered


def _numbers(values: np.ndarray) -> str:
    return " ".join(f"{v:g}" for v in np.asarray(values).tolist())


def reorder_note(source: str, count: int, where: str) -> str:
    """The doubt said when ``count`` boxes gave their corners in a crossing order."""
    from iou_eval.data.doubts import Doubt

    return Doubt(
        f"{source}: {count} box(es) give their corners in an order that crosses itself (first: "
        f"{where}); read as the convex quadrilateral of those corners. The DOTA devkit would "
        "intersect the crossing outline as given"
    )


def assemble_oriented(
    *,
    corners: np.ndarray,
    images: Any,
    image_idx: np.ndarray,
    normalized: bool = False,
    angle_unit: str | None = None,
    checked: bool = False,
    **columns: Any,
) -> Any:
    """A :class:`~iou_eval.data.dataset.Dataset` of oriented boxes.

    Args:
        corners: ``[N, 4, 2]`` (pixels, or fractions of the image size with
            ``normalized``); checked and ordered here unless ``checked``.
        images, image_idx: as :func:`~iou_eval.data.dataset.assemble`.
        angle_unit: the unit the file's angles were read in (None: corners given).
        columns: the other keywords of :func:`~iou_eval.data.dataset.assemble`
            (``source``, ``fmt``, ``categories``, ``category_idx``, ``score``,
            ``ignore``, ``origin``...; not ``boxes`` nor ``area``).

    The box of a row is the one enclosing its corners; its area (the area
    ranges') the quadrilateral's.  Fractions are scaled to pixels when the
    images' sizes are known, else kept for the alignment to scale.
    """
    from iou_eval.data.dataset import _Locator, _origins, assemble

    n = len(image_idx)
    c = np.asarray(corners, dtype=np.float64).reshape(n, 4, 2)
    origin, origin_file = _origins(n, columns.pop("origin", None), columns.pop("origin_file", None))
    files = tuple(columns.pop("files", ())) or (columns["source"],)
    label = columns.get("origin_label", "line")
    fail = _Locator(files, origin, origin_file, label)
    notes = list(columns.pop("warnings", ()))
    if not checked:
        c, reordered = checked_corners(c, fail)
        if reordered.any():
            f, place = _place(files, origin, origin_file, label, int(np.flatnonzero(reordered)[0]))
            notes.append(reorder_note(columns["source"], int(reordered.sum()), f"{f}:{place}"))
    if normalized and len(c):
        w = np.asarray(images.width)[image_idx]
        h = np.asarray(images.height)[image_idx]
        if (np.isfinite(w) & np.isfinite(h)).all():
            c = c * np.stack([w, h], axis=1)[:, None, :]
            normalized = False
    ds = assemble(
        images=images, image_idx=image_idx, boxes=enclosing_xyxy(c), box_format=BoxFormat.XYXY,
        normalized=normalized, area=polygon_area(c), origin=origin, origin_file=origin_file,
        files=files, warnings=notes, **columns,
    )  # fmt: skip
    return replace(ds, oriented=OrientedBoxes(c, angle_unit))


def _place(
    files: tuple[str, ...], origin: np.ndarray, origin_file: np.ndarray, label: str, row: int
) -> tuple[str, str]:
    o = int(origin[row])
    return files[int(origin_file[row])], (str(o) if label == "line" else f"{label}[{o}]")


def with_corners(ds: Any, corners: np.ndarray, angle_unit: str | None = None) -> Any:
    """``ds`` (whose boxes enclose ``corners``) with its oriented boxes attached.

    ``corners[N, 4, 2]`` in the unit of ``ds``'s boxes (pixels, or fractions
    while ``ds.fractions``); checked and ordered here.  The area becomes the
    quadrilateral's.
    """
    fail = _locator_of(ds)
    c, reordered = checked_corners(corners, fail)
    notes = list(ds.warnings)
    if reordered.any():
        f, place = ds.where(int(np.flatnonzero(reordered)[0]))
        notes.append(reorder_note(ds.source, int(reordered.sum()), f"{f}:{place}"))
    return replace(
        ds, area=polygon_area(c), oriented=OrientedBoxes(c, angle_unit), warnings=tuple(notes)
    )


def _locator_of(ds: Any) -> Callable[[int, str], InputError]:
    from iou_eval.data.dataset import _Locator

    return _Locator(ds.files or (ds.source,), ds.origin, ds.origin_file, ds.origin_label)


def dataset_corners(ds: Any) -> np.ndarray:
    """``[N, 4, 2]`` the oriented boxes of ``ds``, or its axis-aligned boxes as rectangles."""
    if ds.oriented is not None:
        return ds.oriented.corners
    return corners_of_xyxy(ds.xyxy)


def describe(ds: Any) -> str | None:
    """How a dataset's oriented boxes were read, for reports (None: axis-aligned boxes)."""
    if ds.oriented is None:
        return None
    unit = ds.oriented.angle_unit
    if unit is None:
        return "oriented boxes (4 corners)"
    word = "degrees" if unit == "deg" else "radians"
    return f"oriented boxes (cx, cy, w, h, angle in {word})"


def oriented_doubts(alignment: Any, protocols: Any, analyses: bool = False) -> list[str]:
    """What the reader should know when oriented boxes meet a run that scores other shapes.

    ``protocols``: the run's protocols (their ``iou_type``); ``analyses``:
    whether TIDE, the confusion matrix or calibration were asked for.
    """
    from iou_eval.data.doubts import Doubt

    gt, pred = alignment.gt, alignment.pred
    obb = any(p.iou_type == "obb" for p in protocols)
    out: list[str] = []
    if not obb:
        for ds in (gt, pred):
            if ds.oriented is not None and len(ds):
                out.append(
                    f"{ds.source}: oriented boxes scored as the axis-aligned boxes enclosing them "
                    "(--iou-type bbox); --iou-type obb scores the oriented boxes"
                )
        return out
    if gt.oriented is not None and pred.oriented is None and len(pred):
        out.append(Doubt(
            f"{pred.source}: the predictions are axis-aligned boxes and the ground truth's are "
            "oriented; they are scored as rectangles at angle 0 (an angle column or the "
            "predictions' corners may be missing)"
        ))  # fmt: skip
    elif pred.oriented is not None and gt.oriented is None and len(gt):
        out.append(Doubt(
            f"{gt.source}: the ground truth holds axis-aligned boxes and the predictions are "
            "oriented; the ground truth is scored as rectangles at angle 0"
        ))  # fmt: skip
    elif gt.oriented is None and pred.oriented is None:
        out.append(
            "--iou-type obb: neither file holds oriented boxes; their boxes are scored as "
            "rectangles at angle 0 (the IoU of --iou-type bbox)"
        )
    if analyses:
        out.append(Doubt(
            "--tide, --confusion and --calibration match axis-aligned boxes: on oriented boxes "
            "they read the boxes enclosing them, not the oriented boxes"
        ))  # fmt: skip
    return out
