"""Frozen option records: each option named, typed, defaulted, documented and checked once.

The command line builds its options from these records' fields (flag, help,
how a string is parsed), and the Python API takes the records or plain
keywords mapped onto them in one place (:func:`EvalOptions.of`).  A new
option is one field here; the CLI and the API follow.
"""

from __future__ import annotations

import dataclasses
import math
import numbers as numbers_abc  # the standard library's number classes
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from iou_eval import numbers
from iou_eval.errors import UsageError


@dataclass(frozen=True)
class Cli:
    """How one option appears on the command line.

    Attributes:
        flag: the long flag, e.g. ``--box-format``; short: e.g. ``-p``.
        help: one line for ``--help``.
        parse: text -> value (None: the text itself, or a bool for flags).
        choices: allowed words; metavar: placeholder in ``--help``.
        is_flag: a switch; invert: the switch sets the field to False.
        envvar: an environment variable that sets it.
    """

    flag: str
    help: str
    parse: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    short: str | None = None
    is_flag: bool = False
    invert: bool = False
    envvar: str | None = None
    cli_default: str | None = None
    # A set of choices another wing knows ("formats": the loader registry's
    # names); the command line asks that wing for them.
    choices_from: str | None = None


def option(default: Any, cli: Cli | None = None) -> Any:
    """A record field with its command-line form (None: API only)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults must be immutable")
    return field(default=default, metadata={"cli": cli} if cli else {})


# -- parsing of option text ----------------------------------------------------
# One strict parser per kind lives in iou_eval.numbers (ASCII digits, finite,
# ranges checked, the option named); these adapt them to the records' types.


def parse_iou_thresholds(text: str) -> tuple[float, ...]:
    return tuple(numbers.parse_iou_thresholds(text))


def parse_max_dets(text: str) -> tuple[int, ...]:
    return tuple(numbers.parse_max_dets(text))


@dataclass(frozen=True)
class AreaRange:
    """An object-size bucket on the ground truth's ``area`` (both ends inclusive)."""

    label: str
    lo: float
    hi: float


def parse_area_ranges(text: str) -> tuple[AreaRange, ...]:
    """``small=0:1024,medium=1024:9216,large=9216:inf`` (``inf`` is pycocotools' 1e5**2)."""
    return tuple(AreaRange(*bounds) for bounds in numbers.parse_area_bounds(text))


def parse_image_size(text: str) -> tuple[float, float]:
    return numbers.parse_image_size(text)


def _parse_iou_thr(text: str) -> float:
    return numbers.parse_unit_interval(text, "--iou-thr")


def _parse_boundary_dilation(text: str) -> float:
    return numbers.parse_unit_interval(text, "--boundary-dilation")


def _parse_group_of_weight(text: str) -> float:
    return numbers.parse_unit_interval(text, "--oi-group-of-weight")


def _parse_score_thr(text: str) -> float:
    return numbers.parse_float(text, "--score-thr")


def _parse_bootstrap(text: str) -> int:
    return numbers.parse_int(text, "--bootstrap", low=0, high=numbers.MAX_BOOTSTRAP)


def normalize_class_map(cmap: Any) -> Any:
    """``--class-map`` as the records keep it: ``"coco80"``, ``(from, to)`` pairs, or a file's path.

    A path stays text until :func:`iou_eval.io.option_files.resolve` reads it.
    """
    if isinstance(cmap, str):
        return "coco80" if cmap.strip().lower() == "coco80" else cmap
    if isinstance(cmap, dict):
        return tuple(cmap.items())
    if cmap is not None:
        return tuple((k, v) for k, v in cmap)
    return None


def _integer(text: str, what: str) -> int:
    """A whole number, negative allowed (``-1``)."""
    t = text.strip()
    body = t[1:] if t[:1] in "+-" else t
    if not (body.isascii() and body.isdigit()):
        raise UsageError(f"{what}: expected a whole number such as -1, got {text!r}")
    return int(t)


