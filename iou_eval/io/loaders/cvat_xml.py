"""CVAT for images 1.1 XML (format ``cvat-xml``).

One file (``annotations.xml``, or a folder holding it) for every frame::

    <annotations>
      <version>1.1</version>
      <meta>...</meta>
      <image id="0" name="street_01.jpg" width="640" height="480">
        <box label="car" occluded="0" xtl="40.00" ytl="220.00" xbr="260.00" ybr="380.00"
             z_order="0">
          <attribute name="score">0.97</attribute>     <!-- predictions (Datumaro) -->
        </box>
        <polygon label="dog" occluded="0" points="250.00,300.00;370.00,300.00;..." />
      </image>
      <image id="1" name="street_12.jpg" width="640" height="480"/>   <!-- no objects -->
    </annotations>

Choices:

- Every ``<image>`` is an image, empty ones included.  Its id is its
  ``name`` (the file name as uploaded, folders included); ``width`` and
  ``height`` its size.  The frame number ``id`` is not used.
- ``<box>``: ``xtl ytl xbr ybr`` in pixels.  A box with a non-zero
  ``rotation`` is refused: iou-eval evaluates axis-aligned boxes.
  ``<polygon points="x,y;x,y;...">``: its box is its bounds; the polygon is
  kept.  Other shapes (``polyline``, ``points``, ``ellipse``, ``cuboid``,
  ``mask``, ``skeleton``, ``tag``) are skipped with a warning.
- ``<attribute>`` children: ``score`` is a prediction's score (Datumaro
  writes a score so); ``is_crowd`` (CVAT's and Datumaro's COCO attribute)
  marks a crowd region; ``difficult`` (CVAT's VOC attribute) sets ``ignore``.
  ``occluded`` is not read.
- ``<track>`` elements are CVAT for video: refused.
- DTDs and entity declarations are refused before parsing (no entity
  expansion, no external fetches).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np

from iou_eval.data.dataset import Dataset, ImageTable, assemble
from iou_eval.errors import InputError
from iou_eval.escape import excerpt
from iou_eval.io.loaders.common import LoadOptions, strict_floats
from iou_eval.io.loaders.shapes import ShapeReader, pending_outlines
from iou_eval.io.loaders.source import read_file_bytes
from iou_eval.io.loaders.xml_input import parse_xml as parse_bytes
from iou_eval.io.source import read_head
from iou_eval.numbers import is_number_token, quote_token

_TRUE = {"1", "true", "yes"}
_FALSE = {"", "0", "false", "no"}
ANNOTATIONS = "annotations.xml"


def looks_like_cvat_xml(path: str) -> bool:
    """Whether ``path`` (or its ``annotations.xml``) opens like a CVAT for images file.

    Never standard input: the registry judges that from its bytes.
    """
    if os.path.isdir(path):
        path = os.path.join(path, ANNOTATIONS)
    if path == "-" or not os.path.isfile(path):
        return False
    try:
        return cvat_head(read_head(path))
    except InputError:
        return False


def cvat_head(head: bytes) -> bool:
    """Whether a file's first bytes (decompressed, no BOM) open a CVAT for images document."""
    return b"<annotations" in head and b"<annotation>" not in head


def _file(path: str) -> str:
    if path == "-":
        return path
    if os.path.isdir(path):
        inside = os.path.join(path, ANNOTATIONS)
        if not os.path.isfile(inside):
            raise InputError(path, f"expected a CVAT {ANNOTATIONS} in this folder, found none")
        return inside
    if not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    return path


def parse_xml(file: str) -> ET.Element:
    """The root element; DTDs and entities refused, parse errors located."""
    data = read_file_bytes(file)
    if not data.strip():
        raise InputError(file, "file is empty")
    return parse_bytes(data, file, hint="CVAT writes no DOCTYPE; remove it")


def _number(value: str | None, what: str, file: str, where: str) -> float:
    text = (value or "").strip()
    # float() also reads '١٠' and '1_0'; a number in a file is ASCII.
    if not is_number_token(text):
        raise InputError(file, f"{what} must be a number, got {quote_token(text)}", where=where)
    v = float(text)
    if not np.isfinite(v):
        raise InputError(
            file, f"{what} must be a finite number, got {quote_token(text)}", where=where
        )
    return v


