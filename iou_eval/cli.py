"""The ``iou-eval`` command line: the only module that prints or exits.

Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import click

from . import __version__
from .errors import EXIT_INPUT, InputError, IouEvalError, UsageError
from .options import (
    BOX_FORMATS,
    AnalysisOptions,
    BootstrapOptions,
    Cli,
    EvalOptions,
    PointOptions,
    ProtocolOptions,
    ReadOptions,
    RuntimeOptions,
    cli_fields,
    from_cli,
)
from .outcome import Outcome

OUTPUT_FORMATS = ["table", "markdown", "csv", "json"]
# The evaluation's reports also come as a self-contained page.
EVAL_FORMATS = [*OUTPUT_FORMATS, "html"]
SORT_CHOICES = ["errors", "image", "FP", "FN", "precision", "recall", "F1", "mean_IoU"]

EPILOG = """\b
Examples:
  iou-eval gt.json preds.json
  iou-eval gt.json preds.json --format json -o result.json
  iou-eval annotations/ predictions.csv --protocol voc07,voc12
  iou-eval gt.json preds.json --iou-thr 0.75 --worst 10
  iou-eval gt.json preds.json -f html -o report.html --plots plots/ --images images/
  iou-eval draw gt.json preds.json --images images/ -o drawn/ --worst 20
  iou-eval gt.json preds.json --tide --confusion --calibration
  iou-eval gt.json preds.json --slices slices.csv --fail-under AP@night=0.4

