"""Quality gates for CI: absolute bounds and regressions against a baseline.

A gate ``AP=0.45`` (``--fail-under``) passes when AP >= 0.45; on a metric
where lower is better (LRP) ``--fail-over lrp:moLRP=0.7`` passes when
moLRP <= 0.7, and each flag refuses the other direction's metrics;
``AP[person]=0.5`` reads the per-class table, unless the summary holds
``AP[person]`` (a custom area range ``AP[nano]``, DOTA's class APs);
``voc12:mAP=0.7`` or ``dota-allpoint:mAP=0.7`` names the protocol when several ran;
``AP@night=0.4`` reads the summary of the ``--slices`` slice ``night``.
A baseline is an earlier JSON result of iou-eval: every summary metric and
every class's AP may drop by at most ``--max-drop`` (absolute, or ``2%``
relative).  With bootstrap replicates the comparison can ask for
significance: a drop fails only when its interval lies wholly below zero,
and never on a zero-width interval (no evidence either way).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iou_eval.analysis.bootstrap import ZERO_WIDTH, percentile_interval, zero_width
from iou_eval.errors import InputError, UsageError
from iou_eval.escape import quoted
from iou_eval.protocols.records import Metric
from iou_eval.results import EvaluationResult, ProtocolResult

CLASS_METRICS = (
    "AP", "AP50", "AP75", "AR100", "AR300", "AR", "precision", "recall", "F1", "best_F1",
)  # fmt: skip
_GATE = re.compile(
    r"^\s*(?:(?P<protocol>[a-z0-9]+(?:-[a-z0-9]+)*):)?(?P<metric>[A-Za-z0-9_]+)"
    r"(?:\[(?P<cls>[^\]]+)\])?(?:\s*@\s*(?P<slice>[^=<>]+?))?\s*(?:>=|<=|=)\s*(?P<value>[-+0-9.eE]+)\s*$"
)


@dataclass(frozen=True)
class Gate:
    """``metric[class] >= threshold`` (``<=`` with ``over``: ``--fail-over``) under one
    protocol (None: the first that has it), on one ``--slices`` slice (``AP@night``;
    None: every image)."""

    text: str
    metric: str
    threshold: float
    cls: str | None = None
    protocol: str | None = None
    slice: str | None = None
    over: bool = False

    @property
    def flag(self) -> str:
        return "--fail-over" if self.over else "--fail-under"

    @property
    def summary_key(self) -> str:
        """The summary key the gate names: ``AP``, or ``AP[nano]`` with a bracket."""
        return self.metric if self.cls is None else f"{self.metric}[{self.cls}]"


@dataclass(frozen=True)
class Check:
    """One verdict row, of a gate or of a baseline comparison.

    Attributes:
        name: what was checked, e.g. ``AP[person]`` or ``voc12:mAP``.
        kind: ``gate`` or ``baseline``.
        threshold: the floor (gate) or the baseline's value.
        value: the current value (None when undefined).
        margin: the room a gate leaves in its metric's direction (value - bound
            under ``--fail-under``, bound - value under ``--fail-over``;
            negative: failed), or value - baseline (baseline).
        tolerance: how far a baseline metric may drop (absolute).
        interval: the bootstrap interval of ``value`` (gate) or of the delta.
        passed: the verdict.
        reason: why it failed, in words.
        protocol: the label of the protocol whose metric was read (``coco``,
            ``voc12``, ``segm``...).
    """

    name: str
    kind: str
    threshold: float | None
    value: float | None
    margin: float | None
    tolerance: float | None
    interval: tuple[float, float] | None
    passed: bool
    reason: str = ""
    protocol: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "threshold": self.threshold,
            "value": self.value,
            "margin": self.margin,
            "tolerance": self.tolerance,
            "interval": list(self.interval) if self.interval else None,
            "passed": self.passed,
            "reason": self.reason,
        }


def parse_gate(text: str, over: bool = False) -> Gate:
    """A ``--fail-under`` gate (``over``: a ``--fail-over`` one) from its text."""
    from iou_eval.escape import excerpt
    from iou_eval.numbers import parse_float

    flag = "--fail-over" if over else "--fail-under"
    m = _GATE.match(text)
    if not m:
        examples = (
            "lrp:moLRP=0.7 or oLRP[person]=0.6" if over
            else "AP=0.45, AP[person]=0.5, voc12:mAP=0.7 or AP@night=0.4"
        )  # fmt: skip
        raise UsageError(f"{flag}: expected METRIC=VALUE such as {examples}, got {excerpt(text)}")
    value = parse_float(m.group("value"), f"{flag} {excerpt(text.strip())}")
    where = m.group("slice").strip() if m.group("slice") is not None else None
    return Gate(
        text.strip(), m.group("metric"), value, m.group("cls"), m.group("protocol"), where or None,
        over,
    )  # fmt: skip


def gate_metric(r: ProtocolResult, gate: Gate) -> Metric | None:
    """The :class:`Metric` a gate reads (its direction), None for a count column (higher is better)."""
    if gate.cls is None or gate.summary_key in r.summary:
        return r.record.metric(r.protocol, gate.summary_key)
    return next((m for m in r.record.metrics(r.protocol) if m.per_class == gate.metric), None)


def check_direction(r: ProtocolResult, gate: Gate) -> None:
    """Refuse a gate whose flag points the other way than its metric (a UsageError with the fix)."""
    metric = gate_metric(r, gate)
    lower = metric is not None and not metric.higher_is_better
    if lower and not gate.over:
        raise UsageError(
            f"--fail-under {quoted(gate.text)}: lower is better for {gate.metric} "
            f"({r.protocol.label}), so it fails when above a bound",
            hint=f"--fail-over {gate.text}",
        )
    if gate.over and not lower:
        raise UsageError(
            f"--fail-over {quoted(gate.text)}: higher is better for {gate.metric} "
            f"({r.protocol.label}), so it fails when below a bound",
            hint=f"--fail-under {gate.text}",
        )


def _protocol_for(result: EvaluationResult, gate: Gate) -> ProtocolResult:
    if gate.protocol:
        for r in result.results:
            p = r.protocol
            if gate.protocol in (p.name, p.iou_type, p.label):
                return r
        ran = ", ".join(r.protocol.label for r in result.results)
        raise UsageError(
            f"{gate.flag} {quoted(gate.text)}: protocol {quoted(gate.protocol)} did not run ({ran})"
        )
    for r in result.results:
        if gate.summary_key in r.summary:
            return r
        if gate.cls is not None and gate.slice is None and gate.metric in r.per_class.columns:
            return r
    if gate.slice is not None and gate.cls is not None:
        raise UsageError(
            f"{gate.flag} {quoted(gate.text)}: a slice has summary metrics only "
            f"(AP@{gate.slice}=..., not per class)"
        )
    known = sorted({k for r in result.results for k in r.summary})
    where = "per-class" if gate.cls else "summary"
    raise UsageError(
        f"{gate.flag} {quoted(gate.text)}: no {where} metric {quoted(gate.metric)} "
        f"(summary metrics: {', '.join(known)}; per-class: {', '.join(CLASS_METRICS)})"
    )


def _slice_value(result: EvaluationResult, r: ProtocolResult, gate: Gate) -> float | None:
    """The gate's metric on its slice (a UsageError naming the slices when there is no such one)."""
    names = result.analysis.slice_names()
    if not names:
        raise UsageError(f"{gate.flag} {gate.text!r}: names a slice, but no --slices were given")
    s = result.analysis.slice(r.protocol.label, gate.slice or "")
    if s is None:
        raise UsageError(
            f"{gate.flag} {gate.text!r}: no slice {gate.slice!r} (slices: {', '.join(names)})"
        )
    if gate.summary_key not in s.summary:
        raise UsageError(
            f"{gate.flag} {gate.text!r}: a slice has summary metrics only "
            f"(slice summary: {', '.join(s.summary)})"
        )
    v = s.summary.get(gate.summary_key)
    return None if v is None else float(v)


