"""What an upload may be (docs/files.md): the declared type and the content must agree.

Image purposes take PNG, JPEG, WebP or GIF only, fully decoded. Attachments take any type, but a type this
service can check is checked: images by decoding their header with Pillow (and the end of the file), audio
and video by their signature, and a recognised signature under another declared type is refused (a text
file declared `image/png`, a PNG declared `text/plain`). `application/octet-stream` means "undeclared":
the type is then taken from a recognised signature, or stays `application/octet-stream` (downloaded).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any

from meadhall.core.errors import AppError
from meadhall.files import sniff
from meadhall.files.images import ImageInfo, ImageRejected, inspect_image
from meadhall.files.metadata import Rewritten, strip_metadata
from meadhall.files.names import OCTET_STREAM
from meadhall.filestore import Spool
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class Checked:
    content_type: str
    meta: dict[str, Any]
    # Set when the content was rewritten (photo metadata removed): size and hash of what is stored.
    stored: Rewritten | None = None


def unsupported(reason: str) -> AppError:
    return AppError("file.unsupported_type", f"This file type is not allowed: {reason}")


async def _head(spool: Spool) -> bytes:
    def read() -> bytes:
        with open(spool.path, "rb") as fh:
            return fh.read(sniff.HEAD_BYTES)

    return await asyncio.to_thread(read)


def _check_and_clean(spool: Spool, fmt: str, decode: bool) -> tuple[ImageInfo, Rewritten | None]:
    info = inspect_image(spool.path, fmt, decode=decode)
    return info, strip_metadata(spool.path, fmt)


async def _image(rt: Runtime, spool: Spool, content_type: str, *, decode: bool) -> Checked:
    """Check the image, then remove its photo metadata (docs/files.md), in the image pool."""
    try:
        info, stored = await rt.off_loop_images(
            partial(_check_and_clean, spool, sniff.IMAGE_FORMATS[content_type], decode))
    except ImageRejected as exc:
        raise unsupported(str(exc)) from None
    if stored is not None:
        return Checked(content_type, {"width": stored.width, "height": stored.height}, stored)
    return Checked(content_type, {"width": info.width, "height": info.height})


def image_type_allowed(declared: str) -> bool:
    """The declared types of the image purposes, checked before the content is read."""
    return sniff.canonical(declared) in sniff.WEB_IMAGES


async def check_image(rt: Runtime, spool: Spool, declared: str) -> Checked:
    """Avatars, icons, banners, splashes, backgrounds and conversation icons."""
    if not image_type_allowed(declared):
        raise unsupported("images must be PNG, JPEG, WebP or GIF")
    return await _image(rt, spool, sniff.canonical(declared), decode=True)


async def check_attachment(rt: Runtime, spool: Spool, declared: str) -> Checked:
    content_type = sniff.canonical(declared)
    found = sniff.signature(await _head(spool))
    if content_type == OCTET_STREAM:
        return await _undeclared(rt, spool, found)
    if content_type in sniff.IMAGE_FORMATS:
        return await _image(rt, spool, content_type, decode=False)
    if content_type.startswith("image/") and content_type != "image/svg+xml":
        raise unsupported(f"{content_type} cannot be checked; send it as application/octet-stream")
    if not sniff.signature_allows(content_type, found):
        raise unsupported(f"the content does not match the declared type {content_type}")
    return Checked(content_type, {})


async def _undeclared(rt: Runtime, spool: Spool, found: str | None) -> Checked:
    if found in sniff.IMAGE_SIGNATURES:
        try:
            return await _image(rt, spool, sniff.IMAGE_SIGNATURES[found], decode=False)
        except AppError:
            return Checked(OCTET_STREAM, {})  # looks like an image but is not one: a plain download
    return Checked(sniff.SIGNATURE_TYPES.get(found or "", OCTET_STREAM), {})
