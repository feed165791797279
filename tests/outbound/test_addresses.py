"""The outbound address rules on their own (docs/outbound.md): every refused range and every spelling whose
misreading could name another address, judged without opening a single connection."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from meadhall.integrations.outbound import (
    Outbound,
    OutboundBlocked,
    RefusedURL,
    parse_networks,
    refusal,
    url_target,
)
from meadhall.integrations.outbound.addresses import numeric_ipv4
from meadhall.integrations.outbound.transport import _Attempt, _GuardedResolver

REFUSED = [
    # IPv4 ranges that are not the public Internet
    "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1",
    "127.255.255.254", "169.254.169.254", "169.254.0.1", "172.16.0.1", "172.31.255.255", "192.0.0.8",
    "192.0.2.10", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
    "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    # IPv6: loopback, unspecified, unique-local, link-local, site-local, multicast, documentation, Teredo,
    # discard, IPv4-compatible, the local-use NAT64 prefix
    "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "ff05::1:3", "2001:db8::1",
    "2001::1", "2001:0:4136:e378::1", "100::1", "::127.0.0.1", "::a9fe:a9fe", "64:ff9b:1::a00:1", "3fff::1",
    # IPv4-mapped forms of refused addresses
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1", "::ffff:0.0.0.0",
    "::ffff:224.0.0.1",
    # NAT64 (64:ff9b::/96) forms
    "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::6440:1", "64:ff9b::c0a8:101",
    # 6to4 (2002::/16) forms
    "2002:7f00:1::", "2002:a00:1::1", "2002:a9fe:a9fe::", "2002:c0a8:101::", "2002:6440:1::", "2002:e000:1::",
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.32.0.1", "169.253.0.1",
          "2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", REFUSED)
def test_every_address_outside_the_public_internet_is_refused(address):
    assert refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_and_their_mapped_forms_pass(address):
    assert refusal(ipaddress.ip_address(address)) is None


def test_allowed_networks_let_only_their_own_addresses_through():
    allowed = parse_networks("10.1.2.0/24, 127.0.0.2/32,fd00::/64")
    assert refusal(ipaddress.ip_address("10.1.2.9"), allowed) is None
    assert refusal(ipaddress.ip_address("127.0.0.2"), allowed) is None
    assert refusal(ipaddress.ip_address("::ffff:127.0.0.2"), allowed) is None  # the same destination
    assert refusal(ipaddress.ip_address("fd00::5"), allowed) is None
    for other in ("10.1.3.1", "127.0.0.1", "169.254.169.254", "fd00:0:0:1::5", "::1"):
        assert refusal(ipaddress.ip_address(other), allowed) is not None, other
    # A NAT64 or 6to4 address of an allowed network reaches another host, behind a gateway: still refused.
    assert refusal(ipaddress.ip_address("64:ff9b::7f00:2"), allowed) is not None
    assert refusal(ipaddress.ip_address("2002:7f00:2::"), allowed) is not None


# Spellings of IPv4 that resolvers accept (inet_aton): each must be read as the address it really names.
SPELLINGS = [
    ("127.1", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("0177.1", "127.0.0.1"), ("017700000001", "127.0.0.1"),
    ("0x7F.0x0.0x0.0x1", "127.0.0.1"), ("127.0.0.1.", "127.0.0.1"), ("0", "0.0.0.0"), ("0x", "0.0.0.0"),
    # octal and hex forms whose decimal misreading would name a public address
    ("012.0.0.1", "10.0.0.1"), ("0251.0376.0251.0376", "169.254.169.254"), ("0xa9fea9fe", "169.254.169.254"),
    ("2852039166", "169.254.169.254"), ("0300.0250.1.1", "192.168.1.1"), ("0254.0.0.1", "172.0.0.1"),
    ("0144.0100.0.1", "100.64.0.1"), ("010.0.0.1", "8.0.0.1"), ("0x08.0x08.0x08.0x08", "8.8.8.8"),
]


@pytest.mark.parametrize(("host", "address"), SPELLINGS)
def test_numeric_hosts_are_read_as_resolvers_read_them(host, address):
    assert numeric_ipv4(host) == ipaddress.IPv4Address(address)


@pytest.mark.parametrize(("host", "address"), SPELLINGS)
def test_a_url_with_a_numeric_host_names_the_real_address(host, address):
    ip = ipaddress.IPv4Address(address)
    if refusal(ip):
        with pytest.raises(RefusedURL):
            url_target(f"http://{host}/x")
    else:
        assert url_target(f"http://{host}/x").raw_host == address


@pytest.mark.parametrize("host", ["1.2.3.256", "1.2.65536", "4294967296", "0x100000000", "09.1.1.1", "1.2.3.4.5",
                                  "1.2.0xg.4"])
def test_numbers_that_name_no_address_are_refused(host):
    with pytest.raises(RefusedURL):
        url_target(f"http://{host}/")


@pytest.mark.parametrize("host", ["example.com", "1.example", "example.0a", "xn--bcher-kva.example"])
def test_names_are_left_to_the_resolver(host):
    assert numeric_ipv4(host) is None


@pytest.mark.parametrize(("url", "reason"), [
    ("ftp://example.com/", "scheme"), ("file:///etc/passwd", "scheme"), ("gopher://example.com:70/", "scheme"),
    ("javascript:alert(1)", "scheme"), ("http://user@example.com/", "credentials"),
    ("http://user:pass@example.com/", "credentials"), ("https://:pass@example.com/", "credentials"),
    ("http://[::1]/", "address"), ("http://[::ffff:127.0.0.1]/", "address"), ("http://[::ffff:7f00:1]/", "address"),
    ("http://[fe80::1%25eth0]/", "address"), ("http://169.254.169.254/latest/meta-data/", "address"),
    ("http://[64:ff9b::a9fe:a9fe]/", "address"), ("http://[2002:a9fe:a9fe::]/", "address"),
])
def test_urls_refused_before_any_connection(url, reason):
    with pytest.raises(RefusedURL):
        url_target(url)


def test_normalised_urls_lose_their_fragment_and_keep_the_rest():
    assert str(url_target("HTTP://Example.COM:8080/a/b?c=d#frag")) == "http://example.com:8080/a/b?c=d"


def test_the_socket_factory_refuses_a_refused_address_before_creating_a_socket():
    outbound = Outbound(parse_networks("127.0.0.2/32"))
    make = outbound._socket_factory(_Attempt())
    for sockaddr, family in ((("127.0.0.1", 80), socket.AF_INET), (("::1", 80, 0, 0), socket.AF_INET6),
                             (("::ffff:127.0.0.1", 80, 0, 0), socket.AF_INET6),
                             (("169.254.169.254", 80), socket.AF_INET)):
        with pytest.raises(OutboundBlocked):
            make((family, socket.SOCK_STREAM, 6, "", sockaddr))
    sock = make((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", 80)))  # created, never connected
    sock.close()


async def test_a_name_with_one_refused_address_among_its_addresses_is_refused():
    outbound = Outbound(parse_networks("127.0.0.2/32"))

    async def resolve(host, port, family):
        return [{"hostname": host, "host": a, "port": port, "family": socket.AF_INET, "proto": 0, "flags": 0}
                for a in ("127.0.0.2", "127.0.0.1")]

    outbound.resolve = resolve
    with pytest.raises(OutboundBlocked):
        await _GuardedResolver(outbound, _Attempt()).resolve("mixed.test", 80)
