"""The VOC cases of the shared acceptance set (01, 02, 03, 11) reproduce their AP values.

Read from ../shared/acceptance at test time; skipped when it is absent.
"""

from __future__ import annotations

import shutil

import pytest

from iou_eval import evaluate

from .helpers import case_dir, expected

THRESHOLDS = ["0.1", "0.3", "0.5", "0.75"]
METHOD = {"voc07": "11_point", "voc12": "all_point"}


def ap_of(result, cls):
    return result.per_class.set_index("class").loc[cls]


@pytest.mark.parametrize("thr", THRESHOLDS)
@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
@pytest.mark.parametrize("twin", ["absolute", "relative"])
def test_01_padilla_sample_with_score_ties(thr, protocol, twin):
    d = case_dir("01_padilla_odm_sample_txt")
    ref = expected(d.name)["computed_reference"]["stable_plus1"][thr]
    if twin == "absolute":
        r = evaluate(
            str(d / "groundtruths"), str(d / "detections"), protocol=protocol, iou_thr=float(thr)
        )
    else:
        r = evaluate(str(d / "groundtruths_rel"), str(d / "detections_rel"), protocol=protocol,
                     iou_thr=float(thr), normalized=True, image_size=(200, 200))  # fmt: skip
    row = ap_of(r, "person")
    assert row["AP"] == pytest.approx(ref[METHOD[protocol]], abs=1e-12)
    assert (row["TP"], row["FP"]) == (ref["TP"], ref["FP"])
    assert r.summary["mAP"] == pytest.approx(ref[METHOD[protocol]], abs=1e-12)


def test_01_published_numbers():
    d = case_dir("01_padilla_odm_sample_txt")
    pub = expected(d.name)["expected"]
    for e in pub:
        protocol = "voc07" if e["interpolation"] == "11_point" else "voc12"
        r = evaluate(str(d / "groundtruths"), str(d / "detections"), protocol=protocol,
                     iou_thr=e["iou_threshold"])  # fmt: skip
        assert r.summary["mAP"] == pytest.approx(e["value"], abs=e["tolerance"]), e


@pytest.mark.parametrize(
    "dets, options",
    [
        ("dets_classname_abs_xywh", {}),
        ("dets_classname_abs_xyx2y2", {"box_format": "xyxy"}),
        ("dets_classid_abs_xywh", {"names": "voc.names"}),
        ("dets_classid_abs_xyx2y2", {"names": "voc.names", "box_format": "xyxy"}),
    ],
)
def test_02_voc_xml_ground_truth_and_text_detections(dets, options):
    d = case_dir("02_rdm_toyexample_voc_xml")
    if "names" in options:
        options = dict(options, names=(d / options["names"]).read_text().split())
    ref = expected(d.name)["computed_reference"]["voc_abs_xywh (also abs_xyx2y2, classid variants)"]
    for e in expected(d.name)["expected"]:
        protocol = "voc07" if e["interpolation"] == "11_point" else "voc12"
        thr = e["iou_threshold"]
        r = evaluate(
            str(d / "gts_vocpascal_format"),
            str(d / dets),
            protocol=protocol,
            iou_thr=thr,
            **options,
        )
        row = ap_of(r, "cat")
        assert row["AP"] == pytest.approx(e["value"], abs=e["tolerance"]), (dets, e)
        exact = ref[str(thr)][METHOD[protocol]]
        assert row["AP"] == pytest.approx(exact, abs=1e-12), (dets, e)
        assert (row["TP"], row["FP"]) == (ref[str(thr)]["TP"], ref[str(thr)]["FP"])


def test_02_relative_detections_agree_at_iou_05():
    """The relative twins differ from the integer-rounded absolute ones by < 1 px."""
    d = case_dir("02_rdm_toyexample_voc_xml")
    ref = expected(d.name)["computed_reference"]["voc_rel_xcycwh"]["0.5"]
    r = evaluate(str(d / "gts_vocpascal_format"), str(d / "dets_classname_rel_xcycwh"),
                 protocol="voc12", normalized=True)  # fmt: skip
    assert ap_of(r, "cat")["AP"] == pytest.approx(ref["all_point"], abs=1e-12)


