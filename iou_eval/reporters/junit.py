"""JUnit XML report (``-f junit``, ``--junit FILE``): gates as test cases for CI test views.

GitLab (``artifacts: reports: junit:``) and Jenkins (``junit``) read it.  The
shape follows the Jenkins/Surefire JUnit schema (``junit-10.xsd``)::

    <testsuites name="iou-eval" tests= failures= errors= [time=]>
      <testsuite name=PREDICTIONS tests= failures= errors= skipped="0" [time=]>
        <properties> version, inputs, protocols, every summary metric </properties>
        <testcase name="gate AP=0.5" classname="iou-eval.MODEL">
          [<failure type="gate" message="metric: reason (value, bound, protocol)">details</failure>]
          <system-out>details</system-out>
        </testcase>
        ...
        <system-out>the run's notes</system-out>
      </testsuite>
    </testsuites>

One suite per prediction file (a batch has several; a file that could not
be read is a suite whose one case fails with ``type="input"``: the Jenkins
schema has no ``<error>`` in a test case), one case per check
(each ``--fail-under`` gate, each metric compared with ``--baseline``), one
case ``input doubts`` when the input raised doubts (a failure under
``--strict``, else passing with the doubts in ``<system-out>``), and, when
nothing was checked, one case ``evaluation`` with the headline metrics.
Every data string goes through :func:`~iou_eval.escape.xml_text` or
:func:`~iou_eval.escape.xml_attribute`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iou_eval.data.doubts import doubts_of, is_doubt
from iou_eval.escape import xml_attribute, xml_text
from iou_eval.reporters.view import View
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.ci.batch import BatchResult
    from iou_eval.results import EvaluationResult

SUITES = "iou-eval"


@dataclass(frozen=True)
class Case:
    """One ``<testcase>``: ``outcome`` is ``passed`` or ``failure``."""

    name: str
    outcome: str = "passed"
    kind: str = ""
    message: str = ""
    details: str = ""
    seconds: float | None = None


@dataclass(frozen=True)
class Suite:
    """One ``<testsuite>``: a prediction file's cases, properties and notes."""

    name: str
    cases: list[Case]
    properties: list[tuple[str, str]] = field(default_factory=list)
    notes: str = ""
    seconds: float | None = None

    def count(self, outcome: str) -> int:
        return sum(c.outcome == outcome for c in self.cases)


def _number(v: Any) -> str:
    """A metric in full (``repr`` of the float), ``undefined`` when there is none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "undefined"
    return repr(float(v)) if isinstance(v, float) else str(v)


def _short(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "undefined"
    return f"{float(v):.4f}"


def _bound(c: Any) -> str:
    """What the value was held to: a gate's floor, or the baseline's value less the tolerance."""
    if c.kind == "baseline" and c.threshold is not None and c.tolerance is not None:
        return f"{c.threshold - c.tolerance:.4f} (baseline {c.threshold:.4f} - {c.tolerance:.4f})"
    return "undefined" if c.threshold is None else f"{c.threshold:g}"


def _check_details(c: Any, protocol: str) -> str:
    lines = [
        f"check: {c.kind} {c.name}",
        f"protocol: {protocol}",
        f"value: {_number(c.value)}",
        f"bound: {_bound(c)}",
    ]
    if c.margin is not None:
        lines.append(f"margin: {c.margin:+.4f}")
    if c.interval is not None:
        lines.append(f"interval: [{c.interval[0]:.4f}, {c.interval[1]:.4f}]")
    lines.append(f"verdict: {'passed' if c.passed else 'failed'}")
    if c.reason:
        lines.append(f"reason: {c.reason}")
    return "\n".join(lines)


def check_case(c: Any, default_protocol: str) -> Case:
    """The case of one gate or baseline check (:class:`~iou_eval.ci.gates.Check`)."""
    protocol = c.protocol or default_protocol
    details = _check_details(c, protocol)
    if c.passed:
        return Case(f"{c.kind} {c.name}", details=details)
    reason = c.reason or "failed"
    message = f"{c.name} under {protocol}: {reason} (value {_short(c.value)}, bound {_bound(c)})"
    return Case(f"{c.kind} {c.name}", "failure", c.kind, message, details)


def doubt_case(warnings: Sequence[str], strict: bool) -> Case | None:
    """The ``input doubts`` case: a failure under ``--strict``, else a pass that lists them."""
    doubts = list(dict.fromkeys(doubts_of(warnings)))
    if not doubts:
        return None
    details = "\n".join(f"doubt: {d}" for d in doubts)
    if not strict:
        return Case("input doubts", details=details)
    message = f"--strict: {len(doubts)} doubt(s) about the input: {doubts[0]}"
    return Case("input doubts", "failure", "doubt", message, details)


def headline(result: EvaluationResult) -> list[tuple[str, str]]:
    """``(name, value)`` of every summary metric; an additional protocol's are prefixed."""
    out = []
    for i, r in enumerate(result.results):
        prefix = "" if i == 0 else f"{r.protocol.label}:"
        out += [(prefix + k, _number(v)) for k, v in r.summary.items()]
    return out


