"""Every parity test runs on both paths (the ``kernel_path`` fixture of tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _both_paths(kernel_path: str) -> str:
    """Each parity test on the compiled parts as installed and on numpy alone."""
    return kernel_path
