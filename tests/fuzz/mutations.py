"""Hypothesis strategies that damage valid inputs the ways files and options go wrong.

- bytes: flip, insert, delete, duplicate or truncate, with fragments that
  break parsers (NUL, invalid UTF-8, a byte-order mark, CR, quotes,
  brackets, Unicode digits, ``nan``, ``1e999``, huge integers, deep
  nesting, control and bidi characters, gzip magic);
- tokens: one number-like token of a text file replaced by a hostile one;
- JSON values: one value somewhere in a JSON document replaced by a
  hostile value (wrong type, huge integer, NaN-like string, deep list);
- option values: hostile text for every numeric option.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

# Fragments that break parsers: the catalogue's causes in small.
HOSTILE_TEXT = [
    "", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e999", "1e-999", "0", "-0",
    "-1", "1.5", "٣", "١٠", "１0", "1²", "1_0", "0x10", "+.5", ".", "-", "1e", "1,5",
    str(2**70), str(-(2**70)), str(2**64), "9" * 400, "\x00", "\x1b[31m", "\r", "\n", "\t",
    "\u202e", "\u2028", "\ufeff", "::error::x", "##[error]x", "=1+2", '"', "'", ",", ";",
    "<", ">", "&", "&x;", "[", "]", "{", "}", ":", "%", "a" * 300, "é", "😀", "\udcff",
]  # fmt: skip
HOSTILE_BYTES = [t.encode("utf-8", "surrogateescape") for t in HOSTILE_TEXT] + [
    b"\xff", b"\xfe\xff", b"\xef\xbb\xbf", b"\xc3", b"\x80", b"\x1f\x8b", b"[" * 2000,
    b"{\"a\":" * 600, b"<!DOCTYPE a [<!ENTITY e \"x\">]>", b"<a>" * 500, b"\r\n", b"\x00" * 64,
]  # fmt: skip


@st.composite
def damaged_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to four edits."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "truncate", "replace"]))
        n = len(out)
        at = draw(st.integers(0, max(n - 1, 0)))
        if op == "flip" and n:
            out[at] = draw(st.integers(0, 255))
        elif op == "insert":
            out[at:at] = draw(st.sampled_from(HOSTILE_BYTES) | st.binary(max_size=8))
        elif op == "delete" and n:
            del out[at : at + draw(st.integers(1, 64))]
        elif op == "duplicate" and n:
            out[at:at] = out[at : at + draw(st.integers(1, 256))]
        elif op == "truncate":
            del out[at:]
        elif op == "replace" and n:
            out[at : at + draw(st.integers(1, 16))] = draw(st.sampled_from(HOSTILE_BYTES))
    return bytes(out)


_TOKEN = re.compile(rb"-?\d+(?:\.\d+)?(?:e-?\d+)?|[A-Za-z_]+")


@st.composite
def damaged_token(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one number or word replaced by hostile text."""
    spans = [m.span() for m in _TOKEN.finditer(data)]
    if not spans:
        return data
    a, b = draw(st.sampled_from(spans))
    token = draw(st.sampled_from(HOSTILE_TEXT)).encode("utf-8", "surrogateescape")
    return data[:a] + token + data[b:]


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON document, up to a few thousand."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:40]):
            out += _paths(v, (*prefix, i))
    return out


HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**70, -(2**63) - 1, 2**63, 1.5, -1e308, 1e308, 5e-324, "",
    "1", "nan", "inf", "١٠", "\x1b[2J", "a\nb", "::error::x", [], {}, [1, 2, 3], [1, 2, 3, 4, 5],
    [0, 0, 0, 0], [-5, -5, 10, 10], [1e308, 1e308, 1e308, 1e308], ["1", "2", "3", "4"],
    [[1, 2, 3, 4]], {"a": 1}, [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]], "x" * 1000,
]  # fmt: skip


@st.composite
def damaged_json(draw: st.DrawFn, data: bytes) -> bytes:
    """A JSON document with one value (or key) replaced, or removed."""
    try:
        doc = json.loads(data)
    except ValueError:
        return data
    path = draw(st.sampled_from(_paths(doc)))
    value = draw(st.sampled_from(HOSTILE_VALUES))
    if not path:
        return json.dumps(value).encode()
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[key]
    else:
        parent[key] = value
    return json.dumps(doc).encode()


def damaged(data: bytes, name: str) -> st.SearchStrategy[bytes]:
    """Any of the damages that fit the file."""
    kinds = [damaged_bytes(data), damaged_token(data)]
    if name.endswith(".json"):
        kinds.append(damaged_json(data))
    return st.one_of(*kinds)


# Numeric options, with a few valid values among the hostile ones.
OPTIONS: dict[str, list[str]] = {
    "--iou-thr": ["0.5", "1", "0"],
    "--score-thr": ["0", "0.5", "-3"],
    "--iou-thresholds": ["0.5:0.95:0.05", "0.5,0.75", "0.5:0.5:0.1", "0:1:0.001"],
    "--max-dets": ["1,10,100", "100", "5"],
    "--area-ranges": ["small=0:1024,large=1024:inf", "a=0:1"],
    "--image-size": ["640x480", "1x1"],
    "--bootstrap": ["0", "2"],
    "--seed": ["0", "7"],
    "--confidence": ["0.9", "0.5"],
    "--max-drop": ["0.01", "2%"],
    "--worst": ["1", "3"],
    "--workers": ["1", "2"],
    "--fail-under": ["AP=0.1", "AP[car]=0.2", "mAP=0.5"],
    "--protocol": ["coco", "voc07", "voc12", "coco,voc12", "dota", "dota-allpoint,coco"],
    "--iou-type": ["bbox", "obb", "bbox,obb"],
    "--angle-unit": ["rad", "deg"],
}


@st.composite
def option_text(draw: st.DrawFn, option: str) -> str:
    """Text for ``option``: valid, hostile, or glued from pieces of both."""
    pieces = OPTIONS[option] + HOSTILE_TEXT
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.sampled_from(OPTIONS[option]))
    if kind == 1:
        return draw(st.sampled_from(HOSTILE_TEXT))
    parts = draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=4))
    return draw(st.sampled_from([",", ":", "x", "=", ""])).join(parts)
