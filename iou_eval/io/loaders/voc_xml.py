"""Pascal VOC annotation XML: a folder of per-image files, or one file.

Each file describes one image::

    <annotation>
      <filename>000005.jpg</filename>
      <size><width>500</width><height>375</height><depth>3</depth></size>
      <object>
        <name>chair</name>
        <difficult>0</difficult>
        <bndbox><xmin>263</xmin><ymin>211</ymin><xmax>324</xmax><ymax>339</ymax></bndbox>
        <score>0.87</score>   <!-- predictions only; <confidence> also accepted -->
      </object>
    </annotation>

Choices:

- A folder is read in sorted file-name order; only ``*.xml`` files count,
  and names starting with ``.`` are skipped (macOS leaves ``._x.xml``
  resource files next to the real ones).
- The image id is the xml file's stem, kept as a string: ``000005`` stays
  ``"000005"`` (the ground truth may be keyed by ``000005.jpg``; the
  reconciler matches ids, then file names, then stems).
- The four ``<bndbox>`` numbers are read as in the file, in the order
  ``xmin, ymin, xmax, ymax``, and taken as ``xyxy`` unless
  ``options.box_format`` says otherwise.  No 1-based shift: the VOC
  protocols' plus-one pixel convention accounts for the devkit's inclusive
  pixel indices.
- ``<difficult>`` becomes ``ignore``; the non-standard ``<iscrowd>`` (or
  ``<crowd>``) becomes ``is_crowd``.  Missing means 0.  ``<truncated>``,
  ``<pose>`` and ``<part>`` are not read.
- A ``<size>`` width or height of 0 (some exporters write it for "unknown")
  is taken as unknown.
- An image without ``<object>`` is still an image: false positives on it count.
- A VOCdevkit year folder (``VOC2007/`` with ``Annotations/`` and
  ``ImageSets/Main/<set>.txt``), or a ``VOCdevkit/`` folder holding one, is
  read as the devkit reads it: the images of one image set, in its order
  (``--split NAME``; by default ``test`` when there is one, else ``val``,
  said in a note).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Dataset, ImageTable, Key, assemble
from iou_eval.errors import InputError
from iou_eval.escape import quoted
from iou_eval.io.loaders.common import (
    ClassVocabulary,
    LoadOptions,
    folder_files,
    parse_flag,
    read_bytes,
)
from iou_eval.io.loaders.xml_input import parse_xml
from iou_eval.numbers import is_number_token, quote_token

_COORDS = ("xmin", "ymin", "xmax", "ymax")


def _xml_files(path: str) -> list[str]:
    """The files to read: the sorted ``*.xml`` files of a folder, or ``[path]``."""
    return folder_files(path, ".xml", "Pascal VOC .xml files")


def _parse(file: str) -> ET.Element:
    return parse_xml(read_bytes(file), file)


def _number(text: str | None, tag: str, file: str, where: str) -> float:
    value = (text or "").strip()
    if not value:
        raise InputError(file, f"<{tag}> is empty, expected a number", where=where)
    # float() also reads '١٠' and '1_0'; a number in a file is ASCII.
    if not is_number_token(value):
        raise InputError(file, f"{tag} must be a number, got {quote_token(value)}", where=where)
    return float(value)


def _flag(text: str | None, tag: str, file: str, where: str) -> bool:
    value = parse_flag(text)
    if value is None:
        raise InputError(
            file, f"{tag} must be 0 or 1, got {quoted((text or '').strip())}", where=where
        )
    return value


def _size(root: ET.Element, file: str) -> tuple[float, float]:
    """``(width, height)`` from ``<size>``; NaN where absent or not positive."""
    size = root.find("size")
    out = []
    for tag in ("width", "height"):
        text = None if size is None else size.findtext(tag)
        if text is None or not text.strip():
            out.append(np.nan)
            continue
        v = _number(text, tag, file, "size")
        out.append(v if v > 0 else np.nan)
    return out[0], out[1]


def devkit_years(path: str) -> list[str]:
    """The VOCdevkit year folders ``path`` names: itself when it holds ``Annotations/``,
    else its sub-folders that do (a ``VOCdevkit/`` root); empty for any other path."""
    if path == "-" or not os.path.isdir(path):
        return []
    if os.path.isdir(os.path.join(path, "Annotations")):
        return [path]
    from iou_eval.io.source import list_folder

    return [
        os.path.join(path, e)
        for e in sorted(list_folder(path))
        if not e.startswith(".") and os.path.isdir(os.path.join(path, e, "Annotations"))
    ]


def looks_like_devkit(path: str) -> bool:
    return bool(devkit_years(path))


def _image_set(year: str, split: str | None) -> tuple[str, str | None]:
    """``(set file, note)``: the image set ``split`` names, or the devkit's default one."""
    main = os.path.join(year, "ImageSets", "Main")
    if split is not None:
        chosen = os.path.join(main, f"{split}.txt")
        if not os.path.isfile(chosen):
            raise InputError(
                year,
                f"no image set {quoted(split)} (ImageSets/Main/{split}.txt)",
                hint=f"--split takes one of: {', '.join(_set_names(main)) or 'none found'}",
            )
        return chosen, None
    for name in ("test", "val"):
        chosen = os.path.join(main, f"{name}.txt")
        if os.path.isfile(chosen):
            others = [n for n in _set_names(main) if n != name]
            note = (
                f"{year}: read as a VOCdevkit year folder: the image set {name} "
                f"(ImageSets/Main/{name}.txt)"
                + (f"; --split picks another ({', '.join(others)})" if others else "")
            )
            return chosen, note
    raise InputError(
        year,
        "a VOCdevkit year folder without a test or val image set (ImageSets/Main/test.txt)",
        hint="pass --split NAME for ImageSets/Main/NAME.txt, or the Annotations folder "
        "to read every file",
    )


