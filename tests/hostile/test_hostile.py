"""Every hostile case through the command line: the exit code, a message, no traceback,
inputs unchanged, no temporary file left, and the case's own checks."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from ..cli.helpers import Run, run
from ..conftest import ROOT
from .cases import CASES, HOSTILE_NAMES, Case, Fifo, Folder, Hardlink, Symlink

pytestmark = pytest.mark.hostile

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ISOLATED_MEMORY = 3 << 30
ISOLATED_SECONDS = 120


# -- making the folder -------------------------------------------------------


def make_files(root: Path, files: dict) -> None:
    # Folders and plain files first, links last (they point at the others).
    order = sorted(files.items(), key=lambda kv: isinstance(kv[1], Symlink | Hardlink))
    for rel, content in order:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Folder):
            path.mkdir(exist_ok=True)
        elif isinstance(content, Fifo):
            os.mkfifo(path)
        elif isinstance(content, Symlink):
            path.symlink_to(content.target)
        elif isinstance(content, Hardlink):
            os.link(root / content.target, path)
        else:
            data = content() if callable(content) else content
            path.write_bytes(data.encode() if isinstance(data, str) else data)
    # Modes last: a read-only folder must first be filled.
    for rel, content in files.items():
        if isinstance(content, Folder) and content.mode is not None:
            (root / rel).chmod(content.mode)


def snapshot(root: Path, skip: tuple[str, ...]) -> dict[str, tuple]:
    """Every entry under ``root``: its type and content hash, mode or link target."""
    out: dict[str, tuple] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if rel in skip:
                continue
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = ("file", digest, stat.S_IMODE(st.st_mode))
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return out


def temporaries(root: Path) -> list[str]:
    return [
        str(Path(folder) / n)
        for folder, dirs, names in os.walk(root)
        for n in dirs + names
        if n.startswith(".iou-eval-")
    ]


# -- running ---------------------------------------------------------------------


def run_in_process(case: Case, root: Path, monkeypatch) -> Run:
    monkeypatch.chdir(root)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    return run(*case.args, expect=None)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ISOLATED_MEMORY, ISOLATED_MEMORY))


def run_isolated(case: Case, root: Path) -> Run:
    """A subprocess with a memory limit and a timeout: a hang or a crash fails the case only."""
    env = {**os.environ, **case.env, "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "iou_eval", *case.args],
            cwd=root,
            env=env,
            capture_output=True,
            timeout=ISOLATED_SECONDS,
            preexec_fn=_limit_memory,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case.name}: no answer within {ISOLATED_SECONDS} s")
    return Run(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def prepare(case: Case, root: Path, monkeypatch) -> None:
    for out in output_args(case):
        assert not os.path.isabs(out) or out.startswith("/proc/"), f"refusing to run -o {out}"
    if case.needs == "mkfifo" and not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    if case.needs.startswith("/") and not os.path.exists(case.needs):
        pytest.skip(f"needs {case.needs}")
    if case.not_as_root and IS_ROOT:
        pytest.skip("root ignores file permissions")
    make_files(root, case.files)
    if case.setup:
        monkeypatch.chdir(root)
        for args in case.setup:
            r = run(*args, expect=None)
            assert r.code in (0, 3), f"setup {args} failed\n{r}"
    if case.edit is not None:
        name, fn = case.edit
        doc = json.loads((root / name).read_text("utf-8"))
        (root / name).write_text(json.dumps(fn(doc)))


# -- checks of the output --------------------------------------------------------

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
OUR_COMMAND = re.compile(r"^::(error|warning|notice) title=iou-eval[^:]*::")


def unsafe(text: str) -> list[str]:
    return sorted(
        {
            ch
            for ch in text
            if (unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") and ch != "\n") or ch in BIDI
        }
    )


def check_terminal_safe(r: Run, root: Path, arg: str) -> None:
    for stream, text in (("stdout", r.out), ("stderr", r.err)):
        assert unsafe(text) == [], f"{stream} carries {unsafe(text)!r}\n{r}"


def check_no_forged_commands(r: Run, root: Path, arg: str) -> None:
    """Only our own annotations may be read as workflow commands by the GitHub runner."""
    for text in (r.out, r.err):
        for line in re.split(r"\r\n|\r|\n", text):
            ours = OUR_COMMAND.match(line) is not None
            if line.lstrip().startswith("::") or "##[" in line:
                assert ours, f"the runner would read a command from {line!r}\n{r}"


def check_annotations_present(r: Run, root: Path, arg: str) -> None:
    assert any(OUR_COMMAND.match(ln) for ln in r.out.splitlines()), r


def check_json_stdout(r: Run, root: Path, arg: str) -> None:
    json.loads(r.out)


def check_markdown_safe(r: Run, root: Path, arg: str) -> None:
    text = (root / arg).read_text("utf-8")
    assert "<script" not in text.lower()
    assert unsafe(text) == []
    widths: set[int] = set()
    for line in text.split("\n") + [""]:
        if line.startswith("|"):
            widths.add(len(re.findall(r"(?<!\\)\|", line)))
        elif widths:
            assert len(widths) == 1, f"a table row has another number of cells:\n{text}"
            widths = set()


def check_csv_safe(r: Run, root: Path, arg: str) -> None:
    text = (root / arg).read_text("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len({len(row) for row in rows}) == 1, f"rows of unequal length:\n{text}"
    number = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
    for row in rows:
        for cell in row:
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                assert number.fullmatch(cell), f"a formula cell: {cell!r}"


def check_json_names(r: Run, root: Path, arg: str) -> None:
    doc = json.loads((root / arg).read_text("utf-8"))
    assert sorted(c["class"] for c in doc["per_class"]) == sorted(HOSTILE_NAMES)


def check_junit_names(r: Run, root: Path, arg: str) -> None:
    """Every class's baseline case is named by the class, read back exactly (ESC made visible)."""
    from xml.etree import ElementTree

    text = (root / arg).read_text("utf-8")
    assert unsafe(text) == []
    names = {c.get("name") for c in ElementTree.fromstring(text.encode()).iter("testcase")}
    for name in HOSTILE_NAMES:
        assert f"baseline AP[{name.replace(chr(27), chr(92) + 'x1b')}]" in names, (name, names)


