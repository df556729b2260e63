"""What a command's run came to, and the exit code that says it.

Exit codes: 0 success, 1 bad input, 2 usage error, 3 a quality gate failed,
4 an internal error (a bug; --debug shows the traceback).
A run that both failed to read some input (batch) and failed a gate exits
1: an unread file is the more urgent news.
"""

from __future__ import annotations

from dataclasses import dataclass

from iou_eval.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK


@dataclass(frozen=True)
class Outcome:
    """Counts of what went wrong; :attr:`exit_code` is derived, never set.

    Attributes:
        unreadable: input files that could not be scored (batch).
        failed_checks: quality gates and baseline checks that failed.
        doubts: under ``--strict``, warnings that doubt the numbers (exit 1).
    """

    unreadable: int = 0
    failed_checks: int = 0
    doubts: int = 0

    @property
    def exit_code(self) -> int:
        if self.unreadable or self.doubts:
            return EXIT_INPUT
        if self.failed_checks:
            return EXIT_GATE
        return EXIT_OK
