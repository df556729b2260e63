"""Reporters: render an :class:`~iou_eval.results.EvaluationResult` as text.

Each reporter is a function ``render(result, view) -> str``; nothing here
prints or writes files.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from iou_eval.reporters.view import View

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult


class OutputFormat(str, Enum):
    TABLE = "table"
    MARKDOWN = "markdown"
    CSV = "csv"
    JSON = "json"
    HTML = "html"
    JUNIT = "junit"


def renderer(fmt: OutputFormat) -> Callable[[EvaluationResult, View], str]:
    if fmt is OutputFormat.HTML:
        from iou_eval.reporters.report import render_report

        return render_report
    if fmt is OutputFormat.JUNIT:
        from iou_eval.reporters.junit import render_junit

        return render_junit
    if fmt is OutputFormat.JSON:
        from iou_eval.reporters.json import render_json

        return render_json
    if fmt is OutputFormat.CSV:
        from iou_eval.reporters.csv import render_csv

        return render_csv
    from iou_eval.reporters.text import render_markdown, render_table

    return render_markdown if fmt is OutputFormat.MARKDOWN else render_table


# Pictures: plain inputs (arrays, the JSON document); imported on first use, so
# that a text or JSON report loads none of their modules.
_PICTURES = {
    "draw_image": "draw",
    "worst_images": "draw",
    "render_html": "html",
    "write_plots": "plots",
}


def __getattr__(name: str) -> Any:
    module = _PICTURES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)


__all__ = [
    "OutputFormat",
    "View",
    "draw_image",
    "render_html",
    "renderer",
    "worst_images",
    "write_plots",
]
