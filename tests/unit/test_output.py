"""Writing reports: never over an input, whole or not at all, clean after signals."""

from __future__ import annotations

import errno
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iou_eval.errors import EXIT_USAGE, InputError, UsageError
from iou_eval.io import output
from iou_eval.io.output import TEMP_PREFIX, check_output_path, write_output

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def is_device(path: str) -> bool:
    """Guard of the tests that name real devices: never run them where one was replaced."""
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


REAL_DEVICES = is_device("/dev/null") and is_device("/dev/zero")
needs_devices = pytest.mark.skipif(not REAL_DEVICES, reason="needs /dev/null and /dev/zero")


def temps(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)]


def refused(path, protected=(), data="report\n") -> str:
    with pytest.raises(UsageError) as info:
        write_output(str(path), data, protected=[str(p) for p in protected])
    assert info.value.exit_code == EXIT_USAGE
    text = info.value.format()
    assert text.startswith(f"-o {path}: "), text
    return text


# -- ordinary writes ---------------------------------------------------------


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_output(str(tmp_path / "r.json"), '{"a": 1}\n')
    finally:
        os.umask(old)
    p = tmp_path / "r.json"
    assert p.read_text() == '{"a": 1}\n'
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert temps(tmp_path) == []


def test_a_replaced_file_keeps_its_mode_and_is_a_new_inode(tmp_path):
    p = tmp_path / "r.md"
    p.write_text("old")
    p.chmod(0o604)
    before = p.stat().st_ino
    write_output(str(p), b"new bytes")
    assert p.read_bytes() == b"new bytes"
    assert stat.S_IMODE(p.stat().st_mode) == 0o604
    assert p.stat().st_ino != before  # replaced by rename, never truncated in place
    assert temps(tmp_path) == []


def test_text_is_utf8_and_a_lone_surrogate_does_not_stop_the_report(tmp_path):
    write_output(str(tmp_path / "r.txt"), "café bad\udcff name")
    assert (tmp_path / "r.txt").read_bytes() == "café bad\\udcff name".encode()


def test_dash_and_dev_stdout_write_to_standard_output(capfd):
    write_output("-", "to stdout\n")
    write_output("/dev/stdout", b"bytes too\n")
    write_output("/dev/stderr", "to stderr\n")
    out, err = capfd.readouterr()
    assert out == "to stdout\nbytes too\n"
    assert err == "to stderr\n"


@needs_devices
def test_dev_null_is_accepted():
    write_output("/dev/null", "discarded")
    assert check_output_path("/dev/null") is None


