"""A plain ``iou-eval GT PRED`` reads only the code it runs.

Each case runs the command in a fresh interpreter (so nothing an earlier test
imported hides a module) and lists what is in ``sys.modules`` once the report
is written.  The analyses, the gates, the other protocols, the other formats'
readers and the optional libraries are read only when a run asks for them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"

# What none of these runs uses.
NEVER = (
    "iou_eval.analysis.bootstrap",
    "iou_eval.analysis.calibration",
    "iou_eval.analysis.common",
    "iou_eval.analysis.confusion",
    "iou_eval.analysis.run",
    "iou_eval.analysis.tide",
    "iou_eval.ci.gates",
    "iou_eval.data.hierarchy",
    "iou_eval.data.image_labels",
    "iou_eval.data.oriented",
    "iou_eval.geometry.segm",
    "iou_eval.io.loaders.dota",
    "iou_eval.io.loaders.image_folder",
    "iou_eval.io.loaders.shapes",
    "iou_eval.io.loaders.text",
    "iou_eval.io.loaders.yolo",
    "iou_eval.protocols.dota",
    "iou_eval.protocols.openimages",
    "iou_eval.protocols.voc",
    "iou_eval.reporters.html",
    "iou_eval.reporters.plots",
    "iou_eval.streaming",
    "dask",
    "matplotlib",
    "pandas",
    "PIL",
)

_RUN = """
import json, sys
from iou_eval.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *args, "--format", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["code"] in (0, None), proc.stderr
    assert json.loads(out.read_text())["summary"], "no report written"
    return set(last["modules"])


@pytest.mark.parametrize(
    "case, extra, unused",
    [
        ("coco", (), ("iou_eval.geometry.keypoints",)),
        ("keypoints", ("--iou-type", "keypoints"), ()),
    ],
)
def test_plain_run_reads_no_analysis_gate_or_other_protocol(tmp_path, case, extra, unused):
    gt, pred = SAMPLE / case / "gt.json", SAMPLE / case / "preds.json"
    loaded = _modules_after(tmp_path, str(gt), str(pred), *extra)
    read = sorted(m for m in (*NEVER, *unused) if m in loaded)
    assert not read, f"a plain {case} run imported {read}"


def test_analysis_names_stay_functions_after_their_modules_are_read():
    """``tide`` and ``calibration`` are functions of the package and modules below it."""
    code = (
        "import iou_eval.analysis.tide, iou_eval.analysis.calibration\n"
        "from iou_eval.analysis import calibration, tide, TideResult\n"
        "print(callable(tide), callable(calibration), tide.__module__, TideResult.__name__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.stdout.split() == ["True", "True", "iou_eval.analysis.tide", "TideResult"], (
        proc.stderr
    )


@pytest.mark.parametrize("collecting", [True, False])
def test_reading_the_command_sets_its_modules_aside_and_leaves_the_collector_as_it_was(
    collecting,
):
    """The command's modules are frozen out of collection passes; a caller's gc state stands."""
    code = (
        "import gc\n"
        f"{'' if collecting else 'gc.disable()'}\n"
        "import iou_eval.cli.main\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 10000)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.stdout.split() == [str(collecting), "True"], proc.stderr
