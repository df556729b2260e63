"""A picture report of one run: plots and a self-contained ``index.html``.

``python -m iou_eval.reporters.html_demo [GT PREDS] [-o DIR]`` scores the
pair (default: ``sample_data/coco``) with :func:`iou_eval.api.evaluate` and
writes ``DIR/plots/*.png|svg`` and ``DIR/index.html``: the command line's
``--plots DIR/plots -f html -o DIR/index.html`` as a function
(:func:`write_report`).  The plots' inputs come from
:func:`iou_eval.reporters.report.plot_inputs`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from iou_eval.errors import IouEvalError
from iou_eval.reporters.report import PLOT_TITLES, plot_inputs  # noqa: F401  (where readers looked for them)

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.results import EvaluationResult

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "coco"


def write_report(result: EvaluationResult, outdir: str | os.PathLike,
                 images: str | None = None) -> Path:  # fmt: skip
    """Plots into ``outdir/plots`` and the page ``outdir/index.html``; returns the page's path.

    ``images``: a folder of the run's images, to draw the worst ones in the page.
    """
    from iou_eval.reporters.html import write_text
    from iou_eval.reporters.report import render_report, write_run_plots
    from iou_eval.reporters.view import View

    out = Path(outdir)
    files = write_run_plots(result, out / "plots")
    view = View(images=images, plot_files=tuple(str(f) for f in files))
    page = out / "index.html"
    write_text(page, render_report(result, view))
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iou_eval.reporters.html_demo",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("gt", nargs="?", default=str(SAMPLE / "gt.json"))
    parser.add_argument("preds", nargs="?", default=str(SAMPLE / "preds.json"))
    parser.add_argument("-o", "--outdir", default="report")
    parser.add_argument("--images", help="a folder of the images, to draw the worst ones")
    args = parser.parse_args(argv)
    from iou_eval.api import evaluate

    try:
        page = write_report(evaluate(args.gt, args.preds), args.outdir, args.images)
    except IouEvalError as exc:
        print(f"iou-eval: error: {exc.format()}", file=sys.stderr)
        return exc.exit_code
    print(f"wrote {page} and the plots in {page.parent / 'plots'}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
