"""Strict numbers for options and text fields: ASCII digits, finite, in range, said clearly.

Python's ``float()`` and ``int()`` accept more than a user means: every
Unicode decimal digit (``int('٣')`` is 3, ``float('１')`` is 1.0),
underscores (``1_0``), surrounding Unicode spaces, ``nan``, ``inf`` and
``infinity`` in any case, and ``1e400`` (which becomes ``inf``).  Here a
number is ASCII only: an optional sign, digits with an optional ``.``, an
optional exponent; ``nan`` and ``inf`` only where a caller allows them.
Errors name the option (``what``) and say what was expected and what was
found::

    --score-thr: expected a finite number, got 'nan'
    --iou-thr: expected a number in [0, 1], got '1.5'

The list parsers keep the syntax the command line has always taken and
refuse what could not have been meant:

- ``--iou-thresholds``: ``0.5,0.75`` or pycocotools' ``start:stop:step`` grid;
  values in [0, 1], none repeated, at least one, at most
  :data:`MAX_THRESHOLDS`; a grid whose step does not divide ``stop - start``
  is refused (pycocotools' ``round`` would silently use another step).
- ``--max-dets``: integers in [1, :data:`MAX_DETS_HIGH`], none repeated.
- ``--area-ranges``: ``label=lo:hi`` items, ``hi`` may be ``inf``/``max``
  (pycocotools' 1e5**2); ``0 <= lo < hi``, finite; labels unique, not ``all``.
- ``--image-size``: ``WIDTHxHEIGHT``, both finite and positive.
- ``--max-drop``: ``0.01`` or ``2%``, finite and not negative.
- ``--workers``: 0 (one per core) to :data:`MAX_WORKERS`; ``--bootstrap``: 0
  to :data:`MAX_BOOTSTRAP`; ``--seed``: 0 to 2**32 - 1 (it is stored in JSON baselines; larger integers lose
  precision in some JSON readers).

Blank items in comma lists are skipped, as before (``0.5,`` is ``0.5``).
"""

from __future__ import annotations

import math
import numbers as _abc  # the standard library's number classes
import re
from collections.abc import Sequence

from iou_eval.errors import InputError, UsageError
from iou_eval.escape import excerpt, for_terminal

MAX_THRESHOLDS = 1000
MAX_DETS_HIGH = 10**9
MAX_WORKERS = 256
MAX_BOOTSTRAP = 1_000_000
MAX_SEED = 2**32 - 1
COCO_AREA_MAX = 1e5**2  # pycocotools' upper bound of the "all" and "large" ranges

