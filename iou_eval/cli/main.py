"""The ``iou-eval`` command group: the only wing that prints or exits.

Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed,
4 an internal error (a bug: one message, the traceback with ``--debug``).
"""

# ruff: noqa: E402  (the collector is paused before the imports below)
from __future__ import annotations

import gc

# The command's modules make some forty thousand objects the collector
# tracks, and no garbage: collection passes over them, while they load and
# again in every full pass of the run, find nothing to free.  The collector
# pauses while they load; then they are set aside for good (``gc.freeze``:
# they live as long as the process), and it resumes for what the run makes.
_COLLECTING = gc.isenabled()
gc.disable()

import contextlib
import os
import sys

import click

from iou_eval.cli.common import EPILOG, say
from iou_eval.cli.compare import compare_command
from iou_eval.cli.convert import convert_command
from iou_eval.cli.draw import draw_command
from iou_eval.cli.evaluate import eval_command
from iou_eval.cli.internal import (
    DEBUG_FLAG,
    DEBUG_HELP,
    internal_message,
    split_debug,
    traceback_text,
)
from iou_eval.cli.iou import iou_command
from iou_eval.cli.semseg import semseg_command
from iou_eval.errors import EXIT_INTERNAL
from iou_eval.version import __version__

gc.freeze()
if _COLLECTING:
    gc.enable()


class DefaultGroup(click.Group):
    """A group whose ``eval`` command runs when no command name is given."""

    default_command = "eval"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        elif not args:
            args = ["--help"]
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """click's ``main``; an exception click does not know is an internal error (exit 4).

        ``--debug`` is taken out of the arguments wherever it stands, so every
        command has it and it works even when the arguments fail to parse.
        """
        given = sys.argv[1:] if args is None else list(args)
        kept, debug = split_debug(given)
        try:
            return super().main(
                args if len(kept) == len(given) else kept,
                prog_name,
                complete_var,
                standalone_mode,
                **extra,
            )
        except Exception as exc:  # click's own errors and exits never reach here
            if debug:
                say(traceback_text(exc))
            say(internal_message(exc, debug))
            sys.exit(EXIT_INTERNAL)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from iou_eval.engine.compiled import describe

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
@click.option(DEBUG_FLAG, is_flag=True, expose_value=False, help=DEBUG_HELP)
def main() -> None:
    """Score object detections against ground truth, exactly as pycocotools and
    the Pascal VOC devkit do.

    Run `iou-eval GT PREDICTIONS [options]` (the `eval` command), or
    `iou-eval eval --help` for every option.
    """


for _command in (
    eval_command,
    compare_command,
    iou_command,
    semseg_command,
    draw_command,
    convert_command,
):
    main.add_command(_command)
    # Taken out of the arguments before parsing (DefaultGroup.main); here for --help.
    _command.params.append(
        click.Option([DEBUG_FLAG], is_flag=True, expose_value=False, help=DEBUG_HELP)
    )


def run() -> None:
    """The ``iou-eval`` command: :func:`main`, then leave without tearing the interpreter down.

    A COCO-sized run leaves millions of array elements and thousands of
    objects behind; freeing them one by one at exit takes tens of
    milliseconds nobody waits for.  Every file the command writes is closed
    by then; standard output and error are flushed here.  An exception
    other than the exit itself propagates as usual.
    """
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str):  # what the interpreter would print, and status 1
            print(code, file=sys.stderr)
            code = 1
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(0 if code is None else int(code))
