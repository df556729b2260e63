"""The one list of formats: name, content detector, reader, and the roles each serves.

A new format is one module with a reader ``load_x(path, role, options) ->
Dataset`` and a detector, plus one :func:`register` line below.  Detection
asks each format in order; the first that recognises the path wins, so the
more specific formats come first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from iou_eval.data.traits import FormatTraits, declare, traits_of
from iou_eval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.data.dataset import Dataset
    from iou_eval.io.loaders.common import LoadOptions

Reader = Callable[[str, str, "LoadOptions"], "Dataset"]


@dataclass(frozen=True)
class Format:
    """One input format.

    Attributes:
        name: what ``--gt-format`` / ``--pred-format`` call it.
        reader: ``"module:function"`` under :mod:`iou_eval.io.loaders`, imported
            when first used (start-up stays cheap).
        roles: ``("gt", "pred")`` or one of them.
        detect_file: ``(path, head) -> bool`` for a file (``head``: its
            first 4 KiB, BOM and leading blanks removed); None: never.
        detect_folder: ``(path, entries) -> bool`` for a folder (visible
            entries, sorted); None: never.
        textual: box numbers whose layout and scale the options say
            (``--box-format``, ``--normalized`` apply).
        describe: a few words for the docs and errors.
        oriented: its files always hold oriented boxes (DOTA's).
        crowd_word: what its files call the boxes read as crowd regions
            (Open Images' ``group-of``), for reports.
        declares_empty_image: how a ground truth declares an image without
            objects (words for a hint); "" when it cannot.
        layout_open: pixel boxes in a layout a file may get wrong (the layout
            and scale doubts look at them); every ``textual`` format is.
        coco_ids: COCO ids (pycocotools' order, joins by id).
        unit_image: boxes are fractions of a unit image (no sizes in the file).
        fraction_layout: the layout of fractions read with ``--normalized``
            and no ``--box-format``.
        compiled_json: the compiled JSON reader reads it (both files of a
            pair in threads).
        batch_folder: a folder of such files is a batch, one model output
            per file (``iou-eval evaluate``).
        ultralytics_dataset: a training tool's dataset, whose predictions are
            read as Ultralytics writes them (a predict run's labels, a
            ``predictions.json``'s class numbering).
        ultralytics_results: the form of Ultralytics' ``val(save_json=True)``
            files.
        ultralytics_lines: a folder of it may be Ultralytics predict output,
            read as the ground truth's format beside an ``ultralytics_dataset``.
        polygons: asked for masks, its reader keeps the polygons aside
            (``iou-eval convert`` writes them again).
        carries_keypoints: ``"module:function"``, ``(path, role) -> bool``: the
            file carries keypoints (a cheap look, for a note); "": never.
    """

    name: str
    reader: str
    roles: tuple[str, ...] = ("gt", "pred")
    detect_file: Callable[[str, bytes], bool] | None = None
    detect_folder: Callable[[str, list[str]], bool] | None = None
    textual: bool = False
    describe: str = ""
    oriented: bool = False
    crowd_word: str = "crowd"
    declares_empty_image: str = ""
    layout_open: bool = False
    coco_ids: bool = False
    unit_image: bool = False
    fraction_layout: str = ""
    compiled_json: bool = False
    batch_folder: bool = False
    ultralytics_dataset: bool = False
    ultralytics_results: bool = False
    ultralytics_lines: bool = False
    polygons: bool = False
    carries_keypoints: str = ""

    @property
    def traits(self) -> FormatTraits:
        """What the data layer needs to know of the format (:mod:`iou_eval.data.traits`)."""
        return FormatTraits(
            declares_empty_image=self.declares_empty_image,
            layout_open=self.layout_open or self.textual,
            option_layout=self.textual,
            coco_ids=self.coco_ids,
            unit_image=self.unit_image,
            fraction_layout=self.fraction_layout,
        )

    def has_keypoints(self, path: str, role: str) -> bool:
        """Whether the ``role`` file ``path`` carries keypoints (:attr:`carries_keypoints`)."""
        if not self.carries_keypoints:
            return False
        module, func = self.carries_keypoints.split(":")
        found: bool = getattr(import_module(f".{module}", __package__), func)(path, role)
        return found

    def load(self) -> Reader:
        module, func = self.reader.split(":")
        loader: Reader = getattr(import_module(f".{module}", __package__), func)
        return loader


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add a format (a later one with the same name replaces it)."""
    _FORMATS[fmt.name] = fmt
    declare(fmt.name, fmt.traits)
    return fmt


def formats() -> tuple[Format, ...]:
    return tuple(_FORMATS.values())


def holds_oriented(name: str | None) -> bool:
    """Whether the format ``name`` (None or unknown: no) always holds oriented boxes."""
    fmt = _FORMATS.get(name) if name else None
    return fmt is not None and fmt.oriented


def crowd_word(name: str | None) -> str:
    """What the format ``name`` calls its crowd regions (``crowd`` when unknown)."""
    fmt = _FORMATS.get(name) if name else None
    return "crowd" if fmt is None else fmt.crowd_word


def format_names() -> tuple[str, ...]:
    return tuple(_FORMATS)


def find(name: str | None) -> Format | None:
    """The registered format ``name``; None for another (in-memory, unknown, None)."""
    return _FORMATS.get(name) if name is not None else None


def get(name: str) -> Format:
    from iou_eval.errors import UsageError

    fmt = _FORMATS.get(name)
    if fmt is None:
        raise UsageError(f"unknown format {name!r} (known: {', '.join(_FORMATS)})")
    return fmt


# In-memory inputs (iou_eval.io.loaders.memory): their layout and scale the options set.
declare("dataframe", FormatTraits(
    declares_empty_image="a row with the image and empty label and box cells",
    layout_open=True, option_layout=True))  # fmt: skip
declare("arrays", FormatTraits(layout_open=True, option_layout=True))


def traits(name: str) -> FormatTraits:
    """The traits of the format ``name``, registered or in memory."""
    return traits_of(name)


# Words that mark the first line of a .txt file as a CSV/TSV header.
CSV_HEADER_WORDS = {"image", "image_id", "filename", "file_name", "label", "class", "category",
                    "category_id", "xmin", "x1", "score", "confidence"}  # fmt: skip


def _exts(entries: list[str]) -> set[str]:
    return {os.path.splitext(e.lower().removesuffix(".gz"))[1] for e in entries}


def _devkit_name(path: str) -> bool:
    if not path.lower().removesuffix(".gz").endswith(".txt"):  # what the name rule needs first
        return False
    from iou_eval.io.loaders.text import looks_like_devkit_results

    return looks_like_devkit_results(path)


def _devkit_folder(path: str, entries: list[str]) -> bool:
    txt = [e for e in entries if e.lower().removesuffix(".gz").endswith(".txt")]
    return bool(txt) and all(_devkit_name(e) for e in txt)


def _txt_file(path: str, head: bytes) -> bool:
    if not path.lower().removesuffix(".gz").endswith(".txt"):
        return False
    # One per-image text file, unless its first line is a CSV header.
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").lower()
    words = set(first.replace(",", " ").replace(";", " ").replace("\t", " ").split())
    return not words & CSV_HEADER_WORDS


def _looks_head(
    module: str, func: str, plausible: Callable[[str, object], bool]
) -> Callable[[str, bytes], bool]:
    """A file detector from a format module's ``x_head(head)``: it judges the first bytes.

    ``plausible`` looks first, so the module loads only for a likely file.
    """

    def detect(path: str, head: bytes) -> bool:
        if not plausible(path, head):
            return False
        found: bool = getattr(import_module(f".{module}", __package__), func)(head)
        return found

    return detect


def _looks(module: str, func: str, plausible: Callable[[str, object], bool]) -> Callable[..., bool]:
    """A detector from a format module's ``looks_like_x(path)``.

    ``plausible(path, head_or_entries)`` is a cheap first look: the module
    (and what it imports) is loaded only when it passes, so that detecting a
    COCO file costs no import of the YOLO or CVAT readers.
    """

    def detect(path: str, other: object = None) -> bool:
        if not plausible(path, other):
            return False
        found: bool = getattr(import_module(f".{module}", __package__), func)(path)
        return found

    return detect


def _gz(head: object) -> bool:
    return isinstance(head, bytes) and head[:2] == b"\x1f\x8b"


def _name_has(*ends: str) -> Callable[[str, object], bool]:
    def check(path: str, head: object) -> bool:
        name = path.lower().removesuffix(".gz")
        return name.endswith(ends)

    return check


def _head_has(*needles: bytes) -> Callable[[str, object], bool]:
    def check(path: str, head: object) -> bool:
        return _gz(head) or (isinstance(head, bytes) and all(n in head.lower() for n in needles))

    return check


def _entries_have(*ends: str) -> Callable[[str, object], bool]:
    def check(path: str, entries: object) -> bool:
        names = entries if isinstance(entries, list) else []
        return any(e.lower().removesuffix(".gz").endswith(ends) for e in names)

    return check


def _yolo_folder(path: str, entries: object) -> bool:
    names = set(entries) if isinstance(entries, list) else set()
    return (
        bool(names & {"labels", "images"})
        or os.path.basename(os.path.normpath(path)) == "labels"
        or _entries_have(".yaml", ".yml", ".txt")(path, entries)
    )


# A VOCdevkit year folder (Annotations/ inside) or its root (VOC2007/ inside).
_voc_devkit = _looks(
    "voc_xml",
    "looks_like_devkit",
    lambda p, e: isinstance(e, list) and any(n == "Annotations" or n.startswith("VOC") for n in e),
)


register(Format(
    "voc-results", "text:load_voc_results", roles=("pred",),
    detect_file=lambda p, h: _devkit_name(p), detect_folder=_devkit_folder, textual=True,
    describe="the devkit's comp4_det_test_<class>.txt files"))  # fmt: skip
register(Format(
    "dota-results", "dota:load_task1", roles=("pred",),
    detect_file=_looks("dota", "looks_like_task1", _name_has(".txt")),
    detect_folder=_looks("dota", "looks_like_task1_folder", _entries_have(".txt")), textual=False,
    describe="the DOTA devkit's Task1_<class>.txt results", oriented=True))  # fmt: skip
register(Format(
    "dota", "dota:load_dota", roles=("gt",),
    detect_file=_looks_head("dota", "dota_head", _name_has(".txt")),
    detect_folder=_looks("dota", "looks_like_dota", _entries_have(".txt", "labeltxt")),
    describe="DOTA label files: x1 y1 ... x4 y4 class difficult", oriented=True))  # fmt: skip
register(Format(
    "yolo", "yolo_pose:load_yolo_or_pose",  # pose datasets (kpt_shape) there, the rest yolo.py
    detect_file=_looks("yolo", "looks_like_yolo", _name_has(".yaml", ".yml")),
    detect_folder=_looks("yolo", "looks_like_yolo", _yolo_folder),
    declares_empty_image="the image in the split (no label file: no objects)",
    ultralytics_dataset=True, carries_keypoints="yolo_pose:carries_keypoints",
    polygons=True,
    describe="a YOLO / Ultralytics dataset (data.yaml or labels/ beside images/)"))  # fmt: skip
register(Format(
    "labelme", "labelme:load_labelme",
    detect_file=_looks_head("labelme", "labelme_head", _head_has(b'"shapes"')),
    detect_folder=_looks("labelme", "looks_like_labelme", _entries_have(".json")),
    declares_empty_image="a .json file without shapes",
    polygons=True,
    describe="LabelMe JSON files"))  # fmt: skip
register(Format(
    "cvat-xml", "cvat_xml:load_cvat_xml",
    detect_file=_looks_head("cvat_xml", "cvat_head", _head_has(b"<annotations")),
    detect_folder=_looks("cvat_xml", "looks_like_cvat_xml", _entries_have("annotations.xml")),
    declares_empty_image="an <image> element without shapes",
    polygons=True,
    describe="CVAT for images 1.1 XML"))  # fmt: skip
register(Format(
    "openimages", "openimages:load_openimages",
    detect_file=_looks_head("openimages", "openimages_head", _head_has(b"imageid", b"xmin")),
    declares_empty_image="an image list CSV (an ImageID column) beside the boxes",
    unit_image=True,
    describe="Open Images CSV", crowd_word="group-of"))  # fmt: skip
register(Format(
    "obb-json", "yolo_obb:load_obb_json", roles=("pred",),
    detect_file=_looks_head("yolo_obb", "obb_json_head", _head_has(b'"poly"')),
    ultralytics_results=True,
    describe="Ultralytics OBB predictions.json (rbox / poly)"))  # fmt: skip
register(Format(
    "labelstudio", "labelstudio:load_labelstudio",
    detect_file=_looks_head("labelstudio", "labelstudio_head", _head_has(b'"result"')),
    polygons=True,
    describe="Label Studio JSON export (tasks with annotations / predictions)"))  # fmt: skip
register(Format(
    "coco", "coco:load_coco", detect_file=lambda p, h: h[:1] in (b"{", b"["),
    declares_empty_image="list it in 'images'", layout_open=True, coco_ids=True,
    compiled_json=True,
    batch_folder=True, ultralytics_results=True,
    carries_keypoints="coco_keypoints:carries_keypoints",
    describe="COCO dataset JSON or results list"))  # fmt: skip
register(Format(
    "voc-xml", "voc_xml:load_voc_xml", detect_file=lambda p, h: h[:1] == b"<",
    detect_folder=lambda p, e: ".xml" in _exts(e) or _voc_devkit(p, e),
    declares_empty_image="an .xml file without <object>",
    describe="Pascal VOC XML (or a VOCdevkit folder)"))  # fmt: skip
register(Format(
    "txt", "text:load_txt", detect_file=_txt_file,
    detect_folder=lambda p, e: ".txt" in _exts(e), textual=True,
    declares_empty_image="an empty <image>.txt file", fraction_layout="cxcywh",
    ultralytics_lines=True,
    describe="per-image text files"))  # fmt: skip
# CSV is the fallback for any other file.
register(Format(
    "csv", "table:load_csv", detect_file=lambda p, h: True, textual=True,
    declares_empty_image="a row with the image and empty label and box cells",
    describe="CSV/TSV with a header"))  # fmt: skip


def _head(path: str) -> bytes:
    """The first 4 KiB as the loader will read them (decompressed, BOM and leading blanks removed).

    Standard input (``-``) is read once and kept: detection never consumes it.  A
    device (``/dev/zero``) or socket is refused before any read.
    """
    from iou_eval.io.source import STDIN, check_input_path, display_name, read_head

    if path != STDIN:
        check_input_path(path)
    head = read_head(path)
    text = head.lstrip(b" \t\r\n")
    if not text and len(head) >= 4096:
        # Only blanks so far: the whole (bounded) content says whether
        # anything follows them, or that the file is too large to say.
        from iou_eval.io.source import read_input

        text = read_input(path).lstrip(b"\xef\xbb\xbf \t\r\n")[:4096]
    if not text:
        raise InputError(display_name(path), "file is empty")
    return text


def _looks_like(head: bytes) -> str:
    first = head.split(b"\n", 1)[0][:60].decode("utf-8", "replace")
    from iou_eval.escape import excerpt

    if head[:1] == b"<":
        kind = "XML"
    elif b"," in head.split(b"\n", 1)[0] or b"\t" in head.split(b"\n", 1)[0]:
        kind = "CSV"
    else:
        kind = "text"
    return f"it looks like {kind} (it starts with {excerpt(first, 40)})"


def detect_format(path: str) -> str:
    """The format of ``path`` judged from its content (a folder from its files).

    ``-`` is standard input, judged from its bytes (kept for the loader).
    """
    stdin = path == "-"
    if not stdin and not os.path.exists(path):
        raise InputError(path, "no such file or folder")
    if not stdin and os.path.isdir(path):
        from iou_eval.io.source import list_folder

        # Hidden names (macOS's ._x.xml, .DS_Store) say nothing about the format.
        entries = sorted(e for e in list_folder(path) if not e.startswith("."))
        for fmt in _FORMATS.values():
            if fmt.detect_folder is not None and fmt.detect_folder(path, entries):
                return fmt.name
        kinds = [f.describe for f in _FORMATS.values() if f.detect_folder is not None]
        raise InputError(
            path,
            "cannot tell the format of this folder: expected " + ", or ".join(kinds),
            hint=f"found: {', '.join(entries[:5]) or 'nothing'}",
        )
    head = _head(path)
    for fmt in _FORMATS.values():
        if fmt.detect_file is not None and fmt.detect_file(path, head):
            if fmt.textual and _json_name(path):
                # A .json file is read as JSON or not at all: CSV rules would
                # read almost anything, and say nothing useful about it.
                raise InputError(
                    path,
                    f"named .json but not JSON: {_looks_like(head)}",
                    hint=f"rename it, or name its format: --gt-format {fmt.name} / "
                    f"--pred-format {fmt.name}",
                )
            return fmt.name
    raise InputError("<stdin>" if stdin else path, "cannot tell the format of this file")


def _json_name(path: str) -> bool:
    name = path.lower()
    return name.endswith(".json") or name.endswith(".json.gz")
