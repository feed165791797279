"""The resume store (docs/gateway.md, docs/reference/limits.md, docs/scaling.md): the same cases against `MemoryResumeStore` and, when
TEST_REDIS_URL is set, `RedisResumeStore` (a key prefix of its own per test). Time is the service
clock's, passed in as `now`: nothing here sleeps.

Redis only: two nodes appending the same event to one gateway session give it one sequence number
(`appended_seq` of the second answer is the first's number), and a batch may mix new and seen events."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from meadhall.gateway.resume import (
    ATTACHED_TTL,
    BUFFER_SIZE,
    GONE,
    RESUME_WINDOW,
    Append,
    MemoryResumeStore,
    Owner,
    RedisResumeStore,
    appended_seq,
)

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
needs_redis = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")

T0 = 1_700_000_000.0  # service-clock seconds; far from Redis's own clock on purpose
OWNER = Owner(user_id=175928847299117063, auth_session_id=42)  # a snowflake above 2**53


async def _redis_client() -> Any:
    import redis.asyncio as aioredis

    return aioredis.from_url(TEST_REDIS_URL, decode_responses=True)


async def _clear(client: Any, prefix: str) -> None:
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await client.delete(*keys)


@pytest.fixture(params=["memory", pytest.param("redis", marks=needs_redis)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryResumeStore()
        return
    client = await _redis_client()
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    try:
        yield RedisResumeStore(client, prefix=prefix)
    finally:
        await _clear(client, prefix)
        await client.aclose()


def ev(sid: str, n: int, type_: str = "MESSAGE_CREATE") -> Append:
    return Append(sid, f"ev-{n}", type_, json.dumps({"n": n}, separators=(",", ":")))


def sid() -> str:
    return uuid.uuid4().hex


def test_appended_seq_decodes_the_three_answers():
    assert appended_seq(7) == 7
    assert appended_seq(-8) == 7  # another node had already numbered it 7
    assert appended_seq(GONE) is None


# ---------------------------------------------------------------- numbering and replay


async def test_numbers_each_session_from_one(store):
    a, b = sid(), sid()
    await store.open(a, OWNER, T0)
    await store.open(b, Owner(5, 6), T0)
    assert await store.append([ev(a, 1), ev(a, 2), ev(b, 2), ev(a, 3)], T0) == [1, 2, 1, 3]
    assert await store.append([ev(b, 4)], T0 + 1) == [2]

    replay = await store.replay(a, 0, T0 + 1)
    assert replay is not None
    assert replay.owner == OWNER
    assert replay.last_seq == 3
    assert replay.frames == [(1, "MESSAGE_CREATE", '{"n":1}'), (2, "MESSAGE_CREATE", '{"n":2}'),
                             (3, "MESSAGE_CREATE", '{"n":3}')]
    other = await store.replay(b, 0, T0 + 1)
    assert other is not None and other.owner == Owner(5, 6) and other.last_seq == 2
    assert [f[2] for f in other.frames] == ['{"n":2}', '{"n":4}']


async def test_replay_returns_only_what_follows_seq(store):
    s = sid()
    await store.open(s, OWNER, T0)
    await store.append([ev(s, n, "READY" if n == 1 else "MESSAGE_CREATE") for n in range(1, 6)], T0)
    replay = await store.replay(s, 3, T0)
    assert replay is not None and replay.last_seq == 5
    assert [(seq, t) for seq, t, _ in replay.frames] == [(4, "MESSAGE_CREATE"), (5, "MESSAGE_CREATE")]
    up_to_date = await store.replay(s, 5, T0)
    assert up_to_date is not None and up_to_date.frames == [] and up_to_date.last_seq == 5
    # A seq beyond the last is not the store's call (the endpoint closes 4007): nothing to replay.
    ahead = await store.replay(s, 9, T0)
    assert ahead is not None and ahead.last_seq == 5 and ahead.frames == []


async def test_unknown_session(store):
    assert await store.replay("nope", 0, T0) is None
    assert await store.append([ev("nope", 1)], T0) == [GONE]


async def test_open_again_starts_over(store):
    s = sid()
    await store.open(s, OWNER, T0)
    await store.append([ev(s, 1), ev(s, 2)], T0)
    await store.open(s, Owner(1, 2), T0 + 1)
    assert await store.append([ev(s, 3)], T0 + 1) == [1]
    replay = await store.replay(s, 0, T0 + 1)
    assert replay is not None and replay.owner == Owner(1, 2)
    assert [p for _, _, p in replay.frames] == ['{"n":3}']


async def test_payload_is_kept_exactly(store):
    s = sid()
    await store.open(s, OWNER, T0)
    payload = json.dumps({"content": "héllo ✓ \"quoted\" \\ 🎉", "id": "175928847299117063", "x": None},
                         ensure_ascii=False, separators=(",", ":"))
    await store.append([Append(s, "e", "MESSAGE_CREATE", payload)], T0)
    replay = await store.replay(s, 0, T0)
    assert replay is not None and replay.frames == [(1, "MESSAGE_CREATE", payload)]


# ---------------------------------------------------------------- the 1000-dispatch buffer


async def test_buffer_keeps_the_last_1000(store):
    assert BUFFER_SIZE == 1000
    s = sid()
    await store.open(s, OWNER, T0)
    total = BUFFER_SIZE + 5
    for start in range(1, total + 1, 250):  # batches, as the hub appends one event to many sessions
        results = await store.append([ev(s, n) for n in range(start, min(start + 250, total + 1))], T0)
        assert results == list(range(start, min(start + 250, total + 1)))

    # Seqs 1..5 fell out: a client that last saw 4 (or nothing) cannot be served.
    for stale in (0, 3, 4):
        replay = await store.replay(s, stale, T0)
        assert replay is not None and replay.last_seq == total
        assert replay.frames is None, stale
    # A client that saw 5 gets exactly the buffer, in order and contiguous.
    replay = await store.replay(s, 5, T0)
    assert replay is not None and replay.frames is not None
    assert [seq for seq, _, _ in replay.frames] == list(range(6, total + 1))
    assert replay.frames[0][2] == '{"n":6}' and replay.frames[-1][2] == f'{{"n":{total}}}'
    # And a recent one just the tail.
    replay = await store.replay(s, total - 2, T0)
    assert replay is not None and [seq for seq, _, _ in replay.frames] == [total - 1, total]


# ---------------------------------------------------------------- expiry, keep, drop


async def test_an_attached_session_lives_attached_ttl_without_keep(store):
    s = sid()
    await store.open(s, OWNER, T0)
    assert await store.replay(s, 0, T0 + ATTACHED_TTL - 0.001) is not None
    assert await store.replay(s, 0, T0 + ATTACHED_TTL) is None
    assert await store.append([ev(s, 1)], T0 + ATTACHED_TTL) == [GONE]


async def test_detached_session_expires_after_the_resume_window(store):
    s = sid()
    await store.open(s, OWNER, T0)
    await store.append([ev(s, 1)], T0)
    closed_at = T0 + 30
    await store.keep(s, RESUME_WINDOW, closed_at)  # the connection closed
    # Events produced while disconnected are still numbered and buffered.
    assert await store.append([ev(s, 2)], closed_at + 60) == [2]
    replay = await store.replay(s, 0, closed_at + RESUME_WINDOW - 0.001)
    assert replay is not None and [seq for seq, _, _ in replay.frames] == [1, 2]
    assert await store.replay(s, 0, closed_at + RESUME_WINDOW) is None
    assert await store.append([ev(s, 3)], closed_at + RESUME_WINDOW + 1) == [GONE]


async def test_keep_answers_the_last_seq(store):
    """A heartbeat learns whether another node numbered dispatches this node has not sent."""
    s = sid()
    await store.open(s, OWNER, T0)
    assert await store.keep(s, ATTACHED_TTL, T0) == 0
    await store.append([ev(s, 1), ev(s, 2)], T0)
    assert await store.keep(s, ATTACHED_TTL, T0 + 1) == 2


async def test_keep_extends_and_never_revives(store):
    s = sid()
    await store.open(s, OWNER, T0)
    for beat in range(1, 6):  # heartbeats every 100 s keep it far beyond ATTACHED_TTL
        await store.keep(s, ATTACHED_TTL, T0 + 100 * beat)
    alive_until = T0 + 500 + ATTACHED_TTL
    assert await store.replay(s, 0, alive_until - 0.001) is not None
    # A shorter keep shortens (the close after the last heartbeat).
    await store.keep(s, RESUME_WINDOW, T0 + 510)
    assert await store.replay(s, 0, T0 + 510 + RESUME_WINDOW) is None
    # Once expired, keep does not bring it back.
    assert await store.keep(s, ATTACHED_TTL, T0 + 510 + RESUME_WINDOW + 1) == GONE
    assert await store.replay(s, 0, T0 + 510 + RESUME_WINDOW + 2) is None
    assert await store.append([ev(s, 1)], T0 + 510 + RESUME_WINDOW + 2) == [GONE]


async def test_keep_of_an_unknown_session_is_harmless(store):
    assert await store.keep("nope", ATTACHED_TTL, T0) == GONE
    assert await store.replay("nope", 0, T0) is None


async def test_drop(store):
    a, b = sid(), sid()
    for s in (a, b):
        await store.open(s, OWNER, T0)
        await store.append([ev(s, 1)], T0)
    await store.drop([a])
    await store.drop([])
    await store.drop(["never-opened"])
    assert await store.replay(a, 0, T0) is None
    assert await store.append([ev(a, 2), ev(b, 2)], T0) == [GONE, 2]
    replay = await store.replay(b, 0, T0)
    assert replay is not None and replay.last_seq == 2


# ---------------------------------------------------------------- Redis: several nodes, one state


@pytest.fixture
async def two_nodes() -> AsyncIterator[tuple[RedisResumeStore, RedisResumeStore]]:
    """Two nodes: each its own client (connection pool), one key prefix."""
    clients = [await _redis_client() for _ in range(2)]
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    try:
        yield RedisResumeStore(clients[0], prefix=prefix), RedisResumeStore(clients[1], prefix=prefix)
    finally:
        await _clear(clients[0], prefix)
        for c in clients:
            await c.aclose()


@needs_redis
async def test_redis_same_event_from_two_nodes_gets_one_number(two_nodes):
    node_a, node_b = two_nodes
    s = sid()
    await node_a.open(s, OWNER, T0)
    assert await node_a.append([ev(s, 1)], T0) == [1]
    second = await node_b.append([ev(s, 1)], T0)
    assert second == [-2]  # already numbered 1 by the other node: -seq - 1
    assert appended_seq(second[0]) == 1

    # A batch mixing a seen and a new event; then the other node catches up on the new one.
    assert await node_b.append([ev(s, 1), ev(s, 2)], T0) == [-2, 2]
    assert await node_a.append([ev(s, 2), ev(s, 3)], T0) == [-3, 3]
    assert [appended_seq(r) for r in await node_b.append([ev(s, 3)], T0)] == [3]

    replay = await node_b.replay(s, 0, T0)
    assert replay is not None and replay.last_seq == 3
    assert [(seq, p) for seq, _, p in replay.frames] == [(1, '{"n":1}'), (2, '{"n":2}'), (3, '{"n":3}')]


@needs_redis
async def test_redis_session_state_is_shared(two_nodes):
    """Opened and numbered on one node, kept and replayed on the other (a RESUME landing elsewhere)."""
    node_a, node_b = two_nodes
    s = sid()
    await node_a.open(s, OWNER, T0)
    await node_a.append([ev(s, 1), ev(s, 2)], T0)
    await node_a.keep(s, RESUME_WINDOW, T0 + 1)  # closed on A
    replay = await node_b.replay(s, 1, T0 + 100)
    assert replay is not None and replay.owner == OWNER and [seq for seq, _, _ in replay.frames] == [2]
    await node_b.keep(s, ATTACHED_TTL, T0 + 100)  # resumed on B
    assert await node_a.replay(s, 0, T0 + 100 + ATTACHED_TTL - 1) is not None
    await node_b.drop([s])
    assert await node_a.replay(s, 0, T0 + 101) is None


@needs_redis
async def test_redis_same_event_in_two_sessions_is_stored_once(two_nodes):
    node_a, _ = two_nodes
    a, b = sid(), sid()
    for s in (a, b):
        await node_a.open(s, OWNER, T0)
    shared = '{"shared":true}'
    assert await node_a.append([Append(a, "one", "T", shared), Append(b, "one", "T", shared)], T0) == [1, 1]
    payload_keys = [k async for k in node_a.client.scan_iter(match=f"{node_a.prefix}gw:ev:*")]
    assert payload_keys == [f"{node_a.prefix}gw:ev:one"]


@needs_redis
async def test_redis_lost_payload_cannot_be_replayed(two_nodes):
    node_a, _ = two_nodes
    s = sid()
    await node_a.open(s, OWNER, T0)
    await node_a.append([ev(s, 1), ev(s, 2)], T0)
    await node_a.client.delete(f"{node_a.prefix}gw:ev:ev-1")  # as when EVENT_TTL passed
    replay = await node_a.replay(s, 0, T0)
    assert replay is not None and replay.frames is None
    replay = await node_a.replay(s, 1, T0)  # the missing one is not needed
    assert replay is not None and [seq for seq, _, _ in replay.frames] == [2]


@needs_redis
async def test_redis_keys_carry_a_cleanup_ttl(two_nodes):
    node_a, _ = two_nodes
    s = sid()
    await node_a.open(s, OWNER, T0)
    await node_a.append([ev(s, 1)], T0)
    await node_a.keep(s, RESUME_WINDOW, T0)
    base = f"{node_a.prefix}gw:{s}"
    for key in (base, base + ":buf", base + ":ids", f"{node_a.prefix}gw:ev:ev-1"):
        ttl = await node_a.client.pttl(key)
        assert 0 < ttl <= 600_000 + 60_000, (key, ttl)
