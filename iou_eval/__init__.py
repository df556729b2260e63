"""iou-eval: object-detection evaluation, exactly as the reference implementations compute it.

Public API::

    from iou_eval import evaluate, load
    result = evaluate("gt.json", "preds.json")
    result.summary          # dict of the 12 COCO stats
    result.per_class        # pandas.DataFrame
    result.to_dict()        # the JSON document the CLI writes
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "evaluate",
    "load",
    "Protocol",
    "EvalOptions",
    "IouEvalError",
    "InputError",
    "iou",
]

if TYPE_CHECKING:  # pragma: no cover
    from .api import evaluate, load
    from .errors import InputError, IouEvalError
    from .options import EvalOptions
    from .protocols import Protocol


def __getattr__(name: str) -> Any:
    # Lazy: `iou-eval --help` and `import iou_eval` must not pay for pandas.
    if name in ("evaluate", "load"):
        from . import api

        return getattr(api, name)
    if name in ("IouEvalError", "InputError"):
        from . import errors

        return getattr(errors, name)
    if name == "iou":
        # import_module, not `from . import iou`: that would ask this hook again.
        import importlib

        return importlib.import_module(".iou", __name__)
    if name == "EvalOptions":
        from .options import EvalOptions

        return EvalOptions
    if name == "Protocol":
        from .protocols import Protocol

        return Protocol
    raise AttributeError(f"module 'iou_eval' has no attribute {name!r}")
