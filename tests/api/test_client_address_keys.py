"""Address-keyed limits (docs/reference/limits.md `ip` keys; the address lockout) count an IPv6 client by its /64
(a host owns its whole /64, so per-address keys would give it 2^64 buckets), an IPv4 client by its
address, and an IPv4-mapped IPv6 address as its IPv4 address."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.api.client import address_key

LOGIN = "/api/v1/auth/login"
WRONG = "definitely the wrong password"


@pytest.mark.parametrize(
    ("ip", "key"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("[2001:db8:1:2::9]", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("unknown", "unknown"),
    ],
)
def test_address_key(ip: str, key: str) -> None:
    assert address_key(ip) == key


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Behind a trusted proxy; `auth.login` allows 2 a minute unless a test asks for another limit."""
    login_limit = getattr(request, "param", "2/60")
    return {"TRUST_PROXY": True,
            "RATE_LIMITS": {"auth.login": login_limit, "invites.preview": "1/60", "global": "10000/60"}}


async def attempt(client: Any, address: str) -> int:
    r = await client.post(LOGIN, json={"login": "nobody", "password": WRONG}, headers={"X-Forwarded-For": address})
    assert r.status_code in (401, 429), r.text
    if r.status_code == 429:
        assert r.json()["error"]["bucket"] == "auth.login"
    return r.status_code


async def test_two_addresses_of_one_64_share_a_bucket(client):
    assert await attempt(client, "2001:db8:1:2::1") == 401
    assert await attempt(client, "2001:db8:1:2:ffff::5") == 401
    assert await attempt(client, "2001:db8:1:2:1234:5678:9abc:def0") == 429
    # Another /64 has a bucket of its own.
    assert await attempt(client, "2001:db8:1:3::1") == 401


async def test_ipv4_addresses_do_not_share_and_mapped_ipv6_is_ipv4(client):
    assert await attempt(client, "198.51.100.1") == 401
    assert await attempt(client, "::ffff:198.51.100.1") == 401
    assert await attempt(client, "198.51.100.1") == 429
    assert await attempt(client, "198.51.100.2") == 401


# Enough request tokens for the 50 failures: the lockout, not the bucket, must answer.
@pytest.mark.parametrize("settings_overrides", ["10000/60"], indirect=True)
async def test_the_address_lockout_counts_a_64_as_one_client(client):
    for i in range(50):
        r = await client.post(LOGIN, json={"login": f"someone{i}", "password": WRONG},
                              headers={"X-Forwarded-For": f"2001:db8:7:7::{i + 1:x}"})
        assert r.status_code == 401, r.text
    r = await client.post(LOGIN, json={"login": "fresh", "password": WRONG},
                          headers={"X-Forwarded-For": "2001:db8:7:7:abcd::1"})
    assert r.status_code == 429 and r.json()["error"]["bucket"] == "auth.lockout"
    r = await client.post(LOGIN, json={"login": "fresh", "password": WRONG},
                          headers={"X-Forwarded-For": "2001:db8:7:8::1"})
    assert r.status_code == 401


async def test_the_invitation_page_counts_an_ipv6_client_by_its_64(client):
    async def page(address: str) -> int:
        r = await client.get("/invite/abcdefgh", headers={"X-Forwarded-For": address})
        return r.status_code

    assert await page("2001:db8:7:7::1") == 404  # unknown code, but the preview was counted
    assert await page("2001:db8:7:7::2") == 429
    assert await page("2001:db8:7:8::1") == 404
