"""Writing a report to ``-o FILE``: never over an input, whole or not at all.

Rules (``path`` is the value of ``-o``):

- ``-``, ``/dev/stdout`` and ``/dev/fd/1`` write to standard output,
  ``/dev/stderr`` and ``/dev/fd/2`` to standard error.  A reader that closes
  the pipe early (``| head``) is not an error.
- ``/dev/null`` is accepted (the report is discarded).  Other devices,
  FIFOs, sockets and folders are refused, and so is any other name directly
  in ``/dev`` (replacing a device node by a regular file breaks the machine
  for every program; ``/dev/shm/...`` is an ordinary folder and allowed).
- An input is never written: the path is refused when it is, by real path
  (symbolic links resolved) or by inode (hard links), one of ``protected``
  (ground truth, predictions, baseline, names file …), or lies inside a
  protected folder (a batch folder would read the report as input next
  time).
- A symbolic link is never written through: the file it points to is not
  the name the user gave, and replacing it silently would change a file
  elsewhere (a shared baseline, another run's report).  A link is refused,
  naming its target; a link to ``/dev/null`` discards the report, as
  ``/dev/null`` does.
- The file is written whole or not at all: a temporary ``.iou-eval-XXXX``
  in the target's folder, flushed and fsynced, then ``os.replace``.  A new
  file gets the mode the umask gives a new file (``0o666 & ~umask``); a
  replaced file keeps its mode.
- A temporary file is removed on any error and on SIGINT or SIGTERM; the
  previous file stays as it was.  After the clean-up SIGINT continues as
  ``KeyboardInterrupt`` (the command line exits 130) and SIGTERM ends the
  process by the signal (a shell shows 143).
- Problems with the path are :class:`UsageError` (exit 2) naming ``-o`` and
  the path; a failure while writing (disk full) is an :class:`InputError`.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from iou_eval.errors import InputError, UsageError
from iou_eval.escape import for_terminal

OPTION = "-o"
TEMP_PREFIX = ".iou-eval-"
STDOUT_NAMES = {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}
STDERR_NAMES = {"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"}
DEV_NULL = "/dev/null"
DEV = "/dev"
_CHUNK = 1 << 20

# Temporary files being written now: the signal handler removes them.
_live: set[str] = set()


def write_output(
    path: str, text_or_bytes: str | bytes, *, protected: Sequence[str | None] = ()
) -> None:
    """Write a report to ``path`` under the module's rules.

    Args:
        path: the value of ``-o`` (``-`` for standard output).
        text_or_bytes: the report; text is written as UTF-8.
        protected: the inputs of the run (files or folders; None and ``-``
            entries are ignored).
    """
    data = _encode(text_or_bytes)
    if path in STDOUT_NAMES:
        _write_stream(sys.stdout, data)
        return
    if path in STDERR_NAMES:
        _write_stream(sys.stderr, data)
        return
    target = check_output_path(path, protected)
    if target is None:  # /dev/null
        return
    _replace_atomically(path, target, data)


def _encode(text_or_bytes: str | bytes) -> bytes:
    if isinstance(text_or_bytes, bytes):
        return text_or_bytes
    # A lone surrogate (a file name that was not UTF-8) must not stop the
    # report: it is written as a visible escape.
    return text_or_bytes.encode("utf-8", "backslashreplace")


def _refuse(path: str, why: str, hint: str | None = None) -> UsageError:
    return UsageError(f"{OPTION} {for_terminal(path)}: {why}", hint=hint)


def check_output_path(path: str, protected: Sequence[str | None] = ()) -> str | None:
    """The regular file to replace for ``-o path``, None for ``/dev/null``, or a UsageError.

    Standard output and standard error are handled by :func:`write_output`
    before this is called.
    """
    if not path:
        raise _refuse(path, "empty file name")
    if path.endswith(("/", os.sep)):
        raise _refuse(path, "names a folder; give a file name")
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        lst = None
    except OSError as exc:
        raise _refuse(path, f"cannot use it: {exc.strerror or exc}") from None
    target = path
    st: os.stat_result | None
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        target = os.path.realpath(path)
        try:
            st = os.stat(target)
        except OSError:
            raise _refuse(
                path, f"a symbolic link to {for_terminal(target)}, which does not exist",
                hint="name the file itself, or remove the link",
            ) from None  # fmt: skip
        if not stat.S_ISREG(st.st_mode) and not _is_dev_null(st):
            raise _refuse(path, f"a symbolic link to {for_terminal(target)}, {_kind(st)}")
        if not _is_dev_null(st):
            raise _refuse(
                path, f"a symbolic link to {for_terminal(target)}: the report is not written "
                "through a link (it would replace that file)",
                hint="name the file itself, or remove the link",
            )  # fmt: skip
    else:
        st = lst
    if st is not None:
        if _is_dev_null(st):
            return None
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, _kind(st), hint="give the name of a file to create or replace")
    _check_not_input(path, target, st, protected)
    folder = os.path.dirname(os.path.abspath(target))
    if os.path.realpath(folder) == DEV:
        # Device nodes live here: a regular file named /dev/zero (left by a
        # tool that replaced the device) is not ours to replace either.
        raise _refuse(path, _kind_in_dev(), hint="give the name of a file to create or replace")
    if not os.path.isdir(folder):
        raise _refuse(path, f"the folder {for_terminal(folder)} does not exist")
    return target


def _kind_in_dev() -> str:
    return "lies in /dev; of devices only /dev/null, /dev/stdout and /dev/stderr are accepted"


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device; of devices only /dev/null, /dev/stdout and /dev/stderr are accepted"
    return "not a regular file"


def _is_dev_null(st: os.stat_result) -> bool:
    if not stat.S_ISCHR(st.st_mode):
        return False
    try:
        null = os.stat(DEV_NULL)
    except OSError:
        return False
    return st.st_rdev == null.st_rdev


def _check_not_input(
    path: str, target: str, st: os.stat_result | None, protected: Sequence[str | None]
) -> None:
    real = os.path.realpath(target)
    for p in protected:
        if not p or p == "-":
            continue
        p_real = os.path.realpath(p)
        try:
            p_st = os.stat(p)
        except OSError:
            p_st = None
        same_inode = (
            st is not None
            and p_st is not None
            and (st.st_dev, st.st_ino) == (p_st.st_dev, p_st.st_ino)
        )
        if real == p_real or same_inode:
            raise _refuse(
                path, f"is the input {for_terminal(p)}; refusing to overwrite an input",
                hint="write the report to another file",
            )  # fmt: skip
        if p_st is not None and stat.S_ISDIR(p_st.st_mode) and _inside(real, p_real):
            raise _refuse(
                path, f"lies inside the input folder {for_terminal(p)}",
                hint="write the report outside the folders that are read",
            )  # fmt: skip


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _umask() -> int:
    """The process's umask, read without changing it where Linux allows."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read by setting, then restore
    os.umask(mask)
    return mask


