"""What a streaming evaluator keeps: the images seen and their rows, as numpy columns.

The state stands for two COCO files, a ground-truth dataset and a results
list (:meth:`StreamState.to_coco` writes them), and gives the two
:class:`~iou_eval.data.dataset.Dataset` tables the COCO loader reads from
those files (:meth:`StreamState.datasets`), so that scoring it gives the
file path's numbers bit for bit.  In those files the images come in id
order (as pycocotools orders them) and each image's rows in the order
given: the numbers do not depend on the order of ``update()`` calls or of
merged shards.

Columns, per side (``gt``, ``pred``), ``[N]`` rows unless said:
``image`` int64 (position in :attr:`StreamState.ids`), ``label`` int64,
``xywh[N, 4]`` float64, ``has_box`` bool; ground truth ``area`` float64
and ``iscrowd`` bool; predictions ``score`` float64; with masks
``mask_data[B]`` uint8 (the compressed strings back to back),
``mask_length``, ``mask_size[N, 2]``, ``mask_area``, ``mask_box[N, 4]``.

:meth:`StreamState.to_bytes` is a plain ``.npz`` payload (no pickle): the
columns, and a JSON header with the image ids and the settings.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, replace
from typing import Any
from zipfile import BadZipFile

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import CategoryTable, Dataset, ImageTable, Key, assemble, sort_key
from iou_eval.errors import InputError

MAGIC = "iou-eval stream state"
VERSION = 1
# Columns whose length is not the row count: ragged buffers, each row's part
# ``length`` long (buffer -> (its length column, the start column a sorted side adds)).
# (None: a sorted side holds the buffer itself in row order).
BUFFERS: dict[str, tuple[str, str | None]] = {
    "mask_data": ("mask_length", "mask_start"),
    "kp_values": ("kp_length", None),
}
_DTYPES = {
    "image": np.int64, "label": np.int64, "xywh": np.float64, "has_box": np.bool_,
    "area": np.float64, "iscrowd": np.bool_, "score": np.float64, "mask_data": np.uint8,
    "mask_length": np.int64, "mask_size": np.int64, "mask_area": np.float64,
    "mask_box": np.int64, "xywhr": np.float64, "kp_values": np.float64,
    "kp_length": np.int64, "num_keypoints": np.int64,
}  # fmt: skip
_TAILS = {"xywh": (4,), "mask_size": (2,), "mask_box": (4,), "xywhr": (5,)}
# LVIS's per-image lists: their names in a COCO image and in the ImageTable.
IMAGE_TABLE_LISTS = {
    "neg_category_ids": "negative",
    "not_exhaustive_category_ids": "not_exhaustive",
}


def _starts(length: np.ndarray) -> np.ndarray:
    return np.cumsum(length) - length


def ragged_rows(buffer: np.ndarray, length: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The parts of ``rows`` (integer positions) of a ragged ``buffer``, joined in that order.

    One gather: each picked part's positions are its start plus 0, 1, ... .
    """
    picked = length[rows]
    shift = np.repeat(_starts(length)[rows] - _starts(picked), picked)
    return buffer[shift + np.arange(int(picked.sum()), dtype=np.int64)]


