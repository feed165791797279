"""Receive an upload into a spool (docs/files.md): the service side of every upload, whoever calls it (a
route with a multipart part, later the CLI or a webhook with a local stream).

An upload is opened with the size limit in force (`OpenUpload`) and gives an async byte stream, the
declared content type and the file name. The bytes go to the spool as they arrive (hashed on the way),
never whole in memory: above the limit the upload answers 413 `file.too_large` at once; a declared type
that `accept` refuses answers 415 `file.unsupported_type` before the content is read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from meadhall.core.errors import AppError
from meadhall.files.names import clean_name, media_type
from meadhall.filestore import FileStore, Spool


class IncomingFile(Protocol):
    """An upload as the services take it (a frozen dataclass fits, e.g. `meadhall.api.multipart.FilePart`)."""

    @property
    def chunks(self) -> AsyncIterator[bytes]: ...

    @property
    def content_type(self) -> str:
        """As declared by the sender; canonicalised here."""

    @property
    def filename(self) -> str:
        """As sent; cleaned here."""


# Opened once the holder is authorised, with the limit in force, so the sender can refuse a body that
# announces more at once.
OpenUpload = Callable[[int], Awaitable[IncomingFile]]


@dataclass
class Received:
    spool: Spool
    filename: str
    declared_type: str

    @property
    def size(self) -> int:
        return self.spool.size


async def receive_file(open_upload: OpenUpload, store: FileStore, limit: int,
                       accept: Callable[[str], bool] | None = None) -> Received:
    """Stream the upload into a spool: 413 `file.too_large` over `limit`, 415 `file.unsupported_type` at
    once when `accept` refuses the declared type. The caller owns the spool."""
    incoming = await open_upload(limit)
    chunks = incoming.chunks
    try:
        declared = media_type(incoming.content_type)
        if accept is not None and not accept(declared):
            raise AppError("file.unsupported_type", f"This file type is not allowed: {declared}")
        spool = await _spool(chunks, store, limit)
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()  # an upload refused half-way stops reading its body
    return Received(spool, clean_name(incoming.filename), declared)


async def _spool(chunks: AsyncIterator[bytes], store: FileStore, limit: int) -> Spool:
    spool = await store.new_spool()
    kept = False
    try:
        async for chunk in chunks:
            if spool.size + len(chunk) > limit:
                raise AppError("file.too_large")
            await spool.write(chunk)
        await spool.finish()
        kept = True
    finally:
        if not kept:
            spool.discard()  # also on a client that went away and on cancellation
    return spool
