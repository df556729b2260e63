"""What ``Evaluator.update()`` reads: arrays of any kind, frames, detection objects; bad batches.

Every way of giving one scene gives the same numbers; a bad batch raises an
InputError naming the image and the field, and leaves the state as it was.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iou_eval import Evaluator, InputError

from .stream_helpers import assert_same, scene


class DlpackOnly:
    """An array that only speaks DLPack (as a GPU-less torch tensor or a jax array would)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = np.ascontiguousarray(a)

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class ArrayOnly:
    """An array that only has ``__array__`` (and a ``detach`` that must be called first)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a
        self.detached = False

    def detach(self):
        out = ArrayOnly(self._a)
        out.detached = True
        return out

    def __array__(self, dtype=None, copy=None):
        assert self.detached, "a tensor is detached before it is read"
        return np.asarray(self._a, dtype=dtype)


class DeviceTensor:
    """A device array: DLPack refuses it until it is brought to the host with ``cpu()``."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, **kwargs):
        raise BufferError("the array is on a device")

    def __dlpack_device__(self):
        return (2, 0)

    def cpu(self):
        return DlpackOnly(self._a)


def _wrapped(dicts, wrap):
    return [{k: (wrap(v) if isinstance(v, np.ndarray) else v) for k, v in d.items()} for d in dicts]


def _reference(preds, targets, **kw):
    ev = Evaluator(**kw)
    ev.update(preds, targets)
    return ev.compute()


@pytest.mark.parametrize(
    "wrap", [DlpackOnly, ArrayOnly, DeviceTensor, list], ids=lambda w: w.__name__
)
def test_arrays_through_their_protocols_give_the_numpy_numbers(wrap):
    preds, targets = scene(11, n_images=6, masks=True)
    kw = {"iou_type": "bbox,segm"}
    as_lists = wrap is list
    wrapper = (lambda a: a.tolist()) if as_lists else wrap
    ev = Evaluator(**kw)
    ev.update(_wrapped(preds, wrapper), _wrapped(targets, wrapper))
    assert_same(ev.compute(), _reference(preds, targets, **kw))


def test_float32_labels_and_image_id_tensors_are_read():
    preds, targets = scene(12, n_images=4)
    p32 = [dict(p, boxes=p["boxes"].astype(np.float32), labels=p["labels"].astype(np.float32),
                scores=p["scores"].astype(np.float32)) for p in preds]  # fmt: skip
    t32 = [dict(t, boxes=t["boxes"].astype(np.float32), image_id=np.array([t["image_id"]]))
           for t in targets]  # fmt: skip
    ev = Evaluator()
    ev.update(p32, t32)
    as64 = [dict(p, boxes=p["boxes"].astype(np.float64), scores=p["scores"].astype(np.float64),
                 labels=p["labels"].astype(np.int64)) for p in p32]  # fmt: skip
    t64 = [
        dict(t, boxes=t["boxes"].astype(np.float64), image_id=int(t["image_id"][0])) for t in t32
    ]
    assert_same(ev.compute(), _reference(as64, t64))


def _frames(preds, targets):
    rows_p, rows_t = [], []
    for p, t in zip(preds, targets, strict=True):
        for k in range(len(p["labels"])):
            x1, y1, x2, y2 = p["boxes"][k]
            rows_p.append({"image_id": t["image_id"], "x1": x1, "y1": y1, "x2": x2, "y2": y2,
                           "score": p["scores"][k], "label": p["labels"][k]})  # fmt: skip
        for k in range(len(t["labels"])):
            x1, y1, x2, y2 = t["boxes"][k]
            rows_t.append({"image_id": t["image_id"], "xmin": x1, "ymin": y1, "xmax": x2,
                           "ymax": y2, "labels": t["labels"][k], "iscrowd": t["iscrowd"][k],
                           "area": t["area"][k]})  # fmt: skip
    return pd.DataFrame(rows_p), pd.DataFrame(rows_t)


