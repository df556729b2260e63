"""What a report shows: the per-image ordering and how many images."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iou_eval.data.columns import Columns


@dataclass(frozen=True)
class View:
    """Report options shared by every format.

    Attributes:
        sort: per-image order: ``errors`` (FP + FN, most first), ``image``
            (id order), or a column (ascending, so the worst come first).
        worst: keep only the first ``worst`` images of that order (None: all).
        max_terminal_images: per-image rows a terminal report shows by
            default when ``worst`` is not given.
        images: a folder of the images, to draw the worst ones (HTML).
        plot_files: plots already written (``--plots``), to embed (HTML).
        strict: ``--strict`` was given: doubts about the input fail (JUnit).
        seconds: how long the run took, when measured (JUnit).
    """

    sort: str = "errors"
    worst: int | None = None
    max_terminal_images: int = 20
    images: str | None = None
    plot_files: tuple[str, ...] | None = None
    strict: bool = False
    seconds: float | None = None


def order_images(images: Columns, view: View) -> Columns:
    """The per-image table in the view's order, cut to ``worst`` rows."""
    return images.take(image_order(images, view))


def image_order(images: Columns, view: View) -> np.ndarray:
    """Row positions of the per-image table in the view's order, cut to ``worst``.

    ``errors``: most false positives + misses first, ties by lower recall;
    a column: ascending (the worst first for precision, recall, F1, IoU),
    undefined values last; ``image``: id order.  Sorts are stable.
    """
    n = len(images)
    if view.sort == "image" or n == 0:
        order = np.arange(n)
    elif view.sort == "errors":
        errors = np.asarray(images["FP"]) + np.asarray(images["FN"])
        recall = np.asarray(images["recall"], dtype=np.float64)
        # lexsort: last key first; NaN recall sorts last among equal errors.
        order = np.lexsort((np.isnan(recall), np.nan_to_num(recall, nan=np.inf), -errors))
    else:
        # Keypoints' mean overlap is mean_OKS: --sort mean_IoU sorts by it.
        column = "mean_OKS" if view.sort == "mean_IoU" and "mean_OKS" in images else view.sort
        values = np.asarray(images[column], dtype=np.float64)
        order = np.argsort(values, kind="stable")  # NaN last
    if view.worst is not None:
        order = order[: view.worst]
    return order
