"""Input and output: files in, datasets out; reports out, whole or not at all.

Enters: paths (or in-memory objects) and the read options.
Leaves: :class:`~iou_eval.data.dataset.Dataset` tables (:mod:`.loaders`, one
module per format, listed in :mod:`.loaders.registry`), the files that
options name (:mod:`.option_files`), reports written safely
(:mod:`.output`), and datasets written in any target format (:mod:`.writers`,
one module per format, listed in :mod:`.writers.registry`).  Reading is bounded (:mod:`.source`).
"""
