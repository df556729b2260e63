"""Plots of one evaluation, as PNG and SVG files (matplotlib, optional extra ``plots``).

Every figure is drawn from the arrays the numbers come from: the
precision-recall curves from pycocotools' ``precision[T, R, K, A, M]`` at its
recall points (-1, a class without ground truth, is not drawn), the score
curves from :func:`iou_eval.protocols.tables.f1_sweep`, the bars from the per-class
table and the leaderboard.  matplotlib is imported inside the functions
that draw, with the Agg canvas and no pyplot (no global state), so importing
this module costs nothing and needs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iou_eval.errors import UsageError
from iou_eval.reporters.files import write_whole

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from iou_eval.protocols.tables import ScoreSweep

# Okabe-Ito colours: told apart by colour-blind readers too.
BLUE, ORANGE, GREEN, VERMILION, PURPLE, GREY = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#777777",
)  # fmt: skip
# The lines of a score sweep: (label, colour, the colour's name in titles).
# Vermilion reads as orange on screen: titles say so.
SWEEP_LINES = (("precision", BLUE, "blue"), ("recall", GREEN, "green"), ("F1", VERMILION, "orange"))
# Small multiples beyond this many classes stop being readable: the rest are noted.
MAX_PANELS = 24
# Bars: all classes up to this many, else the best and worst half of it each.
MAX_BARS = 40
# Confusion matrix rows/columns before the remaining classes are folded into one.
MAX_MATRIX_CLASSES = 30
# Cell numbers are printed up to this many rows; beyond, colour alone.
MAX_ANNOTATED = 16
LABEL_CHARS = 28

_RC = {
    # Every recall point stays a vertex: the drawing is the array, not a simplification.
    "path.simplify": False,
    # Text stays text in SVG (searchable, and tests can find class names).
    "svg.fonttype": "none",
    "svg.hashsalt": "iou-eval",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


def _matplotlib() -> Any:
    """The matplotlib package, or a UsageError saying how to install it."""
    try:
        import matplotlib
        from matplotlib.backends import backend_agg  # noqa: F401  (Agg canvas, no display)
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            "plots need matplotlib, which is not installed",
            hint="pip install 'iou-eval[plots]'",
        ) from exc
    return matplotlib


def require_matplotlib() -> None:
    """Raise the UsageError that says how to install matplotlib when it is missing."""
    _matplotlib()


def new_figure(width: float, height: float) -> Figure:
    """A figure ``width`` x ``height`` inches on the Agg canvas, constrained layout."""
    _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


@contextmanager
def _style() -> Iterator[None]:
    matplotlib = _matplotlib()
    with matplotlib.rc_context(_RC):
        yield


def short(name: Any, limit: int = LABEL_CHARS, middle: bool = False) -> str:
    """A label of at most ``limit`` characters (an ellipsis marks a cut).

    ``middle``: cut in the middle, keeping both ends (file names differ at the end).
    """
    # A "$" would start matplotlib's math mode: names are shown as they are.
    text = str(name).replace("$", r"\$")
    if len(text) <= limit:
        return text
    if middle:
        head = (limit - 1) // 2
        return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]
    return text[: limit - 1] + "…"


def save_figure(fig: Figure, outdir: str | os.PathLike, stem: str,
                formats: Sequence[str] = ("png", "svg")) -> list[Path]:  # fmt: skip
    """Write ``fig`` as ``outdir/stem.<format>`` for each format, each file whole or not at all.

    Each goes to a temporary file in ``outdir`` first and is renamed over
    the target, so a reader never sees half a file.
    """
    out = Path(outdir)
    paths = []
    for fmt in formats:
        # No dates or versions in the files: the same run gives the same bytes.
        meta = {"Date": None} if fmt == "svg" else {"Software": None}

        def write(fh: Any, fmt: str = fmt, meta: dict = meta) -> None:
            with _style():
                fig.savefig(fh, format=fmt, metadata=meta)

        paths.append(write_whole(out / f"{stem}.{fmt}", write))
    return paths


# ---------------------------------------------------------------------------
# Precision-recall curves


def pr_slice(precision: np.ndarray, area_index: int = 0, max_dets_index: int = -1) -> np.ndarray:
    """``precision[T, R, K, A, M]`` -> ``[T, R, K]`` at one area range and maxDets."""
    p = np.asarray(precision, dtype=np.float64)
    if p.ndim != 5:
        raise UsageError(f"precision must be [T, R, K, A, M], got shape {p.shape}")
    return p[:, :, :, area_index, max_dets_index]


def mean_defined(values: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """Mean over ``axis`` of the entries > -1 (pycocotools' rule); NaN where none is."""
    ok = values > -1
    n = ok.sum(axis=axis)
    total = np.where(ok, values, 0.0).sum(axis=axis)
    out = np.full(np.shape(n), np.nan)
    np.divide(total, n, out=out, where=n > 0)
    return out


def overall_curves(p: np.ndarray, t50: int | None, overlap: str = "IoU") -> dict[str, np.ndarray]:
    """Mean precision over classes at each recall point: ``{label: [R]}``, NaN = undefined.

    ``p[T, R, K]``.  The mean of a curve over its recall points is then the
    summary's AP50 (IoU 0.5) and AP (mean over thresholds), as pycocotools
    averages the same defined entries.  ``overlap`` names the thresholds'
    measure in the labels (``IoU``, or ``OKS`` for keypoints).
    """
    curves = {}
    if t50 is not None:
        curves[f"{overlap} 0.50"] = mean_defined(p[t50], axis=1)
    curves[f"{overlap} 0.50:0.95 (mean)"] = mean_defined(p.transpose(1, 0, 2), axis=(1, 2))
    return curves


def draw_pr(
    ax: Axes, recall_points: Sequence[float] | np.ndarray, curve: np.ndarray, gid: str, **style: Any
) -> int:
    """One PR curve: a vertex at each defined recall point (NaN and -1 are left out).

    An undefined stretch is a gap in the line, not a bridge over it.
    Returns the number of vertices drawn.
    """
    y = np.where(np.asarray(curve) > -1, curve, np.nan)
    defined = ~np.isnan(y)
    if not defined.any():
        return 0
    (line,) = ax.plot(np.asarray(recall_points, dtype=np.float64), y, **style)
    line.set_gid(gid)
    return int(defined.sum())


def _pr_axes(ax: Axes, title: str, small: bool = False) -> None:
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=8 if small else None)
    if not small:
        ax.set_xlabel("recall")
        ax.set_ylabel("precision (interpolated)")


