"""Escaping of data strings for terminals, workflow logs, Markdown, HTML and CSV."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_eval.escape import (
    csv_cell,
    csv_text,
    excerpt,
    for_terminal,
    html_text,
    json_for_logs,
    markdown_cell,
    one_line,
    workflow_command,
    workflow_message,
    workflow_property,
)

HOSTILE = [
    "cat\x1b[2J\x1b]0;title\x07",
    "dog\r\nnext line",
    "100%",
    "::error::forged",
    "a|b",
    "<script>alert(1)</script>",
    "=cmd|' /C calc'!A0",
    "abc\u202edcba",
    "x\x9b31m",  # C1 CSI
    "tab\there",
    "del\x7f",
    "line\u2028sep",
    "zero\u200bwidth",
    "bad\udcffbyte",
]
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def unsafe_chars(text: str) -> list[str]:
    """Characters that act on a terminal or reorder text."""
    return [
        ch
        for ch in text
        if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")
        or ch in BIDI
        or ch in "\u200b\u2060\ufeff"
    ]


# -- terminal ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("cat\x1b[31m", "cat\\x1b[31m"),
        ("a\rb\nc\td", "a\\rb\\nc\\td"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b", "csi\\x9b"),
        ("nul\x00", "nul\\x00"),
        ("abc\u202edcba", "abc\\u202edcba"),
        ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
        ("line\u2028sep\u2029", "line\\u2028sep\\u2029"),
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("bad\udcffbyte", "bad\\xffbyte"),  # surrogateescape: the byte
        ("lone\ud800", "lone\\ud800"),
    ],
)
def test_terminal_controls_are_shown_as_escapes(raw, shown):
    assert for_terminal(raw) == shown


@pytest.mark.parametrize(
    "text",
    ["person", "café", "日本語", "👩‍👩‍👧 family", "C:\\data\\gt.json", "trafic-light (v2)", ""],
)
def test_terminal_keeps_printable_text_of_every_script(text):
    assert for_terminal(text) == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("::error::forged", "\\x3a:error::forged"),
        ("  ::add-mask::x", "  \\x3a:add-mask::x"),
        ("\u00a0::error::x", "\u00a0\\x3a:error::x"),  # .NET TrimStart drops NBSP
        ("a ##[error]b", "a #\\x23[error]b"),
        ("###[x", "##\\x23[x"),
        ("AP: 0.5", "AP: 0.5"),  # a colon later in the text is harmless
    ],
)
def test_terminal_text_cannot_be_read_as_a_workflow_command(raw, shown):
    assert for_terminal(raw) == shown


def runner_reads_command(line: str) -> bool:
    """The GitHub runner's two parsers (ActionCommand.cs), reduced to whether they match."""
    return line.lstrip().startswith("::") or "##[" in line


@settings(max_examples=300, derandomize=True)
@given(st.text())
def test_terminal_output_has_no_unsafe_character_and_is_stable(text):
    shown = for_terminal(text)
    assert unsafe_chars(shown) == []
    assert for_terminal(shown) == shown
    # As the first cell of an indented table row, it starts no workflow command.
    assert not runner_reads_command("  " + shown + "  0.5000")


def test_terminal_accepts_non_strings():
    assert for_terminal(12) == "12"
    assert for_terminal(None) == "None"


def test_one_line_turns_line_breaks_into_spaces():
    assert one_line("a\r\nb\nc\rd\u2028e\x85f") == "a b c d e f"
    assert one_line("x\x1by") == "x\\x1by"


# -- GitHub workflow commands ----------------------------------------------


