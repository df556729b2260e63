"""The registry of protocols: every :class:`~iou_eval.protocols.records.ProtocolRecord`,
registered once, and the protocols a run's options name.

A new protocol is its own module in this wing, which defines its record,
plus one line here.
"""

from __future__ import annotations

from dataclasses import replace

from iou_eval.errors import UsageError
from iou_eval.escape import excerpt
from iou_eval.geometry.boxes import PixelConvention
from iou_eval.options import ProtocolOptions
from iou_eval.protocols import lrp
from iou_eval.protocols.builtin import BUILTIN
from iou_eval.protocols.params import (
    AUTO,
    DOTA_NAMES,
    KEYPOINT_AREA_RANGES,
    KEYPOINT_MAX_DETS,
    LVIS_MAX_DETS,
    Protocol,
    ProtocolName,
)
from iou_eval.protocols.records import ProtocolRecord

RECORDS: dict[str, ProtocolRecord] = {}


def register(record: ProtocolRecord) -> None:
    """Make ``record`` known to every wing under its name (once)."""
    if record.name in RECORDS:
        raise ValueError(f"protocol {record.name!r} is registered twice")
    RECORDS[record.name] = record


for _record in BUILTIN:
    register(_record)
register(lrp.RECORD)


def record_for(name: str) -> ProtocolRecord:
    """The record of protocol ``name`` (a :class:`UsageError` naming the known ones if none)."""
    record = RECORDS.get(name)
    if record is None:
        known = ", ".join((AUTO, *RECORDS))
        raise UsageError(f"--protocol: unknown protocol {excerpt(name)} (known: {known})")
    return record


def record_of(protocol: Protocol) -> ProtocolRecord:
    """The record of the protocol ``protocol`` was made by."""
    return record_for(protocol.name)


def make_protocol(
    name: str, options: object | None = None, iou_type: str | None = None
) -> Protocol:
    """A :class:`Protocol` by name with ``options``' overrides applied.

    ``options``: a :class:`~iou_eval.options.ProtocolOptions` (None: defaults).
    COCO's grid options (thresholds, ranges, maxDets) do not apply to VOC,
    which has one threshold (``--iou-thr``) and no ranges.
    """
    o = options if isinstance(options, ProtocolOptions) else ProtocolOptions()
    p = record_for(name).factory()
    iou_type = iou_type or p.iou_type  # the protocol's own: bbox, obb for DOTA
    if p.name == ProtocolName.LRP.value:
        return _lrp(p, o, iou_type)
    if p.is_dota and iou_type != "obb":
        raise UsageError(
            f"--iou-type {iou_type}: --protocol {name} scores oriented boxes (--iou-type obb)"
        )
    if iou_type != "bbox" and not p.coco_grid and not p.is_dota:
        which = "the VOC protocols score" if p.is_voc else f"--protocol {name} scores"
        what = "keypoints" if iou_type == "keypoints" else "masks"
        raise UsageError(f"--iou-type {iou_type}: {which} boxes; use --protocol coco for {what}")
    if p.is_lvis:
        _check_lvis_options(o)
        if iou_type == "keypoints":
            raise UsageError(
                "--iou-type keypoints: lvis-api scores boxes and masks; use --protocol coco "
                "for keypoints"
            )
    if not p.coco_grid and not p.is_devkit:
        return _open_images(p, o)
    changes: dict[str, object] = {"class_agnostic": o.class_agnostic, "iou_type": iou_type}
    if o.boundary_dilation is not None:
        changes["boundary_dilation"] = o.boundary_dilation
    if iou_type == "keypoints" and o.class_agnostic:
        raise UsageError(
            "--class-agnostic with --iou-type keypoints: pycocotools' computeOks ignores "
            "useCats=0 (it finds no pair and every AP is 0); score keypoints per category"
        )
    if iou_type == "keypoints":
        # pycocotools' Params(iouType="keypoints"): maxDets [20], no small range.
        p = replace(p, area_ranges=KEYPOINT_AREA_RANGES, max_dets=KEYPOINT_MAX_DETS)
        changes["kpt_sigmas"] = o.kpt_sigmas
    if not p.is_devkit:
        changes["zero_id_quirk"] = o.zero_id_quirk
        # LVIS always keeps a ground truth's own ignore flag (lvis-api does).
        changes["honour_ignore"] = o.honour_ignore or p.is_lvis
        if o.iou_thresholds:
            changes["iou_thresholds"] = tuple(o.iou_thresholds)
        if o.area_ranges:
            changes["area_ranges"] = (p.area_ranges[0], *o.area_ranges)
        if o.max_dets:
            changes["max_dets"] = tuple(sorted(o.max_dets))
    if o.pixel_convention and p.is_dota:
        raise UsageError(
            f"--pixel-convention: --protocol {name} measures polygons as the DOTA devkit does; "
            "it has no pixel convention"
        )
    if o.pixel_convention:
        changes["pixel_convention"] = PixelConvention(o.pixel_convention)
    return replace(p, **changes)  # type: ignore[arg-type]