def test_dataframes_one_row_per_box():
    preds, targets = scene(13, n_images=9)
    # Images with neither ground truth nor predictions have no row in a frame: leave them out.
    keep = [i for i in range(9) if len(preds[i]["labels"]) + len(targets[i]["labels"])]
    preds, targets = [preds[i] for i in keep], [targets[i] for i in keep]
    pf, tf = _frames(preds, targets)
    ev = Evaluator()
    first = [t["image_id"] for t in targets[:3]]  # two batches: three images, then the rest
    ev.update(pf[pf.image_id.isin(first)], tf[tf.image_id.isin(first)])
    ev.update(pf[~pf.image_id.isin(first)], tf[~tf.image_id.isin(first)])
    assert len(ev) == len(keep)
    assert_same(ev.compute(), _reference(preds, targets))


def test_dicts_of_dataframe_columns():
    preds, targets = scene(13, n_images=5)
    pf = [dict(p, scores=pd.Series(p["scores"]), labels=pd.Series(p["labels"])) for p in preds]
    ev = Evaluator()
    ev.update(pf, targets)
    assert_same(ev.compute(), _reference(preds, targets))


class FakeDetections:
    """The attributes of supervision's ``Detections``."""

    def __init__(self, xyxy, confidence, class_id, mask=None):
        self.xyxy, self.confidence, self.class_id, self.mask = xyxy, confidence, class_id, mask


class FakeBoxes:
    def __init__(self, xyxy, conf, cls):
        self.xyxy, self.conf, self.cls = xyxy, conf, cls


class FakeResults:
    """The attributes of an Ultralytics ``Results`` (tensors: here DLPack arrays; cls as floats)."""

    def __init__(self, xyxy, conf, cls):
        self.boxes = FakeBoxes(
            DlpackOnly(xyxy), DlpackOnly(conf), DlpackOnly(cls.astype(np.float32))
        )


def test_supervision_detections_and_ultralytics_results():
    preds, targets = scene(14, n_images=6, masks=True)
    sv = [FakeDetections(p["boxes"], p["scores"], p["labels"], p["masks"]) for p in preds]
    ev = Evaluator(iou_type="bbox,segm")
    ev.update(sv, targets)
    assert_same(ev.compute(), _reference(preds, targets, iou_type="bbox,segm"))
    yolo = [FakeResults(p["boxes"], p["scores"], p["labels"]) for p in preds]
    ev = Evaluator()
    ev.update(yolo, targets)
    assert_same(ev.compute(), _reference(preds, targets))


def test_masks_as_rle_dicts():
    from pycocotools import mask as mask_utils

    preds, targets = scene(15, n_images=5, masks=True)

    def rles(masks, compressed):
        out = mask_utils.encode(np.asfortranarray(masks.transpose(1, 2, 0).astype(np.uint8)))
        if compressed:
            return [{"size": r["size"], "counts": r["counts"].decode()} for r in out]
        return [{"size": list(m.shape), "counts": _uncompressed(m)} for m in masks]

    p_rle = [dict(p, masks=rles(p["masks"], True)) for p in preds]
    t_rle = [dict(t, masks=rles(t["masks"], False)) for t in targets]
    # An image without masks in dict form tells no size: give it one from the bitmaps.
    t_rle = [
        t if len(t["masks"]) else dict(t, masks=targets[i]["masks"]) for i, t in enumerate(t_rle)
    ]
    ev = Evaluator(iou_type="segm")
    ev.update(p_rle, t_rle)
    assert_same(ev.compute(), _reference(preds, targets, iou_type="segm"))


def _uncompressed(mask: np.ndarray) -> list[int]:
    flat = mask.T.reshape(-1).astype(np.int8)  # column-major, as COCO counts
    change = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.r_[0, change, len(flat)]
    runs = np.diff(bounds).tolist()
    return runs if flat[0] == 0 else [0, *runs]


# ---------------------------------------------------------------- bad batches


def _image(side: str, field: str, value):
    """Image 555: 3 predictions and 1 ground truth of 48 x 64 pixels, ``field`` of ``side`` set
    to ``value`` (None: left out)."""
    p = {"boxes": np.tile([1.0, 2.0, 11.0, 12.0], (3, 1)), "scores": np.array([0.9, 0.5, 0.1]),
         "labels": np.array([0, 1, 2]), "masks": np.zeros((3, 48, 64), bool)}  # fmt: skip
    t = {"boxes": np.array([[1.0, 2.0, 11.0, 12.0]]), "labels": np.array([1]),
         "iscrowd": np.array([0]), "area": np.array([0.0]), "masks": np.zeros((1, 48, 64), bool),
         "image_id": 555}  # fmt: skip
    d = p if side == "pred" else t
    d[field] = value
    if value is None:
        del d[field]
    return p, t


