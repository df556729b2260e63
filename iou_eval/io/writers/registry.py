"""The one list of target formats: name, writer, one file or a folder, and what each keeps.

A new target is one module with ``write_x(labels, context) -> Written`` and
one :func:`register` line below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING

from iou_eval.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.io.writers.labels import Labels


@dataclass(frozen=True)
class Context:
    """Where and how a target is written.

    Attributes:
        dest: the target's absolute path (a YOLO data.yaml names its folder).
        split: the split name of a YOLO dataset's folders (``val``).
        image_files: ``[I]`` each image's file, to place beside the labels
            (YOLO, DOTA), or None where unknown.
        class_list: the user gave the class list (``--names``): targets that
            number the classes (YOLO) follow its order.
    """

    dest: str
    split: str = "val"
    image_files: tuple[str | None, ...] | None = None
    class_list: bool = False


@dataclass
class Written:
    """A writer's result: ``files`` (relative path -> bytes or ``("copy", path)``), notes,
    and how many rows were written (-1: not counted)."""

    files: dict[str, bytes | tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    rows: int = -1


@dataclass(frozen=True)
class Keeps:
    """What a target format holds (each False: dropped with a note that counts it)."""

    crowd: bool = False
    difficult: bool = False
    polygons: bool = False
    rles: bool = False
    oriented: bool = False


Writer = Callable[["Labels", Context], Written]


@dataclass(frozen=True)
class Target:
    """One output format.

    Attributes:
        name: what ``--to`` calls it.
        writer: ``"module:function"`` under :mod:`iou_eval.io.writers`.
        folder: the target is a folder (else one file).
        keeps: what it holds of the ground truth beyond boxes and classes.
        describe: what is written, for the help and the docs.
        numbered: it names images and classes by number (a results list,
            class indices).
    """

    name: str
    writer: str
    folder: bool
    keeps: Keeps
    describe: str = ""
    # Placing the images beside the labels (the dataset reads their sizes from them).
    wants_images: bool = False
    numbered: bool = False

    def load(self) -> Writer:
        module, func = self.writer.split(":")
        writer: Writer = getattr(import_module(f".{module}", __package__), func)
        return writer


_TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    _TARGETS[target.name] = target
    return target


def target_names() -> tuple[str, ...]:
    return tuple(_TARGETS)


def get_target(name: str) -> Target:
    target = _TARGETS.get(name)
    if target is None:
        raise UsageError(f"--to: unknown format {name!r} (known: {', '.join(_TARGETS)})")
    return target


register(Target(
    "coco", "coco:write_coco", folder=False, numbered=True,
    keeps=Keeps(crowd=True, difficult=True, polygons=True, rles=True),
    describe="COCO JSON: a dataset (ground truth) or a results list (predictions)"))  # fmt: skip
register(Target(
    "yolo", "yolo:write_yolo", folder=True, wants_images=True, numbered=True,
    keeps=Keeps(polygons=True, oriented=True),
    describe="an Ultralytics dataset (data.yaml, images/ and labels/) or a predict run "
    "(labels/ with confidences); -seg and -obb lines where the geometry asks"))  # fmt: skip
register(Target(
    "voc-xml", "voc:write_voc", folder=True, keeps=Keeps(crowd=True, difficult=True),
    describe="Pascal VOC XML, one file per image"))  # fmt: skip
register(Target(
    "csv", "table:write_csv", folder=False, keeps=Keeps(crowd=True, difficult=True),
    describe="CSV: image, size, label, xmin, ymin, xmax, ymax, score, iscrowd, difficult"))  # fmt: skip
register(Target(
    "dota", "dota:write_dota", folder=True, wants_images=True,
    keeps=Keeps(difficult=True, oriented=True),
    describe="DOTA: labelTxt/ (ground truth) or Task1_<class>.txt (predictions)"))  # fmt: skip
register(Target(
    "labelme", "labelme:write_labelme", folder=True,
    keeps=Keeps(difficult=True, polygons=True),
    describe="LabelMe JSON, one file per image"))  # fmt: skip
register(Target(
    "cvat-xml", "cvat:write_cvat", folder=False,
    keeps=Keeps(crowd=True, difficult=True, polygons=True),
    describe="CVAT for images 1.1 XML"))  # fmt: skip
register(Target(
    "labelstudio", "labelstudio:write_labelstudio", folder=False,
    keeps=Keeps(crowd=True, difficult=True, polygons=True, oriented=True),
    describe="Label Studio JSON export (tasks with annotations or predictions)"))  # fmt: skip