def test_a_closed_pipe_on_stdout_is_not_an_error():
    code = (
        "from iou_eval.io.output import write_output\n"
        "write_output('-', 'x' * (8 << 20))\n"
        "print('still here', flush=True)\n"
    )
    proc = subprocess.run(
        f'{sys.executable} -c "{code}" | head -c 10',
        shell=True,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.stdout == b"x" * 10
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()


# -- never over an input -------------------------------------------------------


def test_each_input_is_refused_by_real_path(tmp_path, monkeypatch):
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert "is the input gt.json; refusing to overwrite an input" in refused("gt.json", ["gt.json"])
    refused(str(gt), ["gt.json"])
    refused("./sub/../gt.json", [str(gt)])
    assert gt.read_text() == "{}"
    assert temps(tmp_path) == []


def test_a_symlink_or_hard_link_to_an_input_is_refused(tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    (tmp_path / "soft.json").symlink_to(gt)
    os.link(gt, tmp_path / "hard.json")
    refused(tmp_path / "soft.json", [gt])
    assert "is the input" in refused(tmp_path / "hard.json", [gt])
    # And the other way round: the input is given through a link.
    refused(gt, [tmp_path / "soft.json"])
    refused(gt, [tmp_path / "hard.json"])
    assert gt.read_text() == "{}"


def test_a_file_inside_an_input_folder_is_refused(tmp_path):
    preds = tmp_path / "preds"
    preds.mkdir()
    msg = refused(preds / "result.json", [preds])
    assert "lies inside the input folder" in msg
    assert not (preds / "result.json").exists()


def test_missing_and_dash_inputs_are_ignored(tmp_path):
    write_output(str(tmp_path / "r.txt"), "x", protected=["-", "", None, str(tmp_path / "no")])
    assert (tmp_path / "r.txt").read_text() == "x"


# -- what is not a file ------------------------------------------------------


def test_a_folder_is_refused(tmp_path):
    assert "a folder, not a file" in refused(tmp_path)
    assert "names a folder" in refused(str(tmp_path / "new") + "/")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_and_left_alone(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert "a FIFO (named pipe), not a file" in refused(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        assert "a socket" in refused(path)


@needs_devices
def test_other_devices_are_refused():
    assert "a device; of devices only /dev/null" in refused("/dev/zero")
    assert is_device("/dev/zero")


@pytest.mark.skipif(not os.path.isdir("/dev"), reason="needs /dev")
def test_no_file_is_created_in_dev():
    # check_output_path refuses before anything is created.
    with pytest.raises(UsageError, match="lies in /dev"):
        check_output_path("/dev/iou-eval-never-created.json")
    assert not os.path.exists("/dev/iou-eval-never-created.json")


# -- symbolic links ------------------------------------------------------------


def test_a_link_to_a_regular_file_is_refused_and_both_are_kept(tmp_path):
    """-o through a link would replace a file the user did not name: refused, nothing written."""
    target = tmp_path / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.md"
    link.symlink_to(target)
    message = refused(link)
    assert "a symbolic link to" in message and str(target) in message
    assert "not written through a link" in message
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "old"
    assert temps(tmp_path) == [] and temps(target.parent) == []


def test_a_dangling_link_is_refused(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "elsewhere" / "x.json")
    assert "which does not exist" in refused(link)
    assert not (tmp_path / "elsewhere").exists()


def test_a_link_to_a_folder_is_refused(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "to_dir").symlink_to(tmp_path / "d")
    assert "a symbolic link to" in refused(tmp_path / "to_dir")


@needs_devices
def test_a_link_to_a_device_is_refused_but_dev_null_accepted(tmp_path):
    (tmp_path / "to_zero").symlink_to("/dev/zero")
    assert "a device" in refused(tmp_path / "to_zero")
    (tmp_path / "to_null").symlink_to("/dev/null")
    write_output(str(tmp_path / "to_null"), "discarded")
    assert is_device("/dev/null") and is_device("/dev/zero")


# -- where a temporary file cannot be made ---------------------------------------


def test_a_missing_folder(tmp_path):
    assert "the folder" in refused(tmp_path / "no" / "r.json")
    assert "does not exist" in refused(tmp_path / "no" / "r.json")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
@pytest.mark.parametrize("path", ["/proc/iou-eval-report.json", "/proc/self/status"])
def test_proc_is_refused_cleanly(path):
    msg = refused(path)
    assert "cannot create a file in /proc" in msg


@pytest.mark.skipif(IS_ROOT, reason="root writes into read-only folders")
def test_a_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert "cannot create a file in" in refused(ro / "r.json")
    finally:
        ro.chmod(0o755)


def test_a_failure_while_writing_keeps_the_old_file(tmp_path, monkeypatch):
    p = tmp_path / "r.json"
    p.write_text("previous")

    def full(fd, chunk):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output, "_write_chunk", full)
    with pytest.raises(InputError) as info:
        write_output(str(p), "x" * 100)
    assert info.value.format() == f"{p}: cannot write: no space left on device"
    assert p.read_text() == "previous"
    assert temps(tmp_path) == []


def test_a_path_with_controls_is_shown_escaped(tmp_path):
    bad = tmp_path / "x\x1b[2J" / "r.json"
    with pytest.raises(UsageError) as info:
        write_output(str(bad), "x")
    assert "\x1b" not in info.value.format() and "\\x1b[2J" in info.value.format()


# -- signals -------------------------------------------------------------------

SLOW_WRITER = """
import sys, time
import iou_eval.io.output as o

real = o._write_chunk

def slow(fd, chunk):
    time.sleep(0.05)
    return real(fd, chunk)

o._write_chunk = slow
o._CHUNK = 1 << 16
try:
    o.write_output(sys.argv[1], b"n" * (o._CHUNK * 600))  # about 30 s
except KeyboardInterrupt:
    sys.exit(130)  # as the command line does
"""


def kill_mid_write(tmp_path: Path, sig: int) -> subprocess.CompletedProcess:
    target = tmp_path / "report.json"
    target.write_text("previous report")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, str(target)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            live = temps(tmp_path)
            if live and os.path.getsize(tmp_path / live[0]) > 0:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        else:
            pytest.fail("the writer never started")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert target.read_text() == "previous report"
    assert temps(tmp_path) == []
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_sigterm_mid_write_removes_the_temp_file_and_dies_by_the_signal(tmp_path):
    done = kill_mid_write(tmp_path, signal.SIGTERM)
    assert done.returncode == -signal.SIGTERM  # a shell shows 143
    assert b"Traceback" not in done.stderr


def test_sigint_mid_write_removes_the_temp_file_and_exits_130(tmp_path):
    done = kill_mid_write(tmp_path, signal.SIGINT)
    assert done.returncode == 130
    assert b"Traceback" not in done.stderr


def test_handlers_are_restored_and_a_programs_own_handler_is_kept(tmp_path):
    seen = []

    def mine(signum, frame):
        seen.append(signum)

    before_int = signal.getsignal(signal.SIGINT)
    old_term = signal.signal(signal.SIGTERM, mine)
    try:
        during = {}

        def spy(fd, chunk):
            during["int"] = signal.getsignal(signal.SIGINT)
            during["term"] = signal.getsignal(signal.SIGTERM)
            return os.write(fd, chunk)

        real = output._write_chunk
        output._write_chunk = spy
        try:
            write_output(str(tmp_path / "r.txt"), "x")
        finally:
            output._write_chunk = real
        assert during["term"] is mine
        if before_int in (signal.SIG_DFL, signal.default_int_handler):
            assert during["int"] is output._on_signal
        assert signal.getsignal(signal.SIGINT) is before_int
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, old_term)
