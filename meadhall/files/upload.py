"""Receive the `file` part of a multipart upload (API.md 0.11) straight into a spool, never whole in memory.

The body is parsed as it arrives (python-multipart's push parser); the bytes of the `file` part go to the
spool (hashed on the way), other parts are counted and dropped. Sizes are enforced on what actually
arrives, whatever `Content-Length` says: the file part above the limit answers 413 `file.too_large` at
once, and so does a body declared, or found, larger than the limit plus room for the multipart framing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from meadhall.api.middleware import UPLOAD_BODY_KEY
from meadhall.core.errors import AppError, validation_error
from meadhall.files.names import clean_name, media_type
from meadhall.filestore import FileStore, Spool

FILE_FIELD = "file"
# Headers, boundaries and small form fields beside the file.
FRAMING_ALLOWANCE = 64 * 1024
MAX_PARTS = 16
_EXT_FILENAME = re.compile(r"""filename\*\s*=\s*([^;]+)""", re.IGNORECASE)


@dataclass
class Received:
    spool: Spool
    filename: str
    declared_type: str
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.spool.size


class _TooLarge(Exception):
    pass


class _Malformed(Exception):
    pass


class _Unsupported(Exception):
    pass


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str = ""
    is_file: bool = False
    data: bytearray = field(default_factory=bytearray)


class _Collector:
    """python-multipart callbacks: they only record; the async side writes (callbacks cannot await)."""

    def __init__(self, limit: int, accept: Callable[[str], bool] | None) -> None:
        self.limit = limit
        self.accept = accept
        self.part = _Part()
        self.parts = 0
        self.header_name = b""
        self.header_value = b""
        self.file_part: _Part | None = None
        self.file_done = False
        self.file_bytes = 0
        self.pending: list[bytes] = []
        self.fields: dict[str, str] = {}
        self.ended = False

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self.on_part_begin, "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end, "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value, "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished, "on_end": self.on_end,
        }

    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise _Malformed("too many parts")
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        self.part.headers[self.header_name.strip().lower()] = self.header_value.strip()
        self.header_name, self.header_value = b"", b""

    def on_headers_finished(self) -> None:
        disposition = self.part.headers.get(b"content-disposition", b"")
        _, options = parse_options_header(disposition)
        self.part.name = options.get(b"name", b"").decode("utf-8", "replace")
        if self.part.name == FILE_FIELD and self.file_part is None:
            self.part.is_file = True
            self.file_part = self.part
            declared = media_type(self.part.headers.get(b"content-type", b"").decode("latin-1"))
            if self.accept is not None and not self.accept(declared):
                raise _Unsupported(declared)  # refused before its content is read

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.part.is_file:
            self.file_bytes += end - start
            if self.file_bytes > self.limit:
                raise _TooLarge()
            self.pending.append(data[start:end])
        elif len(self.part.data) < 4096:
            self.part.data += data[start:end][: 4096 - len(self.part.data)]

    def on_part_end(self) -> None:
        if self.part.is_file:
            self.file_done = True
        elif self.part.name and self.part.name not in self.fields:
            self.fields[self.part.name] = self.part.data.decode("utf-8", "replace")

    def on_end(self) -> None:
        self.ended = True


def _boundary(request: Request) -> bytes:
    kind, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise validation_error(FILE_FIELD, "send the file as multipart/form-data in a part named file")
    return boundary


def _declared_length(request: Request) -> int | None:
    try:
        return int(request.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _filename(part: _Part) -> str:
    """The uploaded name: RFC 5987 `filename*` when given, else `filename` (browsers send UTF-8)."""
    raw = part.headers.get(b"content-disposition", b"").decode("utf-8", "replace")
    match = _EXT_FILENAME.search(raw)
    if match:
        charset, _, rest = match.group(1).strip().strip('"').partition("'")
        _, _, encoded = rest.partition("'")
        try:
            return unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    _, options = parse_options_header(part.headers.get(b"content-disposition", b""))
    return options.get(b"filename", b"").decode("utf-8", "replace")


async def receive_file(request: Request, store: FileStore, limit: int,
                       accept: Callable[[str], bool] | None = None) -> Received:
    """Stream the body into a spool. 413 `file.too_large` over `limit`, 422 `validation.failed` (field
    `file`) for a body that is not multipart or has no `file` part, 415 `file.unsupported_type` at once
    when `accept` refuses the declared type. The caller owns the spool."""
    boundary = _boundary(request)
    body_cap = limit + FRAMING_ALLOWANCE
    declared = _declared_length(request)
    if declared is not None and declared > body_cap:
        raise AppError("file.too_large")
    # This route enforces its own limit; the 1 MiB cap of JSON bodies does not apply to it.
    request.scope.setdefault("state", {})[UPLOAD_BODY_KEY] = True
    collector = _Collector(limit, accept)
    parser = MultipartParser(boundary, collector.callbacks())
    spool = await store.new_spool()
    received = 0
    kept = False
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > body_cap:
                raise _TooLarge()
            parser.write(chunk)
            for piece in collector.pending:
                await spool.write(piece)
            collector.pending.clear()
        parser.finalize()
        if collector.file_part is None:
            raise validation_error(FILE_FIELD, "the part named file is missing")
        if not (collector.file_done and collector.ended):
            raise validation_error(FILE_FIELD, "the multipart body ends before the file does")
        await spool.finish()
        kept = True
    except _TooLarge:
        raise AppError("file.too_large") from None
    except (_Malformed, FormParserError) as exc:
        raise validation_error(FILE_FIELD, f"malformed multipart body ({exc})") from None
    except _Unsupported as exc:
        raise AppError("file.unsupported_type", f"This file type is not allowed: {exc}") from None
    except ClientDisconnect:
        # Nobody reads the answer; an expected failure keeps a vanished client out of the error log.
        raise validation_error(FILE_FIELD, "the upload was interrupted") from None
    finally:
        if not kept:
            spool.discard()  # also on a client that went away and on cancellation
    part = collector.file_part
    return Received(spool, clean_name(_filename(part)), media_type(part.headers.get(b"content-type", b"").decode(
        "latin-1")), collector.fields)