BAD = [
    pytest.param(
        "pred", "boxes", np.zeros((3, 5)), r"preds\[1\]\.boxes.*must be \[", id="boxes-shape"
    ),
    pytest.param(
        "gt",
        "boxes",
        np.array([[1.0, 2.0, np.nan, 4.0]]),
        r"targets\[1\]\.boxes\[0\].*finite",
        id="nan-box",
    ),
    pytest.param(
        "pred", "scores", np.array([0.5]), r"preds\[1\]\.scores.*must be \[", id="scores-length"
    ),
    pytest.param(
        "pred",
        "labels",
        np.array([0, 7, 1]),
        r"preds\[1\]\.labels\[1\].*not in class_names",
        id="label-not-a-class",
    ),
    pytest.param(
        "gt", "labels", np.array([0.5]), r"targets\[1\]\.labels\[0\].*whole", id="fractional-label"
    ),
    pytest.param(
        "pred",
        "masks",
        np.zeros((3, 10, 10), bool),
        r"preds\[1\]\.masks\[0\].*10x10",
        id="mask-size",
    ),
    pytest.param(
        "pred",
        "masks",
        np.zeros((2, 48, 64), bool),
        r"preds\[1\]\.masks.*must be \[3,",
        id="mask-count",
    ),
    pytest.param(
        "gt", "iscrowd", np.array([2]), r"targets\[1\]\.iscrowd\[0\].*0 or 1", id="iscrowd"
    ),
    pytest.param(
        "gt",
        "boxes",
        np.array([[5.0, 5.0, 1.0, 9.0]]),
        r"targets\[1\]\.boxes\[0\].*x2 < x1",
        id="x2-before-x1",
    ),
    pytest.param("pred", "scores", None, r"preds\[1\]\.scores.*missing", id="no-scores"),
    pytest.param("gt", "image_id", [1, 2], r"targets\[1\]\.image_id.*one id", id="bad-id"),
]


@pytest.mark.parametrize("side,field,value,pattern", BAD)
def test_a_bad_batch_names_the_image_and_field_and_changes_nothing(side, field, value, pattern):
    preds, targets = scene(16, n_images=3, masks=True)
    ev = Evaluator(iou_type="bbox,segm", class_names=["a", "b", "c"])
    ev.update(preds[:1], targets[:1])
    before = ev.state_bytes()
    p, t = _image(side, field, value)
    with pytest.raises(InputError, match=pattern) as info:
        ev.update([preds[1], p], [targets[1], t])
    if field != "image_id":
        assert "image 555" in str(info.value)
    assert ev.state_bytes() == before and len(ev) == 1


def test_a_second_bad_image_keeps_the_first_good_one_out_too():
    """Nothing of a batch is kept when any image of it is bad (the good ones neither)."""
    preds, targets = scene(17, n_images=4)
    ev = Evaluator()
    preds[3] = dict(preds[3], boxes=np.full((len(preds[3]["labels"]), 4), np.inf))
    if not len(preds[3]["labels"]):
        preds[3] = dict(preds[3], boxes=np.full((1, 4), np.inf), labels=[0], scores=[0.5])
    with pytest.raises(InputError, match=r"preds\[3\]\.boxes\[0\]"):
        ev.update(preds, targets)
    assert len(ev) == 0 and ev.state_bytes() == Evaluator().state_bytes()


def test_preds_and_targets_of_different_lengths():
    preds, targets = scene(17, n_images=3)
    with pytest.raises(InputError, match="one dict per image"):
        Evaluator().update(preds, targets[:2])
    with pytest.raises(InputError, match="list with one dict per image"):
        Evaluator().update(preds[0], targets[0])


# ------------------------------------------- field by field, or image by image


def _walked_only(monkeypatch):
    """Make every batch be read image by image (as when one of its images is unusual)."""
    from iou_eval.io.loaders import batches

    def unusual(*args):
        raise batches._Unusual

    monkeypatch.setattr(batches, "_gathered_batch", unusual)


