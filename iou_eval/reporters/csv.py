"""CSV report: every number in one long (tidy) table.

Columns: ``protocol, scope, key, metric, value`` where ``scope`` is
``summary``, ``class`` (key = class name) or ``image`` (key = image id).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from iou_eval.escape import csv_text
from iou_eval.reporters.view import View, order_images

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult


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
    return frame_csv(tidy)


def frame_csv(df: pd.DataFrame) -> str:
    """A table as CSV text: header, then one line per row, written as pandas writes numbers.

    Text cells go through :func:`escape.csv_cell` (a leading ``'`` where a
    spreadsheet would read a formula) and fields with commas, quotes, CR or
    LF are quoted; undefined values are empty.
    """
    rows = df.astype(object).to_numpy().tolist()
    return csv_text([list(map(str, df.columns)), *([_value(v) for v in r] for r in rows)])


def _value(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):  # a numpy scalar: as Python prints it
        return _value(v.item())
    return v
