"""The client's address: from the socket, or from `X-Forwarded-For` only when `TRUST_PROXY` is on; and
the key that rate limits and the sign-in lockout count an address under."""

from __future__ import annotations

import ipaddress

from starlette.requests import HTTPConnection


def client_ip(conn: HTTPConnection) -> str:
    settings = conn.app.state.runtime.settings
    if settings.TRUST_PROXY:
        forwarded = conn.headers.get("x-forwarded-for")
        if forwarded:
            # The trusted proxy appends the address it saw; entries left of it are client-supplied.
            return forwarded.split(",")[-1].strip()
    return conn.client.host if conn.client else "unknown"


def address_key(ip: str) -> str:
    """IPv4 per address; IPv6 per /64, the smallest block a host is usually given (one host owns all
    2^64 addresses of its prefix, so per-address keys would give it unlimited buckets); an IPv4-mapped
    IPv6 address counts as its IPv4 address. Anything unparsable is kept as it is."""
    try:
        addr = ipaddress.ip_address(ip.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return ip
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


def client_key(conn: HTTPConnection) -> str:
    """The rate-limit key of an `ip`-keyed bucket (docs/reference/limits.md)."""
    return "ip" + address_key(client_ip(conn))
