"""JSON report: the document of :meth:`EvaluationResult.to_dict`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..results import frame_records
from .view import View, order_images

if TYPE_CHECKING:  # pragma: no cover
    from ..results import EvaluationResult


def render_json(result: EvaluationResult, view: View) -> str:
    doc = result.to_dict()
    doc["per_image"] = frame_records(order_images(result.per_image, view))
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
