"""Escaping of data strings (class names, file names, ids) for every place they are shown.

The strings come from files other programs wrote; printed raw they can move
the cursor, recolour or clear a terminal (ESC, CR), reorder what a reader
sees (bidi overrides), forge a GitHub workflow command (a newline followed by
``::error::``), break a Markdown table (``|``), run script in an HTML report,
or run a formula when a CSV is opened in a spreadsheet.  One function per
destination; each takes the raw string and returns the text to insert.

Rules
-----
``for_terminal``
    Characters that do something other than print are replaced by visible
    escape text, as Python's ``repr`` writes them: ``\\t``, ``\\n``, ``\\r``,
    ``\\xNN`` (other C0 controls, DEL, C1 controls), ``\\uNNNN`` (bidi
    controls, line/paragraph separators, invisible spaces that make two names
    look alike, lone surrogates; a byte kept by ``surrogateescape``
    decoding shows as ``\\xNN``).
    Backslashes are left as they are (Windows paths stay readable), so
    ``\\x1b`` typed literally and a real ESC print alike: the escape is for
    safe display, not a reversible encoding.  Printable text of every script
    (accents, CJK, emoji, zero-width joiners inside emoji) is kept.
    What goes to a terminal also goes to CI logs, where the GitHub runner
    reads a workflow command from any line that starts, after spaces, with
    ``::`` (a table row whose first cell is a class name) and, in its legacy
    form, from ``##[`` anywhere in a line (``actions/runner``
    ``ActionCommand.cs``: ``TryParseV2`` after ``TrimStart``, then
    ``TryParse`` with ``IndexOf("##[")``).  So a leading ``:`` becomes
    ``\x3a`` and ``##[`` becomes ``#\x23[``.
``workflow_message`` / ``workflow_property``
    GitHub's ``@actions/core`` ``command.ts``: data ``%`` -> ``%25``, CR ->
    ``%0D``, LF -> ``%0A``; properties also ``:`` -> ``%3A`` and ``,`` ->
    ``%2C``.  With CR and LF encoded the data cannot start a second line,
    and the runner takes one command per line, so the data cannot forge one.
    :func:`workflow_command` also makes the other control characters visible
    (an ESC would recolour the log).
``markdown_cell``
    One line (CR/LF and other line breaks become a space), control
    characters made visible, ``& < > "`` as HTML entities, and a backslash
    before every other ASCII character GitHub Markdown gives a meaning to
    inside a line (``\\ ` * _ [ ] ~ | ! $``; ``$`` starts math on GitHub).
    ``@name`` mentions are not neutralised: GitHub links them whatever the
    escaping.
``html_text``
    Control characters made visible, then ``html.escape(quote=True)``.
``csv_cell``
    For text cells only.  A cell that starts with ``= + - @``, TAB, CR, LF or
    NUL (or the full-width ``＝ ＋ － ＠`` some spreadsheets also read as
    formulas) gets a leading ``'`` (OWASP's advice; spreadsheets show the
    text without it), unless the whole cell is a plain decimal number
    (``-1``, ``+2.5e3``), which a spreadsheet reads as that number, never
    as a formula.  :func:`csv_text` writes rows with commas, quotes, CR and
    LF quoted (the csv module with ``lineterminator="\\n"`` leaves a lone CR
    bare).
``json_for_logs``
    Serialized JSON printed to a CI log: ``##[`` becomes ``#\\u0023[``.
    JSON has no ``#`` outside strings, so the document decodes to the same
    value; its indented lines never start with ``:``.  (CSV has no such
    escape: in CI, write CSV with ``-o``.)
``xml_text`` / ``xml_attribute``
    XML 1.0 (a JUnit report).  A character XML cannot carry at all (C0
    controls other than TAB, LF, CR; lone surrogates; U+FFFE, U+FFFF) is
    made visible as :func:`for_terminal` shows it; ``& < >`` (and ``"`` in an
    attribute) become entities; TAB, CR, C1 controls, bidi controls,
    invisible characters and line separators become character references
    (exact: a parser reads the same character back), and so do LF in an
    attribute (a parser would read a space) and, as for ``json_for_logs``,
    the ``#`` of ``##[`` and a ``:`` that starts a line.  What is written
    then holds no character that acts on a terminal and no workflow
    command, and parses to the original string wherever XML can hold it.
``excerpt``
    At most ``limit`` characters of an offending token for an error message:
    the head, ``…``, the tail and the total length, escaped for the terminal.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence

# Format characters that reorder or hide text (Trojan Source, CVE-2021-42574),
# and invisible characters that make two different names print alike.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE = "\u200b\u2060\ufeff"
_UNSAFE_CATEGORIES = {"Cc", "Cs", "Zl", "Zp"}  # controls, lone surrogates, line separators
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _is_unsafe(ch: str) -> bool:
    return ch in _BIDI or ch in _INVISIBLE or unicodedata.category(ch) in _UNSAFE_CATEGORIES


def _visible(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        # A byte that was not UTF-8, kept by ``surrogateescape`` (file names
        # from os.listdir): show the byte.
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# Fast path: plain printable ASCII needs no work (most names are).
_PLAIN = re.compile(r"[\x20-\x7e]*\Z")


def for_terminal(s: object) -> str:
    """``s`` as text that prints as itself: control and format characters as visible escapes.

    >>> for_terminal("cat\\x1b[2J")
    'cat\\\\x1b[2J'
    """
    text = s if isinstance(s, str) else str(s)
    if not _PLAIN.match(text):
        text = "".join(_visible(ch) if _is_unsafe(ch) else ch for ch in text)
    if "##[" in text or text.lstrip().startswith(":"):
        text = _LEGACY_COMMAND.sub(r"#\\x23[", text)
        text = _LEADING_COLON.sub(r"\1\\x3a", text, count=1)
    return text


# Workflow commands the GitHub runner would read from a line of output.
_LEGACY_COMMAND = re.compile(r"##\[")
# .NET's TrimStart() drops every Unicode space (NBSP, U+3000 …), as \s does.
_LEADING_COLON = re.compile(r"^(\s*):")


def one_line(s: object) -> str:
    """:func:`for_terminal`, but line breaks become a space instead of ``\\n``."""
    text = s if isinstance(s, str) else str(s)
    text = re.sub(r"\r\n|[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]", " ", text)
    return for_terminal(text)


def workflow_message(s: object) -> str:
    """The data part of a GitHub workflow command (``::error::DATA``), as ``@actions/core`` escapes it."""
    text = s if isinstance(s, str) else str(s)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(s: object) -> str:
    """A property value of a workflow command (``file=…``, ``title=…``)."""
    return workflow_message(s).replace(":", "%3A").replace(",", "%2C")


def _visible_except_newlines(text: str) -> str:
    return "".join(_visible(ch) if ch not in "\r\n" and _is_unsafe(ch) else ch for ch in text)


def workflow_command(command: str, message: object, **properties: object) -> str:
    """One line ``::command k=v,k=v::message``; empty or None properties are left out.

    ``command`` is ours (``error``, ``warning``, ``notice``), never data.  CR
    and LF are percent-encoded (the runner decodes them back into the
    annotation); other control characters are made visible.
    """
    if not re.fullmatch(r"[a-z][a-z-]*", command):
        raise ValueError(f"not a workflow command name: {command!r}")
    props = ",".join(
        f"{key}={workflow_property(_visible_except_newlines(str(value)))}"
        for key, value in properties.items()
        if value is not None and str(value) != ""
    )
    head = f"::{command} {props}::" if props else f"::{command}::"
    return head + workflow_message(_visible_except_newlines(str(message)))


_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_MD_BACKSLASH = set("\\`*_[]~|!$")


def markdown_cell(s: object) -> str:
    """Text for one cell of a GitHub Markdown table: one line, no markup, no HTML."""
    out = []
    for ch in one_line(s):
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif ch in _MD_BACKSLASH:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def json_for_logs(text: str) -> str:
    """Serialized JSON that the GitHub runner cannot read a legacy ``##[command]`` from.

    Exact: ``#`` occurs only inside JSON strings, where ``\\u0023`` is the same character.
    """
    return text.replace("##[", "#\\u0023[")


def html_text(s: object) -> str:
    """Text for HTML content or a quoted attribute value."""
    return html.escape(for_terminal(s), quote=True)


def _xml_legal(ch: str) -> bool:
    """True when XML 1.0 can hold ``ch`` (its ``Char`` production)."""
    code = ord(ch)
    if code < 0x20:
        return ch in "\t\n\r"
    return not (0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF))


_XML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _xml(text: str, keep: str) -> str:
    out = []
    for ch in text:
        if ch in _XML_ENTITIES:
            out.append(_XML_ENTITIES[ch])
        elif ch in keep:
            out.append(ch)
        elif not _xml_legal(ch):
            out.append(_visible(ch))
        elif ch in "\t\r\n" or _is_unsafe(ch) or "\x80" <= ch <= "\x9f":
            out.append(f"&#{ord(ch)};")
        else:
            out.append(ch)
    shown = "".join(out)
    # What a CI log would read as a workflow command: '#' and ':' as references.
    shown = _LEGACY_COMMAND.sub("#&#35;[", shown)
    return _XML_LEADING_COLON.sub(r"\1&#58;", shown)


_XML_LEADING_COLON = re.compile(r"^([^\S\n]*):", re.M)


def xml_text(s: object) -> str:
    """Text for XML element content (lines kept); see the module's rules."""
    text = s if isinstance(s, str) else str(s)
    return _xml(text, "\n")


