"""Photo metadata removed before an image is kept (docs/files.md): JPEG, PNG, WebP and TIFF of every
purpose are stored without EXIF, XMP or IPTC (camera, time, GPS position), the EXIF orientation applied first.

Metadata is removed by copying the file without its metadata segments (JPEG APP1/APP3-APP13/APP15 and
comments; PNG eXIf and text chunks, where tools also put EXIF and XMP; WebP EXIF and XMP chunks; in a TIFF,
every tag but those of the image data, files/tiff.py), so the pixels are never re-encoded for it. Only an
image whose orientation is not "upright" is decoded, turned and re-encoded. Pixels are never decoded above
MAX_DECODED_PIXELS (a rotation of a 50-megapixel photo would need hundreds of MiB): a JPEG or TIFF that
large, or a multi-page TIFF, keeps its orientation tag and nothing else, and a PNG or WebP that large, or
animated, loses its orientation tag with the rest. GIF carries no EXIF and is kept as it is. Runs on a
worker thread.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from meadhall.files.images import MAX_DECODED_PIXELS, ImageRejected, _need, _next_marker, _skip_scan, pillow

if TYPE_CHECKING:
    from PIL import Image
from meadhall.files.tiff import plan_tiff

STRIPPED_FORMATS = ("JPEG", "PNG", "WEBP", "TIFF")
# Where a large or multi-frame image keeps its orientation tag (the others lose it with the rest).
_KEEPS_ORIENTATION = ("JPEG", "TIFF")
# TIFF compressions Pillow writes; a turned TIFF is written with its own when it is one of them.
_TIFF_WRITTEN = ("raw", "tiff_lzw", "tiff_deflate", "tiff_adobe_deflate", "packbits")
ORIENTATION = 0x0112
_PNG_DROPPED = {b"eXIf", b"tEXt", b"zTXt", b"iTXt"}
_WEBP_DROPPED = {b"EXIF", b"XMP "}
_VP8X_EXIF, _VP8X_XMP = 0x08, 0x04


# A plan of the stored file: literal bytes, or (start, end) ranges copied from the source.
Piece = bytes | tuple[int, int]
_COPY = 1024 * 1024


@dataclass(frozen=True)
class Rewritten:
    """What was stored instead of the upload."""

    size: int
    sha256: str
    width: int
    height: int


def strip_metadata(path: Path, fmt: str) -> Rewritten | None:
    """Rewrite the image at `path` without metadata; None when it carries none and is upright (the file
    is left untouched). Raises ImageRejected when the image cannot be rewritten."""
    if fmt not in STRIPPED_FORMATS:
        return None
    Image = pillow()  # the module, under its usual name
    try:
        with Image.open(path, formats=[fmt]) as im:
            width, height = im.size
            frames = int(getattr(im, "n_frames", 1) or 1)
            orientation = _orientation(im, path, fmt)
            if orientation != 1 and frames == 1 and width * height <= MAX_DECODED_PIXELS:
                source = io.BytesIO(_turned(im, fmt))
                pieces, _ = _plan(source, fmt, 1)
                with Image.open(source) as turned:
                    width, height = turned.size
                return _write(path, source, pieces, width, height)
        with open(path, "rb") as fh:
            pieces, changed = _plan(fh, fmt, orientation if fmt in _KEEPS_ORIENTATION else 1)
            if not changed:
                return None
            return _write(path, fh, pieces, width, height)
    except ImageRejected:
        raise
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError, KeyError, TypeError,
            MemoryError):
        raise ImageRejected("the image is damaged or not supported") from None


def _orientation(im: Image.Image, path: Path, fmt: str) -> int:
    if fmt == "PNG":
        # Pillow finds an eXIf chunk behind the pixels only by decoding them: read the chunk directly.
        with open(path, "rb") as fh:
            raw = _png_exif(fh)
        exif = pillow().Exif()
        if raw:
            exif.load(raw)
    else:
        exif = im.getexif()
    value = exif.get(ORIENTATION, 1)
    return value if isinstance(value, int) and 2 <= value <= 8 else 1


def _turned(im: Image.Image, fmt: str) -> bytes:
    """The image decoded, turned upright and encoded again in its format (metadata is stripped after)."""
    from PIL import ImageOps, JpegImagePlugin

    im.load()
    upright = ImageOps.exif_transpose(im)
    options: dict[str, object] = {}
    if im.info.get("icc_profile"):
        options["icc_profile"] = im.info["icc_profile"]
    if fmt == "JPEG":
        sampling = JpegImagePlugin.get_sampling(im)
        options.update(quality=92, optimize=True)
        if sampling != -1:
            options["subsampling"] = sampling
    elif fmt == "PNG":
        if "transparency" in im.info:
            options["transparency"] = im.info["transparency"]
    elif fmt == "TIFF":
        compression = im.info.get("compression")
        options["compression"] = compression if compression in _TIFF_WRITTEN else "tiff_lzw"
    else:
        options.update(quality=90, method=4)
    out = io.BytesIO()
    upright.save(out, format=fmt, **options)
    return out.getvalue()


def _plan(fh: BinaryIO, fmt: str, keep_orientation: int) -> tuple[list[Piece], bool]:
    """The pieces of the file without metadata, and whether anything was left out or changed."""
    if fmt == "JPEG":
        return _plan_jpeg(fh, keep_orientation)
    if fmt == "PNG":
        return _plan_png(fh)
    if fmt == "TIFF":
        return plan_tiff(fh, keep_orientation != 1)
    return _plan_webp(fh)


def _write(path: Path, source: BinaryIO, pieces: list[Piece], width: int, height: int) -> Rewritten:
    """Write the pieces in place of the file at `path` (private like the spool it replaces), a buffer at
    a time, hashing as it goes."""
    temporary = path.with_name(path.name + ".clean")
    digest, size = hashlib.sha256(), 0
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in pieces:
                for block in _blocks(source, piece):
                    digest.update(block)
                    size += len(block)
                    out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return Rewritten(size, digest.hexdigest(), width, height)


def _blocks(source: BinaryIO, piece: Piece) -> Iterator[bytes]:
    if isinstance(piece, bytes):
        yield piece
        return
    start, end = piece
    source.seek(start)
    while start < end:
        block = source.read(min(_COPY, end - start))
        if not block:
            raise ImageRejected("the image is truncated")
        start += len(block)
        yield block


# ---- JPEG ---------------------------------------------------------------------------------------


def _jpeg_segments(fh: BinaryIO) -> Iterator[tuple[int, int, int]]:
    """(marker, start, end) of every part after SOI: marker segments, and the entropy-coded data of each
    scan as marker 0 (copied as it is)."""
    fh.seek(0)
    reader = cast(io.BufferedReader, fh)
    if _need(reader, 2) != b"\xff\xd8":
        raise ImageRejected("the JPEG stream is damaged")
    while True:
        start = fh.tell()
        marker = _next_marker(reader)
        if marker == 0xD9:
            yield marker, start, fh.tell()
            return
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            yield marker, start, fh.tell()
            continue
        (length,) = struct.unpack(">H", _need(reader, 2))
        if length < 2:
            raise ImageRejected("the JPEG stream is damaged")
        fh.seek(length - 2, io.SEEK_CUR)
        end = fh.tell()
        yield marker, start, end
        if marker == 0xDA:
            fh.seek(end)
            _skip_scan(reader)
            yield 0, end, fh.tell()


def _jpeg_dropped(marker: int) -> bool:
    # APP1 holds EXIF and XMP, APP13 Photoshop/IPTC data, APP3-APP12 and APP15 vendor data, 0xFE comments.
    # APP0 (JFIF), APP2 (ICC profile) and APP14 (Adobe colour transform) are needed to show the pixels.
    return marker == 0xFE or marker == 0xE1 or 0xE3 <= marker <= 0xED or marker == 0xEF


def _plan_jpeg(fh: BinaryIO, keep_orientation: int) -> tuple[list[Piece], bool]:
    pieces: list[Piece] = [b"\xff\xd8"]
    changed = False
    if keep_orientation != 1:
        exif = pillow().Exif()
        exif[ORIENTATION] = keep_orientation
        block = exif.tobytes()  # "Exif\0\0" and a TIFF header with the one tag
        pieces.append(b"\xff\xe1" + struct.pack(">H", len(block) + 2) + block)
        changed = True
    for marker, start, end in list(_jpeg_segments(fh)):
        if _jpeg_dropped(marker):
            changed = True
        else:
            pieces.append((start, end))
    return pieces, changed


# ---- PNG ----------------------------------------------------------------------------------------


def _png_chunks(fh: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """(kind, start, end) of every chunk, up to IEND."""
    fh.seek(8)
    while True:
        start = fh.tell()
        header = fh.read(8)
        if len(header) != 8:
            raise ImageRejected("the image is truncated")
        length, kind = struct.unpack(">I4s", header)
        end = start + 12 + length
        yield kind, start, end
        if kind == b"IEND":
            return
        fh.seek(end)


def _png_exif(fh: BinaryIO) -> bytes:
    for kind, start, end in list(_png_chunks(fh)):
        if kind == b"eXIf":
            fh.seek(start + 8)
            return fh.read(end - start - 12)
    return b""


def _plan_png(fh: BinaryIO) -> tuple[list[Piece], bool]:
    pieces: list[Piece] = [(0, 8)]
    changed = False
    for kind, start, end in list(_png_chunks(fh)):
        if kind in _PNG_DROPPED:
            changed = True
        else:
            pieces.append((start, end))
    return pieces, changed


# ---- WebP ---------------------------------------------------------------------------------------


def _plan_webp(fh: BinaryIO) -> tuple[list[Piece], bool]:
    fh.seek(0)
    header = fh.read(12)
    if len(header) != 12 or header[:4] != b"RIFF" or header[8:12] != b"WEBP":
        raise ImageRejected("the WebP stream is damaged")
    riff_end = struct.unpack("<I", header[4:8])[0] + 8
    pieces: list[Piece] = []
    body = 4  # "WEBP"
    changed = False
    offset = 12
    while offset + 8 <= riff_end:
        fh.seek(offset)
        chunk_header = fh.read(8)
        kind = chunk_header[:4]
        (length,) = struct.unpack("<I", chunk_header[4:8])
        end = offset + 8 + length + (length & 1)  # chunks are padded to an even size
        if kind in _WEBP_DROPPED:
            changed = True
        elif kind == b"VP8X" and length >= 1:
            # The header chunk announces EXIF and XMP: the flags go with the chunks.
            chunk = chunk_header + fh.read(end - offset - 8)
            flags = chunk[8] & ~(_VP8X_EXIF | _VP8X_XMP) & 0xFF
            changed = changed or flags != chunk[8]
            pieces.append(chunk[:8] + bytes([flags]) + chunk[9:])
            body += len(chunk)
        else:
            pieces.append((offset, end))
            body += end - offset
        offset = end
    return [b"RIFF" + struct.pack("<I", body) + b"WEBP", *pieces], changed
