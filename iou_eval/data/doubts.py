"""Two kinds of warning: notes, and doubts about the numbers.

A *note* says what was done and changes nothing the user needs to act on
("gzip-compressed, decompressed", "a quirk of pycocotools reproduced").  A
*doubt* says the numbers may be wrong as the files were read: boxes that fit
their images only under another layout, class ids that look shifted,
predictions on images the ground truth does not list...  ``--strict`` turns
every doubt into exit code 1.

A doubt is a :class:`Doubt`, a ``str`` subclass: it travels through every
list of warnings unchanged (the JSON ``warnings`` stay strings) and is told
apart with :func:`is_doubt`; the JSON document lists the doubts again under
``doubts``.
"""

from __future__ import annotations

from collections.abc import Iterable

NOTE = "note"
DOUBT = "doubt"
# The source the streaming Evaluator's datasets carry (its fixes are keywords, not flags).
STREAM_SOURCE = "<Evaluator>"


class Doubt(str):
    """A warning that the numbers may be wrong as read (``--strict`` fails on it)."""

    __slots__ = ()
    kind = DOUBT


def doubt(text: str) -> Doubt:
    """``text`` as a :class:`Doubt`."""
    return Doubt(text)


def is_doubt(warning: object) -> bool:
    return isinstance(warning, Doubt)


def kind_of(warning: object) -> str:
    """``"doubt"`` or ``"note"``."""
    return DOUBT if isinstance(warning, Doubt) else NOTE


def doubts_of(warnings: Iterable[str]) -> list[str]:
    """The doubts among ``warnings``, in order, as plain strings."""
    return [str.__str__(w) for w in warnings if isinstance(w, Doubt)]


def declare_hint(way: str) -> str:
    """How to declare images without objects, ``way`` being how the ground truth's format does
    (``FormatTraits.declares_empty_image``; "" when it has no way)."""
    return (
        "if those images have no objects, declare them "
        + (f"({way}) " if way else "")
        + "or pass --images DIR, so that their false positives count"
    )