_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INT = re.compile(r"[+-]?\d+", re.ASCII)
_SPECIAL = {"nan": math.nan, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
            "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}  # fmt: skip
# Four thousand digits is far beyond any option (and below int()'s own limit of
# 4,300); a longer token is refused
# before int() spends time on it.
_MAX_DIGITS = 4_000


def _fmt(v: float) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def range_text(
    low: float | None, high: float | None, low_open: bool = False, high_open: bool = False
) -> str:
    """``[0, 1]``, ``(0, 1]``, ``>= 0``, ``< 5`` …; empty without bounds."""
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{_fmt(low)}, {_fmt(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_fmt(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {_fmt(high)}"
    return ""


def _in_range(
    v: float, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> bool:
    if low is not None and (v < low or (low_open and v == low)):
        return False
    return not (high is not None and (v > high or (high_open and v == high)))


def _expected(
    kind: str, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> str:
    bounds = range_text(low, high, low_open, high_open)
    if not bounds:
        return kind
    return f"{kind} in {bounds}" if bounds.startswith(("[", "(")) else f"{kind} {bounds}"


def parse_float(
    text: str,
    what: str,
    *,
    finite: bool = True,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``text`` as a float, or a :class:`UsageError` naming ``what``.

    Args:
        text: ASCII decimal (``0.5``, ``-1e-3``, ``.5``); surrounding ASCII
            spaces are ignored.  ``nan``/``inf`` (any case) only with
            ``finite=False``.
        what: the option or field, e.g. ``--score-thr``.
        low, high: bounds, closed unless ``low_open``/``high_open``.
    """
    kind = "a finite number" if finite and low is None and high is None else "a number"
    expected = _expected(kind, low, high, low_open, high_open)
    if not isinstance(text, str):
        raise TypeError(f"{what}: parse_float takes text, got {type(text).__name__}")
    token = text.strip(" \t")
    if token.lower() in _SPECIAL and not finite:
        value = _SPECIAL[token.lower()]
    elif len(token) <= _MAX_DIGITS and _FLOAT.fullmatch(token):
        value = float(token)
        if finite and not math.isfinite(value):  # 1e400
            raise UsageError(f"{what}: expected {expected}, got {_got(text)} (too large)")
    else:
        raise UsageError(f"{what}: expected {expected}, got {_got(text)}")
    if math.isnan(value):
        # finite=False without bounds is the only way NaN gets here and passes.
        if low is not None or high is not None:
            raise UsageError(f"{what}: expected {expected}, got {_got(text)}")
    elif not _in_range(value, low, high, low_open, high_open):
        raise UsageError(f"{what}: expected {expected}, got {_got(text)}")
    return value


def parse_int(
    text: str,
    what: str,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """``text`` as an int written with ASCII digits (no exponent, no ``.``), within [low, high]."""
    if not isinstance(text, str):
        raise TypeError(f"{what}: parse_int takes text, got {type(text).__name__}")
    expected = _expected("an integer", low, high, False, False)
    token = text.strip(" \t")
    if len(token) > _MAX_DIGITS or not _INT.fullmatch(token):
        raise UsageError(f"{what}: expected {expected}, got {_got(text)}")
    value = int(token)
    if not _in_range(value, low, high, False, False):
        raise UsageError(f"{what}: expected {expected}, got {_got(text)}")
    return value


def _items(text: str, what: str, example: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{what}: expected at least one value like {example}, got {_got(text)}")
    return items


def _unique(values: list, what: str) -> None:
    seen = set()
    for v in values:
        if v in seen:
            shown = excerpt(v) if isinstance(v, str) else _fmt(v)
            raise UsageError(f"{what}: {shown} is given twice; each value must be unique")
        seen.add(v)


def parse_float_list(
    text: str, what: str, *, low: float | None = None, high: float | None = None
) -> list[float]:
    """``"0.5,0.75"`` or ``start:stop:step`` -> unique finite floats within [low, high].

    The grid is built as pycocotools builds its thresholds
    (``np.linspace(start, stop, round((stop - start) / step) + 1)``) so that
    ``0.5:0.95:0.05`` gives the very same floats.
    """
    if ":" in text:
        values = _grid(text, what, low, high)
    else:
        values = [
            parse_float(t, what, low=low, high=high)
            for t in _items(text, what, "0.5,0.75 or 0.5:0.95:0.05")
        ]
    if len(values) > MAX_THRESHOLDS:
        raise UsageError(f"{what}: at most {MAX_THRESHOLDS} values, got {len(values)}")
    _unique(values, what)
    return values


def _grid(text: str, what: str, low: float | None, high: float | None) -> list[float]:
    import numpy as np

    parts = text.split(":")
    if len(parts) != 3:
        raise UsageError(f"{what}: expected start:stop:step like 0.5:0.95:0.05, got {_got(text)}")
    start = parse_float(parts[0], f"{what} start", low=low, high=high)
    stop = parse_float(parts[1], f"{what} stop", low=low, high=high)
    step = parse_float(parts[2], f"{what} step", low=0.0, low_open=True)
    if stop < start:
        raise UsageError(f"{what}: stop {_fmt(stop)} is below start {_fmt(start)}")
    steps = (stop - start) / step
    if steps > MAX_THRESHOLDS:
        raise UsageError(f"{what}: at most {MAX_THRESHOLDS} values, {excerpt(text)} gives more")
    n = int(np.round(steps))
    if abs(steps - n) > 1e-6:
        raise UsageError(
            f"{what}: step {_fmt(step)} does not divide {_fmt(start)}:{_fmt(stop)} "
            f"({steps:.4g} steps)"
        )
    return [float(v) for v in np.linspace(start, stop, n + 1, endpoint=True)]


def parse_iou_thresholds(text: str, what: str = "--iou-thresholds") -> list[float]:
    """COCO IoU thresholds: a list or a grid in [0, 1], unique."""
    return parse_float_list(text, what, low=0.0, high=1.0)


def parse_max_dets(text: str, what: str = "--max-dets") -> list[int]:
    """``1,10,100`` -> unique integers in [1, MAX_DETS_HIGH]."""
    values = [parse_int(t, what, low=1, high=MAX_DETS_HIGH) for t in _items(text, what, "1,10,100")]
    _unique(values, what)
    return values


def parse_area_bounds(text: str, what: str = "--area-ranges") -> list[tuple[str, float, float]]:
    """``small=0:1024,medium=1024:9216,large=9216:inf`` -> ``(label, lo, hi)``; ``inf``/``max`` is 1e5**2."""
    out: list[tuple[str, float, float]] = []
    for part in _items(text, what, "small=0:1024"):
        label, sep, bounds = part.partition("=")
        lo_s, sep2, hi_s = bounds.partition(":")
        label = label.strip()
        if not sep or not sep2 or not label or ":" in hi_s:
            raise UsageError(
                f"{what}: expected label=lo:hi items like small=0:1024, got {excerpt(part)}"
            )
        if label == "all":
            raise UsageError(f"{what}: 'all' is always evaluated; name the other ranges")
        name = for_terminal(label)
        lo = parse_float(lo_s, f"{what} {name} lower bound", low=0.0)
        if hi_s.strip().lower() in ("inf", "max"):
            hi = COCO_AREA_MAX
        else:
            hi = parse_float(hi_s, f"{what} {name} upper bound", low=0.0)
        if not lo < hi:
            raise UsageError(
                f"{what}: {name} needs lo < hi, got {_fmt(lo)}:{_fmt(hi)} in {excerpt(part)}"
            )
        out.append((label, lo, hi))
    _unique([a[0] for a in out], f"{what} label")
    return out


def parse_image_size(text: str, what: str = "--image-size") -> tuple[float, float]:
    """``640x480`` -> (640.0, 480.0); both finite and positive."""
    parts = text.lower().split("x")
    if len(parts) != 2:
        raise UsageError(f"{what}: expected WIDTHxHEIGHT like 640x480, got {_got(text)}")
    w = parse_float(parts[0], f"{what} width", low=0.0, low_open=True)
    h = parse_float(parts[1], f"{what} height", low=0.0, low_open=True)
    return w, h


def parse_max_drop(text: str, what: str = "--max-drop") -> tuple[float, bool]:
    """``0.01`` (absolute) or ``2%`` (relative) -> (amount as a fraction, relative)."""
    t = text.strip()
    relative = t.endswith("%")
    value = parse_float(t[:-1] if relative else t, what, low=0.0)
    return (value / 100.0 if relative else value), relative


def parse_workers(text: str, what: str = "--workers") -> int:
    """0 (one per core) to MAX_WORKERS."""
    return parse_int(text, what, low=0, high=MAX_WORKERS)


def parse_seed(text: str, what: str = "--seed") -> int:
    """0 to 2**32 - 1."""
    return parse_int(text, what, low=0, high=MAX_SEED)


def parse_unit_interval(text: str, what: str) -> float:
    """A threshold such as ``--iou-thr``: finite, in [0, 1]."""
    return parse_float(text, what, low=0.0, high=1.0)


def parse_confidence(text: str, what: str = "--confidence") -> float:
    """The coverage of bootstrap intervals, in [0.5, 0.999] as the command line has taken it."""
    return parse_float(text, what, low=0.5, high=0.999)


def has_non_ascii_digit(text: str) -> bool:
    """True when ``text`` holds a digit outside 0-9 (``٣``, ``１``, ``²``)."""
    return not text.isascii() and any(ch.isdigit() and not ch.isascii() for ch in text)


def quote_token(text: str) -> str:
    """A token for an error message: a short escaped excerpt, and why Unicode digits fail."""
    note = " (digits must be ASCII 0-9)" if has_non_ascii_digit(text) else ""
    return excerpt(text) + note


_got = quote_token


def parse_field_float(
    token: str, path: str | None, where: str | int | None, field: str, *, finite: bool = True
) -> float:
    """A number field of a data file (CSV cell, text token, XML element) -> float.

    The same syntax as :func:`parse_float`; the error is an :class:`InputError`
    at ``path:where`` naming the field.
    """
    try:
        return parse_float(token, field, finite=finite)
    except UsageError as exc:
        raise InputError(path, exc.message, where=where) from None


def first_loose_number(tokens: Sequence[str]) -> int:
    """Index of the first token that ``float()`` (and numpy) would read but the strict syntax refuses.

    ``'١٠'`` (Arabic-Indic digits), ``'１0'`` (full-width), ``'1_0'``
    (underscores) and non-ASCII spaces around a number: Python reads them
    all as numbers; a data file's number is ASCII.  -1 when there is none.
    Only tokens with a non-ASCII character or an underscore are looked at,
    so an ASCII column costs one scan of its joined text.
    """
    joined = "".join(tokens)
    if joined.isascii() and "_" not in joined:
        return -1
    for i, t in enumerate(tokens):
        if (not t.isascii() or "_" in t) and not is_number_token(t):
            return i
    return -1


def is_number_token(token: str) -> bool:
    """Whether ``token`` is a number in the strict syntax (``nan``/``inf`` included)."""
    t = token.strip(" \t\r\n")
    return t.lower() in _SPECIAL or (len(t) <= _MAX_DIGITS and _FLOAT.fullmatch(t) is not None)


def first_non_ascii(tokens: Sequence[str]) -> int:
    """Index of the first token with a non-ASCII character, or -1.

    Number columns are parsed by numpy or ``float()``, both of which read
    ``'٣'`` as 3; a loader calls this only when its raw bytes are not ASCII
    (``data.isascii()`` is a fast C scan), so ASCII files pay nothing.
    """
    for i, t in enumerate(tokens):
        if not t.isascii():
            return i
    return -1


def check_number(
    value: object,
    what: str,
    *,
    low: float | None = None,
    high: float | None = None,
    integer: bool = False,
) -> float:
    """A value given through the Python API (not text): a finite real number within [low, high].

    Booleans, NaN, infinities and (with ``integer``) fractions are refused
    with the same :class:`UsageError` the command line gives.  Returns the
    value as float (int with ``integer``).
    """
    kind = "an integer" if integer else "a finite number"
    expected = _expected(kind, low, high, False, False)
    ok = isinstance(value, _abc.Real) and not isinstance(value, bool)
    if ok:
        as_float = float(value)  # type: ignore[arg-type]
        ok = math.isfinite(as_float) and (not integer or as_float.is_integer())
        ok = ok and _in_range(as_float, low, high, False, False)
    if not ok:
        raise UsageError(f"{what}: expected {expected}, got {for_terminal(repr(value))}")
    return int(value) if integer else float(value)  # type: ignore[call-overload,arg-type]
