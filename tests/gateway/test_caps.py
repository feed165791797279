"""Connection caps (docs/gateway.md): at most 10 identified connections per user, the 11th closes the user's
oldest with 4013; handshakes per client address count in bucket `gateway.connect` (60 per 60 s), over
it HTTP 429 at the handshake. Runs on the in-process store (SQLite) and on Redis (PostgreSQL backend with
TEST_REDIS_URL); the cap across two real nodes is in test_two_nodes.py."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.exceptions import InvalidStatus

from tests.support.gateway import GatewayClient

CAP = 10


async def alive(client: GatewayClient) -> None:
    """The connection still answers: a heartbeat gets its ACK."""
    await client.send(1, client.last_seq)
    ack = await client.recv_until(lambda f: f["op"] == 11)
    assert ack["d"] is None
    assert client.closed_code is None


async def test_the_eleventh_connection_closes_the_oldest_with_4013(gateway, accounts):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    bobs = await gateway.identified(bob["token"])
    clients = [await gateway.identified(alice["token"]) for _ in range(CAP)]
    for c in clients:
        await alive(c)

    newest = await gateway.identified(alice["token"])

    assert await clients[0].wait_closed() == 4013
    for c in [*clients[1:], newest, bobs]:  # the other ten of alice's stay, and other users are untouched
        await alive(c)
    assert await gateway.hub.caps.count(int(alice.id)) == CAP
    # The replaced connection's gateway session is over: the client is told not to come back.
    assert clients[0].session_id not in gateway.hub.sessions


async def test_the_cap_follows_closed_connections(gateway, accounts):
    alice = await accounts.register("alice")
    clients = [await gateway.identified(alice["token"]) for _ in range(CAP)]
    await clients[3].close()
    for _ in range(50):  # the server sees the close frame, then releases the connection's place
        if await gateway.hub.caps.count(int(alice.id)) == CAP - 1:
            break
        await asyncio.sleep(0.02)
    assert await gateway.hub.caps.count(int(alice.id)) == CAP - 1

    tenth = await gateway.identified(alice["token"])

    for c in [*clients[:3], *clients[4:], tenth]:
        await alive(c)


async def test_unidentified_connections_do_not_count(gateway, accounts):
    alice = await accounts.register("alice")
    pending = [await gateway.connect() for _ in range(3)]
    clients = [await gateway.identified(alice["token"]) for _ in range(CAP)]
    for c in clients:
        await alive(c)
    assert all(c.closed_code is None for c in pending)


async def test_a_crashed_nodes_connections_stop_counting(gateway, accounts, clock):
    """Entries of connections nobody heartbeats any more (their node crashed) are dropped after the
    stale window: they neither count nor push the user's live connections out."""
    alice = await accounts.register("alice")
    live = [await gateway.identified(alice["token"]) for _ in range(5)]
    caps, uid = gateway.hub.caps, int(alice.id)
    # Another node attached five more after these, last heard of 100 s ago (longer than 2 x 45 s).
    long_ago = clock.timestamp() - 100
    for i in range(5):
        assert await caps.attach(uid, f"crashed-node-{i}", long_ago, long_ago - 100) == []
    assert await caps.count(uid) == CAP

    more = [await gateway.identified(alice["token"]) for _ in range(5)]

    for c in [*live, *more]:
        await alive(c)
    assert await caps.count(uid) == CAP


async def test_heartbeats_keep_a_connection_counted(gateway, accounts, clock):
    alice = await accounts.register("alice")
    old = await gateway.identified(alice["token"])
    clock.advance(60)
    await alive(old)  # refreshed at t + 60
    await alive(old)  # (the second ACK follows the first heartbeat's refresh)
    quiet = await gateway.identified(alice["token"])  # attached at t + 60, never heartbeats
    clock.advance(80)  # t + 140: `old` was seen 80 s ago, `quiet` too; the window is 90 s
    await gateway.identified(alice["token"])
    assert await gateway.hub.caps.count(int(alice.id)) == 3
    clock.advance(20)  # t + 160: `quiet` was last seen 100 s ago, `old` too unless it heartbeats
    await alive(old)
    await alive(old)
    await gateway.identified(alice["token"])
    assert await gateway.hub.caps.count(int(alice.id)) == 3  # `old`, the previous and the new one
    assert quiet.closed_code is None  # dropping a stale entry closes nothing (the heartbeat timeout does)


# ---------------------------------------------------------------- handshakes per address


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"TRUST_PROXY": True}  # so that each test below can speak from addresses of its own


async def test_the_61st_handshake_from_an_address_gets_429(gateway):
    here = {"X-Forwarded-For": "203.0.113.7"}
    for _ in range(60):
        c = await gateway.connect(additional_headers=here)
        await c.close()

    with pytest.raises(InvalidStatus) as refused:
        await gateway.connect(additional_headers=here)

    response = refused.value.response
    assert response.status_code == 429
    error = json.loads(response.body)["error"]
    assert error["code"] == "rate_limited" and error["bucket"] == "gateway.connect"
    assert 0 < error["retry_after"] <= 1.0  # one handshake a second refills
    assert response.headers["Retry-After"] == "1"
    assert response.headers["X-RateLimit-Bucket"] == "gateway.connect"
    assert response.headers["X-RateLimit-Limit"] == "60"
    assert response.headers["X-RateLimit-Remaining"] == "0"
    # Another address is not affected.
    other = await gateway.connect(additional_headers={"X-Forwarded-For": "198.51.100.9"})
    assert (await other.recv())["op"] == 10


async def test_the_handshake_bucket_refills(gateway, clock):
    here = {"X-Forwarded-For": "203.0.113.8"}
    for _ in range(60):
        await (await gateway.connect(additional_headers=here)).close()
    with pytest.raises(InvalidStatus):
        await gateway.connect(additional_headers=here)
    clock.advance(1)
    c = await gateway.connect(additional_headers=here)
    assert (await c.recv())["op"] == 10


async def test_a_failing_detach_does_not_keep_the_connections_place(gateway, accounts, monkeypatch):
    """Releasing a connection's resources does not depend on the steps before it: a Redis error while
    keeping the session for RESUME once left its cap entry behind for good."""
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    assert await gateway.hub.caps.count(int(alice.id)) == 1
    calls: list[str] = []

    async def broken_detach(gs, conn) -> None:
        calls.append(gs.id)
        raise ConnectionError("redis went away")

    monkeypatch.setattr(gateway.hub, "detach", broken_detach)
    await c.close()
    for _ in range(100):
        if await gateway.hub.caps.count(int(alice.id)) == 0 and not gateway.hub.attached:
            break
        await asyncio.sleep(0.02)
    assert calls == [c.session_id]
    assert await gateway.hub.caps.count(int(alice.id)) == 0
    assert gateway.hub.attached == {}
