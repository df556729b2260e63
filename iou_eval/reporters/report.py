"""The pictures of a run: its plots (``--plots DIR``) and its HTML page (``-f html``).

:func:`plot_inputs` is the one place that takes the plots' arrays out of an
:class:`~iou_eval.results.EvaluationResult`, through its public records
(pycocotools' arrays, the score sweeps, the per-class table, a confusion
matrix when the run has one).  :func:`render_report` builds the page of a
single run: the plots inlined when matplotlib is there (a note when not),
the worst images and, with ``--images DIR``, their drawings (Pillow).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.errors import UsageError
from iou_eval.reporters.view import View, image_order

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.ci.batch import BatchResult
    from iou_eval.results import EvaluationResult

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
# Rows of the page's worst-images table (and drawings) when --worst does not say.
PAGE_IMAGES = 20
# Longer side of a drawing embedded in the page, in pixels.
PAGE_DRAWING_SIDE = 960
PLOTS_MISSING = "Plots need matplotlib, which is not installed: pip install 'iou-eval[plots]'."
DRAW_MISSING = "Drawings need Pillow, which is not installed: pip install 'iou-eval[draw]'."
DRAW_LEGEND = (
    "Green: ground truth (FN: missed; crowd and ignored regions named). Orange: predictions "
    "with class, score and the IoU of the pair; dashed: false positives (with their best IoU "
    "with a ground truth of their class, when they overlap one)."
)


def confusion_of(result: EvaluationResult) -> tuple[np.ndarray, list[str]] | None:
    """The run's confusion matrix when it has one: ``(matrix[K+1, K+1], names[K])``, else None.

    Looked up as ``result.confusion``, ``result.analysis.confusion`` or the
    first protocol's ``confusion``: a record with ``matrix`` (rows ground
    truth, columns prediction, background last) and ``names``, or the
    matrix itself.
    """
    holders = (result, getattr(result, "analysis", None), result.primary)
    found = next((c for h in holders if (c := getattr(h, "confusion", None)) is not None), None)
    if found is None:
        return None
    matrix = np.asarray(getattr(found, "matrix", found))
    k = matrix.shape[0] - 1
    names = getattr(found, "names", None) or [str(n) for n in result.primary.classes["class"]][:k]
    return matrix, [str(n) for n in names]


def plot_inputs(result: EvaluationResult) -> dict[str, Any]:
    """The keyword arguments of :func:`~iou_eval.reporters.plots.write_plots` for a run.

    Of the first protocol: PR curves from pycocotools' ``precision[T, R, K,
    A, M]`` (COCO only) at area ``all`` and maxDets 100 (else the largest),
    the score sweeps the per-class table's best F1 comes from, AP per
    class, and the confusion matrix when the run has one.
    """
    r = result.primary
    names = [str(n) for n in r.classes["class"]]
    out: dict[str, Any] = {
        "class_ap": _class_bars(r, names),
        "sweeps": r.score_sweeps,
        "overall_sweep": r.pooled_sweep,
        "ap_title": f"AP per class ({_ap_kind(r)}), best first",
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
            class_names=names[:k],
            class_gt=np.asarray(r.classes["gt"])[:k],
            area_index=0,
            max_dets_index=m,
            pr_subtitle=f"area {r.protocol.area_ranges[0].label}, maxDets {max_dets[m]}",
            overlap="OKS" if r.protocol.iou_type == "keypoints" else "IoU",
        )
    confusion = confusion_of(result)
    if confusion is not None:
        out.update(confusion=confusion[0], confusion_names=confusion[1])
    return out


def _class_bars(r: Any, names: list[str]) -> dict[str, float | None]:
    """Class name -> the per-class AP the bar chart shows ({}: the protocol has no per-class AP)."""
    metric = r.record.metric(r.protocol, r.record.headline[0])
    column = metric.per_class if metric is not None and metric.higher_is_better else None
    if column is None or column not in r.classes:
        return {}
    ap = np.asarray(r.classes[column], dtype=np.float64)
    return {n: (None if np.isnan(v) else float(v)) for n, v in zip(names, ap, strict=True)}


def _ap_kind(r: Any) -> str:
    """What a protocol's per-class AP is, for the bar chart's title."""
    title = r.record.plot_title
    return title(r.protocol) if title is not None else r.protocol.name


def write_run_plots(result: EvaluationResult, outdir: str | os.PathLike,
                    formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:  # fmt: skip
    """Every plot of a run into ``outdir`` (``--plots``); returns the files written."""
    from iou_eval.reporters.plots import write_plots

    return write_plots(outdir, formats=formats, **plot_inputs(result))


def write_batch_plots(batch: BatchResult, outdir: str | os.PathLike,
                      formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:  # fmt: skip
    """The leaderboard's bars of a batch into ``outdir``; returns the files written."""
    from iou_eval.data.columns import frame_records
    from iou_eval.reporters.plots import write_plots

    return write_plots(outdir, formats=formats, leaderboard=frame_records(batch.leaderboard()))


