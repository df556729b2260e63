"""``iou-eval eval`` (the default command): score one or many prediction files against a ground truth."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import click

from iou_eval.cli.common import (
    EPILOG,
    INPUT_PATH,
    SLOTS,
    SORT_CHOICES,
    StrictInt,
    annotate,
    check_output,
    cluster_for,
    emit,
    eval_output_options,
    lenient,
    progress_bar,
    record_options,
    run_guarded,
    say,
    stderr_is_terminal,
    strict_doubts,
    tqdm_class,
    warn,
)
from iou_eval.cli.outcome import Outcome
from iou_eval.errors import InputError, UsageError
from iou_eval.io.option_files import resolve
from iou_eval.options import (
    AnalysisOptions,
    BootstrapOptions,
    EvalOptions,
    PointOptions,
    ProtocolOptions,
    ReadOptions,
    RuntimeOptions,
    from_cli,
)


@click.command("eval", epilog=EPILOG)
@click.argument("gt", metavar="GROUND_TRUTH", type=INPUT_PATH)
@click.argument("preds", metavar="PREDICTIONS...", nargs=-1, required=True, type=INPUT_PATH)
@record_options(ReadOptions, ProtocolOptions, PointOptions, AnalysisOptions)
@click.option(
    "--sort",
    type=click.Choice(SORT_CHOICES),
    default="errors",
    show_default=True,
    help="Order of the per-image table: most errors first, by image id, or by a column.",
)
@click.option(
    "--worst",
    type=StrictInt(low=1),
    metavar="N",
    help="Show only the N worst images (in --sort order).",
)
@eval_output_options
@click.option(
    "--plots",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Also write the plots (PR curves, score thresholds, AP bars; a batch's leaderboard) "
    "as PNG and SVG into DIR (matplotlib: pip install 'iou-eval[plots]').",
)
@click.option(
    "--fail-under",
    multiple=True,
    metavar="EXPR",
    help="Gate: fail (exit 3) when a metric is below a value. Repeatable: "
    "AP=0.45, AP50=0.6, AP[person]=0.5, voc12:mAP=0.7, AP@night=0.4 (a --slices slice).",
)
@click.option(
    "--fail-over",
    multiple=True,
    metavar="EXPR",
    help="Gate on a metric where lower is better: fail (exit 3) when it is above a value. "
    "Repeatable: lrp:moLRP=0.7, oLRP[person]=0.6.",
)
@click.option(
    "--baseline",
    type=INPUT_PATH,
    metavar="FILE",
    help="An earlier JSON result: fail (exit 3) when a metric drops more than --max-drop.",
)
@click.option(
    "--max-drop",
    default="0",
    show_default=True,
    metavar="AMOUNT",
    help="Allowed drop against --baseline: absolute (0.01) or relative (2%).",
)
@record_options(BootstrapOptions)
@click.option(
    "--fail-if-significant",
    is_flag=True,
    help="With --bootstrap: a gate or a drop fails only when its interval says it is not noise.",
)
@click.option(
    "--annotations",
    type=click.Choice(["github"]),
    help="Also print failed checks as GitHub Actions ::error:: annotations "
    "(doubts about the input as ::warning::, ::error:: under --strict).",
)
@click.option(
    "--junit",
    "junit_out",
    metavar="FILE",
    help="Also write a JUnit XML report to FILE (a test case per gate; GitLab, Jenkins), "
    "beside --format's report.",
)
@click.option(
    "--json",
    "json_out",
    metavar="FILE",
    help="Also write the JSON report to FILE (a later --baseline), beside --format's report.",
)
@record_options(RuntimeOptions)
def eval_command(gt: str, preds: tuple[str, ...], **opts: Any) -> None:
    """Evaluate PREDICTIONS against GROUND_TRUTH.

    Formats are detected from content: COCO JSON (dataset or results list),
    Pascal VOC XML (a folder or a file), CSV/TSV with a header, per-image
    text files, devkit results files.  Several prediction files (or a folder
    of .json files) are scored as a batch against one parse of the ground
    truth, with a leaderboard.
    """
    code = run_guarded(_eval, gt, preds, **opts)
    sys.exit(code)


def eval_options(o: dict[str, Any]) -> EvalOptions:
    """The evaluation's option records from click's values, each parsed once.

    The matches' accumulation inputs (hundreds of megabytes at millions of
    predictions) are kept only where something reads them: ``--bootstrap``,
    the analyses, plots and the HTML report.
    """
    opts = EvalOptions(**{slot: from_cli(record, o) for slot, record in SLOTS.items()})
    pictures = bool(o.get("plots")) or o.get("out_format") == "html"
    return resolve(EvalOptions.of(opts, keep_accumulation=pictures))


# Inputs this large take a second or more: show which stage the run is in.
LONG_RUN_BYTES = 16 << 20


class _StageBar:
    """A tqdm bar over a run's stages (reading, each protocol, the report)."""

    def __init__(self, paths: Sequence[str], n_protocols: int, enabled: bool) -> None:
        self.bar = None
        size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
        if enabled and size >= LONG_RUN_BYTES and stderr_is_terminal():
            tqdm = tqdm_class()
            self.bar = tqdm(
                total=n_protocols + 2,
                desc="starting",
                file=sys.stderr,
                leave=False,
                bar_format="{desc}: {n_fmt}/{total_fmt} stages |{bar}| {elapsed}",
            )
        self.started = False

    def stage(self, name: str) -> None:
        if self.bar is None:
            return
        if self.started:
            self.bar.update(1)
        self.started = True
        self.bar.set_description(name)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _gates(o: dict[str, Any]):
    """A function that judges a result by the gates and baseline the options name."""
    from iou_eval.numbers import parse_max_drop

    if not (o["fail_under"] or o.get("fail_over") or o["baseline"]):
        # Nothing to judge: the checks' wing stays unread (the same refusals, in the same order).
        parse_max_drop(o["max_drop"])
        if o["max_drop"] != "0":
            raise UsageError("--max-drop needs --baseline")
        if o["fail_if_significant"] and not o["bootstrap"]:
            raise UsageError("--fail-if-significant needs --bootstrap N")
        return _unjudged
    from iou_eval.ci.gates import check_gates, compare_baseline, load_baseline, parse_gate
    from iou_eval.results import Verdict

    gates = [parse_gate(t) for t in o["fail_under"]]
    gates += [parse_gate(t, over=True) for t in o.get("fail_over", ())]
    max_drop = parse_max_drop(o["max_drop"])
    if o["max_drop"] != "0" and not o["baseline"]:
        raise UsageError("--max-drop needs --baseline")
    if o["fail_if_significant"] and not o["bootstrap"]:
        raise UsageError("--fail-if-significant needs --bootstrap N")
    baseline = load_baseline(o["baseline"]) if o["baseline"] else None
    significant = o["fail_if_significant"]

    def judge(result):
        checks = check_gates(result, gates, significant) if gates else []
        if baseline is not None:
            checks += compare_baseline(result, baseline, o["baseline"], max_drop, significant)
        return result.judged(Verdict(tuple(checks)))

    return judge


