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

from iou_eval.analysis.records import Analysis
from iou_eval.data.columns import Columns, clean
from iou_eval.data.doubts import doubts_of
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.counts import (  # noqa: F401  (the tables' helpers, where they were)
    ALL_CLASSES,
    PredictionColumns,
    point_counts,
    prediction_columns,
)
from iou_eval.protocols.params import Protocol
from iou_eval.protocols.records import Evaluation, ProtocolRecord, Tables
from iou_eval.protocols.registry import record_of
from iou_eval.protocols.tables import ScoreSweep, sweeps_by_class

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from iou_eval.analysis.bootstrap import Bootstrap

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
    evaluation: Evaluation | None = None
    bootstrap: Bootstrap | None = None
    predictions: PredictionColumns | None = None
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, evaluation: Evaluation, tables: Tables) -> ProtocolResult:
        """The result of a protocol's scorer: its evaluation (with the parameters it used)
        and its tables."""
        return cls(
            protocol=evaluation.protocol,
            summary=tables.summary,
            classes=tables.classes,
            images=tables.images,
            arrays=tables.arrays,
            evaluation=evaluation,
            predictions=tables.predictions,
            notes=tables.notes,
        )

    @property
    def record(self) -> ProtocolRecord:
        """What every wing asks of this result's protocol (its metrics, headline, description)."""
        return record_of(self.protocol)

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
            "description": r.record.describe(r.protocol),
            "params": r.params(self.settings),
            # Each summary metric's direction: gates and baselines read it.
            "metrics": {m.name: m.direction for m in r.record.metrics(r.protocol)},
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
        coco = [r for r in self.results if r.record.torchmetrics and r.arrays is not None]
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
