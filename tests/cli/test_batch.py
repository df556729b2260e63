"""Batch scoring and compare: leaderboard, a broken file among many, JSON/CSV/Markdown."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")


@pytest.fixture
def models(tmp_path) -> list[str]:
    """Three model outputs: the sample, one without its best box, one without half."""
    preds = sorted(json.loads(Path(PREDS).read_text()), key=lambda p: -p["score"])
    folder = tmp_path / "models"
    folder.mkdir()
    out = []
    for name, subset in (("a_full", preds), ("b_minus1", preds[1:]), ("c_half", preds[::2])):
        path = folder / f"{name}.json"
        path.write_text(json.dumps(subset))
        out.append(str(path))
    return out


def test_leaderboard_sorted_by_ap(models):
    doc = json.loads(run(GT, *models, "-f", "json").out)
    board = doc["leaderboard"]
    assert [Path(r["file"]).stem for r in board] == ["a_full", "b_minus1", "c_half"]
    aps = [r["AP"] for r in board]
    assert aps == sorted(aps, reverse=True)
    assert set(doc["results"]) == set(models)
    assert doc["results"][models[0]]["summary"]["AP"] == board[0]["AP"]
    assert doc["errors"] == []


def test_folder_of_prediction_files(models):
    doc = json.loads(run(GT, str(Path(models[0]).parent), "-f", "json").out)
    assert len(doc["leaderboard"]) == 3


def test_table_shows_leaderboard_and_per_class(models):
    out = run(GT, *models).out
    assert "Leaderboard" in out and "AP per class" in out
    assert out.index("a_full.json") < out.index("c_half.json")


def test_csv_and_markdown(models):
    df = pd.read_csv(io.StringIO(run(GT, *models, "-f", "csv").out))
    assert list(df.columns[:4]) == ["file", "AP", "AP50", "AP75"] and len(df) == 3
    md = run(GT, *models, "-f", "markdown").out
    assert md.startswith("## iou-eval leaderboard") and "| file |" in md


def test_a_broken_file_is_reported_and_skipped(models, tmp_path):
    broken = tmp_path / "models" / "d_broken.json"
    broken.write_text('[{"image_id": 1, "category_id": 1, "bbox": [1, 2], "score": 0.5}]')
    r = run(GT, *models, str(broken), "-f", "json", expect=1)
    doc = json.loads(r.out)
    assert len(doc["leaderboard"]) == 3
    assert doc["errors"][0]["file"] == str(broken)
    assert "d_broken.json:[0].bbox" in doc["errors"][0]["message"]
    assert "d_broken.json:[0].bbox" in r.err and "skipped" in r.err


def test_gates_apply_to_every_file(models):
    run(GT, *models, "--fail-under", "AP=0.1")
    r = run(GT, *models, "--fail-under", "AP=0.5", "-f", "json", expect=3)
    passed = {Path(row["file"]).stem: row["passed"] for row in json.loads(r.out)["leaderboard"]}
    assert passed == {"a_full": True, "b_minus1": True, "c_half": False}


def test_markdown_names_each_failed_gate_and_its_file(models):
    md = run(GT, *models, "--fail-under", "AP=0.5", "--fail-under", "AP50=0.1", "-f", "markdown",
             expect=3).out  # fmt: skip
    section = md.split("### Failed checks", 1)[1].split("###", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| c\\_half")]  # Markdown-escaped
    assert len(rows) == 1 and "| AP=0.5 | 0.5000 |" in rows[0] and "is below 0.5" in rows[0]
    assert "a\\_full" not in section and "AP50" not in section  # passed checks are not listed
    table = run(GT, *models, "--fail-under", "AP=0.5", expect=3).out
    assert "Failed checks" in table and "c_half.json" in table.split("Failed checks", 1)[1]


def test_voc_leaderboard(models):
    board = json.loads(run(GT, *models, "-p", "voc12", "-f", "json").out)["leaderboard"]
    assert "mAP" in board[0]


def test_compare_two_models(models):
    r = run("compare", GT, models[0], models[2], "--bootstrap", "60", "-f", "json")
    rows = json.loads(r.out)["rows"]
    ap = next(x for x in rows if x["scope"] == "summary" and x["name"] == "AP")
    assert ap["delta"] == pytest.approx(ap["b"] - ap["a"]) and ap["delta"] < 0
    assert ap["lo"] <= ap["delta"] <= ap["hi"]
    classes = [x for x in rows if x["scope"] == "class" and x["delta"] is not None]
    sizes = [abs(x["delta"]) for x in classes]
    assert sizes == sorted(sizes, reverse=True)
    out = run("compare", GT, models[0], models[2], "--bootstrap", "60").out
    assert "largest changes first" in out
