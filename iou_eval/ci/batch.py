"""Batch scoring: one ground truth, many prediction files, parsed once.

Each prediction file is scored on its own; a file that cannot be read is
reported (file, place, reason) and skipped, and the others still count.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iou_eval.data.dataset import Dataset
from iou_eval.data.doubts import doubts_of
from iou_eval.errors import InputError, IouEvalError
from iou_eval.results import EvaluationResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass
class BatchResult:
    """The outcome of scoring many prediction files.

    Attributes:
        results: file -> its :class:`EvaluationResult`, in the order given.
        errors: ``(file, message)`` for files that could not be scored.
        gt_source: the ground truth's path.
    """

    results: dict[str, EvaluationResult]
    errors: list[tuple[str, str]] = field(default_factory=list)
    gt_source: str = ""

    def leaderboard(self) -> pd.DataFrame:
        """One row per file: headline metrics and counts, best first; a ``doubts`` column
        (how many doubts each file raised) when any did."""
        import pandas as pd

        rows = []
        directions: dict[str, bool] = {}
        for path, r in self.results.items():
            row: dict[str, Any] = {"file": path}
            for pr in r.results:
                for column, key in _leaderboard_columns(pr, r.results):
                    row[column] = pr.summary.get(key)
                    metric = pr.record.metric(pr.protocol, key)
                    directions.setdefault(column, metric is None or metric.higher_is_better)
            p = r.inputs["predictions"]
            row["predictions"] = p["boxes"]
            row["TP"] = int(r.per_class["TP"].sum())
            row["FP"] = int(r.per_class["FP"].sum())
            row["FN"] = int(r.per_class["FN"].sum())
            row["passed"] = None if not r.checks else not r.failed_checks
            # Doubts about how the file was read: its numbers may be wrong.
            row["doubts"] = len(set(doubts_of(r.warnings)))
            rows.append(row)
        df = pd.DataFrame(rows)
        if df.empty:
            return pd.DataFrame(columns=["file"])
        if all(v is None for v in df["passed"]):
            df = df.drop(columns="passed")
        if not df["doubts"].any():
            df = df.drop(columns="doubts")
        sort_key = next(c for c in df.columns if c not in ("file",))
        # Best first, in the metric's own direction (LRP: lower is better).
        return df.sort_values(
            sort_key, ascending=not directions.get(sort_key, True), kind="stable",
            na_position="last",
        ).reset_index(drop=True)  # fmt: skip

    def per_class_ap(self) -> pd.DataFrame:
        """AP per class (rows) and file (columns), of the first protocol."""
        import pandas as pd

        frames = {}
        for path, r in self.results.items():
            pr = r.primary
            metric = pr.record.metric(pr.protocol, pr.record.headline[0])
            column = metric.per_class if metric is not None and metric.per_class else "AP"
            frames[path] = r.per_class.set_index("class")[column]
        if not frames:
            return pd.DataFrame()
        df = pd.DataFrame(frames)
        df.index.name = "class"
        return df.reset_index()

    @property
    def failed_checks(self) -> list[tuple[str, Any]]:
        return [(p, c) for p, r in self.results.items() for c in r.failed_checks]


def _leaderboard_columns(pr: Any, results: Sequence[Any]) -> list[tuple[str, str]]:
    """``(column, summary key)`` of one protocol's numbers in a leaderboard row.

    A protocol with a grid of numbers (its record's leaderboard keys) keeps
    their plain names, masks and keypoints prefixed by the iou type, and a
    second protocol beside the first by its name; a protocol of one headline
    number is named by its label when there are several results.
    """
    record, p = pr.record, pr.protocol
    if record.leaderboard is None:
        keys = record.headline
        return [(k if len(results) == 1 else f"{p.label} {k}", k) for k in keys]
    tag = "" if p.iou_type == "bbox" else f"{p.iou_type} "
    if len(results) > 1 and p.name != results[0].protocol.name:
        tag = f"{p.name} {tag}"  # beside the first protocol's numbers of the same names
    return [(tag + k, k) for k in record.leaderboard_keys(p)]


def prediction_files(paths: Sequence[str]) -> list[str]:
    """Expand folders of prediction JSON files into their files (sorted)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p) and is_batch_folder(p):
            out += [os.path.join(p, f) for f in _visible(p) if f.lower().endswith(".json")]
        else:
            out.append(p)
    return out