def _split_names(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _given(value: Any) -> str:
    """``str '0.5,0.75'``: a value's type and a short excerpt of it, for 'got ...'."""
    from iou_eval.escape import excerpt, for_terminal

    shown = excerpt(value) if isinstance(value, str) else for_terminal(repr(value)[:120])
    return f"{type(value).__name__} {shown}"


def _listed(value: Any, parse: Callable[[str], tuple[Any, ...]], flag: str, example: str) -> tuple:
    """A list option from the Python API: its command-line text, one number, or a sequence.

    A string is parsed as the flag parses it (never iterated by character).
    """
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, numbers_abc.Real) and not isinstance(value, bool):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise UsageError(
            f"{flag}: expected a list such as {example}, got {_given(value)}"
        ) from None


def _area_range(item: Any) -> AreaRange:
    """An AreaRange, or a ``(label, lo, hi)`` triple (``inf`` is pycocotools' 1e5**2, as in text)."""
    if isinstance(item, AreaRange):
        return item
    if isinstance(item, (tuple, list)) and len(item) == 3 and isinstance(item[0], str):
        label, lo, hi = item
        if isinstance(hi, float) and hi == math.inf:
            hi = numbers.COCO_AREA_MAX
        return AreaRange(label, lo, hi)
    raise UsageError(
        "--area-ranges: expected text such as small=0:1024,large=1024:inf, a mapping "
        f"{{label: (lo, hi)}}, or (label, lo, hi) triples, got {_given(item)}"
    )


def area_ranges_of(value: Any) -> tuple[AreaRange, ...]:
    """``area_ranges`` as given to the Python API (text, a mapping, triples) as records."""
    if isinstance(value, str):
        return parse_area_ranges(value)
    if isinstance(value, Mapping):
        items = []
        for label, bounds in value.items():
            if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
                raise UsageError(
                    f"--area-ranges: expected (lo, hi) for {label!r}, got {_given(bounds)}"
                )
            items.append((label, *bounds))
        value = items
    if not isinstance(value, (tuple, list)):
        return (_area_range(value),)  # refused unless one record
    return tuple(_area_range(item) for item in value)


# -- the records -----------------------------------------------------------------

IOU_TYPES = ("bbox", "segm", "boundary", "obb", "keypoints")
# The iou types that score instance masks: the files' masks are read for them.
MASK_IOU_TYPES = ("segm", "boundary")
BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def _format_choice(text: str) -> str | None:
    return None if text == "auto" else text


