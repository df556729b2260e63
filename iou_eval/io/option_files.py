"""The files that options name, read once: class names, class maps, id lists, slices.

Option records (:mod:`iou_eval.options`) are plain data: ``--names FILE``,
``--class-map FILE``, ``--img-ids @FILE`` and ``--slices FILE`` stay the text
the user gave until :func:`resolve` reads what they name and checks the
format names against the registry, once, before anything is loaded.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
from typing import Any

from iou_eval.data.dataset import Key, normalize_id
from iou_eval.data.subsets import Slices, _key, slices_from_pairs
from iou_eval.errors import InputError, UsageError
from iou_eval.escape import excerpt
from iou_eval.io.loaders.common import read_bytes
from iou_eval.io.source import decode_text, display_name, read_input
from iou_eval.numbers import check_number, parse_float
from iou_eval.options import EvalOptions, ReadOptions


def read_names(path: str) -> tuple[str, ...]:
    """Class names, one per line (blank lines skipped)."""
    text = decode_text(read_bytes(path), path)  # not UTF-8: an error at line:column
    names = [ln.strip() for ln in text.splitlines() if ln.strip()]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise InputError(path, f"class name {excerpt(n)} is listed twice")
        seen.add(n)
    return tuple(names)


def inline_class_map(text: str) -> dict[Key, Key] | None:
    """``FROM=TO[,FROM=TO...]`` given on the command line, or None when ``text`` is a file's path.

    ``small_vehicle=small-vehicle,3=2``: each prediction class id (or name)
    to the ground truth's; a path that exists is a file even with ``=`` in it.
    """
    if "=" not in text or os.path.exists(text):
        return None
    out: dict[Key, Key] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        k, eq, v = part.partition("=")
        if not eq or not k.strip() or not v.strip() or "=" in v:
            raise UsageError(
                f"--class-map: expected FROM=TO pairs separated by commas, got {part!r}"
            )
        key = normalize_id(k.strip())
        if key in out:
            raise UsageError(f"--class-map: class {key!r} is mapped twice")
        out[key] = normalize_id(v.strip())
    if not out:
        raise UsageError(f"--class-map: expected FROM=TO pairs, got {text!r}")
    return out


def read_class_map(path: str) -> dict[Key, Key]:
    """A class map file: prediction class id -> ground-truth class id.

    Either a JSON object (``{"1": 0, "2": 1}``) or text lines of two tokens,
    ``from to``, separated by blanks, a comma, a tab or a colon (``#``
    starts a comment).  Ids are whole numbers or names; a key listed twice
    is an error naming the line.
    """
    text = decode_text(read_input(path), path).strip()
    name = display_name(path)
    pairs: list[tuple[Any, Any, int | None]] = []
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(name, f"malformed JSON: {exc.msg}", where=exc.lineno) from None
        pairs += [(k, v, None) for k, v in doc.items()]
    else:
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.split("#", 1)[0].replace(",", " ").replace(":", " ").split()
            if not line:
                continue
            if len(line) != 2:
                raise InputError(
                    name, f"expected 'from to' (two class ids), got {raw.strip()!r}", where=number
                )
            pairs.append((line[0], line[1], number))
    out: dict[Key, Key] = {}
    for k, v, where in pairs:
        try:
            key, value = normalize_id(k), normalize_id(v)
        except ValueError as exc:
            raise InputError(name, f"class ids: {exc}", where=where or k) from None
        if key in out:
            raise InputError(name, f"class {key!r} is mapped twice", where=where or k)
        out[key] = value
    if not out:
        raise InputError(name, "the class map lists no classes")
    return out


def read_id_list(text: str, flag: str) -> tuple[Key, ...]:
    """``"1,2,3"`` or ``"@FILE"`` (one id per line; blank lines and ``#`` comments skipped)."""
    if text.startswith("@"):
        path = text[1:]
        lines = read_bytes(path).decode("utf-8-sig", errors="replace").splitlines()
        items = [ln.split("#", 1)[0].strip() for ln in lines]
        where = f"{flag} {path}"
    else:
        items = [p.strip() for p in text.split(",")]
        where = flag
    ids = tuple(dict.fromkeys(_key(i) for i in items if i))
    if not ids:
        raise UsageError(f"{where}: expected at least one id, got {text!r}")
    return ids


def id_tuple(value, flag: str) -> tuple[Key, ...] | None:
    """An option's ids as a tuple, from text (see :func:`read_id_list`) or any iterable of ids."""
    if value is None:
        return None
    if isinstance(value, str):
        return read_id_list(value, flag)
    ids = tuple(dict.fromkeys(_key(str(v)) if not isinstance(v, int) else v for v in value))
    if not ids:
        raise UsageError(f"{flag}: expected at least one id")
    return ids


def read_slices(path: str) -> Slices:
    """A slices file: CSV ``image_id,slice`` (one row per pair) or JSON ``{"<image_id>": [slice, ...]}``."""
    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    json_like = text.lstrip()[:1] in ("{", "[")
    pairs = _json_pairs(path, text) if json_like else _csv_pairs(path, text)
    return slices_from_pairs(pairs, path)


def slices_value(value) -> Slices | None:
    """An option's slices: a path, a :class:`Slices`, or a mapping ``{image_id: [slice, ...]}``."""
    if value is None or isinstance(value, Slices):
        return value
    if isinstance(value, str):
        return read_slices(value)
    if isinstance(value, dict):
        return slices_from_pairs(_mapping_pairs("<memory>", value))
    raise UsageError(f"slices: expected a file path or a mapping, got {type(value).__name__}")


def _json_pairs(path: str, text: str) -> list[tuple[Key, str]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"malformed JSON: {exc.msg}", where=f"{exc.lineno}:{exc.colno}"
        ) from exc
    return _mapping_pairs(path, doc)


def _mapping_pairs(path: str, doc) -> list[tuple[Key, str]]:
    if not isinstance(doc, dict):
        raise InputError(path, 'expected a JSON object {"<image_id>": ["slice", ...]}')
    pairs = []
    for image, names in doc.items():
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise InputError(
                path,
                f"image {image!r}: expected a list of slice names, got {json.dumps(names)[:60]}",
                where=f"[{json.dumps(str(image))}]",
            )
        pairs += [(_key(str(image)), n) for n in names]
    return pairs


def _csv_pairs(path: str, text: str) -> list[tuple[Key, str]]:
    rows = list(csv.reader(io.StringIO(text)))
    header = [c.strip().lower() for c in rows[0]] if rows else []
    if "image_id" not in header or "slice" not in header:
        raise InputError(
            path,
            f"expected a CSV header with image_id and slice, got {','.join(header) or 'nothing'}",
            where=1,
            hint='or a JSON object {"<image_id>": ["slice", ...]}',
        )
    i, s = header.index("image_id"), header.index("slice")
    pairs = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(i, s) or not row[i].strip() or not row[s].strip():
            raise InputError(path, f"expected image_id,slice, got {','.join(row)!r}", where=line)
        pairs.append((_key(row[i]), row[s].strip()))
    return pairs


def check_formats(read: ReadOptions) -> None:
    """``--gt-format`` / ``--pred-format`` name formats of the registry, or are None (detect)."""
    from iou_eval.io.loaders.registry import format_names

    known = format_names()
    for name, value in (("--gt-format", read.gt_format), ("--pred-format", read.pred_format)):
        if value is not None and value not in known:
            raise UsageError(f"{name}: unknown format {value!r} (known: {', '.join(known)})")


def resolve_read(read: ReadOptions) -> ReadOptions:
    """``read`` with its format names checked and its ``names`` and ``class_map`` files read."""
    check_formats(read)
    names = read_names(read.names) if isinstance(read.names, str) else read.names
    cmap = read.class_map
    if isinstance(cmap, str) and cmap != "coco80":
        cmap = tuple((inline_class_map(cmap) or read_class_map(cmap)).items())
    if names is read.names and cmap is read.class_map:
        return read
    return dataclasses.replace(read, names=names, class_map=cmap)


# --kpt-sigmas as the pipeline reads it: K numbers for every category, or
# (category id or name, K numbers) pairs; None: the default rule.
Sigmas = tuple[float, ...] | tuple[tuple[Key, tuple[float, ...]], ...] | None
_NUMBER_LIST = re.compile(r"[\s,]*[-+0-9.eE]+([\s,]+[-+0-9.eE]+)*[\s,]*")


def _sigma_list(values: Any, where: str, path: str | None = None) -> tuple[float, ...]:
    """Positive finite sigmas from numbers or number tokens; ``where`` names them in errors."""
    items = values if isinstance(values, (list, tuple)) else None
    out: list[float] = []
    for i, v in enumerate(items or []):
        try:
            number = (
                parse_float(v, where, low=0, low_open=True)
                if isinstance(v, str)
                else check_number(v, where, low=0)
            )
        except UsageError as exc:
            if path is None:
                raise
            raise InputError(path, str(exc).split(": ", 1)[-1], where=f"{where}[{i}]") from None
        if number <= 0:
            message = f"sigmas must be positive, got {number:g}"
            if path is None:
                raise UsageError(f"{where}: {message}")
            raise InputError(path, message, where=f"{where}[{i}]")
        out.append(number)
    if not out:
        message = "expected a list of keypoint sigmas such as 0.026,0.025,..."
        if path is None:
            raise UsageError(f"{where}: {message}")
        raise InputError(path, message, where=where)
    return tuple(out)


def _sigma_tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\s,]+", text.strip()) if t]


