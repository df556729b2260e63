"""The tracebacks and unsafe behaviours found by a hostile replay, each fixed at its root.

Each test names the cause; the command-line cases of ``tests/hostile`` cover
the same ground end to end.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from iou_eval.ci.baseline import check_baseline
from iou_eval.ci.batch import is_batch_folder, prediction_files, stray_files
from iou_eval.errors import InputError, UsageError
from iou_eval.io.loaders import coco as coco_loader
from iou_eval.io.loaders import detect_format, load, xml_input
from iou_eval.io.loaders.common import MAX_JSON_DEPTH, decode_json
from iou_eval.options import EvalOptions

from ..cli.helpers import run
from ..conftest import ROOT

SAMPLE = ROOT / "sample_data"


def coco_gt(image_id=1, category_ids=(1, 2), annotation_id=1, names=("cat", "dog")):
    return {
        "images": [{"id": image_id, "file_name": "a.jpg", "width": 100, "height": 100}],
        "categories": [{"id": i, "name": n} for i, n in zip(category_ids, names, strict=True)],
        "annotations": [
            {"id": annotation_id + k, "image_id": image_id, "category_id": c,
             "bbox": [10 + 5 * k, 10, 20, 20], "area": 400, "iscrowd": 0}
            for k, c in enumerate(category_ids)
        ],
    }  # fmt: skip


def coco_preds(image_id=1, category_ids=(1, 2)):
    return [
        {"image_id": image_id, "category_id": c, "bbox": [10 + 5 * k, 10, 20, 20], "score": 0.9}
        for k, c in enumerate(category_ids)
    ]


def put(path: Path, content) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, (dict, list)):
        content = json.dumps(content)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


# -- JSON: invalid UTF-8 inside a string, nesting, ids beyond 64 bits -----------------


def test_invalid_utf8_inside_a_json_string_is_located_in_the_file(tmp_path):
    """msgspec raises UnicodeDecodeError with the offset inside one string; the error names
    the file's line and column."""
    text = json.dumps(coco_gt(), indent=1).encode().replace(b'"a.jpg"', b'"a\xff.jpg"')
    line = text[: text.index(b"\xff")].count(b"\n") + 1
    column = text.index(b"\xff") - text.rfind(b"\n", 0, text.index(b"\xff"))
    path = put(tmp_path / "gt.json", text)
    with pytest.raises(InputError) as err:
        load(path, "gt")
    assert err.value.where == f"{line}:{column}"
    assert "not valid UTF-8: byte ff" in err.value.message


def test_invalid_utf8_in_a_large_results_file_read_in_chunks(tmp_path, monkeypatch):
    """The chunked decoder gives up on the bad chunk; the whole-file decode locates the byte."""
    monkeypatch.setattr(coco_loader, "_CHUNK_BYTES", 256)
    preds = coco_preds(image_id="img") * 40
    text = json.dumps(preds).encode()
    bad = text.rindex(b'"img"') + 2
    text = text[:bad] + b"\xfe" + text[bad + 1 :]
    path = put(tmp_path / "preds.json", text)
    with pytest.raises(InputError) as err:
        coco_loader.load_coco(path, "pred", coco_loader.LoadOptions())
    assert err.value.where == f"1:{bad + 1}"


def test_nesting_beyond_the_limit_in_a_skipped_field_is_located(tmp_path):
    doc = json.dumps(coco_gt())[:-1]
    head = doc + ', "info": '
    text = (head + "[" * 100_000 + "]" * 100_000 + "}").encode()
    path = put(tmp_path / "gt.json", text)
    with pytest.raises(InputError) as err:
        load(path, "gt")
    # The first level beyond the limit: the document's object is the first level,
    # so it is the info field's 512th bracket.
    assert err.value.where == f"1:{len(head) + MAX_JSON_DEPTH}"
    assert "nested too deeply" in err.value.message


def test_nesting_within_the_limit_is_read(tmp_path):
    doc = json.dumps(coco_gt())[:-1] + ', "info": ' + "[" * 400 + "]" * 400 + "}"
    assert len(load(put(tmp_path / "gt.json", doc), "gt")) == 2


