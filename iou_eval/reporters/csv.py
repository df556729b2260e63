"""CSV report: every number in one long (tidy) table.

Columns: ``protocol, scope, key, metric, value`` where ``scope`` is
``summary``, ``class`` (key = class name) or ``image`` (key = image id).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pandas as pd

from .view import View, order_images

if TYPE_CHECKING:  # pragma: no cover
    from ..results import EvaluationResult


def render_csv(result: EvaluationResult, view: View) -> str:
    tidy = result.tidy()
    if result.checks:
        checks = pd.DataFrame(
            [("checks", "check", c.name, m, v)
             for c in result.checks
             for m, v in (("threshold", c.threshold), ("value", c.value), ("margin", c.margin),
                          ("passed", c.passed))],
            columns=tidy.columns,
        )  # fmt: skip
        tidy = pd.concat([tidy, checks], ignore_index=True)
    if view.worst is not None:
        keep = set(order_images(result.images, view)["image_id"])
        tidy = tidy[(tidy["scope"] != "image") | tidy["key"].isin(keep)]
    buf = io.StringIO()
    tidy.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()
