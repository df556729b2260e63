"""Compare two models on one ground truth: per-metric and per-class deltas.

With ``bootstrap`` replicates both models are resampled with the same image
draws, so every delta's interval is paired.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iou_eval.analysis.bootstrap import percentile_interval
from iou_eval.data.doubts import doubts_of
from iou_eval.results import EvaluationResult


@dataclass
class Comparison:
    """Deltas ``b - a`` of one protocol.

    Attributes:
        a, b: the two results.
        table: one row per summary metric, then per class: ``scope, name, a,
            b, delta, lo, hi, significance, better`` (``lo``/``hi``: the delta's
            interval, NaN without bootstrap; ``significance``: "significant",
            "zero-width interval: no evidence" or ""; ``better``: ``"a"`` or
            ``"b"``, the run the metric's own direction prefers, "" when equal
            or undefined: a lower LRP is better); classes sorted by the size
            of their change.  A ``doubt`` column (``"a"``, ``"b"`` or
            ``"a,b"``) when a run's inputs raised a doubt.
    """

    a: EvaluationResult
    b: EvaluationResult
    table: pd.DataFrame


def _f(v) -> float:
    return float("nan") if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def compare(a: EvaluationResult, b: EvaluationResult) -> Comparison:
    ra, rb = a.primary, b.primary
    boot_a, boot_b = ra.bootstrap, rb.bootstrap
    level = boot_a.level if boot_a is not None else 0.95

    def interval(a_reps: np.ndarray | None, b_reps: np.ndarray | None) -> tuple[float, float]:
        if a_reps is None or b_reps is None:
            return float("nan"), float("nan")
        iv = percentile_interval(b_reps - a_reps, level)
        return iv if iv is not None else (float("nan"), float("nan"))

    def summary_reps(boot, key: str) -> np.ndarray | None:
        return None if boot is None else boot.replicates.get(key)

    def class_reps(boot, k: int) -> np.ndarray | None:
        return None if boot is None or k >= boot.class_ap.shape[1] else boot.class_ap[:, k]

    rows = []
    higher = []
    for k, va in ra.summary.items():
        vb = rb.summary.get(k)
        lo, hi = interval(summary_reps(boot_a, k), summary_reps(boot_b, k))
        rows.append(("summary", k, _f(va), _f(vb), _f(vb) - _f(va), lo, hi))
        metric = ra.record.metric(ra.protocol, k)
        higher.append(metric is None or metric.higher_is_better)
    column, class_higher = class_column(ra)
    pa = ra.per_class.reset_index(drop=True)
    pb = rb.per_class.set_index("class")
    class_rows = []
    for k, row in pa.iterrows():
        name = row["class"]
        if name not in pb.index:
            continue
        va, vb = _f(row[column]), _f(pb.loc[name, column])
        lo, hi = interval(class_reps(boot_a, int(k)), class_reps(boot_b, int(k)))
        class_rows.append(("class", str(name), va, vb, vb - va, lo, hi))
    class_rows.sort(key=lambda r: -abs(r[4]) if not math.isnan(r[4]) else 1.0)
    table = pd.DataFrame(
        rows + class_rows, columns=["scope", "name", "a", "b", "delta", "lo", "hi"]
    )
    table["significance"] = [
        significance(lo, hi) for lo, hi in zip(table.lo, table.hi, strict=True)
    ]
    directions = higher + [class_higher] * len(class_rows)
    table["better"] = [better(d, up) for d, up in zip(table.delta, directions, strict=True)]
    doubted = doubted_inputs(a, b)
    if doubted:
        # Every row compares the same two runs: each carries the mark.
        table["doubt"] = ",".join(doubted)
    return Comparison(a=a, b=b, table=table)


def class_column(r) -> tuple[str, bool]:
    """The per-class column a comparison reads (the headline metric's: AP, oLRP) and
    whether higher is better in it."""
    metric = r.record.metric(r.protocol, r.record.headline[0])
    if metric is None or metric.per_class is None or metric.per_class not in r.classes:
        return "AP", True
    return metric.per_class, metric.higher_is_better


def better(delta: float, higher_is_better: bool) -> str:
    """``"b"`` or ``"a"``: the run the metric's direction prefers (``""``: equal, undefined)."""
    if math.isnan(delta) or delta == 0:
        return ""
    return "b" if (delta > 0) == higher_is_better else "a"


def doubted_inputs(a: EvaluationResult, b: EvaluationResult) -> list[str]:
    """``"a"`` and/or ``"b"``: the runs whose inputs raised a doubt (their numbers may be wrong)."""
    return [name for name, r in (("a", a), ("b", b)) if doubts_of(r.warnings)]


def significant(lo: float, hi: float) -> bool:
    """The interval excludes zero and has a width.

    A zero-width interval (``lo == hi``: the delta does not vary under
    resampling, e.g. on one image) is never significant: it gives no
    evidence either way.
    """
    return not (np.isnan(lo) or np.isnan(hi)) and lo != hi and (lo > 0 or hi < 0)


def significance(lo: float, hi: float) -> str:
    """The words a report shows for a delta's interval: significant, zero width, or nothing."""
    if np.isnan(lo) or np.isnan(hi):
        return ""
    if lo == hi:
        return "zero-width interval: no evidence"
    return "significant" if significant(lo, hi) else ""
