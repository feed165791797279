"""The `file` part of a multipart upload as an async byte stream: what upload routes hand to the file
services (docs/files.md), which take a stream, a declared type and a name, never a request.

The body is parsed as it arrives (python-multipart's push parser); the bytes of the `file` part are
yielded as they come, other parts are counted and dropped, so a 25 MiB upload never sits whole in memory.
Sizes are enforced on what actually arrives, whatever `Content-Length` says: a body declared, or found,
larger than the limit plus room for the multipart framing answers 413 `file.too_large` at once (the file
service counts the file part itself against the same limit).

Opening is lazy: `multipart_file(request)` reads nothing; the service opens it with the limit in force
once the holder is authorised, so 404 / 403 / 422 come before the body is read.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import unquote

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from meadhall.api.middleware import UPLOAD_BODY_KEY
from meadhall.core.errors import AppError, validation_error

FILE_FIELD = "file"
# Headers, boundaries and small form fields beside the file.
FRAMING_ALLOWANCE = 64 * 1024
MAX_PARTS = 16
# Form fields beside the file (an emoji's `name`, a sound's `kind`): short text, kept whole.
FIELD_MAX_BYTES = 1024
_EXT_FILENAME = re.compile(r"""filename\*\s*=\s*([^;]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class FilePart:
    """The `file` part: its bytes as they arrive, the declared type and the file name as sent."""

    chunks: AsyncIterator[bytes]
    content_type: str
    filename: str
    # The other form fields by name: those before the file part at once, those after it once `chunks` has
    # been read to its end (the same dict, filled as the body is parsed).
    fields: dict[str, str] = field(default_factory=dict)


class _TooLarge(Exception):
    pass


class _Malformed(Exception):
    pass


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str = ""
    is_file: bool = False
    data: bytearray = field(default_factory=bytearray)


class _Collector:
    """python-multipart callbacks: they only record; the async side yields (callbacks cannot await)."""

    def __init__(self) -> None:
        self.part = _Part()
        self.parts = 0
        self.header_name = b""
        self.header_value = b""
        self.file_part: _Part | None = None
        self.file_done = False
        self.pending: list[bytes] = []
        self.ended = False
        self.fields: dict[str, str] = {}

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

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.part.is_file:
            self.pending.append(data[start:end])
        elif self.part.name:
            self.part.data += data[start:end]
            if len(self.part.data) > FIELD_MAX_BYTES:
                raise _Malformed(f"the field {self.part.name} is longer than {FIELD_MAX_BYTES} bytes")

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


@contextmanager
def _answered() -> Iterator[None]:
    """The parser's and the connection's failures as the error answers of an upload."""
    try:
        yield
    except _TooLarge:
        raise AppError("file.too_large") from None
    except (_Malformed, FormParserError) as exc:
        raise validation_error(FILE_FIELD, f"malformed multipart body ({exc})") from None
    except ClientDisconnect:
        # Nobody reads the answer; an expected failure keeps a vanished client out of the error log.
        raise validation_error(FILE_FIELD, "the upload was interrupted") from None


class _Body:
    def __init__(self, request: Request, body_cap: int) -> None:
        self.stream = request.stream()
        self.cap = body_cap
        self.received = 0
        self.collector = _Collector()
        self.parser = MultipartParser(_boundary(request), cast(Any, self.collector.callbacks()))  # a TypedDict of bound methods

    async def feed(self) -> bool:
        """Parse the next chunk of the body; False at its end."""
        chunk = await anext(self.stream, None)
        if chunk is None:
            return False
        self.received += len(chunk)
        if self.received > self.cap:
            raise _TooLarge()
        self.parser.write(chunk)
        return True

    async def file_chunks(self) -> AsyncIterator[bytes]:
        with _answered():
            while True:
                pending, self.collector.pending = self.collector.pending, []
                for piece in pending:
                    yield piece
                if not await self.feed():
                    break
            self.parser.finalize()
            if not (self.collector.file_done and self.collector.ended):
                raise validation_error(FILE_FIELD, "the multipart body ends before the file does")


async def open_file_part(request: Request, limit: int) -> FilePart:
    """Read the body up to the headers of the `file` part. 413 `file.too_large` for a body declared larger
    than `limit` plus the framing, 422 `validation.failed` (field `file`) for a body that is not multipart
    or has no `file` part."""
    declared = _declared_length(request)
    body = _Body(request, limit + FRAMING_ALLOWANCE)
    if declared is not None and declared > body.cap:
        raise AppError("file.too_large")
    # This route enforces its own limit; the 1 MiB cap of JSON bodies does not apply to it.
    request.scope.setdefault("state", {})[UPLOAD_BODY_KEY] = True
    with _answered():
        while body.collector.file_part is None:
            if not await body.feed():
                raise validation_error(FILE_FIELD, "the part named file is missing")
    part = body.collector.file_part
    content_type = part.headers.get(b"content-type", b"").decode("latin-1")
    return FilePart(body.file_chunks(), content_type, _filename(part), body.collector.fields)


def multipart_file(request: Request) -> Callable[[int], Awaitable[FilePart]]:
    """The upload of this request, opened by the service with the size limit in force."""

    async def open_upload(limit: int) -> FilePart:
        return await open_file_part(request, limit)

    return open_upload
