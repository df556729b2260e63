"""The GitHub Action (action.yml) run step by step as the runner runs a composite action.

Each ``run:`` step goes to ``bash --noprofile --norc -eo pipefail`` (the
runner's ``shell: bash``) after its ``${{ inputs.* }}``, ``${{
github.action_path }}`` and ``${{ steps.* }}`` expressions are substituted; every
step gets its own ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` files, a step
that fails ends the action with its exit code, and the action's outputs are
read from the steps' outputs.  The install step runs as written against a
``python3`` on PATH that records a ``-m pip install`` (building the package
again would take minutes) and runs everything else with this interpreter,
where iou-eval is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from ..conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
RUNNER_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


@dataclass
class ActionRun:
    code: int
    outputs: dict[str, str]
    summary: str
    log: str
    pip_calls: list[list[str]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"exit code {self.code}\noutputs {self.outputs}\n--- log ---\n{self.log}"


def expand(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    """``text`` with the expressions the action uses replaced as the runner replaces them."""

    def value(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr == "github.action_path":
            return str(ROOT)
        if m2 := re.fullmatch(r"inputs\.([A-Za-z0-9_-]+)", expr):
            assert m2.group(1) in ACTION["inputs"], f"action.yml reads an undeclared input: {expr}"
            return inputs[m2.group(1)]
        if m2 := re.fullmatch(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", expr):
            return steps.get(m2.group(1), {}).get(m2.group(2), "")
        raise AssertionError(f"an expression this test does not evaluate: {expr}")

    return EXPRESSION.sub(value, text)


def read_outputs(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads GITHUB_OUTPUT."""
    out: dict[str, str] = {}
    lines = iter(path.read_text().splitlines()) if path.exists() else iter([])
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            out[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def pip_shim(folder: Path) -> Path:
    """A ``python3`` that records ``-m pip install ...`` and runs anything else with this Python."""
    folder.mkdir()
    shim = folder / "python3"
    shim.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
        '  shift 2; printf "%s\\0" "$@" >> "$PIP_LOG"; printf "\\n" >> "$PIP_LOG"; exit 0\n'
        "fi\n"
        f'exec "{sys.executable}" "$@"\n'
    )
    shim.chmod(0o755)
    return folder


