"""A picture report of one run: plots and a self-contained ``index.html``.

``python -m iou_eval.reporters.html_demo [GT PREDS] [-o DIR]`` scores the
pair (default: ``sample_data/coco``) with :func:`iou_eval.api.evaluate` and
writes ``DIR/plots/*.png|svg`` and ``DIR/index.html`` (``make report``).

The plots take plain arrays; :func:`plot_inputs` is the one place that
takes them out of an :class:`~iou_eval.results.EvaluationResult`.  Two of
them are not part of the result's public surface today and are read from
the COCO evaluation record (see :func:`score_sweeps`); the confusion matrix
is drawn when a caller passes one.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import IouEvalError
from ..tables import ScoreSweep, f1_sweep

if TYPE_CHECKING:  # pragma: no cover
    from ..results import EvaluationResult, ProtocolResult

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "coco"


def score_sweeps(r: ProtocolResult) -> tuple[dict[str, ScoreSweep], ScoreSweep | None]:
    """Per-class and pooled :func:`~iou_eval.tables.f1_sweep` of a COCO result.

    The per-class sweeps are the ones the per-class table's ``best_F1``
    comes from: the scored predictions at ``--iou-thr`` (area all, maxDets
    kept), true and false positives only, by class then descending score.
    The pooled sweep ranks every such prediction of the ground truth's
    categories together against all their ground truths.

    Reads ``evaluation.point`` (``tp``, ``fp`` ``[D]``) and
    ``evaluation.accumulation`` (``dt_score``, ``dt_category`` ``[D]``, same
    positions).
    """
    ev = r.evaluation
    point = getattr(ev, "point", None)
    inputs = getattr(ev, "accumulation", None)
    if point is None or inputs is None or r.protocol.class_agnostic:
        return {}, None
    score = np.asarray(inputs.dt_score, dtype=np.float64)
    cls = np.asarray(inputs.dt_category)
    used = point.tp | point.fp
    # Descending score, ties in row order: the order count_point sweeps in.
    order = np.flatnonzero(used)[np.argsort(-score[used], kind="stable")]
    names = list(r.classes["class"])
    gt = np.asarray(r.classes["gt"])
    k = int(r.arrays.precision.shape[2]) if r.arrays is not None else len(names)
    sweeps = {}
    for c in range(k):
        rows = order[cls[order] == c]
        if gt[c] > 0:
            sweeps[str(names[c])] = f1_sweep(
                score[rows], point.tp[rows], point.fp[rows], int(gt[c])
            )
    total = int(gt[:k].sum())
    pooled = f1_sweep(score[order], point.tp[order], point.fp[order], total) if total else None
    return sweeps, pooled


def plot_inputs(result: EvaluationResult, confusion: np.ndarray | None = None) -> dict[str, Any]:
    """The keyword arguments of :func:`~iou_eval.reporters.plots.write_plots` for a run.

    ``confusion``: ``[K+1, K+1]`` counts (rows ground truth, columns
    prediction, background last) when the caller has one.
    """
    r = result.primary
    names = [str(n) for n in r.classes["class"]]
    ap = r.classes["AP"]
    out: dict[str, Any] = {
        "class_ap": {n: (None if np.isnan(v) else float(v)) for n, v in zip(names, ap, strict=True)}
    }
    if r.arrays is not None and r.arrays.precision.size:
        k = r.arrays.precision.shape[2]
        max_dets = list(r.protocol.max_dets)
        m = max_dets.index(100) if 100 in max_dets else len(max_dets) - 1
        out.update(
            precision=r.arrays.precision,
            iou_thresholds=r.protocol.iou_thresholds,
            recall_points=r.protocol.recall_thresholds,
            # Class-agnostic runs have one curve for all classes together.
            class_names=names[:k] if not r.protocol.class_agnostic else ["all classes"],
            class_gt=np.asarray(r.classes["gt"])[:k] if not r.protocol.class_agnostic else None,
            area_index=0,
            max_dets_index=m,
            pr_subtitle=f"area {r.protocol.area_ranges[0].label}, maxDets {max_dets[m]}",
        )
        out["sweeps"], out["overall_sweep"] = score_sweeps(r)
    if confusion is not None:
        out.update(confusion=confusion, confusion_names=names[: confusion.shape[0] - 1])
    return out


PLOT_TITLES = {
    "pr_overall": "Precision-recall, mean over classes",
    "pr_per_class": "Precision-recall per class",
    "score_threshold_all": "Precision, recall and F1 against the score threshold",
    "score_threshold_per_class": "Per class against the score threshold",
    "confusion_matrix_normalized": "Confusion matrix (normalized)",
    "confusion_matrix_counts": "Confusion matrix (counts)",
    "ap_per_class": "AP per class",
    "leaderboard": "Leaderboard",
}


def write_report(result: EvaluationResult, outdir: str | os.PathLike,
                 confusion: np.ndarray | None = None) -> Path:  # fmt: skip
    """Plots into ``outdir/plots`` and the page ``outdir/index.html``; returns the page's path."""
    from .html import render_html, write_text
    from .plots import write_plots

    out = Path(outdir)
    files = write_plots(out / "plots", formats=("png", "svg"), **plot_inputs(result, confusion))
    # The page embeds the SVGs (sharp at any zoom); the PNGs are for slides and chats.
    svgs = {f.stem: str(f) for f in files if f.suffix == ".svg"}
    plots = {PLOT_TITLES.get(stem, stem): path for stem, path in svgs.items()}
    page = out / "index.html"
    write_text(page, render_html(result.to_dict(), plots))
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iou_eval.reporters.html_demo",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("gt", nargs="?", default=str(SAMPLE / "gt.json"))
    parser.add_argument("preds", nargs="?", default=str(SAMPLE / "preds.json"))
    parser.add_argument("-o", "--outdir", default="report")
    args = parser.parse_args(argv)
    from ..api import evaluate

    try:
        page = write_report(evaluate(args.gt, args.preds), args.outdir)
    except IouEvalError as exc:
        print(f"iou-eval: error: {exc.format()}", file=sys.stderr)
        return exc.exit_code
    print(f"wrote {page} and the plots in {page.parent / 'plots'}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
