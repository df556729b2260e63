"""Protocols: matching and accumulation under a benchmark's rules.

Enters: an :class:`~iou_eval.data.reconcile.Alignment` and a
:class:`~iou_eval.protocols.params.Protocol` (parameters).
Leaves: matches, precision/recall arrays and summary numbers, one module per
protocol (:mod:`.coco`, :mod:`.lvis`, :mod:`.voc`) over shared machinery
(:mod:`.matching`, :mod:`.accumulate`, the partition/merge of
:mod:`.partition`).  Imports geometry, data and the engine.
"""