def xml_attribute(s: object) -> str:
    """Text for a double-quoted XML attribute value (one line); see the module's rules."""
    text = s if isinstance(s, str) else str(s)
    return _xml(text, "")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\x00", "＝", "＋", "－", "＠")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z", re.ASCII)


def csv_cell(s: object) -> str:
    """A text cell for CSV: a leading ``'`` where a spreadsheet would read a formula.

    Numbers written as text (``-1``) are left alone; see the module's rules.
    """
    text = s if isinstance(s, str) else str(s)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def csv_text(rows: Iterable[Sequence[object]]) -> str:
    """Rows as CSV text: ``str`` cells through :func:`csv_cell`, others (numbers, None) as they are.

    A field holding a comma, a quote, CR or LF is quoted (quotes doubled);
    lines end with ``\\n``.  Not the csv module: with ``lineterminator="\\n"``
    it (and pandas' ``to_csv``) leaves a lone CR unquoted, which readers take
    for the end of a row.
    """
    lines = []
    for row in rows:
        line = ",".join(_csv_field(v) for v in row)
        # One empty field would be a blank line, which readers skip.
        lines.append('""' if not line and len(row) else line)
    return "".join(line + "\n" for line in lines)


_CSV_QUOTE = re.compile(r'[,"\r\n]')