\b
Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed.
"""


class DefaultGroup(click.Group):
    """A group whose ``eval`` command runs when no command name is given."""

    default_command = "eval"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        elif not args:
            args = ["--help"]
        return super().parse_args(ctx, args)


def tune_allocator() -> None:
    """Let glibc keep and reuse freed memory instead of returning it to the OS.

    A COCO-sized run allocates and frees hundreds of megabytes of numpy
    temporaries; by default each large one is a fresh mmap whose pages fault
    in again (about a tenth of the run's time here).  Arrays up to 64 MiB
    (a column of eight million rows) come from the reused heap, and up to
    128 MiB of it stays mapped; larger ones, which only runs of tens of
    millions of predictions make, are mapped and returned as before, so the
    memory kept for reuse stays small beside them (at ten million
    predictions 256/512 MiB thresholds cost 400 MB more).  A process-wide
    choice, so the command line makes it, not the library; a no-op off glibc.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # from <malloc.h>
        libc.mallopt(m_mmap_threshold, 64 << 20)
        libc.mallopt(m_trim_threshold, 128 << 20)
    except (OSError, AttributeError):  # not glibc: keep the defaults
        pass


def run_guarded(fn, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn``; turn iou-eval's errors into a message and an exit code."""
    tune_allocator()
    try:
        with warnings.catch_warnings():
            # numpy's divide/invalid warnings are about intermediate NaNs the
            # results already turn into "undefined"; they are not the user's news.
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs)
    except IouEvalError as exc:
        say(f"iou-eval: error: {exc.format()}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        say("iou-eval: interrupted")
        sys.exit(130)
    except MemoryError:
        say("iou-eval: error: out of memory")
        sys.exit(EXIT_INPUT)


# A message line longer than this is cut in the middle: a token quoted from a
# file (a 10 MB CSV cell) must not flood the terminal.
MAX_MESSAGE_LINE = 2000


def terminal_text(text: str, cap: int | None = None) -> str:
    """``text`` safe for a terminal or a CI log, line by line (see :func:`escape.for_terminal`).

    Control characters become visible escapes and no line can be read as a
    GitHub workflow command; ``cap``: the longest line kept whole.
    """
    from .escape import for_terminal

    lines = []
    for line in text.split("\n"):
        shown = for_terminal(line)
        if cap is not None and len(shown) > cap:
            half = cap // 2
            shown = f"{shown[:half]} … ({len(line):,} characters) … {shown[-half:]}"
        lines.append(shown)
    return "\n".join(lines)


def say(message: str) -> None:
    """One message on stderr, escaped and capped."""
    click.echo(terminal_text(message, MAX_MESSAGE_LINE), err=True)


def eval_output_options(fn):
    """--format (html too), --output and --quiet of the evaluation."""
    return output_options(fn, EVAL_FORMATS)


def output_options(fn, formats: Sequence[str] = OUTPUT_FORMATS):
    """--format, --output and --quiet, shared by every command."""
    fn = click.option("--quiet", "-q", is_flag=True, help="Do not print warnings or progress.")(fn)
    fn = click.option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE (whole or not at all) instead of stdout.",
    )(fn)
    return click.option(
        "--format",
        "-f",
        "out_format",
        type=click.Choice(list(formats)),
        default="table",
        show_default=True,
        help="Report format.",
    )(fn)


def _click_option(name: str, cli: Cli, default: str | None = None):
    """One click option from a record field's command-line form (values stay text).

    ``default``: this command's own default, as text (None: the record's).
    """
    decls = [cli.flag, *([cli.short] if cli.short else []), name]
    if cli.is_flag:
        return click.option(*decls, is_flag=True, help=cli.help)
    choices = cli.choices_from() if cli.choices_from else cli.choices
    return click.option(
        *decls,
        type=click.Choice(list(choices)) if choices else str,
        default=default if default is not None else cli.cli_default,
        metavar=cli.metavar,
        envvar=cli.envvar,
        show_default=(default or cli.cli_default) is not None,
        help=cli.help,
    )


def record_options(*records: type, defaults: dict[str, str] | None = None):
    """Every command-line option of the option records, in field order.

    ``defaults``: field name -> this command's default as text.
    """

    def apply(fn):
        for record in reversed(records):
            for name, cli, _ in reversed(cli_fields(record)):
                fn = _click_option(name, cli, (defaults or {}).get(name))(fn)
        return fn

    return apply


# Input paths are text: whether a file can be read is the loaders' to say
# (exit 1, as for any input problem), not click's (it would exit 2).
INPUT_PATH = click.Path(readable=False)


class StrictInt(click.ParamType):
    """An integer written with ASCII digits only (``int('٣')`` is 3 in Python), within bounds."""

    name = "integer"

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from .numbers import parse_int

        if isinstance(value, int) and not isinstance(value, bool):
            return value
        flag = param.opts[0] if param is not None and param.opts else "value"
        try:
            return parse_int(str(value), flag, low=self.low, high=self.high)
        except UsageError as exc:
            self.fail(exc.message.split(": ", 1)[-1], param, ctx)


SLOTS = {"read": ReadOptions, "protocol": ProtocolOptions, "point": PointOptions,
         "bootstrap": BootstrapOptions, "runtime": RuntimeOptions,
         "analysis": AnalysisOptions}  # fmt: skip


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from .kernel import describe

    click.echo(f"iou-eval, version {__version__}\n{describe()}")
    ctx.exit()


@click.group(
    cls=DefaultGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Show the version (and which mask kernel runs) and exit.",
)  # fmt: skip
def main() -> None:
    """Score object detections against ground truth, exactly as pycocotools and
    the Pascal VOC devkit do.

    Run `iou-eval GT PREDICTIONS [options]` (the `eval` command), or
    `iou-eval eval --help` for every option.
    """


@main.command("eval", epilog=EPILOG)
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
    help="Also print failed checks as GitHub Actions ::error:: annotations.",
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
    return EvalOptions.of(opts, keep_accumulation=pictures)


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def _tqdm():
    from tqdm import tqdm

    # No monitor thread: worker processes are forked while a bar is shown.
    tqdm.monitor_interval = 0
    return tqdm


def _progress(total: int, desc: str, enabled: bool, unit: str = "file"):
    """A tqdm bar on stderr when it is a terminal, else None."""
    if not enabled or total < 2 or not _stderr_is_terminal():
        return None
    tqdm = _tqdm()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)


# Inputs this large take a second or more: show which stage the run is in.
LONG_RUN_BYTES = 16 << 20