def _unjudged(result):
    """A result judged by no gate and no baseline: as it is (its verdict holds no check)."""
    return result


def _eval(gt: str, preds: tuple[str, ...], **o: Any) -> int:
    from iou_eval.ci.batch import is_batch_folder, prediction_files
    from iou_eval.io.loaders.registry import find as find_format
    from iou_eval.reporters import OutputFormat

    o["protected"] = (
        gt,
        *preds,
        o["baseline"],
        o["names"],
        o["oi_hierarchy"],
        o["oi_image_labels"],
    )
    for path in _report_paths(o):
        check_output(path, o["protected"])
    options = eval_options(o)
    if gt == "-" and "-" in preds or preds.count("-") > 1:
        raise UsageError("standard input (-) can stand for one input only")
    judge = _gates(o)
    fmt = OutputFormat(o["out_format"])

    def batch(p: str) -> bool:
        # A folder of LabelMe files (is_batch_folder says so) or of a named
        # format whose folders are not batches is one input, not a batch.
        named = options.read.pred_format
        found = find_format(named)
        return is_batch_folder(p) and (named is None or (found is not None and found.batch_folder))

    files = [f for p in preds for f in (prediction_files([p]) if batch(p) else [p])]
    is_batch = len(files) != 1 or any(batch(p) for p in preds)
    _check_pictures(o, fmt, is_batch)
    if is_batch:
        return _eval_batch(gt, preds, files, options, judge, fmt, o).exit_code
    return _eval_one(gt, files[0], options, judge, fmt, o).exit_code


