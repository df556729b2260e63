"""The one JSON envelope every machine-readable report shares (single, batch, compare)."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1


def envelope(mode: str | None = None, **body: Any) -> dict[str, Any]:
    """``{"schema_version", "tool", ["mode"], **body}`` in that key order.

    ``mode``: ``"batch"`` or ``"compare"``; a single evaluation has none, so
    its document reads as before and can serve as a ``--baseline``.
    """
    from iou_eval.version import __version__

    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "iou-eval", "version": __version__},
    }
    if mode is not None:
        doc["mode"] = mode
    doc.update(body)
    return doc


def slices_block(slices) -> dict[str, Any]:
    """``{"<name>": {"images": n, "summary": {...}}}`` of one protocol's slices, in file order."""
    from iou_eval.data.columns import clean

    return {
        s.name: {"images": s.images, "summary": {k: clean(v) for k, v in s.summary.items()}}
        for s in slices
    }


def analysis_blocks(analysis) -> dict[str, Any]:
    """The run-wide analyses' blocks: ``tide``, ``confusion_matrix``, ``calibration`` (as asked)."""
    from iou_eval.data.columns import clean

    out: dict[str, Any] = {}
    if analysis.tide is not None:
        t = analysis.tide.to_dict()
        t.update(ap=clean(t["ap"]), fp_dap=clean(t["fp_dap"]), fn_dap=clean(t["fn_dap"]))
        t["dap"] = {k: clean(v) for k, v in t["dap"].items()}
        out["tide"] = t
    if analysis.confusion is not None:
        c = analysis.confusion
        out["confusion_matrix"] = {
            "labels": [c.label(i) for i in range(len(c.matrix))],
            "rows": "ground_truth",
            "columns": "prediction",
            "iou_threshold": c.iou_threshold,
            "score_threshold": c.score_threshold,
            "matrix": c.matrix.tolist(),
        }
    if analysis.calibration is not None:
        out["calibration"] = analysis.calibration.to_dict()
    return out