@pytest.mark.parametrize("where", ["image", "category"])
def test_image_and_category_ids_beyond_64_bits_join(tmp_path, where):
    big = 2**70
    if where == "image":
        gt, preds = coco_gt(image_id=big), coco_preds(image_id=big)
    else:
        gt, preds = coco_gt(category_ids=(big, 2)), coco_preds(category_ids=(big, 2))
    r = run(put(tmp_path / "gt.json", gt), put(tmp_path / "p.json", preds), "-f", "json", "-q")
    doc = json.loads(r.out)
    assert doc["summary"]["AP"] == pytest.approx(1.0)
    assert doc["inputs"]["predictions"]["unknown_image_boxes"] == 0


def test_an_annotation_id_beyond_64_bits_is_refused_where_it_is(tmp_path):
    path = put(tmp_path / "gt.json", coco_gt(annotation_id=2**70))
    with pytest.raises(InputError) as err:
        load(path, "gt")
    assert err.value.where == "annotations[0].id"
    assert "does not fit in 64 bits" in err.value.message


def test_decode_json_keeps_big_integers_and_refuses_out_of_range_floats():
    assert decode_json(b"[1180591620717411303424]", "x") == [2**70]
    with pytest.raises(InputError, match="out of range"):
        decode_json(b"[1e400]", "x")


# -- XML: any size, no entities -----------------------------------------------------


def _voc(name: str = "cat", doctype: str = "") -> bytes:
    return (
        f'<?xml version="1.0"?>{doctype}<annotation><filename>a.jpg</filename>'
        f"<object><name>{name}</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>20</xmax><ymax>20</ymax></bndbox></object></annotation>"
    ).encode()


def test_xml_is_fed_in_pieces_and_gives_the_same_tree(monkeypatch):
    """ElementTree.fromstring hands expat one buffer and overflows beyond 2 GiB: pieces do not."""
    fed: list[int] = []
    real = ET.XMLParser

    class Spy:
        def __init__(self) -> None:
            self.parser = real()

        def feed(self, data: bytes) -> None:
            fed.append(len(data))
            self.parser.feed(data)

        def close(self):
            return self.parser.close()

    data = _voc()
    expected = ET.tostring(ET.fromstring(data))
    monkeypatch.setattr(xml_input, "CHUNK_BYTES", 7)
    monkeypatch.setattr(xml_input.ET, "XMLParser", Spy)
    root = xml_input.parse_xml(data, "a.xml")
    assert max(fed) == 7 and sum(fed) == len(data)
    assert ET.tostring(root) == expected


def test_a_2gb_xml_file_is_an_error_not_an_overflow(tmp_path):
    """A sparse 2 GiB + 1 file (no disk used): parsing stops at the first NUL with a location."""
    path = tmp_path / "big.xml"
    with open(path, "wb") as fh:
        fh.write(b"<annotation>")
        fh.truncate((2 << 30) + 1)
    with (
        open(path, "rb") as fh,
        mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data,
        pytest.raises(InputError) as err,
    ):
        xml_input.parse_xml(data, str(path))
    assert err.value.where == "line 1"
    assert "malformed XML" in err.value.message


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE annotation [<!ENTITY n "cat">]>',
        '<!DOCTYPE annotation [<!ENTITY n SYSTEM "secret.txt">]>',
        '<!DOCTYPE annotation SYSTEM "http://example.com/x.dtd">',
    ],
)
def test_xml_entities_are_never_expanded(tmp_path, doctype):
    (tmp_path / "secret.txt").write_text("TOPSECRET")
    path = put(tmp_path / "gt" / "a.xml", _voc("&n;", doctype))
    with pytest.raises(InputError, match="DTD or entities") as err:
        load(str(tmp_path / "gt"), "gt", "voc-xml")
    assert err.value.path == path
    assert "TOPSECRET" not in str(err.value)


