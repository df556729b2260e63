"""CI: gates, baselines, batch scoring and comparisons of evaluated results.

Enters: :class:`~iou_eval.results.EvaluationResult` records (and, for batch
scoring, the files to evaluate through :mod:`iou_eval.api`).
Leaves: checks with their verdicts, batch results and comparisons.
"""
