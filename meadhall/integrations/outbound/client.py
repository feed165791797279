"""The one way out (docs/outbound.md): an aiohttp client whose every connection is checked at connect time.

A name's addresses are checked when it resolves (every address: one refused address refuses the name), and
the address each socket is about to connect to is checked again in the socket factory, which also covers IP
literals (aiohttp does not resolve those). Redirects are followed by hand, each hop's URL checked again and
its connection guarded the same way. The environment's proxy settings are ignored (`trust_env=False`): a
proxy would make the connected address say nothing about the target.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from meadhall.integrations.outbound.addresses import Network, RefusedURL, refusal, url_target

REDIRECTS = {301, 302, 303, 307, 308}

# host, port, family -> the resolver's answer; tests replace it to make a name resolve where they want.
Resolve = Callable[[str, int, socket.AddressFamily], Awaitable[list[ResolveResult]]]


class OutboundBlocked(OSError):
    """A destination the address rules refuse; nothing was sent to it."""


class OutboundFailed(Exception):
    """The fetch failed: network, TLS, timeout, too many redirects, or an answer that could not be read."""


@dataclass
class Answer:
    status: int
    url: URL
    headers: Mapping[str, str]
    content_type: str
    charset: str | None
    body: bytes


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


class Outbound:
    """Built once per process (the runtime's `outbound`). `ssl_context` None = the system's trust store;
    tests set one that also trusts their own CA, never an unverified one."""

    def __init__(self, allowed: Sequence[Network] = (), *, user_agent: str = "Meadhall") -> None:
        self.allowed = list(allowed)
        self.user_agent = user_agent
        self.ssl_context: ssl.SSLContext | None = None
        self.resolve: Resolve = self._system_resolve
        # When set, every address outside these networks is refused as well: the tests confine their traffic
        # to the loopback range this way (tests/support/outbound.py), whatever the rules above would allow.
        self.confine_to: list[Network] | None = None
        self._threaded: ThreadedResolver | None = None

    async def _system_resolve(self, host: str, port: int, family: socket.AddressFamily) -> list[ResolveResult]:
        if self._threaded is None:
            self._threaded = ThreadedResolver()
        return await self._threaded.resolve(host, port, family)

    def refused(self, address: str) -> str | None:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return "not an address"
        if self.confine_to is not None and not any(ip in net for net in self.confine_to if net.version == ip.version):
            return "outside the networks this process is confined to"
        return refusal(ip, self.allowed)

    def target(self, url: str | URL) -> URL:
        """The normalised URL, or RefusedURL (scheme, userinfo, a refused literal address)."""
        target = url_target(url, self.allowed)
        host = target.raw_host or ""
        if self.confine_to is not None and (":" in host or host.replace(".", "").isdigit()):
            reason = self.refused(host)
            if reason:
                raise RefusedURL(reason)
        return target

    async def allows(self, url: str | URL) -> bool:
        """Whether the guard would let a request to `url` through, judged without connecting: its scheme and
        literal address, and every address its name resolves to (a URL handed on to clients, such as a
        preview's image, must not name what the service itself refuses)."""
        try:
            target = self.target(url)
        except RefusedURL:
            return False
        host = target.raw_host or ""
        if self.refused(host) is None:
            return True  # a literal address the rules allow
        try:
            results = await self.resolve(host, target.port or 0, socket.AF_UNSPEC)
        except OSError:
            return False
        return bool(results) and all(self.refused(r["host"]) is None for r in results)

    def _socket_factory(self, attempt: _Attempt) -> Callable[[Any], socket.socket]:
        def make(addr_info: Any) -> socket.socket:
            family, type_, proto, _, sockaddr = addr_info
            reason = self.refused(str(sockaddr[0]))
            if reason:
                attempt.refused.append(f"connection to a refused address: {reason}")
                raise OutboundBlocked(reason)
            return socket.socket(family=family, type=type_, proto=proto)
        return make

    async def request(self, method: str, url: str | URL, *, headers: Mapping[str, str] | None = None,
                      data: bytes | None = None, redirects: int = 0, max_bytes: int = 512 * 1024,
                      seconds: float = 5.0, read_body: Callable[[str], bool] | None = None) -> Answer:
        """One request through the guard, following up to `redirects` redirects (each hop checked), all
        within `seconds`. At most `max_bytes` of the body are read, and only when `read_body(content_type)`
        says so (default: always). Raises OutboundBlocked or OutboundFailed."""
        attempt = _Attempt()
        try:
            target = self.target(url)
        except RefusedURL as exc:
            raise OutboundBlocked(str(exc)) from None
        connector = aiohttp.TCPConnector(resolver=_GuardedResolver(self, attempt), use_dns_cache=False,
                                         socket_factory=self._socket_factory(attempt), force_close=True,
                                         ssl=self.ssl_context if self.ssl_context is not None else True)
        all_headers = {"User-Agent": self.user_agent, **(headers or {})}
        try:
            async with asyncio.timeout(seconds), aiohttp.ClientSession(
                    connector=connector, trust_env=False, cookie_jar=aiohttp.DummyCookieJar(),
                    timeout=aiohttp.ClientTimeout(total=seconds)) as session:
                return await self._follow(session, method, target, all_headers, data, redirects, max_bytes,
                                          read_body)
        except OutboundBlocked:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            if attempt.refused:
                raise OutboundBlocked(attempt.refused[0]) from None
            raise OutboundFailed(type(exc).__name__) from None

    async def _follow(self, session: aiohttp.ClientSession, method: str, target: URL, headers: dict[str, str],
                      data: bytes | None, redirects: int, max_bytes: int,
                      read_body: Callable[[str], bool] | None) -> Answer:
        for hop in range(redirects + 1):
            async with session.request(method, target, headers=headers, data=data, allow_redirects=False
                                       ) as resp:
                location = resp.headers.get("Location")
                if resp.status in REDIRECTS and location and redirects:
                    if hop == redirects:
                        raise OutboundFailed("too many redirects")
                    try:
                        target = self.target(target.join(URL(location)))
                    except (RefusedURL, ValueError) as exc:
                        raise OutboundBlocked(f"redirect: {exc}") from None
                    if resp.status == 303 or (resp.status in (301, 302) and method == "POST"):
                        method, data = "GET", None
                    continue
                body = b""
                if read_body is None or read_body(resp.content_type):
                    body = await _read_up_to(resp.content, max_bytes)
                return Answer(resp.status, target, dict(resp.headers), resp.content_type, resp.charset, body)
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


__all__ = ["Answer", "Outbound", "OutboundBlocked", "OutboundFailed", "Resolve"]
