"""Hostile inputs and options, as data: what to create, what to run, what must come out.

Each :class:`Case` names the files to create in an empty folder (content is
generated when the case runs, never committed), the command-line arguments
(paths relative to that folder, which is the working directory), the exit
code expected, and a substring stderr must contain.  ``test_hostile.py``
runs every case and also asserts: no traceback, every file that existed
before is unchanged (content, type, link target), no temporary
``.iou-eval-*`` file is left, and the checks a case names hold.

Exit codes: 1 for bad input, 2 for bad options (``-o`` included).

Every ``-o`` names a path inside the case folder (or under ``/proc``, where
nothing can be created): the command line under test may still replace its
output by rename, and a case must never let it replace a real file or
device of the machine.  ``test_outputs_stay_in_the_case_folder`` checks it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# -- what to create --------------------------------------------------------


@dataclass(frozen=True)
class Fifo:
    """A named pipe nobody writes to."""


@dataclass(frozen=True)
class Folder:
    """An empty folder; ``mode`` 0o555 makes it read-only (not for root)."""

    mode: int | None = None


@dataclass(frozen=True)
class Symlink:
    target: str


@dataclass(frozen=True)
class Hardlink:
    target: str


Content = bytes | str | Callable[[], bytes] | Fifo | Folder | Symlink | Hardlink


@dataclass(frozen=True)
class Check:
    """A check of the output: ``kind`` is a checker of ``test_hostile.py``, ``arg`` its argument."""

    kind: str
    arg: str = ""


@dataclass(frozen=True)
class Case:
    """One hostile run.

    Attributes:
        name: the test id.
        files: relative path -> content (created in order; folders first).
        args: the command line after ``iou-eval``.
        exit: the exit code expected.
        needle: a substring stderr must contain ("" for none).
        checks: further checks of stdout, stderr and written files.
        outputs: files the run is expected to create or replace.
        env: environment variables for the run.
        isolate: run in a subprocess with a memory limit and a timeout
            (cases that could hang, crash or exhaust memory today).
        setup: CLI runs (argument tuples) that prepare files, e.g. a baseline.
        edit: ``(file, fn)``: after the setup, the JSON document of ``file``
            is replaced by ``fn(document)``.
        not_as_root: root ignores file permissions; skip then.
        needs: ``/dev/zero``, ``/proc``, ``mkfifo`` …: skip where missing.
    """

    name: str
    files: dict[str, Content]
    args: tuple[str, ...]
    exit: int
    needle: str = ""
    checks: tuple[Check, ...] = ()
    outputs: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    isolate: bool = False
    setup: tuple[tuple[str, ...], ...] = ()
    edit: tuple[str, Callable[[Any], Any]] | None = None
    not_as_root: bool = False
    needs: str = ""


# -- content generators -------------------------------------------------------


def coco_gt(
    names: tuple[str, ...] = ("cat", "dog"),
    image_id: Any = 1,
    category_ids: tuple[Any, ...] | None = None,
    annotation_id: Any = 1,
    file_name: str = "a.jpg",
) -> dict[str, Any]:
    """One 100x100 image, one box per category."""
    ids = category_ids or tuple(range(1, len(names) + 1))
    return {
        "images": [{"id": image_id, "file_name": file_name, "width": 100, "height": 100}],
        "categories": [{"id": i, "name": n} for i, n in zip(ids, names, strict=True)],
        "annotations": [
            {
                "id": annotation_id if k == 0 else annotation_id + k
                if isinstance(annotation_id, int) else f"{annotation_id}{k}",
                "image_id": image_id,
                "category_id": i,
                "bbox": [10 + 5 * k, 10, 20, 20],
                "area": 400,
                "iscrowd": 0,
            }
            for k, i in enumerate(ids)
        ],
    }  # fmt: skip


def coco_preds(
    n_categories: int = 2, image_id: Any = 1, shift: float = 0.0, score: float = 0.9
) -> list[dict[str, Any]]:
    return [
        {"image_id": image_id, "category_id": i, "bbox": [10 + 5 * k + shift, 10, 20, 20],
         "score": score}
        for k, i in enumerate(range(1, n_categories + 1))
    ]  # fmt: skip


def js(obj: Any) -> bytes:
    return json.dumps(obj).encode()


GT = js(coco_gt())
PREDS = js(coco_preds())
BASIC = {"gt.json": GT, "preds.json": PREDS}

CSV_HEADER = "image,label,score,xmin,ymin,xmax,ymax\n"


def csv_preds(x1: str = "10") -> bytes:
    return (CSV_HEADER + f"a.jpg,cat,0.9,{x1},10,30,30\n").encode()


def deep_json(levels: int = 100_000) -> bytes:
    """A ground truth whose ``info`` field nests ``levels`` arrays."""
    doc = coco_gt()
    head = json.dumps(doc)[:-1]
    return (head + ', "info": ' + "[" * levels + "]" * levels + "}").encode()


def huge_header_csv() -> bytes:
    return ("x" * 10_000_000 + ",label,score,xmin,ymin,xmax,ymax\na.jpg,cat,0.9,1,1,2,2\n").encode()


def invalid_utf8_json() -> bytes:
    return GT.replace(b'"a.jpg"', b'"a\xff\xfe.jpg"')


HOSTILE_NAMES = (
    "esc\x1b[31mred\x1b[0m",
    "carriage\rreturn",
    "100%",
    "::error::forged",
    "line\n::error::forged",
    "##[error]legacy",
    "a|b",
    "<script>alert(1)</script>",
    "=cmd|' /C calc'!A0",
    "bidi\u202edcba",
)


def hostile_gt() -> bytes:
    return js(coco_gt(HOSTILE_NAMES))


def hostile_perfect() -> bytes:
    return js(coco_preds(len(HOSTILE_NAMES)))


def hostile_worse() -> bytes:
    # Shifted boxes: IoU 0.6, so AP falls below the perfect baseline.
    return js(coco_preds(len(HOSTILE_NAMES), shift=5.0))


def hostile_strays() -> bytes:
    """Predictions on images the ground truth does not have, named by hostile ids."""
    strays = [{**p, "image_id": name} for p, name in zip(
        coco_preds(len(HOSTILE_NAMES)), HOSTILE_NAMES, strict=True)]  # fmt: skip
    return js(coco_preds(len(HOSTILE_NAMES)) + strays)


VOC_BOX = "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>20</xmax><ymax>20</ymax></bndbox>"


def voc_xml(name: str, doctype: str = "") -> bytes:
    return (
        f'<?xml version="1.0"?>{doctype}<annotation><filename>a.jpg</filename>'
        "<size><width>100</width><height>100</height><depth>3</depth></size>"
        f"<object><name>{name}</name><difficult>0</difficult>{VOC_BOX}</object></annotation>"
    ).encode()


def billion_laughs() -> bytes:
    ents = '<!ENTITY a0 "lol">' + "".join(
        f'<!ENTITY a{i} "{("&a" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
    )
    return voc_xml("&a9;", f"<!DOCTYPE annotation [{ents}]>")


def internal_entity() -> bytes:
    return voc_xml("&n;", '<!DOCTYPE annotation [<!ENTITY n "cat">]>')


def external_entity() -> bytes:
    return voc_xml("&x;", '<!DOCTYPE annotation [<!ENTITY x SYSTEM "secret.txt">]>')


SECRET = b"TOPSECRET-4711\n"


def voc_preds_csv() -> bytes:
    return (CSV_HEADER + "a,cat,0.9,1,1,20,20\n").encode()


def _without(key: str) -> Callable[[dict], dict]:
    return lambda doc: {k: v for k, v in doc.items() if k != key}


def _with(key: str, value: Callable[[dict], Any]) -> Callable[[dict], dict]:
    return lambda doc: {**doc, key: value(doc)}


# A real baseline (written by the setup run), then damaged one way each: the
# parameters stay right, so the comparison reaches the damaged part.
BASELINE_EDITS: dict[str, Callable[[Any], Any]] = {
    "list": lambda doc: [doc],
    "empty-object": lambda doc: {},
    "no-summary": _without("summary"),
    "no-protocol": _without("protocol"),
    "no-params": _without("params"),
    "summary-list": _with("summary", lambda d: list(d["summary"].values())),
    "params-list": _with("params", lambda d: list(d["params"].items())),
    "per-class-object": _with("per_class", lambda d: {c["class"]: c for c in d["per_class"]}),
    "per-class-strings": _with("per_class", lambda d: [c["class"] for c in d["per_class"]]),
    "ap-string": _with("summary", lambda d: {**d["summary"], "AP": "high"}),
    "schema-true": _with("schema_version", lambda d: True),
}


# -- the catalogue ----------------------------------------------------------------


def _option_cases() -> list[Case]:
    """Numbers in options: NaN, infinities, reversed ranges, Unicode digits."""
    bad = [
        ("max-dets-nan", ("--max-dets", "nan"), "--max-dets"),
        ("max-dets-inf", ("--max-dets", "inf"), "--max-dets"),
        ("max-dets-1e99", ("--max-dets", "1e99"), "--max-dets"),
        ("max-dets-repeated", ("--max-dets", "100,100"), "--max-dets"),
        ("iou-thresholds-inf-stop", ("--iou-thresholds", "0.5:inf:0.05"), "--iou-thresholds"),
        ("iou-thresholds-empty", ("--iou-thresholds", ""), "--iou-thresholds"),
        ("iou-thresholds-comma", ("--iou-thresholds", ","), "--iou-thresholds"),
        ("seed-negative-bootstrap", ("--seed", "-1", "--bootstrap", "5"), "--seed"),
        ("score-thr-nan", ("--score-thr", "nan"), "--score-thr"),
        ("iou-thr-nan", ("--iou-thr", "nan"), "--iou-thr"),
        ("image-size-nan", ("--image-size", "nanxnan"), "--image-size"),
        ("area-ranges-nan", ("--area-ranges", "small=nan:inf"), "--area-ranges"),
        ("area-ranges-reversed", ("--area-ranges", "small=10:1"), "--area-ranges"),
        ("workers-huge", ("--workers", "100000"), "--workers"),
        ("iou-thr-arabic-indic", ("--iou-thr", "٠.٥"), "--iou-thr"),
        ("score-thr-fullwidth", ("--score-thr", "０.５"), "--score-thr"),
        ("max-dets-superscript", ("--max-dets", "1,10,10²"), "--max-dets"),
        ("worst-arabic-indic", ("--worst", "٣"), "--worst"),
    ]
    cases = [
        Case(f"option-{name}", dict(BASIC), ("gt.json", "preds.json", *args), 2, needle)
        for name, args, needle in bad
    ]
    cases.append(
        Case(
            "option-max-drop-nan",
            {**BASIC, "base.json": b""},
            ("gt.json", "preds.json", "--baseline", "base.json", "--max-drop", "nan"),
            2,
            "--max-drop",
            setup=(("gt.json", "preds.json", "-f", "json", "-o", "base.json", "-q"),),
        )
    )
    for name, args, needle in [
        ("compare-confidence-nan", ("--confidence", "nan"), "--confidence"),
        ("compare-iou-thr-nan", ("--iou-thr", "nan"), "--iou-thr"),
        ("compare-seed-negative", ("--seed", "-1"), "--seed"),
    ]:
        cases.append(
            Case(
                name,
                {**BASIC, "b.json": PREDS},
                ("compare", "gt.json", "preds.json", "b.json", "--bootstrap", "5", *args),
                2,
                needle,
            )
        )
    return cases


def _data_cases() -> list[Case]:
    """Malformed or oversized content."""
    cases = [
        Case("invalid-utf8-in-json-string", {"gt.json": invalid_utf8_json, "preds.json": PREDS},
             ("gt.json", "preds.json"), 1, "gt.json"),
        Case("nesting-100000-levels", {"gt.json": deep_json, "preds.json": PREDS},
             ("gt.json", "preds.json"), 1, "gt.json", isolate=True),
        Case("csv-header-cell-10MB", {"gt.json": GT, "preds.csv": huge_header_csv},
             ("gt.json", "preds.csv"), 1, "preds.csv",
             checks=(Check("stderr_shorter_than", "2000"),)),
        Case("json-file-that-is-csv", {"gt.json": GT, "preds.json": csv_preds()},
             ("gt.json", "preds.json"), 1, "JSON"),
        Case("json-with-utf8-bom", {"gt.json": b"\xef\xbb\xbf" + GT,
                                    "preds.json": b"\xef\xbb\xbf" + PREDS},
             ("gt.json", "preds.json", "-q"), 0),
        Case("csv-field-arabic-indic-digits", {"gt.json": GT, "preds.csv": csv_preds("١٠")},
             ("gt.json", "preds.csv"), 1, "preds.csv"),
        Case("csv-field-superscript-digit", {"gt.json": GT, "preds.csv": csv_preds("1²")},
             ("gt.json", "preds.csv"), 1, "preds.csv"),
        Case("txt-field-fullwidth-digits",
             {"gt.json": GT, "names.txt": b"cat\ndog\n", "preds/a.txt": "0 0.9 １0 10 20 20\n"},
             ("gt.json", "preds", "--names", "names.txt", "--box-format", "xywh"), 1, "a.txt"),
        Case("dev-zero-as-predictions", {"gt.json": GT}, ("gt.json", "/dev/zero"), 1,
             "/dev/zero: a device", isolate=True, needs="/dev/zero"),
        Case("dev-zero-as-ground-truth", {"preds.json": PREDS}, ("/dev/zero", "preds.json"), 1,
             "/dev/zero: a device", isolate=True, needs="/dev/zero"),
        Case("gzip-bomb-predictions",
             {"gt.json": GT, "preds.json.gz": lambda: gzip.compress(b" " * (64 << 20), 9)},
             ("gt.json", "preds.json.gz"), 1, "preds.json.gz: decompresses to more than the input limit",
             env={"IOU_EVAL_MAX_INPUT": "8M"}, isolate=True),
        Case("stray-notes-in-batch-folder",
             {"gt.json": GT, "runs/a.json": PREDS, "runs/b.json": js(coco_preds(shift=3)),
              "runs/notes.txt": b"trained on tuesday\n", "runs/README.md": b"# runs\n"},
             ("gt.json", "runs"), 0, "notes.txt"),
    ]  # fmt: skip
    # Image and category ids are the user's keys (Python ints, any size):
    # beyond 64 bits they still join.  Annotation ids are a 64-bit column:
    # a larger one is refused with a located message.
    big = 2**70
    preds_big_image = js(coco_preds(image_id=big))
    preds_big_category = js([{**p, "category_id": big} if p["category_id"] == 1 else p
                             for p in coco_preds()])  # fmt: skip
    cases += [
        Case("image-id-beyond-64-bits",
             {"gt.json": js(coco_gt(image_id=big)), "preds.json": preds_big_image},
             ("gt.json", "preds.json", "-f", "json", "-q"), 0, checks=(Check("perfect_ap"),)),
        Case("category-id-beyond-64-bits",
             {"gt.json": js(coco_gt(category_ids=(big, 2))), "preds.json": preds_big_category},
             ("gt.json", "preds.json", "-f", "json", "-q"), 0, checks=(Check("perfect_ap"),)),
        Case("annotation-id-beyond-64-bits",
             {"gt.json": js(coco_gt(annotation_id=big)), "preds.json": PREDS},
             ("gt.json", "preds.json"), 1, "gt.json"),
    ]  # fmt: skip
    # Found by a hostile run: an empty-string id names nothing (it once dropped
    # image 1's objects with a warning, exit 0); objects on an image the list
    # lacks are dropped as pycocotools drops them, a doubt --strict refuses.
    blank_image = coco_gt()
    blank_image["images"][0]["id"] = ""
    blank_annotation = coco_gt()
    blank_annotation["annotations"][1]["image_id"] = ""
    unlisted = coco_gt()
    unlisted["images"][0]["id"] = 2
    cases += [
        Case("image-id-empty-string", {"gt.json": js(blank_image), "preds.json": PREDS},
             ("gt.json", "preds.json"), 1, "gt.json:images[0].id: image id: expected an "
             "integer or a non-empty string, got ''"),
        Case("annotation-image-id-empty-string",
             {"gt.json": js(blank_annotation), "preds.json": PREDS},
             ("gt.json", "preds.json"), 1, "gt.json:annotations[1].image_id: expected"),
        Case("prediction-image-id-blank", {"gt.json": GT, "preds.json": js(coco_preds(image_id=" "))},
             ("gt.json", "preds.json"), 1, "preds.json:[0].image_id: expected"),
        Case("annotations-on-unlisted-image-strict", {"gt.json": js(unlisted), "preds.json": PREDS},
             ("gt.json", "preds.json", "--strict"), 1, "refer to images not in 'images'"),
    ]  # fmt: skip
    # Found by make fuzz: integers beyond any float or 64 bits where numbers
    # are read into arrays (an image no annotation names, polygon points,
    # uncompressed counts, an RLE's size, LabelMe points).
    huge = 10**400
    unused_image = coco_gt()
    unused_image["images"].append({"id": big, "file_name": "b.jpg", "width": 100, "height": 100})
    poly_gt = coco_gt()
    poly_gt["annotations"][0]["segmentation"] = [[10, 10, huge, 10, 30, 30]]
    counts_gt = coco_gt()
    counts_gt["annotations"][0].update(
        iscrowd=1, segmentation={"size": [100, 100], "counts": [huge]}
    )
    size_preds = [
        {**p, "segmentation": {"size": [100, huge], "counts": "PP"}} for p in coco_preds()
    ]
    labelme = {
        "shapes": [{"label": "cat", "points": [[huge, 1], [5, 5]], "shape_type": "rectangle"}],
        "imagePath": "a.jpg",
        "imageHeight": 100,
        "imageWidth": 100,
    }
    labelme_score = {
        **labelme,
        "shapes": [{**labelme["shapes"][0], "points": [[1, 1], [5, 5]], "score": huge}],
    }
    labelme_height = {
        **labelme,
        "imageHeight": huge,
        "shapes": [{**labelme["shapes"][0], "points": [[1, 1], [5, 5]]}],
    }
    cases += [
        Case("labelme-score-beyond-any-float",
             {"gt/a.json": js(labelme_height | {"imageHeight": 100}), "p/a.json": js(labelme_score)},
             ("gt", "p", "--gt-format", "labelme", "--pred-format", "labelme"), 1, "p/a.json"),
        Case("labelme-image-height-beyond-any-float",
             {"gt/a.json": js(labelme_height), "preds.json": PREDS},
             ("gt", "preds.json", "--gt-format", "labelme"), 1, "gt/a.json"),
        Case("image-id-beyond-64-bits-in-no-annotation",
             {"gt.json": js(unused_image), "preds.json": PREDS},
             ("gt.json", "preds.json", "-f", "json", "-q"), 0, checks=(Check("perfect_ap"),)),
        Case("polygon-point-beyond-any-float", {"gt.json": js(poly_gt), "preds.json": PREDS},
             ("gt.json", "preds.json", "--iou-type", "segm"), 1, "annotations[0].segmentation[0]"),
        Case("uncompressed-count-beyond-any-float",
             {"gt.json": js(counts_gt), "preds.json": PREDS},
             ("gt.json", "preds.json", "--iou-type", "segm"), 1, "segmentation.counts"),
        Case("rle-size-beyond-64-bits", {"gt.json": GT, "preds.json": js(size_preds)},
             ("gt.json", "preds.json", "--iou-type", "segm"), 1, "[0].segmentation.size"),
        Case("labelme-point-beyond-any-float",
             {"gt/a.json": js(labelme), "preds.json": PREDS},
             ("gt", "preds.json", "--gt-format", "labelme"), 1, "gt/a.json"),
    ]  # fmt: skip
    cases += [
        Case(f"baseline-{kind}", {**BASIC, "base.json": b""},
             ("gt.json", "preds.json", "--baseline", "base.json"), 1, "base.json",
             setup=(("gt.json", "preds.json", "-f", "json", "-o", "base.json", "-q"),),
             edit=("base.json", edit))
        for kind, edit in BASELINE_EDITS.items()
    ]  # fmt: skip
    return cases


def _xml_cases() -> list[Case]:
    """DTDs stay off: no entity expansion, no external entities."""
    return [
        Case("xml-billion-laughs", {"gt/a.xml": billion_laughs, "preds.csv": voc_preds_csv()},
             ("gt", "preds.csv"), 1, "a.xml", isolate=True),
        Case("xml-internal-entity", {"gt/a.xml": internal_entity, "preds.csv": voc_preds_csv()},
             ("gt", "preds.csv"), 1, "a.xml"),
        Case("xml-external-entity",
             {"secret.txt": SECRET, "gt/a.xml": external_entity, "preds.csv": voc_preds_csv()},
             ("gt", "preds.csv", "-f", "json"), 1, "a.xml",
             checks=(Check("absent", SECRET.decode().strip()),)),
    ]  # fmt: skip


def _output_cases() -> list[Case]:
    """``-o``: never an input, never a non-file, whole or not at all."""
    files = {**BASIC, "names.txt": b"cat\ndog\n", "b.json": PREDS}
    cases = [
        Case("output-is-ground-truth", dict(files), ("gt.json", "preds.json", "-o", "gt.json"),
             2, "-o gt.json"),
        Case("output-is-predictions", dict(files),
             ("gt.json", "preds.json", "-o", "./preds.json"), 2, "-o ./preds.json"),
        Case("output-is-names", dict(files),
             ("gt.json", "preds.json", "--names", "names.txt", "-o", "names.txt"), 2, "-o"),
        Case("output-is-baseline", {**files, "base.json": b""},
             ("gt.json", "preds.json", "--baseline", "base.json", "-f", "json", "-o", "base.json"),
             2, "-o base.json",
             setup=(("gt.json", "preds.json", "-f", "json", "-o", "base.json", "-q"),)),
        Case("output-is-compare-a", dict(files),
             ("compare", "gt.json", "preds.json", "b.json", "--bootstrap", "0", "-o", "preds.json"),
             2, "-o preds.json"),
        Case("output-is-compare-b", dict(files),
             ("compare", "gt.json", "preds.json", "b.json", "--bootstrap", "0", "-o", "b.json"),
             2, "-o b.json"),
        Case("output-is-symlink-to-input", {**files, "link.json": Symlink("gt.json")},
             ("gt.json", "preds.json", "-o", "link.json"), 2, "-o link.json"),
        Case("output-is-hardlink-to-input", {**files, "hard.json": Hardlink("preds.json")},
             ("gt.json", "preds.json", "-o", "hard.json"), 2, "-o hard.json"),
        Case("output-inside-batch-folder",
             {"gt.json": GT, "runs/a.json": PREDS, "runs/b.json": PREDS},
             ("gt.json", "runs", "-o", "runs/result.json"), 2, "-o runs/result.json"),
        Case("output-is-a-folder", {**BASIC, "out": Folder()},
             ("gt.json", "preds.json", "-o", "out"), 2, "-o"),
        Case("output-is-a-fifo", {**BASIC, "pipe": Fifo()},
             ("gt.json", "preds.json", "-o", "pipe"), 2, "-o pipe", isolate=True, needs="mkfifo"),
        # Devices through links in the case folder, never /dev itself: a CLI
        # that replaces its output by rename would replace the device node.
        Case("output-is-dev-null", {**BASIC, "null": Symlink("/dev/null")},
             ("gt.json", "preds.json", "-o", "null"), 0, needs="/dev/null"),
        Case("output-is-dev-zero", {**BASIC, "zero": Symlink("/dev/zero")},
             ("gt.json", "preds.json", "-o", "zero"), 2, "-o zero", needs="/dev/zero"),
        # Written through, the link would replace real/report.md, a file the
        # command line did not name: refused, link and target unchanged.
        Case("output-symlink-to-regular-file",
             {**BASIC, "real/report.md": b"old", "report.md": Symlink("real/report.md")},
             ("gt.json", "preds.json", "-f", "markdown", "-o", "report.md", "-q"), 2,
             "not written through a link", checks=(Check("is_symlink", "report.md"),)),
        Case("output-dangling-symlink", {**BASIC, "report.md": Symlink("nowhere/x.md")},
             ("gt.json", "preds.json", "-o", "report.md"), 2, "-o report.md"),
        Case("output-under-proc", dict(BASIC),
             ("gt.json", "preds.json", "-o", "/proc/iou-eval-report.json"), 2,
             "-o /proc/iou-eval-report.json", needs="/proc"),
        Case("output-in-read-only-folder", {**BASIC, "ro": Folder(0o555)},
             ("gt.json", "preds.json", "-o", "ro/report.json"), 2, "-o ro/report.json",
             not_as_root=True),
        Case("output-in-missing-folder", dict(BASIC),
             ("gt.json", "preds.json", "-o", "no/such/report.json"), 2, "-o no/such/report.json"),
    ]  # fmt: skip
    return cases


def _escaping_cases() -> list[Case]:
    """Class names that try to escape their place in every output format."""
    files = {"gt.json": hostile_gt, "perfect.json": hostile_perfect, "worse.json": hostile_worse,
             "base.json": b""}  # fmt: skip
    setup = (("gt.json", "perfect.json", "-f", "json", "-o", "base.json", "-q"),)
    run = ("gt.json", "worse.json", "--baseline", "base.json")
    return [
        Case("hostile-names-table", dict(files), run, 3, setup=setup,
             checks=(Check("terminal_safe"), Check("no_forged_commands"))),
        Case("hostile-names-annotations", dict(files), (*run, "--annotations", "github"), 3,
             setup=setup, checks=(Check("terminal_safe"), Check("no_forged_commands"),
                                  Check("annotations_present"))),
        Case("hostile-names-annotations-json-stdout", dict(files),
             (*run, "--annotations", "github", "-f", "json"), 3, setup=setup,
             checks=(Check("no_forged_commands"), Check("json_stdout"))),
        Case("hostile-names-markdown", dict(files), (*run, "-f", "markdown", "-o", "r.md"), 3,
             setup=setup, outputs=("r.md",), checks=(Check("markdown_safe", "r.md"),)),
        Case("hostile-names-csv", dict(files), (*run, "-f", "csv", "-o", "r.csv"), 3,
             setup=setup, outputs=("r.csv",), checks=(Check("csv_safe", "r.csv"),)),
        Case("hostile-names-json", dict(files), (*run, "-f", "json", "-o", "r.json"), 3,
             setup=setup, outputs=("r.json",), checks=(Check("json_names", "r.json"),)),
        Case("hostile-names-junit", dict(files), (*run, "-f", "junit", "-o", "r.xml"), 3,
             setup=setup, outputs=("r.xml",), checks=(Check("junit_names", "r.xml"),)),
        Case("hostile-names-junit-stdout", dict(files),
             (*run, "--annotations", "github", "-f", "junit"), 3, setup=setup,
             checks=(Check("terminal_safe"), Check("no_forged_commands"), Check("junit_stdout"))),
        Case("hostile-ids-in-warnings", {"gt.json": hostile_gt, "preds.json": hostile_strays},
             ("gt.json", "preds.json"), 0, checks=(Check("terminal_safe"),
                                                   Check("no_forged_commands"))),
    ]  # fmt: skip


CASES: list[Case] = [
    *_option_cases(),
    *_data_cases(),
    *_xml_cases(),
    *_output_cases(),
    *_escaping_cases(),
]