def run_suite(name: str, result: EvaluationResult, strict: bool = False,
              seconds: float | None = None) -> Suite:  # fmt: skip
    """The suite of one prediction file's result."""
    primary = result.primary.protocol.label
    cases = [check_case(c, primary) for c in result.checks]
    doubts = doubt_case(result.warnings, strict)
    if not cases:
        metrics = ", ".join(f"{k} {v}" for k, v in headline(result))
        cases.append(Case("evaluation", details=f"protocol: {primary}\n{metrics}", seconds=seconds))
    if doubts is not None:
        cases.append(doubts)
    inputs = result.inputs
    properties = [
        ("iou-eval", __version__),
        ("ground_truth", str((inputs.get("ground_truth") or {}).get("path", ""))),
        ("predictions", str((inputs.get("predictions") or {}).get("path", name))),
        ("protocols", ",".join(r.protocol.label for r in result.results)),
        *headline(result),
    ]
    notes = "\n".join(f"note: {w}" for w in result.warnings if not is_doubt(w))
    return Suite(name, cases, properties, notes, seconds)


def unread_suite(name: str, message: str) -> Suite:
    """The suite of a prediction file that could not be scored: its one case fails."""
    return Suite(name, [Case("evaluation", "failure", "input", message, message)])


def _classnames(names: Sequence[str]) -> list[str]:
    """``iou-eval.<file name without .json>`` of each suite; the whole path where two would meet.

    Jenkins splits a classname at its last dot into package and class: the
    file's own dots would cut the model's name apart, so they become ``_``.
    """

    def stem(path: str) -> str:
        return path[:-5] if path.lower().endswith(".json") else path

    short = [stem(os.path.basename(os.path.normpath(n))) for n in names]
    return [
        f"{SUITES}.{(s if short.count(s) == 1 else stem(os.path.normpath(n))).replace('.', '_')}"
        for s, n in zip(short, names, strict=True)
    ]


def _seconds(s: float | None) -> str:
    return "" if s is None else f' time="{s:.3f}"'


def _case_xml(case: Case, classname: str) -> list[str]:
    head = (
        f'    <testcase name="{xml_attribute(case.name)}" '
        f'classname="{xml_attribute(classname)}"{_seconds(case.seconds)}'
    )
    if case.outcome == "passed" and not case.details:
        return [head + "/>"]
    lines = [head + ">"]
    if case.outcome == "failure":
        lines.append(
            f'      <failure type="{xml_attribute(case.kind)}" '
            f'message="{xml_attribute(case.message)}">{xml_text(case.details)}</failure>'
        )
    else:
        lines.append(f"      <system-out>{xml_text(case.details)}</system-out>")
    return [*lines, "    </testcase>"]


def _suite_xml(suite: Suite, classname: str) -> list[str]:
    counts = (
        f'tests="{len(suite.cases)}" failures="{suite.count("failure")}" errors="0" skipped="0"'
    )
    lines = [f'  <testsuite name="{xml_attribute(suite.name)}" {counts}{_seconds(suite.seconds)}>']
    if suite.properties:
        lines.append("    <properties>")
        lines += [
            f'      <property name="{xml_attribute(k)}" value="{xml_attribute(v)}"/>'
            for k, v in suite.properties
        ]
        lines.append("    </properties>")
    for case in suite.cases:
        lines += _case_xml(case, classname)
    if suite.notes:
        lines.append(f"    <system-out>{xml_text(suite.notes)}</system-out>")
    return [*lines, "  </testsuite>"]


def junit_document(suites: Sequence[Suite]) -> str:
    """The XML document of ``suites``, under one ``<testsuites>``."""
    tests = sum(len(s.cases) for s in suites)
    failures = sum(s.count("failure") for s in suites)
    timed = [s.seconds for s in suites if s.seconds is not None]
    total = sum(timed) if timed and len(timed) == len(suites) else None
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="{SUITES}" tests="{tests}" failures="{failures}" '
        f'errors="0"{_seconds(total)}>',
    ]
    for suite, classname in zip(suites, _classnames([s.name for s in suites]), strict=True):
        lines += _suite_xml(suite, classname)
    return "\n".join([*lines, "</testsuites>"]) + "\n"


def render_junit(result: EvaluationResult, view: View) -> str:
    """The JUnit report of one run; ``view.strict``: doubts fail; ``view.seconds``: its time."""
    name = str((result.inputs.get("predictions") or {}).get("path", "predictions"))
    return junit_document([run_suite(name, result, view.strict, view.seconds)])


def render_batch_junit(batch: BatchResult, strict: bool = False,
                       seconds: Mapping[str, float] | None = None) -> str:  # fmt: skip
    """The JUnit report of a batch: a suite per file, an unreadable one with a failing case.

    ``seconds``: file -> the time its scoring took, when measured.
    """
    times = seconds or {}
    suites = [run_suite(p, r, strict, times.get(p)) for p, r in batch.results.items()]
    suites += [unread_suite(p, m) for p, m in batch.errors]
    return junit_document(suites)
