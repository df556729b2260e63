"""Geometry: overlaps of two datasets' regions, behind one seam.

Enters: an aligned ground truth and predictions (boxes, masks).
Leaves: IoU / IoF of their candidate pairs as numpy arrays, through
:func:`~iou_eval.geometry.seam.geometry_for` (one module per geometry:
:mod:`.boxes`, :mod:`.masks` with :mod:`.rle` and the compiled
:mod:`.kernel`, :mod:`.boundary` for Boundary IoU).  Imports :mod:`iou_eval.data` and the engine only.
"""
