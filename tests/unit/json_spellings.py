"""JSON written every way the grammar allows, and byte-level mutations of it.

Shared by the tests of the compiled COCO JSON reader (``iou_eval/io/_cocojson.c``):
they write the same records with random key order, whitespace, number
spellings, escapes and unknown keys holding any value, and compare the
reader's columns with msgspec's records.
"""

from __future__ import annotations

import json

import numpy as np

# Ways to spell a number in JSON (each must read as Python's float() reads it).
NUMBERS = [
    "0", "-0", "0.0", "-0.0", "1", "-7", "12.5", "1e3", "1E3", "1e+3", "2.5e-3", "-1.25E-2",
    "0.1", "0.30000000000000004", "123456789012345678", "9007199254740993", "1e22", "1e23",
    "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "1e-400",
    "0.000000000000000000000000012345", "123456789.123456789", "3.141592653589793238462643",
    "0.9987519383430481", "1.0000000000000002", "9007199254740992.5", "1e-22", "8.5e-23",
    "2.4703282292062328e-324", "179769313486231570000000000000000000000000e-40",
    "0.10000000000000000555111512312578270211815834045410156250",
]  # fmt: skip


def number(rng) -> str:
    """A number spelled one of many ways."""
    if rng.random() < 0.3:
        return str(rng.choice(NUMBERS))
    x = float(rng.uniform(-1e4, 1e4)) * 10.0 ** int(rng.integers(-30, 30))
    return [repr(x), f"{x:.3f}", f"{x:.17g}", f"{x:e}", f"{x:.19e}", f"{x:.2f}"][
        int(rng.integers(6))
    ]


def ws(rng) -> str:
    """JSON whitespace, mostly none."""
    if rng.random() < 0.7:
        return ""
    return "".join(rng.choice([" ", "\n", "\t", "\r"], size=int(rng.integers(1, 3))))


def unknown_value(rng, depth: int = 0) -> str:
    """Any JSON value (nested up to a few levels), as an unknown key holds it."""
    kind = int(rng.integers(8 if depth < 3 else 4))
    if kind == 0:
        return number(rng)
    if kind == 1:
        return str(rng.choice(["true", "false", "null"]))
    if kind == 2:
        return json.dumps(
            str(rng.choice(["x", 'a "quoted" word', "back\\slash", "tab\there", "/", "café"])),
            ensure_ascii=bool(rng.random() < 0.5),
        )
    if kind == 3:
        return '"\\/ and \\b\\f\\n\\r\\t \\u0041\\u00e9"'
    if kind == 7:  # a polygon
        return "[[" + ",".join(number(rng) for _ in range(2 * int(rng.integers(1, 8)))) + "]]"
    if kind in (4, 5):
        items = [unknown_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
        return "[" + ",".join(items) + "]"
    items = [f'"k{i}":{unknown_value(rng, depth + 1)}' for i in range(int(rng.integers(0, 4)))]
    return "{" + ",".join(items) + "}"


def obj(rng, fields: dict[str, str], extra: int = 3) -> str:
    """``fields`` (key -> JSON text) as an object in random order, with unknown keys."""
    fields = dict(fields)
    for i in range(int(rng.integers(0, extra))):
        fields[f"x_{i}"] = unknown_value(rng)
    items = [f'{ws(rng)}"{k}"{ws(rng)}:{ws(rng)}{v}{ws(rng)}' for k, v in fields.items()]
    order = rng.permutation(len(items))
    return "{" + ",".join(items[i] for i in order) + "}"


def listed(items: list[str], rng) -> str:
    return "[" + ws(rng) + ("," + ws(rng)).join(items) + ws(rng) + "]"


# Bytes a mutation inserts or writes: JSON's own, controls and UTF-8 pieces.
_ALPHABET = list(b'{}[],:"\\/.-+eE0123456789 \ntrufalsn') + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]


def mutations(base: bytes, seed: int, n: int):
    """``n`` copies of ``base`` with one to three bytes inserted, removed or replaced."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        text = bytearray(base)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(text)))
            kind = int(rng.integers(3))
            if kind == 0:
                text.insert(at, int(rng.choice(_ALPHABET)))
            elif kind == 1 and len(text) > 2:
                del text[at]
            else:
                text[at] = int(rng.choice(_ALPHABET))
        yield bytes(text)
