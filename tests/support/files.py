"""Files: real images made by Pillow, crafted images (bombs, polyglots, exact
sizes), and upload calls."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path
from typing import Any

from PIL import Image

from tests.support.http import API


def png(width: int = 16, height: int = 16, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "PNG")
    return buf.getvalue()


def jpeg(width: int = 16, height: int = 16) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def webp(width: int = 16, height: int = 16) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 20)).save(buf, "WEBP")
    return buf.getvalue()


def gif(frames: int = 3, width: int = 8, height: int = 8) -> bytes:
    images = [Image.new("RGB", (width, height), ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256))
              for i in range(frames)]
    buf = io.BytesIO()
    images[0].save(buf, "GIF", save_all=True, append_images=images[1:], duration=40, loop=0)
    return buf.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_of_size(size: int) -> bytes:
    """A valid PNG of exactly `size` bytes: a small image plus a private ancillary chunk as padding."""
    base = png(4, 4)
    iend = _chunk(b"IEND", b"")
    body = base[: -len(iend)]
    padding = size - len(base) - 12
    assert padding >= 0, f"a PNG cannot be smaller than {len(base) + 12} bytes"
    return body + _chunk(b"pdDg", b"\0" * padding) + iend


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A tiny PNG whose header declares a huge canvas (a decompression bomb)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1024, 9)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def real_bomb_png() -> bytes:
    """A real image of 9000 x 9000 one-bit pixels (81 megapixels, 240 MB as RGB in memory): 10 MB raw,
    a few kilobytes compressed."""
    buf = io.BytesIO()
    Image.new("1", (9000, 9000)).save(buf, "PNG")
    return buf.getvalue()


async def upload(client: Any, account: Any, path: str, data: bytes, name: str = "image.png",
                 content_type: str = "image/png", **extra: Any) -> Any:
    headers = account.headers if account is not None else {}
    return await client.post(f"{API}{path}", files={"file": (name, data, content_type)}, headers=headers, **extra)


async def attach(client: Any, account: Any, channel_id: str, data: bytes = b"hello world", name: str = "note.txt",
                 content_type: str = "text/plain") -> Any:
    return await upload(client, account, f"/channels/{channel_id}/files", data, name, content_type)


async def attached(client: Any, account: Any, channel_id: str, data: bytes = b"hello world",
                   name: str = "note.txt", content_type: str = "text/plain") -> dict[str, Any]:
    r = await attach(client, account, channel_id, data, name, content_type)
    assert r.status_code == 201, r.text
    return r.json()["file"]


def multipart(filename: str, data: bytes, content_type: str = "text/plain", boundary: str = "b0undary"
              ) -> tuple[bytes, dict[str, str]]:
    """A multipart body written byte for byte (httpx percent-encodes control characters in names)."""
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), {
        "Content-Type": f"multipart/form-data; boundary={boundary}"}


async def fetch(client: Any, account: Any, file_id: str, method: str = "GET", **headers: str) -> Any:
    all_headers = {**(account.headers if account is not None else {}), **headers}
    return await client.request(method, f"/files/{file_id}", headers=all_headers)


def stored(settings: Any, file_id: str | int) -> Path:
    """Where the file store keeps a file's bytes (docs/files.md)."""
    return settings.DATA_DIR / "files" / f"{int(file_id) % 256:02x}" / str(file_id)
