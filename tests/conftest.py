"""Shared fixtures: where the third-party acceptance cases live, JSON writers, both paths.

``kernel_path`` runs a test twice: on the compiled parts as installed, and on
numpy alone (``IOU_EVAL_NO_KERNEL=1`` makes a run use numpy, pycocotools and
msgspec even where the compiled reader and kernels are built).  The numpy path
is the reference and both must give the same numbers bit for bit, so every
parity test and every rule test of matching, accumulation, resampling and the
geometry kernels asks for it (``pytestmark = pytest.mark.usefixtures("kernel_path")``):
a fix to one path alone then fails on the other.  Where no compiled part is
built the ``compiled`` runs are skipped (they would repeat the numpy ones).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from iou_eval.engine.compiled import built

ROOT = Path(__file__).resolve().parent.parent
ACCEPTANCE = Path(os.environ.get("IOU_EVAL_ACCEPTANCE", ROOT.parent / "shared" / "acceptance"))
_BUILT = bool(built())


@pytest.fixture(params=["compiled", "numpy"])
def kernel_path(request, monkeypatch) -> str:
    """``compiled`` (as installed) or ``numpy`` (``IOU_EVAL_NO_KERNEL=1``)."""
    if request.param == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    elif not _BUILT:
        pytest.skip("no compiled part is built here")
    else:
        monkeypatch.delenv("IOU_EVAL_NO_KERNEL", raising=False)
    return request.param


@pytest.fixture
def write_json(tmp_path):
    """``write_json(name, obj) -> path`` inside the test's temporary folder."""

    def _write(name: str, obj) -> str:
        p = tmp_path / name
        p.write_text(json.dumps(obj))
        return str(p)

    return _write


def by_reference(ds, ref, image_size=None):
    """``ds`` with fractional boxes scaled by the sizes of the matching images of ``ref``."""
    from iou_eval.data.reconcile import image_map, scale_fractions

    return scale_fractions(ds, image_size, ref, image_map(ref, ds.images)[0])