@pytest.mark.parametrize("thr", [0.5, 0.75])
@pytest.mark.parametrize("protocol", ["voc07", "voc12"])
def test_03_voc_database_100_with_difficult(thr, protocol):
    d = case_dir("03_rdm_voc_database_100")
    doc = expected(d.name)
    want = next(
        e for e in doc["expected"]
        if e["metric"] == "mAP" and e["iou_threshold"] == thr
        and e["interpolation"].startswith(METHOD[protocol])
    )  # fmt: skip
    names = (d / "dets" / "voc.names").read_text().split()
    r = evaluate(str(d / "gts" / "pascalvoc_format"), str(d / "dets" / "abs_xyx2y2"),
                 protocol=protocol, iou_thr=thr, names=names, box_format="xyxy")  # fmt: skip
    assert r.summary["mAP"] == pytest.approx(want["value"], abs=want["tolerance"])
    per_class = doc["computed_reference"][f"voc_per_class_iou{thr}"]
    table = r.per_class.set_index("class")
    key = "AP_11_point" if protocol == "voc07" else "AP_all_point"
    gt_counts = doc["computed_reference"]["gt_counts"]
    for cls, v in per_class.items():
        row = table.loc[cls]
        assert row["AP"] == pytest.approx(v[key], abs=1e-12), cls
        assert row["predictions"] == v["ndet"], cls
        assert row["gt"] == gt_counts[cls]["npos_non_difficult"], cls
        # The reference's TP column also counts hits on difficult objects (its
        # TP can exceed the non-difficult count); the devkit scores those as
        # neither, so ours is at most the reference's.
        assert row["TP"] <= v["TP"] and row["TP"] <= row["gt"], cls


def test_03_xywh_twin_gives_the_same_map():
    d = case_dir("03_rdm_voc_database_100")
    names = (d / "dets" / "voc.names").read_text().split()
    a = evaluate(str(d / "gts" / "pascalvoc_format"), str(d / "dets" / "abs_xyx2y2"),
                 protocol="voc12", names=names, box_format="xyxy")  # fmt: skip
    b = evaluate(str(d / "gts" / "pascalvoc_format"), str(d / "dets" / "abs_xywh"),
                 protocol="voc12", names=names)  # fmt: skip
    assert a.summary["mAP"] == b.summary["mAP"]


@pytest.mark.parametrize("images", [2, 1])
@pytest.mark.parametrize(
    "variant, pixel", [("legacy_plus1_gt", None), ("continuous_gt", "continuous")]
)
def test_11_ignore_boxes_and_iou_exactly_half(images, variant, pixel, tmp_path):
    d = case_dir("11_mmdet_eval_map_ignore_exact_iou")
    ref = expected(d.name)["computed_reference"]["results"][f"{images}_images|{variant}"]
    ann, det = d / "derived_voc" / "Annotations", d / "derived_voc" / "detections"
    if images == 1:  # the one-image variant: img1 alone (copied to a temporary folder)
        (tmp_path / "ann").mkdir()
        (tmp_path / "det").mkdir()
        shutil.copy(ann / "img1.xml", tmp_path / "ann")
        shutil.copy(det / "img1.txt", tmp_path / "det")
        ann, det = tmp_path / "ann", tmp_path / "det"
    for protocol, key in (("voc12", "mAP_all_point"), ("voc07", "mAP_11_point")):
        r = evaluate(
            str(ann), str(det), protocol=protocol, box_format="xyxy", pixel_convention=pixel
        )
        assert r.summary["mAP"] == pytest.approx(ref[key], abs=1e-12), (protocol, variant)
        for cls, v in ref["per_class"].items():
            row = ap_of(r, cls)
            assert (row["TP"], row["FP"]) == (v["TP"], v["FP"]), (protocol, cls)