def read_kpt_sigmas(value: Any) -> Sigmas:
    """``--kpt-sigmas`` read: numbers (text or a list), a mapping, or a file of either.

    A file holds numbers separated by blanks, commas or lines, a JSON list,
    or a JSON object ``{"<category id or name>": [sigmas], ...}`` for
    categories of different K.  Every sigma is a positive finite number.
    """
    if value is None:
        return None
    if isinstance(value, dict):
        return tuple(
            (normalize_id(k) if not isinstance(k, str) else k, _sigma_list(v, f"--kpt-sigmas {k}"))
            for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return tuple((k, _sigma_list(v, f"--kpt-sigmas {k}")) for k, v in value)
        return _sigma_list(value, "--kpt-sigmas")
    text = str(value)
    if _NUMBER_LIST.fullmatch(text):
        return _sigma_list(_sigma_tokens(text), "--kpt-sigmas")
    return _sigma_file(text)


def _sigma_file(path: str) -> Sigmas:
    """The sigmas a ``--kpt-sigmas`` file holds (see :func:`read_kpt_sigmas`)."""
    text = decode_text(read_input(path), path).strip()
    name = display_name(path)
    if not text.startswith(("[", "{")):
        return _sigma_list(_sigma_tokens(text), "sigmas", name)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"malformed JSON: {exc.msg}", where=exc.lineno) from None
    if isinstance(doc, list):
        return _sigma_list(doc, "$", name)
    if not isinstance(doc, dict):
        raise InputError(
            name, f"expected sigmas or {{category: [sigmas]}}, found {type(doc).__name__}"
        )
    out = []
    for key, values in doc.items():
        if not isinstance(values, list):
            raise InputError(
                name, f"expected a list of sigmas, found {type(values).__name__}", where=key
            )
        out.append((normalize_id(key), _sigma_list(values, key, name)))
    return tuple(out)


def resolve(options: EvalOptions) -> EvalOptions:
    """``options`` with the files they name read and their format names checked (idempotent).

    ``names`` given as a path, ``class_map`` as a path, ``img_ids`` /
    ``cat_ids`` as text (``1,2`` or ``@FILE``) or ids, ``slices`` as a path
    or a mapping: each becomes the value the pipeline reads.
    """
    analysis = options.analysis
    protocol = options.protocol
    return dataclasses.replace(
        options,
        read=resolve_read(options.read),
        protocol=dataclasses.replace(protocol, kpt_sigmas=read_kpt_sigmas(protocol.kpt_sigmas)),
        analysis=dataclasses.replace(
            analysis,
            img_ids=id_tuple(analysis.img_ids, "--img-ids"),
            cat_ids=id_tuple(analysis.cat_ids, "--cat-ids"),
            slices=slices_value(analysis.slices),
        ),
    )
