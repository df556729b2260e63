"""Floors: the least any Python evaluator of these files must spend, one step per process.

Usage: python floors.py STEP GT.json PRED.json

Every step starts the interpreter and imports numpy (any evaluator here needs
it), then goes one step further than ``startup``:

- ``startup``: nothing more;
- ``read``:    read both files' bytes;
- ``json``:    read and parse both with the standard library's ``json``;
- ``orjson``:  read and parse both with ``orjson.loads``;
- ``msgspec``: read and parse both with ``msgspec.json.decode`` into plain
  Python objects (generic decoding, no schema: a typed decoder that skips
  fields can beat this floor).

The benchmark times each step as a separate process, exactly like the tools.
"""

import sys

import numpy  # noqa: F401  - part of the floor: every evaluator imports it


def _read(paths: list[str]) -> list[bytes]:
    data = []
    for path in paths:
        with open(path, "rb") as f:
            data.append(f.read())
    return data


def main(step: str, *paths: str) -> None:
    if step == "startup":
        return
    data = _read(list(paths))
    if step == "read":
        return
    if step == "json":
        import json

        parsed = [json.loads(d) for d in data]
    elif step == "orjson":
        import orjson

        parsed = [orjson.loads(d) for d in data]
    elif step == "msgspec":
        import msgspec

        parsed = [msgspec.json.decode(d) for d in data]
    else:
        raise SystemExit(f"unknown step {step!r} (expected startup, read, json, orjson, msgspec)")
    del parsed


if __name__ == "__main__":
    main(*sys.argv[1:])