def runner_unescape_data(s: str) -> str:
    """The runner's UnescapeData: its mapping order (\\r, \\n, then %)."""
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def runner_unescape_property(s: str) -> str:
    return (
        s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def test_workflow_escapes_follow_actions_core():
    assert workflow_message("50% done\r\n::error::x") == "50%25 done%0D%0A::error::x"
    assert workflow_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    # % first, so a literal "%0A" survives as text.
    assert workflow_message("%0A") == "%250A"


@settings(max_examples=300, derandomize=True)
@given(st.text())
def test_workflow_message_has_no_line_break_and_round_trips(text):
    escaped = workflow_message(text)
    assert "\r" not in escaped and "\n" not in escaped
    assert runner_unescape_data(escaped) == text


@settings(max_examples=300, derandomize=True)
@given(st.text())
def test_workflow_property_has_no_separator_and_round_trips(text):
    escaped = workflow_property(text)
    assert not set(escaped) & {"\r", "\n", ":", ","}
    assert runner_unescape_property(escaped) == text


def test_workflow_command_is_one_line_whose_fields_cannot_be_forged():
    line = workflow_command(
        "error", "AP[x\n::error::forged] dropped 100%", title="gate: a,b", file=None
    )
    assert line == "::error title=gate%3A a%2Cb::AP[x%0A::error::forged] dropped 100%25"
    assert line.count("\n") == 0
    # The runner splits properties at "," and the data at the second "::".
    head, _, data = line[2:].partition("::")
    assert head == "error title=gate%3A a%2Cb"
    assert runner_unescape_data(data) == "AP[x\n::error::forged] dropped 100%"


def test_workflow_command_shows_other_controls():
    assert workflow_command("warning", "a\x1b[31mb") == "::warning::a\\x1b[31mb"


def test_workflow_command_name_is_ours_only():
    with pytest.raises(ValueError):
        workflow_command("error::x", "m")


def test_json_for_logs_is_exact_and_inert():
    doc = {"class": "##[error]legacy ###[x", "n": [1, "a##[b"]}
    text = json_for_logs(json.dumps(doc, indent=2))
    assert "##[" not in text
    assert json.loads(text) == doc


@settings(max_examples=60, derandomize=True)
@given(
    st.recursive(
        st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
def test_json_for_logs_round_trips(doc):
    text = json_for_logs(json.dumps(doc, indent=2, ensure_ascii=False))
    assert json.loads(text) == doc
    assert not any(runner_reads_command(line) for line in text.split("\n"))


# -- Markdown and HTML -------------------------------------------------------


def test_markdown_cell_escapes_pipes_html_and_markup():
    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"
    assert markdown_cell("`code` *b* _i_ [l](u) ![i](u) ~s~ $m$") == (
        "\\`code\\` \\*b\\* \\_i\\_ \\[l\\](u) \\!\\[i\\](u) \\~s\\~ \\$m\\$"
    )
    assert markdown_cell('a & "b"') == "a &amp; &quot;b&quot;"
    assert markdown_cell("back\\slash") == "back\\\\slash"


def test_markdown_cell_is_one_line_without_controls():
    assert markdown_cell("two\r\nlines\x1b") == "two lines\\\\x1b"


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


@settings(max_examples=300, derandomize=True)
@given(st.text())
def test_markdown_cell_never_breaks_a_table_row(text):
    cell = markdown_cell(text)
    row = f"| {cell} | 0.5 |"
    assert "\n" not in cell and "\r" not in cell
    assert unescaped_pipes(row) == 3
    assert "<" not in cell and ">" not in cell
    assert unsafe_chars(cell) == []


def test_html_text():
    assert html_text("<b a=\"x\" b='y'>&") == "&lt;b a=&quot;x&quot; b=&#x27;y&#x27;&gt;&amp;"
    assert html_text("a\x1bb") == "a\\x1bb"


# -- CSV -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "cell"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("＝1+1", "'＝1+1"),
        ("person", "person"),
        ("a=b", "a=b"),
        ("", ""),
        # Plain numbers stay numbers.
        ("-1", "-1"),
        ("+2.5e3", "+2.5e3"),
        ("-.5", "-.5"),
        ("-1-1", "'-1-1"),
        ("-", "'-"),
    ],
)
def test_csv_cell_defuses_formulas_but_keeps_numbers(raw, cell):
    assert csv_cell(raw) == cell


def test_csv_text_quotes_and_defuses_text_cells_only():
    text = csv_text(
        [["class", "AP"], ["=cmd|' /C calc'!A0", -1.0], ["a,b\r\nc", None], ["-1", 0.5]]
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [
        ["class", "AP"],
        ["'=cmd|' /C calc'!A0", "-1.0"],
        ["a,b\r\nc", ""],
        ["-1", "0.5"],
    ]


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_csv_text_round_trips_through_a_csv_reader(cells):
    text = csv_text([cells])
    (row,) = list(csv.reader(io.StringIO(text, newline="")))
    assert row == [csv_cell(c) for c in cells]
    for c in row:
        assert not c.startswith(("=", "+", "@", "\t", "\r")) or re.fullmatch(r"[+-][\d.eE+-]+", c)


# -- excerpts ------------------------------------------------------------


def test_excerpt_of_a_short_token_is_the_quoted_token():
    assert excerpt("abc") == "'abc'"
    assert excerpt("a\x1bb") == "'a\\x1bb'"


def test_excerpt_of_a_long_token_has_head_tail_and_length():
    token = "H" * 10 + "x" * 10_000_000 + "T" * 10
    shown = excerpt(token, limit=40)
    assert shown.startswith("'HHHHHHHHHH") and "…" in shown
    assert shown.endswith("TTTTTTTTTT' (10,000,020 characters)")
    assert len(shown) <= 40 + 30


def test_excerpt_never_splits_an_escape_and_stays_short():
    shown = excerpt("\x1b" * 1000, limit=20)
    assert shown == "'\\x1b\\x1b…\\x1b\\x1b' (1,000 characters)"
    assert unsafe_chars(shown) == []


def test_excerpt_of_bytes_shows_invalid_bytes():
    assert excerpt(b"caf\xc3\xa9") == "'café'"
    shown = excerpt(b"\xff" * 500, limit=20)
    assert shown.endswith("(500 bytes)") and "\\xff" in shown


@settings(max_examples=200, derandomize=True)
@given(st.text(), st.integers(min_value=5, max_value=200))
def test_excerpt_is_bounded_and_safe(text, limit):
    shown = excerpt(text, limit)
    assert unsafe_chars(shown) == []
    assert len(shown) <= limit + 40


@pytest.mark.parametrize("text", HOSTILE)
def test_every_destination_neutralises_the_hostile_names(text):
    assert unsafe_chars(for_terminal(text)) == []
    assert "\n" not in markdown_cell(text) and "<script>" not in markdown_cell(text)
    assert "\n" not in workflow_command("error", text, title=text)
    assert "<script>" not in html_text(text)
    assert not csv_cell(text).startswith("=")


# -- XML (JUnit) --------------------------------------------------------------


def _xml_roundtrip(text: str) -> tuple[str, str]:
    from xml.etree import ElementTree

    from iou_eval.escape import xml_attribute, xml_text

    root = ElementTree.fromstring(f'<r a="{xml_attribute(text)}">{xml_text(text)}</r>')
    return root.get("a") or "", root.text or ""


@pytest.mark.parametrize(
    "text",
    ['a<b>&"c\'', "dog\r\nnext line", "tab\there", "abc\u202edcba", "x\x9b31m", "line\u2028sep",
     "zero\u200bwidth", "::error::forged", "a ##[group] b", "é 中 🐱", "  :indented"],
)  # fmt: skip
def test_xml_reads_back_every_character_xml_can_hold(text):
    assert _xml_roundtrip(text) == (text, text)


@pytest.mark.parametrize(
    ("raw", "read"),
    [("cat\x1b[2J", "cat\\x1b[2J"), ("nul\x00", "nul\\x00"), ("bad\udcffbyte", "bad\\xffbyte"),
     ("non\ufffe", "non\\ufffe")],
)  # fmt: skip
def test_xml_shows_characters_xml_cannot_hold_as_escapes(raw, read):
    assert _xml_roundtrip(raw) == (read, read)


@pytest.mark.parametrize("text", HOSTILE)
def test_xml_output_is_inert_in_a_terminal_and_a_ci_log(text):
    from iou_eval.escape import xml_attribute, xml_text

    for shown in (xml_text(text), xml_attribute(text)):
        assert unsafe_chars(shown.replace("\n", "")) == []
        assert for_terminal(shown.replace("\n", "")) == shown.replace("\n", "")
        assert not any(line.lstrip().startswith(":") for line in shown.split("\n"))
    assert "\n" not in xml_attribute(text)


XML_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffe\uffff").filter(
    lambda ch: ch >= " " or ch in "\t\n\r"
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(XML_CHARS))
def test_xml_round_trips_any_text_xml_can_hold(text):
    assert _xml_roundtrip(text) == (text, text)
