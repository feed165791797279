"""Time limits of a connection (docs/gateway.md): IDENTIFY deadline (4003) and heartbeat timeout (4009),
shortened for the test."""

from __future__ import annotations

import asyncio

import pytest

from meadhall.gateway.protocol import Timing


@pytest.fixture
def gateway_timing() -> Timing:
    return Timing(identify_deadline=0.3, heartbeat_timeout=1.0)


async def test_no_identify_within_the_deadline_closes_4003(gateway):
    c = await gateway.connect()
    await c.recv()
    assert await c.wait_closed(3) == 4003


async def test_heartbeats_keep_the_connection_then_silence_closes_4009(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    for _ in range(5):  # 1.5 s in all, beyond one timeout, kept alive by heartbeats
        await asyncio.sleep(0.3)
        await c.send(1, c.last_seq)
        assert (await c.recv())["op"] == 11
    assert await c.wait_closed(3) == 4009
