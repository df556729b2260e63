"""An unexpected exception anywhere: one message and exit code 4, never a traceback unless asked.

Each command is run with something deep inside it made to raise; the message
names the version, the exception's line, where to report it and how to see the
traceback (``--debug`` or ``IOU_EVAL_DEBUG=1``), which then shows it.
"""

from __future__ import annotations

import pytest

from iou_eval.errors import EXIT_INTERNAL
from iou_eval.version import __version__

from ..conftest import ROOT
from .helpers import run

SAMPLE = ROOT / "sample_data"
COCO = (SAMPLE / "coco" / "gt.json", SAMPLE / "coco" / "preds.json")
LVIS = (SAMPLE / "lvis" / "gt.json", SAMPLE / "lvis" / "preds.json")


def _raise(*_args, **_kwargs):
    raise IndexError("index 7 is out of bounds for axis 0 with size 0\nand a second line")


def _semseg_args(tmp_path):
    import numpy as np
    from PIL import Image

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(np.zeros((4, 4), np.uint8)).save(tmp_path / side / "a.png")
    return ["semseg", tmp_path / "gt", tmp_path / "pred"]


# command -> (the module and name made to raise, the arguments)
COMMANDS = {
    "eval": ("iou_eval.protocols.lvis", "_in_given_rows", lambda tmp: [*LVIS]),
    "eval-coco": ("iou_eval.api", "score", lambda tmp: [*COCO, "--quiet"]),
    "compare": ("iou_eval.api", "score", lambda tmp: ["compare", COCO[0], COCO[1], COCO[1]]),
    "draw": (
        "iou_eval.reporters.drawings", "draw_run",
        lambda tmp: ["draw", *COCO, "--images", SAMPLE / "images", "-o", tmp / "drawn"],
    ),
    "iou": ("iou_eval.toolkit.iou", "boxes", lambda tmp: ["iou", "0,0,2,2", "1,1,3,3"]),
    "semseg": ("iou_eval.toolkit.semseg", "evaluate_pairing", _semseg_args),
    "--version": ("iou_eval.engine.compiled", "describe", lambda tmp: ["--version"]),
}  # fmt: skip


def _force(monkeypatch, tmp_path, command: str) -> list:
    import importlib

    module, name, args = COMMANDS[command]
    monkeypatch.setattr(importlib.import_module(module), name, _raise)
    return args(tmp_path)


def _report_place() -> str:
    """Where the message sends bugs: pyproject's tracker, else its homepage, else the maintainers."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    urls = {k.lower(): v for k, v in project.get("urls", {}).items()}
    for label in ("issues", "issue tracker", "bug tracker", "bugs", "tracker", "homepage"):
        if label in urls:
            return urls[label]
    return "the iou-eval maintainers"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_internal_error_is_one_message_and_exit_4(command, monkeypatch, tmp_path):
    monkeypatch.delenv("IOU_EVAL_DEBUG", raising=False)
    r = run(*_force(monkeypatch, tmp_path, command), expect=EXIT_INTERNAL)
    assert "Traceback" not in r.err and 'File "' not in r.err
    assert r.err.startswith(f"iou-eval: internal error (iou-eval {__version__}): ")
    assert "IndexError: index 7 is out of bounds for axis 0 with size 0\n" in r.err
    assert "a second line" not in r.err
    assert _report_place() in r.err
    assert "--debug" in r.err and "IOU_EVAL_DEBUG=1" in r.err
    assert r.err.count("iou-eval: ") == 1  # one message


@pytest.mark.parametrize("command", list(COMMANDS))
def test_debug_flag_shows_the_traceback(command, monkeypatch, tmp_path):
    monkeypatch.delenv("IOU_EVAL_DEBUG", raising=False)
    args = _force(monkeypatch, tmp_path, command)
    r = run(*args, "--debug", expect=EXIT_INTERNAL)
    assert r.err.startswith("Traceback (most recent call last):")
    assert "in _raise" in r.err and "iou-eval: internal error" in r.err


def test_debug_environment_variable_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv("IOU_EVAL_DEBUG", "1")
    r = run(*_force(monkeypatch, tmp_path, "eval"), expect=EXIT_INTERNAL)
    assert "Traceback (most recent call last):" in r.err and "in _raise" in r.err


def test_debug_flag_before_the_command_and_without_an_error(monkeypatch):
    monkeypatch.delenv("IOU_EVAL_DEBUG", raising=False)
    assert run("--debug", "iou", "0,0,2,2", "1,1,3,3").out == "0.142857\n"
    assert run(*COCO, "--quiet", "--debug", "-f", "json").out.startswith("{")


def test_exit_code_4_is_documented():
    from iou_eval.cli.main import main as group

    assert "4 an internal error" in run("--help").out
    for name in group.commands:
        assert "--debug" in run(name, "--help").out, name
    reports = (ROOT / "docs" / "reports.md").read_text()
    assert "| 4 | an internal error" in reports and "IOU_EVAL_DEBUG=1" in reports


def test_report_url_prefers_the_issue_tracker(monkeypatch):
    from importlib import metadata

    from iou_eval.cli import internal

    class Meta(dict):
        def get_all(self, key):
            return self.get(key)

    urls = ["Homepage, https://example.org/home", "Issues, https://example.org/issues"]
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta({"Project-URL": urls}))
    assert internal.report_url() == "https://example.org/issues"
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta({"Project-URL": urls[:1]}))
    assert internal.report_url() == "https://example.org/home"
