"""The Python face takes every option as the command line spells it, or refuses it by name.

``evaluate(..., iou_thresholds="0.5,0.75")`` once iterated the string by
character ("got '0'"); ``area_ranges`` as text, a mapping or triples raised a
bare ``AttributeError``; ``tide="no"`` read as on.  Each keyword with a
command-line spelling now takes the flag's text (parsed by the flag's own
parser), or says what it expected and what it got.
"""

from __future__ import annotations

import pytest

from iou_eval import Evaluator, evaluate
from iou_eval.errors import UsageError
from iou_eval.options import CLI_OF, RECORDS, AreaRange, EvalOptions, cli_fields

from ..conftest import ROOT

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")

# The command-line text of every option with a parser, and what else it needs.
TEXT = {
    "gt_format": "coco", "pred_format": "auto", "image_size": "640x480",
    "class_offset": "-1", "protocol": "coco,voc12", "iou_thresholds": "0.5,0.75",
    "area_ranges": "small=0:1024,large=1024:inf", "max_dets": "1,10,100",
    "iou_type": "bbox,segm", "boundary_dilation": "0.05", "iou_thr": "0.75",
    "score_thr": "0.1", "bootstrap": "20", "seed": "3", "confidence": "0.9",
    "workers": "2", "confusion_score_thr": "0.3", "oi_group_of_weight": "0.5",
    "image_id_offset": "1",
}  # fmt: skip
NEEDS = {"boundary_dilation": {"iou_type": "boundary"}}


def _parsed_fields():
    return [name for r in RECORDS for name, cli, _ in cli_fields(r) if cli.parse is not None]


def _flags():
    return [name for r in RECORDS for name, cli, _ in cli_fields(r) if cli.is_flag]


def _value(opts: EvalOptions, name: str):
    from iou_eval.options import OWNER

    return getattr(getattr(opts, OWNER[name]), name)


def test_every_parsed_option_has_a_text_example():
    assert sorted(_parsed_fields()) == sorted(TEXT)


@pytest.mark.parametrize("name", sorted(TEXT))
def test_keyword_takes_the_command_line_text(name):
    """The keyword's text gives the value the flag's parser gives."""
    text, extra = TEXT[name], NEEDS.get(name, {})
    want = _value(EvalOptions.of(**extra, **{name: CLI_OF[name].parse(text)}), name)
    assert _value(EvalOptions.of(**extra, **{name: text}), name) == want


@pytest.mark.parametrize("name", sorted(_flags()))
def test_switch_refuses_text_that_would_read_as_on(name):
    with pytest.raises(UsageError, match=rf"^{name}: expected True or False, got str 'no'$"):
        EvalOptions.of(**{name: "no"})
    assert _value(EvalOptions.of(**{name: True}), name) is True


def test_evaluate_lists_as_text_equal_lists_as_numbers():
    text = evaluate(GT, PREDS, iou_thresholds="0.5,0.75", max_dets="1,10,100")
    numbers = evaluate(GT, PREDS, iou_thresholds=[0.5, 0.75], max_dets=(1, 10, 100))
    assert text.to_dict() == numbers.to_dict()
    assert text.to_dict()["params"]["iou_thresholds"] == [0.5, 0.75]


def test_one_number_is_a_list_of_one():
    opts = EvalOptions.of(iou_thresholds=0.5, max_dets=100)
    assert opts.protocol.iou_thresholds == (0.5,) and opts.protocol.max_dets == (100,)


@pytest.mark.parametrize(
    "ranges",
    [
        "small=0:1024,large=1024:inf",
        {"small": (0, 1024), "large": (1024, float("inf"))},
        [("small", 0, 1024), ("large", 1024, float("inf"))],
        (AreaRange("small", 0, 1024), AreaRange("large", 1024, 1e10)),
    ],
    ids=["text", "mapping", "triples", "records"],
)
def test_area_ranges_as_text_mapping_or_triples(ranges):
    want = (AreaRange("small", 0.0, 1024.0), AreaRange("large", 1024.0, 1e10))
    assert EvalOptions.of(area_ranges=ranges).protocol.area_ranges == want
    summary = evaluate(GT, PREDS, area_ranges=ranges).summary
    assert list(summary) == list(evaluate(GT, PREDS, area_ranges=want).summary)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"area_ranges": 5}, "--area-ranges: expected text such as small=0:1024"),
        ({"area_ranges": [("small", 0)]}, "got tuple ('small', 0)"),
        ({"area_ranges": {"small": 5}}, "--area-ranges: expected (lo, hi) for 'small', got int 5"),
        ({"max_dets": object()}, "--max-dets: expected a list such as 1,10,100, got object"),
        ({"iou_thresholds": "0.5,x"}, "--iou-thresholds: expected a number in [0, 1], got 'x'"),
        ({"tide": "yes"}, "tide: expected True or False, got str 'yes'"),
    ],
)
def test_wrong_kinds_are_refused_by_name(keywords, message):
    with pytest.raises(UsageError) as err:
        evaluate(GT, PREDS, **keywords)
    assert message in str(err.value)


def test_evaluator_takes_the_command_line_text():
    ev = Evaluator(
        iou_thresholds="0.5,0.75", max_dets="1,10,100", area_ranges="small=0:1024",
        iou_thr="0.75", tide=True,
    )  # fmt: skip
    p = ev.options.protocol
    assert p.iou_thresholds == (0.5, 0.75) and p.max_dets == (1, 10, 100)
    assert p.area_ranges == (AreaRange("small", 0.0, 1024.0),)
    assert ev.options.point.iou_thr == 0.75


def test_evaluator_refuses_class_names_as_one_string():
    with pytest.raises(UsageError, match=r"class_names: expected a sequence of names .* got str"):
        Evaluator(class_names="cat,dog")