class _StageBar:
    """A tqdm bar over a run's stages (reading, each protocol, the report)."""

    def __init__(self, paths: Sequence[str], n_protocols: int, enabled: bool) -> None:
        self.bar = None
        size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
        if enabled and size >= LONG_RUN_BYTES and _stderr_is_terminal():
            tqdm = _tqdm()
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


@contextlib.contextmanager
def _cluster(options: EvalOptions, show: bool):
    """The Dask executor that --dask names, for the whole command (None without --dask).

    Its tasks show as a progress bar on a terminal.
    """
    if options.runtime.dask is None:
        yield None
        return
    from .cluster import executor_for

    def bar(total: int, desc: str):
        return _progress(total, desc, show, unit="task")

    with executor_for(options.runtime.dask, bar=bar) as executor:
        yield executor


def _gates(o: dict[str, Any]):
    """A function that judges a result by the gates and baseline the options name."""
    from .gates import check_gates, compare_baseline, load_baseline, parse_gate
    from .numbers import parse_max_drop
    from .results import Verdict

    gates = [parse_gate(t) for t in o["fail_under"]]
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


def _eval(gt: str, preds: tuple[str, ...], **o: Any) -> int:
    from .batch import is_batch_folder, prediction_files
    from .reporters import OutputFormat

    o["protected"] = (gt, *preds, o["baseline"], o["names"])
    _check_output(o["output"], o["protected"])
    options = eval_options(o)
    if gt == "-" and "-" in preds or preds.count("-") > 1:
        raise UsageError("standard input (-) can stand for one input only")
    judge = _gates(o)
    fmt = OutputFormat(o["out_format"])

    def batch(p: str) -> bool:
        # A folder of LabelMe files (is_batch_folder says so) or of a named
        # non-COCO format is one input, not a batch.
        fmt = options.read.pred_format
        return is_batch_folder(p) and fmt in (None, "coco")

    files = [f for p in preds for f in (prediction_files([p]) if batch(p) else [p])]
    is_batch = len(files) != 1 or any(batch(p) for p in preds)
    _check_pictures(o, fmt, is_batch)
    if is_batch:
        return _eval_batch(gt, preds, files, options, judge, fmt, o).exit_code
    return _eval_one(gt, files[0], options, judge, fmt, o).exit_code


def _check_pictures(o: dict[str, Any], fmt, batch: bool) -> None:
    """--plots needs matplotlib (said before any work)."""
    if o["plots"]:
        from .reporters.plots import require_matplotlib

        require_matplotlib()


def _plot_files(write, o: dict[str, Any]) -> tuple[str, ...] | None:
    """The files --plots DIR wrote (``write(DIR)``), or None without --plots."""
    return tuple(str(p) for p in write(o["plots"])) if o["plots"] else None


def _machine(fmt) -> bool:
    from .reporters import OutputFormat

    # HTML on stdout is a page: no workflow commands among its lines.
    return fmt in (OutputFormat.JSON, OutputFormat.CSV, OutputFormat.HTML)


def _eval_one(gt: str, pred: str, options: EvalOptions, judge, fmt, o: dict[str, Any]) -> Outcome:
    from .api import evaluate
    from .gates import github_annotations
    from .reporters import OutputFormat, View, renderer
    from .reporters.report import write_run_plots

    strict, options = _lenient(options)
    n_protocols = len(options.protocol.protocol)
    n_boot = options.bootstrap.bootstrap
    show = not o["quiet"] and not _machine(fmt)
    stages = _StageBar((gt, pred), n_protocols, show and not n_boot)
    bar = _progress(n_boot * n_protocols, "bootstrap", show, unit="resample")
    try:
        with _cluster(options, show) as client:
            result = judge(
                evaluate(gt, pred, options, on_stage=stages.stage, client=client,
                         progress=bar.update if bar is not None else None)
            )  # fmt: skip
        stages.stage("writing the report")
        plots = _plot_files(lambda d: write_run_plots(result, d), o)
        # --images also draws the worst images into an HTML report (one run).
        drawn_from = o["images"] if fmt is OutputFormat.HTML else None
        view = View(sort=o["sort"], worst=o["worst"], images=drawn_from, plot_files=plots)
        text = renderer(fmt)(result, view)
    finally:
        stages.close()
        if bar is not None:
            bar.close()
    _warn(result.warnings, o["quiet"])
    _emit(text, o["output"], o["protected"], fmt.value)
    _annotate(
        github_annotations(list(result.checks)) if o["annotations"] else [],
        _machine(fmt) and not o["output"],
    )
    doubts = _strict_doubts(strict, result.warnings)
    return Outcome(failed_checks=len(result.failed_checks), doubts=doubts)