def _csv_field(value: object) -> str:
    if value is None:
        return ""
    text = csv_cell(value) if isinstance(value, str) else str(value)
    if _CSV_QUOTE.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def excerpt(token: str | bytes, limit: int = 80) -> str:
    """A short, quoted, terminal-safe excerpt of ``token`` for an error message.

    ``'short token'`` when it fits in ``limit`` characters once escaped;
    otherwise ``'head…tail' (N characters)`` (``N bytes`` for a bytes token),
    about ``limit`` + 30 characters at most however long the token: only the
    first and last ``limit`` characters are ever looked at.
    """
    if isinstance(token, bytes):
        unit = "bytes"
        head_raw = token[:limit].decode("utf-8", "surrogateescape")
        tail_raw = token[-limit:].decode("utf-8", "surrogateescape")
    else:
        unit = "characters"
        head_raw, tail_raw = token[:limit], token[-limit:]
    if len(token) <= limit:
        whole = for_terminal(head_raw)
        if len(whole) <= limit:
            return f"'{whole}'"
    half = max(1, (limit - 1) // 2)
    head = "".join(_fit([for_terminal(ch) for ch in head_raw], half))
    tail = "".join(reversed(_fit([for_terminal(ch) for ch in reversed(tail_raw)], half)))
    return f"'{head}…{tail}' ({len(token):,} {unit})"


def _fit(pieces: list[str], n: int) -> list[str]:
    """The leading ``pieces`` whose joined length is at most ``n`` (an escape is never split)."""
    out: list[str] = []
    used = 0
    for p in pieces:
        if used + len(p) > n:
            break
        out.append(p)
        used += len(p)
    return out


def quoted(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, escaped for a terminal and cut to an excerpt when long.

    For ids and names read from files: ``'cat'``, ``7``, ``'a…z' (N characters)``.
    """
    text = repr(value)
    shown = for_terminal(text)
    if len(shown) <= limit:
        return shown
    return excerpt(text, limit)
