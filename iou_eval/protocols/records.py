"""Protocols and their metrics as records: what every other wing asks of a protocol.

A :class:`ProtocolRecord` is registered once (:mod:`iou_eval.protocols.registry`)
with its factory, its scorer (alignment -> evaluation and tables), how
reports describe it, its summary metrics and headline.  A :class:`Metric`
knows its direction and range, so gates, baselines, comparisons and
leaderboards follow it instead of assuming that higher is better.  No module
outside this wing tests a protocol's identity: it asks the record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, runtime_checkable
from typing import Protocol as TypingProtocol

import numpy as np

from iou_eval.data.columns import Columns
from iou_eval.data.reconcile import Alignment
from iou_eval.protocols.accumulate import CocoArrays
from iou_eval.protocols.coco import OperatingPoint
from iou_eval.protocols.counts import PredictionColumns
from iou_eval.protocols.params import Protocol


@runtime_checkable
class Evaluation(TypingProtocol):
    """What every protocol's evaluation offers the wings above (bootstrap, slices, drawings).

    ``protocol``: the parameters it used (those reported and compared with a
    baseline's); ``point``: its matches at the operating point; ``summary``: its summary
    numbers; ``replicate(image_weight[I])``: the summary and ``[K]``
    per-class headline values on a resampled image set.
    """

    @property
    def protocol(self) -> Protocol: ...

    @property
    def point(self) -> OperatingPoint: ...

    @property
    def summary(self) -> dict[str, float | None]: ...

    def replicate(self, image_weight: np.ndarray) -> tuple[dict[str, float | None], np.ndarray]: ...


@dataclass(frozen=True)
class Metric:
    """One number a protocol reports, with its direction and range.

    Attributes:
        name: its key in the summary (``AP``, ``mAP``, ``moLRP``).
        higher_is_better: False for an error (LRP).
        lo, hi: its range.
        per_class: the per-class table's column of the same number, if any.
    """

    name: str
    higher_is_better: bool = True
    lo: float = 0.0
    hi: float = 1.0
    per_class: str | None = None

    @property
    def direction(self) -> str:
        """``higher`` or ``lower`` (is better)."""
        return "higher" if self.higher_is_better else "lower"

    def worsening(self, before: float, after: float) -> float:
        """How much worse ``after`` is than ``before`` (negative: better)."""
        return before - after if self.higher_is_better else after - before

    def ranking_key(self, value: float | None) -> float:
        """A sort key that puts the best value first (undefined last)."""
        if value is None or value != value:
            return float("inf")
        return -value if self.higher_is_better else value


@dataclass(frozen=True)
class Tables:
    """A protocol's numbers as the results wing holds them.

    Attributes:
        summary: the summary metrics (None where undefined).
        classes: one row per category; images: one row per ground-truth image.
        arrays: pycocotools-shaped arrays, where the protocol has them.
        predictions: each counted prediction's outcome at the operating point.
        notes: what the protocol left out or assumed.
    """

    summary: dict[str, float | None]
    classes: Columns
    images: Columns
    arrays: CocoArrays | None = None
    predictions: PredictionColumns | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunContext:
    """What a scorer needs beside the alignment and the protocol.

    Attributes:
        iou_thr, score_thr: the count tables' operating point.
        workers: processes or threads for category parts; executor: a cluster.
        keep_accumulation: keep what bootstrap replicates and analyses re-read.
    """

    iou_thr: float = 0.5
    score_thr: float = 0.0
    workers: int = 1
    executor: Any = None
    keep_accumulation: bool = True


def _no_notes(alignment: Alignment, protocol: Protocol) -> list[str]:
    return []


def _no_labels(protocol: Protocol) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class ProtocolRecord:
    """One protocol, as every wing asks it.

    Attributes:
        name: what ``--protocol`` takes.
        title: one line on what it reproduces (``--help``, docs).
        factory: ``factory(**overrides) -> Protocol`` with its defaults.
        score: ``score(alignment, protocol, context) -> (evaluation, tables)``.
        describe: the report's line on the parameters in force.
        metrics: ``metrics(protocol)``: the summary's metrics, in order.
        headline: the summary keys a side-by-side table or leaderboard shows first.
        summary_labels: ``summary_labels(protocol)``: each summary key's
            thresholds, area and cap as the reference prints them ({}: none).
        notes: ``notes(alignment, protocol)``: where the input meets a rule
            the reference has (a defect it reproduces, what it leaves out).
        plot_title: ``plot_title(protocol)``: what the per-class bar chart shows.
        coco_matching: its operating point is COCO's matching (maxDets per
            image and class): calibration and slices may read it.
        torchmetrics: ``to_torchmetrics()`` can render it (pycocotools' arrays).
        image_labels: it reads image-level labels (Open Images' verified classes).
        stream_cap: ``stream_cap(protocol) -> (cap, per_class) | None``: how
            many results per image (and class) streaming may keep without
            changing the numbers; None: keep every one.
        leaderboard: ``leaderboard(protocol) -> keys`` a leaderboard row shows.
        bootstrap: replicates are defined (``evaluation.replicate``).
        pixel_convention: its matching measures boxes under the protocol's
            ``pixel_convention`` (VOC's +1 pixels); else continuous extents.
        devkit_polygons: it scores oriented boxes as the DOTA devkit does (its
            ``polyiou`` on the corners as given); else by their exact convex overlap.
    """

    name: str
    title: str
    factory: Callable[..., Protocol]
    score: Callable[[Alignment, Protocol, RunContext], tuple[Any, Tables]]
    describe: Callable[[Protocol], str]
    metrics: Callable[[Protocol], tuple[Metric, ...]]
    headline: tuple[str, ...]
    summary_labels: Callable[[Protocol], dict[str, str]] = _no_labels
    notes: Callable[[Alignment, Protocol], list[str]] = _no_notes
    plot_title: Callable[[Protocol], str] | None = None
    coco_matching: bool = False
    torchmetrics: bool = False
    image_labels: bool = False
    stream_cap: Callable[[Protocol], tuple[int, bool] | None] = lambda p: None
    leaderboard: Callable[[Protocol], tuple[str, ...]] | None = None
    bootstrap: bool = True
    pixel_convention: bool = False
    devkit_polygons: bool = False

    def metric(self, protocol: Protocol, name: str) -> Metric | None:
        """The metric ``name`` of the summary under ``protocol`` (None: no such metric).

        A name the metric list does not hold but the summary may (an area
        range's ``AP[label]``) takes the direction of its family (``AP``).
        """
        metrics = {m.name: m for m in self.metrics(protocol)}
        if name in metrics:
            return metrics[name]
        family = name.split("[", 1)[0] if "[" in name else None
        if family is not None:
            base = next((m for m in metrics.values() if m.name.startswith(family)), None)
            if base is not None:
                return Metric(name, base.higher_is_better, base.lo, base.hi)
        return None

    def leaderboard_keys(self, protocol: Protocol) -> tuple[str, ...]:
        return self.leaderboard(protocol) if self.leaderboard else self.headline


def higher_metrics(*names: str, per_class: dict[str, str] | None = None) -> tuple[Metric, ...]:
    """Metrics in [0, 1] where higher is better (precision, recall), in order."""
    per_class = per_class or {}
    return tuple(Metric(n, per_class=per_class.get(n)) for n in names)
