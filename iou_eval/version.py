"""The version of iou-eval (read by the build, the reports and ``--version``)."""

__version__ = "0.1.0"