@dataclass(frozen=True)
class ReadOptions:
    """How the files are read beyond what their content says."""

    gt_format: str | None = option(None, Cli(
        "--gt-format", "Format of the ground truth (detected from content by default).",
        parse=_format_choice, choices_from="formats", cli_default="auto"))  # fmt: skip
    pred_format: str | None = option(None, Cli(
        "--pred-format", "Format of the predictions.", parse=_format_choice,
        choices_from="formats", cli_default="auto"))  # fmt: skip
    box_format: str | None = option(None, Cli(
        "--box-format", "Layout of box numbers in CSV/text files (default: from the column names).",
        choices=BOX_FORMATS))  # fmt: skip
    normalized: bool = option(False, Cli(
        "--normalized", "Box numbers are fractions of the image size.", is_flag=True))  # fmt: skip
    names: tuple[str, ...] | None = option(None, Cli(
        "--names", "Class names, one per line: integer classes in text files index it (0-based).",
        metavar="FILE"))  # fmt: skip
    image_size: tuple[float, float] | None = option(None, Cli(
        "--image-size", "Image size for normalized boxes when no file gives it, e.g. 640x480.",
        parse=parse_image_size, metavar="WxH"))  # fmt: skip
    split: str | None = option(None, Cli(
        "--split", "Split to score: of a YOLO data.yaml (train, val, test...; default val), or "
        "a VOCdevkit image set (ImageSets/Main/NAME.txt; default test, when there is one).",
        metavar="NAME"))  # fmt: skip
    class_offset: int | None = option(None, Cli(
        "--class-offset", "Add N to the predictions' class ids (e.g. -1 for ids counted from 1; "
        "0 reads them as given where a numbering would be assumed).",
        parse=lambda t: _integer(t, "--class-offset"), metavar="N"))  # fmt: skip
    class_map: Any = option(None, Cli(
        "--class-map", "Map the predictions' class ids: coco80 (the 80 indices <-> COCO ids), "
        "FROM=TO pairs (car_s=car,3=2), or a FILE of 'from to' lines (or a JSON object).",
        metavar="FILE|FROM=TO,...|coco80"))  # fmt: skip
    image_id_offset: int = option(0, Cli(
        "--image-id-offset", "Add N to the predictions' image ids (e.g. 1 for ids counted one "
        "lower than the ground truth's).",
        parse=lambda t: _integer(t, "--image-id-offset"), metavar="N"))  # fmt: skip
    score_column: str | None = option(None, Cli(
        "--score-column", "The predictions' score under another name: a CSV column or a JSON "
        "key (default: score, or confidence, conf, prob...).", metavar="NAME"))  # fmt: skip
    gt_box_format: str | None = option(None, Cli(
        "--gt-box-format", "Layout of the ground truth's box numbers (wins over --box-format).",
        choices=BOX_FORMATS))  # fmt: skip
    pred_box_format: str | None = option(None, Cli(
        "--pred-box-format", "Layout of the predictions' box numbers (wins over --box-format).",
        choices=BOX_FORMATS))  # fmt: skip
    gt_normalized: bool = option(False, Cli(
        "--gt-normalized", "The ground truth's box numbers are fractions of the image size.",
        is_flag=True))  # fmt: skip
    pred_normalized: bool = option(False, Cli(
        "--pred-normalized", "The predictions' box numbers are fractions of the image size.",
        is_flag=True))  # fmt: skip
    images: str | None = option(None, Cli(
        "--images", "Folder of the images: sizes from their headers where the files give none, "
        "images without objects declared, and (-f html) the worst images drawn.",
        metavar="DIR"))  # fmt: skip
    strict: bool = option(False, Cli(
        "--strict", "Exit 1 when a warning doubts the numbers (a layout, a scale, class ids, "
        "images or classes that do not join).", is_flag=True))  # fmt: skip
    angle_unit: str = option("rad", Cli(
        "--angle-unit", "Unit of an angle column (oriented boxes as cx, cy, w, h, angle, "
        "Ultralytics' xywhr): rad or deg.", choices=("rad", "deg"),
        cli_default="rad"))  # fmt: skip

    def __post_init__(self) -> None:
        # The format names are checked against the loader registry, and the
        # files of --names and --class-map read, by iou_eval.io.option_files.
        for flag, layout in (("--box-format", self.box_format),
                             ("--gt-box-format", self.gt_box_format),
                             ("--pred-box-format", self.pred_box_format)):  # fmt: skip
            if layout is not None and layout not in BOX_FORMATS:
                raise UsageError(
                    f"{flag}: expected one of {', '.join(BOX_FORMATS)}, got {layout!r}"
                )
        self._check_classes()
        if self.angle_unit not in ("rad", "deg"):
            raise UsageError(f"--angle-unit: expected rad or deg, got {self.angle_unit!r}")
        if self.names is not None and not isinstance(self.names, str):
            object.__setattr__(self, "names", tuple(self.names))
        if self.image_size is not None:
            w, h = (float(v) for v in self.image_size)
            if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
                raise UsageError(f"--image-size: expected a positive size, got {self.image_size}")
            object.__setattr__(self, "image_size", (w, h))

    def _check_classes(self) -> None:
        offset = self.class_offset
        if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int)):
            raise UsageError(f"--class-offset: expected a whole number, got {self.class_offset!r}")
        if isinstance(self.image_id_offset, bool) or not isinstance(self.image_id_offset, int):
            raise UsageError(
                f"--image-id-offset: expected a whole number, got {self.image_id_offset!r}"
            )
        object.__setattr__(self, "class_map", normalize_class_map(self.class_map))
        if self.score_column is not None and not str(self.score_column).strip():
            raise UsageError("--score-column: expected a column or key name such as confidence")
        if self.split is not None and not str(self.split).strip():
            raise UsageError("--split: expected a split name such as val")

    def layout(self, role: str) -> str | None:
        """The box layout of the ``role`` file: its own flag, else the shared one."""
        own = self.gt_box_format if role == "gt" else self.pred_box_format
        return own or self.box_format

    def fractions(self, role: str) -> bool:
        """Whether the ``role`` file's box numbers are fractions: its own flag or the shared one."""
        return self.normalized or (self.gt_normalized if role == "gt" else self.pred_normalized)

    def class_rule(self) -> str | dict[Any, Any] | None:
        """``--class-map`` as :func:`~iou_eval.data.class_shift.apply_class_map` takes it."""
        if self.class_map is None or self.class_map == "coco80":
            return self.class_map
        return dict(self.class_map)


