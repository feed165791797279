"""`GET/HEAD /files/{id}` and `GET /api/v1/files/{id}` (OpenAPI: getFileContent, headFileContent, getFile).

Content leaves in chunks straight from the store (never whole in memory) with headers that keep a browser
from running it: `X-Content-Type-Options: nosniff`, a sandboxing `Content-Security-Policy`, and
`Content-Disposition: attachment` for anything but images (not SVG), audio and video. Content is
immutable (a changed image is a new file), so it is cached for a year, privately since access is
checked; `If-None-Match` with the `ETag` answers 304. Range requests are not supported.
"""

from __future__ import annotations

from typing import Any

import structlog
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.files.access import access_file
from meadhall.files.names import content_disposition, disposition_kind
from meadhall.files.queries import FileRow
from meadhall.files.views import file_view
from meadhall.filestore import ContentReader
from meadhall.runtime import Runtime

log = structlog.get_logger("meadhall.files")

CACHE_CONTROL = "private, max-age=31536000, immutable"
SANDBOX_CSP = "default-src 'none'; sandbox"


class ContentResponse(Response):
    """Headers first, then the content chunk by chunk (nothing for HEAD and 304)."""

    def __init__(self, status_code: int, headers: dict[str, str], reader: ContentReader | None = None) -> None:
        self.status_code = status_code
        self.background = None
        self.body = b""
        self.reader = reader
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if self.reader is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        try:
            async for chunk in self.reader:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (OSError, ClientDisconnect):
            log.debug("download interrupted by the client")
        finally:
            await self.reader.close()


def etag_of(row: FileRow) -> str:
    return f'"{row["sha256"]}"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 weak comparison over the listed tags (`*` matches any)."""
    if not if_none_match:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def content_headers(row: FileRow) -> dict[str, str]:
    content_type = row["content_type"]
    return {
        "Content-Type": content_type,
        "Content-Length": str(int(row["size"])),
        "ETag": etag_of(row),
        "Cache-Control": CACHE_CONTROL,
        "Content-Disposition": content_disposition(disposition_kind(content_type), row["original_name"]),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": SANDBOX_CSP,
        "Accept-Ranges": "none",
    }


async def content(rt: Runtime, principal: Principal, raw_id: str, *, head: bool, if_none_match: str | None
                  ) -> ContentResponse:
    async with rt.read() as uow:
        row = await access_file(uow.conn, principal, raw_id, uow.now)
    etag = etag_of(row)
    if etag_matches(if_none_match, etag):
        return ContentResponse(304, {"ETag": etag, "Cache-Control": CACHE_CONTROL})
    headers = content_headers(row)
    if head:
        if not await rt.files.exists(row["id"]):
            raise _lost(row)
        return ContentResponse(200, headers)
    try:
        reader = await rt.files.open(row["id"])
    except FileNotFoundError:
        raise _lost(row) from None
    return ContentResponse(200, headers, reader)


def _lost(row: FileRow) -> AppError:
    log.error("file content missing", file_id=row["id"])
    return AppError("file.not_found")


async def metadata(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        row = await access_file(uow.conn, principal, raw_id, uow.now)
    return {"file": file_view(row)}