def _eval_batch(
    gt: str, preds: tuple[str, ...], files: list[str], options: EvalOptions, judge, fmt,
    o: dict[str, Any],
) -> Outcome:  # fmt: skip
    import dataclasses

    from .api import evaluate, load
    from .batch import run_batch, run_batch_parts, stray_files
    from .gates import github_annotations
    from .reporters.batch import render_batch
    from .reporters.report import write_batch_plots

    if not files:
        raise InputError(preds[0], "no prediction files (.json) in this folder")
    strict, options = _lenient(options)
    for stray in stray_files(preds):
        if not o["quiet"]:
            say(f"iou-eval: warning: {stray}: not a .json file; skipped")
    gt_ds = load(gt, "gt", options.read.gt_format, read=options.read)
    show = not o["quiet"] and not _machine(fmt)
    bar = _progress(len(files), "scoring", show)
    try:
        with _cluster(options, show) as client:
            if client is not None:  # one task per file, the ground truth shared once
                outcome = run_batch_parts(client, gt_ds, files, options, judge,
                                          progress=bar.update if bar is not None else None)  # fmt: skip
            else:
                outcome = run_batch(
                    gt_ds,
                    files,
                    # A batch keeps every file's numbers, not its boxes (nothing is drawn).
                    lambda path: dataclasses.replace(
                        judge(evaluate(gt_ds, path, options)), alignment=None
                    ),
                    progress=bar.update if bar is not None else None,
                )
    finally:
        if bar is not None:
            bar.close()
    # The ground truth's warnings come with every file: say them once.
    seen = dict.fromkeys(w for r in outcome.results.values() for w in r.warnings)
    _warn(list(seen), o["quiet"])
    for _path, message in outcome.errors:
        say(f"iou-eval: error: {message} (skipped)")
    plots = _plot_files(lambda d: write_batch_plots(outcome, d), o)
    _emit(render_batch(outcome, fmt, plots), o["output"], o["protected"], fmt.value)
    if o["annotations"]:
        lines = [ln for r in outcome.results.values() for ln in github_annotations(list(r.checks))]
        _annotate(lines, _machine(fmt) and not o["output"])
    # The ground truth's doubts come with every file: count them once.
    doubts = _strict_doubts(strict, [w for r in outcome.results.values() for w in r.warnings])
    return Outcome(
        unreadable=len(outcome.errors), failed_checks=len(outcome.failed_checks), doubts=doubts
    )


@main.command(
    "compare",
    epilog="""\b
Example:
  iou-eval compare gt.json baseline.json candidate.json --bootstrap 1000
""",
)
@click.argument("gt", metavar="GROUND_TRUTH", type=INPUT_PATH)
@click.argument("a", metavar="PREDICTIONS_A", type=INPUT_PATH)
@click.argument("b", metavar="PREDICTIONS_B", type=INPUT_PATH)
@click.option("--protocol", "-p", default="coco", show_default=True, help="coco, voc07 or voc12.")
@record_options(PointOptions, BootstrapOptions, RuntimeOptions, defaults={"bootstrap": "1000"})
@output_options
def compare_command(gt: str, a: str, b: str, **o: Any) -> None:
    """Per-metric and per-class deltas (B - A) between two models, largest changes first.

    The images are resampled identically for both models, so each delta's
    interval is paired; a delta whose interval excludes zero is marked
    significant.
    """
    sys.exit(run_guarded(_compare, gt, a, b, **o))


