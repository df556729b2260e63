"""Whitespace-separated text: per-image label files and devkit results files.

Both formats are read the same way: UTF-8 (a byte-order mark is fine), one
box per line, tokens split on any run of whitespace (spaces, tabs, a stray
``\\r``), blank lines and lines whose first token starts with ``#``
skipped.  Rows keep file order; a folder's ``*.txt`` files are read in
sorted file-name order (names starting with ``.`` and sub-folders are
skipped).  ``origin`` is the 1-based line number and ``origin_file`` the
file's index in ``files``, so errors read ``folder/00003.txt:4: ...``.

Format ``txt`` — one file per image (Padilla's Object-Detection-Metrics
layout; a YOLO label folder with ``--normalized``):

- ``path`` is a folder of ``<image>.txt`` files or a single such file.  The
  image id is the file's stem as a string (``00001.txt`` -> ``"00001"``,
  not ``1``).  A file without lines is still an image: detections on it are
  false positives.
- ground truth: ``class a b c d`` and an optional 6th token ``difficult``
  (``0``/``1``, also ``true``/``false``) that becomes ``ignore``.
- predictions: ``class score a b c d``.
- ``class``: a name (without whitespace) or an integer.  With
  ``options.names`` an integer is a 0-based index into them and a name must
  be one of them; the categories are then every given name, in their order.
  Without names the categories are the classes in order of first
  appearance; an integer class is an integer id (``"07"`` -> ``7``), a name
  is its own id.
- ``a b c d``: ``options.box_format``, by default ``xywh`` (left, top,
  width, height: Padilla's convention) or, with ``options.normalized``,
  ``cxcywh`` (YOLO).

Format ``voc-results`` — the Pascal VOC devkit's detection results, one file
per class (``comp4_det_test_cat.txt``):

- lines ``image_id score x1 y1 x2 y2``: absolute ``xyxy`` unless
  ``options.box_format`` says otherwise.  Predictions only.
- Image ids are kept as strings (``"000005"``).
- The class comes from the file name's stem: the part after the last
  ``_det_<set>_`` (``comp4_det_test_traffic_light`` -> ``traffic_light``,
  ``<set>`` being one underscore-free word); without ``_det_``, the part
  after the last ``_`` (``results_cat`` -> ``cat``); without ``_``, the
  whole stem.  With ``options.names`` the class must be one of them (or an
  index into them).  An empty file is a class without detections.
- Two files naming the same class are an error (mixing ``comp3`` and
  ``comp4`` runs in one folder would double the detections).
- Rows keep file order and files sorted name order: ties in score are broken
  by this input order downstream, as in the devkit.

Normalized numbers (``options.normalized``) are fractions of the image size;
they stay fractions here (``Dataset.fractions``) and the alignment scales
them by the ground truth's sizes (see :mod:`iou_eval.data.reconcile`).  Numbers that are all within ``[0, 1]``
with some fractional ones are refused without ``--normalized``: they are
almost surely not pixels.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from iou_eval.data.box_format import BoxFormat
from iou_eval.data.dataset import Dataset, ImageTable, Key, assemble
from iou_eval.errors import InputError
from iou_eval.escape import excerpt, quoted
from iou_eval.io.loaders.common import ClassVocabulary, LoadOptions, folder_files, parse_flag
from iou_eval.io.loaders.scan import NUMBER, TEXT, scan_text_files
from iou_eval.io.source import read_source
from iou_eval.numbers import first_loose_number, is_number_token, quote_token

_FIELDS = {
    BoxFormat.XYWH: ("x", "y", "w", "h"),
    BoxFormat.XYXY: ("x1", "y1", "x2", "y2"),
    BoxFormat.CXCYWH: ("cx", "cy", "w", "h"),
}
_DEVKIT_NAME = re.compile(r"_det_[^_]+_.+\.txt$", re.IGNORECASE)
_DEVKIT_CLASS = re.compile(r"^.*_det_[^_]+_(.+)$", re.IGNORECASE)

Where = Callable[[int], tuple[str, int]]


def looks_like_devkit_results(name: str) -> bool:
    """Whether a file name reads like the devkit's ``<comp>_det_<set>_<class>.txt``."""
    return _DEVKIT_NAME.search(os.path.basename(name).removesuffix(".gz")) is not None


def results_class(stem: str) -> str:
    """The class a devkit results file's stem names (rule in the module docstring)."""
    m = _DEVKIT_CLASS.match(stem)
    if m:
        return m.group(1)
    return stem.rsplit("_", 1)[-1]


