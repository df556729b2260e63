"""``iou_eval.iou``: the IoU functions (boxes, masks, polygons, keypoints, label maps...).

The import path the docs name (``from iou_eval.iou import boxes``, ``from
iou_eval import iou``); the functions live in :mod:`iou_eval.toolkit.iou`, and
this name is that same module.
"""

from __future__ import annotations

import sys

from iou_eval.toolkit import iou as _iou
from iou_eval.toolkit.iou import *  # noqa: F403  (for readers of the source and the docs)
from iou_eval.toolkit.iou import __all__  # noqa: F401

# One module under both names: `iou_eval.iou is iou_eval.toolkit.iou`.
sys.modules[__name__] = _iou
