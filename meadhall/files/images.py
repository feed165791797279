"""Image checks with Pillow, run on a worker thread (CPU-bound).

An image is accepted only when Pillow identifies it as the declared format, its size in pixels is under
the cap (decompression bombs: a tiny file that declares a huge canvas is refused before any decoding), its
frames are capped, and — for the web formats — the file ends where the format says the image ends: data
appended after the image (a ZIP, a script, an HTML page: a polyglot) is refused. Images of the image
purposes (avatars, icons, banners, backgrounds) are also fully decoded, every frame, so a damaged or
crafted stream is refused too; attachments, up to `MAX_UPLOAD_SIZE`, are checked without decoding pixels.
"""

from __future__ import annotations

import io
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

# Pillow warns about canvases above its own threshold (DecompressionBombWarning, a RuntimeWarning); this module
# refuses them itself right after the header is read (and Pillow raises above twice its threshold), so the
# warning is only noise in the logs. Named by its text: Pillow is not imported yet.
warnings.filterwarnings("ignore", message=r"Image size \(\d+ pixels\) exceeds limit", category=RuntimeWarning,
                        module=r"PIL\.Image")


def pillow() -> ModuleType:
    """Pillow's Image module, imported by the first image check (on the image pool's thread) rather than
    when the routes are declared: a node that is sent no image does without it."""
    from PIL import Image

    return Image


# Pixels of one frame. Above Pillow's own bomb threshold this is checked first, from the header.
MAX_PIXELS = 50_000_000
# Image purposes are decoded in full: a smaller canvas bounds the memory of one decode (~64 MiB RGBA).
MAX_DECODED_PIXELS = 16_777_216
MAX_FRAMES = 500
MAX_TOTAL_PIXELS = 200_000_000  # all frames of an animation together
_READ = 1024 * 1024


class ImageRejected(Exception):
    """The content is not an acceptable image of the declared type; the message says why."""


@dataclass(frozen=True)
class ImageInfo:
    format: str  # Pillow format name
    width: int
    height: int
    frames: int


def inspect_image(path: Path, expected: str, *, decode: bool) -> ImageInfo:
    """Check the image at `path` (expected Pillow format `expected`). Raises ImageRejected."""
    Image = pillow()  # the module, under its usual name
    from PIL import UnidentifiedImageError

    try:
        with Image.open(path, formats=[expected]) as im:
            width, height = im.size
            if width <= 0 or height <= 0:
                raise ImageRejected("the image has no pixels")
            cap = MAX_DECODED_PIXELS if decode else MAX_PIXELS
            if width * height > cap:
                raise ImageRejected(f"the image is larger than {cap} pixels")
            frames = _frames(path, im, expected)
            if frames > MAX_FRAMES:
                raise ImageRejected(f"the animation has more than {MAX_FRAMES} frames")
            if frames * width * height > MAX_TOTAL_PIXELS:
                raise ImageRejected("the animation is too large")
            _check_end(path, expected)
            if decode:
                _decode_all(im, frames)
            else:
                im.verify()
            return ImageInfo(expected, width, height, frames)
    except ImageRejected:
        raise
    except Image.DecompressionBombError:
        raise ImageRejected(f"the image is larger than {MAX_PIXELS} pixels") from None
    except UnidentifiedImageError:
        raise ImageRejected("the content is not an image of the declared type") from None
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError, KeyError, TypeError,
            MemoryError):
        # Pillow reports damaged or crafted streams with any of these.
        raise ImageRejected("the image is damaged or not supported") from None


def _frames(path: Path, im: Image.Image, fmt: str) -> int:
    if fmt == "GIF":
        return _gif_frames(path)  # Pillow counts GIF frames by decoding them
    return int(getattr(im, "n_frames", 1) or 1)


def _decode_all(im: Image.Image, frames: int) -> None:
    for index in range(frames):
        if index:
            im.seek(index)
        im.load()


# ---- where the image ends (polyglots) ---------------------------------------------------------


def _check_end(path: Path, fmt: str) -> None:
    walker = {"PNG": _png_end, "GIF": _gif_end, "JPEG": _jpeg_end, "WEBP": _webp_end}.get(fmt)
    if walker is None:
        return
    size = path.stat().st_size
    with open(path, "rb") as fh:
        end = walker(fh)
    if end > size:
        raise ImageRejected("the image is truncated")
    if end < size:
        raise ImageRejected("the file carries data after the end of the image")


