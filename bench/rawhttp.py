"""A minimal HTTP/1.1 keep-alive client on asyncio streams: the load generator of `HttpPool`.

The load generator shares a small machine with the server; httpx costs about 0.8 ms of client CPU per
request, which capped what one client core could offer at about 1,200 requests per second, below the
message targets (docs/benchmarks.md). This client does what the workloads need and nothing more: one
connection, one request at a time, Content-Length or chunked bodies, a reconnect when the server closed
an idle keep-alive connection. Its responses offer the part of httpx.Response the workloads read.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import socket
from typing import Any
from urllib.parse import urlencode, urlsplit


class ClientError(Exception):
    """The connection failed or the answer was not HTTP/1.1 (counted as an operation error)."""


class _Url:
    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


class _Request:
    __slots__ = ("method", "url")

    def __init__(self, method: str, path: str) -> None:
        self.method = method
        self.url = _Url(path.split("?", 1)[0])


class Response:
    """status_code, headers (lower-case names), content, text, json(), request.method / request.url.path."""

    __slots__ = ("status_code", "headers", "content", "request")

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes, request: _Request) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.request = request

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class Connection:
    """One keep-alive connection to `base_url` (http only)."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"only http://host:port is supported, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.host_header = f"{self.host}:{self.port}".encode()
        self.timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        sock = self._writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def aclose(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    async def request(self, method: str, url: str, *, json: Any = None, content: bytes | None = None,
                      headers: dict[str, str] | None = None, params: dict[str, Any] | None = None) -> Response:
        path = f"{url}?{urlencode(params)}" if params else url
        lines = [f"{method} {path} HTTP/1.1".encode(), b"Host: " + self.host_header]
        if json is not None:
            content = jsonlib.dumps(json, separators=(",", ":")).encode()
            lines.append(b"Content-Type: application/json")
        body = content or b""
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: " + str(len(body)).encode())
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}".encode())
        payload = b"\r\n".join(lines) + b"\r\n\r\n" + body
        request = _Request(method, path)
        async with asyncio.timeout(self.timeout):
            reused = self._writer is not None
            if not reused:
                await self._connect()
            try:
                return await self._exchange(payload, request)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                await self.aclose()
                partial = exc.partial if isinstance(exc, asyncio.IncompleteReadError) else b""
                if not reused or partial:
                    raise ClientError(f"{method} {path}: {type(exc).__name__}") from None
            # The server closed the idle keep-alive connection before reading this request: once more.
            await self._connect()
            try:
                return await self._exchange(payload, request)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                await self.aclose()
                raise ClientError(f"{method} {path}: {type(exc).__name__}") from None

    async def _exchange(self, payload: bytes, request: _Request) -> Response:
        reader, writer = self._reader, self._writer
        assert reader is not None and writer is not None
        writer.write(payload)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        if not version.startswith("HTTP/1."):
            raise ClientError(f"not an HTTP/1.x answer: {status_line[:60]!r}")
        status = int(rest[:3])
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            content = await self._chunked(reader)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        elif status in (204, 304) or request.method == "HEAD":
            content = b""
        else:
            content = await reader.read()
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            await self.aclose()
        return Response(status, headers, content, request)

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)

    async def get(self, url: str, **kwargs: Any) -> Response:
        return await self.request("GET", url, **kwargs)

    async def post(self, url: str, **kwargs: Any) -> Response:
        return await self.request("POST", url, **kwargs)
