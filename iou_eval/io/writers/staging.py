"""Writing a conversion's files whole or not at all.

A target is one file (COCO JSON, CSV, CVAT XML, Label Studio JSON) or a
folder (YOLO, VOC, DOTA, LabelMe).  Everything is written first into a
temporary ``.iou-eval-XXXX`` beside the target, then renamed into place; on
any error the temporary is removed and nothing else changes.  An existing
target is refused unless ``overwrite``; then it is replaced (a folder is
moved aside, the new one renamed in, the old one removed).  A target that
is an input, or a folder that holds one, is always refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence

from iou_eval.errors import InputError, UsageError
from iou_eval.io.output import TEMP_PREFIX, check_output_path

# Content of a file: its bytes, or ("copy", path) for a file copied as it is (an image).
Content = bytes | tuple[str, str]


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def check_target(path: str, folder: bool, overwrite: bool, inputs: Sequence[str | None]) -> None:
    """Refuse a target before any work: an input, inside or around one, or existing."""
    if not path or path == "-":
        raise UsageError("convert: OUTPUT must be a file or folder name")
    target = _real(path)
    for given in filter(None, inputs):
        src = _real(given)
        if target == src or src.startswith(target + os.sep) or target.startswith(src + os.sep):
            raise UsageError(
                f"convert: {path}: the output would be written over or inside the input {given}"
            )
    if os.path.lexists(path):
        if not overwrite:
            raise UsageError(f"convert: {path} exists", hint="pass --overwrite to replace it")
        if folder != os.path.isdir(path) or os.path.islink(path):
            kind = "folder" if os.path.isdir(path) else "file"
            raise UsageError(f"convert: {path} is a {kind} (or a link); refusing to replace it")
    if not folder:
        check_output_path(path, [p for p in inputs if p])
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"convert: {path}: the folder {parent} does not exist")


def _put(root: str, rel: str, content: Content) -> None:
    dest = os.path.join(root, rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if isinstance(content, tuple):
        try:
            os.link(content[1], dest)  # the image itself, without a copy, where it can
        except OSError:
            shutil.copyfile(content[1], dest)
        return
    with open(dest, "wb") as f:
        f.write(content)


def write_files(path: str, files: Mapping[str, Content], folder: bool) -> None:
    """``files`` (relative path -> content; ``""`` for a one-file target) written at ``path``."""
    parent = os.path.dirname(os.path.abspath(path))
    try:
        tmp = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent)
    except OSError as exc:
        raise InputError(path, f"cannot write here: {exc.strerror or exc}") from exc
    try:
        for rel, content in files.items():
            _put(tmp, rel if folder else "out", content)
        made = tmp if folder else os.path.join(tmp, "out")
        if folder:
            os.chmod(tmp, 0o777 & ~_umask())
        _swap(made, path, folder)
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _swap(made: str, path: str, folder: bool) -> None:
    """Rename ``made`` to ``path``; an existing folder moved aside first, removed after."""
    if not folder:
        os.chmod(made, 0o666 & ~_umask())
        os.replace(made, path)
        return
    old = None
    if os.path.isdir(path):
        old = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=os.path.dirname(os.path.abspath(path)))
        os.rmdir(old)
        os.rename(path, old)
    try:
        os.rename(made, path)
    except OSError:
        if old is not None:
            os.rename(old, path)  # the old folder back where it was
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
