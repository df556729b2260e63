"""Names the dead-code check (vulture, `make check`) cannot see used.

write_plots (iou_eval/reporters/plots.py) hands its keyword arguments to
_figures as locals(), which reads them by name.
"""

pr_subtitle  # noqa
overall_sweep  # noqa
confusion_names  # noqa
ap_title  # noqa