@dataclass(frozen=True)
class ProtocolOptions:
    """Which protocols score the files, and their parameters."""

    protocol: tuple[str, ...] = option(("auto",), Cli(
        "--protocol", "auto, coco, lvis, voc07, voc12, openimages, dota or dota-allpoint; several "
        "comma-separated are reported side by side (auto: lvis for an LVIS ground truth, else "
        "coco).",
        parse=_split_names, short="-p", cli_default="auto"))  # fmt: skip
    iou_thresholds: tuple[float, ...] | None = option(None, Cli(
        "--iou-thresholds", "COCO thresholds: 0.5:0.95:0.05 (default) or a list like 0.5,0.75.",
        parse=parse_iou_thresholds, metavar="LIST"))  # fmt: skip
    area_ranges: tuple[Any, ...] | None = option(None, Cli(
        "--area-ranges", "COCO area ranges, e.g. small=0:1024,medium=1024:9216,large=9216:inf.",
        parse=parse_area_ranges, metavar="LIST"))  # fmt: skip
    max_dets: tuple[int, ...] | None = option(None, Cli(
        "--max-dets", "COCO detections per image and class: 1,10,100.", parse=parse_max_dets,
        metavar="LIST"))  # fmt: skip
    iou_type: tuple[str, ...] = option((), Cli(
        "--iou-type", "bbox (boxes), segm (instance masks), boundary (Boundary IoU of the masks), "
        "obb (oriented boxes) or keypoints (OKS); a comma list such as bbox,segm scores each "
        "from one parse, the first at the top. Default: obb when the files hold oriented boxes "
        "(DOTA, YOLO-OBB, an angle column), else bbox.", parse=_split_names,
        metavar="LIST"))  # fmt: skip
    boundary_dilation: float | None = option(None, Cli(
        "--boundary-dilation", "--iou-type boundary: the boundary's width as a fraction of the "
        "image diagonal (boundary-iou-api's dilation ratio; default 0.02).",
        parse=_parse_boundary_dilation, metavar="X"))  # fmt: skip
    kpt_sigmas: Any = option(None, Cli(
        "--kpt-sigmas", "Keypoint sigmas of OKS: K numbers (0.026,0.025,...) or a FILE (numbers, "
        "or JSON {category: [sigmas]} when categories differ in K). Default: COCO's 17, else 1/K.",
        metavar="LIST|FILE"))  # fmt: skip
    class_agnostic: bool = option(False, Cli(
        "--class-agnostic", "Match boxes regardless of class.", is_flag=True))  # fmt: skip
    pixel_convention: str | None = option(None, Cli(
        "--pixel-convention", "Box extents: continuous (COCO default) or plus-one (VOC default).",
        choices=("continuous", "plus-one")))  # fmt: skip
    zero_id_quirk: bool = option(True, Cli(
        "--count-id-zero", "Count matches to a ground truth with annotation id 0 "
        "(pycocotools does not; off by default for parity).", is_flag=True, invert=True))  # fmt: skip
    honour_ignore: bool = option(False, Cli(
        "--honour-ignore", "Ignore ground truths flagged ignore/difficult even when not crowd "
        "(pycocotools overwrites the flag with iscrowd; off by default for parity).",
        is_flag=True))  # fmt: skip
    oi_hierarchy: str | None = option(None, Cli(
        "--oi-hierarchy", "Open Images class hierarchy JSON (bbox_labels_600_hierarchy.json): "
        "ground-truth boxes and positive image labels count for every ancestor class, negative "
        "labels for every descendant (without it, no expansion).", metavar="FILE"))  # fmt: skip
    oi_image_labels: str | None = option(None, Cli(
        "--oi-image-labels", "Open Images verified image-level labels CSV "
        "(ImageID,...,LabelName,Confidence); by default the one beside the boxes file.",
        metavar="FILE"))  # fmt: skip
    oi_group_of_weight: float = option(1.0, Cli(
        "--oi-group-of-weight", "Open Images: what a group-of box counts, hit (a true positive) "
        "or missed (a false negative): 1 in the challenge (default); the TF API's other "
        "evaluators take 0.5 or 0 (0: a group-of box counts for nothing, the predictions "
        "inside it are ignored).", parse=_parse_group_of_weight, metavar="W"))  # fmt: skip

    def __post_init__(self) -> None:
        names = (self.protocol,) if isinstance(self.protocol, str) else tuple(self.protocol)
        names = tuple(n.strip() for item in names for n in item.split(",") if n.strip())
        if not names:
            raise UsageError("--protocol: no protocol given")
        object.__setattr__(self, "protocol", names)
        types = (self.iou_type,) if isinstance(self.iou_type, str) else tuple(self.iou_type)
        types = tuple(dict.fromkeys(t.strip() for item in types for t in item.split(",")))
        given = bool(types)
        types = tuple(t for t in types if t)
        bad = [t for t in types if t not in IOU_TYPES]
        if bad or (given and not types):
            raise UsageError(
                f"--iou-type: expected bbox, segm, boundary, obb, keypoints or a comma list of "
                f"them, got {','.join(types) or 'nothing'}"
            )
        if "keypoints" in types and any(t in MASK_IOU_TYPES for t in types):
            raise UsageError(
                "--iou-type: keypoints and masks are scored in separate runs (their results "
                "files' boxes follow different loadRes branches)"
            )
        object.__setattr__(self, "iou_type", types)
        weight = numbers.check_number(
            self.oi_group_of_weight, "--oi-group-of-weight", low=0, high=1
        )
        object.__setattr__(self, "oi_group_of_weight", weight)
        if self.boundary_dilation is not None:
            if "boundary" not in types:
                raise UsageError(
                    "--boundary-dilation: applies to --iou-type boundary, which is not asked for"
                )
            ratio = numbers.check_number(
                self.boundary_dilation, "--boundary-dilation", low=0, high=1
            )
            object.__setattr__(self, "boundary_dilation", ratio)
        if self.iou_thresholds is not None:
            listed = _listed(
                self.iou_thresholds, parse_iou_thresholds, "--iou-thresholds", "0.5,0.75"
            )
            t = tuple(numbers.check_number(x, "--iou-thresholds", low=0, high=1) for x in listed)
            if not t or len(t) > numbers.MAX_THRESHOLDS or len(set(t)) != len(t):
                raise UsageError(
                    f"--iou-thresholds: expected 1 to {numbers.MAX_THRESHOLDS} distinct "
                    f"thresholds, got {len(t)} ({len(set(t))} distinct)"
                )
            object.__setattr__(self, "iou_thresholds", t)
        if self.max_dets is not None:
            md = tuple(
                int(numbers.check_number(m, "--max-dets", low=1, high=numbers.MAX_DETS_HIGH,
                                         integer=True))
                for m in _listed(self.max_dets, parse_max_dets, "--max-dets", "1,10,100")
            )  # fmt: skip
            if not md:
                raise UsageError("--max-dets: expected at least one cap such as 1,10,100")
            object.__setattr__(self, "max_dets", md)
        if self.area_ranges is not None:
            self._check_area_ranges()

    def _check_area_ranges(self) -> None:
        ranges = area_ranges_of(self.area_ranges)
        for r in ranges:
            if r.label == "all":
                raise UsageError("--area-ranges: 'all' is always evaluated; name the other ranges")
            lo = numbers.check_number(r.lo, f"--area-ranges {r.label} lower bound", low=0)
            hi = numbers.check_number(r.hi, f"--area-ranges {r.label} upper bound", low=0)
            if not lo < hi:
                raise UsageError(f"--area-ranges: {r.label} needs lo < hi, got {lo:g}:{hi:g}")
        labels = [r.label for r in ranges]
        if len(set(labels)) != len(labels):
            raise UsageError("--area-ranges: each label must be unique")
        object.__setattr__(self, "area_ranges", ranges)

    @property
    def masks(self) -> bool:
        """Whether any protocol scores instance masks (the files' masks must be read)."""
        return any(t in MASK_IOU_TYPES for t in self.iou_type)

    @property
    def keypoints(self) -> bool:
        """Whether a protocol scores keypoints (the files' keypoints must be read)."""
        return "keypoints" in self.iou_type


