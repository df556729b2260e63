"""The HTML report as text: self-contained, escaped, every section from the document."""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from iou_eval.api import evaluate
from iou_eval.errors import UsageError
from iou_eval.reporters.html import CSP, data_uri, render_html

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "coco"
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def result():
    return evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))


@pytest.fixture
def doc(result):
    return copy.deepcopy(result.to_dict())


def test_data_from_the_files_is_escaped_everywhere(doc):
    doc["per_class"][0]["class"] = XSS
    doc["per_class"][0]["note"] = XSS
    doc["per_image"][0]["file_name"] = '"><img src=x onerror=alert(2)>'
    doc["per_image"][0]["image_id"] = XSS
    doc["per_image"][0]["FP"] = 99
    doc["inputs"]["ground_truth"]["path"] = f"/data/{XSS}.json"
    doc["inputs"]["categories_only_in_predictions"] = [XSS]
    doc["warnings"] = [XSS]
    doc["summary"] = {XSS: 0.5, **doc["summary"]}
    page = render_html(doc, None)
    assert page.count("<script") == 1 and "<img" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page


def test_the_one_script_is_allowed_by_its_hash_and_nothing_is_fetched(doc):
    page = render_html(doc, None)
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in CSP and CSP in page
    assert "default-src 'none'" in CSP
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)


def test_summary_inputs_tables_and_plots_come_from_the_document(doc, tmp_path):
    svg = tmp_path / "p.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    page = render_html(doc, {"A plot": str(svg)})
    for key, value in doc["summary"].items():
        assert (
            f'data-metric="{key}"><div class="name">{key}</div><div class="value">{value:.4f}'
            in page
        )
    assert "12 images, 30 boxes (1 crowd), 5 categories" in page
    assert "IoU 0.5, score ≥ 0" in page
    for row in doc["per_class"]:
        assert f'data-v="{row["class"]}">{row["class"]}</td>' in page
    assert base64.b64encode(svg.read_bytes()).decode() in page
    assert "<figcaption>A plot</figcaption>" in page
    assert doc["warnings"][0].split(":")[-1].strip()[:20] in page
    assert "Checks" not in page


def test_worst_images_are_cut_and_ordered_by_errors(doc):
    rows = doc["per_image"] * 3  # 36 images
    for i, r in enumerate(rows):
        rows[i] = {**r, "image_id": i, "FP": i % 7, "FN": 0, "recall": 1.0}
    doc["per_image"] = rows
    page = render_html(doc, None)
    worst = page[page.index('id="worst"') :]
    ids = re.findall(r'<tr><td data-v="(\d+)">', worst)
    assert len(ids) == 20
    assert [int(i) for i in ids[:5]] == [6, 13, 20, 27, 34]
    assert "The 20 images with the most false positives + misses, of 36" in worst


def test_gate_results_are_shown_with_the_verdict(doc):
    doc["checks"] = [
        {"name": "AP=0.6", "kind": "gate", "threshold": 0.6, "value": 0.55, "margin": -0.05,
         "tolerance": None, "interval": None, "passed": False, "reason": "below"},
        {"name": "AP50=0.5", "kind": "gate", "threshold": 0.5, "value": 0.72, "margin": 0.22,
         "tolerance": None, "interval": None, "passed": True, "reason": ""},
    ]  # fmt: skip
    page = render_html(doc, None)
    assert '<span class="badge fail">1 of 2 failed</span>' in page
    assert page.index('id="checks"') < page.index('id="summary"')
    assert ">FAIL</td>" in page and ">pass</td>" in page


def test_undefined_cells_are_empty_and_sort_last(doc):
    doc["per_class"][0]["AP"] = None
    page = render_html(doc, None)
    assert '<td class="num na" data-v=""></td>' in page


def test_bootstrap_intervals_and_other_protocols(result):
    multi = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"), protocol="coco,voc12",
                     bootstrap=5, seed=1)  # fmt: skip
    doc = multi.to_dict()
    page = render_html(doc, None)
    iv = doc["bootstrap"]["intervals"]["AP"]
    assert f'<div class="interval">[{iv[0]:.4f}, {iv[1]:.4f}]</div>' in page
    assert 'id="summary-voc12"' in page and 'data-metric="mAP"' in page


def test_a_batch_document_shows_its_leaderboard():
    doc = {
        "mode": "batch",
        "ground_truth": "gt.json",
        "leaderboard": [{"file": "m<1>.json", "AP": 0.5}, {"file": "m2.json", "AP": None}],
        "errors": [{"file": "bad.json", "message": "bad.json: not JSON"}],
    }
    page = render_html(doc, None)
    assert "m&lt;1&gt;.json" in page and "bad.json: not JSON" in page
    assert 'id="leaderboard"' in page


def test_a_plot_must_be_an_image_file(tmp_path):
    with pytest.raises(UsageError, match="must be PNG, SVG or JPEG"):
        data_uri(tmp_path / "x.pdf")
    with pytest.raises(UsageError, match="cannot read the plot"):
        data_uri(tmp_path / "missing.png")
    png = tmp_path / "a.png"
    png.write_bytes(b"\x89PNG")
    assert data_uri(png) == "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()


def test_score_sweeps_of_a_run_give_the_tables_best_f1(result):
    """The per-class curves plotted are the ones the per-class table's best F1 comes from."""
    sweeps, pooled = result.primary.score_sweeps, result.primary.pooled_sweep
    rows = {r["class"]: r for r in result.to_dict()["per_class"]}
    assert set(sweeps) == {n for n, r in rows.items() if r["gt"]}
    for name, sw in sweeps.items():
        i = int(np.argmax(sw.f1))
        assert sw.f1[i] == rows[name]["best_F1"]
        assert sw.scores[i] == rows[name]["best_F1_score"]
        assert sw.n_gt == rows[name]["gt"]
    assert pooled is not None and pooled.n_gt == sum(r["gt"] for r in rows.values())
    # At the lowest cut every scored prediction is kept: the table's TP and FP at score 0.
    assert pooled.tp[-1] == sum(r["TP"] for r in rows.values())


def test_make_report_writes_the_page_and_the_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from iou_eval.reporters.html_demo import main

    assert main([str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"), "-o", str(tmp_path)]) == 0
    names = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert "pr_overall.png" in names and "ap_per_class.svg" in names and len(names) == 10
    page = (tmp_path / "index.html").read_text()
    assert page.count("data:image/svg+xml;base64,") == 5
