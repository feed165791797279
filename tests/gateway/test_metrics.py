"""The gateway's part of `/metrics` (METRICS_ENABLED): open connections (a gauge), events delivered to
connections (a counter) and the bus lag (publication to receipt: in-process, or through Redis when
TEST_REDIS_URL is set)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.guilds import make_guild


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"METRICS_ENABLED": True}


async def metric(client: httpx.AsyncClient, name: str) -> float:
    r = await client.get("/metrics")
    assert r.status_code == 200, r.text
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            if sample.name == name and not sample.labels:
                return sample.value
    raise AssertionError(f"{name} not exposed")


async def test_connections_deliveries_and_bus_lag_are_measured(gateway, client, accounts):
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    assert await metric(client, "meadhall_gateway_connections") == 0
    delivered = await metric(client, "meadhall_gateway_events_delivered_total")
    lag = await metric(client, "meadhall_bus_lag_seconds_count")

    first = await gateway.identified(alice["token"])
    second = await gateway.identified(alice["token"])
    assert await metric(client, "meadhall_gateway_connections") == 2

    r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": "counted"}, headers=alice.headers)
    assert r.status_code == 201, r.text
    for c in (first, second):
        assert (await c.dispatch("MESSAGE_CREATE"))["content"] == "counted"

    assert await metric(client, "meadhall_gateway_events_delivered_total") >= delivered + 2
    assert await metric(client, "meadhall_bus_lag_seconds_count") > lag
    await second.close()
    await second.wait_closed()
    for _ in range(50):
        if await metric(client, "meadhall_gateway_connections") == 1:
            break
    assert await metric(client, "meadhall_gateway_connections") == 1


async def test_each_ready_is_timed(gateway, client, accounts):
    alice = await accounts.register("alice")
    await make_guild(client, alice)
    count = await metric(client, "meadhall_gateway_ready_seconds_count")
    total = await metric(client, "meadhall_gateway_ready_seconds_sum")

    await gateway.identified(alice["token"])
    await gateway.identified(alice["token"])

    assert await metric(client, "meadhall_gateway_ready_seconds_count") == count + 2
    assert await metric(client, "meadhall_gateway_ready_seconds_sum") > total