def _thr_index(iou_thresholds: Sequence[float], value: float) -> int | None:
    hits = np.flatnonzero(np.isclose(np.asarray(iou_thresholds, dtype=np.float64), value))
    return int(hits[0]) if hits.size else None


def figure_pr_overall(p: np.ndarray, iou_thresholds: Sequence[float],
                      recall_points: Sequence[float], subtitle: str = "",
                      overlap: str = "IoU") -> Figure:  # fmt: skip
    """Mean precision over classes against recall, at IoU 0.5 and averaged over thresholds.

    ``p[T, R, K]`` (area all, maxDets 100); the legend gives each curve's
    mean, which is the summary's AP50 / AP.
    """
    fig = new_figure(6.4, 4.8)
    ax = fig.add_subplot()
    curves = overall_curves(p, _thr_index(iou_thresholds, 0.5), overlap)
    styles = {
        f"{overlap} 0.50": dict(color=BLUE, lw=2.2),
        f"{overlap} 0.50:0.95 (mean)": dict(color=ORANGE, lw=2.2),
    }
    for label, curve in curves.items():
        mean = np.nanmean(curve) if np.isfinite(curve).any() else np.nan
        text = f"{label}: AP {mean:.3f}" if np.isfinite(mean) else f"{label}: undefined"
        draw_pr(ax, recall_points, curve, f"pr-overall-{label}", label=text, **styles[label])
    _pr_axes(ax, "Precision-recall, mean over classes" + (f"\n{subtitle}" if subtitle else ""))
    if ax.lines:  # below the axes: a legend never covers a curve
        fig.legend(loc="outside lower center", ncols=2, frameon=False)
    else:
        ax.text(0.5, 0.5, "no class has ground truth: nothing to draw", ha="center")
    return fig


