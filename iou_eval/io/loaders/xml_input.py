"""Parsing the XML formats (Pascal VOC, CVAT) without their hazards.

- No DTD: a file that declares a ``<!DOCTYPE`` or an ``<!ENTITY`` is
  refused before anything is expanded.  Expat would expand internal
  entities (a "billion laughs" file grows to gigabytes) and ElementTree
  leaves external ones (``SYSTEM "file:///etc/passwd"``) undefined; neither
  format needs a DTD, so none is read.
- Any size: the bytes are fed to the parser in pieces of :data:`CHUNK_BYTES`.
  ElementTree's ``fromstring`` hands the whole buffer to expat at once and
  fails with ``OverflowError`` beyond 2 GiB (expat takes an ``int`` length).
- Parse errors are :class:`InputError` at the line and column expat gives.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from iou_eval.errors import InputError

# Pieces fed to expat; far below the 2 GiB it can take in one call.
CHUNK_BYTES = 16 << 20
_DTD_MARKERS = (b"<!DOCTYPE", b"<!ENTITY")
# A marker cut by a piece boundary is still found: each piece is searched
# with this many bytes of the one before.
_OVERLAP = max(len(m) for m in _DTD_MARKERS) - 1


def parse_xml(data: bytes, file: str, hint: str | None = None) -> ET.Element:
    """The root element of the XML document ``data`` (read from ``file``).

    Args:
        data: the file's bytes (a BOM is fine; any length).
        file: the path, for errors.
        hint: what to say when a DTD is refused (e.g. "CVAT writes no DOCTYPE").
    """
    parser = ET.XMLParser()
    view = memoryview(data)
    tail = b""
    try:
        for start in range(0, len(view), CHUNK_BYTES):
            piece = bytes(view[start : start + CHUNK_BYTES])
            _refuse_dtd(tail + piece, file, hint)
            tail = piece[-_OVERLAP:]
            parser.feed(piece)
        return parser.close()
    except (LookupError, ValueError) as exc:
        # The XML declaration names an encoding Python lacks (encoding="u-f-8")
        # or one expat cannot read (a multi-byte one).
        raise InputError(
            file, f"the XML declares an encoding that cannot be read: {exc}", where="line 1"
        ) from None
    except ET.ParseError as exc:
        line, column = exc.position
        # ElementTree appends ": line L, column C" to expat's reason.
        reason = str(exc).split(": line ")[0]
        raise InputError(
            file, f"malformed XML: {reason} (column {column + 1})", where=f"line {line}"
        ) from None
    finally:
        view.release()


def _refuse_dtd(piece: bytes, file: str, hint: str | None) -> None:
    for marker in _DTD_MARKERS:
        if marker in piece:
            raise InputError(
                file,
                "the XML declares a DTD or entities (<!DOCTYPE, <!ENTITY), which iou-eval "
                "does not read: entities are never expanded",
                hint=hint or "remove the DOCTYPE declaration; the format needs none",
            )
