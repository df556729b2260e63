"""Fuzzing that stays: damaged inputs of every registered format, and hostile option values.

The property, for every run of the command line: it evaluates (exit 0), or
it exits 1 (bad input) with a message naming an input, or 2 (usage) with a
message naming an option; never a traceback; every input file is left as
it was and no temporary file is left behind.

``make test`` runs each target on a few derandomized examples (seconds).
``make fuzz`` sets ``IOU_EVAL_FUZZ_SECONDS`` (600 by default) and searches
with fresh random examples until the budget, shared among the targets, is
spent; a failure is shrunk by hypothesis to a minimal input and reported.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iou_eval.io.loaders.registry import format_names

from ..cli.helpers import Run, run
from .mutations import OPTIONS, damaged, option_text
from .scenes import Scene, scenes, write_scene

BUDGET_ENV = "IOU_EVAL_FUZZ_SECONDS"
QUICK_EXAMPLES = 12
ROUND_EXAMPLES = 50
COMMON = ("-j", "1")


def _budget() -> float:
    try:
        return float(os.environ.get(BUDGET_ENV, "0"))
    except ValueError:
        return 0.0


def _targets() -> list[str]:
    return [*(f"loader:{name}" for name in scenes()), "options"]


def _snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


def check_run(root: Path, args: tuple[str, ...], inputs: tuple[str, ...]) -> Run:
    """Run ``iou-eval ARGS`` in ``root`` and assert the property (see the module docstring)."""
    before = _snapshot(root)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        r = run(*args, expect=None)  # an uncaught exception fails here, with its traceback
    finally:
        os.chdir(cwd)
    assert "Traceback" not in r.err, r
    gates = any(a in ("--fail-under", "--max-drop") for a in args)
    assert r.code in ((0, 1, 2, 3) if gates else (0, 1, 2)), f"exit code {r.code}\n{r}"
    if r.code == 1:
        assert "iou-eval: error: " in r.err, r
        # An input, or a file an input leads to (a dataset's label file, by its path).
        named = [p.rstrip("/") for p in inputs] + [str(root.resolve()) + os.sep]
        assert any(p in r.err for p in named), f"no input named\n{r}"
    if r.code == 2:  # ours ("iou-eval: error: --x: ...") or click's ("Error: ... '--x' ...")
        assert re.search(r"(?:^|[\s'\"(])-{1,2}[a-z]", r.err), f"no option named\n{r}"
    after = _snapshot(root)
    assert after == before, f"files changed: {sorted(set(after.items()) ^ set(before.items()))}"
    assert not [p for p in root.rglob(".iou-eval-*")], "a temporary file was left"
    return r


def _scene_args(scene: Scene, forced: bool) -> tuple[str, ...]:
    formats = ("--gt-format", scene.gt_format, "--pred-format", scene.pred_format)
    return (scene.gt, scene.pred, *COMMON, *scene.args, *(formats if forced else ()))


def _loader_property(scene: Scene, tmp: Path):
    names = scene.data_files()

    @st.composite
    def cases(draw):
        name = draw(st.sampled_from(names))
        data = draw(damaged(scene.files[name], name))
        fmt = draw(st.sampled_from(["table", "json", "csv", "markdown"]))
        return name, data, draw(st.booleans()), fmt

    def prop(case) -> None:
        name, data, forced, fmt = case
        root = Path(tmp) / f"case{time.monotonic_ns()}"
        root.mkdir()
        write_scene(scene, root, {**scene.files, name: data})
        check_run(root, (*_scene_args(scene, forced), "-f", fmt), (scene.gt, scene.pred, name))

    return cases(), prop


def _options_property(tmp: Path):
    scene = scenes()["coco"]
    root = Path(tmp) / "options"
    root.mkdir()
    write_scene(scene, root)
    cwd = os.getcwd()
    os.chdir(root)
    try:  # the baseline that --max-drop compares with
        run("gt.json", "preds.json", "-f", "json", "-o", "base.json", "-q")
    finally:
        os.chdir(cwd)

    @st.composite
    def cases(draw):
        chosen = draw(st.lists(st.sampled_from(sorted(OPTIONS)), min_size=1, max_size=3))
        args: list[str] = []
        for option in chosen:
            args += [option, draw(option_text(option))]
        if "--max-drop" in chosen:
            args += ["--baseline", "base.json"]
        return tuple(args)

    def prop(args: tuple[str, ...]) -> None:
        inputs = ("gt.json", "preds.json", "base.json")
        check_run(root, ("gt.json", "preds.json", *COMMON, *args), inputs)

    return cases(), prop


def _search(strategy, prop, seconds: float) -> None:
    """Quick derandomized examples, or fresh random rounds until ``seconds`` are spent."""
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    if seconds <= 0:
        examples = settings(max_examples=QUICK_EXAMPLES, derandomize=True, deadline=None,
                            database=None, suppress_health_check=quiet)  # fmt: skip
        given(strategy)(examples(prop))()
        return
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rounds = settings(max_examples=ROUND_EXAMPLES, derandomize=False, deadline=None,
                          database=None, suppress_health_check=quiet)  # fmt: skip
        given(strategy)(rounds(_fresh(prop)))()


def _fresh(prop):
    """A new function calling ``prop``: settings may decorate a function once only."""

    def one(case) -> None:
        prop(case)

    return one


def test_every_registered_format_has_a_scene():
    from iou_eval.io.loaders.registry import formats

    pred_only = {f.name for f in formats() if f.roles == ("pred",)}
    gt_only = {f.name for f in formats() if f.roles == ("gt",)}
    assert set(format_names()) <= set(scenes()) | pred_only
    assert {s.pred_format for s in scenes().values()} | gt_only == set(format_names())
    assert gt_only <= {s.gt_format for s in scenes().values()}


@pytest.mark.parametrize("target", _targets())
def test_fuzz(target: str, tmp_path: Path) -> None:
    seconds = _budget() / len(_targets())
    if target == "options":
        strategy, prop = _options_property(tmp_path)
    else:
        strategy, prop = _loader_property(scenes()[target.split(":", 1)[1]], tmp_path)
    _search(strategy, prop, seconds)
