"""JUnit XML reports (``-f junit``, ``--junit FILE``): gates as test cases for GitLab and Jenkins.

Each report is read back with junitparser (what CI test views parse), checked
against the structure of the Jenkins/Surefire schema (``junit-10.xsd``) and,
when ``IOU_EVAL_JUNIT_XSD`` names a copy of that schema, validated against it
with xmlschema.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from junitparser import Failure, JUnitXml

from ..conftest import ROOT
from .helpers import run

GT = str(ROOT / "sample_data" / "coco" / "gt.json")
PREDS = str(ROOT / "sample_data" / "coco" / "preds.json")
YOLO = ROOT / "sample_data" / "yolo"
# The schema's SUREFIRE_TIME: digits, at most three decimals.
TIME = re.compile(r"[0-9]+(\.[0-9]{1,3})?\Z")


def check_structure(text: str) -> ElementTree.Element:
    """Assert the shape the Jenkins schema and GitLab's parser expect; return the root."""
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ElementTree.fromstring(text.encode())
    assert root.tag == "testsuites" and root.get("name") == "iou-eval"
    suites = list(root)
    assert suites and all(s.tag == "testsuite" for s in suites)
    for suite in suites:
        for attr in ("name", "tests", "failures", "errors"):
            assert suite.get(attr) is not None, f"testsuite without {attr}"
        tags = [c.tag for c in suite]
        assert set(tags) <= {"properties", "testcase", "system-out"}, tags
        # properties first, system-out last: the order every reader accepts.
        assert tags == sorted(tags, key=["properties", "testcase", "system-out"].index)
        cases = suite.findall("testcase")
        failed = [c for c in cases if c.find("failure") is not None]
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == len(failed)
        assert suite.get("errors") == "0" and suite.get("skipped") == "0"
        for case in cases:
            assert case.get("name") and case.get("classname", "").startswith("iou-eval.")
            assert set(c.tag for c in case) <= {"failure", "system-out"}
            for f in case.findall("failure"):
                assert f.get("message") and f.get("type")
            if case.get("time") is not None:
                assert TIME.match(case.get("time"))
        for prop in suite.iter("property"):
            assert prop.get("name") and prop.get("value") is not None
        if suite.get("time") is not None:
            assert TIME.match(suite.get("time"))
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites)
    validate_against_schema(text)
    return root


def validate_against_schema(text: str) -> None:
    """Validate against the Jenkins JUnit XSD when ``IOU_EVAL_JUNIT_XSD`` names one."""
    xsd = os.environ.get("IOU_EVAL_JUNIT_XSD")
    if not xsd:
        return
    import xmlschema

    xmlschema.XMLSchema(xsd).validate(text)


def junit(text: str) -> JUnitXml:
    check_structure(text)
    return JUnitXml.fromstring(text.encode())


def cases(xml: JUnitXml) -> dict[str, object]:
    return {case.name: case for suite in xml for case in suite}


def properties(suite) -> dict[str, str]:
    return {p.name: p.value for p in suite.properties()}


def test_junit_has_a_case_per_gate_and_the_failed_one_says_metric_value_bound_protocol():
    r = run(GT, PREDS, "-f", "junit", "--fail-under", "AP=0.99", "--fail-under", "AP50=0.5",
            "--fail-under", "AP[person]=0.1", expect=3)  # fmt: skip
    xml = junit(r.out)
    (suite,) = list(xml)
    assert (suite.name, suite.tests, suite.failures) == (PREDS, 3, 1)
    by_name = cases(xml)
    assert sorted(by_name) == ["gate AP50=0.5", "gate AP=0.99", "gate AP[person]=0.1"]
    (failure,) = by_name["gate AP=0.99"].result
    assert isinstance(failure, Failure) and failure.type == "gate"
    ap = json.loads(run(GT, PREDS, "-f", "json").out)["summary"]["AP"]
    assert failure.message == (
        f"AP=0.99 under coco: {ap:.4f} is below 0.99 (value {ap:.4f}, bound 0.99)"
    )
    assert f"value: {ap!r}" in failure.text and "protocol: coco" in failure.text
    assert by_name["gate AP50=0.5"].is_passed
    assert "verdict: passed" in by_name["gate AP50=0.5"].system_out


def test_junit_without_gates_is_one_passing_case_with_the_headline_metrics():
    r = run(GT, PREDS, "-f", "junit")
    xml = junit(r.out)
    (suite,) = list(xml)
    summary = json.loads(run(GT, PREDS, "-f", "json").out)["summary"]
    (case,) = list(suite)
    assert case.name == "evaluation" and case.is_passed and case.classname == "iou-eval.preds"
    assert f"AP {summary['AP']!r}" in case.system_out
    props = properties(suite)
    # Every summary metric, in full: a CI chart can read them back exactly.
    assert {k: float(props[k]) for k in summary} == summary
    assert props["ground_truth"] == GT and props["protocols"] == "coco"


