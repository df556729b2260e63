"""What a report shows: the per-image ordering and how many images."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SORT_KEYS = ("image", "errors", "FP", "FN", "precision", "recall", "F1", "mean_IoU")


@dataclass(frozen=True)
class View:
    """Report options shared by every format.

    Attributes:
        sort: per-image order: ``errors`` (FP + FN, most first), ``image``
            (id order), or a column (ascending, so the worst come first).
        worst: keep only the first ``worst`` images of that order (None: all).
        max_terminal_images: per-image rows a terminal report shows by
            default when ``worst`` is not given.
    """

    sort: str = "errors"
    worst: int | None = None
    max_terminal_images: int = 20


def order_images(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """The per-image table in the view's order, cut to ``worst`` rows."""
    if view.sort == "image" or df.empty:
        out = df
    elif view.sort == "errors":
        errors = df["FP"] + df["FN"]
        out = (
            df.assign(_e=errors)
            .sort_values(
                ["_e", "recall"], ascending=[False, True], kind="stable", na_position="last"
            )
            .drop(columns="_e")
        )
    else:
        out = df.sort_values(view.sort, ascending=True, kind="stable", na_position="last")
    if view.worst is not None:
        out = out.head(view.worst)
    return out
