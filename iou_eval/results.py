"""Evaluation results as tidy tables, and their JSON document.

One :class:`ProtocolResult` per protocol: a summary dict, a per-class and a
per-image table.  :class:`EvaluationResult` bundles them with what was read,
and is what the reporters render and the Python API returns.  Tables are
light :class:`~iou_eval.data.columns.Columns`; ``per_class`` and ``per_image``
give them as pandas DataFrames (pandas is imported on first use only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.analysis.bootstrap import Bootstrap
from iou_eval.analysis.records import Analysis
from iou_eval.data.columns import Columns, clean
from iou_eval.data.doubts import doubts_of
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.coco import CocoEvaluation, OperatingPoint
from iou_eval.protocols.openimages import OpenImagesEvaluation
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.tables import PointCounts, ScoreSweep, count_point, sweeps_by_class
from iou_eval.protocols.voc import VocEvaluation

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from iou_eval.document import SCHEMA_VERSION  # noqa: F401  (where readers look for it)


@dataclass(frozen=True)
class ProtocolResult:
    """The numbers of one protocol.

    Attributes:
        protocol: the parameters in force.
        summary: COCO's 12 statistics (or VOC's ``mAP``); None where undefined.
        classes: one row per category (ground-truth categories first).
        images: one row per ground-truth image.
        arrays: pycocotools-shaped arrays (COCO only).
        evaluation: the protocol's evaluation (matches, curves), for bootstrap.
        bootstrap: replicates, when asked for.
        predictions: each counted prediction's outcome at the operating
            point (:class:`PredictionColumns`), for plots and drawings.
        notes: what the protocol left out or assumed, for the warnings.
    """

    protocol: Protocol
    summary: dict[str, float | None]
    classes: Columns
    images: Columns
    arrays: CocoArrays | None = None
    evaluation: Any = None
    bootstrap: Bootstrap | None = None
    predictions: PredictionColumns | None = None
    notes: tuple[str, ...] = ()

    @cached_property
    def score_sweeps(self) -> dict[str, ScoreSweep]:
        """Class name -> precision, recall and F1 at every score cut-off (classes with ground truth).

        The sweeps the per-class table's ``best_F1`` and ``best_F1_score`` come
        from (:func:`~iou_eval.protocols.tables.f1_sweep`); class-agnostic, one: ``all classes``.
        """
        return class_sweeps(self)[0]

    @cached_property
    def pooled_sweep(self) -> ScoreSweep | None:
        """Every class's predictions ranked together against all ground truths (None: none)."""
        return class_sweeps(self)[1]

    @cached_property
    def per_class(self) -> pd.DataFrame:
        """The per-class table as a DataFrame."""
        return self.classes.to_frame()

    @cached_property
    def per_image(self) -> pd.DataFrame:
        """The per-image table as a DataFrame."""
        return self.images.to_frame()

    def params(self, settings: dict[str, Any]) -> dict[str, Any]:
        return {**self.protocol.params(), **settings}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    return _ratio(2 * tp, 2 * tp + fp + fn)


def _mean_valid(a: np.ndarray) -> float:
    v = a[a > -1]
    return float(np.mean(v)) if v.size else float("nan")


# The one row of the per-class table when categories are ignored.
ALL_CLASSES = "all classes"


def _extra_rows(alignment: Alignment, count_extra: bool = True) -> np.ndarray:
    """Rows of the predictions of categories only they have (false positives), if counted."""
    if not count_extra:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(alignment.pred.category_idx >= alignment.n_categories)


