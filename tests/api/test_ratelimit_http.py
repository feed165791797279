"""The `global` bucket through HTTP (docs/reference/errors.md, docs/reference/limits.md): headers on every /api/v1 answer, the 429
envelope, refill on the service clock, and the client address as key (TRUST_PROXY). Every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

TIGHT = {"RATE_LIMITS": {"global": "3/60"}}  # 3 requests, one more every 20 s


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    return getattr(request, "param", TIGHT)


@pytest.fixture
def client_from(app: Any) -> Callable[[str], Any]:
    """A client whose requests come from another socket address."""

    @asynccontextmanager
    async def make(ip: str) -> AsyncIterator[httpx.AsyncClient]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, client=(ip, 123))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            yield c

    return make


async def meta(client: httpx.AsyncClient, **headers: str) -> httpx.Response:
    return await client.get("/api/v1/meta", headers=headers)


async def exhaust(client: httpx.AsyncClient, **headers: str) -> None:
    for expected_remaining in ("2", "1", "0"):
        r = await meta(client, **headers)
        assert r.status_code == 200
        assert r.headers["X-RateLimit-Remaining"] == expected_remaining


@pytest.mark.parametrize("settings_overrides", [{}], indirect=True)
async def test_meta_carries_global_bucket_headers(client, clock):
    first = await meta(client)
    assert first.status_code == 200
    assert first.headers["X-RateLimit-Bucket"] == "global"
    assert first.headers["X-RateLimit-Limit"] == "1200"
    assert first.headers["X-RateLimit-Remaining"] == "1199"
    assert first.headers["X-RateLimit-Reset-After"] == "0.050"  # one token at 1200/60
    assert float(first.headers["X-RateLimit-Reset"]) == pytest.approx(clock.timestamp() + 0.05, abs=0.0015)
    assert "Retry-After" not in first.headers
    second = await meta(client)
    assert second.headers["X-RateLimit-Remaining"] == "1198"
    assert second.headers["X-RateLimit-Reset-After"] == "0.100"


async def test_fourth_request_is_rate_limited(client):
    await exhaust(client)
    r = await meta(client)
    assert r.status_code == 429
    body = r.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "retry_after", "bucket"}
    assert body["error"]["code"] == "rate_limited"
    assert body["error"]["bucket"] == "global"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["retry_after"], float)
    assert body["error"]["retry_after"] == pytest.approx(20.0, abs=0.001)
    assert r.headers["Retry-After"] == "20"
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert r.headers["X-RateLimit-Limit"] == "3"
    assert r.headers["X-RateLimit-Bucket"] == "global"
    assert r.headers["X-RateLimit-Reset-After"] == "60.000"
    assert r.headers["content-type"].startswith("application/json")


async def test_retry_after_shrinks_as_time_passes(client, clock):
    await exhaust(client)
    clock.advance(12.5)
    r = await meta(client)
    assert r.status_code == 429
    assert r.json()["error"]["retry_after"] == pytest.approx(7.5, abs=0.001)
    assert r.headers["Retry-After"] == "8"


async def test_one_request_passes_after_one_interval(client, clock):
    await exhaust(client)
    assert (await meta(client)).status_code == 429
    clock.advance(19.9)
    assert (await meta(client)).status_code == 429
    clock.advance(0.1)
    r = await meta(client)
    assert r.status_code == 200
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert (await meta(client)).status_code == 429


async def test_client_addresses_have_separate_buckets(client, client_from):
    await exhaust(client)  # 127.0.0.1
    assert (await meta(client)).status_code == 429
    async with client_from("1.2.3.4") as other:
        r = await meta(other)
        assert r.status_code == 200
        assert r.headers["X-RateLimit-Remaining"] == "2"
    assert (await meta(client)).status_code == 429


@pytest.mark.parametrize("settings_overrides", [{**TIGHT, "TRUST_PROXY": True}], indirect=True)
async def test_trusted_proxy_keys_on_last_forwarded_entry(client, client_from):
    # The left entries are whatever the client sent; varying them must not give a fresh bucket.
    for spoof in ("6.6.6.6", "7.7.7.7", "8.8.8.8, 9.9.9.9"):
        r = await meta(client, **{"X-Forwarded-For": f"{spoof}, 10.0.0.1"})
        assert r.status_code == 200
    r = await meta(client, **{"X-Forwarded-For": "5.5.5.5 ,10.0.0.1 "})
    assert r.status_code == 429
    # Another address seen by the proxy has its own bucket ...
    r = await meta(client, **{"X-Forwarded-For": "6.6.6.6, 10.0.0.2"})
    assert (r.status_code, r.headers["X-RateLimit-Remaining"]) == (200, "2")
    # ... and so does the bare socket address, also for another socket behind the same proxy.
    r = await meta(client)
    assert (r.status_code, r.headers["X-RateLimit-Remaining"]) == (200, "2")
    async with client_from("192.168.1.9") as proxy2:
        assert (await meta(proxy2, **{"X-Forwarded-For": "10.0.0.1"})).status_code == 429


@pytest.mark.parametrize("settings_overrides", [{**TIGHT, "TRUST_PROXY": False}], indirect=True)
async def test_forwarded_header_is_ignored_without_trusted_proxy(client, client_from):
    await exhaust(client, **{"X-Forwarded-For": "10.0.0.1"})
    # A spoofed header naming a fresh address does not give a fresh bucket.
    r = await meta(client, **{"X-Forwarded-For": "10.0.0.99"})
    assert r.status_code == 429
    assert (await meta(client)).status_code == 429
    # The socket address decides: another socket sending the exhausted header is fine.
    async with client_from("1.2.3.4") as other:
        r = await meta(other, **{"X-Forwarded-For": "10.0.0.1"})
        assert (r.status_code, r.headers["X-RateLimit-Remaining"]) == (200, "2")
