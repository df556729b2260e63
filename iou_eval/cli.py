"""The ``iou-eval`` command line: the only module that prints or exits.

Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import click

from . import __version__
from .errors import EXIT_INPUT, EXIT_USAGE, InputError, IouEvalError, UsageError

FORMAT_CHOICES = ["auto", "coco", "voc-xml", "csv", "txt", "voc-results"]
BOX_FORMATS = ["xyxy", "xywh", "cxcywh"]
OUTPUT_FORMATS = ["table", "markdown", "csv", "json"]
SORT_CHOICES = ["errors", "image", "FP", "FN", "precision", "recall", "F1", "mean_IoU"]

EPILOG = """\b
Examples:
  iou-eval gt.json preds.json
  iou-eval gt.json preds.json --format json -o result.json
  iou-eval annotations/ predictions.csv --protocol voc07,voc12
  iou-eval gt.json preds.json --iou-thr 0.75 --worst 10

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


def parse_float_list(text: str, what: str) -> list[float]:
    """``"0.5,0.75"`` or pycocotools' ``start:stop:step`` grid."""
    import numpy as np

    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            # The same expression pycocotools uses, so 0.5:0.95:0.05 gives the
            # very same floats.
            n = int(np.round((stop - start) / step)) + 1
            values = [float(v) for v in np.linspace(start, stop, n, endpoint=True)]
        else:
            values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(
            f"{what}: expected numbers like 0.5,0.75 or start:stop:step, got {text!r}"
        ) from None
    if not values:
        raise UsageError(f"{what}: expected at least one number, got {text!r}")
    return values


def parse_area_ranges(text: str):
    """``small=0:1024,medium=1024:9216,large=9216:inf`` (``inf`` is pycocotools' 1e5**2)."""
    from .protocols import AreaRange

    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            label, bounds = part.split("=")
            lo_s, hi_s = bounds.split(":")
            lo = float(lo_s)
            hi = 1e5**2 if hi_s.strip().lower() in ("inf", "max") else float(hi_s)
        except ValueError:
            raise UsageError(
                f"--area-ranges: expected label=lo:hi items like small=0:1024, got {part!r}"
            ) from None
        if label.strip() == "all":
            raise UsageError("--area-ranges: 'all' is always evaluated; name the other ranges")
        out.append(AreaRange(label.strip(), lo, hi))
    return out


def read_names(path: str) -> list[str]:
    """Class names, one per line (blank lines skipped)."""
    from .loaders.common import read_bytes

    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    names = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(path, f"class name {dup!r} is listed twice")
    return names


def parse_image_size(text: str) -> tuple[float, float]:
    try:
        w, h = (float(v) for v in text.lower().split("x"))
        if w <= 0 or h <= 0:
            raise ValueError
    except ValueError:
        raise UsageError(f"--image-size: expected WIDTHxHEIGHT like 640x480, got {text!r}") from None
    return w, h