def _compare(gt: str, a: str, b: str, **o: Any) -> int:
    from .api import evaluate, load
    from .compare import compare
    from .reporters import OutputFormat
    from .reporters.compare import render_compare

    protected = (gt, a, b)
    _check_output(o["output"], protected)
    if "," in o["protocol"]:
        raise UsageError("compare takes one protocol")
    options = EvalOptions(
        protocol=ProtocolOptions(protocol=o["protocol"]),
        **{slot: from_cli(SLOTS[slot], o) for slot in ("point", "bootstrap", "runtime")},
    )
    options = EvalOptions.of(options, keep_accumulation=False)
    gt_ds = load(gt, "gt")
    show = not o["quiet"] and o["out_format"] not in ("json", "csv")
    with _cluster(options, show) as client:
        ra = evaluate(gt_ds, a, options, client=client)
        rb = evaluate(gt_ds, b, options, client=client)
    _warn(list(dict.fromkeys(ra.warnings + rb.warnings)), o["quiet"])
    fmt = OutputFormat(o["out_format"])
    _emit(render_compare(compare(ra, rb), fmt, a, b), o["output"], protected, fmt.value)
    return 0


def _emit(text: str, output: str | None, protected: Sequence[str | None], fmt: str) -> None:
    """The report to ``-o FILE`` (never over an input) or to stdout.

    On stdout, ``fmt`` ``json`` is made inert for CI logs, ``csv`` stays as
    it is (in CI, write CSV with ``-o``), and the others (table, markdown)
    are escaped line by line for a terminal.
    """
    from .escape import json_for_logs
    from .output import STDOUT_NAMES, write_output

    if not output or output in STDOUT_NAMES:
        if fmt == "json":
            text = json_for_logs(text)
        elif fmt != "csv":
            text = terminal_text(text)
    write_output(output or "-", text, protected=protected)


def _check_output(output: str | None, protected: Sequence[str | None]) -> None:
    """Refuse a bad ``-o`` before any work (it is checked again when written)."""
    from .output import STDERR_NAMES, STDOUT_NAMES, check_output_path

    if output and output not in STDOUT_NAMES | STDERR_NAMES:
        check_output_path(output, protected)


def _annotate(lines: Sequence[str], stdout_taken: bool) -> None:
    # Workflow commands are read from stdout; when stdout carries JSON/CSV
    # they go to stderr instead, so the payload stays parseable.  Each line
    # is built by escape.workflow_command: data cannot start another.
    for line in lines:
        click.echo(line, err=stdout_taken)


def _warn(warnings: Sequence[str], quiet: bool) -> None:
    from .doubts import is_doubt

    if quiet:
        return
    for w in warnings:
        # A doubt says the numbers may be wrong (--strict exits 1 on it).
        kind = "warning (doubt)" if is_doubt(w) else "warning"
        say(f"iou-eval: {kind}: {w}")


def _lenient(options: EvalOptions) -> tuple[bool, EvalOptions]:
    """``(strict, options without strict)``: the command line reports first, then exits 1."""
    import dataclasses

    if not options.read.strict:
        return False, options
    return True, dataclasses.replace(options, read=dataclasses.replace(options.read, strict=False))


def _strict_doubts(strict: bool, warnings: Sequence[str]) -> int:
    """Under ``--strict``: how many doubts ``warnings`` hold, said once more as the reason for exit 1."""
    from .doubts import doubts_of

    found = list(dict.fromkeys(doubts_of(warnings))) if strict else []
    if found:
        say(
            f"iou-eval: error: --strict: {len(found)} doubt(s) about the input (see the "
            "warnings above); exit code 1"
        )
    return len(found)


# --------------------------------------------------------------- iou calculator

IOU_KINDS = ["iou", "giou", "diou", "ciou"]


