"""The analyses as report sections: slices, TIDE, confusion, calibration (text and Markdown).

Each function returns ``(title, table)`` pairs in the shape the text and
Markdown reporters lay out: ``table`` is ``(headers, rows, numeric)``, or
``()`` for a line of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iou_eval.analysis.confusion import most_confused
from iou_eval.analysis.records import bin_label
from iou_eval.reporters.cells import cell

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult, ProtocolResult

Section = tuple[str, tuple]

TIDE_ROWS = (
    ("cls", "classification (Cls)"),
    ("loc", "localisation (Loc)"),
    ("both", "both cls & loc (Both)"),
    ("dupe", "duplicate (Dupe)"),
    ("bkg", "background (Bkg)"),
    ("miss", "missed (Miss)"),
)


def _num(value: Any, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def slice_sections(result: EvaluationResult, r: ProtocolResult) -> list[Section]:
    """One row per slice beside the whole set, every summary metric of protocol ``r``."""

    slices = result.analysis.slices.get(r.protocol.label)
    if not slices:
        return []
    keys = list(r.summary)
    rows = [["(all images)", str(len(r.images)), *(cell(r.summary[k]) or "n/a" for k in keys)]]
    rows += [
        [s.name, str(s.images), *(cell(s.summary.get(k)) or "n/a" for k in keys)] for s in slices
    ]
    table = (["slice", "images", *keys], rows, [False] + [True] * (len(keys) + 1))
    return [(f"Slices ({r.protocol.label}; each as if only its images were scored)", table)]


def analysis_sections(result: EvaluationResult) -> list[Section]:
    """TIDE, the most confused pairs and the reliability table, as the run asked."""
    a = result.analysis
    out: list[Section] = []
    if a.tide is not None:
        out += _tide(a.tide)
    if a.confusion is not None:
        out += _confusion(a.confusion)
    if a.calibration is not None:
        out += _calibration(a.calibration, a.calibration_source)
    return out


def _tide(t) -> list[Section]:
    # A dAP tidecv cannot compute (no class left to average after the fix) is n/a.
    def dap(value: float | None) -> str:
        return _num(value, 2) or "n/a"

    rows = [[label, dap(getattr(t.dap, key)), str(int(getattr(t.counts, key)))]
            for key, label in TIDE_ROWS]  # fmt: skip
    rows += [
        ["false positives (FP)", dap(t.fp_dap), ""],
        ["false negatives (FN)", dap(t.fn_dap), ""],
    ]
    title = (
        f"TIDE (dAP: AP points gained by fixing each error type; {t.unit}; "
        f"AP{round(100 * t.pos_threshold)} {dap(t.ap)})"
    )
    return [(title, (["error", "dAP", "count"], rows, [False, True, True]))]


def _confusion(c, top: int = 10) -> list[Section]:
    m = c.matrix
    k = len(m) - 1
    title = (
        f"Confusion (IoU >= {c.iou_threshold:g}, score >= {c.score_threshold:g}; "
        "class-agnostic matching): most confused pairs; the whole matrix in --format json"
    )
    rows = []
    for p in most_confused(c, top=top):
        total = int(m[p.true_index].sum())
        share = f"{100 * p.count / total:.1f}%" if total else ""
        rows.append([p.true, p.predicted, str(p.count), share])
    rows.append(["(any class)", "nothing (missed)", str(int(m[:k, k].sum())), ""])
    rows.append(["nothing (background)", "(any class)", str(int(m[k, :k].sum())), ""])
    table = (["ground truth", "detected as", "count", "of its class"], rows,
             [False, False, True, True])  # fmt: skip
    return [(title, table)]


def _calibration(cal, source: str, top: int = 10) -> list[Section]:
    rows = []
    for b in cal.bins:
        gap = None if b.accuracy is None else abs(b.accuracy - b.mean_score)
        rows.append([bin_label(b, b is cal.bins[-1]), str(b.count), _num(b.mean_score),
                     _num(b.accuracy), _num(gap)])  # fmt: skip
    ece = _num(cal.ece) or "n/a"
    mce = _num(cal.mce) or "n/a"
    title = f"Calibration (reliability; ECE {ece}; MCE {mce}; true positives: {source})"
    table = (["score", "count", "mean score", "accuracy", "|gap|"], rows,
             [False, True, True, True, True])  # fmt: skip
    out = [(title, table)]
    worst = sorted(
        ((name, c) for name, c in cal.per_class.items() if c.ece is not None),
        key=lambda item: -item[1].ece,
    )[:top]
    if worst:
        per_class = [[name, str(c.count), _num(c.ece), _num(c.mce)] for name, c in worst]
        out.append((
            f"Calibration per class (largest ECE first{', first ' + str(top) if len(cal.per_class) > top else ''})",
            (["class", "count", "ECE", "MCE"], per_class, [False, True, True, True]),
        ))  # fmt: skip
    return out
