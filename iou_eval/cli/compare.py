"""``iou-eval compare``: two models on one ground truth, paired deltas."""

from __future__ import annotations

import sys
from typing import Any

import click

from iou_eval.cli.common import (
    INPUT_PATH,
    SLOTS,
    check_output,
    cluster_for,
    emit,
    output_options,
    record_options,
    run_guarded,
    warn,
)
from iou_eval.errors import UsageError
from iou_eval.options import (
    BootstrapOptions,
    EvalOptions,
    PointOptions,
    ProtocolOptions,
    RuntimeOptions,
    from_cli,
)


@click.command(
    "compare",
    epilog="""\b
Example:
  iou-eval compare gt.json baseline.json candidate.json --bootstrap 1000
  iou-eval compare person_keypoints.json a.json b.json --iou-type keypoints
""",
)
@click.argument("gt", metavar="GROUND_TRUTH", type=INPUT_PATH)
@click.argument("a", metavar="PREDICTIONS_A", type=INPUT_PATH)
@click.argument("b", metavar="PREDICTIONS_B", type=INPUT_PATH)
@click.option(
    "--protocol",
    "-p",
    default="auto",
    show_default=True,
    help="auto, coco, lvis, voc07, voc12 or openimages (auto: lvis for an LVIS ground truth, "
    "else coco).",
)
@click.option("--oi-hierarchy", metavar="FILE", help="Open Images class hierarchy JSON.")
@click.option(
    "--oi-image-labels",
    metavar="FILE",
    help="Open Images verified image-level labels CSV (default: beside the boxes file).",
)
@click.option(
    "--iou-type",
    default="bbox",
    show_default=True,
    help="bbox (boxes), segm (instance masks), boundary or keypoints (OKS).",
)
@click.option(
    "--kpt-sigmas",
    default=None,
    metavar="LIST|FILE",
    help="Keypoint sigmas of OKS (see eval --help); default COCO's 17, else 1/K.",
)
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
    from iou_eval.api import evaluate, load
    from iou_eval.ci.compare import compare
    from iou_eval.reporters import OutputFormat
    from iou_eval.reporters.compare import render_compare

    protected = (gt, a, b, o["oi_hierarchy"], o["oi_image_labels"])
    check_output(o["output"], protected)
    if "," in o["protocol"] or "," in o["iou_type"]:
        raise UsageError("compare takes one protocol and one iou type")
    options = EvalOptions(
        protocol=ProtocolOptions(
            protocol=o["protocol"],
            iou_type=o["iou_type"],
            kpt_sigmas=o["kpt_sigmas"],
            oi_hierarchy=o["oi_hierarchy"],
            oi_image_labels=o["oi_image_labels"],
        ),
        **{slot: from_cli(SLOTS[slot], o) for slot in ("point", "bootstrap", "runtime")},
    )
    options = EvalOptions.of(options, keep_accumulation=False)
    gt_ds = load(gt, "gt", masks=options.protocol.masks, keypoints=options.protocol.keypoints)
    show = not o["quiet"] and o["out_format"] not in ("json", "csv")
    with cluster_for(options, show) as client:
        ra = evaluate(gt_ds, a, options, client=client, warn=False)
        rb = evaluate(gt_ds, b, options, client=client, warn=False)
    warn(list(dict.fromkeys(ra.warnings + rb.warnings)), o["quiet"])
    fmt = OutputFormat(o["out_format"])
    emit(render_compare(compare(ra, rb), fmt, a, b), o["output"], protected, fmt.value)
    return 0