def _set_names(main: str) -> list[str]:
    """The image sets of ``ImageSets/Main`` (the files without a class prefix: ``test``, ``val``...)."""
    if not os.path.isdir(main):
        return []
    names = [e[:-4] for e in sorted(os.listdir(main)) if e.endswith(".txt")]
    return [n for n in names if "_" not in n]


def _devkit_files(path: str, split: str | None) -> tuple[list[str], str | None]:
    """The annotation files of the image set of the VOCdevkit folder ``path``, and a note."""
    years = devkit_years(path)
    if len(years) > 1:
        names = ", ".join(os.path.basename(y) for y in years)
        raise InputError(
            path,
            f"a VOCdevkit folder with {len(years)} year folders ({names}); pass one of them",
            hint=f"e.g. {os.path.join(path, os.path.basename(years[0]))}",
        )
    year = years[0]
    set_file, note = _image_set(year, split)
    text = read_bytes(set_file).decode("utf-8", "replace")
    files = []
    for line_no, line in enumerate(text.splitlines(), 1):
        tokens = line.split()
        if not tokens:
            continue
        file = os.path.join(year, "Annotations", f"{tokens[0]}.xml")
        if not os.path.isfile(file):
            raise InputError(
                set_file,
                f"image {quoted(tokens[0])} has no annotation file ({file})",
                where=line_no,
            )
        files.append(file)
    if not files:
        raise InputError(set_file, "the image set lists no images")
    return files, note


