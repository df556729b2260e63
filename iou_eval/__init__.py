"""iou-eval: object-detection evaluation, exactly as the reference implementations compute it.

Public API::

    from iou_eval import evaluate, load
    result = evaluate("gt.json", "preds.json")
    result.summary          # dict of the 12 COCO stats
    result.per_class        # pandas.DataFrame
    result.to_dict()        # the JSON document the CLI writes

    ev = Evaluator(iou_type="bbox")   # batches from a training loop
    ev.update(preds, targets)         # torchmetrics-style per-image dicts
    ev.compute()                      # the same result as evaluate() on files
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iou_eval.version import __version__

__all__ = [
    "__version__",
    "evaluate",
    "load",
    "Evaluator",
    "Protocol",
    "EvalOptions",
    "IouEvalError",
    "InputError",
    "IouEvalDoubt",
    "iou",
]

if TYPE_CHECKING:  # pragma: no cover
    from iou_eval.api import evaluate, load
    from iou_eval.errors import InputError, IouEvalDoubt, IouEvalError
    from iou_eval.options import EvalOptions
    from iou_eval.protocols.params import Protocol
    from iou_eval.streaming import Evaluator
    from iou_eval.toolkit import iou


def __getattr__(name: str) -> Any:
    # Lazy: `iou-eval --help` and `import iou_eval` must not pay for pandas.
    if name in ("evaluate", "load"):
        from iou_eval import api

        return getattr(api, name)
    if name == "Evaluator":
        from iou_eval.streaming import Evaluator

        return Evaluator
    if name in ("IouEvalError", "InputError", "IouEvalDoubt"):
        from iou_eval import errors

        return getattr(errors, name)
    if name == "iou":
        from iou_eval.toolkit import iou

        return iou
    if name == "EvalOptions":
        from iou_eval.options import EvalOptions

        return EvalOptions
    if name == "Protocol":
        from iou_eval.protocols.params import Protocol

        return Protocol
    raise AttributeError(f"module 'iou_eval' has no attribute {name!r}")
