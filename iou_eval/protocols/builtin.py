"""The records of the protocols iou-eval reproduces, and how their numbers become tables.

``coco`` (pycocotools' ``COCOeval``), ``lvis`` (lvis-api's ``LVISEval``),
``voc07`` / ``voc12`` (the VOC devkit's ``voc_eval``), ``openimages`` (the
TensorFlow Object Detection API's challenge evaluator) and ``dota`` /
``dota-allpoint`` (the DOTA devkit's task 1).  Each is a
:class:`~iou_eval.protocols.records.ProtocolRecord`; the registry
(:mod:`iou_eval.protocols.registry`) lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.data.doubts import Doubt
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols import params
from iou_eval.protocols.coco import CocoEvaluation
from iou_eval.protocols.coco_run import run_coco
from iou_eval.protocols.counts import (
    EXTRA_NOTE,
    EXTRA_NOTE_LVIS,
    class_counts,
    class_keys,
    per_image_table,
    point_counts,
    prediction_columns,
    row_means,
)
from iou_eval.protocols.params import LVIS_MAX_DETS, LVIS_STATS, Protocol
from iou_eval.protocols.records import Metric, ProtocolRecord, RunContext, Tables, higher_metrics

if TYPE_CHECKING:  # pragma: no cover  (each scorer reads its protocol's module when it runs)
    from iou_eval.protocols.openimages import OpenImagesEvaluation
    from iou_eval.protocols.voc import VocEvaluation


def coco_tables(
    alignment: Alignment, ev: CocoEvaluation, score_thr: float, lvis: bool = False
) -> Tables:
    """Summary, per-class and per-image tables of a COCO evaluation (an LVIS one too).

    Class-agnostic, the per-class table is one row: the arrays hold one
    category (pycocotools' ``useCats=0``), and so do the counts.  Under LVIS
    the recall column is ``AR300`` and prediction-only categories are not
    counted (lvis-api drops their results).
    """
    agnostic = ev.protocol.class_agnostic
    predictions = prediction_columns(alignment, ev.point, count_extra=not lvis)
    c = point_counts(alignment, ev.point, score_thr, agnostic, not lvis, predictions)
    n_rows = len(c.class_gt)
    k = 1 if agnostic else alignment.n_categories
    prec = ev.arrays.precision
    rec = ev.arrays.recall
    thr = np.asarray(ev.protocol.iou_thresholds)
    ap = np.full(n_rows, np.nan)
    ap50 = np.full(n_rows, np.nan)
    ap75 = np.full(n_rows, np.nan)
    ar = np.full(n_rows, np.nan)
    if prec.size:
        # pycocotools' [T, R, K, A, M] with area "all" and the last maxDets: each
        # category's (threshold, recall point) entries as one row, in that order.
        at_all = prec[:, :, :k, 0, -1]
        ap[:k] = row_means(at_all.transpose(2, 0, 1).reshape(k, -1))
        ar[:k] = row_means(rec[:, :k, 0, -1].T)
        for column, t in ((ap50, 0.5), (ap75, 0.75)):
            at_t = np.flatnonzero(thr == t)
            if at_t.size:
                column[:k] = row_means(at_all[at_t].transpose(2, 0, 1).reshape(k, -1))
    classes = Columns(
        {
            **class_keys(alignment, agnostic),
            "AP": ap,
            "AP50": ap50,
            "AP75": ap75,
            (f"AR{max(ev.protocol.max_dets)}" if lvis else ev.protocol.class_recall_key): ar,
            **class_counts(alignment, c, agnostic, EXTRA_NOTE_LVIS if lvis else EXTRA_NOTE),
        }
    )
    return Tables(
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(
            alignment, c, "OKS" if ev.protocol.iou_type == "keypoints" else "IoU"
        ),
        arrays=ev.arrays,
        predictions=predictions,
    )


def voc_tables(alignment: Alignment, ev: VocEvaluation, score_thr: float) -> Tables:
    """Summary (mAP), per-class and per-image tables of a VOC evaluation (one row class-agnostic)."""
    agnostic = ev.protocol.class_agnostic
    c = point_counts(alignment, ev.point, score_thr, agnostic)
    ap = np.full(len(c.class_gt), np.nan)
    ap[: len(ev.ap)] = ev.ap
    classes = Columns(
        {**class_keys(alignment, agnostic), "AP": ap, **class_counts(alignment, c, agnostic)}
    )
    return Tables(
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(alignment, c),
        predictions=prediction_columns(alignment, ev.point),
    )


def openimages_notes(alignment: Alignment, ev: OpenImagesEvaluation) -> tuple[str, ...]:
    """What the Open Images protocol left out, in words (nothing when nothing was)."""
    out = []
    source = alignment.pred.source
    left = ev.left_out
    if left["unverified"]:
        out.append(
            f"{source}: {left['unverified']} prediction(s) of classes neither verified nor boxed "
            "in their image were left out, as the challenge leaves them out"
        )
    if left["no_area"]:
        out.append(
            f"{source}: {left['no_area']} prediction(s) with no width or height were left out, "
            "as the challenge's evaluator removes them"
        )
    if left["low_score"]:
        out.append(
            f"{source}: {left['low_score']} prediction(s) scored -10 or lower were left out, "
            "as the challenge's evaluator drops them"
        )
    return tuple(out)


def openimages_tables(alignment: Alignment, ev: OpenImagesEvaluation, score_thr: float) -> Tables:
    """Summary (mAP), per-class and per-image tables of the Open Images challenge metric.

    The counts read the challenge's matches: a group-of box hit is one true
    positive (the highest prediction inside it); the other predictions
    inside it, and those left out (classes not verified in their image), are
    neither true nor false positives.
    """
    c = point_counts(alignment, ev.point, score_thr, count_extra=False)
    counts = class_counts(alignment, c)
    counts["note"] = np.where(c.class_gt == 0, "no ground truth: AP undefined", "")
    classes = Columns({**class_keys(alignment, False), "AP": ev.ap, **counts})
    return Tables(
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(alignment, c),
        predictions=prediction_columns(alignment, ev.point, count_extra=False),
        notes=openimages_notes(alignment, ev),
    )


# --- scorers: alignment -> (evaluation, tables) ------------------------------------------


def _score_coco(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    """pycocotools' evaluation (boxes, masks, keypoints), in category parts on workers or a cluster."""
    ev = run_coco(
        alignment, protocol, ctx.iou_thr, ctx.workers, ctx.executor,
        keep_accumulation=ctx.keep_accumulation,
    )  # fmt: skip
    return ev, coco_tables(alignment, ev, ctx.score_thr)


def _score_lvis(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    """lvis-api's ``LVISEval`` (boxes or masks), on the COCO machinery's parts and workers."""
    from iou_eval.protocols.lvis import run_lvis

    ev = run_lvis(
        alignment, protocol, ctx.iou_thr, ctx.workers, ctx.executor,
        keep_accumulation=ctx.keep_accumulation,
    )  # fmt: skip
    return ev, coco_tables(alignment, ev, ctx.score_thr, lvis=True)


def _score_voc(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    """The VOC devkit's ``voc_eval`` at ``--iou-thr`` (one process: it is fast)."""
    from iou_eval.protocols.voc import run_voc

    ev = run_voc(alignment, protocol, ctx.iou_thr)
    return ev, voc_tables(alignment, ev, ctx.score_thr)


def _score_openimages(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    """The Open Images detection challenge metric at ``--iou-thr`` (one process)."""
    from iou_eval.protocols.openimages import run_openimages

    ev = run_openimages(alignment, protocol, ctx.iou_thr)
    return ev, openimages_tables(alignment, ev, ctx.score_thr)


def _score_dota(alignment: Alignment, protocol: Protocol, ctx: RunContext):
    """The DOTA devkit's task-1 evaluation at ``--iou-thr`` (0.5), on oriented boxes."""
    from iou_eval.protocols.dota import run_dota

    ev = run_dota(alignment, protocol, ctx.iou_thr)
    return ev, voc_tables(alignment, ev, ctx.score_thr)


# --- how reports describe each protocol --------------------------------------------------


def _threshold_span(p: Protocol) -> str:
    thr = p.iou_thresholds
    if len(thr) == 10 and thr[0] == 0.5 and abs(thr[-1] - 0.95) < 1e-12:
        return "0.50:0.95"
    return ",".join(f"{t:g}" for t in thr)


def _grid_extra(p: Protocol) -> str:
    extra = ", class-agnostic" if p.class_agnostic else ""
    if p.iou_type == "boundary":
        extra += f", dilation ratio {p.boundary_dilation:g}"
    return extra


def _describe_coco(p: Protocol) -> str:
    caps = "/".join(map(str, p.max_dets))
    if p.iou_type == "keypoints":
        return (
            f"{p.name} (COCOeval keypoints: OKS {_threshold_span(p)}, {len(p.recall_thresholds)} "
            f"recall points, maxDets {caps}{_grid_extra(p)})"
        )
    return (
        f"{p.name} (COCOeval {p.iou_type}: IoU {_threshold_span(p)}, {len(p.recall_thresholds)} "
        f"recall points, maxDets {caps}, {p.pixel_convention.value} pixels{_grid_extra(p)})"
    )


def _describe_lvis(p: Protocol) -> str:
    return (
        f"{p.name} (LVIS protocol: LVISEval {p.iou_type}, IoU {_threshold_span(p)}, "
        f"{len(p.recall_thresholds)} recall points, {max(p.max_dets)} results per image, "
        f"federated categories{_grid_extra(p)}; --protocol coco for COCO's rules)"
    )


def _points(p: Protocol) -> str:
    return "11-point AP" if p.eleven_point else "all-point AP"


def _describe_voc(p: Protocol) -> str:
    return (
        f"{p.name} (VOC devkit: {_points(p)}, IoU > {p.iou_thresholds[0]:g}, "
        f"{p.pixel_convention.value} pixels, difficult ignored)"
    )


def _describe_dota(p: Protocol) -> str:
    return (
        f"{p.name} (DOTA devkit task 1: {_points(p)}, polygon IoU > {p.iou_thresholds[0]:g}, "
        "difficult ignored)"
    )


def _describe_openimages(p: Protocol) -> str:
    expanded = "hierarchy expanded" if p.extra.get("hierarchy") else "no hierarchy"
    weight = float(p.extra.get("group_of_weight", 1.0))  # type: ignore[arg-type]
    counts = "once" if weight == 1 else f"{weight:g} each"
    return (
        f"{p.name} (Open Images challenge: all-point AP, IoU >= {p.iou_thresholds[0]:g}, "
        f"group-of boxes count {counts}, verified classes only, {expanded})"
    )


def _grid_plot_title(p: Protocol) -> str:
    t = p.iou_thresholds
    span = f"{t[0]:.2f}:{t[-1]:.2f}" if len(t) > 1 else f"{t[0]:.2f}"
    cap = 100 if 100 in p.max_dets else max(p.max_dets)
    overlap = "OKS" if p.iou_type == "keypoints" else "IoU"
    return f"{overlap} {span}, area {p.area_ranges[0].label}, maxDets {cap}"


def _devkit_plot_title(overlap: str):
    def title(p: Protocol) -> str:
        points = "11-point" if p.eleven_point else "all-point"
        return f"{p.name}: {points}, {overlap} > {p.iou_thresholds[0]:g}"

    return title


def _openimages_plot_title(p: Protocol) -> str:
    return f"{p.name}: all-point, IoU >= {p.iou_thresholds[0]:g}"


# --- notes: where the input meets a rule the reference has --------------------------------


def _coco_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    """Where the input triggers a pycocotools defect that the protocol reproduces."""
    gt = alignment.gt
    out: list[str] = list(protocol.summary_warnings())
    if protocol.zero_id_quirk:
        n0 = int((gt.ann_id == 0).sum())
        if n0:
            out.append(
                f"{gt.source}: {n0} ground truth(s) have annotation id 0; like pycocotools, a "
                "prediction matched to one counts as a false positive (pass --count-id-zero "
                "to count it)"
            )
    if not protocol.honour_ignore:
        flagged = int((gt.ignore & ~gt.is_crowd).sum())
        if flagged:
            out.append(
                f"{gt.source}: {flagged} ground truth(s) are flagged ignore/difficult but not "
                "crowd; like pycocotools, they count as ordinary objects (pass --honour-ignore "
                "to ignore them)"
            )
    return out


def _lvis_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    gt = alignment.gt
    out: list[str] = []
    if crowd := int(gt.is_crowd.sum()):
        out.append(
            f"{gt.source}: {crowd} ground truth(s) are marked iscrowd; like lvis-api, the LVIS "
            "protocol scores them as ordinary objects (plain IoU, no crowd regions)"
        )
    return out + _coco_notes(alignment, protocol)


def _dota_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    from iou_eval.protocols.dota import devkit_notes

    return devkit_notes(alignment, protocol)


def federation_notes(gt_source: str, federated: bool, frequency: bool, protocols: list[Protocol],
              auto: bool, cat_ids: bool) -> list[str]:  # fmt: skip
    """What a run says of LVIS: which protocol an LVIS file got, what a COCO run ignores.

    ``federated``: the ground truth has LVIS lists; ``frequency``: its
    categories have frequencies; ``auto``: the protocol was left to the file;
    ``cat_ids``: a category selection is given.
    """
    names = {p.name for p in protocols}
    lvis, coco = params.ProtocolName.LVIS.value, params.ProtocolName.COCO.value
    out: list[str] = []
    if federated and auto:
        out.append(
            f"{gt_source}: an LVIS ground truth (neg_category_ids / frequency): scored with the "
            "LVIS protocol (lvis-api's federated rules); pass --protocol coco for COCO's"
        )
    if federated and coco in names:
        out.append(
            f"{gt_source}: an LVIS ground truth scored with COCO's rules (--protocol coco): "
            "neg_category_ids, not_exhaustive_category_ids and frequency are ignored, every "
            "category counts on every image and results are capped per image and category, "
            "not at 300 per image (pass --protocol lvis for LVIS's)"
        )
    if lvis in names and not federated:
        out.append(
            f"{gt_source}: --protocol lvis on a ground truth without LVIS lists: no image has "
            "neg_category_ids, so only the categories labelled on an image are scored there, "
            "and without category frequencies APr, APc and APf are undefined"
        )
    elif lvis in names and not frequency:
        out.append(f"{gt_source}: no category has a frequency: APr, APc and APf are undefined")
    if lvis in names and cat_ids:
        out.append(
            Doubt(
                "--cat-ids with --protocol lvis: the 300 results per image are the top scores "
                "of the selected categories (lvis-api caps every category's results first)"
            )
        )
    return out


# --- metrics ---------------------------------------------------------------------------


def _coco_metrics(p: Protocol) -> tuple[Metric, ...]:
    per_class = {"AP": "AP", "AP50": "AP50", "AP75": "AP75", p.class_recall_key: p.class_recall_key}
    return higher_metrics(*p.stats, per_class=per_class)


def _lvis_metrics(p: Protocol) -> tuple[Metric, ...]:
    return higher_metrics(*LVIS_STATS, per_class={"AP": "AP", "AP50": "AP50", "AP75": "AP75"})


def _map_metrics(p: Protocol) -> tuple[Metric, ...]:
    return (Metric("mAP", per_class="AP"),)


def _coco_leaderboard(p: Protocol) -> tuple[str, ...]:
    if p.iou_type == "keypoints":
        return ("AP", "AP50", "AP75", "APm", "APl", "AR")
    return ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR100")


def _coco_stream_cap(p: Protocol) -> tuple[int, bool] | None:
    return (max(p.max_dets), not p.class_agnostic) if p.max_dets else None


def _grid_labels(p: Protocol) -> dict[str, str]:
    return p.summary_labels()


COCO = ProtocolRecord(
    name="coco",
    title="pycocotools' COCOeval (bbox, segm, boundary, keypoints, oriented boxes)",
    factory=params.coco,
    score=_score_coco,
    describe=_describe_coco,
    metrics=_coco_metrics,
    headline=("AP", "AP50"),
    summary_labels=_grid_labels,
    notes=_coco_notes,
    plot_title=_grid_plot_title,
    coco_matching=True,
    torchmetrics=True,
    stream_cap=_coco_stream_cap,
    leaderboard=_coco_leaderboard,
)

LVIS = ProtocolRecord(
    name="lvis",
    title="lvis-api 0.5.3's LVISEval (federated categories, 300 results per image)",
    factory=params.lvis,
    score=_score_lvis,
    describe=_describe_lvis,
    metrics=_lvis_metrics,
    headline=("AP", "APr"),
    summary_labels=_grid_labels,
    notes=_lvis_notes,
    plot_title=_grid_plot_title,
    coco_matching=True,
    # lvis-api keeps the 300 best results of an image across categories.
    stream_cap=lambda p: (LVIS_MAX_DETS, False),
    leaderboard=lambda p: ("AP", "AP50", "AP75", "APr", "APc", "APf", f"AR{LVIS_MAX_DETS}"),
)


def _voc_record(name: str, factory, title: str) -> ProtocolRecord:
    return ProtocolRecord(
        name=name,
        title=title,
        factory=factory,
        score=_score_voc,
        describe=_describe_voc,
        metrics=_map_metrics,
        headline=("mAP",),
        plot_title=_devkit_plot_title("IoU"),
        pixel_convention=True,
    )


VOC07 = _voc_record("voc07", params.voc07, "the VOC devkit's voc_eval, 11-point AP (VOC2007)")
VOC12 = _voc_record("voc12", params.voc12, "the VOC devkit's voc_eval, all-point AP (VOC2010+)")

OPENIMAGES = ProtocolRecord(
    name="openimages",
    title="the TF Object Detection API's Open Images challenge evaluator",
    factory=params.openimages,
    score=_score_openimages,
    describe=_describe_openimages,
    metrics=_map_metrics,
    headline=("mAP",),
    plot_title=_openimages_plot_title,
    image_labels=True,
)


def _dota_record(name: str, factory, title: str) -> ProtocolRecord:
    return ProtocolRecord(
        name=name,
        title=title,
        factory=factory,
        score=_score_dota,
        describe=_describe_dota,
        metrics=_map_metrics,
        headline=("mAP",),
        notes=_dota_notes,
        plot_title=_devkit_plot_title("polygon IoU"),
        devkit_polygons=True,
    )


DOTA = _dota_record("dota", params.dota, "the DOTA devkit's task 1, 11-point AP")
DOTA_ALLPOINT = _dota_record(
    "dota-allpoint", params.dota_allpoint, "the DOTA devkit's task 1, all-point AP"
)

BUILTIN = (COCO, LVIS, VOC07, VOC12, OPENIMAGES, DOTA, DOTA_ALLPOINT)
