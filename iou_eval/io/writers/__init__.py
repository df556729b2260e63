"""Writers: the mirror of the loaders, one module per target format, listed in :mod:`.registry`.

Enters: a :class:`~iou_eval.io.writers.labels.Labels` record (what one input
file holds, read as for an evaluation: doubts and joins applied, boxes in
pixels, the ground truth's images and class list).
Leaves: the files of the target format as ``{relative path: bytes}``, written
whole or not at all by :mod:`.staging`, and notes that count what the target
could not hold.
"""