def run_action(tmp_path: Path, **given: str) -> ActionRun:
    """Run action.yml's steps with ``given`` inputs (names with ``_`` for ``-``) in a workspace."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "sample_data").symlink_to(ROOT / "sample_data")
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    missing = [n for n, s in ACTION["inputs"].items() if s.get("required") and not inputs[n]]
    assert not missing, f"required inputs not given: {missing}"
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    env = dict(os.environ, GITHUB_ACTION_PATH=str(ROOT), GITHUB_WORKSPACE=str(workspace),
               RUNNER_TEMP=str(runner_temp), PIP_LOG=str(tmp_path / "pip.log"))  # fmt: skip
    env["PATH"] = f"{pip_shim(tmp_path / 'shim')}{os.pathsep}{env['PATH']}"
    steps: dict[str, dict[str, str]] = {}
    summary, log, code = "", "", 0
    assert ACTION["runs"]["using"] == "composite"
    for i, step in enumerate(ACTION["runs"]["steps"]):
        assert step.get("shell") == "bash" and "run" in step and "if" not in step, step
        files = {
            k: runner_temp / f"{k.lower()}_{i}" for k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
        }
        for f in files.values():
            f.touch()
        step_env = {**env, **{k: str(f) for k, f in files.items()}}
        step_env.update({k: expand(str(v), inputs, steps) for k, v in step.get("env", {}).items()})
        script = runner_temp / f"step_{i}.sh"
        script.write_text(expand(step["run"], inputs, steps))
        p = subprocess.run([*RUNNER_BASH, str(script)], cwd=workspace, env=step_env,
                           capture_output=True, text=True, check=False)  # fmt: skip
        log += f"--- step {step.get('name')} ---\n{p.stdout}{p.stderr}"
        summary += files["GITHUB_STEP_SUMMARY"].read_text()
        if "id" in step:
            steps[step["id"]] = read_outputs(files["GITHUB_OUTPUT"])
        code = p.returncode
        if code:
            break
    outputs = {n: expand(str(o["value"]), inputs, steps) for n, o in ACTION["outputs"].items()}
    pip_log = tmp_path / "pip.log"
    lines = pip_log.read_text().split("\n") if pip_log.exists() else []
    return ActionRun(code, outputs, summary, log, [ln.split("\0")[:-1] for ln in lines if ln])


GT = "sample_data/coco/gt.json"
PREDS = "sample_data/coco/preds.json"


def headline_ap() -> float:
    p = subprocess.run([sys.executable, "-m", "iou_eval", str(ROOT / GT), str(ROOT / PREDS),
                        "-f", "json"], capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(p.stdout)["summary"]["AP"]


def test_action_with_passing_gates_writes_the_summary_and_the_outputs(tmp_path):
    r = run_action(tmp_path, ground_truth=GT, predictions=PREDS, fail_under="AP=0.5\nAP50=0.7\n")
    assert r.code == 0, r
    assert r.pip_calls == [["install", "--disable-pip-version-check", str(ROOT)]], r
    assert (
        r.summary.startswith("## iou-eval report") and "✅ Checks: all 2 checks passed" in r.summary
    )
    assert r.outputs["exit-code"] == "0"
    assert r.outputs["ap"] == repr(headline_ap())
    report = Path(r.outputs["report"])
    assert report.is_absolute() and json.loads(report.read_text())["passed"] is True
    assert '<testcase name="gate AP50=0.7"' in Path(r.outputs["junit"]).read_text()
    assert "::error" not in r.log


def test_action_with_a_failing_gate_fails_the_step_with_exit_3_and_an_annotation(tmp_path):
    r = run_action(tmp_path, ground_truth=GT, predictions=PREDS, fail_under="AP=0.99\nAP50=0.5")
    assert r.code == 3, r
    assert r.outputs["exit-code"] == "3" and r.outputs["ap"] == repr(headline_ap())
    assert "❌ Checks:" in r.summary
    assert "\n::error title=iou-eval gate::AP=0.99" in r.log
    junit = Path(r.outputs["junit"]).read_text()
    assert 'failures="1"' in junit and '<failure type="gate" message="AP=0.99 under coco' in junit


def test_action_passes_quoted_arguments_and_gates_whole(tmp_path):
    r = run_action(tmp_path, ground_truth=GT, predictions=PREDS, install="false",
                   fail_under="AP[traffic light]=0.01",
                   args="--protocol coco --fail-under 'AP[person]=0.1' --iou-thr \"0.6\"")  # fmt: skip
    assert r.code == 0, r
    assert r.pip_calls == []  # install: false
    assert "AP[traffic light]=0.01" in r.summary.replace("\\", "")
    assert "all 2 checks passed" in r.summary
    assert json.loads(Path(r.outputs["report"]).read_text())["params"]["iou_thr"] == 0.6


def test_action_args_are_never_run_as_shell(tmp_path):
    marker = tmp_path / "pwned"
    r = run_action(tmp_path, ground_truth=GT, predictions=PREDS, install="false",
                   args=f"--iou-thr 0.5 $(touch {marker}) `touch {marker}`")  # fmt: skip
    assert r.code == 1, r  # the words are prediction files that do not exist
    assert not marker.exists()


def test_action_baseline_drop_fails_and_the_report_serves_the_next_run(tmp_path):
    first = run_action(tmp_path / "a", ground_truth=GT, predictions=PREDS, install="false")
    assert first.code == 0, first
    preds = sorted(json.loads((ROOT / PREDS).read_text()), key=lambda p: -p["score"])
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps(preds[3:]))
    r = run_action(tmp_path / "b", ground_truth=GT, predictions=str(worse), install="false",
                   baseline=first.outputs["report"], max_drop="0.01")  # fmt: skip
    assert r.code == 3, r
    assert "::error title=iou-eval regression::AP" in r.log
    assert float(r.outputs["ap"]) < float(first.outputs["ap"])


def test_action_of_a_batch_reports_the_best_model_and_a_suite_per_file(tmp_path):
    preds = json.loads((ROOT / PREDS).read_text())
    half = tmp_path / "half.json"
    half.write_text(json.dumps(preds[::2]))
    r = run_action(tmp_path, ground_truth=GT, predictions=f"{PREDS}\n{half}\n", install="false")
    assert r.code == 0, r
    assert r.summary.startswith("## iou-eval leaderboard")
    assert r.outputs["ap"] == repr(headline_ap())  # the full predictions rank first
    assert Path(r.outputs["junit"]).read_text().count("<testsuite ") == 2


def test_action_on_unreadable_input_fails_with_exit_1_and_says_so_in_the_summary(tmp_path):
    r = run_action(tmp_path, ground_truth=GT, predictions="missing.json", install="false")
    assert r.code == 1, r
    assert r.outputs == {"ap": "", "report": "", "junit": "", "exit-code": "1"}
    assert "iou-eval exited 1 without a report" in r.summary
    assert "missing.json" in r.log


@pytest.mark.parametrize("name", sorted(ACTION["inputs"]))
def test_every_input_of_the_action_is_read_by_a_step(name):
    text = json.dumps(ACTION["runs"])
    assert f"inputs.{name}" in text
