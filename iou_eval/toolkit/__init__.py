"""The IoU toolkit: overlaps of anything, semantic segmentation, the calculator.

Enters: arrays, masks, label maps from the caller.
Leaves: numbers and matrices (``iou_eval.iou``), semantic-segmentation scores
(:mod:`.semseg`).  Independent of the detection pipeline but for its box and
mask geometry.
"""
