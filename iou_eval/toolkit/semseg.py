"""Semantic segmentation from two folders of PNG label maps (``iou-eval semseg``).

Ground truth and predictions are paired by file stem (searched recursively);
each pair is read with Pillow and added to one confusion matrix
(:mod:`iou_eval.toolkit.labelmaps`), so a run holds one image at a time.  The scores
follow mmsegmentation's ``IoUMetric``; ``reduce_zero_label`` is its
``LoadAnnotations(reduce_zero_label=True)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.errors import InputError, UsageError
from iou_eval.escape import quoted
from iou_eval.toolkit.labelmaps import ConfusionAccumulator, LabelMapError, LabelMapScores
from iou_eval.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.ci.gates import Check, Gate

SUMMARY_METRICS = ("mIoU", "mAcc", "aAcc")
CLASS_METRICS = ("IoU", "Acc")
# Single-channel modes whose pixel values are the labels (P: palette indices).
LABEL_MODES = ("1", "L", "P", "I", "I;16", "I;16L", "I;16B")
SHOWN_NAMES = 8


@dataclass(frozen=True)
class Pairing:
    """Label maps paired by stem: ``pairs[i] = (stem, gt_path, pred_path)``."""

    gt_dir: str
    pred_dir: str
    pairs: list[tuple[str, str, str]]
    missing: list[str]  # stems with ground truth and no prediction
    extra: list[str]  # stems with a prediction and no ground truth


@dataclass
class SemsegResult:
    """Scores of a folder pair, with what was read and the gates' verdicts."""

    names: list[str]
    scores: LabelMapScores
    inputs: dict[str, Any]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, float]:
        s = self.scores
        return {"mIoU": s.mean_iou, "mAcc": s.mean_accuracy, "aAcc": s.pixel_accuracy}

    @property
    def failed_checks(self) -> bool:
        return any(not c.passed for c in self.checks)


def label_files(folder: str) -> dict[str, str]:
    """``{stem: path}`` of the ``.png`` files under ``folder`` (recursively), stems unique."""
    if not os.path.isdir(folder):
        what = "is a file" if os.path.exists(folder) else "does not exist"
        raise InputError(folder, f"expected a folder of PNG label maps; this {what}")
    out: dict[str, str] = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.suffix.lower() != ".png" or not path.is_file():
            continue
        if path.stem in out:
            raise InputError(
                str(path),
                f"two label maps share the stem {quoted(path.stem)} (also {out[path.stem]})",
                hint="maps are paired by file stem, so each stem must be unique in a folder",
            )
        out[path.stem] = str(path)
    return out


def pair_files(gt_dir: str, pred_dir: str) -> Pairing:
    """Pair the two folders' PNGs by stem; stems on one side only are listed apart."""
    gt, pred = label_files(gt_dir), label_files(pred_dir)
    if not gt:
        raise InputError(gt_dir, "no .png label maps in this folder")
    pairs = [(s, gt[s], pred[s]) for s in gt if s in pred]
    missing = [s for s in gt if s not in pred]
    extra = [s for s in pred if s not in gt]
    if not pairs:
        raise InputError(
            pred_dir,
            f"no prediction shares a file stem with the {len(gt)} ground-truth maps "
            f"(e.g. {quoted(next(iter(gt)))})",
            hint="predictions are paired with ground truths by file name without extension",
        )
    return Pairing(gt_dir, pred_dir, pairs, missing, extra)


def read_label_map(path: str) -> np.ndarray:
    """A single-channel PNG as an integer array ``[H, W]`` (palette PNGs: the indices)."""
    try:
        from PIL import Image, UnidentifiedImageError
        from PIL.Image import DecompressionBombError
    except ImportError:
        raise UsageError(
            "reading PNG label maps needs Pillow", hint="pip install 'iou-eval[images]'"
        ) from None
    try:
        with Image.open(path) as img:
            if img.mode not in LABEL_MODES:
                raise InputError(
                    path,
                    f"a {img.mode} image is not a label map: expected one channel of class "
                    f"indices (PNG mode L, P or I;16)",
                    hint="save the class index of each pixel, not a colour rendering",
                )
            return np.asarray(img)
    except (
        UnidentifiedImageError,
        DecompressionBombError,
        OSError,
        SyntaxError,
        ValueError,
    ) as exc:
        raise InputError(path, f"cannot read this PNG: {exc}") from None


def reduce_zero_label(gt: np.ndarray, ignore_index: int) -> np.ndarray:
    """mmsegmentation's ``reduce_zero_label``: 0 becomes ignored, every other label ``- 1``."""
    out = gt.astype(np.int64) - 1
    out[(gt == 0) | (gt == ignore_index)] = ignore_index
    return out


def _shown(stems: Sequence[str]) -> str:
    head = ", ".join(stems[:SHOWN_NAMES])
    return head + (f", ... ({len(stems) - SHOWN_NAMES} more)" if len(stems) > SHOWN_NAMES else "")


def _pairing_warnings(p: Pairing) -> list[str]:
    out = []
    if p.missing:
        out.append(
            f"{len(p.missing)} ground-truth maps have no prediction and are left out: "
            f"{_shown(p.missing)}"
        )
    if p.extra:
        out.append(
            f"{len(p.extra)} prediction maps have no ground truth and are left out: "
            f"{_shown(p.extra)}"
        )
    return out


def class_count(num_classes: int | None, names: list[str] | None) -> int | None:
    """The number of classes from ``--num-classes`` and ``--names`` (None: from the data)."""
    if names is None:
        return num_classes
    if num_classes is not None and num_classes != len(names):
        raise UsageError(f"--num-classes {num_classes} but --names lists {len(names)} class names")
    return len(names)