@dataclass(frozen=True)
class PointOptions:
    """The operating point of the count tables (and of VOC's AP)."""

    iou_thr: float = option(0.5, Cli(
        "--iou-thr", "IoU threshold of the per-class and per-image counts (VOC: of the AP).",
        parse=_parse_iou_thr, cli_default="0.5", metavar="X"))  # fmt: skip
    score_thr: float = option(0.0, Cli(
        "--score-thr", "Predictions below this score are left out of the counts.",
        parse=_parse_score_thr, cli_default="0", metavar="X"))  # fmt: skip

    def __post_init__(self) -> None:
        numbers.check_number(self.iou_thr, "--iou-thr", low=0, high=1)
        numbers.check_number(self.score_thr, "--score-thr")


@dataclass(frozen=True)
class BootstrapOptions:
    """Resampling of the images for confidence intervals."""

    bootstrap: int = option(0, Cli(
        "--bootstrap", "Resample images N times for confidence intervals of the summary metrics.",
        parse=_parse_bootstrap, metavar="N"))  # fmt: skip
    seed: int = option(0, Cli(
        "--seed", "Seed of --bootstrap.", parse=numbers.parse_seed,
        cli_default="0"))  # fmt: skip
    confidence: float = option(0.95, Cli(
        "--confidence", "Coverage of the --bootstrap intervals.",
        parse=numbers.parse_confidence, cli_default="0.95", metavar="X"))  # fmt: skip

    def __post_init__(self) -> None:
        numbers.check_number(self.confidence, "--confidence", low=0.5, high=0.999)
        numbers.check_number(
            self.bootstrap, "--bootstrap", low=0, high=numbers.MAX_BOOTSTRAP, integer=True
        )
        numbers.check_number(self.seed, "--seed", low=0, high=numbers.MAX_SEED, integer=True)


