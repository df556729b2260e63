"""Bounded reading of inputs: stdin once, gzip within the limit, devices and FIFOs, clear errors."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import threading

import pytest

from iou_eval.errors import InputError, UsageError
from iou_eval.io import source
from iou_eval.io.source import (
    DEFAULT_LIMIT,
    decode_text,
    format_size,
    input_limit,
    parse_size,
    read_input,
    read_source,
)

MiB = 1 << 20


@pytest.fixture(autouse=True)
def fresh_stdin_cache():
    source._stdin_cache.clear()
    yield
    source._stdin_cache.clear()


def error(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value


def test_a_file_is_read_whole(tmp_path):
    p = tmp_path / "a.json"
    p.write_bytes(b'{"images": []}')
    assert read_input(str(p)) == b'{"images": []}'


def test_a_utf8_bom_is_dropped_and_reported(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf[1]")
    notes: list[str] = []
    assert read_input(str(p), notes=notes) == b"[1]"
    assert notes == [f"{p}: a UTF-8 byte-order mark was skipped"]
    src = read_source(str(p))
    assert src.bom_stripped and not src.gzipped


def test_gzip_is_decompressed_by_name_or_by_content(tmp_path):
    payload = b"image,label\n" * 1000
    for name in ("x.csv.gz", "x.csv"):  # the magic bytes suffice
        p = tmp_path / name
        p.write_bytes(gzip.compress(payload))
        src = read_source(str(p))
        assert src.data == payload and src.gzipped
        assert src.notes == [f"{p}: gzip-compressed, decompressed"]


def test_gzip_members_are_concatenated_and_a_bom_inside_is_dropped(tmp_path):
    p = tmp_path / "two.json.gz"
    p.write_bytes(gzip.compress(b"\xef\xbb\xbf[1,") + gzip.compress(b"2]"))
    src = read_source(str(p))
    assert src.data == b"[1,2]" and src.bom_stripped


def test_a_gzip_bomb_stops_at_the_limit(tmp_path):
    p = tmp_path / "bomb.json.gz"
    p.write_bytes(gzip.compress(b"\0" * (64 * MiB), compresslevel=9))
    assert p.stat().st_size < MiB
    err = error(read_input, str(p), limit_bytes=4 * MiB)
    assert err.format().startswith(
        f"{p}: decompresses to more than the input limit of 4 MiB\n  hint: set IOU_EVAL_MAX_INPUT"
    )


def test_broken_gzip(tmp_path):
    data = gzip.compress(b"x" * 10_000)
    (tmp_path / "cut.gz").write_bytes(data[: len(data) // 2])
    assert "the gzip data is truncated" in error(read_input, str(tmp_path / "cut.gz")).message
    (tmp_path / "plain.gz").write_bytes(b"[1, 2]")
    assert "named .gz but not gzip data" in error(read_input, str(tmp_path / "plain.gz")).message
    corrupt = bytearray(data)
    corrupt[-8:-4] = b"\0\0\0\0"  # the CRC of the content
    (tmp_path / "bad.gz").write_bytes(bytes(corrupt))
    assert "not valid gzip data" in error(read_input, str(tmp_path / "bad.gz")).message


def test_a_regular_file_over_the_limit_is_refused_before_reading(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b" " * (3 * MiB))
    err = error(read_input, str(p), limit_bytes=MiB)
    assert err.message == "is 3 MiB, more than the input limit of 1 MiB"
    assert err.path == str(p)


def test_the_limit_comes_from_the_environment(tmp_path, monkeypatch):
    p = tmp_path / "p.json"
    p.write_bytes(b"[" + b"0," * 1000 + b"0]")
    monkeypatch.setenv("IOU_EVAL_MAX_INPUT", "1K")
    assert input_limit() == 1024
    assert "input limit of 1 KiB" in error(read_input, str(p)).message
    monkeypatch.setenv("IOU_EVAL_MAX_INPUT", "lots")
    with pytest.raises(UsageError, match="IOU_EVAL_MAX_INPUT: expected a size like 8G"):
        read_input(str(p))
    monkeypatch.delenv("IOU_EVAL_MAX_INPUT")
    assert 0 < input_limit() <= DEFAULT_LIMIT


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1048576", MiB),
        ("8G", 8 << 30),
        ("512m", 512 * MiB),
        ("64KiB", 64 << 10),
        ("2 GB", 2 << 30),
    ],
)
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "-1", "1.5G", "8Q", "", "١G"])
def test_bad_sizes(text):
    with pytest.raises(UsageError):
        parse_size(text)


def test_format_size():
    assert [format_size(n) for n in (300, 1536, 8 << 30)] == ["300 bytes", "1.5 KiB", "8 GiB"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_devices_are_refused_without_reading():
    err = error(read_input, "/dev/zero")
    assert err.format() == "/dev/zero: a device, not a file: it would be read without end"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_an_endless_fifo_stops_at_the_limit(tmp_path):
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)

    def write_forever():
        try:
            with open(fifo, "wb") as fh:
                while True:
                    fh.write(b"x" * 65536)
        except (BrokenPipeError, OSError):
            pass  # the reader stopped: the point of the test

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    err = error(read_input, str(fifo), limit_bytes=2 * MiB)
    writer.join(timeout=10)
    assert err.message == "has more than the input limit of 2 MiB"
    assert not writer.is_alive()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_with_an_end_is_read_like_a_file(tmp_path):
    fifo = tmp_path / "finite"
    os.mkfifo(fifo)
    payload = gzip.compress(b"[1, 2, 3]")

    def write_once():
        with open(fifo, "wb") as fh:
            fh.write(payload)

    writer = threading.Thread(target=write_once, daemon=True)
    writer.start()
    assert read_input(str(fifo)) == b"[1, 2, 3]"
    writer.join(timeout=10)


def test_missing_folder_empty(tmp_path):
    assert error(read_input, str(tmp_path / "nope.json")).message == "no such file or folder"
    assert error(read_input, str(tmp_path)).message == "expected a file, found a folder"
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "blank.json").write_bytes(b" \n\t\n")
    assert error(read_input, str(tmp_path / "empty.json")).message == "file is empty"
    assert error(read_input, str(tmp_path / "blank.json")).message == "file is empty"
    assert read_input(str(tmp_path / "empty.json"), empty_ok=True) == b""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_permission_denied(tmp_path):
    p = tmp_path / "secret.json"
    p.write_bytes(b"[]")
    p.chmod(0)
    try:
        assert error(read_input, str(p)).message == "cannot read: Permission denied"
    finally:
        p.chmod(0o600)


def fake_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_is_read_once_and_kept(monkeypatch):
    fake_stdin(monkeypatch, b"\xef\xbb\xbf[1]")
    first = read_source("-")
    assert first.data == b"[1]" and first.bom_stripped and first.name == "<stdin>"
    # The stream is consumed now; the next reader gets the same bytes.
    assert sys.stdin.buffer.read() == b""
    assert read_input("-") == b"[1]"


def test_stdin_may_be_gzip(monkeypatch):
    fake_stdin(monkeypatch, gzip.compress(b"a,b\n1,2\n"))
    assert read_input("-") == b"a,b\n1,2\n"


def test_stdin_over_the_limit(monkeypatch):
    fake_stdin(monkeypatch, b"x" * (2 * MiB))
    err = error(read_input, "-", limit_bytes=MiB)
    assert err.format().startswith("<stdin>: has more than the input limit of 1 MiB")


def test_empty_stdin(monkeypatch):
    fake_stdin(monkeypatch, b"")
    assert error(read_input, "-").format() == "<stdin>: file is empty"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_stdin_from_a_device_is_refused(tmp_path):
    code = "from iou_eval.io.source import read_input\nread_input('-')\n"
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [sys.executable, "-c", code], stdin=zero, capture_output=True, text=True, timeout=60
        )
    assert proc.returncode != 0
    assert "<stdin>: standard input is a device, not data" in proc.stderr


# -- text ----------------------------------------------------------------


def test_decode_text():
    assert decode_text("café".encode(), "a.csv") == "café"
    assert decode_text(b"\xef\xbb\xbfx", "a.csv") == "x"


def test_invalid_utf8_is_located_by_line_and_character_column():
    data = b"line one\nna\xc3\xafve \xff rest\n"
    err = error(decode_text, data, "labels.txt")
    # Column counts characters: "naïve " is 6 characters before the bad byte.
    assert err.where == "2:7"
    assert err.format().startswith("labels.txt:2:7: not valid UTF-8: byte ff (invalid start byte)")


def test_a_truncated_sequence_is_reported():
    err = error(decode_text, b'{"name": "caf\xc3"}', "gt.json")
    assert err.where == "1:14"
    assert "byte c3" in err.message


@pytest.mark.parametrize(
    ("bom", "name"), [(b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"), (b"\xff\xfe\0\0", "UTF-32")]
)
def test_utf16_is_named(bom, name):
    err = error(decode_text, bom + "a".encode("utf-16-le"), "gt.csv")
    assert err.message.startswith(f"{name} text (byte-order mark")
    assert err.hint == "save the file as UTF-8"
