"""JSON report: the document of :meth:`EvaluationResult.to_dict`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from iou_eval.reporters.view import View, image_order

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult


def render_json(result: EvaluationResult, view: View) -> str:
    return dumps(result.to_dict(images_order=image_order(result.images, view)))


def dumps(doc: object) -> str:
    """Indented JSON, fast: msgspec encodes, then re-indents."""
    return msgspec.json.format(msgspec.json.encode(doc), indent=2).decode() + "\n"