def test_a_doctype_far_into_the_file_or_cut_by_a_piece_boundary_is_found(monkeypatch):
    data = b"<!--" + b" " * 100_000 + b"-->" + _voc("&n;", '<!DOCTYPE a [<!ENTITY n "x">]>')[21:]
    with pytest.raises(InputError, match="DTD"):
        xml_input.parse_xml(data, "a.xml")
    monkeypatch.setattr(xml_input, "CHUNK_BYTES", 5)
    for cut in range(5):
        doc = b" " * cut + b'<!DOCTYPE a [<!ENTITY n "x">]><a>&n;</a>'
        with pytest.raises(InputError, match="DTD"):
            xml_input.parse_xml(doc, "a")


# -- CSV and text fields -----------------------------------------------------------


def test_a_10mb_csv_header_cell_is_an_error_with_a_short_message(tmp_path):
    path = put(tmp_path / "p.csv", "x" * 10_000_000 + ",label,score,xmin,ymin,xmax,ymax\n")
    with pytest.raises(InputError) as err:
        load(path, "pred", "csv")
    assert err.value.where == 1
    assert len(str(err.value)) < 300


@pytest.mark.parametrize("token", ["١٠", "１0", "1_0", "1²"])
@pytest.mark.parametrize("fmt", ["csv", "txt", "voc-xml", "cvat-xml", "openimages"])
def test_numbers_in_data_files_are_ascii(tmp_path, fmt, token):
    """Python's float() reads each of these tokens as 10; a number in a file is ASCII."""
    if fmt == "csv":
        path = put(
            tmp_path / "p.csv",
            f"image,label,score,xmin,ymin,xmax,ymax\na,cat,0.9,{token},1,30,30\n",
        )
    elif fmt == "txt":
        path = put(tmp_path / "p" / "a.txt", f"cat 0.9 {token} 1 20 20\n")
    elif fmt == "voc-xml":
        path = put(
            tmp_path / "a.xml", _voc().replace(b"<xmin>1</xmin>", f"<xmin>{token}</xmin>".encode())
        )
    elif fmt == "cvat-xml":
        path = put(tmp_path / "a.xml", (
            '<annotations><version>1.1</version><image id="0" name="a.jpg" width="100" height="100">'
            f'<box label="cat" xtl="{token}" ytl="1" xbr="20" ybr="20" occluded="0"></box>'
            "</image></annotations>"))  # fmt: skip
    else:
        path = put(tmp_path / "p.csv", "ImageID,LabelName,Score,XMin,XMax,YMin,YMax\n"
                   f"a,/m/x,0.9,0.{token},0.5,0.1,0.5\n")  # fmt: skip
    role = "gt" if fmt in ("voc-xml", "cvat-xml") else "pred"
    with pytest.raises(InputError) as err:
        load(path, role, fmt)
    assert err.value.where is not None


def test_yolo_numbers_are_ascii(tmp_path):
    root = tmp_path / "ds"
    put(root / "data.yaml", "val: images/val\nnames:\n  0: cat\n")
    (root / "images/val").mkdir(parents=True)
    (root / "images/val/a.png").write_bytes((SAMPLE / "yolo/images/val/street_02.png").read_bytes())
    put(root / "labels/val/a.txt", "0 0.5 0.5 0.٢ 0.2\n")
    with pytest.raises(InputError) as err:
        load(str(root / "data.yaml"), "gt", "yolo")
    assert err.value.where == 1 and "ASCII" in err.value.message


# -- detection, batch folders --------------------------------------------------------


def test_a_json_file_that_is_csv_is_not_read_as_csv(tmp_path):
    path = put(tmp_path / "p.json", "image,label,score,xmin,ymin,xmax,ymax\na,cat,1,1,1,2,2\n")
    with pytest.raises(InputError, match="named .json but not JSON: it looks like CSV"):
        detect_format(path)
    assert load(path, "pred", "csv").format == "csv"  # asked for by name, it is read


def test_a_json_file_with_a_byte_order_mark_is_read(tmp_path):
    gt = put(tmp_path / "gt.json", b"\xef\xbb\xbf" + json.dumps(coco_gt()).encode())
    assert detect_format(gt) == "coco"
    assert len(load(gt, "gt")) == 2


