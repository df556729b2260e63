"""JSON report: the document of :meth:`EvaluationResult.to_dict`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from .view import View, order_images

if TYPE_CHECKING:  # pragma: no cover
    from ..results import EvaluationResult


def render_json(result: EvaluationResult, view: View) -> str:
    doc = result.to_dict()
    doc["per_image"] = order_images(result.images, view).records()
    return dumps(doc)


def dumps(doc: object) -> str:
    """Indented JSON, fast: msgspec encodes, then re-indents."""
    return msgspec.json.format(msgspec.json.encode(doc), indent=2).decode() + "\n"
