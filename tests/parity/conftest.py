"""Every parity test runs on both paths: the compiled parts as installed, and numpy alone.

``IOU_EVAL_NO_KERNEL=1`` makes a run use numpy, pycocotools and msgspec even
where the compiled reader and kernels are built; the numpy path is the
reference, and both must give pycocotools' arrays bit for bit.  Where no
compiled part is built the ``compiled`` runs are skipped (they would repeat
the numpy ones).
"""

from __future__ import annotations

import pytest

from iou_eval.engine.compiled import built

_BUILT = bool(built())


@pytest.fixture(params=["compiled", "numpy"], autouse=True)
def kernel_path(request, monkeypatch) -> str:
    """``compiled`` (as installed) or ``numpy`` (``IOU_EVAL_NO_KERNEL=1``)."""
    if request.param == "numpy":
        monkeypatch.setenv("IOU_EVAL_NO_KERNEL", "1")
    elif not _BUILT:
        pytest.skip("no compiled part is built here")
    else:
        monkeypatch.delenv("IOU_EVAL_NO_KERNEL", raising=False)
    return request.param
