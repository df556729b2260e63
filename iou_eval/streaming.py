"""The streaming evaluator: batches from a training or inference loop, the file path's numbers.

>>> from iou_eval import Evaluator
>>> ev = Evaluator(iou_type="bbox", protocol="coco", box_format="xyxy")
>>> for images, targets in loader:
...     ev.update(model(images), targets)  # lists of per-image dicts
>>> result = ev.compute()  # what evaluate() gives on the same data written to files

``update()`` reads each batch into numpy columns
(:mod:`iou_eval.io.loaders.batches`) and keeps them in a
:class:`~iou_eval.io.stream_state.StreamState`; ``compute()`` builds from it
the two tables the COCO loader would read from the files the state stands
for (:meth:`Evaluator.to_coco` writes them) and scores them with
:func:`iou_eval.api.evaluate`: every protocol, iou type, gate and analysis
of the file path, bit for bit.

Memory: predictions beyond what the protocols read are not kept (the top
``max(max_dets)`` per image and class for COCO, the top 300 per image for
LVIS; everything for VOC, Open Images, TIDE and the confusion matrix);
masks are kept as compressed RLE strings.

Images seen twice (the same ``image_id`` in two batches or two merged
shards) are an error by default (``duplicates="error"``): an id given
twice is more often a mistake (ids counted from 0 on every rank, two
datasets with overlapping ids) than a copy, a COCO file may not list an
image twice, and dropping a copy silently would change the numbers.
``duplicates="first"`` keeps the first copy and drops later ones, as a
``DistributedSampler`` that pads its last batches needs; their ground
truths must be the same, or it is an error all the same.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from iou_eval.api import evaluate, issue_doubts
from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Key
from iou_eval.data.doubts import STREAM_SOURCE
from iou_eval.errors import InputError, UsageError
from iou_eval.escape import excerpt
from iou_eval.io.inputs import finish_loaded
from iou_eval.io.loaders.batches import SIDES, BatchReader, Place, keep_top, read_batch
from iou_eval.io.stream_state import StreamState, take_rows
from iou_eval.options import AnalysisOptions, EvalOptions
from iou_eval.protocols.params import AUTO, Protocol
from iou_eval.protocols.registry import build_protocols, record_of
from iou_eval.results import EvaluationResult

# How reports name the evaluator's state where they name a file.
SOURCE = STREAM_SOURCE
DUPLICATES = ("error", "first")


def kept_per_image(
    protocols: Sequence[Protocol], analysis: AnalysisOptions
) -> tuple[int, bool] | None:
    """``(cap, per_class)``: the predictions the run reads at most, per image (and class); None: all.

    pycocotools reads the ``max(maxDets)`` highest-scored predictions of each
    image and category (of each image, class-agnostic); lvis-api the 300
    highest-scored of each image, across categories; calibration COCO's 100
    per class.  VOC ranks every prediction; Open Images orders an image's
    predictions of a class by numpy's (unstable) argsort of all of them, so
    that dropping some could reorder equal scores; and TIDE and the
    confusion matrix match on their own: with any of them, every prediction
    is kept.  A protocol this does not know keeps every prediction too.
    """
    if analysis.tide or analysis.confusion:
        return None
    caps, per_class = [], []
    for p in protocols:
        cap = record_of(p).stream_cap(p)
        if cap is None:
            return None
        caps.append(cap[0])
        per_class.append(cap[1])
    if analysis.calibration:
        caps.append(100)
        per_class.append(True)
    # Per image and class keeps a superset of per image: one per-class cap serves both.
    if not any(per_class) and analysis.cat_ids is not None:
        return None
    return (max(caps), any(per_class)) if caps else None


def _protocols(options: EvalOptions) -> list[Protocol]:
    """The protocols a run may score: ``auto`` is COCO's, or LVIS's once a target gives LVIS lists."""
    out = build_protocols(options.protocol)
    if AUTO in options.protocol.protocol:
        # Options LVIS refuses: an LVIS state is refused at compute(), as evaluate() refuses it.
        with contextlib.suppress(UsageError):
            out += build_protocols(options.protocol, federated=True)
    return out


FREQUENCIES = ("r", "c", "f")


def _frequencies(
    given: Mapping[Any, str] | Sequence[str] | None, names: tuple[str, ...] | None
) -> dict[int, str] | None:
    """LVIS's ``frequency`` of the categories, by label: from a mapping (label -> ``r``/``c``/``f``)
    or, with ``class_names``, a sequence of the same length."""
    if given is None:
        return None
    if isinstance(given, Mapping):
        pairs = list(given.items())
    elif names is not None and not isinstance(given, str) and len(given) == len(names):
        pairs = list(enumerate(given))
    else:
        raise UsageError(
            "class_frequencies: expected a mapping label -> 'r', 'c' or 'f', or with "
            "class_names a list of as many frequencies"
        )
    out = {}
    for label, freq in pairs:
        if freq not in FREQUENCIES or isinstance(label, bool) or not isinstance(label, int):
            raise UsageError(
                f"class_frequencies: {label!r}: {freq!r}: expected an integer label and 'r', "
                "'c' or 'f' (rare, common, frequent)"
            )
        out[int(label)] = str(freq)
    return out


class Evaluator:
    """Predictions and targets batch by batch; :meth:`compute` gives :func:`~iou_eval.api.evaluate`'s result.

    Args:
        iou_type: ``"bbox"``, ``"segm"``, ``"boundary"`` (Boundary IoU of the
            masks), ``"keypoints"`` (OKS), ``"obb"`` (oriented boxes) or several
            (``"bbox,segm"``).
        protocol: ``"coco"``, ``"lvis"``, ``"voc07"``, ``"voc12"``,
            ``"openimages"`` or several (``"coco,voc12"``); ``"auto"``: LVIS when ``class_frequencies``
            are given or a target gives LVIS's ``neg_category_ids`` or
            ``not_exhaustive_category_ids`` (an LVIS file), else COCO.
        box_format: the layout of the dicts' boxes: ``xyxy`` (torchmetrics'
            default), ``xywh`` or ``cxcywh``.
        class_names: labels are indices into it (the categories are these
            names, ids 0..K-1); None: labels are category ids, and the
            categories are every label seen, as torchmetrics takes them.
        class_frequencies: LVIS's ``frequency`` of the categories (``"r"``,
            ``"c"``, ``"f"``): a mapping label -> frequency, or with
            ``class_names`` a list of as many; gives APr, APc and APf.
        duplicates: ``"error"`` (default) or ``"first"``: what an image seen
            twice is (see the module notes).
        options: an :class:`~iou_eval.options.EvalOptions`, or its fields as
            keywords (``iou_thresholds=``, ``max_dets=``, ``iou_thr=``,
            ``bootstrap=``, ``tide=``...), as :func:`~iou_eval.api.evaluate` takes them.
    """

    def __init__(
        self,
        iou_type: str | Sequence[str] = "bbox",
        protocol: str | Sequence[str] = "coco",
        box_format: str = "xyxy",
        class_names: Sequence[str] | None = None,
        *,
        class_frequencies: Mapping[int, str] | Sequence[str] | None = None,
        duplicates: str = "error",
        options: EvalOptions | None = None,
        **keywords: Any,
    ) -> None:
        if duplicates not in DUPLICATES:
            raise UsageError(f"duplicates: expected 'error' or 'first', got {duplicates!r}")
        try:
            fmt = BoxFormat(box_format)
        except ValueError:
            raise UsageError(
                f"box_format: expected xyxy, xywh or cxcywh, got {box_format!r}"
            ) from None
        if isinstance(class_names, str):  # would be read character by character
            raise UsageError(
                f"class_names: expected a sequence of names such as ['cat', 'dog'], "
                f"got str {excerpt(class_names)}"
            )
        names = None if class_names is None else tuple(str(n) for n in class_names)
        self._frequency = _frequencies(class_frequencies, names)
        frequencies = None if self._frequency is None else sorted(self._frequency.items())
        self.options = EvalOptions.of(options, iou_type=iou_type, protocol=protocol, **keywords)
        types = self.options.protocol.iou_type
        self._settings = {
            "iou_type": list(types), "protocol": list(self.options.protocol.protocol),
            "box_format": fmt.value, "class_names": None if names is None else list(names),
            "duplicates": duplicates, "keywords": keywords,
            "class_frequencies": frequencies,
        }  # fmt: skip
        self._cap = kept_per_image(_protocols(self.options), self.options.analysis)
        masks = self.options.protocol.masks  # segm or boundary: the masks are read
        # Oriented boxes give the boxes bbox scores (those enclosing them), as in a file;
        # a keypoint ground truth needs its box (a result's may be its keypoints' extent).
        bbox = "bbox" in types and "obb" not in types
        boxed = frozenset(SIDES if bbox else {"gt"} if "keypoints" in types else ())
        self._reader = BatchReader(fmt, names, masks, boxed, tuple(types))
        self._duplicates = duplicates
        self._state = StreamState()

    # ------------------------------------------------------------- batches

    def update(self, preds: Any, targets: Any) -> None:
        """Add one batch: ``preds`` and ``targets``, one dict per image each (or two DataFrames).

        See :mod:`iou_eval.io.loaders.batches` for the dicts.  A bad batch
        raises :class:`~iou_eval.errors.InputError` naming the image and the
        field, and nothing of it is kept.
        """
        batch = read_batch(preds, targets, self._reader)
        ids, keep = self._placed(batch.ids, batch.gt)
        gt, pred = batch.gt, batch.pred
        if not keep.all():
            gt, pred = (_images_kept(c, keep) for c in (gt, pred))
        given = len(pred.get("image", ()))
        boxed = int(pred["has_box"].sum()) if given else 0
        if self._cap is not None and given:
            top = keep_top(pred["image"], pred["label"], pred["score"], *self._cap)
            pred = pred if top.all() else take_rows(pred, np.flatnonzero(top))
        lists = {name: _per_image(*v, keep) for name, v in batch.lists.items()}
        state = self._state
        state.add(ids, batch.height[keep], batch.width[keep], gt, pred, given, lists, boxed)

    def _placed(
        self, given: list[Key | None], gt: dict[str, np.ndarray]
    ) -> tuple[list[Key], np.ndarray]:
        """The batch's image ids (the next integers where none is given) and which are new.

        An id seen before (or twice in the batch) is an error, or with
        ``duplicates="first"`` a copy to drop once its ground truth is found the same.
        """
        state = self._state
        ids: list[Key] = []
        keep = np.ones(len(given), dtype=bool)
        seen: dict[Key, int] = {}
        for i, key in enumerate(given):
            k = len(state) + i if key is None else key
            first = state.index.get(k)
            if first is None and k not in seen:
                seen[k] = i
                ids.append(k)
                continue
            if self._duplicates == "error":
                raise Place("gt", i, k).error(
                    "image_id",
                    "was seen before; pass duplicates='first' to keep the first copy "
                    "(a DistributedSampler pads its last batch with copies)",
                )
            earlier = state.image_rows("gt", first) if first is not None else _rows_of(gt, seen[k])
            if not _same_rows(earlier, _rows_of(gt, i)):
                raise Place("gt", i, k).error(
                    "image_id", "was seen before with other ground truth: two images share the id"
                )
            keep[i] = False
        return ids, keep

    # ---------------------------------------------------------------- state

    def __len__(self) -> int:
        """The images seen."""
        return len(self._state)

    def reset(self) -> None:
        """Forget every image (the settings stay)."""
        self._state = StreamState()

    def merge(self, other: Evaluator | bytes) -> Evaluator:
        """Add another evaluator's images (or its :meth:`state_bytes`); returns this evaluator.

        Shards merged in any order give the numbers of one evaluator that saw
        them all.  Images both hold follow ``duplicates``.
        """
        if isinstance(other, (bytes, bytearray, memoryview)):
            other = Evaluator.from_state_bytes(bytes(other))
        if not isinstance(other, Evaluator):
            raise UsageError(
                f"merge: expected an Evaluator or its state_bytes(), got {type(other).__name__}"
            )
        mine, theirs = self._kept_settings(), other._kept_settings()
        if mine != theirs:
            raise UsageError(
                f"merge: the evaluators keep different things ({mine} and {theirs}): "
                "create both with the same iou_type, class_names and options"
            )
        src = other._state
        gt = src.gt.columns()
        ids, keep = self._placed(list(src.ids), gt if gt else {})
        positions = np.flatnonzero(keep)
        remap = np.full(len(src), -1, dtype=np.int64)
        remap[positions] = np.arange(len(positions))
        parts = []
        for cols in (gt, src.pred.columns()):
            if cols:
                cols = _images_kept(cols, keep)
                cols["image"] = remap[cols["image"]]
            parts.append(cols)
        height, width = np.asarray(src.height), np.asarray(src.width)
        dropped = src.given - len(src.pred)
        dropped_boxed = src.given_boxed - _boxed(src.pred.columns())
        kept_pred = len(parts[1].get("image", ()))
        lists = {
            name: [t for t, k in zip(column, keep.tolist(), strict=True) if k]
            for name, column in src.lists.items()
        }
        state = self._state
        state.add(
            ids, height[keep], width[keep], parts[0], parts[1], kept_pred + dropped, lists,
            _boxed(parts[1]) + dropped_boxed,
        )  # fmt: skip
        return self

    def _kept_settings(self) -> dict[str, Any]:
        return {
            "masks": self._reader.masks, "boxes": self._reader.boxes_required,
            "class_names": self._reader.class_names, "cap": self._cap,
            "class_frequencies": self._frequency,
        }  # fmt: skip

    def state_bytes(self) -> bytes:
        """The state as bytes for ranks to gather: a numpy ``.npz`` payload and a JSON header, no pickle."""
        try:
            json.dumps(self._settings)
        except (TypeError, ValueError) as exc:
            raise UsageError(
                f"state_bytes: the evaluator's options must be plain data (numbers, strings, "
                f"lists) to travel with its state ({exc})"
            ) from None
        return self._state.to_bytes(self._settings)

    @classmethod
    def from_state_bytes(cls, data: bytes) -> Evaluator:
        """An evaluator with the settings and the state of a :meth:`state_bytes` payload."""
        state, settings = StreamState.from_bytes(data)
        try:
            ev = cls(
                settings["iou_type"], settings["protocol"], settings["box_format"],
                settings["class_names"], duplicates=settings["duplicates"],
                class_frequencies=_pairs(settings.get("class_frequencies")),
                **settings["keywords"],
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, UsageError) as exc:
            raise InputError(
                "<state bytes>", f"the header's settings are incomplete ({exc})"
            ) from None
        ev._state = state
        return ev

    # --------------------------------------------------------------- scores

    def to_coco(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The two files the state stands for: ``(COCO dataset, COCO results list)``.

        ``evaluate()`` of them (written with ``json.dump``) gives :meth:`compute`'s numbers.
        """
        return self._state.to_coco(self._categories())

    def _categories(self) -> CategoryTable:
        return self._state.categories(self._reader.class_names, self._frequency)

    def compute(self, **keywords: Any) -> EvaluationResult:
        """Score every image seen: :func:`~iou_eval.api.evaluate` on the same data as files.

        May be called again; ``update()`` after it adds more.  ``keywords``:
        progress callbacks or a Dask ``client``, as ``evaluate`` takes them.
        Each doubt is issued as an :class:`~iou_eval.errors.IouEvalDoubt`
        warning (``warn=False``: not), as ``evaluate`` issues them.
        """
        state = self._state
        types = self._reader.iou_types
        unit = self.options.read.angle_unit if "obb" in types else None
        cats, masks = self._categories(), self._reader.masks
        gt, pred = state.datasets(cats, SOURCE, masks, unit, "keypoints" in types)
        read = self.options.read
        gt, pred = finish_loaded(gt, "gt", read), finish_loaded(pred, "pred", read)
        # The boxes were given in the evaluator's layout: the doubts try the others on them.
        layout = self._reader.box_format
        gt, pred = replace(gt, box_format=layout), replace(pred, box_format=layout)
        result = evaluate(gt, pred, self.options, **{**keywords, "warn": False})
        dropped = state.given - len(state.pred)
        if dropped:
            counts = result.inputs["predictions"]
            counts["boxes"] += dropped
            if "selection" not in result.inputs:
                counts["scored_boxes"] += dropped
            _given_counts(result.warnings, state)
        if keywords.get("warn", True):
            issue_doubts(result.warnings)
        return result

    def __repr__(self) -> str:
        o = self.options.protocol
        return (
            f"Evaluator(iou_type={','.join(o.iou_type)!r}, protocol={','.join(o.protocol)!r}, "
            f"images={len(self)}, ground_truths={len(self._state.gt)}, "
            f"predictions_kept={len(self._state.pred)})"
        )


