"""The one way out (docs/outbound.md): an aiohttp client whose every connection is checked at connect time.

A name's addresses are checked when it resolves (every address: one refused address refuses the name), and
the address each socket is about to connect to is checked again in the socket factory, which also covers IP
literals (aiohttp does not resolve those). Redirects are followed by hand, each hop's URL checked again and
its connection guarded the same way. The environment's proxy settings are ignored (`trust_env=False`): a
proxy would make the connected address say nothing about the target.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yarl import URL

from meadhall.integrations.outbound.addresses import Network, RefusedURL, refusal, url_target

if TYPE_CHECKING:
    # aiohttp is imported with the first request (transport.py), not with the runtime.
    from aiohttp.abc import ResolveResult
    from aiohttp.resolver import ThreadedResolver

    from meadhall.integrations.outbound.transport import _Attempt

# host, port, family -> the resolver's answer; tests replace it to make a name resolve where they want.
Resolve = Callable[[str, int, socket.AddressFamily], Awaitable[list["ResolveResult"]]]


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
            from meadhall.integrations.outbound.transport import system_resolver

            self._threaded = system_resolver()
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
        try:
            target = self.target(url)
        except RefusedURL as exc:
            raise OutboundBlocked(str(exc)) from None
        from meadhall.integrations.outbound.transport import send

        return await send(self, method, target, {"User-Agent": self.user_agent, **(headers or {})}, data,
                          redirects, max_bytes, seconds, read_body)


__all__ = ["Answer", "Outbound", "OutboundBlocked", "OutboundFailed", "Resolve"]
