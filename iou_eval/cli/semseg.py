"""``iou-eval semseg``: semantic segmentation from two folders of label maps."""

from __future__ import annotations

import sys
from typing import Any

import click

from iou_eval.cli.common import (
    INPUT_PATH,
    StrictInt,
    check_output,
    emit,
    output_options,
    progress_bar,
    run_guarded,
    warn,
)
from iou_eval.cli.outcome import Outcome


@click.command(
    "semseg",
    epilog="""\b
Examples:
  iou-eval semseg gtFine/val preds/ --names cityscapes.names
  iou-eval semseg ann/ pred/ --num-classes 150 --reduce-zero-label -f json -o miou.json
  iou-eval semseg gt/ pred/ --num-classes 19 --fail-under mIoU=0.7 --fail-under IoU[road]=0.95

\b
Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed,
4 an internal error (a bug; --debug shows the traceback).
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
    from iou_eval.ci.gates import parse_gate
    from iou_eval.io.option_files import read_names
    from iou_eval.reporters import OutputFormat
    from iou_eval.reporters.semseg import render_semseg
    from iou_eval.toolkit.semseg import check_gates, evaluate_pairing, pair_files, validate_gate

    protected = (gt_dir, pred_dir, o["names_file"])
    check_output(o["output"], protected)
    gates = [validate_gate(parse_gate(t)) for t in o["fail_under"]]
    names = list(read_names(o["names_file"])) if o["names_file"] else None
    fmt = OutputFormat(o["out_format"])
    pairing = pair_files(gt_dir, pred_dir)
    show = not o["quiet"] and fmt not in (OutputFormat.JSON, OutputFormat.CSV)
    bar = progress_bar(len(pairing.pairs), "label maps", show, unit="image")
    try:
        result = evaluate_pairing(
            pairing, o["num_classes"], names, o["ignore_index"], o["reduce_zero_label"],
            progress=bar.update if bar is not None else None,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    result.checks = check_gates(result, gates)
    warn(result.warnings, o["quiet"])
    emit(render_semseg(result, fmt), o["output"], protected, fmt.value)
    return Outcome(failed_checks=sum(not c.passed for c in result.checks)).exit_code
