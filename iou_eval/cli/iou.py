"""``iou-eval iou``: the IoU calculator."""

from __future__ import annotations

import sys
from typing import Any

import click

from iou_eval.cli.common import INPUT_PATH, check_output, emit, output_options, run_guarded
from iou_eval.errors import InputError, UsageError
from iou_eval.options import (
    BOX_FORMATS,
)

IOU_KINDS = ["iou", "giou", "diou", "ciou"]


@click.command(
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
    from iou_eval.toolkit import iou
    from iou_eval.toolkit.calculator import parse_box, read_boxes

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

    from iou_eval.reporters.calculator import render_matrix, render_value
    from iou_eval.toolkit import iou

    protected = (o["a_file"], o["b_file"])
    check_output(o["output"], protected)
    a, b, single = _iou_inputs(boxes, o)
    settings = {"kind": o["kind"], "box_format": o["box_format"], "plus_one": o["plus_one"]}
    if single:
        value = iou.boxes(a[0], a[1], o["box_format"], o["kind"], o["plus_one"])
        emit(
            render_value(float(value), o["out_format"], settings),
            o["output"], protected, o["out_format"],
        )  # fmt: skip
        return 0
    try:
        matrix = np.asarray(iou.boxes(a, b, o["box_format"], o["kind"], o["plus_one"]))
    except iou.ArgumentError as exc:
        side = o["a_file"] if exc.message.startswith("a[") else o["b_file"]
        raise InputError(side, exc.message, hint=exc.hint) from None
    emit(
        render_matrix(matrix, o["out_format"], settings),
        o["output"], protected, o["out_format"],
    )  # fmt: skip
    return 0
