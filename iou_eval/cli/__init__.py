"""The command line: the only wing that prints or exits.

Enters: argv.  Leaves: reports on stdout (or ``-o FILE``), chatter on stderr,
and the exit code an :class:`~iou_eval.cli.outcome.Outcome` owns.
"""

import os

# The command line runs no linear algebra: numpy's OpenBLAS need not start a
# thread per core at import, whose spinning takes a core a run wants (a
# process-wide choice, made before numpy loads; a user's own setting stands).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