def pick_classes(names: Sequence[str], defined: Any, weight: np.ndarray | None,
                 limit: int) -> tuple[np.ndarray, str]:  # fmt: skip
    """Positions of at most ``limit`` classes to draw, and a note on what was left out.

    Classes with nothing defined are left out; the rest by ``weight``
    descending (ground truths), ties in the given order.
    """
    idx = np.flatnonzero(defined)
    if weight is not None:
        idx = idx[np.argsort(-np.asarray(weight, dtype=np.float64)[idx], kind="stable")]
    note = []
    if len(idx) > limit:
        note.append(f"{limit} of {len(idx)} classes shown" + (
            " (most ground truths)" if weight is not None else ""))  # fmt: skip
        idx = idx[:limit]
    undefined = len(names) - int(defined.sum())
    if undefined:
        note.append(f"{undefined} class(es) without ground truth not drawn")
    return idx, "; ".join(note)


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 6) if n > 4 else max(n, 1)
    return cols, -(-max(n, 1) // cols)


def figure_pr_per_class(p: np.ndarray, iou_thresholds: Sequence[float],
                        recall_points: Sequence[float], names: Sequence[str],
                        class_gt: np.ndarray | None = None, limit: int = MAX_PANELS,
                        overlap: str = "IoU") -> Figure:  # fmt: skip
    """One small panel per class: PR at IoU 0.5 and averaged over thresholds (``p[T, R, K]``)."""
    t50 = _thr_index(iou_thresholds, 0.5)
    defined = (p > -1).any(axis=(0, 1))
    idx, note = pick_classes(names, defined, class_gt, limit)
    cols, rows = _grid(len(idx))
    fig = new_figure(2.2 * cols + 0.4, 2.0 * rows + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    for ax in axes.ravel()[len(idx) :]:
        ax.set_visible(False)
    for ax, k in zip(axes.ravel(), idx, strict=False):
        name = str(names[k])
        mean_t = mean_defined(p[:, :, k].T, axis=1)  # [R]
        if t50 is not None:
            draw_pr(ax, recall_points, p[t50, :, k], f"pr-{name}-iou50", color=BLUE, lw=1.6)
        draw_pr(ax, recall_points, mean_t, f"pr-{name}-coco", color=ORANGE, lw=1.6)
        ap50 = "" if t50 is None else f"AP50 {mean_defined(p[t50, :, k], 0):.2f} · "
        _pr_axes(ax, f"{short(name, 22)}\n{ap50}AP {mean_defined(p[:, :, k], (0, 1)):.2f}", True)
    head = f"Precision-recall per class: blue {overlap} 0.50, orange mean over {overlap} 0.50:0.95"
    fig.suptitle(head + (f"\n{note}" if note else ""), fontsize=10)
    fig.supxlabel("recall", fontsize=9)
    fig.supylabel("precision", fontsize=9)
    if not len(idx):
        fig.text(0.5, 0.5, "no class has ground truth: nothing to draw", ha="center")
    return fig


# ---------------------------------------------------------------------------
# Score threshold curves


def draw_sweep(ax: Axes, sweep: ScoreSweep, gid: str, legend: bool = True) -> None:
    """Precision, recall and F1 against the score cut-off, the best F1 starred.

    Keeping "score >= t" gives the values of the smallest cut-off >= t, so
    each value holds from the next lower score up to its own ("steps-pre"
    over ascending scores).
    """
    order = np.argsort(sweep.scores, kind="stable")
    x = sweep.scores[order]
    lo = min(0.0, float(x.min())) if len(x) else 0.0
    hi = max(1.0, float(x.max())) if len(x) else 1.0
    # Below the lowest score every prediction is kept: the lowest cut's values hold down to lo.
    x = np.r_[lo, x] if len(x) else x
    order = np.r_[order[:1], order] if len(order) else order
    columns = {"precision": sweep.precision, "recall": sweep.recall, "F1": sweep.f1}
    for label, colour, _ in SWEEP_LINES:
        values = columns[label]
        (line,) = ax.plot(x, values[order], drawstyle="steps-pre", color=colour,
                          lw=1.8 if label == "F1" else 1.3, label=label)  # fmt: skip
        line.set_gid(f"{gid}-{label}")
    if len(x):
        i = int(np.argmax(sweep.f1))  # first maximum: the one best_f1 reports
        s, f = float(sweep.scores[i]), float(sweep.f1[i])
        (star,) = ax.plot([s], [f], marker="*", ms=12, color="black", ls="none",
                          label=f"best F1 {f:.3f} @ score {s:.3g}")  # fmt: skip
        star.set_gid(f"{gid}-best")
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, 1.05)
    if legend:  # below the axes: a legend never covers a curve
        ax.figure.legend(loc="outside lower center", ncols=4, fontsize=8, frameon=False)


def figure_sweep_overall(sweep: ScoreSweep, subtitle: str = "") -> Figure:
    """All classes pooled: precision, recall, F1 against the score cut-off."""
    fig = new_figure(6.4, 4.8)
    ax = fig.add_subplot()
    draw_sweep(ax, sweep, "sweep-all")
    ax.set_xlabel("score threshold (keep score ≥ t)")
    ax.set_ylabel("value")
    title = f"Precision, recall and F1 against the score threshold ({sweep.n_gt} ground truths)"
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""))
    return fig