def point_counts(
    alignment: Alignment,
    point: OperatingPoint,
    score_thr: float,
    class_agnostic: bool = False,
    count_extra: bool = True,
) -> PointCounts:
    """:class:`PointCounts` for scored rows plus the unscored prediction-only ones.

    ``class_agnostic``: matches pair boxes of any categories, so every box
    counts in one class (``C = 1``); counting a prediction's hit in its own
    class and the object it hit in another would give impossible rows.
    ``count_extra``: count prediction-only categories' boxes as false
    positives (LVIS drops them instead).
    """
    point_rows = point.dt_rows
    gt, pred = alignment.gt, alignment.pred
    extra = _extra_rows(alignment, count_extra)

    def cls(col: np.ndarray) -> np.ndarray:
        return np.zeros(len(col), dtype=np.int64) if class_agnostic else col

    return count_point(
        n_images=len(gt.images),
        n_classes=1 if class_agnostic else len(gt.categories),
        gt_image=gt.image_idx,
        gt_class=cls(gt.category_idx),
        gt_counts=point.gt_counts,
        dt_image=pred.image_idx[point_rows],
        dt_class=cls(pred.category_idx[point_rows]),
        dt_score=pred.scores[point_rows],
        dt_tp=point.tp,
        dt_fp=point.fp,
        dt_iou=point.match_iou,
        extra_image=pred.image_idx[extra],
        extra_class=cls(pred.category_idx[extra]),
        extra_score=pred.scores[extra],
        score_thr=score_thr,
        dt_order=None if class_agnostic else point.order,
    )


def class_keys(alignment: Alignment, class_agnostic: bool) -> dict[str, list]:
    """The ``class`` and ``category_id`` columns: one row per category, or one for all."""
    if class_agnostic:
        return {"class": [ALL_CLASSES], "category_id": [None]}
    cats = alignment.gt.categories
    return {"class": list(cats.names), "category_id": list(cats.ids)}


def per_image_table(alignment: Alignment, c: PointCounts, overlap: str = "IoU") -> Columns:
    """One row per image; ``overlap`` names the mean overlap of its matches (``IoU``, ``OKS``)."""
    images = alignment.gt.images
    fn = c.image_gt - c.image_tp
    precision = _ratio(c.image_tp, c.image_tp + c.image_fp)
    recall = _ratio(c.image_tp, c.image_gt)
    return Columns(
        {
            "image_id": list(images.ids),
            "file_name": list(images.file_names),
            "gt": c.image_gt,
            "predictions": c.image_pred,
            "TP": c.image_tp,
            "FP": c.image_fp,
            "FN": fn,
            # On crowd regions or difficult objects: neither true nor false.
            "ignored": c.image_pred - c.image_tp - c.image_fp,
            "precision": precision,
            "recall": recall,
            "F1": _f1(c.image_tp, c.image_fp, fn),
            f"mean_{overlap}": _ratio(c.image_iou_sum, c.image_tp),
        }
    )


# The per-class note of a category only the predictions have, by protocol.
EXTRA_NOTE = "only in predictions: every box is a false positive"
EXTRA_NOTE_LVIS = "only in predictions: not scored (LVIS)"


def class_counts(
    alignment: Alignment, c: PointCounts, class_agnostic: bool = False, extra_note: str = EXTRA_NOTE
) -> dict[str, np.ndarray]:
    """The count-based per-class columns, shared by every protocol."""
    k = alignment.n_categories
    n_all = len(c.class_gt)
    fn = c.class_gt - c.class_tp
    precision = _ratio(c.class_tp, c.class_tp + c.class_fp)
    recall = _ratio(c.class_tp, c.class_gt)
    if class_agnostic:
        note = np.array(["class-agnostic: every category counts as one class"])
    else:
        note = np.where(
            np.arange(n_all) >= k,
            extra_note,
            np.where(c.class_gt == 0, "no ground truth: AP undefined", ""),
        )
    return {
        "gt": c.class_gt,
        "predictions": c.class_pred,
        "TP": c.class_tp,
        "FP": c.class_fp,
        "FN": fn,
        "precision": precision,
        "recall": recall,
        "F1": _f1(c.class_tp, c.class_fp, fn),
        "best_F1": c.class_best_f1,
        "best_F1_score": c.class_best_score,
        "note": note,
    }


