"""``iou-eval convert``: write ground truth or predictions in another format."""

from __future__ import annotations

import sys
from typing import Any

import click

from iou_eval.cli.common import INPUT_PATH, record_options, run_guarded, say, warn
from iou_eval.options import ReadOptions

# The --to choices, listed without importing the writers (start-up stays cheap).
TARGETS = ("coco", "yolo", "voc-xml", "csv", "dota", "labelme", "cvat-xml", "labelstudio")

EPILOG = """\b
Examples:
  iou-eval convert gt.json yolo_dataset --to yolo --images images/
  iou-eval convert preds.json predict_run --to yolo --gt gt.json --images images/
  iou-eval convert annotations/ gt.json --to coco
  iou-eval convert runs/predict preds.json --to coco --gt data.yaml
  iou-eval convert export.json gt.xml --to cvat-xml --strict

\b
Predictions are recognised by their scores, or named by --predictions or
--gt REF (their ground truth: its images and classes name them as its own
conversion does). docs/convert.md says what each format keeps.
Exit codes: 0 success, 1 bad input (or a doubt under --strict), 2 usage error.
"""


@click.command("convert", epilog=EPILOG)
@click.argument("source", metavar="INPUT", type=INPUT_PATH)
@click.argument("output", metavar="OUTPUT", type=click.Path())
@click.option("--to", "to", required=True, type=click.Choice(TARGETS), help="The format to write.")
@click.option(
    "--gt", "gt_ref", type=INPUT_PATH, metavar="REF",
    help="INPUT holds predictions of this ground truth: images and classes are joined to it "
    "as the evaluation joins them.",
)  # fmt: skip
@click.option(
    "--predictions", is_flag=True, help="INPUT holds predictions (default: when it has scores)."
)
@record_options(ReadOptions)
@click.option("--overwrite", is_flag=True, help="Replace OUTPUT when it exists.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print notes and warnings.")
def convert_command(source: str, output: str, **opts: Any) -> None:
    """Convert ground truth or predictions INPUT (any format iou-eval reads) to OUTPUT.

    INPUT is read as the evaluation reads it (the same options, doubts and
    joins); OUTPUT is written whole or not at all. What the target format
    cannot hold (crowd regions in YOLO, outlines in a box format) is left
    out or simplified, with a note that counts it.
    """
    sys.exit(run_guarded(_convert, source, output, **opts))


def _convert(source: str, output: str, **o: Any) -> int:
    from iou_eval.io.option_files import resolve_read
    from iou_eval.io.writers.convert import convert
    from iou_eval.options import from_cli

    read = resolve_read(from_cli(ReadOptions, o))
    role = "pred" if o["predictions"] or o["gt_ref"] else None
    done = convert(
        source, output, o["to"], read, role=role, gt_ref=o["gt_ref"], overwrite=o["overwrite"]
    )
    warn(done.notes, o["quiet"])
    if not o["quiet"]:
        what = "prediction(s)" if done.role == "pred" else "object(s)"
        say(
            f"iou-eval: wrote {output} ({done.target}): {done.rows} {what} on {done.images} "
            f"image(s), read as {done.source_format} {'predictions' if done.role == 'pred' else 'ground truth'}"
        )
    return 0
