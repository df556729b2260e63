"""Evaluation protocols as frozen parameter sets.

``coco`` follows pycocotools' ``COCOeval`` (bbox, segm, or oriented boxes);
``lvis`` lvis-api's ``LVISEval``; ``voc07`` and ``voc12`` follow the Pascal
VOC devkit's ``voc_eval``; ``openimages`` the TensorFlow Object Detection
API's ``OpenImagesDetectionChallengeEvaluator``; ``dota`` and
``dota-allpoint`` the DOTA devkit's task-1 evaluation of oriented boxes.
``auto`` (the default) is ``lvis`` for an LVIS ground truth and ``coco``
otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np

from iou_eval.errors import UsageError
from iou_eval.geometry.boxes import PixelConvention
from iou_eval.options import AreaRange
from iou_eval.protocols.accumulate import (
    COCO_STATS,
    KEYPOINT_STATS,
    Stats,
    stat_max_det,
    stats_for_ranges,
)

# pycocotools builds its grids with linspace; the same expressions give the
# same floats, so a threshold such as 0.75 compares equal in both tools.
COCO_IOU_THRESHOLDS: tuple[float, ...] = tuple(
    float(x) for x in np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
)
COCO_RECALL_THRESHOLDS: tuple[float, ...] = tuple(
    float(x) for x in np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
)
VOC07_RECALL_THRESHOLDS: tuple[float, ...] = tuple(float(x) for x in np.arange(0.0, 1.1, 0.1))


class ProtocolName(str, Enum):
    COCO = "coco"
    LVIS = "lvis"
    VOC07 = "voc07"
    VOC12 = "voc12"
    OPENIMAGES = "openimages"
    DOTA = "dota"
    DOTA_ALLPOINT = "dota-allpoint"
    LRP = "lrp"


# The devkit-style protocols: one IoU threshold, an AP per class and their mean.
VOC_NAMES = (ProtocolName.VOC07.value, ProtocolName.VOC12.value)
DOTA_NAMES = (ProtocolName.DOTA.value, ProtocolName.DOTA_ALLPOINT.value)


# The protocol the ground truth decides: lvis for an LVIS file, else coco.
AUTO = "auto"

# lvis-api's LVISResults keeps this many results per image (its max_dets).
LVIS_MAX_DETS = 300

# lvis-api's summary: key -> (AP?, IoU, area, frequency group), in its order.
LVIS_STATS: dict[str, tuple[bool, float | None, str, str | None]] = {
    "AP": (True, None, "all", None),
    "AP50": (True, 0.5, "all", None),
    "AP75": (True, 0.75, "all", None),
    "APs": (True, None, "small", None),
    "APm": (True, None, "medium", None),
    "APl": (True, None, "large", None),
    "APr": (True, None, "all", "r"),
    "APc": (True, None, "all", "c"),
    "APf": (True, None, "all", "f"),
    f"AR{LVIS_MAX_DETS}": (False, None, "all", None),
    "ARs": (False, None, "small", None),
    "ARm": (False, None, "medium", None),
    "ARl": (False, None, "large", None),
}


COCO_AREA_RANGES: tuple[AreaRange, ...] = (
    AreaRange("all", 0.0**2, 1e5**2),
    AreaRange("small", 0.0**2, 32.0**2),
    AreaRange("medium", 32.0**2, 96.0**2),
    AreaRange("large", 96.0**2, 1e5**2),
)
# pycocotools' keypoint Params: no "small" range (and maxDets [20]).
KEYPOINT_AREA_RANGES: tuple[AreaRange, ...] = (
    COCO_AREA_RANGES[0],
    COCO_AREA_RANGES[2],
    COCO_AREA_RANGES[3],
)
KEYPOINT_MAX_DETS: tuple[int, ...] = (20,)


def protocol_label(name: str, iou_type: str) -> str:
    """How reports, gates and baselines name a protocol run on an iou type.

    The protocol's name for boxes, and for the DOTA protocols (which score
    oriented boxes only); else ``<name>-<iou type>`` (``coco-segm``, ``coco-obb``).
    """
    return name if iou_type == "bbox" or name in DOTA_NAMES else f"{name}-{iou_type}"


@dataclass(frozen=True)
class Protocol:
    """Everything that decides the numbers.

    Attributes:
        name: ``coco``, ``voc07``, ``voc12``, ``dota`` or ``dota-allpoint``.
        iou_thresholds: ``[T]`` match thresholds.
        recall_thresholds: ``[R]`` recall points AP is sampled at; empty for
            VOC12's all-point area under the precision envelope.
        area_ranges: ``[A]`` size buckets; the first is ``all``.
        max_dets: ``[M]`` per image and category, ascending (COCO).
        class_agnostic: match regardless of category (pycocotools ``useCats=0``).
        pixel_convention: ``continuous`` (COCO) or ``plus-one`` (VOC devkit).
        zero_id_quirk: reproduce pycocotools' defect that a ground truth with
            annotation id 0 never counts as matched (default on, for parity).
        iou_type: ``bbox`` (boxes), ``segm`` (instance masks), ``boundary``
            (Boundary IoU of the masks), ``obb`` (oriented boxes) or ``keypoints``
            (OKS); masks, boundaries and keypoints COCO only, oriented boxes COCO
            and the DOTA protocols' only one.
        boundary_dilation: ``boundary``'s dilation ratio: the boundary is
            this fraction of the image diagonal wide (boundary-iou-api's 0.02).
        honour_ignore: keep a ground truth's own ``ignore`` flag instead of
            letting ``iscrowd`` overwrite it as pycocotools does (default off).
        kpt_sigmas: ``--kpt-sigmas`` as read (keypoints; None: the default rule).
    """

    name: str = ProtocolName.COCO.value
    iou_thresholds: tuple[float, ...] = COCO_IOU_THRESHOLDS
    recall_thresholds: tuple[float, ...] = COCO_RECALL_THRESHOLDS
    area_ranges: tuple[AreaRange, ...] = COCO_AREA_RANGES
    max_dets: tuple[int, ...] = (1, 10, 100)
    class_agnostic: bool = False
    pixel_convention: PixelConvention = PixelConvention.CONTINUOUS
    zero_id_quirk: bool = True
    honour_ignore: bool = False
    iou_type: str = "bbox"
    boundary_dilation: float = 0.02
    kpt_sigmas: Any = None
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        # pycocotools selects a summary's maxDets by value: a repeated cap
        # selects two slices and averages both.  Refused rather than mimicked.
        repeated = sorted({m for m in self.max_dets if self.max_dets.count(m) > 1})
        if repeated:
            raise UsageError(
                f"--max-dets: each cap may be given once, got "
                f"{','.join(map(str, self.max_dets))} ({', '.join(map(str, repeated))} repeated)"
            )

    @property
    def label(self) -> str:
        """How reports and gates name this run: ``coco``, ``coco-segm`` for masks, ``dota``."""
        return protocol_label(self.name, self.iou_type)

    @property
    def stats(self) -> Stats:
        """The summary statistics: pycocotools' 12 (boxes, masks) or its 10 of keypoints, with
        an ``AP[label]`` and ``AR[label]`` in place of APs ... ARl for each custom area range."""
        base = KEYPOINT_STATS if self.iou_type == "keypoints" else COCO_STATS
        return stats_for_ranges(base, tuple(a.label for a in self.area_ranges))

    @property
    def class_recall_key(self) -> str:
        """The per-class table's recall column: ``AR100`` (the last of 1, 10, 100), ``AR`` (keypoints, 20)."""
        return "AR" if self.iou_type == "keypoints" else "AR100"

    @property
    def is_voc(self) -> bool:
        return self.name in VOC_NAMES

    @property
    def is_dota(self) -> bool:
        return self.name in DOTA_NAMES

    @property
    def is_devkit(self) -> bool:
        """A devkit-style protocol: one threshold, AP per class and mAP (VOC, DOTA)."""
        return self.is_voc or self.is_dota

    @property
    def eleven_point(self) -> bool:
        """AP as VOC2007's 11-point interpolation (``voc07``, ``dota``)."""
        return self.name in (ProtocolName.VOC07.value, ProtocolName.DOTA.value)

    @property
    def is_lvis(self) -> bool:
        return self.name == ProtocolName.LVIS.value

    @property
    def coco_grid(self) -> bool:
        """COCOeval's grid (thresholds, recall points, area ranges, maxDets: COCO, LVIS); else
        one threshold and a per-class AP (VOC, Open Images)."""
        return self.name in (ProtocolName.COCO.value, ProtocolName.LVIS.value)

    def params(self) -> dict[str, object]:
        """The parameters as plain data, for reports and baseline checks."""
        out: dict[str, object] = {
            "name": self.name,
            "iou_thresholds": [round(t, 10) for t in self.iou_thresholds],
            "pixel_convention": self.pixel_convention.value,
            "class_agnostic": self.class_agnostic,
            "iou_type": self.iou_type,
        }
        if self.iou_type == "boundary":
            out["boundary_dilation"] = self.boundary_dilation
        if self.is_devkit:
            out["ap_method"] = "11-point" if self.eleven_point else "all-point"
        elif not self.coco_grid:
            out["ap_method"] = "all-point"
            out.update(self.extra)
        else:
            out["recall_points"] = len(self.recall_thresholds)
            out["area_ranges"] = {a.label: [a.lo, a.hi] for a in self.area_ranges}
            out["max_dets"] = list(self.max_dets)
            out["zero_id_quirk"] = self.zero_id_quirk
            out["honour_ignore"] = self.honour_ignore
        if self.is_lvis:
            out["max_dets_per_image"] = LVIS_MAX_DETS
            out["federated"] = True
        if self.iou_type == "keypoints":
            out["kpt_sigmas"] = _plain_sigmas(self.kpt_sigmas)
        return out

    def without_area_ranges(self) -> Protocol:
        """This protocol with its first area range (``all``) only.

        For a ground truth without pixel sizes: the summary's area-range
        numbers (APs ... ARl) are then undefined, not computed from fractions.
        """
        return replace(self, area_ranges=self.area_ranges[:1])

    def geometry_params(self) -> dict[str, object]:
        """What this protocol sets of its geometry (:func:`iou_eval.geometry.seam.geometry_for`)."""
        return {"dilation_ratio": self.boundary_dilation} if self.iou_type == "boundary" else {}

    def summary_labels(self) -> dict[str, str]:
        """Each COCO summary statistic's IoU, area and maxDets, as pycocotools prints them.

        ``maxDets`` is the cap the statistic is read at (``-`` where this
        protocol has none at that position).
        """
        t = self.iou_thresholds
        span = f"{t[0]:0.2f}:{t[-1]:0.2f}" if t else "-"
        out = {}
        if self.is_lvis:
            # As lvis-api's print_results names them.
            for key, (_, iou, area, group) in LVIS_STATS.items():
                iou_text = span if iou is None else f"{iou:0.2f}"
                out[key] = (
                    f"IoU={iou_text:<11}area={area:<8}maxDets={LVIS_MAX_DETS} catIds={group or 'all'}"
                )
            return out
        for key, (_, iou, area, (kind, v)) in self.stats.items():
            md = stat_max_det(key, self.max_dets, self.stats)
            shown = v if kind == "value" else ("-" if md is None else md)
            iou_text = span if iou is None else f"{iou:0.2f}"
            out[key] = f"IoU={iou_text:<11}area={area:<8}maxDets={shown}"
        return out

    def summary_warnings(self) -> list[str]:
        """Why summary statistics are undefined under these maxDets, if they are."""
        if not self.coco_grid or self.is_lvis:
            return []
        md = ",".join(map(str, self.max_dets))
        out = []
        if self.iou_type == "keypoints":
            if 20 not in self.max_dets:
                out.append(
                    f"--max-dets {md}: pycocotools reads every keypoint statistic at maxDets=20, "
                    "which is not among them, and reports -1; the summary is left undefined (null)"
                )
            return out
        if stat_max_det("AP", self.max_dets) is None:
            out.append(
                f"--max-dets {md}: pycocotools reads the summary AP at maxDets=100, which is "
                "not among them, and reports -1; AP is left undefined (null). AP50 to APl and "
                "AR1 to ARl are read at the first, second and third caps, as pycocotools reads them"
            )
        stats = self.stats
        short = [k for k in stats if k != "AP" and stat_max_det(k, self.max_dets, stats) is None]
        if short:
            out.append(
                f"--max-dets {md}: pycocotools' summary needs three caps (it reads maxDets[0], "
                f"[1] and [2]); {', '.join(short)} left undefined (null)"
            )
        return out


def _plain_sigmas(sigmas: Any) -> Any:
    """``kpt_sigmas`` as plain JSON data: a list, ``{category: list}``, or None."""
    if not sigmas:
        return None
    if isinstance(sigmas[0], tuple):
        return {str(k): list(v) for k, v in sigmas}
    return list(sigmas)


def coco(**overrides: object) -> Protocol:
    """pycocotools' COCOeval defaults, with optional overrides."""
    return replace(Protocol(), **overrides)  # type: ignore[arg-type]


def voc07(**overrides: object) -> Protocol:
    """VOC2007: 11-point interpolated AP at IoU > 0.5, +1-pixel boxes."""
    base = Protocol(
        name=ProtocolName.VOC07.value,
        iou_thresholds=(0.5,),
        recall_thresholds=VOC07_RECALL_THRESHOLDS,
        area_ranges=(COCO_AREA_RANGES[0],),
        max_dets=(),
        pixel_convention=PixelConvention.PLUS_ONE,
        zero_id_quirk=False,
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


def voc12(**overrides: object) -> Protocol:
    """VOC2010+: all-point AP (area under the precision envelope) at IoU > 0.5."""
    base = voc07(name=ProtocolName.VOC12.value, recall_thresholds=())
    return replace(base, **overrides)  # type: ignore[arg-type]


def lvis(**overrides: object) -> Protocol:
    """lvis-api 0.5.3's ``LVISEval``: COCO's grid, 300 results per image, federated categories.

    Ground truths keep their own ``ignore`` flag and ``iscrowd`` means
    nothing (lvis-api computes plain IoU); the annotation-id-0 defect is the
    same as pycocotools' (a match is recorded as the ground truth's id).
    """
    base = Protocol(name=ProtocolName.LVIS.value, max_dets=(LVIS_MAX_DETS,), honour_ignore=True)
    return replace(base, **overrides)  # type: ignore[arg-type]


def openimages(**overrides: object) -> Protocol:
    """The Open Images detection challenge: group-of boxes, verified labels, all-point AP at IoU >= 0.5."""
    base = Protocol(
        name=ProtocolName.OPENIMAGES.value,
        iou_thresholds=(0.5,),
        recall_thresholds=(),
        area_ranges=(COCO_AREA_RANGES[0],),
        max_dets=(),
        zero_id_quirk=False,
        extra={"group_of_weight": 1.0},
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


def dota(**overrides: object) -> Protocol:
    """The DOTA devkit's task 1: 11-point AP at polygon IoU > 0.5 on oriented boxes."""
    base = voc07(
        name=ProtocolName.DOTA.value, pixel_convention=PixelConvention.CONTINUOUS, iou_type="obb"
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


def dota_allpoint(**overrides: object) -> Protocol:
    """The DOTA devkit's task 1 with its all-point AP (area under the precision envelope)."""
    base = dota(name=ProtocolName.DOTA_ALLPOINT.value, recall_thresholds=())
    return replace(base, **overrides)  # type: ignore[arg-type]


def lrp(**overrides: object) -> Protocol:
    """LRP (Oksuz et al.): COCO's matching at IoU 0.5 only, area all, 100 results per image and class."""
    base = Protocol(
        name="lrp",
        iou_thresholds=(0.5,),
        recall_thresholds=(),
        area_ranges=(COCO_AREA_RANGES[0],),
        max_dets=(100,),
    )
    return replace(base, **overrides)  # type: ignore[arg-type]