def _txt_files(path: str, what: str) -> list[str]:
    """The sorted ``*.txt`` files of a folder, or ``[path]`` for a file."""
    return folder_files(path, ".txt", what)


def _lines(file: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, tokens)`` of each data line of ``file``."""
    # The one reader: standard input, gzip, a byte-order mark (empty files are images too).
    data = read_source(file, empty_ok=True).data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            file, f"expected UTF-8 text, found the byte 0x{data[exc.start]:02x}", where=line
        ) from None
    # split("\n"), not splitlines(): form feeds and the like must not shift
    # the line numbers away from what an editor shows.
    for number, raw in enumerate(text.split("\n"), 1):
        tokens = raw.split()
        if tokens and not tokens[0].startswith("#"):
            yield number, tokens


def _located_numbers(
    cells: list[str],
    fields: Sequence[str],
    files: Sequence[str],
    file_of: list[int],
    line_of: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Where]:
    """:func:`_numbers` for rows read from ``files``, with the rows' origin columns.

    ``file_of`` and ``line_of`` give each row's file index and line.  Returns
    ``values[N, F]``, ``origin_file[N]`` int32, ``origin[N]`` int64 and the
    row locator for later errors.
    """
    origin_file = np.asarray(file_of, dtype=np.int32)
    origin = np.asarray(line_of, dtype=np.int64)

    def where(row: int) -> tuple[str, int]:
        return files[int(origin_file[row])], int(origin[row])

    return _numbers(cells, fields, where), origin_file, origin, where


def _numbers(cells: list[str], fields: Sequence[str], where: Where) -> np.ndarray:
    """The number tokens ``cells`` (row-major, ``len(fields)`` per row) as ``[N, F]`` float64.

    Raises a located :class:`InputError` for a token that is not a finite number.
    """
    k = len(fields)
    n = len(cells) // k
    try:
        values = np.array(cells, dtype=np.float64)
        # numpy reads what float() reads ('١٠', '1_0'); a data file's number is ASCII.
        bad = first_loose_number(cells)
    except ValueError:
        bad = next(i for i, token in enumerate(cells) if not is_number_token(token))
    if bad >= 0:
        file, line = where(bad // k)
        raise InputError(
            file, f"expected a number for {fields[bad % k]}, got {quote_token(cells[bad])}", line
        )
    values = values.reshape(n, k)
    not_finite = ~np.isfinite(values)
    if not_finite.any():
        r, j = (int(v) for v in np.argwhere(not_finite)[0])
        file, line = where(r)
        raise InputError(
            file,
            f"expected a finite number for {fields[j]}, got {excerpt(cells[r * k + j])}",
            where=line,
        )
    return values


_NORMALIZED_HINT = (
    "pass --normalized (or --gt-normalized / --pred-normalized for one file), "
    "with --image-size WxH unless the ground truth gives image sizes"
)


def _check_scale(
    boxes: np.ndarray,
    normalized: bool,
    where: Where,
    source: str,
    score: np.ndarray | None = None,
    file_of: np.ndarray | None = None,
) -> list[str]:
    """Refuse pixel boxes that look normalized.

    Normalized numbers that look like pixels are a doubt of
    :func:`iou_eval.data.plausibility.scale_doubts`, which knows which flag was given.
    ``score[N]`` and ``file_of[N]`` (per-image predictions): the hint is the
    reading that the columns support (:func:`_fraction_hint`).
    """
    if not len(boxes) or normalized:
        return []
    if boxes.min() >= 0.0 and boxes.max() <= 1.0:
        fractional = (boxes != np.floor(boxes)).any(axis=1)
        if fractional.any():
            r = int(np.flatnonzero(fractional)[0])
            file, line = where(r)
            raise InputError(
                file,
                "coordinates look normalized: every box number lies in [0, 1], "
                f"this line has {' '.join(f'{v:g}' for v in boxes[r])}",
                where=line,
                hint=_fraction_hint(boxes, score, file_of),
            )
    return []


def _fraction_hint(boxes: np.ndarray, score: np.ndarray | None, file_of: np.ndarray | None) -> str:
    """The flag that reads fraction lines sensibly, checked against their columns.

    ``class score cx cy w h`` is this format's with ``--pred-normalized``;
    Ultralytics writes ``class cx cy w h conf``: when the columns say the
    confidence is last (:func:`~iou_eval.io.loaders.yolo.guess_score_column`:
    boxes inside the image, scores falling within each file), the YOLO reader
    is named instead.
    """
    if score is None or file_of is None:
        return _NORMALIZED_HINT
    from iou_eval.io.loaders.yolo import guess_score_column

    values = np.column_stack([np.zeros(len(boxes)), score, boxes])
    guess = guess_score_column(values, file_of)
    if not guess.last:
        return (
            "the 2nd number is the score ('class score cx cy w h'): pass --pred-normalized "
            "(--normalized when the ground truth holds fractions too), with --image-size WxH "
            "unless the ground truth gives image sizes"
        )
    if guess.doubt is None:
        return (
            "these lines read as Ultralytics predictions ('class cx cy w h conf', confidence "
            f"last: {guess.evidence}): pass --pred-format yolo"
        )
    return (
        "these lines read as Ultralytics predictions ('class cx cy w h conf'): pass --pred-format "
        "yolo; if the score is the 2nd number ('class score cx cy w h'), pass --pred-normalized"
    )


def _images(
    image_ids: Sequence[Key],
    file_names: Sequence[str | None] | None,
    image_idx: list[int] | np.ndarray,
    boxes: np.ndarray,
    options: LoadOptions,
    where: Where,
    source: str,
    score: np.ndarray | None = None,
    file_of: np.ndarray | None = None,
) -> tuple[ImageTable, np.ndarray, list[str]]:
    """The image table ``[I]``, the rows' image column ``[N]`` and scale warnings.

    Checks that normalized boxes can find their image's size, and warns
    when the numbers do not look like the convention asked for.
    """
    warnings = _check_scale(boxes, options.normalized, where, source, score, file_of)
    # Sizes are the alignment's business: a text file gives none.
    images = ImageTable.build(image_ids, file_names)
    return images, np.asarray(image_idx, dtype=np.int64), warnings


def _check_width(
    tokens: list[str], allowed: tuple[int, ...], expected: str, pred: bool, file: str, line: int
) -> None:
    """A located error, with a hint at the likely mix-up, for a line of the wrong width."""
    k = len(tokens)
    if k in allowed:
        return
    hint = None
    if pred and k == 5:
        hint = "predictions need a score after the class; is this the ground truth?"
    elif pred and _task1_pixels(tokens):
        hint = (
            "an 'image score x1 y1 ... x4 y4' line in pixels is a DOTA task-1 result: the devkit "
            "names its files Task1_<class>.txt (--pred-format dota-results reads them)"
        )
    elif k >= 7:
        hint = (
            "a polygon 'class x1 y1 x2 y2 ...' is YOLO-seg: pass "
            f"--{'pred' if pred else 'gt'}-format yolo"
        )
    elif k == 1:
        hint = (
            "a class-names file (such as classes.txt) is not an image: "
            "pass it with --names and keep it out of the folder"
        )
    raise InputError(file, f"{expected}, got {k}", where=line, hint=hint)


def _task1_pixels(tokens: list[str]) -> bool:
    """``image score x1 y1 ... x4 y4``: ten fields, nine numbers after the first, some beyond 1
    (Ultralytics' OBB lines, ``class x1 y1 ... x4 y4 conf``, are fractions)."""
    if len(tokens) != 10 or not all(is_number_token(t) for t in tokens[1:]):
        return False
    return any(abs(float(t)) > 1 for t in tokens[2:])


def _difficult(token: str, file: str, line: int) -> bool:
    flag = parse_flag(token, numeric=False)
    if flag is None:
        raise InputError(
            file,
            f"expected 0 or 1 for difficult (6th field), got {quoted(token)}",
            where=line,
            hint="a line 'class score x y w h' is a prediction; is this the predictions folder?",
        )
    return flag


def _line_shape(
    box_fields: tuple[str, ...], pred: bool
) -> tuple[tuple[str, ...], tuple[int, ...], str]:
    """A data line's number fields after the class, its allowed token counts, and the
    message that says so."""
    names = " ".join(box_fields)
    if pred:
        return ("score", *box_fields), (6,), f"expected 'class score {names}' (6 fields)"
    expected = f"expected 'class {names}' or 'class {names} difficult' (5 or 6 fields)"
    return box_fields, (5, 6), expected


def _image_stem(file: str, seen: dict[str, str]) -> str:
    """The image id a text file names (its stem), which no other file may share."""
    stem = os.path.splitext(os.path.basename(file).removesuffix(".gz"))[0]
    if stem in seen:
        raise InputError(
            file, f"image id {quoted(stem)} is also the id of {seen[stem]}", hint="rename one file"
        )
    seen[stem] = file
    return stem


def load_txt(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read per-image text files (format ``txt``) as ground truth or predictions.

    Args:
        path: a folder of ``<image>.txt`` files, or one such file.
        role: ``"gt"`` (``class a b c d [difficult]``) or ``"pred"``
            (``class score a b c d``).
        options: ``box_format`` (default ``xywh``, ``cxcywh`` when
            normalized), ``normalized``, ``names``.

    Returns:
        A :class:`Dataset` with one image per file (id = the stem, a string)
        and one row per data line; rules in the module docstring.
    """
    files = _txt_files(path, "per-image .txt files")
    box_format = options.box_format or (BoxFormat.CXCYWH if options.normalized else BoxFormat.XYWH)
    pred = role == "pred"
    shape = _line_shape(_FIELDS[box_format], pred)
    rows = _scanned_txt_rows(files, pred, options.names) or _txt_rows(
        files, pred, shape, options.names
    )
    image_ids, values, category_idx, ignore, origin_file, origin_col, classes = rows

    def where(row: int) -> tuple[str, int]:
        return files[int(origin_file[row])], int(origin_col[row])

    boxes = values[:, 1:] if pred else values
    # The text file's name is the image's file identity: reconciliation
    # joins it by stem before trying the stem as a numeric id.
    images, image_col, warnings = _images(
        image_ids,
        [os.path.basename(f).removesuffix(".gz") for f in files],
        origin_file,
        boxes,
        options,
        where,
        path,
        values[:, 0] if pred else None,
        origin_file if pred else None,
    )
    return assemble(
        source=path,
        fmt="txt",
        images=images,
        categories=classes.table(),
        image_idx=image_col,
        category_idx=category_idx,
        boxes=boxes,
        box_format=box_format,
        normalized=options.normalized,
        score=values[:, 0].copy() if pred else None,
        ignore=ignore,
        origin=origin_col,
        origin_file=origin_file,
        files=files,
        origin_label="line",
        warnings=warnings,
    )


# A txt format's rows: image ids (the stems), values[N, F], category_idx[N] int64,
# ignore[N] bool (None for predictions), origin_file[N] int32, origin[N] int64, the classes.
_TxtRows = tuple[
    list[str], np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, ClassVocabulary
]


def _txt_rows(
    files: Sequence[str],
    pred: bool,
    shape: tuple[tuple[str, ...], tuple[int, ...], str],
    names: tuple[str, ...] | None,
) -> _TxtRows:
    """The Python path of :func:`load_txt`: every line read and checked, errors located."""
    fields, allowed, expected = shape
    classes = ClassVocabulary(names)
    image_ids: list[str] = []
    seen: dict[str, str] = {}
    cells: list[str] = []
    category_idx: list[int] = []
    ignore: list[bool] = []
    image_idx: list[int] = []
    origin: list[int] = []

    for fi, file in enumerate(files):
        image_ids.append(_image_stem(file, seen))
        for line, tokens in _lines(file):
            _check_width(tokens, allowed, expected, pred, file, line)
            category_idx.append(classes.lookup(tokens[0], file, line))
            cells.extend(tokens[1:6] if pred else tokens[1:5])
            if not pred:
                ignore.append(len(tokens) == 6 and _difficult(tokens[5], file, line))
            image_idx.append(fi)
            origin.append(line)

    values, origin_file, origin_col, _ = _located_numbers(cells, fields, files, image_idx, origin)
    return (
        image_ids, values, np.asarray(category_idx, dtype=np.int64),
        None if pred else np.asarray(ignore, dtype=bool), origin_file, origin_col, classes,
    )  # fmt: skip


def _scanned_txt_rows(
    files: Sequence[str], pred: bool, names: tuple[str, ...] | None
) -> _TxtRows | None:
    """:func:`_txt_rows` by the compiled column reader (files opened and read in C, the GIL
    released), or None: not built, switched off, or anything it is not sure of (a line of the
    wrong width, a number outside the strict syntax, a class not among ``names``, a
    ``difficult`` that is not a flag, two files of one stem): the Python path reads them."""
    stems = [os.path.splitext(os.path.basename(f).removesuffix(".gz"))[0] for f in files]
    if len(set(stems)) != len(stems):
        return None
    k = 5 if pred else 4
    got = scan_text_files(files, TEXT + NUMBER * k + ("" if pred else TEXT), 6 if pred else 5)
    if got is None:
        return None
    labels = got.codes(0)
    # Distinct classes in order of first appearance: looked up in the order the rows would be.
    first = np.unique(labels.codes, return_index=True)[1]
    classes = ClassVocabulary(names)
    try:
        per_label = [
            classes.lookup(t, files[int(got.file_of[r])], int(got.lines[r]))
            for t, r in zip(labels.values, first.tolist(), strict=True)
        ]
    except InputError:
        return None
    ignore = None
    if not pred:
        flags = got.codes(k + 1)
        # a left-out difficult reads as '' (not difficult)
        words = [False if t == "" else parse_flag(t, numeric=False) for t in flags.values]
        if any(w is None for w in words):
            return None
        ignore = np.array(words, dtype=bool)[flags.codes] if words else np.zeros(0, dtype=bool)
    values = np.column_stack([got.array(i) for i in range(1, k + 1)])
    category_idx = (
        np.array(per_label, dtype=np.int64)[labels.codes] if per_label else np.zeros(0, np.int64)
    )
    return stems, values, category_idx, ignore, got.file_of.astype(np.int32), got.lines, classes


def _results_file_class(file: str, classes: ClassVocabulary, file_of_class: dict[int, str]) -> int:
    """The class a devkit results file holds (from its name); one file per class."""
    name = results_class(os.path.splitext(os.path.basename(file).removesuffix(".gz"))[0])
    if not name:
        raise InputError(
            file,
            "expected the class at the end of the file name, found none",
            hint="name results files like comp4_det_test_<class>.txt",
        )
    c = classes.lookup(name, file, None, source=" (from the file name)")
    if c in file_of_class:
        raise InputError(
            file,
            f"class {quoted(name)} already came from {file_of_class[c]}",
            hint="keep one results file per class (one competition's run) in the folder",
        )
    file_of_class[c] = file
    return c


def load_voc_results(path: str, role: str, options: LoadOptions) -> Dataset:
    """Read the devkit's per-class detection results (format ``voc-results``).

    Args:
        path: a folder of ``comp4_det_test_<class>.txt`` files, or one file.
        role: must be ``"pred"``: these files hold detections only.
        options: ``box_format`` (default ``xyxy``), ``names``, and for
            normalized numbers ``normalized``.

    Returns:
        A :class:`Dataset` with one row per line, images in order of first
        appearance (ids as strings) and one category per file (or the names);
        rules in the module docstring.
    """
    if role != "pred":
        raise InputError(
            path,
            "voc-results files hold detections (image_id score x1 y1 x2 y2), not ground truth",
            hint="give the ground truth as VOC XML, COCO JSON, CSV or per-image .txt files",
        )
    files = _txt_files(path, "devkit results files (comp4_det_test_<class>.txt)")
    box_format = options.box_format or BoxFormat.XYXY
    box_fields = _FIELDS[box_format]
    fields = ("score", *box_fields)
    expected = f"expected 'image_id score {' '.join(box_fields)}' (6 fields)"
    classes = ClassVocabulary(options.names)

    file_of_class: dict[int, str] = {}
    image_vocab: dict[str, int] = {}
    cells: list[str] = []
    category_idx: list[int] = []
    image_idx: list[int] = []
    origin: list[int] = []
    origin_file: list[int] = []

    for fi, file in enumerate(files):
        c = _results_file_class(file, classes, file_of_class)
        for line, tokens in _lines(file):
            if len(tokens) != 6:
                raise InputError(file, f"{expected}, got {len(tokens)}", where=line)
            image_idx.append(image_vocab.setdefault(tokens[0], len(image_vocab)))
            cells.extend(tokens[1:6])
            category_idx.append(c)
            origin.append(line)
            origin_file.append(fi)

    values, origin_file_col, origin_col, where = _located_numbers(
        cells, fields, files, origin_file, origin
    )
    boxes = values[:, 1:]
    images, image_col, warnings = _images(
        list(image_vocab), None, image_idx, boxes, options, where, path
    )
    return assemble(
        source=path,
        fmt="voc-results",
        images=images,
        categories=classes.table(),
        image_idx=image_col,
        category_idx=np.asarray(category_idx, dtype=np.int64),
        boxes=boxes,
        box_format=box_format,
        normalized=options.normalized,
        score=values[:, 0].copy(),
        origin=origin_col,
        origin_file=origin_file_col,
        files=files,
        origin_label="line",
        warnings=warnings,
    )