def evaluate_pairing(
    pairing: Pairing,
    num_classes: int | None = None,
    names: list[str] | None = None,
    ignore_index: int = 255,
    reduce_zero: bool = False,
    progress: Callable[[int], Any] | None = None,
) -> SemsegResult:
    """Score every pair of a :class:`Pairing` into one confusion matrix.

    Args:
        num_classes: C; None takes it from ``names`` or else from the data
            (the largest label seen + 1).
        names: class names, index = label (its length must equal ``num_classes``).
        ignore_index: ground-truth value left out of the scores.
        reduce_zero: mmsegmentation's ``reduce_zero_label`` on the ground truth.
        progress: called with 1 after each image.
    """
    acc = ConfusionAccumulator(class_count(num_classes, names), ignore_index)
    for _stem, gt_path, pred_path in pairing.pairs:
        gt = read_label_map(gt_path)
        if reduce_zero:
            gt = reduce_zero_label(gt, ignore_index)
        pred = read_label_map(pred_path)
        try:
            acc.add(gt, pred)
        except LabelMapError as exc:
            path, other = (gt_path, pred_path) if exc.side == "gt" else (pred_path, gt_path)
            # A label out of range carries a hint in the library's words; say the flags.
            hint = "check --num-classes / --names and --ignore-index" if exc.hint else None
            raise InputError(path, exc.detail, hint=hint or f"paired with {other}") from None
        if progress is not None:
            progress(1)
    c = acc.num_classes
    inputs = {
        "ground_truth": {"path": pairing.gt_dir, "maps": len(pairing.pairs) + len(pairing.missing)},
        "predictions": {"path": pairing.pred_dir, "maps": len(pairing.pairs) + len(pairing.extra)},
        "images": len(pairing.pairs),
        "missing_predictions": pairing.missing,
        "extra_predictions": pairing.extra,
    }
    settings = {
        "num_classes": c,
        "num_classes_from": "data" if num_classes is None and names is None else "options",
        "ignore_index": ignore_index,
        "reduce_zero_label": reduce_zero,
    }
    all_names = list(names) if names else [str(i) for i in range(c)]
    return SemsegResult(all_names, acc.scores(), inputs, settings, _pairing_warnings(pairing))


def _float_or_none(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


def class_rows(result: SemsegResult) -> list[dict[str, Any]]:
    """One record per class: ``class, index, IoU, Acc, gt_pixels, pred_pixels``."""
    s = result.scores
    return [
        {
            "class": name,
            "index": i,
            "IoU": _float_or_none(s.iou[i]),
            "Acc": _float_or_none(s.accuracy[i]),
            "gt_pixels": int(s.gt_pixels[i]),
            "pred_pixels": int(s.pred_pixels[i]),
        }
        for i, name in enumerate(result.names)
    ]


def validate_gate(gate: Gate) -> Gate:
    """Refuse, before any image is read, a gate on a metric semseg does not report."""
    if gate.protocol:
        raise UsageError(f"--fail-under {quoted(gate.text)}: semseg has no protocols to name")
    if gate.cls is None and gate.metric not in SUMMARY_METRICS:
        raise UsageError(
            f"--fail-under {quoted(gate.text)}: no metric {quoted(gate.metric)} "
            f"(summary: {', '.join(SUMMARY_METRICS)}; per class: IoU[name], Acc[name])"
        )
    if gate.cls is not None and gate.metric not in CLASS_METRICS:
        raise UsageError(f"--fail-under {quoted(gate.text)}: per-class gates take IoU or Acc")
    return gate


def gate_value(result: SemsegResult, gate: Gate) -> float | None:
    """The value a ``--fail-under`` gate reads: ``mIoU``, ``aAcc``, ``IoU[road]``..."""
    validate_gate(gate)
    if gate.cls is None:
        return _float_or_none(result.summary[gate.metric])
    rows = [r for r in class_rows(result) if gate.cls in (r["class"], str(r["index"]))]
    if not rows:
        raise UsageError(
            f"--fail-under {quoted(gate.text)}: no class {quoted(gate.cls)} (classes: {_shown(result.names)})"
        )
    return rows[0][gate.metric]


def check_gates(result: SemsegResult, gates: Sequence[Gate]) -> list[Check]:
    """``--fail-under`` verdicts: a value passes when it is at least the threshold."""
    from iou_eval.ci.gates import Check

    out = []
    for g in gates:
        v = gate_value(result, g)
        if v is None:
            out.append(Check(g.text, "gate", g.threshold, None, None, None, None, False,
                             "undefined (the class is in neither ground truth nor predictions)"))  # fmt: skip
            continue
        passed = v >= g.threshold
        reason = "" if passed else f"{v:.4f} is below {g.threshold:g}"
        out.append(
            Check(g.text, "gate", g.threshold, v, v - g.threshold, None, None, passed, reason)
        )
    return out


def to_dict(result: SemsegResult) -> dict[str, Any]:
    """The JSON document of a semseg run (undefined numbers are None)."""
    return {
        "schema_version": 1,
        "tool": {"name": "iou-eval", "version": __version__},
        "mode": "semseg",
        "inputs": result.inputs,
        "settings": result.settings,
        "summary": {k: _float_or_none(v) for k, v in result.summary.items()},
        "per_class": class_rows(result),
        "checks": [c.to_dict() for c in result.checks],
        "warnings": result.warnings,
    }