MAX_WORKERS = numbers.MAX_WORKERS


@dataclass(frozen=True)
class RuntimeOptions:
    """How the work runs; never what it computes."""

    workers: int = option(1, Cli(
        "--workers", "Processes to use (Linux; elsewhere one). Results do not depend on it.",
        parse=numbers.parse_workers, short="-j", metavar="N",
        envvar="IOU_EVAL_WORKERS", cli_default="0"))  # fmt: skip
    dask: str | None = option(None, Cli(
        "--dask", "Run on Dask: local[:N] starts N worker processes here (default 2); "
        "tcp://host:port uses a running scheduler. Results do not depend on it.",
        metavar="ADDRESS", envvar="DASK_SCHEDULER_ADDRESS"))  # fmt: skip

    # Keep what bootstrap replicates and score plots read of the matches
    # (about 40 bytes a prediction); the command line, which draws no plots,
    # keeps it only for --bootstrap.
    keep_accumulation: bool = option(True)

    def __post_init__(self) -> None:
        numbers.check_number(self.workers, "--workers", low=0, high=MAX_WORKERS, integer=True)
        if self.dask is not None:
            object.__setattr__(self, "dask", check_dask_address(self.dask))


def check_dask_address(text: str) -> str:
    """``local``, ``local:N`` (N worker processes) or a scheduler address, stripped."""
    import re

    t = str(text).strip()
    local = re.fullmatch(r"local(?::(\d+))?", t)
    if local and (local.group(1) is None or 1 <= int(local.group(1)) <= MAX_WORKERS):
        return t
    # scheme://host[:port] (tcp, tls, ucx, inproc...) or host:port; an IPv6 host in brackets.
    host = r"(\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+)"
    if not local and (
        re.fullmatch(rf"[a-z][a-z0-9+.-]*://{host}(:\d+)?(/\S*)?", t)
        or re.fullmatch(rf"{host}:\d+", t)
    ):
        return t
    raise UsageError(
        f"--dask: expected local, local:N (N in 1..{MAX_WORKERS}) or a scheduler address "
        f"like tcp://host:8786, got {text!r}"
    )