def _check_pictures(o: dict[str, Any], fmt, batch: bool) -> None:
    """--plots needs matplotlib (said before any work)."""
    if o["plots"]:
        from iou_eval.reporters.plots import require_matplotlib

        require_matplotlib()


def _plot_files(write, o: dict[str, Any]) -> tuple[str, ...] | None:
    """The files --plots DIR wrote (``write(DIR)``), or None without --plots."""
    return tuple(str(p) for p in write(o["plots"])) if o["plots"] else None


def _machine(fmt) -> bool:
    from iou_eval.reporters import OutputFormat

    # HTML on stdout is a page: no workflow commands among its lines.
    return fmt in (OutputFormat.JSON, OutputFormat.CSV, OutputFormat.HTML, OutputFormat.JUNIT)


# The reports beside --format's: option -> format.
EXTRA_REPORTS = {"json_out": "json", "junit_out": "junit"}
FLAGS = {"output": "-o", "json_out": "--json", "junit_out": "--junit"}


def _report_paths(o: dict[str, Any]) -> list[str]:
    """The files -o, --json and --junit name, refused (exit 2) when two reports would meet.

    ``-o`` absent is standard output; two reports on standard output, or
    two in one file, would make neither readable.
    """
    from iou_eval.escape import for_terminal
    from iou_eval.io.output import DEV_NULL, STDOUT_NAMES

    taken: dict[str, str] = {}
    for key, flag in FLAGS.items():
        path = o[key]
        if key != "output" and not path:
            continue
        where = "-" if not path or path in STDOUT_NAMES else os.path.abspath(path)
        if where in taken and path != DEV_NULL:
            said = "standard output" if where == "-" else for_terminal(path)
            raise UsageError(f"{flag} {said}: {taken[where]} writes there already")
        taken[where] = flag
    return [o[key] for key in FLAGS if o[key]]


def _reports(o: dict[str, Any], fmt, render) -> list[tuple[str | None, str, str]]:
    """``(path, text, format)`` of --format's report and of --json's and --junit's.

    All are rendered before any is written: a failing reporter leaves no
    report behind.  ``render(format)``: the text of the run in that format.
    """
    from iou_eval.reporters import OutputFormat

    out = [(o["output"], render(fmt), fmt.value)]
    for key, name in EXTRA_REPORTS.items():
        if o[key]:
            extra = OutputFormat(name)
            out.append((o[key], render(extra), extra.value))
    return out


def _write_reports(reports: list[tuple[str | None, str, str]], o: dict[str, Any]) -> bool:
    """Write the reports; True when one of them is a machine format on standard output."""
    from iou_eval.io.output import STDOUT_NAMES
    from iou_eval.reporters import OutputFormat

    stdout_taken = False
    for path, text, fmt in reports:
        emit(text, path, o["protected"], fmt)
        on_stdout = not path or path in STDOUT_NAMES
        stdout_taken |= on_stdout and _machine(OutputFormat(fmt))
    return stdout_taken


def _doubt_annotations(warnings: Sequence[str], strict: bool) -> list[str]:
    """``::warning::`` workflow commands for the doubts (``::error::`` under --strict), once each."""
    from iou_eval.data.doubts import doubts_of
    from iou_eval.escape import workflow_command

    command = "error" if strict else "warning"
    return [
        workflow_command(command, d, title="iou-eval doubt")
        for d in dict.fromkeys(doubts_of(warnings))
    ]


