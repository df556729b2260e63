"""The analysis package's seams: numpy only, overlaps from any geometry, aligned inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iou_eval.analysis import (
    coco_true_positives_from_datasets,
    confusion_matrix_from_datasets,
    tide_from_datasets,
)
from iou_eval.api import load
from iou_eval.geometry.seam import geometry_for

from ..parity.error_scenes import make_error_scene
from .test_layers import PKG, third_party_imports


def test_analysis_imports_numpy_only():
    for path in sorted((PKG / "analysis").glob("*.py")):
        stdlib = {"numpy", "__future__", "dataclasses", "collections", "typing", "hashlib"}
        stdlib |= {"importlib", "sys", "types"}  # the package's names, read on first use
        extra = third_party_imports(path) - stdlib
        assert not extra, f"{path.name} imports {extra}"


@pytest.fixture(scope="module")
def aligned(tmp_path_factory):
    import json

    from iou_eval.data.reconcile import align

    gt, preds = make_error_scene(11)
    d = tmp_path_factory.mktemp("scene")
    (d / "gt.json").write_text(json.dumps(gt))
    (d / "dt.json").write_text(json.dumps(preds))
    g = load(str(d / "gt.json"), "gt")
    return align(g, load(str(d / "dt.json"), "pred"))


def test_a_geometrys_pair_method_is_an_overlaps_parameter(aligned):
    """The pipeline's geometry seam (masks later) plugs in as it is."""
    gt, pred = aligned.gt, aligned.pred
    pair = geometry_for(gt, pred, "bbox").pair
    a, b = tide_from_datasets(gt, pred), tide_from_datasets(gt, pred, overlaps=pair)
    assert a.to_dict() == b.to_dict() and np.array_equal(a.pred_error, b.pred_error)
    c1 = confusion_matrix_from_datasets(gt, pred)
    c2 = confusion_matrix_from_datasets(gt, pred, overlaps=pair)
    assert np.array_equal(c1.matrix, c2.matrix)
    f1 = coco_true_positives_from_datasets(gt, pred, gt_categories=aligned.n_categories)
    f2 = coco_true_positives_from_datasets(
        gt, pred, gt_categories=aligned.n_categories, overlaps=pair
    )
    assert all(np.array_equal(x, y) for x, y in zip(f1, f2, strict=True))


def test_unaligned_datasets_are_refused(aligned):
    gt = aligned.gt
    fewer = dataclasses.replace(gt, categories=dataclasses.replace(gt.categories, ids=(), names=()))
    with pytest.raises(ValueError, match="align them first"):
        tide_from_datasets(fewer, aligned.pred)