@dataclass(frozen=True)
class AnalysisOptions:
    """Which images and classes are scored, and the analyses of why a model misses."""

    img_ids: tuple[Any, ...] | None = option(None, Cli(
        "--img-ids", "Score only these images, as pycocotools' params.imgIds: ids "
        "comma-separated, or @FILE with one per line.",
        metavar="LIST"))  # fmt: skip
    cat_ids: tuple[Any, ...] | None = option(None, Cli(
        "--cat-ids", "Score only these categories (ids or names), as pycocotools' "
        "params.catIds: comma-separated, or @FILE.",
        metavar="LIST"))  # fmt: skip
    slices: Any = option(None, Cli(
        "--slices", "A summary per named subset of the images: CSV image_id,slice or JSON "
        '{"<image_id>": ["slice", ...]}; gates name one as AP@night=0.4.',
        metavar="FILE"))  # fmt: skip
    tide: bool = option(False, Cli(
        "--tide", "TIDE: the AP each error type costs (classification, localisation, both, "
        "duplicate, background, missed), tidecv's numbers.", is_flag=True))  # fmt: skip
    confusion: bool = option(False, Cli(
        "--confusion", "Confusion matrix at --iou-thr (class-agnostic matching) and the most "
        "confused class pairs.", is_flag=True))  # fmt: skip
    confusion_score_thr: float = option(0.25, Cli(
        "--confusion-score-thr", "Score threshold of --confusion only (--score-thr is not "
        "changed).", parse=lambda t: numbers.parse_float(t, "--confusion-score-thr"), cli_default="0.25",
        metavar="X"))  # fmt: skip
    calibration: bool = option(False, Cli(
        "--calibration", "Reliability bins and expected calibration error of the scores "
        "(COCO matching at --iou-thr).", is_flag=True))  # fmt: skip

    def __post_init__(self) -> None:
        # Id lists and slices (text, @FILE, a path or a mapping) are read and
        # joined to ids by iou_eval.io.option_files.
        thr = self.confusion_score_thr
        if not isinstance(thr, (int, float)) or not math.isfinite(thr):
            raise UsageError(f"--confusion-score-thr: expected a finite number, got {thr!r}")

    @property
    def any(self) -> bool:
        """Whether an analysis beyond the protocols' numbers is asked for."""
        return bool(self.tide or self.confusion or self.calibration or self.slices)


