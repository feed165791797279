"""Redis outages (docs/operations.md, "Outages"): a private redis-server that the test kills and starts again.

While Redis is down, every request that needs it (each /api/v1 request takes a `global` rate-limit token
there) answers 503 `service.unavailable` with Retry-After within a few seconds, and the gateway refuses its
handshake with 503; once Redis is back the node serves again by itself within 5 s, with no restart. The
commands pool waits (bounded) for a free connection instead of failing when more commands are in flight
than it holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from meadhall.gateway.protocol import Timing
from tests.support.gateway import GatewayServer
from tests.support.guilds import make_guild
from tests.support.messages import history, post
from tests.support.outage import assert_unavailable as outage_answer
from tests.support.outage import timed
from tests.support.redis_server import PrivateRedis
from tests.support.served import served

POOL = 4
IDENTIFY_DEADLINE = 3.0  # seconds; the retries below span more than this
# The client timeouts (runtime.py) bound an unreachable Redis at a few seconds; this is the test's margin.
PROMPT = 9.0
RECOVERY = 5.0


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    with PrivateRedis() as server:
        yield server


@pytest.fixture
def settings_overrides(redis_server: PrivateRedis) -> dict[str, Any]:
    # A pool far smaller than the bursts below; the global bucket opened so that it is not what answers.
    return {"REDIS_URL": redis_server.url, "REDIS_MAX_CONNECTIONS": POOL,
            "RATE_LIMITS": {"global": "1000000/60"}}


def assert_unavailable(r: httpx.Response, elapsed: float) -> None:
    outage_answer(r, elapsed, PROMPT)


async def test_more_commands_in_flight_than_the_pool_holds_wait_for_a_connection(
        client: httpx.AsyncClient, accounts: Any, rt: Any, redis_server: PrivateRedis) -> None:
    alice = await accounts.register("alice")

    # 400 requests at once, each taking its rate-limit token in Redis, over 4 pooled connections.
    answers = await asyncio.gather(*(client.get("/api/v1/users/@me", headers=alice.headers) for _ in range(400)))
    assert [r.status_code for r in answers] == [200] * 400, {r.status_code: r.text for r in answers}
    pool = rt.redis.connection_pool
    assert pool.max_connections == POOL
    assert len(pool._available_connections) + len(pool._in_use_connections) <= POOL

    # The same burst straight on the store (the limiter's, the heartbeats'): every command succeeds.
    now = rt.now_ts()
    await asyncio.gather(*(rt.store.set(f"burst:{i}", i, 60, now) for i in range(1000)))
    values = await asyncio.gather(*(rt.store.get(f"burst:{i}", now) for i in range(1000)))
    assert values == list(range(1000))

    # What the burst does to redis-py's default pool of the same size: it fails at once (the bug).
    import redis.asyncio as aioredis
    from redis.exceptions import MaxConnectionsError

    plain = aioredis.from_url(redis_server.url, max_connections=POOL)
    try:
        with pytest.raises(MaxConnectionsError):
            await asyncio.gather(*(plain.incr("plain") for _ in range(200)))
    finally:
        await plain.aclose()


async def test_a_burst_of_heartbeats_beyond_the_pool_closes_no_connection(
        client: httpx.AsyncClient, accounts: Any, app: Any) -> None:
    """Many gateway clients heartbeat at the same moment (each heartbeat renews its session and presence in
    Redis): with redis-py's default pool the commands beyond it failed and the connections closed with 4000;
    they wait for a pooled connection now."""
    alice = await accounts.register("alice")
    async with served(app) as port:
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        clients = [await gateway.identified(alice["token"]) for _ in range(10)]  # the cap per user is ten
        try:
            for _ in range(5):
                await asyncio.gather(*(c.send(1, c.last_seq) for c in clients))
                acks = await asyncio.gather(*(c.recv_until(lambda f: f["op"] == 11) for c in clients))
                assert len(acks) == len(clients)
            assert all(c.closed_code is None for c in clients), [c.closed_code for c in clients]
        finally:
            for c in clients:
                await c.close()


async def restart_redis(client: httpx.AsyncClient, alice: Any, port: int, redis_server: PrivateRedis,
                        room: str | None = None) -> None:
    """Kill Redis, check what the node answers while it is down (a message sent to `room` too), start it
    again and wait (at most 5 s) until the node serves again."""
    redis_server.stop()

    if room is not None:
        r, elapsed = await timed(client.post(f"/api/v1/channels/{room}/messages", headers=alice.headers,
                                             json={"content": "during the outage", "nonce": "n-1"}))
        assert_unavailable(r, elapsed)

    r, elapsed = await timed(client.get("/api/v1/users/@me", headers=alice.headers))
    assert_unavailable(r, elapsed)
    r, elapsed = await timed(client.post("/api/v1/auth/login", json={"login": "alice", "password": alice["password"]}))
    assert_unavailable(r, elapsed)
    r, elapsed = await timed(client.get("/readyz"))
    assert r.status_code == 503 and r.json()["checks"]["redis"] == "error" and elapsed < PROMPT
    assert (await client.get("/healthz")).status_code == 200
    started = time.monotonic()
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://127.0.0.1:{port}/gateway?v=1&encoding=json", open_timeout=PROMPT, proxy=None)
    assert refused.value.response.status_code == 503
    assert time.monotonic() - started < PROMPT

    redis_server.start()  # the same port, empty (no persistence)
    back = time.monotonic()
    while True:
        r = await client.get("/api/v1/users/@me", headers=alice.headers)
        if r.status_code == 200:
            break
        assert r.status_code == 503, r.text
        assert time.monotonic() - back < RECOVERY, "the node did not recover from the Redis restart"
        await asyncio.sleep(0.1)
    assert (await client.get("/readyz")).status_code == 200


async def test_requests_answer_503_while_redis_is_down_and_work_again_when_it_returns(
        client: httpx.AsyncClient, accounts: Any, app: Any, redis_server: PrivateRedis) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    await post(client, alice, room, "before the outage")

    async with served(app) as port:
        await restart_redis(client, alice, port, redis_server, room)

        await post(client, alice, room, "after the outage", nonce="n-2")  # the limiter, the nonce, the bus
        # The gateway takes connections again (its caps and resume store are in Redis).
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        again = await gateway.identified(alice["token"])
        await again.close()

    # Nothing sent during the outage was stored; what was acknowledged is there once.
    contents = [m["content"] for m in (await history(client, alice, room))["messages"]]
    assert contents.count("before the outage") == 1 and contents.count("after the outage") == 1
    assert "during the outage" not in contents


async def test_live_events_reach_the_gateway_again_after_a_redis_restart(
        client: httpx.AsyncClient, accounts: Any, app: Any, redis_server: PrivateRedis) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]

    async with served(app) as port:
        await restart_redis(client, alice, port, redis_server)
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        listener = await gateway.identified(alice["token"])
        try:
            sent = await post(client, alice, room, "after the outage")
            created = await listener.dispatch("MESSAGE_CREATE", wait=RECOVERY)
            assert created["id"] == sent["id"]
        finally:
            await listener.close()


async def test_a_gateway_client_that_keeps_beating_through_an_outage_is_not_timed_out(
        client: httpx.AsyncClient, accounts: Any, app: Any, redis_server: PrivateRedis) -> None:
    """Its heartbeats are answered while Redis is down and the connection stays; once Redis is back (empty),
    the session it lost is ended, and its RESUME is told the session expired (never silently deaf)."""
    alice = await accounts.register("alice")
    async with served(app) as port:
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        listener = await gateway.identified(alice["token"])
        session_id = listener.session_id
        try:
            await listener.send(1, None)  # answered once the reader finished the IDENTIFY's last steps
            await listener.recv_until(lambda f: f["op"] == 11)
            redis_server.stop()
            for _ in range(3):  # each would have blocked the reader for the clients' timeouts in turn
                await listener.send(1, None)
                ack = await listener.recv_until(lambda f: f["op"] == 11, wait=PROMPT)
                assert ack["d"] is None
            assert listener.closed_code is None and listener.ws.close_code is None
            redis_server.start()
            code = await listener.wait_closed(wait=RECOVERY + 10)
            assert code == 4009
        finally:
            await listener.close()
        again = await gateway.connect()
        try:
            await again.recv()  # HELLO
            await again.send(6, {"token": alice["token"], "session_id": session_id, "seq": 1})
            invalid = await again.recv_until(lambda f: f["op"] == 9, wait=RECOVERY)
            assert invalid["d"] == {"reason": "session_expired", "resumable": False}
        finally:
            await again.close()


async def test_a_resume_or_identify_during_an_outage_is_told_to_try_again(
        client: httpx.AsyncClient, accounts: Any, app: Any, redis_server: PrivateRedis) -> None:
    """A RESUME that cannot reach Redis gets INVALID_SESSION `retry` (resumable) and its connection stays open for
    the next attempt; an IDENTIFY's connection closes as a passing error (4000), for the client to connect again."""
    alice = await accounts.register("alice")
    app.state.gateway_timing = Timing(identify_deadline=IDENTIFY_DEADLINE)
    async with served(app) as port:
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        first = await gateway.identified(alice["token"])
        session_id = first.session_id
        await first.close()
        resuming, identifying = await gateway.connect(), await gateway.connect()
        try:
            for ws in (resuming, identifying):
                await ws.recv()  # HELLO
            redis_server.stop()
            # Both in flight at once: each connection's identify deadline counts from its HELLO.
            await resuming.send(6, {"token": alice["token"], "session_id": session_id, "seq": 1})
            await identifying.send(2, {"token": alice["token"]})
            invalid = await resuming.recv_until(lambda f: f["op"] == 9, wait=PROMPT)
            assert invalid["d"] == {"reason": "retry", "resumable": True}
            # Retrying for longer than the identify deadline since HELLO: still open (not 4003, which would make
            # the client give up its session and IDENTIFY afresh).
            for _ in range(4):
                await asyncio.sleep(IDENTIFY_DEADLINE / 3)
                await resuming.send(6, {"token": alice["token"], "session_id": session_id, "seq": 1})
                again = await resuming.recv_until(lambda f: f["op"] == 9, wait=PROMPT)
                assert again["d"] == {"reason": "retry", "resumable": True}
            assert resuming.closed_code is None
            assert await identifying.wait_closed(wait=PROMPT) == 4000

            redis_server.start()  # empty: the session is gone, which the next attempt is told
            deadline = time.monotonic() + RECOVERY
            while True:
                await resuming.send(6, {"token": alice["token"], "session_id": session_id, "seq": 1})
                answer = await resuming.recv_until(lambda f: f["op"] == 9, wait=PROMPT)
                if answer["d"]["reason"] != "retry":
                    break
                assert time.monotonic() < deadline, "the node did not recover from the Redis restart"
                await asyncio.sleep(0.2)
            assert answer["d"] == {"reason": "session_expired", "resumable": False}
        finally:
            await resuming.close()
            await identifying.close()