def stray_files(paths: Sequence[str]) -> list[str]:
    """The files of the batch folders in ``paths`` that are not scored (not ``.json``)."""
    return [
        os.path.join(p, f)
        for p in paths
        if os.path.isdir(p) and is_batch_folder(p)
        for f in _visible(p)
        if not f.lower().endswith(".json") and os.path.isfile(os.path.join(p, f))
    ]


def _visible(folder: str) -> list[str]:
    # Hidden names (.DS_Store, macOS's ._x.json) are never a model's output.
    from iou_eval.io.source import list_folder

    return sorted(f for f in list_folder(folder) if not f.startswith("."))


def is_batch_folder(path: str) -> bool:
    """A folder of ``.json`` files, one model output per file.

    Notes beside them (``notes.txt``, ``README.md``) do not make it another
    format: it is a batch unless it holds ``.xml`` files, has more ``.txt``
    files than ``.json`` files (per-image label files), or is a LabelMe folder.
    """
    if not os.path.isdir(path):
        return False
    names = _visible(path)
    exts = [os.path.splitext(f)[1].lower() for f in names]
    n_json, n_txt = exts.count(".json"), exts.count(".txt")
    if not n_json or ".xml" in exts or n_txt > n_json:
        return False
    from iou_eval.io.loaders.labelme import looks_like_labelme

    return not looks_like_labelme(path)


def run_batch(
    gt: Dataset,
    pred_paths: Sequence[str],
    score: Callable[[str], EvaluationResult],
    progress: Callable[[int], None] | None = None,
) -> BatchResult:
    """Score every file with ``score(path)``; collect bad files instead of stopping."""
    results: dict[str, EvaluationResult] = {}
    errors: list[tuple[str, str]] = []
    for path in pred_paths:
        try:
            if path in results:
                raise InputError(path, "given twice")
            results[path] = score(path)
        except IouEvalError as exc:
            errors.append((path, exc.format()))
        if progress is not None:
            progress(1)
    return BatchResult(results=results, errors=errors, gt_source=gt.source)


def run_batch_parts(
    executor: Any,
    gt: Dataset,
    pred_paths: Sequence[str],
    options: Any,
    judge: Callable[[EvaluationResult], EvaluationResult] = lambda r: r,
    progress: Callable[[int], None] | None = None,
) -> BatchResult:
    """:func:`run_batch` with one task per prediction file on ``executor`` (a Dask cluster).

    The ground truth, parsed once here, is shared once with every worker;
    each task reads its file where it runs (a remote worker must see the
    path) and scores it in one process there.  ``judge`` (gates, baseline)
    runs here.  Reports, errors included, are those of :func:`run_batch`.
    """
    from iou_eval.options import EvalOptions

    distinct = list(dict.fromkeys(pred_paths))
    on_worker = EvalOptions.of(options, workers=1, dask=None)
    done = executor.run(
        score_file,
        (gt, on_worker),
        distinct,
        progress=(lambda _i: progress(1)) if progress is not None else None,
    )
    by_path = dict(zip(distinct, done, strict=True))

    def take(path: str) -> EvaluationResult:
        outcome = by_path[path]
        if isinstance(outcome, IouEvalError):
            raise outcome
        return judge(outcome)

    return run_batch(gt, pred_paths, take)


def score_file(shared: tuple[Dataset, Any], path: str) -> EvaluationResult | IouEvalError:
    """One prediction file scored against the shared ground truth; its error as a value (a part)."""
    from iou_eval.api import evaluate

    gt, options = shared
    try:
        return evaluate(gt, path, options, warn=False)
    except IouEvalError as exc:
        return exc
