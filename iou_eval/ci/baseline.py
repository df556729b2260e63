"""The shape of a ``--baseline`` document, checked before anything is read from it.

A baseline is an earlier ``--format json`` result of iou-eval (schema 1).  It
may have been edited, truncated or written by another tool, so every part
the comparison reads is checked here once, and a wrong part is an
:class:`InputError` naming the file and its JSON path (``summary.AP``),
what was expected and what was found.
"""

from __future__ import annotations

from typing import Any

from iou_eval.errors import InputError
from iou_eval.escape import excerpt

SCHEMA_VERSION = 1
_HINT = "write a baseline with: iou-eval GT PRED --format json -o baseline.json"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {excerpt(value, 40)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Checker:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, expected: str, value: Any) -> InputError:
        return InputError(
            self.path, f"expected {expected}, found {_kind(value)}", where=where, hint=_HINT
        )

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "an object", value)
        return value

    def key(self, doc: dict[str, Any], key: str, where: str) -> Any:
        if key not in doc:
            raise InputError(
                self.path, f"expected a {key!r} entry, found none", where=where, hint=_HINT
            )
        return doc[key]

    def metrics(self, value: Any, where: str) -> None:
        """An object of metric name -> number or null."""
        for name, v in self.object(value, where).items():
            if v is not None and not _is_number(v):
                raise self.fail(f"{where}.{name}", "a number or null", v)

    def block(self, doc: Any, where: str) -> None:
        """One protocol's results: protocol, params, summary, per_class, bootstrap."""
        prefix = f"{where}." if where != "$" else ""
        doc = self.object(doc, where)
        protocol = self.key(doc, "protocol", where)
        if not isinstance(protocol, str):
            raise self.fail(f"{prefix}protocol", "a protocol name", protocol)
        params = self.object(self.key(doc, "params", where), f"{prefix}params")
        iou_type = params.get("iou_type", "bbox")
        if not isinstance(iou_type, str):
            raise self.fail(f"{prefix}params.iou_type", "bbox, segm, boundary or obb", iou_type)
        self.metrics(self.key(doc, "summary", where), f"{prefix}summary")
        per_class = doc.get("per_class", [])
        if not isinstance(per_class, list):
            raise self.fail(f"{prefix}per_class", "a list of classes", per_class)
        for i, row in enumerate(per_class):
            row = self.object(row, f"{prefix}per_class[{i}]")
            name = self.key(row, "class", f"{prefix}per_class[{i}]")
            if not isinstance(name, (str, int)) or isinstance(name, bool):
                raise self.fail(f"{prefix}per_class[{i}].class", "a class name", name)
            ap = row.get("AP")
            if ap is not None and not _is_number(ap):
                raise self.fail(f"{prefix}per_class[{i}].AP", "a number or null", ap)
        if doc.get("bootstrap") is not None:
            self.bootstrap(doc["bootstrap"], f"{prefix}bootstrap")

    def bootstrap(self, value: Any, where: str) -> None:
        boot = self.object(value, where)
        reps = self.object(boot.get("replicates", {}), f"{where}.replicates")
        for name, values in reps.items():
            if not isinstance(values, list):
                raise self.fail(f"{where}.replicates.{name}", "a list of numbers", values)
            for i, v in enumerate(values):
                if v is not None and not _is_number(v):
                    raise self.fail(f"{where}.replicates.{name}[{i}]", "a number or null", v)


def check_baseline(doc: Any, path: str) -> dict[str, Any]:
    """``doc`` (a decoded JSON document) when it has the shape of an iou-eval result.

    Checks what :func:`iou_eval.ci.gates.compare_baseline` reads: the schema
    version (the integer 1), the first protocol's block (``protocol``,
    ``params``, ``summary`` of numbers or nulls, ``per_class`` rows with a
    ``class`` and a numeric ``AP``, ``bootstrap`` replicates) and each of
    ``additional_protocols``.
    """
    check = _Checker(path)
    if not isinstance(doc, dict) or "schema_version" not in doc or "summary" not in doc:
        raise InputError(
            path,
            "not an iou-eval result: expected a JSON object with schema_version and summary, "
            f"found {_kind(doc)}" + (" without them" if isinstance(doc, dict) else ""),
            hint=_HINT,
        )
    version = doc["schema_version"]
    if not _is_number(version) or version != SCHEMA_VERSION:
        raise InputError(
            path,
            f"schema_version {_kind(version)} is not supported (expected {SCHEMA_VERSION})",
            where="schema_version",
        )
    check.block(doc, "$")
    extra = doc.get("additional_protocols", [])
    if not isinstance(extra, list):
        raise check.fail("additional_protocols", "a list", extra)
    for i, block in enumerate(extra):
        check.block(block, f"additional_protocols[{i}]")
    return doc
