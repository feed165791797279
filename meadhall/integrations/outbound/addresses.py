"""The outbound address rules (docs/outbound.md): which addresses the service may connect to when it
fetches a link preview or delivers a Web Push message, and which URLs it may ask for at all.

Pure functions, no network: the connect-time guard (client.py) asks `refusal` about every address a name
resolves to and about the very address each socket is about to connect to, so what a host name *looks*
like never decides; `url_target` only turns the numeric spellings of IPv4 that resolvers accept (`127.1`,
`0x7f.0.0.1`, `2130706433`, octal `0177.0.0.1`) into the one address they name, so the URL can be refused
before any connection and the normalised URL shows the real target.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Union

from yarl import URL

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]  # noqa: UP007 - a runtime alias
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]  # noqa: UP007

# IPv4 ranges that are not the public Internet: "this network", private, CGNAT (shared address space),
# loopback, link-local (cloud metadata lives at 169.254.169.254), IETF protocol assignments, the
# documentation nets, the old 6to4 relay anycast, benchmarking, multicast, reserved and broadcast.
_V4_REFUSED = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))
# IPv6: only global unicast (2000::/3) is reachable; inside it the IETF protocol block (Teredo among them)
# and the documentation prefixes are not. Loopback, unspecified, IPv4-compatible, unique-local, link-local,
# site-local, multicast and the local-use NAT64 prefix all lie outside 2000::/3.
_V6_GLOBAL = ipaddress.IPv6Network("2000::/3")
_V6_REFUSED = tuple(ipaddress.IPv6Network(n) for n in ("2001::/23", "2001:db8::/32", "3fff::/20"))
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def refusal(address: IPAddress, allowed: Sequence[Network] = ()) -> str | None:
    """Why the service must not connect to `address`, or None when it may. `allowed` are the operator's
    OUTBOUND_ALLOWED_NETWORKS, which let a refused address through; the embedded IPv4 of a NAT64 or
    6to4 address is another host behind a gateway and is judged without them."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # the same destination, spelt as IPv6
    if any(address in net for net in allowed if net.version == address.version):
        return None
    if isinstance(address, ipaddress.IPv4Address):
        return "not a public address" if any(address in net for net in _V4_REFUSED) else None
    if address in _NAT64:
        inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        return "NAT64 form of a refused address" if refusal(inner) else None
    if address.sixtofour is not None:
        return "6to4 form of a refused address" if refusal(address.sixtofour) else None
    if address not in _V6_GLOBAL or any(address in net for net in _V6_REFUSED):
        return "not a public address"
    return None


def parse_networks(value: str) -> list[Network]:
    """OUTBOUND_ALLOWED_NETWORKS: comma-separated CIDRs (a bare address is a /32 or /128)."""
    return [ipaddress.ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip()]


def numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host names the way resolvers read it (inet_aton: one to four parts,
    each decimal, octal with a leading 0 or hexadecimal with 0x, the last filling the remaining bytes),
    or None when the host is a name. Raises ValueError for a number that names no address."""
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts.pop()  # a trailing dot, as in "127.0.0.1."
    if not parts or not _is_number(parts[-1]):
        return None
    if len(parts) > 4 or not all(_is_number(p) for p in parts):
        raise ValueError("not an IPv4 address")
    values = [_number(p) for p in parts]
    if any(v > 255 for v in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise ValueError("not an IPv4 address")
    total = values[-1]
    for i, v in enumerate(values[:-1]):
        total += v << (8 * (3 - i))
    return ipaddress.IPv4Address(total)


def _is_number(part: str) -> bool:
    low = part.lower()
    if low.startswith("0x"):
        return all(c in "0123456789abcdef" for c in low[2:])  # "0x" alone is 0, as resolvers read it
    return part.isascii() and part.isdigit()


def _number(part: str) -> int:
    low = part.lower()
    if low.startswith("0x"):
        return int(low[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        if any(c in "89" for c in part):
            raise ValueError("not an IPv4 address")
        return int(part, 8)
    return int(part)


class RefusedURL(ValueError):
    """The URL may not be fetched: scheme, userinfo, no host, or an address that is refused."""


class MalformedURL(RefusedURL):
    """Not a URL at all: it cannot be parsed, or its host is neither a name nor an address (`[zz::1]`, a number
    that names no address, a space). A caller that tells a refused URL from an unreadable one catches this
    first (a link preview answers 422 for it, `blocked` for the others: docs/outbound.md)."""


# What a host name cannot hold (the WHATWG URL standard's forbidden domain code points): a URL whose host holds
# one has no host a resolver could be asked about.
_NOT_IN_NAMES = frozenset(" #%/:<>?@[\\]^|\x7f") | frozenset(chr(c) for c in range(0x20))


def url_target(raw: str | URL, allowed: Sequence[Network] = ()) -> URL:
    """The URL to fetch, normalised (numeric IPv4 spellings written as the address they name, no fragment),
    or RefusedURL. A host name is only judged later, by the addresses it resolves to at connect time."""
    try:
        url = raw if isinstance(raw, URL) else URL(raw)
        host = url.raw_host
    except (ValueError, TypeError, UnicodeError):
        raise MalformedURL("not a URL") from None
    if url.scheme not in ("http", "https"):
        raise RefusedURL("only http and https")
    if url.raw_user is not None or url.raw_password is not None:
        raise RefusedURL("a URL with credentials")
    if not host:
        raise RefusedURL("no host")
    if ":" not in host and not _NOT_IN_NAMES.isdisjoint(host):
        raise MalformedURL("a host that is neither a name nor an address")
    address: IPAddress | None
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0]) if ":" in host else numeric_ipv4(host)
    except ValueError:
        raise MalformedURL("an address that does not exist") from None
    if address is not None:
        reason = refusal(address, allowed)
        if reason:
            raise RefusedURL(reason)
        url = url.with_host(str(address))
    return url.with_fragment(None)


__all__ = ["IPAddress", "MalformedURL", "Network", "RefusedURL", "numeric_ipv4", "parse_networks", "refusal", "url_target"]
