"""The data: one columnar dataset per input, and what joins two of them.

Enters: rows that a loader read (numpy columns, ids as the files spell them).
Leaves: :class:`~iou_eval.data.dataset.Dataset` tables, their
:class:`~iou_eval.data.reconcile.Alignment` (images and categories joined by
dense integer indices), subsets and slices of them, and the doubts
(:mod:`.plausibility`) about how they were read.  Imports no wing above it.
"""
