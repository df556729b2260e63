"""Format facts live on the Format record; the data layer asks them as ``Dataset.traits``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from iou_eval.data import traits as data_traits
from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, ImageTable, assemble
from iou_eval.data.doubts import declare_hint
from iou_eval.data.reconcile import canonical
from iou_eval.data.traits import FormatTraits, traits_of
from iou_eval.io.loaders import registry
from iou_eval.io.loaders.registry import Format, format_names, register

PACKAGE = Path(__file__).resolve().parents[2] / "iou_eval"
# Modules whose ``fmt`` is a report's --format (table, csv, json), not an input format.
OUTPUT_FORMAT_MODULES = {"cli/common.py", "reporters/calculator.py"}


def _dataset(fmt: str, image_ids: tuple):
    n = len(image_ids)
    images = ImageTable(image_ids, (None,) * n, np.full(n, 100.0), np.full(n, 100.0))
    return assemble(
        source="probe", fmt=fmt, images=images, categories=CategoryTable((1,), ("a",)),
        image_idx=np.zeros(1, np.int64), category_idx=np.zeros(1, np.int64),
        boxes=np.array([[1.0, 1.0, 5.0, 5.0]]), box_format=BoxFormat.XYWH,
    )  # fmt: skip


def test_a_new_format_is_one_registry_line_that_its_datasets_ask(monkeypatch):
    monkeypatch.setattr(registry, "_FORMATS", dict(registry._FORMATS))
    monkeypatch.setattr(data_traits, "_TRAITS", dict(data_traits._TRAITS))
    register(Format("probe", "coco:load_coco", declares_empty_image="a probe line",
                    coco_ids=True, layout_open=True))  # fmt: skip
    ds = _dataset("probe", ("10", "9"))
    assert ds.traits == FormatTraits(declares_empty_image="a probe line", layout_open=True,
                                     coco_ids=True)  # fmt: skip
    assert "(a probe line)" in declare_hint(ds.traits.declares_empty_image)
    # COCO ids: pycocotools' order (strings as text), whatever the name says.
    assert canonical(ds).images.ids == ("10", "9")
    assert canonical(_dataset("never-registered", ("10", "9"))).images.ids == ("9", "10")


def test_a_format_never_declared_has_no_traits():
    assert traits_of("never-registered") == FormatTraits()
    assert "declare them or pass --images DIR" in declare_hint("")


def test_every_textual_format_has_an_open_layout():
    for name in format_names():
        t = registry.get(name).traits
        assert t.option_layout <= t.layout_open, name


def test_no_module_tests_an_input_format_by_its_name():
    names = sorted(set(format_names()) | {"dataframe", "arrays"})
    alt = "|".join(re.escape(n) for n in names)
    compared = re.compile(
        rf"(\.format|_format|\bfmt)\s*(==|!=|\bnot in\b|\bin\b)[^\n]*[\"']({alt})[\"']"
    )
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("io/loaders/") or rel in OUTPUT_FORMAT_MODULES:
            continue  # the registry and the loaders may name themselves
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if compared.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []
