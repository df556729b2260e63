"""The command line: the only wing that prints or exits.

Enters: argv.  Leaves: reports on stdout (or ``-o FILE``), chatter on stderr,
and the exit code an :class:`~iou_eval.cli.outcome.Outcome` owns.
"""