@main.command(
    "iou",
    # Boxes such as -5,0,10,10 start with a dash: let them through as boxes.
    context_settings={"ignore_unknown_options": True},
    epilog="""\b
Examples:
  iou-eval iou 10,10,50,50 20,20,60,60
  iou-eval iou 10,10,40,40 20,20,40,40 --box-format xywh --kind giou
  iou-eval iou 0,0,10,10 5,5,15,15 20,0,30,10          (3 x 3 matrix)
  iou-eval iou --a preds.csv --b gt.json -f csv -o iou.csv
""",
)
@click.argument("boxes", nargs=-1, metavar="[BOX...]")
@click.option(
    "--box-format",
    type=click.Choice(list(BOX_FORMATS)),
    default="xyxy",
    show_default=True,
    help="xyxy corners, xywh top-left corner + size, cxcywh centre + size.",
)
@click.option(
    "--kind", type=click.Choice(IOU_KINDS), default="iou", show_default=True,
    help="IoU, or torchvision's generalized / distance / complete IoU.",
)  # fmt: skip
@click.option("--plus-one", is_flag=True, help="Pascal VOC pixels: width = x2 - x1 + 1.")
@click.option("--a", "a_file", type=INPUT_PATH, metavar="FILE", help="Rows: boxes (CSV or JSON).")
@click.option(
    "--b", "b_file", type=INPUT_PATH, metavar="FILE", help="Columns: boxes (CSV or JSON)."
)
@output_options
def iou_command(boxes: tuple[str, ...], **o: Any) -> None:
    """IoU of two boxes, or the matrix of more (every box against every box),
    or of the boxes of --a FILE (rows) against those of --b FILE (columns).

    A box is four comma-separated numbers.  Prints six decimals; -f json
    prints {"iou": ...} at full precision.
    """
    sys.exit(run_guarded(_iou, boxes, **o))


def _iou_inputs(boxes: tuple[str, ...], o: dict[str, Any]):
    """``(a, b, single)``: the two sides as [N, 4] arrays, checked box by box."""
    from . import iou
    from .calculator import parse_box, read_boxes

    if (o["a_file"] is None) != (o["b_file"] is None):
        raise UsageError("--a and --b go together: rows from one file, columns from the other")
    if o["a_file"]:
        if boxes:
            raise UsageError("give boxes on the command line or --a/--b files, not both")
        return read_boxes(o["a_file"]), read_boxes(o["b_file"]), False
    if len(boxes) < 2:
        raise UsageError("give two boxes such as 10,10,50,50 20,20,60,60 (or more for a matrix)")
    parsed = [parse_box(t) for t in boxes]
    for text, box in zip(boxes, parsed, strict=True):
        try:
            iou.boxes(box, box, box_format=o["box_format"])
        except iou.ArgumentError as exc:
            raise UsageError(f"box {text!r}: {exc.message.split(': ', 1)[-1]}", exc.hint) from None
    return parsed, parsed, len(parsed) == 2


def _iou(boxes: tuple[str, ...], **o: Any) -> int:
    import numpy as np

    from . import iou
    from .calculator import render_matrix, render_value

    protected = (o["a_file"], o["b_file"])
    _check_output(o["output"], protected)
    a, b, single = _iou_inputs(boxes, o)
    settings = {"kind": o["kind"], "box_format": o["box_format"], "plus_one": o["plus_one"]}
    if single:
        value = iou.boxes(a[0], a[1], o["box_format"], o["kind"], o["plus_one"])
        _emit(
            render_value(float(value), o["out_format"], settings),
            o["output"], protected, o["out_format"],
        )  # fmt: skip
        return 0
    try:
        matrix = np.asarray(iou.boxes(a, b, o["box_format"], o["kind"], o["plus_one"]))
    except iou.ArgumentError as exc:
        side = o["a_file"] if exc.message.startswith("a[") else o["b_file"]
        raise InputError(side, exc.message, hint=exc.hint) from None
    _emit(
        render_matrix(matrix, o["out_format"], settings),
        o["output"], protected, o["out_format"],
    )  # fmt: skip
    return 0