def write_whole(path: str, text: str) -> None:
    """Write ``text`` to ``path`` completely or not at all (temp file + rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(path, "cannot write: the folder does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".iou-eval-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None


def run_guarded(fn, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn``; turn iou-eval's errors into a message and an exit code."""
    try:
        return fn(*args, **kwargs)
    except IouEvalError as exc:
        click.echo(f"iou-eval: error: {exc.format()}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("iou-eval: interrupted", err=True)
        sys.exit(130)
    except MemoryError:
        click.echo("iou-eval: error: out of memory", err=True)
        sys.exit(EXIT_INPUT)


@click.group(
    cls=DefaultGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="iou-eval")
def main() -> None:
    """Score object detections against ground truth, exactly as pycocotools and
    the Pascal VOC devkit do.

    Run `iou-eval GT PREDICTIONS [options]` (the `eval` command), or
    `iou-eval eval --help` for every option.
    """


@main.command("eval", epilog=EPILOG)
@click.argument("gt", metavar="GROUND_TRUTH", type=click.Path())
@click.argument("preds", metavar="PREDICTIONS", type=click.Path())
@click.option("--protocol", "-p", default="coco", show_default=True,
              help="coco, voc07 or voc12; several comma-separated are reported side by side.")
@click.option("--gt-format", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True,
              help="Format of the ground truth (detected from content by default).")
@click.option("--pred-format", type=click.Choice(FORMAT_CHOICES), default="auto",
              show_default=True, help="Format of the predictions.")
@click.option("--box-format", type=click.Choice(BOX_FORMATS), default=None,
              help="Layout of box numbers in CSV/text files (default: from the column names).")
@click.option("--normalized", is_flag=True,
              help="Box numbers are fractions of the image size.")
@click.option("--names", "names_file", type=click.Path(), metavar="FILE",
              help="Class names, one per line: integer classes in text files index it (0-based).")
@click.option("--image-size", metavar="WxH",
              help="Image size for normalized boxes when no file gives it, e.g. 640x480.")
@click.option("--iou-thresholds", metavar="LIST",
              help="COCO thresholds: 0.5:0.95:0.05 (default) or a list like 0.5,0.75.")
@click.option("--area-ranges", metavar="LIST",
              help="COCO area ranges, e.g. small=0:1024,medium=1024:9216,large=9216:inf.")
@click.option("--max-dets", metavar="LIST", help="COCO detections per image and class: 1,10,100.")
@click.option("--class-agnostic", is_flag=True, help="Match boxes regardless of class.")
@click.option("--iou-thr", type=float, default=0.5, show_default=True,
              help="IoU threshold of the per-class and per-image counts (VOC: of the AP).")
@click.option("--score-thr", type=float, default=0.0, show_default=True,
              help="Predictions below this score are left out of the counts.")
@click.option("--pixel-convention", type=click.Choice(["continuous", "plus-one"]), default=None,
              help="Box extents: continuous (COCO default) or plus-one (VOC default).")
@click.option("--count-id-zero", is_flag=True,
              help="Count matches to a ground truth with annotation id 0 "
                   "(pycocotools does not; off by default for parity).")
@click.option("--honour-ignore", is_flag=True,
              help="Ignore ground truths flagged ignore/difficult even when not crowd "
                   "(pycocotools overwrites the flag with iscrowd; off by default for parity).")
@click.option("--sort", type=click.Choice(SORT_CHOICES), default="errors", show_default=True,
              help="Order of the per-image table: most errors first, by image id, or by a column.")
@click.option("--worst", type=click.IntRange(min=1), metavar="N",
              help="Show only the N worst images (in --sort order).")
@click.option("--format", "-f", "out_format", type=click.Choice(OUTPUT_FORMATS), default="table",
              show_default=True, help="Report format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the report to FILE (whole or not at all) instead of stdout.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print warnings.")
def eval_command(gt: str, preds: str, **opts: Any) -> None:
    """Evaluate PREDICTIONS against GROUND_TRUTH.

    Formats are detected from content: COCO JSON (dataset or results list),
    Pascal VOC XML (a folder or a file), CSV/TSV with a header.
    """
    run_guarded(_eval, gt, preds, **opts)


def _eval(gt: str, preds: str, **o: Any) -> None:
    from .api import evaluate
    from .reporters import OutputFormat, View, renderer

    kwargs: dict[str, Any] = {}
    if o["iou_thresholds"]:
        kwargs["iou_thresholds"] = parse_float_list(o["iou_thresholds"], "--iou-thresholds")
        if any(not 0 <= t <= 1 for t in kwargs["iou_thresholds"]):
            raise UsageError("--iou-thresholds: thresholds must lie in [0, 1]")
    if o["area_ranges"]:
        kwargs["area_ranges"] = parse_area_ranges(o["area_ranges"])
    if o["max_dets"]:
        md = parse_float_list(o["max_dets"], "--max-dets")
        if any(m < 1 or m != int(m) for m in md):
            raise UsageError(f"--max-dets: expected positive integers, got {o['max_dets']!r}")
        kwargs["max_dets"] = [int(m) for m in md]
    if o["names_file"]:
        kwargs["names"] = read_names(o["names_file"])
    if o["image_size"]:
        kwargs["image_size"] = parse_image_size(o["image_size"])
    if not 0 <= o["iou_thr"] <= 1:
        raise UsageError(f"--iou-thr must lie in [0, 1], got {o['iou_thr']}")

    result = evaluate(
        gt,
        preds,
        protocol=o["protocol"],
        iou_thr=o["iou_thr"],
        score_thr=o["score_thr"],
        gt_format=None if o["gt_format"] == "auto" else o["gt_format"],
        pred_format=None if o["pred_format"] == "auto" else o["pred_format"],
        box_format=o["box_format"],
        normalized=o["normalized"],
        class_agnostic=o["class_agnostic"],
        zero_id_quirk=not o["count_id_zero"],
        honour_ignore=o["honour_ignore"],
        pixel_convention=o["pixel_convention"],
        **kwargs,
    )
    fmt = OutputFormat(o["out_format"])
    view = View(sort=o["sort"], worst=o["worst"])
    text = renderer(fmt)(result, view)
    _warn(result.warnings, o["quiet"])
    if o["output"]:
        write_whole(o["output"], text)
    else:
        click.echo(text, nl=False)


def _warn(warnings: Sequence[str], quiet: bool) -> None:
    if quiet:
        return
    for w in warnings:
        click.echo(f"iou-eval: warning: {w}", err=True)


def usage_exit(message: str) -> None:  # pragma: no cover - helper for subcommands
    click.echo(f"iou-eval: error: {message}", err=True)
    sys.exit(EXIT_USAGE)