def take_rows(cols: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``rows`` of a side's columns (the ragged buffers re-joined in that order)."""
    out = {k: v[rows] for k, v in cols.items() if k not in BUFFERS}
    for name, (length, _) in BUFFERS.items():
        if name in cols:
            out[name] = ragged_rows(cols[name], cols[length], rows)
    return out


@dataclass
class Side:
    """One side's columns, as chunks appended by ``update()`` and joined when read."""

    chunks: list[dict[str, np.ndarray]] = field(default_factory=list)

    def append(self, cols: dict[str, np.ndarray]) -> None:
        if cols and len(cols["image"]):
            self.chunks.append(cols)

    def columns(self) -> dict[str, np.ndarray]:
        """Every column joined (kept joined: the next read is free)."""
        if len(self.chunks) > 1:
            names = self.chunks[0].keys()
            self.chunks = [{k: np.concatenate([c[k] for c in self.chunks]) for k in names}]
        return dict(self.chunks[0]) if self.chunks else {}

    def __len__(self) -> int:
        return sum(len(c["image"]) for c in self.chunks)

    def nbytes(self) -> int:
        return sum(a.nbytes for c in self.chunks for a in c.values())


@dataclass
class StreamState:
    """The images seen (``ids[I]``, ``height[I]``, ``width[I]``) and both sides' rows.

    Attributes:
        given: predictions given to ``update()``, kept or not (the cap drops some);
            given_boxed: those of them with a box.
        lists: LVIS's per-image category lists (``neg_category_ids``,
            ``not_exhaustive_category_ids``), ``[I]`` each, once any image gave one.
    """

    ids: list[Key] = field(default_factory=list)
    height: list[float] = field(default_factory=list)
    width: list[float] = field(default_factory=list)
    gt: Side = field(default_factory=Side)
    pred: Side = field(default_factory=Side)
    given: int = 0
    given_boxed: int = 0
    index: dict[Key, int] = field(default_factory=dict, repr=False)
    lists: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def add(
        self,
        ids: list[Key],
        height: np.ndarray,
        width: np.ndarray,
        gt: dict[str, np.ndarray],
        pred: dict[str, np.ndarray],
        given: int,
        lists: dict[str, list[tuple[int, ...]]] | None = None,
        given_boxed: int = 0,
    ) -> None:
        """Append images and their rows (``image`` columns count from 0 in ``ids``).

        ``lists``: per-image category lists of the new images (an image of a
        list no image gave before, or of one these images lack, has none).
        """
        base = len(self.ids)
        for side, cols in ((self.gt, gt), (self.pred, pred)):
            if cols:
                side.append({**cols, "image": cols["image"] + base})
        lists = lists or {}
        for name in sorted(set(self.lists) | set(lists)):
            self.lists.setdefault(name, [()] * base).extend(lists.get(name, [()] * len(ids)))
        self.index.update((k, base + i) for i, k in enumerate(ids))
        self.ids.extend(ids)
        self.height.extend(np.asarray(height, dtype=np.float64).tolist())
        self.width.extend(np.asarray(width, dtype=np.float64).tolist())
        self.given += given
        self.given_boxed += given_boxed

    def image_rows(self, side: str, position: int) -> dict[str, np.ndarray]:
        """The rows of one image on one side (duplicates are compared this way)."""
        cols = getattr(self, side).columns()
        if not cols:
            return {}
        return take_rows(cols, np.flatnonzero(cols["image"] == position))

    # ------------------------------------------------------------ the files

    def categories(
        self, class_names: tuple[str, ...] | None, frequency: dict[int, str] | None = None
    ) -> CategoryTable:
        """``class_names`` (ids 0..K-1), or every label seen (ids sorted, names their text).

        ``frequency``: LVIS's ``r`` / ``c`` / ``f`` of some categories (by id).
        """
        if class_names is not None:
            ids: tuple[int, ...] = tuple(range(len(class_names)))
            names = tuple(class_names)
        else:
            labels = [s.columns().get("label", np.zeros(0, np.int64)) for s in (self.gt, self.pred)]
            ids = tuple(np.unique(np.concatenate(labels)).tolist())
            names = tuple(str(k) for k in ids)
        freq = tuple((frequency or {}).get(k) for k in ids)
        # As the COCO loader reads a file: no category with a frequency, no frequencies.
        return CategoryTable(ids, names, freq if any(f is not None for f in freq) else None)

    def _order(self) -> tuple[np.ndarray, np.ndarray]:
        """``(images[I], rank[I])``: the images in id order, and each image's place in it."""
        order = np.array(
            sorted(range(len(self.ids)), key=lambda i: sort_key(self.ids[i])), dtype=np.int64
        )
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return order, rank

    def _sorted_side(self, side: str, rank: np.ndarray) -> dict[str, np.ndarray]:
        """A side's columns with rows in image-id order (each image's rows as given)."""
        cols = getattr(self, side).columns()
        if not cols:
            return {}
        rows = np.argsort(rank[cols["image"]], kind="stable")
        out = {k: v[rows] for k, v in cols.items() if k not in BUFFERS}
        out["image"] = rank[cols["image"]][rows]
        for name, (length, start) in BUFFERS.items():
            if name in cols and start is None:
                out[name] = ragged_rows(cols[name], cols[length], rows)
            elif name in cols and start is not None:
                out[name] = cols[name]
                out[start] = _starts(cols[length])[rows]
        return out

    def datasets(
        self,
        categories: CategoryTable,
        source: str,
        masks: bool,
        angle_unit: str | None = None,
        keypoints: bool = False,
    ) -> tuple[Dataset, Dataset]:
        """``(ground truth, predictions)`` as the COCO loader reads :meth:`to_coco`'s files
        (``masks``, ``keypoints``: read as it reads them for those iou types).

        ``angle_unit``: the rows are oriented boxes (``xywhr``, the angle in
        that unit), read as a table of ``cx, cy, w, h, angle`` is read.
        """
        order, rank = self._order()
        images = ImageTable.build(
            [self.ids[i] for i in order.tolist()],
            None,
            np.asarray(self.width, dtype=np.float64)[order],
            np.asarray(self.height, dtype=np.float64)[order],
        )
        cat_ids = np.asarray(categories.ids, dtype=np.int64)
        out = []
        for side in ("gt", "pred"):
            cols = self._sorted_side(side, rank)
            table = self._with_lists(images, order) if side == "gt" else images
            ds = _dataset(side, cols, table, categories, cat_ids, source, masks, angle_unit)
            out.append(_with_keypoints(ds, cols, side, source) if keypoints else ds)
        return out[0], out[1]

    def _with_lists(self, images: ImageTable, order: np.ndarray) -> ImageTable:
        """The ground truth's images with their LVIS lists (in id ``order``), as the loader reads them."""
        if not self.lists:
            return images
        positions = order.tolist()

        def ordered(name: str) -> tuple[tuple[Key, ...], ...] | None:
            column = self.lists.get(name)
            return None if column is None else tuple(column[i] for i in positions)

        return replace(
            images,
            negative=ordered("neg_category_ids"),
            not_exhaustive=ordered("not_exhaustive_category_ids"),
        )

    def to_coco(self, categories: CategoryTable) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The two files the state stands for: a COCO dataset and a COCO results list."""
        order, rank = self._order()
        images = []
        for i in order.tolist():
            im: dict[str, Any] = {"id": self.ids[i]}
            if np.isfinite(self.height[i]):
                im["height"], im["width"] = int(self.height[i]), int(self.width[i])
            im.update((name, list(column[i])) for name, column in self.lists.items())
            images.append(im)
        gt = _records(self._sorted_side("gt", rank), images, "gt")
        for i, ann in enumerate(gt):
            ann["id"] = i + 1
        freq = categories.frequency or (None,) * len(categories)
        cats = [
            {"id": k, "name": n, **({"frequency": f} if f is not None else {})}
            for k, n, f in zip(categories.ids, categories.names, freq, strict=True)
        ]
        results = _records(self._sorted_side("pred", rank), images, "pred")
        return {"images": images, "annotations": gt, "categories": cats}, results

    # ------------------------------------------------------------- payload

    def to_bytes(self, settings: dict[str, Any]) -> bytes:
        """The state as an ``.npz`` payload: the columns, and a JSON header (no pickle)."""
        header = {
            "magic": MAGIC, "version": VERSION, "settings": settings, "ids": self.ids,
            "given": self.given, "given_boxed": self.given_boxed,
        }  # fmt: skip
        arrays: dict[str, np.ndarray] = {
            "header": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
            "height": np.asarray(self.height, dtype=np.float64),
            "width": np.asarray(self.width, dtype=np.float64),
        }
        for side in ("gt", "pred"):
            arrays.update({f"{side}.{k}": v for k, v in getattr(self, side).columns().items()})
        for name, column in self.lists.items():
            counts = np.fromiter(map(len, column), dtype=np.int64, count=len(column))
            flat = np.fromiter((k for t in column for k in t), dtype=np.int64, count=counts.sum())
            arrays[f"lists.{name}.labels"], arrays[f"lists.{name}.counts"] = flat, counts
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, **arrays)
        return buf.getvalue()

    @staticmethod
    def from_bytes(data: bytes) -> tuple[StreamState, dict[str, Any]]:
        """``(state, settings)`` of a :meth:`to_bytes` payload; an InputError if it is not one."""
        try:
            with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            header = json.loads(arrays.pop("header").tobytes().decode("utf-8"))
        except (OSError, EOFError, ValueError, KeyError, TypeError, BadZipFile) as exc:
            raise _bad_payload(f"not a state payload ({exc})") from None
        if not isinstance(header, dict) or header.get("magic") != MAGIC:
            raise _bad_payload("not a state payload (no iou-eval header)")
        if header.get("version") != VERSION:
            raise _bad_payload(f"state version {header.get('version')!r}, expected {VERSION}")
        state = _state_of(header, arrays)
        return state, header.get("settings", {})


def _bad_payload(message: str) -> InputError:
    return InputError("<state bytes>", message)


def _state_of(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> StreamState:
    """The state a payload's header and arrays hold, each column's dtype and shape checked."""
    ids = header.get("ids")
    if not isinstance(ids, list) or not all(type(k) in (int, str) for k in ids):
        raise _bad_payload("image ids must be a list of integers and strings")
    n_images = len(ids)
    state = StreamState(
        given=int(header.get("given", 0)), given_boxed=int(header.get("given_boxed", 0))
    )
    sizes = [arrays.get("height"), arrays.get("width")]
    if any(s is None or s.dtype != np.float64 or s.shape != (n_images,) for s in sizes):
        raise _bad_payload(f"image sizes must be float64[{n_images}]")
    for side in ("gt", "pred"):
        cols = {k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith(f"{side}.")}
        _check_columns(side, cols, n_images)
        if cols:
            getattr(state, side).append(cols)
    state.lists = _lists_of(arrays, n_images)
    state.ids = list(ids)
    state.height, state.width = arrays["height"].tolist(), arrays["width"].tolist()
    state.index = {k: i for i, k in enumerate(ids)}
    if len(state.index) != n_images:
        raise _bad_payload("an image id appears twice")
    return state


def _lists_of(arrays: dict[str, np.ndarray], n_images: int) -> dict[str, list[tuple[int, ...]]]:
    """The per-image category lists of a payload (``lists.<name>.labels`` and ``.counts``)."""
    out = {}
    for name in IMAGE_TABLE_LISTS:
        flat, counts = arrays.get(f"lists.{name}.labels"), arrays.get(f"lists.{name}.counts")
        if flat is None and counts is None:
            continue
        if (
            flat is None or counts is None or flat.dtype != np.int64 or counts.dtype != np.int64
            or flat.ndim != 1 or counts.shape != (n_images,) or (counts < 0).any()
            or int(counts.sum()) != len(flat)
        ):  # fmt: skip
            raise _bad_payload(f"lists.{name}: unexpected columns")
        parts = np.split(flat, np.cumsum(counts)[:-1]) if n_images else []
        out[name] = [tuple(a.tolist()) for a in parts]
    return out


def _check_columns(side: str, cols: dict[str, np.ndarray], n_images: int) -> None:
    if not cols:
        return
    n = len(cols.get("image", ()))
    for name, arr in cols.items():
        want = _DTYPES.get(name)
        shape = None if name in BUFFERS else (n, *_TAILS.get(name, ()))
        if want is None or arr.dtype != want or (shape is not None and arr.shape != shape):
            raise _bad_payload(f"{side}.{name}: unexpected column {arr.dtype}{list(arr.shape)}")
    image = cols["image"]
    if len(image) and (image.min() < 0 or image.max() >= n_images):
        raise _bad_payload(f"{side}.image: a row names an image the state does not hold")
    for name, (length, _) in BUFFERS.items():
        lengths = cols.get(length)
        if name in cols and (
            lengths is None or (lengths < 0).any() or int(lengths.sum()) != len(cols[name])
        ):
            raise _bad_payload(f"{side}.{name}: the parts' lengths do not add up")


def _dataset(
    side: str,
    cols: dict[str, np.ndarray],
    images: ImageTable,
    categories: CategoryTable,
    cat_ids: np.ndarray,
    source: str,
    masks: bool,
    angle_unit: str | None = None,
) -> Dataset:
    """One side as ``load_coco`` reads its file (same columns, same checks, same masks);
    oriented boxes (``angle_unit``) as a table of them is read."""
    gt = side == "gt"
    n = len(cols.get("image", ()))
    if not cols:
        cols = {"image": np.zeros(0, np.int64), "label": np.zeros(0, np.int64),
                "xywh": np.zeros((0, 4)), "has_box": np.zeros(0, bool),
                "area": np.zeros(0), "iscrowd": np.zeros(0, bool), "score": np.zeros(0)}  # fmt: skip
    columns: dict[str, Any] = dict(
        source=source,
        fmt="coco",
        images=images,
        categories=categories,
        image_idx=cols["image"],
        category_idx=np.searchsorted(cat_ids, cols["label"]).astype(np.int64),
        score=None if gt else cols["score"],
        is_crowd=cols["iscrowd"] if gt else None,
        ann_id=np.arange(1, n + 1, dtype=np.int64) if gt else None,
        origin=np.arange(n, dtype=np.int64),
        files=(source,),
        origin_label="annotations" if gt else "",
    )
    if angle_unit is not None:  # the box encloses the corners; the area is the quadrilateral's
        from iou_eval.data.oriented import assemble_oriented, corners_from_xywhr

        xywhr = cols.get("xywhr", np.zeros((0, 5)))
        corners = corners_from_xywhr(xywhr, angle_unit)
        return assemble_oriented(corners=corners, angle_unit=angle_unit, checked=True, **columns)
    ds = assemble(
        boxes=cols["xywh"],
        box_format=BoxFormat.XYWH,
        area=cols["area"] if gt else None,
        **columns,
    )
    if not masks:
        return ds
    from iou_eval.geometry.masks import CheckedRles, Strings
    from iou_eval.geometry.segm import PendingMasks, encode_early

    if "mask_data" in cols:
        strings = Strings(cols["mask_data"], cols["mask_start"], cols["mask_length"])
        checked = CheckedRles(strings, cols["mask_size"], cols["mask_area"], cols["mask_box"])
    else:
        checked = None
    pending = PendingMasks(
        segs=np.empty(n, dtype=object), has_bbox=cols["has_box"], path=source,
        origins=ds.origin, origin_label=ds.origin_label, checked=checked,
    )  # fmt: skip
    ds = replace(ds, masks=pending)
    return encode_early(ds) if gt else ds


def _with_keypoints(ds: Dataset, cols: dict[str, np.ndarray], side: str, source: str) -> Dataset:
    """``ds`` with its keypoints, as the COCO loader attaches a file's (``num_keypoints`` -1:
    not given; results without a box take their keypoints' extent)."""
    from iou_eval.io.loaders.coco_keypoints import attach_keypoints

    n = len(ds)
    columns = {
        "kp_values": cols.get("kp_values", np.zeros(0)),
        "kp_length": cols.get("kp_length", np.zeros(n, np.int64)),
        "num_keypoints": cols.get("num_keypoints", np.full(n, -1, np.int64)),
        "boxes": cols.get("xywh", np.zeros((n, 4))),
        "has_bbox": cols.get("has_box", np.zeros(n, bool)),
    }
    return attach_keypoints(ds, columns, slice(None), side, source)


def _records(cols: dict[str, np.ndarray], images: list[dict], side: str) -> list[dict[str, Any]]:
    """A side's rows as COCO annotations (ground truth) or results (predictions)."""
    if not cols:
        return []
    n = len(cols["image"])
    ids = [images[i]["id"] for i in cols["image"].tolist()]
    labels = cols["label"].tolist()
    boxes = cols["xywh"].tolist()
    has_box = cols["has_box"].tolist()
    out: list[dict[str, Any]] = []
    for r in range(n):
        rec: dict[str, Any] = {"image_id": ids[r], "category_id": labels[r]}
        if has_box[r]:
            rec["bbox"] = boxes[r]
        out.append(rec)
    if side == "gt":
        for rec, a, c in zip(out, cols["area"].tolist(), cols["iscrowd"].tolist(), strict=True):
            rec["area"], rec["iscrowd"] = a, int(c)
    else:
        for rec, s in zip(out, cols["score"].tolist(), strict=True):
            rec["score"] = s
    if "kp_values" in cols:
        _keypoint_records(out, cols)
    if "mask_data" in cols:
        view = memoryview(cols["mask_data"].tobytes())
        ends = cols["mask_start"] + cols["mask_length"]
        sizes = cols["mask_size"].tolist()
        for rec, a, b, size in zip(
            out, cols["mask_start"].tolist(), ends.tolist(), sizes, strict=True
        ):
            rec["segmentation"] = {"size": size, "counts": bytes(view[a:b]).decode("ascii")}
    return out


def _keypoint_records(out: list[dict[str, Any]], cols: dict[str, np.ndarray]) -> None:
    """COCO's ``keypoints`` lists (and a ground truth's ``num_keypoints`` where given)."""
    ends = np.cumsum(cols["kp_length"])
    flat = cols["kp_values"].tolist()
    for rec, a, b in zip(out, (ends - cols["kp_length"]).tolist(), ends.tolist(), strict=True):
        rec["keypoints"] = flat[a:b]
    if "num_keypoints" in cols:
        for rec, k in zip(out, cols["num_keypoints"].tolist(), strict=True):
            if k >= 0:
                rec["num_keypoints"] = k