def _flag(value: str, what: str, file: str, where: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise InputError(
        file, f"attribute {excerpt(what)} must be true or false, got {excerpt(value)}", where=where
    )


def _points(text: str | None, file: str, where: str) -> np.ndarray:
    """``points="x,y;x,y"`` as a flat ``[2P]`` array."""
    cells = (text or "").replace(";", ",").split(",")
    try:
        flat = strict_floats(cells)
    except ValueError:
        raise InputError(
            file, f"points must be 'x,y;x,y;...', got {excerpt(text or '', 60)}", where=where
        ) from None
    if len(flat) % 2 or not len(flat) or not np.isfinite(flat).all():
        raise InputError(
            file, f"points must be finite 'x,y' pairs, got {excerpt(text or '', 60)}", where=where
        )
    return flat


class _Reader(ShapeReader):
    """Rows of one CVAT file, built through one :class:`ShapeRows`."""

    def __init__(self, file: str, role: str, options: LoadOptions) -> None:
        super().__init__(role, options)
        self.file = file
        self.crowd: list[bool] = []
        self.skipped: dict[str, str] = {}
        self.skipped_count: dict[str, int] = {}

    def read_image(self, image: ET.Element, ii: int) -> None:
        name = image.get("name")
        for k, el in enumerate(image):
            where = f'image[{ii}] name="{name}" > {el.tag}[{k}]'
            if el.tag == "box":
                self._box(el, where)
            elif el.tag == "polygon":
                self.rows.add_polygon(_points(el.get("points"), self.file, where))
            else:  # polyline, points, ellipse, cuboid, mask, skeleton, tag
                self.skipped.setdefault(el.tag, where)
                self.skipped_count[el.tag] = self.skipped_count.get(el.tag, 0) + 1
                continue
            self._attributes(el, where)
            label = (el.get("label") or "").strip()
            if not label:
                raise InputError(self.file, f"<{el.tag}> has no label", where=where)
            self.category_idx.append(self.classes.lookup(label, self.file, where))
            self.image_idx.append(ii)
            self.origin.append(len(self.origin))

    def _box(self, el: ET.Element, where: str) -> None:
        rotation = el.get("rotation")
        if rotation is not None and _number(rotation, "rotation", self.file, where) % 360 != 0:
            raise InputError(
                self.file,
                f"a rotated box (rotation={rotation}): iou-eval evaluates axis-aligned boxes",
                where=where,
                hint="draw it without rotation, or as a polygon (its bounds are then the box)",
            )
        x1, y1, x2, y2 = (
            _number(el.get(k), k, self.file, where) for k in ("xtl", "ytl", "xbr", "ybr")
        )
        self.rows.add_box(x1, y1, x2, y2)

    def _attributes(self, el: ET.Element, where: str) -> None:
        attrs = {a.get("name", ""): (a.text or "") for a in el.findall("attribute")}
        if self.pred:
            if "score" not in attrs:
                raise InputError(
                    self.file,
                    "prediction has no score",
                    where=where,
                    hint='predictions carry <attribute name="score">0.9</attribute> '
                    "(as Datumaro writes it); is this the ground truth?",
                )
            self.scores.append(_number(attrs["score"], "score", self.file, where))
        crowd = attrs.get("is_crowd", attrs.get("iscrowd", ""))
        self.crowd.append(_flag(crowd, "is_crowd", self.file, where))
        self.ignore.append(_flag(attrs.get("difficult", ""), "difficult", self.file, where))

    def warnings(self, source: str) -> list[str]:
        return [
            f"{source}: {self.skipped_count[tag]} CVAT <{tag}> element(s) skipped (only <box> and "
            f"<polygon> are objects; first: {where})"
            for tag, where in self.skipped.items()
        ]


def read_cvat_xml(
    path: str, role: str, options: LoadOptions
) -> tuple[Dataset, list[np.ndarray | None]]:
    """:func:`load_cvat_xml` and each row's polygon (``[2P]`` pixels, None for boxes)."""
    file = _file(path)
    root = parse_xml(file)
    if root.tag != "annotations":
        raise InputError(file, f"expected a CVAT <annotations> root element, found <{root.tag}>")
    if root.find("track") is not None:
        raise InputError(
            file,
            "this is CVAT for video (it has <track> elements)",
            hint="export the task as 'CVAT for images 1.1'",
        )
    reader = _Reader(file, role, options)
    ids: list[str] = []
    widths: list[float] = []
    heights: list[float] = []
    seen: dict[str, int] = {}
    for ii, image in enumerate(root.iter("image")):
        name = (image.get("name") or "").strip()
        where = f"image[{ii}]"
        if not name:
            raise InputError(file, "<image> has no name", where=where)
        if name in seen:
            raise InputError(
                file, f"image {excerpt(name)} is also image[{seen[name]}]", where=where
            )
        seen[name] = ii
        ids.append(name)
        for key, out in (("width", widths), ("height", heights)):
            v = image.get(key)
            out.append(np.nan if v is None else _number(v, key, file, where))
        reader.read_image(image, ii)
    columns, polygons = reader.columns()
    n = len(reader.origin)
    dataset = assemble(
        source=path,
        fmt="cvat-xml",
        images=ImageTable.build(ids, ids, widths, heights),
        **columns,
        is_crowd=np.asarray(reader.crowd, dtype=bool),
        origin_file=np.zeros(n, dtype=np.int32),
        files=[file],
        origin_label="shape",
        warnings=reader.warnings(path),
    )
    if options.masks:
        dataset = replace(dataset, masks=pending_outlines(dataset, polygons, role))
    return dataset, polygons


def load_cvat_xml(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read a CVAT for images 1.1 XML file as ground truth or predictions.

    Args:
        path: ``annotations.xml`` (``.gz`` accepted) or a folder holding it.
        role: ``"gt"`` or ``"pred"`` (``<attribute name="score">`` on every shape).
        options: ``names`` (then a numeric label is an index into them).

    Returns:
        A :class:`Dataset` with one image per ``<image>`` (id = its name) and
        one row per ``<box>`` or ``<polygon>``; rules in the module docstring.
    """
    return read_cvat_xml(path, role, options)[0]