def _per_image(labels: np.ndarray, counts: np.ndarray, keep: np.ndarray) -> list[tuple[int, ...]]:
    """A batch's category list (``labels[M]`` of ``counts[I]`` images) per image ``keep`` selects."""
    parts = np.split(labels, np.cumsum(counts)[:-1]) if len(counts) else []
    return [tuple(a.tolist()) for a, k in zip(parts, keep.tolist(), strict=True) if k]


def _boxed(cols: dict[str, np.ndarray]) -> int:
    """The rows of a side's columns that have a box."""
    return int(cols["has_box"].sum()) if cols else 0


def _given_counts(warnings: list[str], state: StreamState) -> None:
    """The notes that count predictions, counting those the cap dropped too (as the files hold them).

    pycocotools' first-result rule says how many results have box areas;
    the state keeps fewer than were given.
    """
    from iou_eval.geometry.segm import box_area_note

    kept = state.pred.columns()
    old = box_area_note(SOURCE, _boxed(kept), len(state.pred))
    new = box_area_note(SOURCE, state.given_boxed, state.given)
    warnings[:] = [new if w == old else w for w in warnings]


def _pairs(value: Any) -> dict[int, str] | None:
    """``[[label, frequency], ...]`` of a payload's header as a mapping."""
    return None if value is None else {int(k): str(f) for k, f in value}


def _images_kept(cols: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of the images ``keep[I]`` selects, renumbered over the kept images."""
    if not cols:
        return cols
    renumber = np.cumsum(keep) - 1
    rows = np.flatnonzero(keep[cols["image"]])
    out = take_rows(cols, rows)
    out["image"] = renumber[out["image"]]
    return out


def _rows_of(cols: dict[str, np.ndarray], image: int) -> dict[str, np.ndarray]:
    if not cols:
        return {}
    return take_rows(cols, np.flatnonzero(cols["image"] == image))


def _same_rows(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two images' ground-truth rows are the same (their positions aside)."""
    names = (set(a) | set(b)) - {"image"}
    n_a, n_b = len(a.get("image", ())), len(b.get("image", ()))
    if n_a != n_b:
        return False
    return n_a == 0 or all(np.array_equal(a[k], b[k]) for k in names if k in a and k in b)
