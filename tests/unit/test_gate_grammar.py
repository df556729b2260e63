"""The ``--fail-under`` grammar: every protocol label a run can carry may prefix a gate."""

from __future__ import annotations

import pytest

from iou_eval.ci.gates import parse_gate
from iou_eval.errors import UsageError
from iou_eval.geometry.seam import IouType
from iou_eval.protocols.registry import RECORDS, make_protocol


def _registered_labels() -> list[str]:
    """Each label ``make_protocol`` gives a registered protocol under an iou type it accepts."""
    labels = set()
    for name in RECORDS:
        for iou_type in IouType.ALL:
            try:
                labels.add(make_protocol(name, None, iou_type).label)
            except UsageError:
                continue  # a combination the protocol refuses
    return sorted(labels)


HYPHENATED = [label for label in _registered_labels() if "-" in label]


def test_the_registry_has_hyphenated_labels():
    assert {"dota-allpoint", "coco-segm", "coco-obb", "coco-keypoints"} <= set(HYPHENATED)


@pytest.mark.parametrize("label", HYPHENATED)
def test_a_hyphenated_protocol_label_prefixes_a_summary_gate(label):
    g = parse_gate(f"{label}:mAP=0.7")
    assert (g.protocol, g.metric, g.cls, g.slice, g.threshold) == (label, "mAP", None, None, 0.7)


@pytest.mark.parametrize("label", HYPHENATED)
def test_a_hyphenated_protocol_label_prefixes_a_class_gate_with_a_hyphenated_class(label):
    g = parse_gate(f" {label}:AP[small-vehicle] >= 0.25 ")
    assert (g.protocol, g.metric, g.cls, g.threshold) == (label, "AP", "small-vehicle", 0.25)
    assert g.summary_key == "AP[small-vehicle]"


@pytest.mark.parametrize("label", HYPHENATED)
def test_a_hyphenated_protocol_label_prefixes_a_slice_gate(label):
    g = parse_gate(f"{label}:AP@night=0.4")
    assert (g.protocol, g.metric, g.slice) == (label, "AP", "night")


@pytest.mark.parametrize("text", ["-coco:AP=0.5", "coco-:AP=0.5", "coco--segm:AP=0.5"])
def test_a_label_cannot_start_or_end_with_a_hyphen_or_double_it(text):
    with pytest.raises(UsageError, match="expected METRIC=VALUE"):
        parse_gate(text)
