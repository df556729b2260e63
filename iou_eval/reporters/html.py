"""A self-contained HTML report from the JSON document of a run.

:func:`render_html` takes the dict of :meth:`EvaluationResult.to_dict` (or
a batch document) and the plot files to embed, and returns one page that
needs nothing at view time: CSS inline, images as ``data:`` URIs, one small
script to sort tables by a click on a header.  A Content-Security-Policy
forbids every fetch and every script but that one (by its hash), so the
page stays offline, and text from the input files (class names, file names,
ids) is escaped everywhere: it can only ever show as text.
"""

from __future__ import annotations

import base64
import hashlib
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from iou_eval.data.reconcile import unpredicted_text
from iou_eval.errors import UsageError
from iou_eval.reporters.draw import worst_images
from iou_eval.reporters.files import write_whole
from iou_eval.version import __version__

# Rows of the worst-images table.
WORST_IMAGES = 20

SUMMARY_LABELS = {
    "AP": "IoU .50:.95 · all · 100", "AP50": "IoU .50 · all · 100", "AP75": "IoU .75 · all · 100",
    "APs": "small", "APm": "medium", "APl": "large", "AR1": "maxDets 1", "AR10": "maxDets 10",
    "AR100": "maxDets 100", "ARs": "small", "ARm": "medium", "ARl": "large", "mAP": "mean over classes",
    "APr": "rare", "APc": "common", "APf": "frequent", "AR300": "300 per image",
}  # fmt: skip
# pycocotools' keypoint summary: OKS thresholds, every statistic at maxDets 20.
KEYPOINT_LABELS = {
    "AP": "OKS .50:.95 · all · 20", "AP50": "OKS .50 · all · 20", "AP75": "OKS .75 · all · 20",
    "APm": "medium · 20", "APl": "large · 20", "AR": "OKS .50:.95 · all · 20",
    "AR50": "OKS .50 · all · 20", "AR75": "OKS .75 · all · 20", "ARm": "medium · 20",
    "ARl": "large · 20",
}  # fmt: skip
CLASS_COLUMNS = {
    "class": "class", "AP": "AP", "AP50": "AP50", "AP75": "AP75", "AR100": "AR100",
    "AR300": "AR300", "AR": "AR", "gt": "gt",
    "predictions": "pred", "TP": "TP", "FP": "FP", "FN": "FN", "precision": "precision",
    "recall": "recall", "F1": "F1", "best_F1": "best F1", "best_F1_score": "@ score", "note": "note",
}  # fmt: skip
IMAGE_COLUMNS = {
    "image_id": "image", "file_name": "file", "gt": "gt", "predictions": "pred", "TP": "TP",
    "FP": "FP", "FN": "FN", "ignored": "ignored", "precision": "precision", "recall": "recall",
    "F1": "F1", "mean_IoU": "mean IoU", "mean_OKS": "mean OKS",
}  # fmt: skip
TEXT_KEYS = {"class", "note", "image_id", "file_name", "file", "category_id", "name", "reason",
             "slice", "error", "scores", "ground truth"}  # fmt: skip
INT_KEYS = {"gt", "predictions", "TP", "FP", "FN", "ignored", "images", "boxes", "count"}

SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th button").forEach(function (button, col) {
    button.addEventListener("click", function () {
      var th = button.parentNode;
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) { return row.cells[col].getAttribute("data-v"); };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var nx = Number(x), ny = Number(y), d;
        if (!isNaN(nx) && !isNaN(ny)) { d = nx - ny; } else { d = x.localeCompare(y); }
        return up ? d : -d;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
""".strip()


def _script_hash() -> str:
    # The hash of the script element's exact text, newlines included.
    digest = hashlib.sha256(f"\n{SORT_SCRIPT}\n".encode()).digest()
    return "sha256-" + base64.b64encode(digest).decode()


# No fetch of any kind; images only from data: URIs; the one script by hash.
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    f"script-src '{_script_hash()}'; base-uri 'none'; form-action 'none'"
)

CSS = """
:root { --ink: #1d2430; --muted: #5b6575; --line: #dde2ea; --bg: #f5f7fa; --card: #fff;
  --accent: #0b62b5; --good: #137a3f; --bad: #b3261e; --warn: #8a5a00; --bar: #d6e6f7; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { background: #14233a; color: #fff; padding: 22px 0 18px; }
header h1 { margin: 0; font-size: 24px; font-weight: 650; letter-spacing: .2px; }
header p { margin: 4px 0 0; color: #c9d4e5; font-size: 14px; }
main, .wrap { max-width: 1240px; margin: 0 auto; padding: 0 28px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  margin: 22px 0; padding: 18px 22px 20px; }
h2 { font-size: 18px; margin: 0 0 12px; }
h3 { font-size: 15px; margin: 16px 0 8px; color: var(--muted); }
.muted, .note { color: var(--muted); font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: #fbfcfe; }
.card .name { font-size: 13px; font-weight: 600; color: var(--muted); }
.card .value { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .label, .card .interval { font-size: 12px; color: var(--muted); }
.card.headline { background: #eef5fd; border-color: #b8d3f0; }
.card.headline .value { color: var(--accent); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 0; }
dl.facts dt { color: var(--muted); font-size: 14px; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: #eef1f5; padding: 1px 5px; border-radius: 4px; }
.scroll { overflow: auto; max-height: 70vh; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { padding: 6px 10px; text-align: left; white-space: nowrap; border-bottom: 1px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; min-width: 16em; }
thead th { position: sticky; top: 0; background: #eef1f5; z-index: 1; font-weight: 600; }
th button { all: unset; cursor: pointer; display: inline-flex; gap: 4px; align-items: center; }
th button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
th button::after { content: "↕"; color: #9aa4b2; font-size: 12px; }
th[aria-sort=ascending] button::after { content: "▲"; color: var(--accent); }
th[aria-sort=descending] button::after { content: "▼"; color: var(--accent); }
tbody tr:nth-child(even) { background: #fafbfd; }
tbody tr:hover { background: #eef5fd; }
td.na::after { content: "—"; color: #a0a8b4; }
td.bar { background-image: linear-gradient(90deg, var(--bar) var(--v), transparent var(--v)); }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-weight: 650; font-size: 13px; }
.pass { background: #e3f4ea; color: var(--good); }
.fail { background: #fde8e6; color: var(--bad); }
ul.warnings { margin: 0; padding-left: 20px; }
ul.warnings li { color: var(--warn); margin: 4px 0; overflow-wrap: anywhere; }
figure { margin: 0 0 22px; }
figure img { display: block; max-width: 100%; height: auto; margin: 0 auto;
  border: 1px solid var(--line); border-radius: 6px; background: #fff; }
figcaption { font-weight: 600; margin: 0 0 6px; }
.drawings { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 8px 22px; }
figure.drawing figcaption { font-weight: 500; font-size: 14px; overflow-wrap: anywhere; }
footer { color: var(--muted); font-size: 13px; padding: 4px 0 28px; }
""".strip()


# ---------------------------------------------------------------------------
# Cells


def esc(value: Any) -> str:
    """Text from the data, safe in element content and in quoted attributes."""
    return escape("" if value is None else str(value), quote=True)


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _g(value: Any) -> str:
    return "?" if _undefined(value) else f"{float(value):g}"


def fmt(value: Any, key: str = "") -> str:
    """A number as the text reports show it: 4 decimals, counts as integers, undefined empty."""
    if _undefined(value):
        return ""
    if key in TEXT_KEYS or isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in INT_KEYS or isinstance(value, int):
        return str(int(value))
    return f"{float(value):.4f}"


def td(value: Any, key: str = "", bar: bool = False) -> str:
    """A table cell with its sort key; numbers right-aligned, undefined shown as a dash."""
    text = fmt(value, key)
    numeric = key not in TEXT_KEYS and not isinstance(value, str)
    sort_key = "" if _undefined(value) else (repr(value) if numeric else str(value))
    classes = ["num"] if numeric else (["wrap"] if key in ("note", "reason") else [])
    style = ""
    if bar and numeric and text and 0 <= float(value) <= 1:
        classes.append("bar")
        style = f' style="--v:{100 * float(value):.1f}%"'
    if not text:
        classes.append("na")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f'<td{cls} data-v="{esc(sort_key)}"{style}>{esc(text)}</td>'


def table(rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str], *,
          sortable: bool = True, bars: Iterable[str] = ()) -> str:  # fmt: skip
    """An HTML table of ``rows`` with the ``columns`` present in them (key -> header)."""
    keys = [k for k in columns if any(k in r for r in rows)]
    if "note" in keys and not any(r.get("note") for r in rows):
        keys.remove("note")
    if "file_name" in keys and all(r.get("file_name") is None for r in rows):
        keys.remove("file_name")
    bars = set(bars)
    head = "".join(
        f'<th class="{"" if k in TEXT_KEYS else "num"}" scope="col">'
        + (f'<button type="button">{esc(columns[k])}</button>' if sortable else esc(columns[k]))
        + "</th>"
        for k in keys
    )
    body = "\n".join(
        "<tr>" + "".join(td(r.get(k), k, k in bars) for k in keys) + "</tr>" for r in rows
    )
    cls = ' class="sortable"' if sortable else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


# ---------------------------------------------------------------------------
# Sections


def section(title: str, body: str, ident: str) -> str:
    return f'<section id="{ident}">\n<h2>{esc(title)}</h2>\n{body}\n</section>'


def summary_cards(
    summary: Mapping[str, Any],
    bootstrap: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] = SUMMARY_LABELS,
) -> str:
    """One card per summary metric (headline first); bootstrap intervals under the value."""
    intervals = (bootstrap or {}).get("intervals") or {}
    cards = []
    for i, (key, value) in enumerate(summary.items()):
        iv = intervals.get(key)
        interval = (
            f'<div class="interval">[{fmt(iv[0])}, {fmt(iv[1])}]</div>' if iv else ""
        )  # fmt: skip
        cls = "card headline" if i == 0 else "card"
        cards.append(
            f'<div class="{cls}" data-metric="{esc(key)}"><div class="name">{esc(key)}</div>'
            f'<div class="value">{esc(fmt(value) or "n/a")}</div>'
            f'<div class="label">{esc(labels.get(str(key), ""))}</div>{interval}</div>'
        )
    return f'<div class="cards">{"".join(cards)}</div>'


def _protocol_text(block: Mapping[str, Any]) -> str:
    """The protocol's line as the run described it (the JSON block's ``description``)."""
    return str(block.get("description") or block.get("protocol", ""))


def facts(doc: Mapping[str, Any]) -> str:
    """Files, formats, counts and the protocol's parameters as a definition list."""
    inputs = doc.get("inputs") or {}
    g, p = inputs.get("ground_truth") or {}, inputs.get("predictions") or {}
    params = doc.get("params") or {}
    items = [
        ("ground truth", f"<code>{esc(g.get('path'))}</code> [{esc(g.get('format'))}]: "
         f"{esc(g.get('images'))} images, {esc(g.get('boxes'))} boxes ({esc(g.get('crowd'))} "
         f"{esc(g.get('crowd_word', 'crowd'))}), {esc(g.get('categories'))} categories"
         + (f"; {esc(g['shapes'])}" if g.get("shapes") else "")),
        ("predictions", f"<code>{esc(p.get('path'))}</code> [{esc(p.get('format'))}]: "
         f"{esc(p.get('boxes'))} boxes" + (f"; {esc(p['shapes'])}" if p.get("shapes") else "")
         + (f", {esc(p['unknown_image_boxes'])} on unknown images (not scored)"
            if p.get("unknown_image_boxes") else "")
         + ("; " + esc(unpredicted_text(p["images_without_predictions"],
                                        p.get("images_with_objects", 0)))
            if p.get("images_without_predictions") else "")),
        ("matched", f"images by {esc(inputs.get('image_match'))}, categories by "
         f"{esc(inputs.get('category_match'))}"),
        ("protocol", esc(_protocol_text(doc))),
        ("operating point", f"{'OKS' if params.get('iou_type') == 'keypoints' else 'IoU'} "
         f"{esc(_g(params.get('iou_thr')))}, score ≥ "
         f"{esc(_g(params.get('score_thr')))} (the per-class counts and the per-image table)"),
    ]  # fmt: skip
    for key, what in (("categories_only_in_predictions", "only in predictions"),
                      ("categories_without_predictions", "never predicted")):  # fmt: skip
        names = inputs.get(key) or []
        if names:
            items.append((what, esc(", ".join(str(n) for n in names))))
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items)
    return f'<dl class="facts">{rows}</dl>'


def checks_block(doc: Mapping[str, Any]) -> str:
    checks = doc.get("checks") or []
    failed = sum(not c.get("passed") for c in checks)
    verdict = (
        f'<span class="badge fail">{failed} of {len(checks)} failed</span>'
        if failed
        else f'<span class="badge pass">all {len(checks)} passed</span>'
    )
    rows = [{**c, "verdict": "pass" if c.get("passed") else "FAIL"} for c in checks]
    columns = {"name": "check", "kind": "kind", "threshold": "threshold / baseline",
               "value": "value", "margin": "margin", "verdict": "verdict", "reason": "reason"}  # fmt: skip
    return f"<p>{verdict}</p>" + table(rows, columns, sortable=False)


def warnings_block(warnings: Sequence[Any]) -> str:
    return '<ul class="warnings">' + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>"


def worst_block(per_image: Sequence[Mapping[str, Any]], n: int = WORST_IMAGES,
                ordered: str | None = None, total: int | None = None) -> str:  # fmt: skip
    """The ``n`` images with the most false positives + misses (ties: lower recall first).

    ``ordered``: the rows are already in the report's order (``--sort``
    named so) and cut; they are shown as they come, of ``total`` images.
    """
    if ordered is None:
        fp = [int(r.get("FP") or 0) for r in per_image]
        fn = [int(r.get("FN") or 0) for r in per_image]
        recall = [r.get("recall") for r in per_image]
        rows = [per_image[i] for i in worst_images(fp, fn, n, recall=recall)]
        how = "with the most false positives + misses"
    else:
        rows = list(per_image)
        how = ORDER_NOTES.get(ordered, f"first by {ordered} (ascending)")
    of = len(per_image) if total is None else total
    tie = "; ties: lower recall first" if how.endswith("misses") else ""
    note = (
        f'<p class="note">The {len(rows)} images {esc(how)}, of {of}{tie}. '
        "Click a header to sort.</p>"
    )
    return note + '<div class="scroll">' + table(rows, IMAGE_COLUMNS, bars={"recall"}) + "</div>"


ORDER_NOTES = {"errors": "with the most false positives + misses", "image": "first by image id"}


def drawings_block(drawings: Mapping[str, str], note: str = "") -> str:
    """Figures of drawn images (caption -> JPEG/PNG file), with a note above them."""
    head = f'<p class="note">{esc(note)}</p>' if note else ""
    figures = [
        f'<figure class="drawing"><figcaption>{esc(caption)}</figcaption>'
        f'<img alt="{esc(caption)}" src="{data_uri(path)}"></figure>'
        for caption, path in drawings.items()
    ]
    return head + '<div class="drawings">' + "\n".join(figures) + "</div>"


def plots_block(plots: Mapping[str, str]) -> str:
    figures = []
    for title, path in plots.items():
        figures.append(
            f'<figure><figcaption>{esc(title)}</figcaption>'
            f'<img alt="{esc(title)}" src="{data_uri(path)}"></figure>'
        )  # fmt: skip
    return "\n".join(figures)


MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def data_uri(path: str | os.PathLike) -> str:
    """A file as a ``data:`` URI (PNG, SVG or JPEG): the page carries its pictures."""
    p = Path(path)
    mime = MIME.get(p.suffix.lower())
    if mime is None:
        raise UsageError(
            f"{p}: a plot must be PNG, SVG or JPEG, got {p.suffix or 'no extension'!r}"
        )
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"{p}: cannot read the plot ({exc.strerror})") from exc
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


# ---------------------------------------------------------------------------
# The page


def page(title: str, subtitle: str, sections: Sequence[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # An empty icon: the browser does not go looking for favicon.ico.
        '<link rel="icon" href="data:,">',
        f"<title>{esc(title)}</title>",
        f"<style>\n{CSS}\n</style></head><body>",
        f'<header><div class="wrap"><h1>{esc(title)}</h1><p>{subtitle}</p></div></header>',
        "<main>", *sections, "</main>",
        f'<footer><div class="wrap">iou-eval {esc(__version__)} · one file, no network needed '
        "to view it</div></footer>",
        f"<script>\n{SORT_SCRIPT}\n</script>",
        "</body></html>",
        "",
    ])  # fmt: skip


def protocol_sections(block: Mapping[str, Any], first: bool) -> list[str]:
    """Summary and tables of one protocol's block of the document."""
    name = str(block.get("protocol", ""))
    suffix = "" if first else f" ({name})"
    ident = "" if first else f"-{name}"
    per_class = block.get("per_class") or []
    keypoints = (block.get("params") or {}).get("iou_type") == "keypoints"
    labels = {**(KEYPOINT_LABELS if keypoints else SUMMARY_LABELS), **_range_labels(block)}
    out = [section("Summary" + suffix, summary_cards(block.get("summary") or {},
                                                      block.get("bootstrap"), labels), "summary" + ident)]  # fmt: skip
    if per_class:
        note = '<p class="note">Click a header to sort. Empty cells are undefined (see note).</p>'
        body = note + '<div class="scroll">' + table(
            per_class, CLASS_COLUMNS, bars={"AP", "AP50", "AP75", "AR100", "AR300", "AR", "F1"}
        ) + "</div>"  # fmt: skip
        out.append(section("Per class" + suffix, body, "per-class" + ident))
    return out


def _range_labels(block: Mapping[str, Any]) -> dict[str, str]:
    """The card label of each custom area range's ``AP[label]`` and ``AR[label]``: its bounds."""
    ranges = (block.get("params") or {}).get("area_ranges") or {}
    out = {}
    for label, bounds in ranges.items():
        key = f"[{label}]"
        if f"AP{key}" in (block.get("summary") or {}):
            lo, hi = bounds
            text = f"area {_g(lo)}–{'max' if hi >= 1e10 else _g(hi)} px²"
            out[f"AP{key}"] = out[f"AR{key}"] = text
    return out


# The analyses' blocks of the document, each a section of the page.
TIDE_NAMES = {"cls": "classification", "loc": "localisation", "both": "both cls and loc",
              "dupe": "duplicate", "bkg": "background", "miss": "missed"}  # fmt: skip
SLICE_COLUMNS = {"slice": "slice", "images": "images", "AP": "AP", "AP50": "AP50", "AP75": "AP75",
                 "AR100": "AR100", "mAP": "mAP"}  # fmt: skip


def slices_block(slices: Mapping[str, Any], summary: Mapping[str, Any], images: Any) -> str:
    """One row per slice beside the whole set (``images`` of it), with the headline metrics."""
    rows = [{"slice": "(all images)", "images": images, **summary}]
    rows += [{"slice": name, "images": s.get("images"), **(s.get("summary") or {})}
             for name, s in slices.items()]  # fmt: skip
    return (
        '<div class="scroll">'
        + table(rows, SLICE_COLUMNS, bars=set(SLICE_COLUMNS) - {"slice", "images"})
        + "</div>"
    )


def tide_block(tide: Mapping[str, Any]) -> str:
    """TIDE's dAP and count of each error type, then the FP / FN dAPs (AP points, 0-100)."""
    dap, counts = tide.get("dap") or {}, tide.get("counts") or {}
    rows = [{"error": TIDE_NAMES.get(k, k), "dAP": dap.get(k), "count": counts.get(k)} for k in dap]
    rows += [{"error": "all false positives", "dAP": tide.get("fp_dap")},
             {"error": "all false negatives", "dAP": tide.get("fn_dap")}]  # fmt: skip
    note = (f'<p class="note">{esc(tide.get("unit"))}: base AP {fmt(tide.get("ap")) or "n/a"}; each '
            "dAP is the AP gained by fixing that error alone; an empty cell is undefined "
            "(no class left to average).</p>")  # fmt: skip
    return note + table(rows, {"error": "error", "dAP": "dAP", "count": "count"}, sortable=False)


def confusion_block(confusion: Mapping[str, Any]) -> str:
    """The matrix: rows ground truth, columns prediction, background last."""
    labels = list(confusion.get("labels") or [])
    columns = {
        "ground truth": "ground truth \\ predicted",
        **{f"p{j}": n for j, n in enumerate(labels)},
    }
    rows = [{"ground truth": labels[i], **{f"p{j}": int(v) for j, v in enumerate(row)}}
            for i, row in enumerate(confusion.get("matrix") or [])]  # fmt: skip
    note = (f'<p class="note">IoU ≥ {_g(confusion.get("iou_threshold"))}, scores ≥ '
            f'{_g(confusion.get("score_threshold"))}; the whole matrix is in the JSON.</p>')  # fmt: skip
    return note + '<div class="scroll">' + table(rows, columns, sortable=False) + "</div>"


def calibration_block(cal: Mapping[str, Any]) -> str:
    """Expected and maximum calibration errors, the reliability bins and each class's ECE and MCE."""
    edges = cal.get("bins") or []
    # Bins are [lower, upper) but for the last, which holds a score of exactly its upper edge.
    bins = [{"scores": f"[{_g(b.get('lower'))}, {_g(b.get('upper'))}{']' if i == len(edges) - 1 else ')'}",
             "count": b.get("count"), "mean score": b.get("mean_score"), "accuracy": b.get("accuracy")}
            for i, b in enumerate(edges)]  # fmt: skip
    per_class = [{"class": k, "ECE": v.get("ece"), "MCE": v.get("mce"), "count": v.get("count")}
                 for k, v in (cal.get("per_class") or {}).items()]  # fmt: skip
    note = (f'<p class="note">ECE {fmt(cal.get("ece")) or "n/a"}, MCE '
            f'{fmt(cal.get("mce")) or "n/a"} (matching at IoU {_g(cal.get("iou_threshold"))}; '
            "fractions, 0 is perfectly calibrated; MCE is the largest gap of a bin).</p>")  # fmt: skip
    body = note + table(bins, {"scores": "scores", "count": "count", "mean score": "mean score",
                               "accuracy": "accuracy"}, sortable=False)  # fmt: skip
    if per_class:
        body += "<h3>Per class</h3>" + table(
            per_class, {"class": "class", "ECE": "ECE", "MCE": "MCE", "count": "count"}
        )
    return body


def analysis_sections(document: Mapping[str, Any]) -> list[str]:
    """Sections for the slices and analyses the run asked for (none when it asked for none)."""
    out = []
    if document.get("slices"):
        images = ((document.get("inputs") or {}).get("ground_truth") or {}).get("images")
        body = slices_block(document["slices"], document.get("summary") or {}, images)
        out.append(section("Slices", body, "slices"))
    if document.get("tide"):
        out.append(section("Why it misses (TIDE)", tide_block(document["tide"]), "tide"))
    if document.get("confusion_matrix"):
        out.append(section("Confusion matrix", confusion_block(document["confusion_matrix"]),
                           "confusion"))  # fmt: skip
    if document.get("calibration"):
        out.append(section("Calibration", calibration_block(document["calibration"]),
                           "calibration"))  # fmt: skip
    return out


def render_html(
    document: Mapping[str, Any],
    plots: Mapping[str, str] | None = None,
    *,
    drawings: Mapping[str, str] | None = None,
    notes: Mapping[str, str] | None = None,
    ordered: str | None = None,
) -> str:
    """One self-contained HTML page for the JSON document of a run (or of a batch).

    Args:
        document: the dict of :meth:`~iou_eval.results.EvaluationResult.to_dict`
            (schema in docs/reports.md), or a batch document (``"mode": "batch"``).
        plots: title -> path of a PNG/SVG/JPEG file, embedded in order.
        drawings: caption -> path of a drawn image (JPEG/PNG), embedded in order.
        notes: ``{"plots": ..., "drawings": ...}`` a line shown in that
            section (why there are no plots, what the drawings show).
        ordered: the document's per-image rows are already the report's
            (``--sort`` of that name, cut by ``--worst``): shown as they come.

    Returns:
        The page as text; nothing is fetched when it is viewed.
    """
    notes = notes or {}
    if document.get("mode") == "batch":
        return render_batch_html(document, plots, notes=notes)
    subtitle = esc(_protocol_text(document))
    sections: list[str] = []
    if document.get("checks"):
        sections.append(section("Checks", checks_block(document), "checks"))
    sections += protocol_sections(document, first=True)[:1]
    sections.append(section("Inputs and protocol", facts(document), "inputs"))
    if document.get("warnings"):
        sections.append(section("Warnings", warnings_block(document["warnings"]), "warnings"))
    sections += protocol_sections(document, first=True)[1:]
    sections += analysis_sections(document)
    sections += _plots_section(plots, notes.get("plots"))
    if document.get("per_image"):
        total = (document.get("inputs") or {}).get("ground_truth", {}).get("images")
        body = worst_block(document["per_image"], ordered=ordered, total=total if ordered else None)
        sections.append(section("Worst images", body, "worst"))
    if drawings or notes.get("drawings"):
        body = drawings_block(drawings or {}, notes.get("drawings", ""))
        sections.append(section("Drawings of the worst images", body, "drawings"))
    for block in document.get("additional_protocols") or []:
        sections += protocol_sections(block, first=False)
    return page("iou-eval report", subtitle, sections)


def _plots_section(plots: Mapping[str, str] | None, note: str | None) -> list[str]:
    """The plots, or the note that says why there are none (nothing when neither)."""
    if plots:
        return [section("Plots", plots_block(plots), "plots")]
    if note:
        return [section("Plots", f'<p class="note">{esc(note)}</p>', "plots")]
    return []


def render_batch_html(document: Mapping[str, Any], plots: Mapping[str, str] | None = None,
                      notes: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """The page of a batch document: leaderboard, files that failed, plots."""
    board = document.get("leaderboard") or []
    columns = {k: k for r in board for k in r}
    sections = [section("Leaderboard", '<div class="scroll">' + table(board, columns) + "</div>",
                        "leaderboard")]  # fmt: skip
    errors = document.get("errors") or []
    if errors:
        sections.append(section("Files that could not be scored",
                                warnings_block([e.get("message") for e in errors]), "errors"))  # fmt: skip
    sections += _plots_section(plots, (notes or {}).get("plots"))
    subtitle = f"batch · ground truth <code>{esc(document.get('ground_truth'))}</code>"
    return page("iou-eval leaderboard", subtitle, sections)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (temporary file, then rename)."""
    data = text.encode("utf-8")
    write_whole(path, lambda fh: fh.write(data))