def figure_sweep_per_class(sweeps: Mapping[str, ScoreSweep], limit: int = MAX_PANELS) -> Figure:
    """One panel per class (most ground truths first): precision, recall, F1, best F1 starred."""
    names = list(sweeps)
    defined = np.array([sweeps[n].n_gt > 0 for n in names], dtype=bool)
    weight = np.array([sweeps[n].n_gt for n in names], dtype=np.float64)
    idx, note = pick_classes(names, defined, weight, limit)
    cols, rows = _grid(len(idx))
    fig = new_figure(2.2 * cols + 0.4, 2.0 * rows + 1.1)
    axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
    for ax in axes.ravel()[len(idx) :]:
        ax.set_visible(False)
    for ax, k in zip(axes.ravel(), idx, strict=False):
        sw = sweeps[names[k]]
        draw_sweep(ax, sw, f"sweep-{names[k]}", legend=False)
        i = int(np.argmax(sw.f1)) if len(sw.f1) else -1
        best = f"best F1 {sw.f1[i]:.2f} @ {sw.scores[i]:.2f}" if i >= 0 else "no predictions"
        ax.set_title(f"{short(names[k], 22)}\n{best}", fontsize=8)
    lines = ", ".join(f"{name} {label}" for label, _, name in SWEEP_LINES)
    head = f"Per class against the score threshold: {lines}, ★ best F1"
    fig.suptitle(head + (f"\n{note}" if note else ""), fontsize=10)
    fig.supxlabel("score threshold (keep score ≥ t)", fontsize=9)
    return fig


# ---------------------------------------------------------------------------
# Confusion matrix


