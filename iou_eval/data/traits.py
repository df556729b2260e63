"""What the data layer needs to know of a dataset's format, as a record.

The format records live in :mod:`iou_eval.io.loaders.registry`, above this
layer: each registration hands its :class:`FormatTraits` here (:func:`declare`),
and a :class:`~iou_eval.data.dataset.Dataset` asks ``ds.traits`` by the name
of the format it was read from.  No module below the registry tests a format
by its name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatTraits:
    """The facts of one format that reading, aligning and doubting depend on.

    Attributes:
        declares_empty_image: how a ground truth of this format declares an
            image without objects (words for a hint); "" when it cannot.
        layout_open: box numbers in pixels whose layout a file or the user may
            get wrong (layout and scale doubts look at them).
        option_layout: the options set the layout and scale (``--box-format``,
            ``--normalized``).
        coco_ids: image and category ids are COCO ids: sorted as pycocotools
            sorts them, predictions join images by id, and a respelled class
            is what pycocotools would read.
        unit_image: boxes are fractions of a unit image (no sizes in the file).
        fraction_layout: the layout of fractions read with ``--normalized``
            when no ``--box-format`` says (``""``: the layout read).
    """

    declares_empty_image: str = ""
    layout_open: bool = False
    option_layout: bool = False
    coco_ids: bool = False
    unit_image: bool = False
    fraction_layout: str = ""


NO_TRAITS = FormatTraits()
_TRAITS: dict[str, FormatTraits] = {}


def declare(name: str, traits: FormatTraits) -> None:
    """Record the traits of the format ``name`` (the format registry calls it)."""
    _TRAITS[name] = traits


def traits_of(name: str) -> FormatTraits:
    """The traits of the format ``name``; none for a format never declared."""
    return _TRAITS.get(name, NO_TRAITS)