def test_junit_baseline_drop_is_a_failing_case_per_metric(tmp_path):
    baseline = tmp_path / "baseline.json"
    run(GT, PREDS, "-f", "json", "-o", baseline)
    preds = sorted(json.loads(Path(PREDS).read_text()), key=lambda p: -p["score"])
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps(preds[3:]))
    r = run(GT, worse, "-f", "junit", "--baseline", baseline, "--max-drop", "0.01", expect=3)
    xml = junit(r.out)
    by_name = cases(xml)
    assert "baseline AP" in by_name and "baseline AP[person]" in by_name
    failed = {n: c for n, c in by_name.items() if not c.is_passed}
    (failure,) = failed["baseline AP"].result
    assert failure.type == "baseline" and "under coco: dropped" in failure.message
    assert "(baseline " in failure.message and "- 0.0100)" in failure.message
    assert next(iter(xml)).failures == len(failed)


def test_junit_gate_below_its_floor_but_not_significantly_passes_and_says_why():
    # AP is 0.5505; its bootstrap interval on 12 images reaches far above 0.56.
    r = run(GT, PREDS, "-f", "junit", "--fail-under", "AP=0.56", "--bootstrap", "50",
            "--seed", "1", "--fail-if-significant")  # fmt: skip
    case = cases(junit(r.out))["gate AP=0.56"]
    assert case.is_passed
    assert "not significantly" in case.system_out and "interval: [" in case.system_out


def doubtful_predictions(folder: Path) -> Path:
    """The sample's predictions.json cut to class ids 2..4: they fit either of Ultralytics'
    numberings (index + 1, or the index), a doubt naming ``--class-offset 0``."""
    records = json.loads((YOLO / "predictions.json").read_text())
    path = folder / "predictions.json"
    path.write_text(json.dumps([r for r in records if 2 <= r["category_id"] <= 4]))
    return path


def test_junit_doubt_is_a_passing_case_with_its_text_and_a_failure_under_strict(tmp_path):
    args = (YOLO / "data.yaml", doubtful_predictions(tmp_path), "-f", "junit")
    doubt = json.loads(run(*args[:2], "-f", "json").out)["doubts"][0]
    lenient = cases(junit(run(*args).out))["input doubts"]
    assert lenient.is_passed and f"doubt: {doubt}" in lenient.system_out
    r = run(*args, "--strict", expect=1)
    xml = junit(r.out)
    strict = cases(xml)["input doubts"]
    (failure,) = strict.result
    assert failure.type == "doubt" and failure.message.startswith("--strict: 1 doubt(s)")
    assert doubt in failure.text and next(iter(xml)).failures == 1


def test_junit_of_a_batch_is_a_suite_per_model_and_a_failing_one_per_unreadable_file(tmp_path):
    preds = json.loads(Path(PREDS).read_text())
    a, b = tmp_path / "model.a.json", tmp_path / "other" / "model.a.json"
    b.parent.mkdir()
    a.write_text(json.dumps(preds))
    b.write_text(json.dumps(preds[::2]))
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    r = run(GT, a, b, broken, "-f", "junit", "--fail-under", "AP=0.5", expect=1)
    xml = junit(r.out)
    suites = {s.name: s for s in xml}
    assert list(suites) == [str(a), str(b), str(broken)]
    assert [s.failures for s in suites.values()] == [0, 1, 1]
    (failure,) = next(iter(suites[str(broken)])).result
    assert failure.type == "input" and str(broken) in failure.message
    # One class per model; two files of one name keep their folders apart.
    classes = [next(iter(s)).classname for s in suites.values()]
    assert classes[2] == "iou-eval.broken" and classes[0] != classes[1]
    assert all(c.count(".") == 1 for c in classes)


def test_junit_file_beside_the_markdown_report_and_the_json_file(tmp_path):
    out, xml_file, doc = tmp_path / "r.md", tmp_path / "r.xml", tmp_path / "r.json"
    r = run(GT, PREDS, "-f", "markdown", "-o", out, "--junit", xml_file, "--json", doc,
            "--fail-under", "AP=0.99", expect=3)  # fmt: skip
    assert r.out == ""
    assert out.read_text().startswith("## iou-eval report")
    assert cases(junit(xml_file.read_text()))["gate AP=0.99"].is_failure
    assert json.loads(doc.read_text())["passed"] is False