def fold_matrix(matrix: np.ndarray, names: Sequence[str],
                limit: int = MAX_MATRIX_CLASSES) -> tuple[np.ndarray, list[str]]:  # fmt: skip
    """Keep the ``limit`` busiest classes; fold the others into one row and column.

    ``matrix[K+1, K+1]``: rows ground truth, columns prediction, the last of
    each background.  Totals are kept (folding sums, it never drops).
    Returns the matrix ``[k+1, k+1]`` and its labels (background last).
    """
    m = np.asarray(matrix, dtype=np.int64)
    k = len(names)
    if m.shape != (k + 1, k + 1):
        raise UsageError(
            f"the confusion matrix must be [K+1, K+1] = [{k + 1}, {k + 1}] for {k} class names, "
            f"got {list(m.shape)}"
        )
    labels = [short(n) for n in names]
    if k <= limit:
        return m, [*labels, "background"]
    busy = m[:k].sum(axis=1) + m[:, :k].sum(axis=0)
    keep = np.sort(np.argsort(-busy, kind="stable")[:limit])
    rest = np.setdiff1d(np.arange(k), keep)
    # Group of each row/column: its own position, "other", or background.
    group = np.empty(k + 1, dtype=np.int64)
    group[keep] = np.arange(limit)
    group[rest] = limit
    group[k] = limit + 1
    out = np.zeros((limit + 2, limit + 2), dtype=np.int64)
    np.add.at(out, (group[:, None], group[None, :]), m)
    return out, [*(labels[i] for i in keep), f"({len(rest)} other classes)", "background"]


def normalize_rows(m: np.ndarray) -> np.ndarray:
    """Each ground-truth row as fractions of its total (rows without any stay 0)."""
    total = m.sum(axis=1, keepdims=True).astype(np.float64)
    return np.divide(m, total, out=np.zeros(m.shape), where=total > 0)


def figure_confusion(matrix: np.ndarray, names: Sequence[str], normalized: bool,
                     limit: int = MAX_MATRIX_CLASSES) -> Figure:  # fmt: skip
    """Heatmap of ``matrix[K+1, K+1]`` (rows ground truth, columns prediction, background last)."""
    m, labels = fold_matrix(matrix, names, limit)
    values = normalize_rows(m) if normalized else m.astype(np.float64)
    n = len(labels)
    side = min(max(4.5, 0.28 * n + 2.4), 13.0)
    fig = new_figure(side + 1.2, side)
    ax = fig.add_subplot()
    ax.grid(False)
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=1 if normalized else None,
                      interpolation="nearest", aspect="equal")  # fmt: skip
    image.set_gid("confusion-cells")
    font = 9 if n <= 12 else (8 if n <= 24 else 7)
    ax.set_xticks(np.arange(n), labels, rotation=90, fontsize=font)
    ax.set_yticks(np.arange(n), labels, fontsize=font)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("ground-truth class")
    if n <= MAX_ANNOTATED:
        _annotate_cells(ax, m, values, normalized)
    fig.colorbar(image, ax=ax, shrink=0.8, label="fraction of the row" if normalized else "count")
    what = "normalized by ground-truth row" if normalized else "counts"
    folded = f"; {labels[-2]} folded together" if len(labels) < len(names) + 1 else ""
    ax.set_title(f"Confusion matrix ({what}{folded})")
    return fig


def _annotate_cells(ax: Axes, counts: np.ndarray, values: np.ndarray, normalized: bool) -> None:
    top = values.max() if values.size else 0
    for (i, j), v in np.ndenumerate(values):
        if counts[i, j] == 0:
            continue
        text = f"{v:.2f}" if normalized else str(int(counts[i, j]))
        dark = top > 0 and v > 0.55 * top
        ax.text(j, i, text, ha="center", va="center", fontsize=8,
                color="white" if dark else "black")  # fmt: skip


# ---------------------------------------------------------------------------
# Bars


