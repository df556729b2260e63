"""Image sizes from headers (``loaders.image_header``) and reading files (``loaders.source``)."""

from __future__ import annotations

import gzip
import io

import pytest
from PIL import Image

from iou_eval.errors import InputError
from iou_eval.io.loaders.image_header import image_size
from iou_eval.io.loaders.source import read_file_bytes, read_text_file

SWAP = {5, 6, 7, 8}


@pytest.mark.parametrize("fmt", ["PNG", "BMP", "GIF", "WEBP", "TIFF"])
@pytest.mark.parametrize("size", [(1, 1), (37, 11), (640, 480)])
def test_sizes_agree_with_pillow(tmp_path, fmt, size):
    path = tmp_path / f"x.{fmt.lower()}"
    Image.new("RGB", size, (10, 20, 30)).save(path, fmt)
    assert image_size(str(path)) == size


@pytest.mark.parametrize("orientation", range(1, 9))
def test_jpeg_exif_orientations_5_to_8_swap(tmp_path, orientation):
    """Stored 30 x 20: orientations 5-8 turn it a quarter, so upright it is 20 x 30."""
    exif = Image.Exif()
    exif[274] = orientation
    exif[0x010F] = "camera"  # another tag before/after, as cameras write them
    path = tmp_path / "x.jpg"
    Image.new("RGB", (30, 20)).save(path, exif=exif.tobytes())
    expected = (20, 30) if orientation in SWAP else (30, 20)
    assert image_size(str(path)) == expected


def test_big_endian_exif_and_progressive_jpeg(tmp_path):
    exif = Image.Exif()
    exif[274] = 6
    buf = io.BytesIO()
    Image.new("RGB", (30, 20)).save(buf, "JPEG", progressive=True, exif=exif.tobytes())
    data = buf.getvalue()
    path = tmp_path / "p.jpg"
    path.write_bytes(data)
    assert image_size(str(path)) == (20, 30)
    # The same picture with its one-tag EXIF block rewritten in the other byte order.
    i = data.index(b"Exif\x00\x00") + 6
    order, mark = ("little", b"II") if data[i : i + 2] == b"MM" else ("big", b"MM")
    block = mark + (42).to_bytes(2, order) + (8).to_bytes(4, order) + (1).to_bytes(2, order)
    block += (274).to_bytes(2, order) + (3).to_bytes(2, order) + (1).to_bytes(4, order)
    block += (8).to_bytes(2, order) + b"\x00\x00" + (0).to_bytes(4, order)
    path.write_bytes(data[:i] + block + data[i + len(block) :])
    assert image_size(str(path)) == (20, 30)  # orientation 8 also swaps


@pytest.mark.parametrize(
    "data", [b"", b"\xff\xd8\xff", b"plain text, no image", b"\x89PNG\r\n\x1a\n"]
)
def test_unreadable_images_raise_input_errors(tmp_path, data):
    path = tmp_path / "bad.jpg"
    path.write_bytes(data)
    with pytest.raises(InputError) as e:
        image_size(str(path))
    assert str(path) in str(e.value)


def test_missing_image(tmp_path):
    with pytest.raises(InputError, match="cannot read the image"):
        image_size(str(tmp_path / "nope.png"))


def test_text_files_gz_bom_crlf(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfx\r\ny\rz\n")
    assert read_text_file(str(tmp_path / "a.txt")) == "x\ny\rz\n"  # a lone CR stays
    (tmp_path / "b.gz").write_bytes(
        gzip.compress(b"\xef\xbb\xbfhello\r\n") + gzip.compress(b"more\n")
    )
    assert read_text_file(str(tmp_path / "b.gz")) == "hello\nmore\n"  # two gzip members
    (tmp_path / "e.txt").write_bytes(b"")
    assert read_text_file(str(tmp_path / "e.txt")) == ""


def test_text_file_errors(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputError) as e:
        read_text_file(str(tmp_path / "bad.txt"))
    assert str(e.value).startswith(f"{tmp_path / 'bad.txt'}:2: expected UTF-8")
    (tmp_path / "cut.gz").write_bytes(gzip.compress(b"x" * 1000)[:-8])
    with pytest.raises(InputError, match="gzip"):
        read_text_file(str(tmp_path / "cut.gz"))
    (tmp_path / "big.gz").write_bytes(gzip.compress(b"x" * 5000))
    with pytest.raises(InputError, match="more than the input limit"):
        read_file_bytes(str(tmp_path / "big.gz"), max_bytes=4096)
    with pytest.raises(InputError, match="expected a file, found a folder"):
        read_text_file(str(tmp_path))