def test_a_gzipped_json_file_is_detected_by_its_content(tmp_path):
    path = put(tmp_path / "p.json.gz", gzip.compress(json.dumps(coco_preds()).encode()))
    assert detect_format(path) == "coco"
    assert len(load(path, "pred")) == 2


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_before_detection_reads_them(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    with pytest.raises(InputError, match="a device"):
        detect_format(device)


def test_notes_beside_a_batch_are_skipped_and_named(tmp_path):
    runs = tmp_path / "runs"
    for name in ("a.json", "b.json"):
        put(runs / name, coco_preds())
    put(runs / "notes.txt", "trained on tuesday\n")
    put(runs / "README.md", "# runs\n")
    assert is_batch_folder(str(runs))
    assert prediction_files([str(runs)]) == [str(runs / "a.json"), str(runs / "b.json")]
    assert stray_files([str(runs)]) == [str(runs / "README.md"), str(runs / "notes.txt")]
    r = run(put(tmp_path / "gt.json", coco_gt()), str(runs))
    assert "notes.txt: not a .json file; skipped" in r.err


def test_a_folder_of_label_files_with_a_stray_json_is_not_a_batch(tmp_path):
    for i in range(3):
        put(tmp_path / "labels" / f"{i}.txt", "cat 1 1 2 2\n")
    put(tmp_path / "labels" / "meta.json", {})
    assert not is_batch_folder(str(tmp_path / "labels"))
    assert not is_batch_folder(str(SAMPLE / "labelme/preds"))


# -- baselines of the wrong shape -----------------------------------------------------


@pytest.fixture(scope="module")
def baseline() -> dict:
    r = run(str(SAMPLE / "coco/gt.json"), str(SAMPLE / "coco/preds.json"), "-f", "json", "-q")
    return json.loads(r.out)


@pytest.mark.parametrize(
    ("edit", "where", "found"),
    [
        (lambda d: [d], None, "a list"),
        (lambda d: {}, None, "an object without them"),
        (lambda d: {k: v for k, v in d.items() if k != "protocol"}, "$", "none"),
        (lambda d: {k: v for k, v in d.items() if k != "params"}, "$", "none"),
        (lambda d: {**d, "summary": list(d["summary"].values())}, "summary", "a list"),
        (lambda d: {**d, "params": list(d["params"].items())}, "params", "a list"),
        (lambda d: {**d, "per_class": {c["class"]: c for c in d["per_class"]}}, "per_class",
         "an object"),
        (lambda d: {**d, "per_class": [c["class"] for c in d["per_class"]]}, "per_class[0]",
         "the string"),
        (lambda d: {**d, "summary": {**d["summary"], "AP": "high"}}, "summary.AP",
         "the string 'high'"),
        (lambda d: {**d, "schema_version": True}, "schema_version", "a boolean"),
        (lambda d: {**d, "per_class": [{**d["per_class"][0], "AP": [1]}]}, "per_class[0].AP",
         "a list"),
        (lambda d: {**d, "bootstrap": {"replicates": {"AP": "x"}}}, "bootstrap.replicates.AP",
         "the string"),
        (lambda d: {**d, "additional_protocols": [{}]}, "additional_protocols[0]", "none"),
    ],
)  # fmt: skip
def test_a_baseline_of_the_wrong_shape_is_a_located_error(baseline, edit, where, found):
    with pytest.raises(InputError) as err:
        check_baseline(edit(json.loads(json.dumps(baseline))), "base.json")
    assert err.value.path == "base.json"
    assert err.value.where == where
    assert found in err.value.message


def test_a_real_baseline_passes_the_check(baseline):
    assert check_baseline(baseline, "base.json") is baseline


# -- options through the Python API ---------------------------------------------------


@pytest.mark.parametrize(
    ("keywords", "flag"),
    [
        ({"iou_thr": float("nan")}, "--iou-thr"),
        ({"score_thr": float("inf")}, "--score-thr"),
        ({"confidence": float("nan")}, "--confidence"),
        ({"max_dets": (1, 10, 1e99)}, "--max-dets"),
        ({"max_dets": (1.5,)}, "--max-dets"),
        ({"iou_thresholds": ()}, "--iou-thresholds"),
        ({"iou_thresholds": (0.5, 0.5)}, "--iou-thresholds"),
        ({"seed": -1}, "--seed"),
        ({"bootstrap": True}, "--bootstrap"),
        ({"workers": 100_000}, "--workers"),
        ({"image_size": (float("nan"), 1.0)}, "--image-size"),
    ],
)
def test_api_options_are_checked_as_strictly_as_the_command_line(keywords, flag):
    with pytest.raises(UsageError) as err:
        EvalOptions.of(**keywords)
    assert err.value.message.startswith(flag)


def test_api_area_ranges_need_lo_below_hi():
    from iou_eval.options import AreaRange

    with pytest.raises(UsageError, match="--area-ranges: small needs lo < hi"):
        EvalOptions.of(area_ranges=(AreaRange("small", 10.0, 1.0),))
    with pytest.raises(UsageError, match="lower bound"):
        EvalOptions.of(area_ranges=(AreaRange("small", float("nan"), 1.0),))


# -- the command line: exit codes, -o, warnings -------------------------------------------


def test_an_unreadable_file_exits_1_as_the_readme_says(tmp_path, monkeypatch):
    """click's Path type would test readability itself and exit 2; the loaders say it."""
    import iou_eval.io.source as source

    gt = put(tmp_path / "gt.json", coco_gt())
    preds = put(tmp_path / "p.json", coco_preds())
    real_open = open
    monkeypatch.setattr(os, "access", lambda *a, **k: False)  # click would ask this

    def refusing_open(path, *args, **kwargs):
        if str(path) == gt:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(source, "open", refusing_open, raising=False)
    r = run(gt, preds, expect=1)
    assert f"{gt}: cannot read: Permission denied" in r.err


def test_an_output_whose_temporary_file_cannot_be_created_is_a_usage_error(tmp_path, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    out = tmp_path / "report.json"
    r = run(str(SAMPLE / "coco/gt.json"), str(SAMPLE / "coco/preds.json"), "-o", str(out),
            expect=2)  # fmt: skip
    assert f"-o {out}: cannot create a file in {tmp_path}: permission denied" in r.err
    assert not out.exists()


def test_the_output_is_checked_before_the_work(tmp_path, monkeypatch):
    import iou_eval.api as api

    monkeypatch.setattr(api, "evaluate", lambda *a, **k: pytest.fail("evaluated"))
    gt = str(SAMPLE / "coco/gt.json")
    run(gt, str(SAMPLE / "coco/preds.json"), "-o", gt, expect=2)


def test_runtime_warnings_never_reach_the_user(monkeypatch):
    import iou_eval.api as api

    real = api.evaluate

    def noisy(*args, **kwargs):
        np.array([0.0]) / np.array([0.0])  # numpy: "invalid value encountered in divide"
        warnings.warn("a library's warning", RuntimeWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "evaluate", noisy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            r = run(str(SAMPLE / "coco/gt.json"), str(SAMPLE / "coco/preds.json"), "-j", "1")
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)]
    assert "RuntimeWarning" not in r.err


def test_a_long_message_line_is_cut_in_the_middle(tmp_path):
    r = run("iou", "1,2,3," + "4" * 50_000, "1,2,3,4", expect=2)
    assert len(r.err) < 3000
    assert "characters" in r.err


# -- worker processes end with the parent ------------------------------------------------


def test_a_worker_process_ends_when_its_parent_is_killed(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from iou_eval.engine.parallel import can_fork, start
        import os
        if not can_fork():
            print("nofork", flush=True); sys.exit(0)
        job = start(time.sleep, 600)
        print(job._pid, flush=True)
        time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if line == "nofork":
            pytest.skip("no fork here")
        child = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        assert not _alive(child), "the worker outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