def bar_selection(values: np.ndarray, limit: int = MAX_BARS) -> tuple[np.ndarray, int]:
    """Positions of the bars to draw, best first, and how many were left out.

    ``values[N]`` (NaN: undefined, left out).  Up to ``limit`` all are
    drawn; beyond, the ``limit // 2`` best and the ``limit // 2`` worst.
    """
    v = np.asarray(values, dtype=np.float64)
    idx = np.flatnonzero(~np.isnan(v))
    idx = idx[np.argsort(-v[idx], kind="stable")]
    if len(idx) <= limit:
        return idx, 0
    half = limit // 2
    return np.concatenate([idx[:half], idx[-half:]]), len(idx) - 2 * half


def figure_bars(labels: Sequence[Any], values: Sequence[float | None], title: str,
                xlabel: str, limit: int = MAX_BARS, gid: str = "bars",
                what: str = "classes") -> Figure:  # fmt: skip
    """Horizontal bars, best on top, each with its value; undefined values noted below."""
    v = np.array([np.nan if x is None else float(x) for x in values], dtype=np.float64)
    idx, skipped = bar_selection(v, limit)
    rows = len(idx) + (1 if skipped else 0)
    fig = new_figure(7.0, max(2.2, 0.24 * rows + 1.4))
    ax = fig.add_subplot()
    ax.grid(axis="y", visible=False)
    y = np.arange(len(idx), dtype=np.float64)
    if skipped:  # a gap row between the best and the worst half
        y[len(idx) // 2 :] += 1
        ax.text(0.5, len(idx) // 2, f"… {skipped} {what} not shown …", ha="center",
                va="center", color=GREY, transform=ax.get_yaxis_transform())  # fmt: skip
    bars = ax.barh(y, v[idx], color=BLUE, height=0.7)
    for rank, patch in enumerate(bars.patches):
        patch.set_gid(f"{gid}-{rank}")
    ax.bar_label(bars, labels=[f"{x:.3f}" for x in v[idx]], padding=3, fontsize=8)
    ticks = [short(labels[i], LABEL_CHARS + 8, middle=what == "files") for i in idx.tolist()]
    ax.set_yticks(y, ticks, fontsize=8 if rows <= 30 else 7)
    ax.margins(y=0.01)
    ax.invert_yaxis()
    top = float(np.nanmax(v)) if np.isfinite(v).any() else 1.0
    ax.set_xlim(0, max(1.0, top) * 1.1)
    ax.set_xlabel(xlabel)
    undefined = [short(labels[i], 20) for i in np.flatnonzero(np.isnan(v)).tolist()]
    note = ""
    if undefined:
        shown = ", ".join(undefined[:4]) + (", …" if len(undefined) > 4 else "")
        note = f"\nundefined (no ground truth), not drawn: {len(undefined)} ({shown})"
    ax.set_title(title + note)
    if not len(idx):
        ax.text(0.5, 0.5, "nothing defined to draw", ha="center", transform=ax.transAxes)
    return fig


def leaderboard_metric(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The metric a leaderboard is sorted by: its first column after ``file``."""
    for key in records[0] if records else ():
        if key != "file":
            return str(key)
    return None


# ---------------------------------------------------------------------------
# Everything at once


def write_plots(
    outdir: str | os.PathLike,
    *,
    precision: np.ndarray | None = None,
    iou_thresholds: Sequence[float] = (),
    recall_points: Sequence[float] = (),
    class_names: Sequence[str] = (),
    class_gt: Sequence[int] | np.ndarray | None = None,
    area_index: int = 0,
    max_dets_index: int = -1,
    pr_subtitle: str = "area all, maxDets 100",
    overlap: str = "IoU",
    sweeps: Mapping[str, ScoreSweep] | None = None,
    overall_sweep: ScoreSweep | None = None,
    confusion: np.ndarray | None = None,
    confusion_names: Sequence[str] | None = None,
    class_ap: Mapping[str, float | None] | None = None,
    leaderboard: Sequence[Mapping[str, Any]] | None = None,
    formats: Sequence[str] = ("png", "svg"),
    ap_title: str = "AP per class (IoU 0.50:0.95, area all, maxDets 100), best first",
) -> list[Path]:
    """Write every plot the inputs allow into ``outdir``; returns the files written.

    Args:
        precision: pycocotools' ``[T, R, K, A, M]`` (-1: undefined); with
            ``iou_thresholds[T]``, ``recall_points[R]`` and ``class_names[K]``
            -> ``pr_overall`` and ``pr_per_class`` at ``area_index`` (0: all)
            and ``max_dets_index`` (-1: the last, 100), which ``pr_subtitle``
            names; ``overlap`` names the thresholds' measure (``IoU``, ``OKS``).
        class_gt: ``[K]`` ground truths per class, to pick the classes drawn.
        sweeps: class name -> :class:`~iou_eval.protocols.tables.ScoreSweep` ->
            ``score_threshold_per_class``; ``overall_sweep``, all classes
            pooled -> ``score_threshold_all``.
        confusion: ``[K+1, K+1]`` counts, rows ground truth, columns
            prediction, last background; ``confusion_names[K]`` (default
            ``class_names``) -> ``confusion_matrix_counts`` and
            ``confusion_matrix_normalized``.
        class_ap: class name -> AP (None: undefined) -> ``ap_per_class``, under
            ``ap_title`` (the protocol's AP: COCO's by default).
        leaderboard: a batch run's rows (``file`` and metrics, best first)
            -> ``leaderboard``.
        formats: file formats, each a matplotlib format name.

    Each file is written whole (temporary file, then renamed).
    Raises :class:`UsageError` when matplotlib is missing.
    """
    _matplotlib()
    written: list[Path] = []
    for stem, build in _figures(locals()):
        with _style():
            fig = build()
        written += save_figure(fig, outdir, stem, formats)
    return written


def _figures(a: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(file stem, figure builder)`` for each plot the arguments of write_plots allow."""
    if a["precision"] is not None:
        p = pr_slice(a["precision"], a["area_index"], a["max_dets_index"])
        thr, rec, names = a["iou_thresholds"], a["recall_points"], a["class_names"]
        gt = None if a["class_gt"] is None else np.asarray(a["class_gt"])
        if p.shape[:2] != (len(thr), len(rec)) or p.shape[2] != len(names):
            raise UsageError(
                f"precision [T, R, K] is {list(p.shape)} but {len(thr)} IoU thresholds, "
                f"{len(rec)} recall points and {len(names)} class names were given"
            )
        over = a["overlap"]
        yield "pr_overall", lambda: figure_pr_overall(p, thr, rec, a["pr_subtitle"], over)
        yield "pr_per_class", lambda: figure_pr_per_class(p, thr, rec, names, gt, overlap=over)
    if a["overall_sweep"] is not None:
        yield "score_threshold_all", lambda: figure_sweep_overall(a["overall_sweep"])
    if a["sweeps"]:
        yield "score_threshold_per_class", lambda: figure_sweep_per_class(a["sweeps"])
    if a["confusion"] is not None:
        cm_names = a["confusion_names"] if a["confusion_names"] is not None else a["class_names"]
        for stem, norm in (
            ("confusion_matrix_counts", False),
            ("confusion_matrix_normalized", True),
        ):
            yield stem, lambda norm=norm: figure_confusion(a["confusion"], cm_names, norm)
    if a["class_ap"]:
        labels = list(a["class_ap"])
        values = [a["class_ap"][n] for n in labels]
        title = a["ap_title"]
        yield "ap_per_class", lambda: figure_bars(labels, values, title, "AP", gid="ap-bars")
    board = a["leaderboard"]
    metric = leaderboard_metric(board) if board else None
    if board and metric:
        files = [os.path.basename(str(r["file"])) for r in board]
        values = [r.get(metric) for r in board]
        yield (
            "leaderboard",
            lambda: figure_bars(
                files,
                values,
                f"Leaderboard by {metric}",
                metric,
                gid="leaderboard-bars",
                what="files",
            ),
        )
