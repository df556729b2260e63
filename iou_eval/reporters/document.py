"""The one JSON envelope every machine-readable report shares (single, batch, compare)."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1


def envelope(mode: str | None = None, **body: Any) -> dict[str, Any]:
    """``{"schema_version", "tool", ["mode"], **body}`` in that key order.

    ``mode``: ``"batch"`` or ``"compare"``; a single evaluation has none, so
    its document reads as before and can serve as a ``--baseline``.
    """
    from .. import __version__

    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "iou-eval", "version": __version__},
    }
    if mode is not None:
        doc["mode"] = mode
    doc.update(body)
    return doc