def _replace_atomically(path: str, target: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(target))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    except OSError as exc:
        raise _refuse(path, f"cannot use it: {exc.strerror or exc}") from None
    with _cleanup_on_signals():
        fd, tmp = _create_temp(path, folder)
        try:
            try:
                os.fchmod(fd, mode)
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except OSError as exc:
            raise InputError(path, f"cannot write: {_reason(exc)}") from None
        finally:
            _discard(tmp)


def _create_temp(path: str, folder: str) -> tuple[int, str]:
    """A new temporary file, registered before a signal can be handled in between."""
    blocked = {signal.SIGINT, signal.SIGTERM}
    can_block = hasattr(signal, "pthread_sigmask")
    if can_block:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=folder)
        _live.add(tmp)
    except OSError as exc:
        raise _refuse(
            path, f"cannot create a file in {for_terminal(folder)}: {_reason(exc)}"
        ) from None
    finally:
        if can_block:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return fd, tmp


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return (exc.strerror or str(exc)).lower()


def _write_chunk(fd: int, chunk: memoryview) -> int:
    return os.write(fd, chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = _write_chunk(fd, view[:_CHUNK])
        view = view[n:]


def _discard(tmp: str) -> None:
    """Remove ``tmp`` if it is still there (after os.replace it is not)."""
    _live.discard(tmp)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def _remove_live_files() -> None:
    for tmp in list(_live):
        _live.discard(tmp)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _on_signal(signum: int, frame: Any) -> None:
    _remove_live_files()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    # Die by the signal itself, as an unhandled SIGTERM would (status 143).
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@contextlib.contextmanager
def _cleanup_on_signals() -> Iterator[None]:
    """Install the clean-up handler for SIGINT/SIGTERM while a temporary file lives.

    Only in the main thread, and only over the default handlers: a handler
    the program installed itself (or SIG_IGN) is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(sig)
        if current in (signal.SIG_DFL, signal.default_int_handler):
            saved[sig] = current
            signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _write_stream(stream: Any, data: bytes) -> None:
    """Bytes to stdout/stderr; a closed pipe ends the output quietly."""
    try:
        stream.flush()
        fd = _fileno(stream)
        if fd is None:  # not a real file (a test runner's buffer)
            buffer = getattr(stream, "buffer", None)
            if buffer is not None:
                buffer.write(data)
                buffer.flush()
            else:
                stream.write(data.decode("utf-8", "replace"))
                stream.flush()
            return
        _write_fd(fd, data)
    except BrokenPipeError:
        # The reader went away (``| head``): send the rest of the process's
        # output to /dev/null so that the flush at exit does not fail too.
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return None


def _write_fd(fd: int, data: bytes) -> None:
    """Every byte to ``fd``, also when it is a non-blocking pipe (partial writes, EAGAIN)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view[:_CHUNK])
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        view = view[n:]
