"""The aiohttp side of the way out (client.py): the guarded resolver, the session of one request, redirects
followed by hand and the bounded body read. Imported on the first outbound request, so a node that fetches
no link preview and delivers no Web Push never loads aiohttp (some 7 MiB of modules)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from meadhall.integrations.outbound.addresses import RefusedURL
from meadhall.integrations.outbound.client import Answer, OutboundBlocked, OutboundFailed

if TYPE_CHECKING:
    from meadhall.integrations.outbound.client import Outbound

REDIRECTS = {301, 302, 303, 307, 308}


@dataclass
class _Attempt:
    """What one request's guard refused (the error aiohttp raises wraps it in its own type)."""

    refused: list[str] = field(default_factory=list)


class _GuardedResolver(AbstractResolver):
    def __init__(self, outbound: Outbound, attempt: _Attempt) -> None:
        self._outbound = outbound
        self._attempt = attempt

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        results = await self._outbound.resolve(host, port, family)
        for result in results:
            reason = self._outbound.refused(result["host"])
            if reason:
                self._attempt.refused.append(f"{host} resolves to a refused address: {reason}")
                raise OutboundBlocked(reason)
        return results

    async def close(self) -> None:
        return None


def system_resolver() -> ThreadedResolver:
    return ThreadedResolver()


async def send(outbound: Outbound, method: str, target: URL, headers: dict[str, str], data: bytes | None,
               redirects: int, max_bytes: int, seconds: float, read_body: Callable[[str], bool] | None) -> Answer:
    """One request through the guard (Outbound.request has checked the URL); raises OutboundBlocked or
    OutboundFailed."""
    attempt = _Attempt()
    connector = aiohttp.TCPConnector(resolver=_GuardedResolver(outbound, attempt), use_dns_cache=False,
                                     socket_factory=outbound._socket_factory(attempt), force_close=True,
                                     ssl=outbound.ssl_context if outbound.ssl_context is not None else True)
    try:
        async with asyncio.timeout(seconds), aiohttp.ClientSession(
                connector=connector, trust_env=False, cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=seconds)) as session:
            return await _follow(outbound, session, method, target, headers, data, redirects, max_bytes, read_body)
    except OutboundBlocked:
        raise
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
        if attempt.refused:
            raise OutboundBlocked(attempt.refused[0]) from None
        raise OutboundFailed(type(exc).__name__) from None


async def _follow(outbound: Outbound, session: aiohttp.ClientSession, method: str, target: URL,
                  headers: dict[str, str], data: bytes | None, redirects: int, max_bytes: int,
                  read_body: Callable[[str], bool] | None) -> Answer:
    for hop in range(redirects + 1):
        async with session.request(method, target, headers=headers, data=data, allow_redirects=False
                                   ) as resp:
            location = resp.headers.get("Location")
            if resp.status in REDIRECTS and location and redirects:
                if hop == redirects:
                    raise OutboundFailed("too many redirects")
                try:
                    target = outbound.target(target.join(URL(location)))
                except (RefusedURL, ValueError) as exc:
                    raise OutboundBlocked(f"redirect: {exc}") from None
                if resp.status == 303 or (resp.status in (301, 302) and method == "POST"):
                    method, data = "GET", None
                continue
            body = b""
            if read_body is None or read_body(resp.content_type):
                body = await _read_up_to(resp.content, max_bytes)
            answer_headers: Mapping[str, str] = dict(resp.headers)
            return Answer(resp.status, target, answer_headers, resp.content_type, resp.charset, body)
    raise OutboundFailed("too many redirects")


async def _read_up_to(stream: aiohttp.StreamReader, max_bytes: int) -> bytes:
    """The body until its end or `max_bytes`, whichever comes first. One `read(n)` returns what has arrived,
    at most n bytes and often far fewer (one network read), so a page sent in small pieces would lose all
    but its first one."""
    parts: list[bytes] = []
    left = max_bytes
    while left > 0:
        part = await stream.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