def coco_result(alignment: Alignment, ev: CocoEvaluation, score_thr: float) -> ProtocolResult:
    """Summary, per-class and per-image tables of a COCO evaluation (an LVIS one too).

    Class-agnostic, the per-class table is one row: the arrays hold one
    category (pycocotools' ``useCats=0``), and so do the counts.  Under LVIS
    the recall column is ``AR300`` and prediction-only categories are not
    counted (lvis-api drops their results).
    """
    agnostic = ev.protocol.class_agnostic
    lvis = ev.protocol.is_lvis
    c = point_counts(alignment, ev.point, score_thr, agnostic, count_extra=not lvis)
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
        for j in range(k):
            ap[j] = _mean_valid(prec[:, :, j, 0, -1])
            ar[j] = _mean_valid(rec[:, j, 0, -1])
            t50 = np.flatnonzero(thr == 0.5)
            t75 = np.flatnonzero(thr == 0.75)
            if t50.size:
                ap50[j] = _mean_valid(prec[t50, :, j, 0, -1])
            if t75.size:
                ap75[j] = _mean_valid(prec[t75, :, j, 0, -1])
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
    return ProtocolResult(
        protocol=ev.protocol,
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(
            alignment, c, "OKS" if ev.protocol.iou_type == "keypoints" else "IoU"
        ),
        arrays=ev.arrays,
        evaluation=ev,
        predictions=prediction_columns(alignment, ev.point, count_extra=not lvis),
    )