def gate_value(result: EvaluationResult, gate: Gate) -> tuple[ProtocolResult, float | None]:
    r = _protocol_for(result, gate)
    if gate.slice is not None:
        return r, _slice_value(result, r, gate)
    if gate.cls is None or gate.summary_key in r.summary:
        v = r.summary.get(gate.summary_key)
        return r, None if v is None else float(v)
    own = tuple(m.per_class for m in r.record.metrics(r.protocol) if m.per_class)
    if gate.metric not in CLASS_METRICS and gate.metric not in own:
        raise UsageError(
            f"{gate.flag} {quoted(gate.text)}: per-class gates take "
            f"{', '.join(dict.fromkeys(CLASS_METRICS + own))}"
        )
    table = r.per_class
    rows = table[
        (table["class"].astype(str) == gate.cls) | (table["category_id"].astype(str) == gate.cls)
    ]
    if rows.empty:
        names = ", ".join(map(str, table["class"].tolist()[:20]))
        ranges = ", ".join(k for k in r.summary if k.startswith(f"{gate.metric}["))
        raise UsageError(
            f"{gate.flag} {quoted(gate.text)}: no class {quoted(gate.cls)} (classes: {names})"
            + (f" and no area range of that name ({ranges})" if ranges else "")
        )
    v = rows.iloc[0][gate.metric]
    return r, None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def check_gates(
    result: EvaluationResult, gates: list[Gate], significant_only: bool = False
) -> list[Check]:
    """Evaluate ``--fail-under`` gates against a result."""
    out = []
    for g in gates:
        r, v = gate_value(result, g)
        check_direction(r, g)
        boot = r.bootstrap
        # The bootstrap resamples the whole set's summary.
        whole = boot is not None and g.slice is None and g.summary_key in boot.replicates
        interval = boot.interval(g.summary_key) if boot is not None and whole else None
        if v is None:
            why = "no image in the slice" if g.slice is not None else "no ground truth for it"
            out.append(Check(g.text, "gate", g.threshold, None, None, None, None, False,
                             f"undefined ({why})", r.protocol.label))  # fmt: skip
            continue
        # The margin is the room left in the metric's own direction (negative: failed).
        margin = g.threshold - v if g.over else v - g.threshold
        passed = margin >= 0
        side = "above" if g.over else "below"
        reason = "" if passed else f"{v:.4f} is {side} {g.threshold:g}"
        # The interval's end nearest to passing: a gate fails only if even it fails.
        reach = None if interval is None else (interval[0] if g.over else interval[1])
        if not passed and significant_only and zero_width(interval):
            passed = True
            reason = f"{side} {g.threshold:g} but not significantly: {ZERO_WIDTH}"
        elif (
            not passed
            and significant_only
            and reach is not None
            and (reach <= g.threshold if g.over else reach >= g.threshold)
        ):
            passed = True
            reason = f"{side} {g.threshold:g} but not significantly (interval reaches {reach:.4f})"
        out.append(
            Check(g.text, "gate", g.threshold, v, margin, None, interval, passed, reason,
                  r.protocol.label)
        )  # fmt: skip
    return out


