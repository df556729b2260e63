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
the order that goes round, and the dataset says so.  Corners of which one
lies inside the triangle of the others, or three on one line, are refused
with the file and line in a ground truth; a prediction keeps them as given
(quadrilateral-regressing detectors write such boxes, and the DOTA devkit
scores them as they are), and so does a difficult ground truth of no area
(a placeholder, which can never be matched).  Such rows are listed
(``OrientedBoxes.not_convex``); the exact overlap reads their convex hull
(:func:`convex_corners`).

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
        not_convex: ``[N]`` bool, the rows whose corners make no convex
            quadrilateral, kept as the file gave them; None: none.
    """

    corners: np.ndarray
    angle_unit: str | None = None
    not_convex: np.ndarray | None = None

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
        loose = None if self.not_convex is None else self.not_convex[rows]
        return replace(self, corners=np.take(self.corners, rows, axis=0), not_convex=loose)

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


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a[:, 0] - o[:, 0]) * (b[:, 1] - o[:, 1]) - (a[:, 1] - o[:, 1]) * (b[:, 0] - o[:, 0])


def flat(corners: np.ndarray) -> np.ndarray:
    """``[N]`` whether the four points of ``corners[N, 4, 2]`` lie on one line (a box of no area)."""
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    return np.asarray(
        (_cross(c[:, 0], c[:, 1], c[:, 2]) == 0)
        & (_cross(c[:, 0], c[:, 1], c[:, 3]) == 0)
        & (_cross(c[:, 0], c[:, 2], c[:, 3]) == 0)
        & (_cross(c[:, 1], c[:, 2], c[:, 3]) == 0)
    )


def hull_corners(corners: np.ndarray) -> np.ndarray:
    """``[N, 4, 2]`` the convex hull of four points that make no convex quadrilateral.

    One of the points lies inside (or on) the triangle of the other three:
    the hull is that triangle, given as four corners going round it, the
    inner point replaced by the corner before it.  Every row of
    ``corners[N, 4, 2]`` is taken to be such a set.
    """
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    n = len(c)
    inner = np.full(n, 3, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    for k in range(4):
        a, b, d = (c[:, j] for j in range(4) if j != k)
        turns = np.stack([_cross(a, b, c[:, k]), _cross(b, d, c[:, k]), _cross(d, a, c[:, k])])
        inside = ~((turns < 0).any(axis=0) & (turns > 0).any(axis=0))
        pick = inside & ~found
        inner[pick] = k
        found |= pick
    rows = np.arange(n)
    out = c.copy()
    out[rows, inner] = c[rows, (inner - 1) % 4]
    return out


def convex_corners(ds: Any) -> np.ndarray:
    """``[N, 4, 2]`` the oriented boxes of ``ds`` as :func:`dataset_corners` gives them, the rows
    that make no convex quadrilateral replaced by their convex hull (the exact overlap's input)."""
    c = dataset_corners(ds)
    loose = None if ds.oriented is None else ds.oriented.not_convex
    if loose is None or not loose.any():
        return c
    rows = np.flatnonzero(loose)
    out = c.copy()
    out[rows] = hull_corners(c[rows])
    return out


def _areas(c: np.ndarray, not_convex: np.ndarray) -> np.ndarray:
    """``[N]`` the area of each box, a box that is not convex measured by its convex hull."""
    if not not_convex.any():
        return polygon_area(c)
    hull = c.copy()
    hull[not_convex] = hull_corners(c[not_convex])
    return polygon_area(hull)


def enclosing_xyxy(corners: np.ndarray) -> np.ndarray:
    """``[N, 4]`` the axis-aligned box enclosing each of ``corners[N, 4, 2]``."""
    c = np.asarray(corners, dtype=np.float64)
    return np.concatenate([c.min(axis=1), c.max(axis=1)], axis=1)


def check_xywhr(
    xywhr: np.ndarray, fail: Callable[[int, str], InputError], placeholders: Any = None
) -> None:
    """Finite numbers and a positive width and height; the first bad row is cited through ``fail``.

    ``placeholders[N]`` (bool, optional): rows that may have no area (a width
    or height of 0): difficult ground truths, such as mmrotate's placeholder
    ``[0, 0, 0, 0, 0]``, which can never be matched.
    """
    b = np.asarray(xywhr, dtype=np.float64).reshape(-1, 5)
    bad = ~np.isfinite(b).all(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise fail(r, f"cx, cy, w, h, angle must be finite numbers, got {_numbers(b[r])}")
    flat = (b[:, 2] <= 0) | (b[:, 3] <= 0)
    if placeholders is not None:
        empty = (b[:, 2] >= 0) & (b[:, 3] >= 0) & ((b[:, 2] == 0) | (b[:, 3] == 0))
        flat &= ~(np.asarray(placeholders, dtype=bool) & empty)
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
    ordered, reordered, _ = ordered_corners(corners, fail)
    return ordered, reordered


def ordered_corners(
    corners: np.ndarray,
    fail: Callable[[int, str], InputError],
    loose: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`checked_corners`, where the rows ``loose[N]`` may be no convex quadrilateral.

    Returns ``(corners[N, 4, 2], reordered[N], not_convex[N])``: the rows of
    ``loose`` that no order makes convex are kept as given; any other such
    row raises through ``fail``.
    """
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    finite = np.isfinite(c).all(axis=(1, 2))
    if not finite.all():
        r = int(np.flatnonzero(~finite)[0])
        raise fail(r, f"corners must be finite numbers, got {_numbers(c[r].ravel())}")
    ordered, reordered, not_convex = convex_order(c)
    bad = not_convex if loose is None else not_convex & ~loose
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise fail(
            r,
            f"corners {_numbers(c[r].ravel())} do not make a convex quadrilateral (one "
            "lies inside the triangle of the others, or three are on one line)",
        )
    return ordered, reordered, not_convex


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
    not_convex = np.zeros(n, dtype=bool)
    if not checked:
        loose = _loose(c, columns.get("score"), columns.get("ignore"))
        c, reordered, not_convex = ordered_corners(c, fail, loose)
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
        normalized=normalized, area=_areas(c, not_convex), origin=origin, origin_file=origin_file,
        files=files, warnings=notes, **columns,
    )  # fmt: skip
    kept = not_convex if not_convex.any() else None
    return replace(ds, oriented=OrientedBoxes(c, angle_unit, kept))


def _loose(c: np.ndarray, score: Any, ignore: Any) -> np.ndarray:
    """The rows of ``c[N, 4, 2]`` that may stay no convex quadrilateral: every prediction, and the
    difficult ground truths of no area (placeholders: they can never be matched)."""
    if score is not None:
        return np.ones(len(c), dtype=bool)
    if ignore is None:
        return np.zeros(len(c), dtype=bool)
    return np.asarray(ignore, dtype=bool) & flat(c)


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
    given = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    c, reordered, not_convex = ordered_corners(given, fail, _loose(given, ds.score, ds.ignore))
    notes = list(ds.warnings)
    if reordered.any():
        f, place = ds.where(int(np.flatnonzero(reordered)[0]))
        notes.append(reorder_note(ds.source, int(reordered.sum()), f"{f}:{place}"))
    boxes = OrientedBoxes(c, angle_unit, not_convex if not_convex.any() else None)
    return replace(ds, area=_areas(c, not_convex), oriented=boxes, warnings=tuple(notes))


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


def not_convex_note(ds: Any, scored_as: str) -> str | None:
    """The note on the boxes of ``ds`` that make no convex quadrilateral (None: there are none).

    ``scored_as``: how the run scores them, said after the count.
    """
    loose = None if ds.oriented is None else ds.oriented.not_convex
    if loose is None or ds.score is None or not loose.any():
        return None
    f, place = ds.where(int(np.flatnonzero(loose)[0]))
    return (
        f"{ds.source}: {int(loose.sum())} of {len(ds)} predicted boxes are not convex "
        f"quadrilaterals (first: {f}:{place}); {scored_as}"
    )


def placeholder_note(gt: Any) -> str | None:
    """The note on difficult ground truths of no area (placeholders), None when there are none."""
    if gt.oriented is None or gt.score is not None:
        return None
    empty = gt.ignore & (gt.area == 0)
    if not empty.any():
        return None
    f, place = gt.where(int(np.flatnonzero(empty)[0]))
    return (
        f"{gt.source}: {int(empty.sum())} difficult ground truth(s) have no area (first: "
        f"{f}:{place}), as placeholders do; they can never be matched"
    )


def oriented_doubts(
    alignment: Any, protocols: Any, analyses: bool = False, hull: bool = False
) -> list[str]:
    """What the reader should know when oriented boxes meet a run that scores other shapes.

    ``protocols``: the run's protocols (their ``iou_type``); ``analyses``:
    whether TIDE, the confusion matrix or calibration were asked for;
    ``hull``: a protocol scores oriented boxes by their exact convex overlap
    (COCO-style), which reads a predicted quadrilateral that is not convex
    as its convex hull.
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
    if hull:
        note = not_convex_note(pred, "the exact overlap (COCO-style) reads their convex hull")
        out += [note] if note else []
    out += [n for n in (placeholder_note(gt),) if n]
    if analyses:
        out.append(Doubt(
            "--tide, --confusion and --calibration match axis-aligned boxes: on oriented boxes "
            "they read the boxes enclosing them, not the oriented boxes"
        ))  # fmt: skip
    return out