def voc_result(alignment: Alignment, ev: VocEvaluation, score_thr: float) -> ProtocolResult:
    """Summary (mAP), per-class and per-image tables of a VOC evaluation (one row class-agnostic)."""
    agnostic = ev.protocol.class_agnostic
    c = point_counts(alignment, ev.point, score_thr, agnostic)
    ap = np.full(len(c.class_gt), np.nan)
    ap[: len(ev.ap)] = ev.ap
    classes = Columns(
        {**class_keys(alignment, agnostic), "AP": ap, **class_counts(alignment, c, agnostic)}
    )
    return ProtocolResult(
        protocol=ev.protocol,
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(alignment, c),
        evaluation=ev,
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


def openimages_result(
    alignment: Alignment, ev: OpenImagesEvaluation, score_thr: float
) -> ProtocolResult:
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
    return ProtocolResult(
        protocol=ev.protocol,
        summary=dict(ev.summary),
        classes=classes,
        images=per_image_table(alignment, c),
        evaluation=ev,
        predictions=prediction_columns(alignment, ev.point, count_extra=False),
        notes=openimages_notes(alignment, ev),
    )


def bootstrap_block(b: Bootstrap) -> dict[str, Any]:
    """The JSON form of bootstrap replicates: intervals, and the replicates for paired deltas."""
    summary_keys = list(b.replicates)
    return {
        "n": b.n,
        "seed": b.seed,
        "level": b.level,
        "images_digest": b.images_digest,
        "intervals": {k: (list(iv) if (iv := b.interval(k)) else None) for k in summary_keys},
        "replicates": {k: [clean(x) for x in b.replicates[k]] for k in summary_keys},
    }


@dataclass(frozen=True)
class Verdict:
    """The quality gates' and baseline checks' own record of one result.

    Attributes:
        checks: each :class:`~iou_eval.ci.gates.Check`, in the order asked.
    """

    checks: tuple[Any, ...] = ()

    @property
    def failed(self) -> list[Any]:
        return [c for c in self.checks if not c.passed]


@dataclass(frozen=True)
class EvaluationResult:
    """Everything one run computed.

    Attributes:
        results: one :class:`ProtocolResult` per protocol, in the order asked.
        inputs: what was read (paths, detected formats, counts, how ids matched).
        settings: the operating point (``iou_thr``, ``score_thr``), and the
            ``img_ids`` / ``cat_ids`` selection when there is one.
        warnings: things the user should know about the input: notes, and
            doubts (:class:`~iou_eval.data.doubts.Doubt`) that the numbers may be wrong.
        analysis: TIDE, confusion, calibration and slices, when asked for.
        alignment: the aligned ground truth and predictions the numbers
            come from (boxes, masks, names), for drawings
            (:func:`iou_eval.reporters.detections.image_detections`); None when not kept.
    """

    results: list[ProtocolResult]
    inputs: dict[str, Any]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    verdict: Verdict = field(default_factory=Verdict)
    analysis: Analysis = field(default_factory=Analysis)
    alignment: Alignment | None = field(default=None, repr=False, compare=False)

    def judged(self, verdict: Verdict) -> EvaluationResult:
        """This result with ``verdict`` attached (a new record; this one is unchanged)."""
        return replace(self, verdict=verdict)

    @property
    def checks(self) -> tuple[Any, ...]:
        return self.verdict.checks

    @property
    def failed_checks(self) -> list[Any]:
        return self.verdict.failed

    @property
    def primary(self) -> ProtocolResult:
        return self.results[0]

    @property
    def protocol(self) -> str:
        return self.primary.protocol.name

    @property
    def summary(self) -> dict[str, float | None]:
        return self.primary.summary

    @property
    def per_class(self) -> pd.DataFrame:
        return self.primary.per_class

    @property
    def per_image(self) -> pd.DataFrame:
        return self.primary.per_image

    @property
    def classes(self) -> Columns:
        return self.primary.classes

    @property
    def images(self) -> Columns:
        return self.primary.images

    def _block(self, r: ProtocolResult, images_order: np.ndarray | None = None) -> dict[str, Any]:
        images = r.images if images_order is None else r.images.take(images_order)
        block = {
            "protocol": r.protocol.name,
            "params": r.params(self.settings),
            "summary": {k: clean(v) for k, v in r.summary.items()},
            "per_class": r.classes.records(),
            "per_image": images.records(),
        }
        if r.bootstrap is not None:
            block["bootstrap"] = bootstrap_block(r.bootstrap)
        if r.protocol.label in self.analysis.slices:
            from iou_eval.document import slices_block

            block["slices"] = slices_block(self.analysis.slices[r.protocol.label])
        return block

    def to_dict(self, images_order: np.ndarray | None = None) -> dict[str, Any]:
        """The JSON document (schema in docs/reports.md).

        ``images_order``: positions of the per-image rows to include, in
        order (default: all, in image-id order).
        """
        from iou_eval.document import analysis_blocks, envelope

        doc = envelope(
            **self._block(self.primary, images_order),
            inputs=self.inputs,
            # Strings, doubts among them; the doubts again on their own (iou_eval.data.doubts).
            warnings=[str(w) for w in self.warnings],
            doubts=doubts_of(self.warnings),
        )
        if self.checks:
            doc["checks"] = [c.to_dict() for c in self.checks]
            doc["passed"] = not self.failed_checks
        if len(self.results) > 1:
            doc["additional_protocols"] = [self._block(r) for r in self.results[1:]]
        doc.update(analysis_blocks(self.analysis))
        return doc

    def to_torchmetrics(self) -> dict[str, Any]:
        """The dict torchmetrics' ``MeanAveragePrecision.compute()`` returns, pycocotools' values.

        Keys: ``map``, ``map_50``, ``map_75``, ``map_small``, ``map_medium``,
        ``map_large``, ``mar_1``, ``mar_10``, ``mar_100`` (named by the
        maxDets), ``mar_small``, ``mar_medium``, ``mar_large``,
        ``map_per_class``, ``mar_100_per_class`` and ``classes`` (every
        category id that a ground truth or a prediction has, ascending).
        With boxes and masks scored, each key but ``classes`` twice, prefixed
        ``bbox_`` and ``segm_``.  -1 where pycocotools gives -1 (no ground
        truth in the slice, a threshold or cap not evaluated; per class: no
        ground truth).  Values as torchmetrics types them: float32 (numpy
        scalars, per-class arrays), ``classes`` int32, a one-element array
        squeezed to a scalar.  The COCO protocol's results only.
        """
        coco = [r for r in self.results if r.protocol.name == "coco" and r.arrays is not None]
        if not coco:
            from iou_eval.errors import UsageError

            raise UsageError("to_torchmetrics: the result holds no COCO protocol (protocol='coco')")
        classes = observed_classes(self)
        out: dict[str, Any] = {}
        for r in coco:
            prefix = "" if len(coco) == 1 else f"{r.protocol.iou_type}_"
            out.update(torchmetrics_block(r, classes, prefix))
        ids = np.asarray(classes[1])
        out["classes"] = _squeezed(ids.astype(np.int32) if ids.dtype.kind in "iu" else ids)
        return out

    def tidy(self) -> pd.DataFrame:
        """Every number in one long table: protocol, scope, key, metric, value."""
        rows: list[tuple[str, str, Any, str, Any]] = []
        for r in self.results:
            name = r.protocol.label
            for k, v in r.summary.items():
                rows.append((name, "summary", None, k, clean(v)))
            for rec in r.classes.records():
                for k, v in rec.items():
                    if k not in ("class",):
                        rows.append((name, "class", rec["class"], k, v))
            for rec in r.images.records():
                for k, v in rec.items():
                    if k != "image_id":
                        rows.append((name, "image", rec["image_id"], k, v))
            rows += [(*row[:4], clean(row[4])) for row in self.analysis.tidy_rows(name)]
        rows += [(*row[:4], clean(row[4])) for row in self.analysis.analysis_rows()]
        import pandas as pd

        return pd.DataFrame(rows, columns=["protocol", "scope", "key", "metric", "value"])


@dataclass(frozen=True)
class PredictionColumns:
    """The predictions the per-class and per-image tables count, with their outcome.

    ``[D]`` rows: first the protocol's scored predictions (after maxDets) in
    the order of its :class:`~iou_eval.protocols.coco.OperatingPoint`, then the
    ``D - n_scored`` predictions of categories only the predictions have
    (never matched: false positives).  No score threshold is applied:
    ``score >= score_thr`` selects what the tables count.  A row that is
    neither ``tp`` nor ``fp`` is ignored (on a crowd region or a difficult
    object).

    Attributes:
        iou_thr: the operating point's IoU threshold.
        rows: ``[D]`` int64 rows of the aligned predictions (``Alignment.pred``).
        image_idx, category_idx: ``[D]`` int64 (the prediction's own
            category, class-agnostic runs too).
        score: ``[D]`` float64.
        tp, fp: ``[D]`` bool.
        match_gt: ``[D]`` int64 the matched row of the aligned ground truth, -1: none.
        match_iou: ``[D]`` float64 the overlap with it (IoF on a crowd region), 0: none.
        n_scored: how many leading rows the protocol scored.
    """

    iou_thr: float
    rows: np.ndarray
    image_idx: np.ndarray
    category_idx: np.ndarray
    score: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    match_gt: np.ndarray
    match_iou: np.ndarray
    n_scored: int

    def __len__(self) -> int:
        return len(self.rows)


def prediction_columns(
    alignment: Alignment, point: OperatingPoint, count_extra: bool = True
) -> PredictionColumns:
    """:class:`PredictionColumns` of an operating point on its alignment.

    The point's own arrays are shared (not copied) when no prediction-only
    category adds rows (``count_extra`` False: none does).
    """
    pred = alignment.pred
    extra = _extra_rows(alignment, count_extra)
    n = len(point.dt_rows)

    def tail(head: np.ndarray, value: Any) -> np.ndarray:
        # Prediction-only categories: unmatched false positives (count_point's ``extra``).
        return head if not len(extra) else np.r_[head, np.full(len(extra), value, head.dtype)]

    rows = np.r_[point.dt_rows, extra].astype(np.int64) if len(extra) else point.dt_rows
    return PredictionColumns(
        iou_thr=point.iou_thr,
        rows=rows,
        image_idx=pred.image_idx[rows],
        category_idx=pred.category_idx[rows],
        score=pred.scores[rows],
        tp=tail(point.tp, False),
        fp=tail(point.fp, True),
        match_gt=tail(point.match_gt, -1),
        match_iou=tail(point.match_iou, 0.0),
        n_scored=n,
    )


def class_sweeps(r: ProtocolResult) -> tuple[dict[str, ScoreSweep], ScoreSweep | None]:
    """Per-class and pooled score sweeps of a result (see :attr:`ProtocolResult.score_sweeps`)."""
    cols = r.predictions
    if cols is None:
        return {}, None
    names = [str(n) for n in r.classes["class"]]
    class_gt = np.asarray(r.classes["gt"], dtype=np.int64)
    s = slice(0, cols.n_scored)
    agnostic = r.protocol.class_agnostic
    # Classes as the count tables have them: one for all when class-agnostic.
    cls = np.zeros(cols.n_scored, np.int64) if agnostic else cols.category_idx[s]
    per_class, pooled = sweeps_by_class(
        cls, cols.score[s], cols.tp[s], cols.fp[s], class_gt[: len(names)]
    )
    return {names[c]: sw for c, sw in per_class.items()}, pooled


# torchmetrics' key for each of pycocotools' 12 statistics ({m}: the maxDets it reads).
_TORCHMETRICS_KEYS = {
    "AP": "map", "AP50": "map_50", "AP75": "map_75", "APs": "map_small", "APm": "map_medium",
    "APl": "map_large", "AR1": "mar_{m0}", "AR10": "mar_{m1}", "AR100": "mar_{m2}",
    "ARs": "mar_small", "ARm": "mar_medium", "ARl": "mar_large",
}  # fmt: skip


def _squeezed(a: np.ndarray) -> Any:
    """As torchmetrics squeezes its results: a one-element array becomes a scalar."""
    return a.reshape(())[()] if a.size == 1 else a


def observed_classes(result: EvaluationResult) -> tuple[np.ndarray, list]:
    """``(positions[C], ids[C])``: the categories a ground truth or a prediction has, by id.

    torchmetrics lists every label its inputs hold; categories that only a
    file's category list names are left out as they are there.
    """
    a = result.alignment
    cats = result.primary.classes
    if a is None:
        rows = np.arange(len(cats["category_id"]))
    else:
        rows = np.union1d(np.unique(a.gt.category_idx), np.unique(a.pred.category_idx))
    ids = [cats["category_id"][i] for i in rows.tolist()] if len(cats["category_id"]) else []
    if all(isinstance(k, int) for k in ids):
        order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
        rows, ids = rows[order], [ids[i] for i in order.tolist()]
    return rows.astype(np.int64), ids


def _class_mean(values: np.ndarray) -> float:
    v = values[values > -1]
    return float(np.mean(v)) if v.size else -1.0


def torchmetrics_block(r: ProtocolResult, classes: tuple[np.ndarray, list], prefix: str) -> dict:
    """One COCO result's torchmetrics keys (see :meth:`EvaluationResult.to_torchmetrics`)."""
    from iou_eval.protocols.accumulate import stat_max_det

    md = r.protocol.max_dets
    caps = {f"m{i}": (md[i] if i < len(md) else -1) for i in range(3)}
    out: dict[str, Any] = {}
    for key, name in _TORCHMETRICS_KEYS.items():
        value = r.summary.get(key)
        out[prefix + name.format(**caps)] = np.float32(-1.0 if value is None else value)
    arrays = r.arrays
    assert arrays is not None
    rows = classes[0]
    ap = np.full(len(rows), -1.0)
    ar = np.full(len(rows), -1.0)
    k_arrays = arrays.precision.shape[2] if arrays.precision.ndim == 5 else 0
    ap_at, ar_at = stat_max_det("AP", md), stat_max_det("AR100", md)
    if not r.protocol.class_agnostic:
        for j, k in enumerate(rows.tolist()):
            if k >= k_arrays:
                continue  # a category only predictions have: no ground truth, -1
            if ap_at is not None:
                ap[j] = _class_mean(arrays.precision[:, :, k, 0, md.index(ap_at)])
            if ar_at is not None:
                ar[j] = _class_mean(arrays.recall[:, k, 0, md.index(ar_at)])
    if r.protocol.class_agnostic or not len(rows):
        ap, ar = np.array([-1.0]), np.array([-1.0])
    out[prefix + "map_per_class"] = _squeezed(ap.astype(np.float32))
    out[prefix + f"mar_{caps['m2']}_per_class"] = _squeezed(ar.astype(np.float32))
    return out