def load_baseline(path: str) -> dict[str, Any]:
    from iou_eval.ci.baseline import check_baseline
    from iou_eval.io.loaders.common import decode_json, read_bytes

    doc = decode_json(read_bytes(path), path)
    return check_baseline(doc, path)


def _blocks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from iou_eval.protocols.params import protocol_label

    def key(block: dict[str, Any]) -> str:
        return protocol_label(
            block["protocol"], (block.get("params") or {}).get("iou_type", "bbox")
        )

    blocks = {key(doc): doc}
    for extra in doc.get("additional_protocols", []):
        blocks[key(extra)] = extra
    return blocks


def compare_baseline(
    result: EvaluationResult,
    baseline: dict[str, Any],
    baseline_path: str,
    max_drop: tuple[float, bool],
    significant_only: bool = False,
) -> list[Check]:
    """Metric-by-metric and class-by-class comparison with an earlier result.

    Refuses (InputError) a baseline whose protocol or parameters differ.
    """
    blocks = _blocks(baseline)
    checks: list[Check] = []
    for r in result.results:
        base = _baseline_block(blocks, r, result.settings, baseline_path)
        prefix = f"{r.protocol.label}:" if len(result.results) > 1 else ""
        level = r.bootstrap.level if r.bootstrap else 0.95
        for label, old, new, deltas, higher in _metric_pairs(r, base, prefix):
            if old is None or new is None:
                continue
            check = _drop_check(label, old, new, deltas, level, max_drop, significant_only, higher)
            checks.append(replace(check, protocol=r.protocol.label))
    return checks


def _baseline_block(
    blocks: dict[str, Any], r: Any, settings: Any, baseline_path: str
) -> dict[str, Any]:
    """The baseline's block for protocol result ``r``, refused when absent or
    computed with other parameters."""
    name = r.protocol.label
    if name not in blocks:
        raise InputError(
            baseline_path,
            f"the baseline has no {quoted(name)} results (it has: {', '.join(blocks)})",
            hint="compare results of the same protocol",
        )
    base = blocks[name]
    # A baseline written before masks were scored had boxes only.
    base_params = {"iou_type": "bbox", **base["params"]}
    diffs = [
        f"{k}: baseline {quoted(base_params.get(k), 300)}, now {quoted(v, 300)}"
        for k, v in r.params(settings).items()
        if base_params.get(k) != v
    ]
    if diffs:
        raise InputError(
            baseline_path,
            f"the baseline was computed with other {name} parameters: " + "; ".join(diffs),
            hint="re-run the baseline with the same options, or drop --baseline",
        )
    return base


