"""No doubt fires on the acceptance cases, ``sample_data/`` or the parity scenes where none fired before.

The doubts that try the other reading on the data (box layouts, image ids,
class names) must stay silent on inputs read right.  Each scene's count of
doubts is the one measured before those checks existed.  Acceptance cases
are read in place and skipped when absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iou_eval import evaluate
from iou_eval.data.doubts import doubts_of

from ..conftest import ACCEPTANCE
from ..parity.synth import make_scene

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
CASES = ACCEPTANCE / "cases"

# (label, ground truth, predictions, options, doubts measured before the checks on the data).
ACCEPTANCE_SCENES = [
    ("01 abs", "01_padilla_odm_sample_txt/groundtruths", "01_padilla_odm_sample_txt/detections",
     {"protocol": "voc12", "iou_thr": 0.3}, 0),
    ("01 rel", "01_padilla_odm_sample_txt/groundtruths_rel",
     "01_padilla_odm_sample_txt/detections_rel",
     {"protocol": "voc12", "normalized": True, "image_size": (200, 200)}, 0),
    ("02 xywh", "02_rdm_toyexample_voc_xml/gts_vocpascal_format",
     "02_rdm_toyexample_voc_xml/dets_classname_abs_xywh", {"protocol": "voc12"}, 0),
    ("02 xyxy", "02_rdm_toyexample_voc_xml/gts_vocpascal_format",
     "02_rdm_toyexample_voc_xml/dets_classname_abs_xyx2y2",
     {"protocol": "voc12", "box_format": "xyxy"}, 0),
    ("02 coco", "02_rdm_toyexample_voc_xml/gts_coco_format/toy_example_coco.JSON",
     "02_rdm_toyexample_voc_xml/dets_coco_format/coco_dets.json", {}, 0),
    ("03 xyxy", "03_rdm_voc_database_100/gts/pascalvoc_format",
     "03_rdm_voc_database_100/dets/abs_xyx2y2",
     {"protocol": "voc12", "box_format": "xyxy", "names": "03_rdm_voc_database_100/dets/voc.names"},
     0),
    ("03 xywh", "03_rdm_voc_database_100/gts/pascalvoc_format",
     "03_rdm_voc_database_100/dets/abs_xywh",
     {"protocol": "voc12", "names": "03_rdm_voc_database_100/dets/voc.names"}, 0),
    ("03 coco", "03_rdm_voc_database_100/gts/coco_format_v2/instances_v2.json",
     "03_rdm_voc_database_100/dets/coco_format/coco_dets.json", {}, 0),
    ("04 bbox", "04_cocoapi_val2014_100_bbox_segm/instances_val2014_100.json",
     "04_cocoapi_val2014_100_bbox_segm/instances_val2014_fakebbox100_results.json", {}, 0),
    ("04 segm", "04_cocoapi_val2014_100_bbox_segm/instances_val2014_100.json",
     "04_cocoapi_val2014_100_bbox_segm/instances_val2014_fakesegm100_results.json",
     {"iou_type": "segm"}, 0),
    ("05", "05_rdm_coco_sampled_bbox_area/sampled_gts_bbox_area.json",
     "05_rdm_coco_sampled_bbox_area/sampled_bbox_results.json", {}, 0),
    ("06", "06_detectron2_coco_val_snippet/gt.json", "06_detectron2_coco_val_snippet/detections.json",
     {}, 0),
    ("07", "07_fce_shapes_polygons/gt_dataset.json", "07_fce_shapes_polygons/dt_dataset.json", {},
     0),
    ("08", "08_fce_crowd_region_ignore/gt_ignore_test.json",
     "08_fce_crowd_region_ignore/dt_ignore_test.json", {}, 0),
    ("09", "09_torchmetrics_map_inputs/coco_gt.json", "09_torchmetrics_map_inputs/coco_results.json",
     {}, 0),
    *[(f"10 {c}", f"10_tiny_edge_cases/{c}/gt.json", f"10_tiny_edge_cases/{c}/detections.json",
       {}, 0)
      for c in ("a_tm_missing_pred", "b_tm_missing_gt", "c_tm_single_pair_iou0.776",
                "d_tm_inputs2_fp_on_empty_image", "e_tm_inputs3_gt_class_without_preds",
                "g_mmdet_perfect_catid0_rle",
                "h_fce_low_score_fp_tail")],
    # Read as pixels, the subpixel boxes are fractions by their numbers: the scale doubt.
    ("10 f as pixels", "10_tiny_edge_cases/f_tm_box_format_subpixel/gt.json",
     "10_tiny_edge_cases/f_tm_box_format_subpixel/detections.json", {}, 1),
    ("11", "11_mmdet_eval_map_ignore_exact_iou/derived_voc/Annotations",
     "11_mmdet_eval_map_ignore_exact_iou/derived_voc/detections", {"protocol": "voc12"}, 1),
    ("12", "12_fce_keypoints/gt_dataset.json", "12_fce_keypoints/dt_dataset.json",
     {"iou_type": "keypoints"}, 0),
    ("14", "14_fce_boundary/gt_dataset.json", "14_fce_boundary/dt_dataset.json", {}, 0),
]  # fmt: skip

SAMPLE_SCENES = [
    ("coco", "coco/gt.json", "coco/preds.json", {}, 0),
    ("csv", "csv/gt.csv", "csv/preds.csv", {}, 0),
    ("cvat", "cvat/gt.xml", "cvat/preds.xml", {}, 0),
    ("voc", "voc/annotations", "voc/predictions", {}, 0),
    ("labelme", "labelme/gt", "labelme/preds", {}, 0),
    ("yolo", "yolo/data.yaml", "yolo/predictions", {}, 0),
    # read in Ultralytics numbering
    ("yolo json", "yolo/data.yaml", "yolo/predictions.json", {}, 0),
    ("lvis", "lvis/gt.json", "lvis/preds.json", {}, 0),
    ("keypoints", "keypoints/gt.json", "keypoints/preds.json", {"iou_type": "keypoints"}, 0),
    ("openimages", "openimages/gt.csv", "openimages/preds.csv", {}, 1),  # an image not listed
    ("dota", "dota/labelTxt", "dota/task1", {}, 0),
]


def _count(gt: str, preds: str, options: dict) -> int:
    return len(doubts_of(evaluate(gt, preds, warn=False, **options).warnings))


@pytest.mark.parametrize(
    ("gt", "preds", "options", "before"),
    [pytest.param(*s[1:], id=s[0]) for s in ACCEPTANCE_SCENES],
)
def test_acceptance_cases_raise_no_new_doubt(gt, preds, options, before):
    if not (CASES / gt).exists():
        pytest.skip(f"acceptance case {gt.split('/')[0]} not available at {CASES}")
    if "names" in options:
        options = {**options, "names": str(CASES / options["names"])}
    assert _count(str(CASES / gt), str(CASES / preds), options) == before


@pytest.mark.parametrize(
    ("gt", "preds", "options", "before"), [pytest.param(*s[1:], id=s[0]) for s in SAMPLE_SCENES]
)
def test_sample_data_raises_no_new_doubt(gt, preds, options, before):
    assert _count(str(SAMPLE / gt), str(SAMPLE / preds), options) == before


@pytest.mark.parametrize("seed", [*range(24), *range(100, 104)])
def test_parity_scenes_raise_no_doubt(seed, tmp_path):
    n = (300, 20) if seed >= 100 else (60, 6)
    gt, preds = make_scene(seed, n_images=n[0], n_categories=n[1])
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    assert _count(str(tmp_path / "gt.json"), str(tmp_path / "preds.json"), {}) == 0
