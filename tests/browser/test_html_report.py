"""The HTML report in a real headless Chromium: offline, no console errors, data as text.

Skipped when no Chromium is installed (``apt-get install chromium``; the
CI script installs it).  Set ``IOU_EVAL_SCREENSHOTS=DIR`` to keep the
screenshots for a look.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from iou_eval.api import evaluate
from iou_eval.reporters.html import render_html, write_text

from .cdp import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "coco"
CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

XSS_CLASS = "<script>alert(1)</script>"
XSS_FILE = '"><img src=x onerror=alert(2)>.jpg'


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert CHROMIUM is not None
    b = Browser(CHROMIUM, tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The sample run's page with its plots, and its document."""
    pytest.importorskip("matplotlib")
    from iou_eval.reporters.html_demo import write_report

    result = evaluate(str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json"))
    out = tmp_path_factory.mktemp("report")
    return write_report(result, out), result.to_dict()


def load(browser: Browser, path: Path) -> str:
    """Open ``path`` from a file:// URL in a fresh offline tab; returns the session."""
    session = browser.open_page()
    browser.events.clear()
    browser.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
    browser.wait_event("Page.loadEventFired")
    return session


def screenshot(browser: Browser, session: str, path: Path) -> bytes:
    """A full-page PNG of the tab, kept in ``$IOU_EVAL_SCREENSHOTS`` when set."""
    shot = browser.call(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session
    )
    data = base64.b64decode(shot["data"])
    path.write_bytes(data)
    keep = os.environ.get("IOU_EVAL_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return data


def test_page_loads_offline_without_console_errors(browser, report, tmp_path):
    page, _ = report
    session = load(browser, page)
    assert browser.problems() == []
    # The page itself is the only request: images are data: URIs, nothing else is fetched.
    assert [u for u in browser.requests() if not u.startswith("data:")] == [page.resolve().as_uri()]
    n_images = browser.evaluate(session, "document.images.length")
    loaded = browser.evaluate(
        session, "Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length"
    )
    assert n_images >= 4 and loaded == n_images
    png = screenshot(browser, session, tmp_path / "report.png")
    from PIL import Image

    with Image.open(tmp_path / "report.png") as im:
        # The viewport is 1280 wide, less a scrollbar.
        assert im.format == "PNG" and 1200 <= im.width <= 1280 and im.height > 2000
        assert len(im.convert("L").getcolors(1 << 16) or []) > 50  # not blank
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_numbers_are_in_the_rendered_dom(browser, report):
    page, doc = report
    session = load(browser, page)
    shown = browser.evaluate(
        session,
        "Object.fromEntries(Array.from(document.querySelectorAll('#summary [data-metric]'))"
        ".map(c => [c.dataset.metric, c.querySelector('.value').textContent]))",
    )
    assert shown == {k: f"{v:.4f}" for k, v in doc["summary"].items()}
    text = browser.evaluate(session, "document.querySelector('#inputs').innerText")
    assert "sample_data/coco/gt.json" in text and "[coco]" in text
    assert "12 images, 30 boxes (1 crowd), 5 categories" in text


def _column(browser, session, table: str, col: int) -> list[str]:
    return browser.evaluate(
        session,
        f"Array.from(document.querySelectorAll('{table} tbody tr'))"
        f".map(r => r.cells[{col}].textContent)",
    )


def test_clicking_a_header_sorts_the_per_class_table(browser, report):
    page, doc = report
    session = load(browser, page)
    headers = browser.evaluate(
        session, "Array.from(document.querySelectorAll('#per-class th')).map(h => h.textContent)"
    )
    ap = headers.index("AP")
    click = f"document.querySelectorAll('#per-class th button')[{ap}].click()"
    by_ap = sorted(doc["per_class"], key=lambda r: r["AP"])
    browser.evaluate(session, click)
    assert _column(browser, session, "#per-class", 0) == [r["class"] for r in by_ap]
    browser.evaluate(session, click)
    assert _column(browser, session, "#per-class", 0) == [r["class"] for r in by_ap[::-1]]
    sort = browser.evaluate(session, f"document.querySelectorAll('#per-class th')[{ap}].ariaSort")
    assert sort == "descending"
    assert browser.problems() == []


def test_names_from_the_files_show_as_text_and_never_run(browser, report, tmp_path):
    _, doc = report
    doc = copy.deepcopy(doc)
    doc["per_class"][0]["class"] = XSS_CLASS
    doc["per_image"][0]["file_name"] = XSS_FILE
    doc["per_image"][0]["FP"] = 99  # first among the worst images
    doc["warnings"].append(f"category {XSS_CLASS} is odd")
    page = tmp_path / "xss.html"
    write_text(page, render_html(doc, None))
    session = load(browser, page)
    assert browser.evaluate(session, "document.scripts.length") == 1
    assert browser.evaluate(session, "document.images.length") == 0
    cells = _column(browser, session, "#per-class", 0)
    assert XSS_CLASS in cells
    assert (
        browser.evaluate(
            session, "document.querySelector('#worst tbody td:nth-child(2)').textContent"
        )
        == XSS_FILE
    )
    assert XSS_CLASS in browser.evaluate(session, "document.querySelector('#warnings').textContent")
    assert not [e for e in browser.events if e.get("method") == "Page.javascriptDialogOpening"]
    assert browser.problems() == []
    screenshot(browser, session, tmp_path / "xss.png")


# ----------------------------------------------------- the page of the command line


@pytest.fixture(scope="module")
def cli_page(tmp_path_factory):
    """``iou-eval GT PREDS -f html -o FILE --images DIR --worst 4``, and the run's JSON document."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("PIL")
    from tests.cli.helpers import run

    out = tmp_path_factory.mktemp("cli") / "report.html"
    gt, preds = str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json")
    run(gt, preds, "-f", "html", "-o", out, "--images", ROOT / "sample_data" / "images",
        "--worst", "4", "-q")  # fmt: skip
    return out, json.loads(run(gt, preds, "-f", "json").out)


def test_the_command_lines_page_shows_the_summary_and_the_drawings(browser, cli_page, tmp_path):
    page, doc = cli_page
    session = load(browser, page)
    assert browser.problems() == []
    assert [u for u in browser.requests() if not u.startswith("data:")] == [page.resolve().as_uri()]
    cards = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('#summary [data-metric]')).map(c => {"
        " const r = c.getBoundingClientRect(), s = getComputedStyle(c);"
        " return [c.dataset.metric, c.querySelector('.value').innerText,"
        " r.width > 0 && r.height > 0 && s.visibility === 'visible' && r.top < innerHeight]; })",
    )
    assert cards == [[k, f"{v:.4f}", True] for k, v in doc["summary"].items()]
    drawings = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('#drawings figure')).map(f => {"
        " const i = f.querySelector('img');"
        " return [f.querySelector('figcaption').innerText.split(' ')[0],"
        " i.complete && i.naturalWidth > 0]; })",
    )
    assert drawings == [[n, True] for n in
                        ("street_10.jpg", "street_07.jpg", "street_09.jpg", "street_03.jpg")]  # fmt: skip
    plots = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('#plots img')).filter(i => i.naturalWidth > 0).length",
    )
    assert plots == 5
    worst = _column(browser, session, "#worst", 1)
    assert worst == ["street_10.jpg", "street_07.jpg", "street_09.jpg", "street_03.jpg"]
    screenshot(browser, session, tmp_path / "cli-report.png")


def test_hostile_class_names_through_the_command_line_stay_text(browser, tmp_path, monkeypatch):
    from tests.cli.helpers import hide, run

    hide(monkeypatch, "matplotlib")  # the page without plots: names only in its own text

    gt = json.loads((SAMPLE / "gt.json").read_text())
    gt["categories"][3]["name"] = XSS_CLASS
    gt["images"][9]["file_name"] = XSS_FILE
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    page = tmp_path / "hostile.html"
    run(g, SAMPLE / "preds.json", "-f", "html", "-o", page, "-q")
    session = load(browser, page)
    assert browser.evaluate(session, "document.scripts.length") == 1
    assert XSS_CLASS in _column(browser, session, "#per-class", 0)
    assert XSS_FILE in _column(browser, session, "#worst", 1)
    assert not [e for e in browser.events if e.get("method") == "Page.javascriptDialogOpening"]
    assert browser.problems() == []


@pytest.fixture(scope="module")
def analysis_page(tmp_path_factory):
    """``-f html`` with ``--tide --confusion --calibration --slices``, and the run's JSON document."""
    from tests.cli.helpers import run

    folder = tmp_path_factory.mktemp("analysis")
    slices = folder / "slices.csv"
    slices.write_text("image_id,slice\n1,day\n2,day\n3,night\n4,night\n5,day\n")
    out = folder / "report.html"
    gt, preds = str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json")
    flags = ("--tide", "--confusion", "--calibration", "--slices", str(slices))
    run(gt, preds, *flags, "-f", "html", "-o", out, "-q")
    return out, json.loads(run(gt, preds, *flags, "-f", "json").out)


def _rows(browser, session, selector: str) -> list[list[str]]:
    return browser.evaluate(
        session,
        f"Array.from(document.querySelectorAll('{selector} tbody tr')).filter(r => {{"
        " const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0; })"
        ".map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
    )


def test_the_analyses_show_as_tables_with_the_documents_numbers(browser, analysis_page, tmp_path):
    """TIDE, confusion, calibration and slices: each a visible table holding the JSON's numbers."""
    page, doc = analysis_page
    session = load(browser, page)
    assert browser.problems() == []
    titles = browser.evaluate(
        session, "Array.from(document.querySelectorAll('h2')).map(h => h.innerText)"
    )
    for title in ("Slices", "Why it misses (TIDE)", "Confusion matrix", "Calibration"):
        assert title in titles
    slices = _rows(browser, session, "#slices")
    assert [r[0] for r in slices] == ["(all images)", "day", "night"]
    assert slices[1][2] == f"{doc['slices']['day']['summary']['AP']:.4f}"
    tide = {r[0]: r[1:] for r in _rows(browser, session, "#tide")}
    assert tide["missed"] == [
        f"{doc['tide']['dap']['miss']:.4f}",
        str(doc["tide"]["counts"]["miss"]),
    ]
    assert tide["all false negatives"][0] == f"{doc['tide']['fn_dap']:.4f}"
    cm = doc["confusion_matrix"]
    shown = [r[1:] for r in _rows(browser, session, "#confusion")]
    assert shown == [[str(v) for v in row] for row in cm["matrix"]]
    cal = _rows(browser, session, "#calibration table:first-of-type")
    assert [r[1] for r in cal] == [str(b["count"]) for b in doc["calibration"]["bins"]]
    assert cal[-1][0] == "[0.9, 1]"  # the last bin holds a score of exactly 1
    note = browser.evaluate(session, "document.querySelector('#calibration .note').innerText")
    c = doc["calibration"]
    assert f"ECE {c['ece']:.4f}, MCE {c['mce']:.4f}" in note
    per_class = {r[0]: r[1:] for r in _rows(browser, session, "#calibration table:last-of-type")}
    for name, v in c["per_class"].items():
        assert per_class[name][:2] == [f"{v['ece']:.4f}", f"{v['mce']:.4f}"], name
    screenshot(browser, session, tmp_path / "analysis-report.png")


def test_custom_area_ranges_show_as_cards_with_their_bounds(browser, tmp_path):
    """``--area-ranges nano=0:700,micro=700:10000,large=10000:inf``: a visible card per range."""
    from tests.cli.helpers import run

    page = tmp_path / "ranges.html"
    gt, preds = str(SAMPLE / "gt.json"), str(SAMPLE / "preds.json")
    ranges = ("--area-ranges", "nano=0:700,micro=700:10000,large=10000:inf")
    run(gt, preds, *ranges, "-f", "html", "-o", page, "-q")
    summary = json.loads(run(gt, preds, *ranges, "-f", "json", "-q").out)["summary"]
    session = load(browser, page)
    assert browser.problems() == []
    cards = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('#summary .card')).map(c => {"
        " const r = c.getBoundingClientRect();"
        " return [c.querySelector('.name').innerText, c.querySelector('.value').innerText,"
        " c.querySelector('.label').innerText, r.width > 0 && r.height > 0 && r.top < innerHeight]; })",
    )
    shown = {name: (value, label, visible) for name, value, label, visible in cards}
    assert list(shown) == list(summary)
    for key, bounds in (("nano", "0–700"), ("micro", "700–10000")):
        for head in ("AP", "AR"):
            value, label, visible = shown[f"{head}[{key}]"]
            assert value == f"{summary[f'{head}[{key}]']:.4f}" and visible
            assert label == f"area {bounds} px²"
    assert shown["APl"][:2] == (f"{summary['APl']:.4f}", "large")
    assert not {"APs", "APm", "ARs", "ARm"} & set(shown)
    screenshot(browser, session, tmp_path / "area-ranges.png")