def _metric_pairs(
    r: Any, base: dict[str, Any], prefix: str
) -> list[tuple[str, Any, Any, np.ndarray | None, bool]]:
    """``(label, old, new, deltas, higher_is_better)`` of every summary metric and each
    class's headline value (AP; oLRP under LRP).

    ``deltas`` are the bootstrap replicates' differences: paired with the
    baseline's replicates when both drew the same images, else against its
    value; None without a bootstrap.
    """
    pairs: list[tuple[str, Any, Any, np.ndarray | None, bool]] = []
    boot = r.bootstrap
    base_boot: dict[str, Any] = base.get("bootstrap") or {}
    paired = (
        boot is not None
        and base_boot.get("n") == boot.n
        and base_boot.get("seed") == boot.seed
        and base_boot.get("images_digest") == boot.images_digest
    )
    for k, v in r.summary.items():
        deltas = None
        if boot is not None and k in boot.replicates:
            base_reps = base_boot.get("replicates", {})
            if paired and k in base_reps:
                old_reps = np.array([np.nan if x is None else x for x in base_reps[k]])
                deltas = boot.replicates[k] - old_reps
            elif base["summary"].get(k) is not None:
                deltas = boot.replicates[k] - float(base["summary"][k])
        metric = r.record.metric(r.protocol, k)
        higher = metric is None or metric.higher_is_better
        pairs.append((prefix + k, base["summary"].get(k), v, deltas, higher))
    column, higher = _class_column(r)
    base_classes = {str(c["class"]): c for c in base.get("per_class", [])}
    for row in r.classes.records():
        b = base_classes.get(str(row["class"]))
        # A summary that holds each class's AP (DOTA's AP[plane]) compared it above.
        name = f"{column}[{row['class']}]"
        if b is not None and name not in r.summary:
            pairs.append((prefix + name, b.get(column), row.get(column), None, higher))
    return pairs


def _class_column(r: Any) -> tuple[str, bool]:
    """The per-class column of the protocol's headline metric (AP, oLRP) and its direction."""
    metric = r.record.metric(r.protocol, r.record.headline[0])
    if metric is None or metric.per_class is None:
        return "AP", True
    return metric.per_class, metric.higher_is_better


def _drop_check(
    label: str,
    old: Any,
    new: Any,
    deltas: np.ndarray | None,
    level: float,
    max_drop: tuple[float, bool],
    significant_only: bool,
    higher_is_better: bool = True,
) -> Check:
    """The check of one value against the baseline's: a worsening (a drop, or a rise
    where lower is better) beyond the tolerance fails, unless ``significant_only``
    and the bootstrap interval reaches 0."""
    amount, relative = max_drop
    tol = amount * abs(old) if relative else amount
    delta = float(new) - float(old)
    worse = -delta if higher_is_better else delta
    verb = "dropped" if higher_is_better else "rose"
    interval = None if deltas is None else _interval(deltas, level)
    passed = worse <= tol + 1e-12
    reason = "" if passed else f"{verb} {worse:.4f} (> {tol:.4f})"
    # The interval's end on the side of no change: the worsening is noise if it reaches 0.
    reach = None if interval is None else (interval[1] if higher_is_better else interval[0])
    if not passed and significant_only and zero_width(interval):
        passed = True
        reason = f"{verb} {worse:.4f} but not significantly: {ZERO_WIDTH}"
    elif (
        not passed
        and significant_only
        and reach is not None
        and (reach >= 0 if higher_is_better else reach <= 0)
    ):
        passed = True
        reason = f"{verb} {worse:.4f} but not significantly (interval reaches {reach:+.4f})"
    return Check(label, "baseline", float(old), float(new), delta, tol, interval, passed, reason)


def _interval(values: np.ndarray, level: float) -> tuple[float, float] | None:

    return percentile_interval(values, level)


def github_annotations(checks: list[Check]) -> list[str]:
    """``::error::`` workflow commands for the checks that failed.

    Built by :func:`escape.workflow_command`: a class name in a check's name
    cannot end the command or start another.
    """
    from iou_eval.escape import workflow_command

    lines = []
    for c in checks:
        if c.passed:
            continue
        title = "iou-eval gate" if c.kind == "gate" else "iou-eval regression"
        lines.append(workflow_command("error", f"{c.name}: {c.reason}", title=title))
    return lines