def check_junit_stdout(r: Run, root: Path, arg: str) -> None:
    from xml.etree import ElementTree

    assert ElementTree.fromstring(r.out.encode()).tag == "testsuites"


def check_perfect_ap(r: Run, root: Path, arg: str) -> None:
    """Every prediction sits on its ground truth: the ids joined."""
    doc = json.loads(r.out)
    assert doc["summary"]["AP"] == pytest.approx(1.0), doc["summary"]
    assert doc["inputs"]["predictions"]["unknown_image_boxes"] == 0


def check_absent(r: Run, root: Path, arg: str) -> None:
    assert arg not in r.out and arg not in r.err
    for folder, _dirs, names in os.walk(root):
        for n in names:
            p = Path(folder) / n
            if p.is_file() and n != "secret.txt":
                assert arg.encode() not in p.read_bytes(), p


def check_stderr_shorter_than(r: Run, root: Path, arg: str) -> None:
    assert len(r.err) < int(arg), f"stderr is {len(r.err)} characters"


def check_is_symlink(r: Run, root: Path, arg: str) -> None:
    assert (root / arg).is_symlink()


CHECKERS: dict[str, Callable[[Run, Path, str], None]] = {
    name[len("check_") :]: fn for name, fn in globals().items() if name.startswith("check_")
}


def test_every_check_named_by_a_case_exists():
    wanted = {c.kind for case in CASES for c in case.checks}
    assert wanted <= set(CHECKERS), wanted - set(CHECKERS)


def output_args(case: Case) -> list[str]:
    args = list(case.args)
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output")]


def test_outputs_stay_in_the_case_folder():
    """A hostile case must not be able to damage the machine through today's CLI."""
    for case in CASES:
        for out in output_args(case):
            inside = not os.path.isabs(out) and ".." not in Path(out).parts
            assert inside or out.startswith("/proc/"), f"{case.name}: -o {out}"


def test_case_names_are_unique():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


# -- the cases -----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile(case: Case, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "case"
    root.mkdir()
    prepare(case, root, monkeypatch)
    before = snapshot(root, case.outputs)
    try:
        problems: list[str] = []
        try:
            r = (
                run_isolated(case, root)
                if case.isolate
                else run_in_process(case, root, monkeypatch)
            )
        except AssertionError as exc:  # the runner's "uncaught exception": a traceback
            problems.append("a traceback reached the user")
            r = Run(-1, "", str(exc))
        problems += verdicts(case, root, r, before)
        assert not problems, "\n".join(problems) + f"\n{r}"
    finally:
        for folder, dirs, _names in os.walk(root):  # let pytest clean read-only folders
            for d in dirs:
                os.chmod(Path(folder) / d, 0o755)


def verdicts(case: Case, root: Path, r: Run, before: dict[str, tuple]) -> list[str]:
    """Every way the run went wrong, so that one failure does not hide another."""
    out = []
    if "Traceback" in r.err and r.code != -1:
        out.append("a traceback on stderr")
    if r.code != -1 and r.code != case.exit:
        out.append(f"exit code {r.code}, expected {case.exit}")
    if case.needle and r.code != -1 and case.needle not in r.err:
        out.append(f"{case.needle!r} not in stderr")
    after = snapshot(root, case.outputs)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        out.append(f"inputs changed (or files appeared): {changed}")
    if temporaries(root):
        out.append(f"temporary files left: {temporaries(root)}")
    if r.code == case.exit:
        for check in case.checks:
            try:
                CHECKERS[check.kind](r, root, check.arg)
            except AssertionError as exc:
                out.append(f"check {check.kind} failed: {str(exc).splitlines()[0]}")
    return out