def _check_lvis_options(o: ProtocolOptions) -> None:
    """Refuse the COCO options lvis-api has no counterpart of (its summary names fixed ranges)."""
    given = [
        flag
        for flag, value in (
            ("--max-dets", o.max_dets),
            ("--area-ranges", o.area_ranges),
            ("--class-agnostic", o.class_agnostic),
        )
        if value
    ]
    if given:
        raise UsageError(
            f"--protocol lvis: {', '.join(given)} do(es) not apply: LVIS keeps "
            f"{LVIS_MAX_DETS} results per image, COCO's area ranges and one class per "
            "category, as lvis-api does (use --protocol coco for these options)"
        )


def protocol_names(options: ProtocolOptions, federated: bool = False) -> tuple[str, ...]:
    """The protocols ``options`` name, ``auto`` resolved: ``lvis`` when the ground truth is
    an LVIS dataset (``federated``), else ``coco``; each name once, in order."""
    chosen = ProtocolName.LVIS.value if federated else ProtocolName.COCO.value
    return tuple(dict.fromkeys(chosen if n == AUTO else n for n in options.protocol))


def build_protocols(
    options: ProtocolOptions, federated: bool = False, oriented: bool = False
) -> list[Protocol]:
    """The :class:`Protocol` records ``options`` name: each iou type by each protocol, in order.

    ``federated``: the ground truth is an LVIS dataset (``auto`` is then
    ``lvis``).  Without ``--iou-type`` the files decide: ``obb`` when either
    holds oriented boxes (``oriented``), else ``bbox``.  The DOTA protocols
    score oriented boxes only: once each, under ``obb``.
    """
    given = options.iou_type
    types = given or (("obb",) if oriented else ("bbox",))
    out = []
    for t in types:
        for name in protocol_names(options, federated):
            kind = t
            if name in DOTA_NAMES and t != "obb":
                if "obb" in types or t != types[0]:
                    continue  # scored once, under obb
                # Asked for another type: make_protocol says what is wrong.
                kind = t if given else "obb"
            out.append(make_protocol(name, options, kind))
    return out


def _open_images(p: Protocol, o: ProtocolOptions) -> Protocol:
    """``openimages`` with what the options say of its inputs.

    COCO's grid options (thresholds, ranges, maxDets) do not apply, as they do
    not to VOC; switches that would change its numbers are refused.
    """
    for given, flag in (
        (o.class_agnostic, "--class-agnostic"),
        (o.pixel_convention, "--pixel-convention"),
    ):
        if given:
            raise UsageError(
                f"{flag} does not apply to --protocol openimages (per class, continuous "
                "extents, as the challenge scores)"
            )
    extra = {**p.extra, "hierarchy": o.oi_hierarchy, "group_of_weight": o.oi_group_of_weight}
    return replace(p, extra=extra)


def _lrp(p: Protocol, o: ProtocolOptions, iou_type: str) -> Protocol:
    """``lrp`` under the options: its grid is fixed (IoU 0.5, area all, one cap)."""
    if iou_type not in ("bbox", "segm", "keypoints"):
        raise UsageError(
            f"--iou-type {iou_type}: --protocol lrp scores boxes, masks and keypoints "
            "(bbox, segm, keypoints), as its official implementation does"
        )
    given = [
        flag
        for flag, value in (
            ("--iou-thrs", o.iou_thresholds),
            ("--area-ranges", o.area_ranges),
            ("--max-dets", o.max_dets),
            ("--class-agnostic", o.class_agnostic),
        )
        if value
    ]
    if given:
        raise UsageError(
            f"--protocol lrp: {', '.join(given)} do(es) not apply: LRP matches at IoU 0.5, "
            "area all, 100 results per image and class (keypoints: 20), as its official "
            "implementation does (use --protocol coco for these options)"
        )
    changes: dict[str, object] = {"iou_type": iou_type, "zero_id_quirk": o.zero_id_quirk}
    if iou_type == "keypoints":
        changes.update(max_dets=KEYPOINT_MAX_DETS, kpt_sigmas=o.kpt_sigmas)
    if o.pixel_convention:
        changes["pixel_convention"] = PixelConvention(o.pixel_convention)
    return replace(p, **changes)  # type: ignore[arg-type]