# ----------------------------------------------------------- semantic segmentation


@main.command(
    "semseg",
    epilog="""\b
Examples:
  iou-eval semseg gtFine/val preds/ --names cityscapes.names
  iou-eval semseg ann/ pred/ --num-classes 150 --reduce-zero-label -f json -o miou.json
  iou-eval semseg gt/ pred/ --num-classes 19 --fail-under mIoU=0.7 --fail-under IoU[road]=0.95

\b
Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed.
""",
)
@click.argument("gt_dir", metavar="GT_DIR", type=INPUT_PATH)
@click.argument("pred_dir", metavar="PRED_DIR", type=INPUT_PATH)
@click.option(
    "--num-classes",
    type=StrictInt(low=1, high=1 << 16),
    metavar="N",
    help="Classes 0..N-1 (default: the count of --names, else the largest label seen + 1).",
)
@click.option(
    "--names", "names_file", type=INPUT_PATH, metavar="FILE",
    help="Class names, one per line: line i names label i.",
)  # fmt: skip
@click.option(
    "--ignore-index",
    type=StrictInt(low=0, high=(1 << 16) - 1),
    default=255,
    show_default=True,
    help="Ground-truth label whose pixels are not scored.",
)
@click.option(
    "--reduce-zero-label",
    is_flag=True,
    help="Ground truth label 0 is ignored and the others move down by one (ADE20K; mmseg).",
)
@output_options
@click.option(
    "--fail-under",
    multiple=True,
    metavar="EXPR",
    help="Gate: fail (exit 3) when a metric is below a value. Repeatable: "
    "mIoU=0.7, aAcc=0.9, mAcc=0.8, IoU[road]=0.95.",
)
def semseg_command(gt_dir: str, pred_dir: str, **o: Any) -> None:
    """Semantic segmentation: per-class IoU and mIoU of the PNG label maps of
    PRED_DIR against those of GT_DIR, paired by file stem.

    Scores as mmsegmentation's IoUMetric: one confusion matrix over every
    pixel whose ground truth is not --ignore-index; a class in neither the
    ground truth nor the predictions is left out of the mean.
    """
    sys.exit(run_guarded(_semseg, gt_dir, pred_dir, **o))


