"""Shared fixtures: where the third-party acceptance cases live, JSON writers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ACCEPTANCE = Path(os.environ.get("IOU_EVAL_ACCEPTANCE", ROOT.parent / "shared" / "acceptance"))


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