def load_voc_xml(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read Pascal VOC annotation XML as ground truth or predictions.

    Args:
        path: a folder of ``.xml`` files (one per image) or a single file.
        role: ``"gt"`` or ``"pred"``; predictions need a ``<score>`` (or
            ``<confidence>``) in every ``<object>``.
        options: ``box_format`` (default ``xyxy``), ``normalized``, ``names``
            (then a numeric ``<name>`` is an index into them),
            (normalized predictions are scaled at alignment).

    Returns:
        A :class:`Dataset` with one image per file (id = the file's stem) and
        one row per ``<object>``; ``origin`` is the object's index in its file
        and ``origin_file`` the file's index, so errors read
        ``file.xml:object[3]: ...``.
    """
    note = None
    if devkit_years(path):
        files, note = _devkit_files(path, options.split)
    else:
        files = _xml_files(path)
    categories = ClassVocabulary(options.names)
    rows = _Rows()
    image_ids: list[Key] = []
    file_names: list[str | None] = []
    sizes: list[tuple[float, float]] = []
    seen: dict[str, str] = {}
    for fi, file in enumerate(files):
        root = _parse(file)
        if root.tag != "annotation":
            raise InputError(
                file,
                f"expected a Pascal VOC <annotation> root element, found <{root.tag}>",
            )
        stem = os.path.splitext(os.path.basename(file).removesuffix(".gz"))[0]
        if stem in seen:
            raise InputError(
                file,
                f"image id {quoted(stem)} is also the id of {seen[stem]}",
                hint="rename one file",
            )
        seen[stem] = file
        image_ids.append(stem)
        file_names.append((root.findtext("filename") or "").strip() or None)
        sizes.append(_size(root, file))
        for oi, obj in enumerate(root.findall("object")):
            rows.add(obj, role, categories, file, fi, oi)
    widths, heights = zip(*sizes, strict=True) if sizes else ((), ())
    n = len(rows.boxes)
    return assemble(
        source=path,
        fmt="voc-xml",
        images=ImageTable.build(image_ids, file_names, list(widths), list(heights)),
        categories=categories.table(),
        image_idx=np.asarray(rows.origin_file, dtype=np.int64),
        category_idx=np.asarray(rows.category_idx, dtype=np.int64),
        boxes=np.asarray(rows.boxes, dtype=np.float64).reshape(n, 4),
        box_format=options.box_format or BoxFormat.XYXY,
        normalized=options.normalized,
        score=np.asarray(rows.scores, dtype=np.float64) if role == "pred" else None,
        is_crowd=np.asarray(rows.crowd, dtype=bool),
        ignore=np.asarray(rows.ignore, dtype=bool),
        origin=np.asarray(rows.origin, dtype=np.int64),
        origin_file=np.asarray(rows.origin_file, dtype=np.int32),
        files=files,
        origin_label="object",
        warnings=[note] if note else [],
    )


class _Rows:
    """The ``<object>`` rows read so far, one list per column (one image per file)."""

    def __init__(self) -> None:
        self.boxes: list[list[float]] = []
        self.category_idx: list[int] = []
        self.scores: list[float] = []
        self.crowd: list[bool] = []
        self.ignore: list[bool] = []
        self.origin: list[int] = []
        self.origin_file: list[int] = []

    def add(
        self, obj: ET.Element, role: str, categories: ClassVocabulary, file: str, fi: int, oi: int
    ) -> None:
        """Read object ``oi`` of file ``fi``; errors cite ``file:object[oi]``."""
        where = f"object[{oi}]"
        name = (obj.findtext("name") or "").strip()
        if not name:
            raise InputError(file, "object has no <name>", where=where)
        self.boxes.append(_bndbox(obj, file, where))
        if role == "pred":
            self.scores.append(_score(obj, file, where))
        crowd_el = obj.find("iscrowd")
        crowd_tag = "iscrowd"
        if crowd_el is None:
            crowd_el, crowd_tag = obj.find("crowd"), "crowd"
        self.crowd.append(
            _flag(None if crowd_el is None else crowd_el.text, crowd_tag, file, where)
        )
        self.ignore.append(_flag(obj.findtext("difficult"), "difficult", file, where))
        self.category_idx.append(categories.lookup(name, file, where))
        self.origin.append(oi)
        self.origin_file.append(fi)


def _bndbox(obj: ET.Element, file: str, where: str) -> list[float]:
    bnd = obj.find("bndbox")
    if bnd is None:
        raise InputError(
            file,
            "object has no <bndbox>",
            where=where,
            hint="iou-eval evaluates boxes; every object needs "
            "<bndbox> with <xmin>, <ymin>, <xmax>, <ymax>",
        )
    box = []
    for tag in _COORDS:
        el = bnd.find(tag)
        if el is None:
            raise InputError(file, f"<bndbox> has no <{tag}>", where=where)
        box.append(_number(el.text, tag, file, where))
    return box


def _score(obj: ET.Element, file: str, where: str) -> float:
    tag = "score"
    el = obj.find("score")
    if el is None:
        tag, el = "confidence", obj.find("confidence")
    if el is None:
        raise InputError(
            file,
            "prediction has no <score>",
            where=where,
            hint="predictions need a <score> (or <confidence>) in every <object>; "
            "is this the ground truth?",
        )
    return _number(el.text, tag, file, where)
