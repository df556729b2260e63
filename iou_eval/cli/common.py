"""What the commands share: option decorators built from the option records, output, warnings, exit codes."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import click

from iou_eval.errors import EXIT_INPUT, IouEvalError, UsageError
from iou_eval.options import (
    AnalysisOptions,
    BootstrapOptions,
    Cli,
    EvalOptions,
    PointOptions,
    ProtocolOptions,
    ReadOptions,
    RuntimeOptions,
    cli_fields,
)

OUTPUT_FORMATS = ["table", "markdown", "csv", "json"]


# The evaluation's reports also come as a self-contained page, and as JUnit XML
# (its gates as test cases, for CI test views).
EVAL_FORMATS = [*OUTPUT_FORMATS, "html", "junit"]


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
Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed,
4 an internal error (a bug; --debug shows the traceback).
"""


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

    One arena for every thread: each thread's own arena would keep its own
    freed memory (up to the trim threshold) where the other threads cannot
    reuse it, and the threads of a large run (the readers, the category
    parts) would hold that much more at their peak (about 75 MiB at five
    million predictions).  The threads allocate few, large blocks: they
    seldom wait for the arena's lock.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold, m_arena_max = -1, -3, -8  # from <malloc.h>
        libc.mallopt(m_mmap_threshold, 64 << 20)
        libc.mallopt(m_trim_threshold, 128 << 20)
        libc.mallopt(m_arena_max, 1)
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
    from iou_eval.escape import for_terminal

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


def _choices_from(kind: str) -> tuple[str, ...]:
    """The choices an option record names by kind (``formats``: the loader registry's)."""
    from iou_eval.io.loaders.registry import format_names

    if kind != "formats":
        raise ValueError(f"unknown kind of choices {kind!r}")
    return ("auto", *format_names())


def _click_option(name: str, cli: Cli, default: str | None = None):
    """One click option from a record field's command-line form (values stay text).

    ``default``: this command's own default, as text (None: the record's).
    """
    decls = [cli.flag, *([cli.short] if cli.short else []), name]
    if cli.is_flag:
        return click.option(*decls, is_flag=True, help=cli.help)
    choices = _choices_from(cli.choices_from) if cli.choices_from else cli.choices
    return click.option(
        *decls,
        type=click.Choice(list(choices)) if choices else str,
        default=default if default is not None else cli.cli_default,
        metavar=cli.metavar,
        envvar=cli.envvar,
        show_default=(default or cli.cli_default) is not None,
        help=cli.help,
    )


def record_options(
    *records: type, defaults: dict[str, str] | None = None, own: tuple[str, ...] = ()
):
    """Every command-line option of the option records, in field order.

    ``defaults``: field name -> this command's default as text.  ``own``:
    fields the command declares itself (with its own help and checks); the
    record's value is then read from that option.
    """

    def apply(fn):
        for record in reversed(records):
            for name, cli, _ in reversed(cli_fields(record)):
                if name in own:
                    continue
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
        from iou_eval.numbers import parse_int

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


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def tqdm_class():
    from tqdm import tqdm

    # No monitor thread: worker processes are forked while a bar is shown.
    tqdm.monitor_interval = 0
    return tqdm


def progress_bar(total: int, desc: str, enabled: bool, unit: str = "file"):
    """A tqdm bar on stderr when it is a terminal, else None."""
    if not enabled or total < 2 or not stderr_is_terminal():
        return None
    tqdm = tqdm_class()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)


@contextlib.contextmanager
def cluster_for(options: EvalOptions, show: bool):
    """The Dask executor that --dask names, for the whole command (None without --dask).

    Its tasks show as a progress bar on a terminal.
    """
    if options.runtime.dask is None:
        yield None
        return
    from iou_eval.engine.cluster import executor_for

    def bar(total: int, desc: str):
        return progress_bar(total, desc, show, unit="task")

    with executor_for(options.runtime.dask, bar=bar) as executor:
        yield executor


def emit(text: str, output: str | None, protected: Sequence[str | None], fmt: str) -> None:
    """The report to ``-o FILE`` (never over an input) or to stdout.

    On stdout, ``fmt`` ``json`` is made inert for CI logs, ``csv`` stays as
    it is (in CI, write CSV with ``-o``), and the others (table, markdown)
    are escaped line by line for a terminal.
    """
    from iou_eval.escape import json_for_logs
    from iou_eval.io.output import STDOUT_NAMES, write_output

    if not output or output in STDOUT_NAMES:
        if fmt == "json":
            text = json_for_logs(text)
        elif fmt != "csv":
            text = terminal_text(text)
    write_output(output or "-", text, protected=protected)


def check_output(output: str | None, protected: Sequence[str | None]) -> None:
    """Refuse a bad ``-o`` before any work (it is checked again when written)."""
    from iou_eval.io.output import STDERR_NAMES, STDOUT_NAMES, check_output_path

    if output and output not in STDOUT_NAMES | STDERR_NAMES:
        check_output_path(output, protected)


def annotate(lines: Sequence[str], stdout_taken: bool) -> None:
    # Workflow commands are read from stdout; when stdout carries JSON/CSV
    # they go to stderr instead, so the payload stays parseable.  Each line
    # is built by escape.workflow_command: data cannot start another.  They
    # are written as the report is: a reader that closed the pipe (`| head -1`)
    # ends the output quietly and leaves the exit code to the outcome.
    from iou_eval.io.output import write_output

    if lines:
        write_output("/dev/stderr" if stdout_taken else "-", "".join(f"{ln}\n" for ln in lines))


def warn(warnings: Sequence[str], quiet: bool) -> None:
    from iou_eval.data.doubts import is_doubt

    if quiet:
        return
    for w in warnings:
        # A doubt says the numbers may be wrong (--strict exits 1 on it).
        kind = "warning (doubt)" if is_doubt(w) else "warning"
        say(f"iou-eval: {kind}: {w}")


def lenient(options: EvalOptions) -> tuple[bool, EvalOptions]:
    """``(strict, options without strict)``: the command line reports first, then exits 1."""
    import dataclasses

    if not options.read.strict:
        return False, options
    return True, dataclasses.replace(options, read=dataclasses.replace(options.read, strict=False))


def strict_doubts(strict: bool, warnings: Sequence[str]) -> int:
    """Under ``--strict``: how many doubts ``warnings`` hold, said once more as the reason for exit 1."""
    from iou_eval.data.doubts import doubts_of

    found = list(dict.fromkeys(doubts_of(warnings))) if strict else []
    if found:
        say(
            f"iou-eval: error: --strict: {len(found)} doubt(s) about the input (see the "
            "warnings above); exit code 1"
        )
    return len(found)
