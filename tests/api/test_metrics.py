"""`GET /metrics` (docs/reference/configuration.md, METRICS_ENABLED): Prometheus text with requests by route template and
status and their latency histograms, bus lag and the hashing pool's pending work; an unknown route (404
in the error envelope) while it is off. The gateway's metrics are in tests/gateway/test_metrics.py."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.guilds import make_guild


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition: (name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(client: httpx.AsyncClient) -> str:
    r = await client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return r.text


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the counts do not depend on the database


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"METRICS_ENABLED": True}


async def test_requests_are_counted_by_route_template_and_status(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    assert value(before, "meadhall_http_requests_total", method="GET", route="/api/v1/meta", status="200") == 0
    for _ in range(3):
        assert (await client.get("/api/v1/meta")).status_code == 200
    assert (await client.get("/api/v1/users/1234")).status_code == 401

    text = await scrape(client)

    assert value(text, "meadhall_http_requests_total", method="GET", route="/api/v1/meta", status="200") == 3
    assert value(text, "meadhall_http_requests_total", method="GET", route="/api/v1/users/{user_id}",
                 status="401") == 1
    assert value(text, "meadhall_http_request_duration_seconds_count", method="GET", route="/api/v1/meta",
                  status="200") == 3
    assert value(text, "meadhall_http_request_duration_seconds_bucket", method="GET", route="/api/v1/meta",
                 status="200", le="+Inf") == 3
    assert "1234" not in text  # templates, never concrete paths
    for name in ("meadhall_gateway_connections", "meadhall_gateway_events_delivered_total",
                 "meadhall_bus_lag_seconds_count", "meadhall_hash_pool_pending"):
        assert re.search(rf"^{name} ", text, re.M), name


async def test_plain_routes_count_under_the_template_of_their_documented_route(client: httpx.AsyncClient,
                                                                               accounts: Any) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    path = f"/api/v1/channels/{room}/messages"
    # A plain send (api/plain.py), and one the plain route declines (a list body) that the FastAPI
    # route answers with 422.
    assert (await client.post(path, json={"content": "hi"}, headers=alice.headers)).status_code == 201
    assert (await client.post(path, json=["hi"], headers=alice.headers)).status_code == 422
    assert (await client.get(path, headers=alice.headers)).status_code == 200

    text = await scrape(client)

    template = "/api/v1/channels/{channel_id}/messages"
    assert value(text, "meadhall_http_requests_total", method="POST", route=template, status="201") == 1
    assert value(text, "meadhall_http_requests_total", method="POST", route=template, status="422") == 1
    assert value(text, "meadhall_http_requests_total", method="GET", route=template, status="200") == 1
    assert room not in text
    # The message went through the bus: its delay from publication to delivery was observed.
    assert value(text, "meadhall_bus_lag_seconds_count") >= 1


async def test_pending_hashes_are_a_gauge(client: httpx.AsyncClient, rt: Any) -> None:
    release = threading.Event()
    waiting = asyncio.ensure_future(rt.off_loop(release.wait, 5))
    try:
        await asyncio.sleep(0.05)
        assert value(await scrape(client), "meadhall_hash_pool_pending") == 1
    finally:
        release.set()
        await waiting
    assert value(await scrape(client), "meadhall_hash_pool_pending") == 0


async def test_two_apps_in_one_process_keep_their_own_counts(client: httpx.AsyncClient, app: Any) -> None:
    from meadhall.app import create_app

    other = create_app(app.state.runtime.settings)  # a second runtime and registry, side by side
    transport = httpx.ASGITransport(app=other, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as second:
        assert (await second.get("/healthz")).status_code == 200
        text = await scrape(second)
    assert value(text, "meadhall_http_requests_total", method="GET", route="/healthz", status="200") == 1
    assert value(await scrape(client), "meadhall_http_requests_total", method="GET", route="/healthz",
                 status="200") == 0
    await other.state.runtime.close()


@pytest.mark.parametrize("settings_overrides", [{"METRICS_ENABLED": False}, {}])
async def test_metrics_are_an_unknown_route_unless_enabled(client: httpx.AsyncClient) -> None:
    r = await client.get("/metrics")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "route.not_found"