def _semseg(gt_dir: str, pred_dir: str, **o: Any) -> int:
    from .gates import parse_gate
    from .options import read_names
    from .reporters import OutputFormat
    from .reporters.semseg import render_semseg
    from .semseg import check_gates, evaluate_pairing, pair_files, validate_gate

    protected = (gt_dir, pred_dir, o["names_file"])
    _check_output(o["output"], protected)
    gates = [validate_gate(parse_gate(t)) for t in o["fail_under"]]
    names = list(read_names(o["names_file"])) if o["names_file"] else None
    fmt = OutputFormat(o["out_format"])
    pairing = pair_files(gt_dir, pred_dir)
    show = not o["quiet"] and fmt not in (OutputFormat.JSON, OutputFormat.CSV)
    bar = _progress(len(pairing.pairs), "label maps", show, unit="image")
    try:
        result = evaluate_pairing(
            pairing, o["num_classes"], names, o["ignore_index"], o["reduce_zero_label"],
            progress=bar.update if bar is not None else None,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    result.checks = check_gates(result, gates)
    _warn(result.warnings, o["quiet"])
    _emit(render_semseg(result, fmt), o["output"], protected, fmt.value)
    return Outcome(failed_checks=sum(not c.passed for c in result.checks)).exit_code


# ------------------------------------------------------------------------ drawings


@main.command(
    "draw",
    epilog="""\b
Examples:
  iou-eval draw gt.json preds.json --images images/ -o drawn/
  iou-eval draw gt.json preds.json --images images/ -o worst/ --worst 20 --score-thr 0.3
  iou-eval draw gt.json preds.json --images images/ -o drawn/ --image-ids 7,12
  iou-eval draw gt.json masks.json --images images/ -o drawn/ --iou-type segm

\b
Exit codes: 0 success, 1 bad input, 2 usage error.
""",
)
@click.argument("gt", metavar="GROUND_TRUTH", type=click.Path())
@click.argument("pred", metavar="PREDICTIONS", type=click.Path())
@click.option(
    "--images", required=True, type=click.Path(file_okay=False), metavar="DIR",
    help="The images, found by the ground truth's file name, else by file stem (only read).",
)  # fmt: skip
@click.option(
    "--output", "-o", required=True, type=click.Path(file_okay=False), metavar="DIR",
    help="Folder of the drawings: each image under its own name, size and format.",
)  # fmt: skip
@click.option(
    "--worst", type=click.IntRange(min=1), metavar="N",
    help="Draw only the N worst images (in --sort order).",
)  # fmt: skip
@click.option(
    "--image-ids", metavar="LIST",
    help="Draw only these images: comma-separated ids (or file names) of the ground truth.",
)  # fmt: skip
@click.option(
    "--sort", type=click.Choice(SORT_CHOICES), default="errors", show_default=True,
    help="Which images --worst keeps: most errors first, by image id, or by a column.",
)  # fmt: skip
@record_options(ReadOptions, ProtocolOptions, PointOptions, RuntimeOptions)
@click.option("--quiet", "-q", is_flag=True, help="Do not print warnings or the summary line.")
def draw_command(gt: str, pred: str, **o: Any) -> None:
    """Draw ground truths and predictions on copies of the images.

    Ground truths in green (FN: missed), predictions in orange with their
    class, score and the IoU of their pair, false positives dashed; with
    --iou-type segm the masks' outlines too.  The outcome is the one the
    per-image table counts at --iou-thr and --score-thr (Pillow:
    pip install 'iou-eval[draw]').
    """
    sys.exit(run_guarded(_draw, gt, pred, **o))


def _draw(gt: str, pred: str, **o: Any) -> int:
    from .api import evaluate
    from .reporters.drawings import check_folders, draw_run, missing_note

    check_folders(o["images"], o["output"])  # and Pillow: before any work
    options = EvalOptions(
        **{slot: from_cli(SLOTS[slot], o) for slot in ("read", "protocol", "point", "runtime")}
    )
    result = evaluate(gt, pred, options)
    positions = _draw_positions(result, o)
    drawn = draw_run(result, o["images"], o["output"], positions)
    _warn(result.warnings, o["quiet"])
    if drawn.missing:
        if not drawn.written:
            raise InputError(o["images"], "no image found: " + missing_note(drawn.missing, "it"))
        _warn([missing_note(drawn.missing, o["images"])], o["quiet"])
    if not o["quiet"]:
        click.echo(f"iou-eval: drew {len(drawn.written)} image(s) into {o['output']}", err=True)
    return 0


def _draw_positions(result, o: dict[str, Any]):
    """Rows of the per-image table to draw: --image-ids, then --sort / --worst."""
    import numpy as np

    from .reporters.view import View, image_order

    images = result.images
    positions = np.arange(len(images))
    if o["image_ids"]:
        keys: dict[str, int] = {}
        for i, (image_id, name) in enumerate(zip(images["image_id"], images["file_name"],
                                                 strict=True)):  # fmt: skip
            for key in (str(image_id), name, os.path.splitext(name)[0] if name else None):
                if key:
                    keys.setdefault(str(key), i)
        wanted = [t.strip() for t in o["image_ids"].split(",") if t.strip()]
        unknown = [t for t in wanted if t not in keys]
        if unknown:
            known = ", ".join(str(x) for x in list(images["image_id"])[:5])
            raise UsageError(
                f"--image-ids: {', '.join(unknown[:5])} not in the ground truth "
                f"(known: {known}{', …' if len(images) > 5 else ''})"
            )
        positions = np.array(list(dict.fromkeys(keys[t] for t in wanted)), dtype=np.int64)
    order = image_order(images.take(positions), View(sort=o["sort"], worst=o["worst"]))
    return positions[order]
