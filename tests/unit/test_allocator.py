"""The command line's allocator settings (glibc's ``mallopt``), checked through a stand-in libc."""

from __future__ import annotations

import ctypes
import sys

import pytest

from iou_eval.cli.common import tune_allocator

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


def test_threads_share_one_arena_so_one_threads_freed_memory_serves_the_others(monkeypatch):
    libc = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    tune_allocator()
    m_arena_max, m_mmap_threshold = -8, -3
    assert (m_arena_max, 1) in libc.calls
    assert (m_mmap_threshold, 64 << 20) in libc.calls


def test_an_allocator_without_mallopt_is_left_alone(monkeypatch):
    def no_glibc(name: str):
        raise OSError(name)

    monkeypatch.setattr(ctypes, "CDLL", no_glibc)
    tune_allocator()  # no error