def matplotlib_missing() -> bool:
    """True when the plots cannot be drawn (matplotlib is not installed)."""
    from iou_eval.reporters.plots import require_matplotlib

    try:
        require_matplotlib()
    except UsageError:
        return True
    return False


def _titled(files: list[Path]) -> dict[str, str]:
    """Title -> file of the SVG plots (sharp at any zoom), in the order written."""
    return {PLOT_TITLES.get(f.stem, f.stem): str(f) for f in files if f.suffix == ".svg"}


def _plots_for_page(write, written: tuple[str, ...] | None, tmp: str
                    ) -> tuple[dict[str, str], str]:  # fmt: skip
    """``(title -> SVG file, note)``: the plots of ``write(outdir, formats)`` for a page.

    ``written``: the files ``--plots`` already wrote, embedded instead of drawn again.
    """
    if written is not None:
        return _titled([Path(f) for f in written]), ""
    if matplotlib_missing():
        return {}, PLOTS_MISSING
    return _titled(write(tmp, ("svg",))), ""


def _drawings(result: EvaluationResult, order: np.ndarray, images: str, tmp: str
              ) -> tuple[dict[str, str], str]:  # fmt: skip
    """``(caption -> drawing, note)`` of the images ``order`` for the page."""
    from iou_eval.reporters.draw import require_pillow
    from iou_eval.reporters.drawings import draw_run, missing_note

    try:
        require_pillow()
    except UsageError:
        return {}, DRAW_MISSING
    drawn = draw_run(result, images, Path(tmp) / "drawings", order, for_page=PAGE_DRAWING_SIDE)
    rows = result.images
    captions = {}
    for det, path in drawn.written:
        i = det.index
        recall = rows["recall"][i]
        rec = "" if np.isnan(recall) else f", recall {recall:.2f}"
        name = det.file_name or det.image_id
        captions[f"{name} (image {det.image_id}): {rows['FP'][i]} FP, {rows['FN'][i]} FN{rec}"] = (
            str(path)
        )
    note = DRAW_LEGEND
    if drawn.missing:
        note += " " + missing_note(drawn.missing, images) + "."
    return captions, note


def render_report(result: EvaluationResult, view: View) -> str:
    """The self-contained HTML page of a run (``-f html``).

    ``view``: the per-image order (``sort``) and how many of the worst
    images the page lists (``worst``, default 20); ``images``: a folder to
    draw them from; ``plot_files``: the files ``--plots`` already wrote.
    """
    from iou_eval.reporters.html import render_html

    order = image_order(result.images, View(sort=view.sort, worst=view.worst or PAGE_IMAGES))
    document = result.to_dict(order)
    with tempfile.TemporaryDirectory(prefix="iou-eval-page-") as tmp:
        plots, plots_note = _plots_for_page(
            lambda out, formats: write_run_plots(result, out, formats), view.plot_files, tmp
        )
        drawings: dict[str, str] = {}
        drawings_note = ""
        if view.images is not None:
            drawings, drawings_note = _drawings(result, order, view.images, tmp)
        notes = {"plots": plots_note, "drawings": drawings_note}
        return render_html(document, plots, drawings=drawings, notes=notes, ordered=view.sort)


def render_batch_report(batch: BatchResult, document: Mapping[str, Any],
                        plot_files: tuple[str, ...] | None = None) -> str:  # fmt: skip
    """The HTML page of a batch: leaderboard, files that failed, the leaderboard's bars."""
    from iou_eval.reporters.html import render_batch_html

    with tempfile.TemporaryDirectory(prefix="iou-eval-page-") as tmp:
        plots, note = _plots_for_page(
            lambda out, formats: write_batch_plots(batch, out, formats), plot_files, tmp
        )
        return render_batch_html(document, plots, notes={"plots": note})
