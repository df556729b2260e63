"""The README's promises: its CI snippet runs as written, its commands exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT

README = (ROOT / "README.md").read_text()


def ci_snippet() -> str:
    block = re.search(r"<!-- ci-snippet -->\s*```yaml\n(.*?)```", README, re.S).group(1)
    run = block.split("run: |\n", 1)[1]
    return "\n".join(line[4:] for line in run.splitlines())


def test_readme_opens_with_the_two_commands():
    head = README.split("\n## ", 1)[0]
    assert "make demo" in head and "make test" in head


def test_ci_snippet_runs_as_written(tmp_path):
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    p = subprocess.run(["bash", "-e", "-c", ci_snippet()], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}"
    assert "✅ Checks: all 3 checks passed" in summary.read_text()
    assert (tmp_path / "result.json").exists()


def test_ci_snippet_fails_the_step_when_a_gate_fails(tmp_path):
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(tmp_path / "s.md"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    script = ci_snippet().replace("AP=0.5 ", "AP=0.99 ")
    p = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert p.returncode == 3
    assert p.stdout.startswith("::error title=iou-eval gate::AP=0.99")