def _count(text: str, what: str) -> int:
    t = text.strip()
    if not (t.isascii() and t.isdigit()):
        raise UsageError(f"{what}: expected a non-negative integer, got {text!r}")
    return int(t)


RECORDS = (
    ReadOptions,
    ProtocolOptions,
    PointOptions,
    BootstrapOptions,
    RuntimeOptions,
    AnalysisOptions,
)


@dataclass(frozen=True)
class EvalOptions:
    """Every option of one evaluation, one record per concern."""

    read: ReadOptions = field(default_factory=ReadOptions)
    protocol: ProtocolOptions = field(default_factory=ProtocolOptions)
    point: PointOptions = field(default_factory=PointOptions)
    bootstrap: BootstrapOptions = field(default_factory=BootstrapOptions)
    runtime: RuntimeOptions = field(default_factory=RuntimeOptions)
    analysis: AnalysisOptions = field(default_factory=AnalysisOptions)

    @staticmethod
    def of(base: EvalOptions | None = None, **keywords: Any) -> EvalOptions:
        """Options from plain keywords (``iou_thr=0.75``, ``box_format="xyxy"``...).

        Each keyword is the field of the one record that has it; an unknown
        keyword is a :class:`UsageError` naming the known ones.
        """
        opts = base or EvalOptions()
        updates: dict[str, dict[str, Any]] = {}
        for key, value in keywords.items():
            slot = OWNER.get(key)
            if slot is None:
                raise UsageError(f"unknown option {key!r} (known: {', '.join(sorted(OWNER))})")
            updates.setdefault(slot, {})[key] = keyword_value(key, value)
        return dataclasses.replace(
            opts,
            **{
                slot: dataclasses.replace(getattr(opts, slot), **kw) for slot, kw in updates.items()
            },
        )


# field name -> the EvalOptions slot of the record that owns it
OWNER: dict[str, str] = {
    f.name: slot.name
    for slot in fields(EvalOptions)
    for f in fields(next(r for r in RECORDS if r.__name__ == slot.type.split(".")[-1]))
}


# field name -> its command-line form, for the keywords' text spelling
CLI_OF: dict[str, Cli] = {
    f.name: f.metadata["cli"] for r in RECORDS for f in fields(r) if "cli" in f.metadata
}


def keyword_value(name: str, value: Any) -> Any:
    """A keyword's value as its record takes it: text is parsed as the flag parses it.

    ``iou_thresholds="0.5,0.75"`` is what ``--iou-thresholds 0.5,0.75`` gives,
    ``iou_thr="0.75"`` is 0.75; a switch takes True or False only (``tide="no"``
    would otherwise read as on).
    """
    cli = CLI_OF.get(name)
    if cli is None:
        return value
    if cli.is_flag:
        if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):
            return bool(value)
        raise UsageError(f"{name}: expected True or False, got {_given(value)}")
    if isinstance(value, str) and cli.parse is not None:
        return cli.parse(value)
    return value


def cli_fields(record: type) -> Sequence[tuple[str, Cli, Any]]:
    """``(field name, Cli, default)`` of a record's command-line options."""
    return [(f.name, f.metadata["cli"], f.default) for f in fields(record) if "cli" in f.metadata]


def from_cli(record: type, values: dict[str, Any]) -> Any:
    """A record from click's values (strings and switches), parsing each once."""
    kwargs: dict[str, Any] = {}
    for name, cli, default in cli_fields(record):
        raw = values.get(name)
        if cli.is_flag:
            kwargs[name] = (not raw) if cli.invert else bool(raw)
        elif raw is None and cli.cli_default is not None and cli.parse:
            kwargs[name] = cli.parse(cli.cli_default)
        elif raw is None:
            kwargs[name] = default
        else:
            kwargs[name] = cli.parse(raw) if cli.parse else raw
    return record(**kwargs)