def _need(fh: io.BufferedReader, n: int) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise ImageRejected("the image is truncated")
    return data


def _png_end(fh: io.BufferedReader) -> int:
    fh.seek(8)
    while True:
        length, kind = struct.unpack(">I4s", _need(fh, 8))
        fh.seek(length + 4, io.SEEK_CUR)  # data and CRC (Pillow checks the CRCs)
        if kind == b"IEND":
            return fh.tell()


def _webp_end(fh: io.BufferedReader) -> int:
    header = _need(fh, 12)
    (riff_size,) = struct.unpack("<I", header[4:8])
    return riff_size + 8


def _gif_blocks(fh: io.BufferedReader) -> tuple[int, int]:
    """(frames, end offset) by walking the GIF block structure without decoding."""
    header = _need(fh, 13)
    flags = header[10]
    if flags & 0x80:
        fh.seek(3 * (2 << (flags & 7)), io.SEEK_CUR)
    frames = 0
    while True:
        introducer = _need(fh, 1)[0]
        if introducer == 0x3B:  # trailer
            return frames, fh.tell()
        if introducer == 0x21:  # extension: label, then data sub-blocks
            _need(fh, 1)
            _skip_sub_blocks(fh)
        elif introducer == 0x2C:  # image descriptor
            descriptor = _need(fh, 9)
            local = descriptor[8]
            if local & 0x80:
                fh.seek(3 * (2 << (local & 7)), io.SEEK_CUR)
            _need(fh, 1)  # LZW minimum code size
            _skip_sub_blocks(fh)
            frames += 1
        else:
            raise ImageRejected("the GIF stream is damaged")


def _skip_sub_blocks(fh: io.BufferedReader) -> None:
    while True:
        size = _need(fh, 1)[0]
        if size == 0:
            return
        fh.seek(size, io.SEEK_CUR)


def _gif_frames(path: Path) -> int:
    with open(path, "rb") as fh:
        return _gif_blocks(fh)[0]


def _gif_end(fh: io.BufferedReader) -> int:
    return _gif_blocks(fh)[1]


def _jpeg_end(fh: io.BufferedReader) -> int:
    """Walk the markers; entropy-coded data after each start-of-scan runs to the next marker that is
    not a stuffed byte or a restart marker. The end is just after EOI."""
    if _need(fh, 2) != b"\xff\xd8":
        raise ImageRejected("the JPEG stream is damaged")
    while True:
        marker = _next_marker(fh)
        if marker == 0xD9:  # EOI
            return fh.tell()
        if marker in (0x01,) or 0xD0 <= marker <= 0xD7:
            continue  # no length
        (length,) = struct.unpack(">H", _need(fh, 2))
        if length < 2:
            raise ImageRejected("the JPEG stream is damaged")
        fh.seek(length - 2, io.SEEK_CUR)
        if marker == 0xDA:  # start of scan: skip the entropy-coded data
            _skip_scan(fh)


def _next_marker(fh: io.BufferedReader) -> int:
    byte = _need(fh, 1)[0]
    if byte != 0xFF:
        raise ImageRejected("the JPEG stream is damaged")
    while byte == 0xFF:  # fill bytes
        byte = _need(fh, 1)[0]
    return byte


def _skip_scan(fh: io.BufferedReader) -> None:
    """Leave the file positioned at the 0xFF of the next real marker."""
    while True:
        start = fh.tell()
        block = fh.read(_READ)
        if not block:
            raise ImageRejected("the image is truncated")
        index = 0
        while True:
            index = block.find(b"\xff", index)
            if index < 0 or index + 1 >= len(block):
                break
            following = block[index + 1]
            if following == 0x00 or 0xD0 <= following <= 0xD7 or following == 0xFF:
                index += 1
                continue
            fh.seek(start + index)
            return
        # A 0xFF at the very end of the block is looked at again with the next block.
        fh.seek(start + (len(block) - 1 if block.endswith(b"\xff") else len(block)))
        if block.endswith(b"\xff") and len(block) == 1:
            raise ImageRejected("the image is truncated")
