"""``iou-eval draw``: the boxes of a run drawn on its images."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from iou_eval.cli.common import SLOTS, SORT_CHOICES, record_options, run_guarded, warn
from iou_eval.errors import InputError, UsageError
from iou_eval.options import (
    EvalOptions,
    PointOptions,
    ProtocolOptions,
    ReadOptions,
    RuntimeOptions,
    from_cli,
)


@click.command(
    "draw",
    epilog="""\b
Examples:
  iou-eval draw gt.json preds.json --images images/ -o drawn/
  iou-eval draw gt.json preds.json --images images/ -o worst/ --worst 20 --score-thr 0.3
  iou-eval draw gt.json preds.json --images images/ -o drawn/ --image-ids 7,12
  iou-eval draw gt.json masks.json --images images/ -o drawn/ --iou-type segm

\b
Exit codes: 0 success, 1 bad input, 2 usage error,
4 an internal error (a bug; --debug shows the traceback).
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
@record_options(ReadOptions, ProtocolOptions, PointOptions, RuntimeOptions, own=("images",))
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
    from iou_eval.api import evaluate
    from iou_eval.reporters.drawings import check_folders, draw_run, missing_note

    check_folders(o["images"], o["output"])  # and Pillow: before any work
    options = EvalOptions(
        **{slot: from_cli(SLOTS[slot], o) for slot in ("read", "protocol", "point", "runtime")}
    )
    result = evaluate(gt, pred, options, warn=False)
    positions = _draw_positions(result, o)
    drawn = draw_run(result, o["images"], o["output"], positions)
    warn(result.warnings, o["quiet"])
    if drawn.missing:
        if not drawn.written:
            raise InputError(o["images"], "no image found: " + missing_note(drawn.missing, "it"))
        warn([missing_note(drawn.missing, o["images"])], o["quiet"])
    if not o["quiet"]:
        click.echo(f"iou-eval: drew {len(drawn.written)} image(s) into {o['output']}", err=True)
    return 0


def _draw_positions(result, o: dict[str, Any]):
    """Rows of the per-image table to draw: --image-ids, then --sort / --worst."""
    import numpy as np

    from iou_eval.reporters.view import View, image_order

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
