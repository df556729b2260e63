"""An unexpected exception as one message and exit code 4, never a traceback unless asked.

``--debug`` (any command, anywhere before ``--``) or ``IOU_EVAL_DEBUG=1`` shows the
traceback too; the exit code stays 4.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence

from iou_eval.version import __version__

DEBUG_FLAG = "--debug"
DEBUG_ENV = "IOU_EVAL_DEBUG"
DEBUG_HELP = "Show the traceback of an internal error (exit code 4); also IOU_EVAL_DEBUG=1."

# The labels of [project.urls] in pyproject.toml, as the package metadata carries
# them, in the order a bug report should go: the tracker first, the homepage last.
_REPORT_LABELS = ("issues", "issue tracker", "bug tracker", "bugs", "tracker")
_HOME_LABELS = ("homepage", "home", "repository", "source", "documentation")


def split_debug(args: Sequence[str]) -> tuple[list[str], bool]:
    """``args`` without ``--debug``, and whether it or ``IOU_EVAL_DEBUG`` asks for tracebacks."""
    args = list(args)
    end = args.index("--") if "--" in args else len(args)
    kept = [a for a in args[:end] if a != DEBUG_FLAG] + args[end:]
    wanted = len(kept) != len(args) or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    return kept, wanted


def report_url() -> str | None:
    """Where bugs go: the issue tracker the package metadata names, else its homepage."""
    from importlib import metadata

    try:
        meta = metadata.metadata("iou-eval")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return None
    urls: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    for label in (*_REPORT_LABELS, *_HOME_LABELS):
        if urls.get(label):
            return urls[label]
    homes = [h for h in meta.get_all("Home-page") or [] if h and h != "UNKNOWN"]
    return homes[0] if homes else None


def exception_line(exc: BaseException) -> str:
    """``Type: message`` on one line (the message's first line)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    name = type(exc).__name__
    return f"{name}: {first}" if first else name


def internal_message(exc: BaseException, debug: bool = False) -> str:
    """The one message of an unexpected exception: version, the exception, where to report it.

    ``debug``: the traceback was shown above, so the way to see it is not repeated.
    """
    url = report_url()
    where = f"at {url}" if url else "to the iou-eval maintainers"
    text = (
        f"iou-eval: internal error (iou-eval {__version__}): {exception_line(exc)}\n"
        f"  This is a bug in iou-eval, not a problem with your input: please report it {where}, "
        "with the command you ran"
    )
    if debug:
        return text + " and the traceback above."
    return text + (
        f".\n  To see the traceback, run the command again with {DEBUG_FLAG} (or {DEBUG_ENV}=1)."
    )


def traceback_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n")