def _eval_one(gt: str, pred: str, options: EvalOptions, judge, fmt, o: dict[str, Any]) -> Outcome:
    from iou_eval.api import evaluate
    from iou_eval.reporters import OutputFormat, View, renderer
    from iou_eval.reporters.report import write_run_plots

    strict, options = lenient(options)
    n_protocols = len(options.protocol.protocol)
    n_boot = options.bootstrap.bootstrap
    show = not o["quiet"] and not _machine(fmt)
    stages = _StageBar((gt, pred), n_protocols, show and not n_boot)
    bar = progress_bar(n_boot * n_protocols, "bootstrap", show, unit="resample")
    start = time.perf_counter()
    try:
        with cluster_for(options, show) as client:
            result = judge(
                evaluate(gt, pred, options, on_stage=stages.stage, client=client, warn=False,
                         progress=bar.update if bar is not None else None)
            )  # fmt: skip
        seconds = time.perf_counter() - start
        stages.stage("writing the report")
        plots = _plot_files(lambda d: write_run_plots(result, d), o)
        # --images also draws the worst images into an HTML report (one run).
        drawn_from = o["images"] if fmt is OutputFormat.HTML else None
        view = View(sort=o["sort"], worst=o["worst"], images=drawn_from, plot_files=plots,
                    strict=strict, seconds=seconds)  # fmt: skip
        reports = _reports(o, fmt, lambda f: renderer(f)(result, view))
    finally:
        stages.close()
        if bar is not None:
            bar.close()
    warn(result.warnings, o["quiet"])
    stdout_taken = _write_reports(reports, o)
    if o["annotations"]:
        from iou_eval.ci.gates import github_annotations

        lines = github_annotations(list(result.checks))
        annotate(lines + _doubt_annotations(result.warnings, strict), stdout_taken)
    doubts = strict_doubts(strict, result.warnings)
    return Outcome(failed_checks=len(result.failed_checks), doubts=doubts)


def _eval_batch(
    gt: str, preds: tuple[str, ...], files: list[str], options: EvalOptions, judge, fmt,
    o: dict[str, Any],
) -> Outcome:  # fmt: skip
    import dataclasses

    from iou_eval.api import evaluate, load
    from iou_eval.ci.batch import run_batch, run_batch_parts, stray_files
    from iou_eval.ci.gates import github_annotations
    from iou_eval.reporters import OutputFormat
    from iou_eval.reporters.batch import render_batch
    from iou_eval.reporters.junit import render_batch_junit
    from iou_eval.reporters.report import write_batch_plots

    if not files:
        raise InputError(preds[0], "no prediction files (.json) in this folder")
    strict, options = lenient(options)
    for stray in stray_files(preds):
        if not o["quiet"]:
            say(f"iou-eval: warning: {stray}: not a .json file; skipped")
    gt_ds = load(
        gt, "gt", options.read.gt_format, read=options.read, masks=options.protocol.masks,
        keypoints=options.protocol.keypoints,
    )  # fmt: skip
    show = not o["quiet"] and not _machine(fmt)
    bar = progress_bar(len(files), "scoring", show)
    seconds: dict[str, float] = {}

    def score(path: str):
        start = time.perf_counter()
        # A batch keeps every file's numbers, not its boxes (nothing is drawn).
        result = dataclasses.replace(
            judge(evaluate(gt_ds, path, options, warn=False)), alignment=None
        )
        seconds[path] = time.perf_counter() - start
        return result

    try:
        with cluster_for(options, show) as client:
            if client is not None:  # one task per file, the ground truth shared once
                outcome = run_batch_parts(client, gt_ds, files, options, judge,
                                          progress=bar.update if bar is not None else None)  # fmt: skip
            else:
                outcome = run_batch(
                    gt_ds, files, score, progress=bar.update if bar is not None else None
                )
    finally:
        if bar is not None:
            bar.close()
    # The ground truth's warnings come with every file: say them once.
    seen = dict.fromkeys(w for r in outcome.results.values() for w in r.warnings)
    warn(list(seen), o["quiet"])
    for _path, message in outcome.errors:
        say(f"iou-eval: error: {message} (skipped)")
    plots = _plot_files(lambda d: write_batch_plots(outcome, d), o)

    def render(f: OutputFormat) -> str:
        if f is OutputFormat.JUNIT:
            return render_batch_junit(outcome, strict, seconds)
        return render_batch(outcome, f, plots)

    stdout_taken = _write_reports(_reports(o, fmt, render), o)
    # The ground truth's doubts come with every file: count them once.
    warnings = [w for r in outcome.results.values() for w in r.warnings]
    if o["annotations"]:
        lines = [ln for r in outcome.results.values() for ln in github_annotations(list(r.checks))]
        annotate(lines + _doubt_annotations(warnings, strict), stdout_taken)
    doubts = strict_doubts(strict, warnings)
    return Outcome(
        unreadable=len(outcome.errors), failed_checks=len(outcome.failed_checks), doubts=doubts
    )
