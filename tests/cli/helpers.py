"""Running the CLI in tests, with everything shown when an expectation fails."""

from __future__ import annotations

from dataclasses import dataclass

from click.testing import CliRunner

from iou_eval.cli.main import main
from iou_eval.errors import EXIT_INTERNAL


@dataclass
class Run:
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"exit code {self.code}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"


def hide(monkeypatch, package: str) -> None:
    """Make ``import package`` fail for the rest of a test, as if it were not installed."""
    import sys

    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)


def run(*args: str, expect: int | None = 0) -> Run:
    """Invoke ``iou-eval ARGS``; assert the exit code unless ``expect`` is None."""
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    r = Run(result.exit_code, result.stdout, result.stderr)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(result.exception))
        raise AssertionError(f"uncaught exception (a traceback would reach the user):\n{tb}\n{r}")
    if r.code == EXIT_INTERNAL and expect != EXIT_INTERNAL:
        import traceback

        cause = result.exception.__context__ if result.exception is not None else None
        tb = "".join(traceback.format_exception(cause)) if cause is not None else ""
        raise AssertionError(f"internal error (exit 4, a bug):\n{tb}\n{r}")
    if expect is not None:
        assert r.code == expect, f"expected exit code {expect}\n{r}"
    return r
