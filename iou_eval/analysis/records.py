"""The analyses' own result records, carried by :class:`~iou_eval.results.EvaluationResult`.

Immutable once built; the JSON document reads them through
:mod:`iou_eval.document`, the reports through
:mod:`iou_eval.reporters.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover  (a run without analyses reads none of them)
    from iou_eval.analysis.calibration import CalibrationResult
    from iou_eval.analysis.confusion import ConfusionResult
    from iou_eval.analysis.tide import TideResult


def bin_label(b, last: bool) -> str:
    """``[0.1, 0.2)``; the last bin is closed: ``[0.9, 1]``."""
    return f"[{b.lower:g}, {b.upper:g}{']' if last else ')'}"


@dataclass(frozen=True)
class SliceSummary:
    """One slice's numbers under one protocol.

    Attributes:
        name: the slice's name in the slices file.
        images: how many of the scored images belong to it.
        summary: the protocol's summary on those images alone (None where undefined).
    """

    name: str
    images: int
    summary: dict[str, float | None]


@dataclass(frozen=True)
class Analysis:
    """What a run computed beyond the protocols' numbers (None / empty where not asked).

    Attributes:
        tide: TIDE's error breakdown (boxes, tidecv's rules).
        confusion: the confusion matrix.
        calibration: reliability bins and ECE; calibration_source says
            whose matches gave the true positives.
        slices: protocol label (``coco``, ``voc12``, ``coco-segm``) -> one
            :class:`SliceSummary` per slice, in the slices file's order.
    """

    tide: TideResult | None = None
    confusion: ConfusionResult | None = None
    calibration: CalibrationResult | None = None
    calibration_source: str = ""
    slices: dict[str, tuple[SliceSummary, ...]] = field(default_factory=dict)

    def slice(self, protocol: str, name: str) -> SliceSummary | None:
        """Slice ``name`` under the protocol labelled ``protocol`` (None if absent)."""
        return next((s for s in self.slices.get(protocol, ()) if s.name == name), None)

    def slice_names(self) -> list[str]:
        return list(dict.fromkeys(s.name for rows in self.slices.values() for s in rows))

    def tidy_rows(self, protocol: str) -> list[tuple[str, str, object, str, object]]:
        """``(protocol, scope, key, metric, value)`` rows of the long table.

        Slices under ``protocol``; TIDE, confusion and calibration (one per
        run) under the protocol label ``"analysis"``.
        """
        rows: list[tuple[str, str, object, str, object]] = []
        for s in self.slices.get(protocol, ()):
            rows.append((protocol, "slice", s.name, "images", s.images))
            rows += [(protocol, "slice", s.name, k, v) for k, v in s.summary.items()]
        return rows

    def analysis_rows(self) -> list[tuple[str, str, object, str, object]]:
        """The run-wide analyses as long-table rows (scope ``tide``, ``confusion``, ``calibration``)."""
        rows: list[tuple[str, str, object, str, object]] = []
        p = "analysis"
        if self.tide is not None:
            from iou_eval.analysis.tide import ERROR_TYPES

            t = self.tide
            rows.append((p, "tide", "all", "AP", t.ap))
            for name in ERROR_TYPES:
                rows.append((p, "tide", name, "dAP", getattr(t.dap, name)))
                rows.append((p, "tide", name, "count", int(getattr(t.counts, name))))
            rows += [(p, "tide", "FP", "dAP", t.fp_dap), (p, "tide", "FN", "dAP", t.fn_dap)]
        if self.confusion is not None:
            c = self.confusion
            labels = [c.label(i) for i in range(len(c.matrix))]
            for i, true in enumerate(labels):
                rows += [
                    (p, "confusion", true, pred, int(c.matrix[i, j]))
                    for j, pred in enumerate(labels)
                    if c.matrix[i, j]
                ]
        if self.calibration is not None:
            cal = self.calibration
            rows.append((p, "calibration", "all", "ECE", cal.ece))
            rows.append((p, "calibration", "all", "MCE", cal.mce))
            for b in cal.bins:
                key = bin_label(b, last=b is cal.bins[-1])
                rows += [
                    (p, "calibration", key, "count", b.count),
                    (p, "calibration", key, "mean_score", b.mean_score),
                    (p, "calibration", key, "accuracy", b.accuracy),
                ]
            for name, per in cal.per_class.items():
                rows.append((p, "calibration", name, "ECE", per.ece))
                rows.append((p, "calibration", name, "MCE", per.mce))
        return rows
