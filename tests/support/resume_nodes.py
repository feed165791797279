"""Two or more gateway nodes in one process for RESUME tests (tests/gateway/test_resume_log*.py): each a hub on
its own RedisBus reader, sharing one Redis (stream, resume store) under a prefix of its own. A node "dies" as a
SIGKILL leaves things: its reader stops, nothing is handed over."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from meadhall.core.clock import MovableClock
from meadhall.gateway.connection import Connection
from meadhall.gateway.hub import GatewaySession, Hub, State
from meadhall.gateway.resume import ATTACHED_TTL, GONE, Owner, RedisResumeStore
from meadhall.realtime.bus import RedisBus
from meadhall.realtime.events import Event
from tests.support.gateway import FrameSink

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None

USER, AUTH = 7, 70
OTHER = 8


class Sink(FrameSink):
    def messages(self) -> list[int]:
        return [d["n"] for _, t, d in self.dispatches() if t == "MESSAGE_CREATE"]


async def wait_until(predicate: Callable[[], bool], within: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {within} s")
        await asyncio.sleep(0.005)


class Node:
    def __init__(self, prefix: str, clock: MovableClock) -> None:
        import redis.asyncio as aioredis

        assert TEST_REDIS_URL is not None  # the tests that start nodes are skipped without it
        self.client = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
        self.subscriber = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
        self.bus = RedisBus(self.client, channel=f"{prefix}:events", subscriber=self.subscriber)
        self.hub = Hub(RedisResumeStore(self.client, prefix), clock)
        self.hub.follow(self.bus)

    async def start(self) -> Node:
        await self.bus.start()
        return self

    async def die(self) -> None:
        """As a SIGKILL leaves things: the reader stops; no hand-over, no detach, nothing kept."""
        await self.bus.close()

    async def identify(self, sink: Sink, user: int = USER, auth: int = AUTH) -> GatewaySession:
        """What the endpoint does for IDENTIFY."""
        gs = GatewaySession(uuid.uuid4().hex, user, auth, State.PENDING, conn=connection(sink))
        self.hub.register(gs)
        await self.hub.store.open(gs.id, Owner(user, auth), self.hub.clock.timestamp(), self.hub.reading())
        await self.hub.go_live(gs, '{"v":1}')
        return gs

    async def resume(self, session_id: str, seq: int, sink: Sink) -> int | None:
        """What the endpoint does for RESUME."""
        now = self.hub.clock.timestamp()
        meta = await self.hub.store.peek(session_id, now)
        if meta is None:
            return None
        assert meta.owner == Owner(USER, AUTH) and seq <= meta.last_seq
        assert await self.hub.store.keep(session_id, ATTACHED_TTL, now) != GONE
        return await self.hub.resume(session_id, USER, AUTH, connection(sink), seq, meta.pos)

    async def close(self) -> None:
        await self.bus.close()
        await self.client.aclose()


def connection(sink: Sink) -> Connection:
    return Connection(sink.send, sink.close, 4096, sink.overflow)


def message(n: int, user: int = USER) -> Event:
    return Event("MESSAGE_CREATE", {"n": n}, (user,))


@contextlib.asynccontextmanager
async def running_cluster() -> AsyncIterator[Callable[[], Any]]:
    import redis.asyncio as aioredis

    prefix = f"test-{uuid.uuid4().hex[:12]}"
    clock = MovableClock()
    nodes: list[Node] = []

    async def start() -> Node:
        node = await Node(prefix, clock).start()
        nodes.append(node)
        return node

    try:
        yield start
    finally:
        for node in nodes:
            await node.close()
        assert TEST_REDIS_URL is not None
        client = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def published_and_read(by: Node, events: list[Event], *readers: Node) -> None:
    """Publish through `by` and wait until every reader has handled them (its position reached the end)."""
    await by.bus.publish(events)
    newest = await by.client.xrevrange(by.bus.channel, "+", "-", count=1)
    assert newest  # just published
    [[last, _]] = newest
    for node in readers or (by,):
        await wait_until(_has_read(node, last))


def _has_read(node: Node, entry: object) -> Callable[[], bool]:
    return lambda: node.bus.position == entry


def check_contiguous(sink: Sink) -> None:
    seqs = [s for s, _, _ in sink.dispatches()]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
