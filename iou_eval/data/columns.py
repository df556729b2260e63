"""A light, ordered table of equal-length columns.

The command line renders reports straight from these, so a run that only
prints or writes JSON never imports pandas; the Python API turns them into
DataFrames on first use.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def clean(value: Any) -> Any:
    """A JSON-safe scalar: NaN/inf -> None, numpy -> Python."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    return value


def _clean_column(values: Sequence[Any] | np.ndarray) -> list[Any]:
    """A column as JSON-ready Python values (whole-column conversions, then NaN -> None)."""
    if isinstance(values, np.ndarray):
        items = values.tolist()  # numpy scalars become Python ones here
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            return [None if x != x or x in (_INF, -_INF) else x for x in items]
        return items
    if set(map(type, values)) <= _AS_THEY_ARE:
        return list(values)  # ids and names: what clean() would give back, one pass
    return [clean(x) for x in values]


# Values clean() gives back unchanged (bool and numpy scalars are other types).
_AS_THEY_ARE = {int, str, type(None)}


_INF = float("inf")


class Columns:
    """Columns by name (numpy arrays or lists), all of one length ``N``."""

    def __init__(self, columns: dict[str, Sequence[Any] | np.ndarray]) -> None:
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {lengths}")
        self._cols = dict(columns)

    def __len__(self) -> int:
        return len(next(iter(self._cols.values()))) if self._cols else 0

    @property
    def names(self) -> list[str]:
        return list(self._cols)

    def __getitem__(self, name: str) -> Any:
        return self._cols[name]

    def __contains__(self, name: str) -> bool:
        return name in self._cols

    def take(self, rows: np.ndarray) -> Columns:
        """The rows at integer positions ``rows``, in that order."""
        out: dict[str, Any] = {}
        positions = np.asarray(rows).tolist()  # for the list columns, as Python ints
        for k, v in self._cols.items():
            out[k] = v[rows] if isinstance(v, np.ndarray) else list(map(v.__getitem__, positions))
        return Columns(out)

    def rows(self, names: Sequence[str] | None = None) -> Iterator[tuple[Any, ...]]:
        cols = [self._cols[n] for n in (names or self.names)]
        return zip(*cols, strict=True)

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready rows: NaN becomes None, numpy scalars Python ones."""
        names = self.names
        cols = [_clean_column(v) for v in self._cols.values()]
        return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)]

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({k: list(v) if not isinstance(v, np.ndarray) else v
                             for k, v in self._cols.items()}, columns=self.names)  # fmt: skip


def frame_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows of a DataFrame (NaN -> None)."""
    names = [str(c) for c in df.columns]
    return [
        {k: clean(v) for k, v in zip(names, row, strict=True)}
        for row in df.itertuples(index=False, name=None)
    ]