def _quirky(preds, targets):
    """The scene with values less usual than arrays of the expected shapes: images without
    rows as ``[]`` (shape ``[0]``), ids as one-element arrays, ``iscrowd`` and ``area``
    left out where they hold the defaults (0), scores as a list."""
    p_out, t_out, left_out = [], [], 0
    for i, (p, t) in enumerate(zip(preds, targets, strict=True)):
        p, t = dict(p), dict(t)
        if not len(t["labels"]):
            t["boxes"], t["labels"] = np.zeros(0), []
        for key in ("iscrowd", "area"):
            if i % 2 and not np.any(t[key]):
                left_out += len(t.pop(key)) > 0
        if i % 2:
            t["image_id"] = np.array([t["image_id"]])
        p["scores"] = p["scores"].tolist()
        p_out.append(p)
        t_out.append(t)
    assert left_out
    return p_out, t_out


@pytest.mark.parametrize("masks", [False, True], ids=["bbox", "bbox+segm"])
def test_a_batch_read_field_by_field_or_image_by_image_is_the_same_state(masks, monkeypatch):
    from iou_eval.io.loaders import batches

    preds, targets = scene(18, n_images=10, masks=masks)
    kw = {"iou_type": "bbox,segm" if masks else "bbox"}
    assert not any(len(t["labels"]) for t in targets[::5])  # images without ground truth
    reader = Evaluator(**kw)._reader
    quirky = _quirky(preds, targets)
    for p, t in [(preds, targets), quirky]:  # read field by field (no walk needed)
        batches._gathered_batch(p, t, reader)
    states = []
    for p, t in [(preds, targets), quirky]:
        ev = Evaluator(**kw)
        ev.update(p[:4], t[:4])
        ev.update(p[4:], t[4:])
        states.append(ev.state_bytes())
    _walked_only(monkeypatch)
    ev = Evaluator(**kw)
    ev.update(preds[:4], targets[:4])
    ev.update(preds[4:], targets[4:])
    assert states[0] == states[1] == ev.state_bytes()


def test_the_first_bad_image_is_named_as_reading_image_by_image_meets_it():
    """Shapes (and masks) image by image first, then the values of the joined columns:
    image 0's mask before image 1's box shape; image 1's box shape before image 0's iscrowd."""
    preds, targets = scene(16, n_images=2, masks=True)
    preds, targets = preds[::-1], targets[::-1]  # image 107 (3 ground truths), then 100
    ev = Evaluator(iou_type="bbox,segm", class_names=["a", "b", "c"])
    p0 = dict(preds[0], masks=np.zeros((len(preds[0]["labels"]), 9, 9), bool))
    p1 = dict(preds[1], boxes=np.zeros((len(preds[1]["labels"]), 3)))
    with pytest.raises(InputError, match=r"preds\[0\]\.masks\[0\]: image 107: masks are 9x9"):
        ev.update([p0, p1], targets)
    t0 = dict(targets[0], iscrowd=np.full(len(targets[0]["labels"]), 3))
    with pytest.raises(InputError, match=r"preds\[1\]\.boxes: image 100: boxes must be \["):
        ev.update([preds[0], p1], [t0, targets[1]])
    with pytest.raises(InputError, match=r"targets\[0\]\.iscrowd\[0\]: image 107: "):
        ev.update(preds, [t0, targets[1]])
    assert len(ev) == 0


def test_a_dimension_of_any_size_is_one_size_a_batch():
    """``[N, K, 3]`` rows (keypoints): any K, the same in every image with rows; an image
    without rows may give any empty array."""
    from iou_eval.io.loaders.batches import ANY, _joined, _Unusual

    a, b = np.ones((2, 17, 3)), np.zeros((1, 17, 3))
    joined, _ = _joined([a, np.zeros((0, 4, 3)), [], b], (ANY, 3), [2, 0, 0, 1])
    assert joined.shape == (3, 17, 3) and joined[2].sum() == 0
    with pytest.raises(_Unusual):
        _joined([a, np.ones((1, 5, 3))], (ANY, 3), [2, 1])
    with pytest.raises(_Unusual):
        _joined([a, np.ones((1, 17, 2))], (ANY, 3), [2, 1])