def test_junit_on_stdout_is_the_document_written_to_a_file(tmp_path):
    path = tmp_path / "r.xml"
    r = run(GT, PREDS, "-f", "table", "--junit", path, "--fail-under", "AP=0.1")
    on_stdout = run(GT, PREDS, "-f", "junit", "--fail-under", "AP=0.1").out
    strip = re.compile(r' time="[0-9.]+"')
    assert strip.sub("", on_stdout) == strip.sub("", path.read_text())
    assert "Summary" in r.out


@pytest.mark.parametrize(
    ("flags", "said"),
    [(("--junit", "-"), "--junit standard output: -o writes there already"),
     (("-f", "json", "--json", "/dev/stdout"), "--json standard output: -o writes there already")],
)  # fmt: skip
def test_two_reports_on_standard_output_are_refused(flags, said):
    r = run(GT, PREDS, *flags, expect=2)
    assert said in r.err


def test_junit_in_the_file_of_another_report_is_refused_before_any_work(tmp_path):
    out = tmp_path / "r.txt"
    r = run(GT, PREDS, "-o", out, "--junit", out, expect=2)
    assert "-o writes there already" in r.err and not out.exists()


def test_junit_into_a_missing_folder_writes_no_report_at_all(tmp_path):
    out = tmp_path / "r.md"
    r = run(GT, PREDS, "-o", out, "--junit", tmp_path / "no" / "r.xml", expect=2)
    assert "--junit" in r.err or "-o" in r.err
    assert not out.exists()


HOSTILE_CLASS = "cat\x1b[2J <b>&\"'\n::error::forged ##[group\u202e"


def test_junit_escapes_hostile_class_names_and_stays_inert(tmp_path):
    gt = json.loads(Path(GT).read_text())
    person = next(c for c in gt["categories"] if c["name"] == "person")
    person["name"] = HOSTILE_CLASS
    g = tmp_path / "gt.json"
    g.write_text(json.dumps(gt))
    r = run(g, PREDS, "-f", "junit", "--fail-under", f"AP[{HOSTILE_CLASS}]=0.99", expect=3)
    xml = junit(r.out)
    (case,) = list(next(iter(xml)))
    # Exact wherever XML can hold the character; ESC shown as an escape.
    shown = HOSTILE_CLASS.replace("\x1b", "\\x1b")
    assert case.name == f"gate AP[{shown}]=0.99"
    assert case.result[0].message.startswith(f"AP[{shown}]=0.99 under coco")
    assert "\x1b" not in r.out and "\u202e" not in r.out and "##[" not in r.out
    assert not any(line.lstrip().startswith(":") for line in r.out.splitlines())


def test_doubts_become_github_warnings_and_errors_under_strict(tmp_path):
    args = (YOLO / "data.yaml", doubtful_predictions(tmp_path), "--annotations", "github")
    r = run(*args)
    warning = [ln for ln in r.out.splitlines() if ln.startswith("::warning")]
    assert len(warning) == 1
    assert warning[0].startswith("::warning title=iou-eval doubt::")
    assert "--class-offset 0" in warning[0]
    r = run(*args, "--strict", expect=1)
    assert any(ln.startswith("::error title=iou-eval doubt::") for ln in r.out.splitlines())


def test_junit_from_the_library_renderer_without_the_command():
    from iou_eval import evaluate
    from iou_eval.reporters import OutputFormat, View, renderer

    text = renderer(OutputFormat.JUNIT)(evaluate(GT, PREDS), View())
    root = check_structure(text)
    assert [c.get("name") for c in root.iter("testcase")] == ["evaluation"]


def test_junit_names_the_protocol_each_gate_read_when_several_ran():
    r = run(GT, PREDS, "--protocol", "coco,voc12", "-f", "junit", "--fail-under",
            "voc12:mAP=0.99", "--fail-under", "AP=0.1", expect=3)  # fmt: skip
    xml = junit(r.out)
    by_name = cases(xml)
    (failure,) = by_name["gate voc12:mAP=0.99"].result
    assert " under voc12: " in failure.message
    assert "protocol: coco" in by_name["gate AP=0.1"].system_out
    props = properties(next(iter(xml)))
    assert props["protocols"] == "coco,voc12" and "voc12:mAP" in props and "AP" in props


def test_junit_on_stdout_sends_the_annotations_to_stderr():
    r = run(GT, PREDS, "-f", "junit", "--annotations", "github", "--fail-under", "AP=0.99",
            expect=3)  # fmt: skip
    junit(r.out)
    assert "::error" not in r.out
    assert "::error title=iou-eval gate::AP=0.99" in r.err
