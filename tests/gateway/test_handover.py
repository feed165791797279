"""A gateway session handed over between two nodes' hubs sharing one Redis resume store (docs/scaling.md),
without a network: each hub is fed bus events by hand, so the test can make one node lag behind the
other, which real pub/sub allows (every node reads the channel at its own pace).

The hand-over race: the client of node A resumes on node B after B has handled an event that A, which still
holds the session detached, has not numbered yet. B's replay cannot contain it and B will not see it
again, and A numbers it later. The client must still get it, in order and with contiguous `s`: the holder
fills a gap in its numbers from the shared buffer (on its next dispatch, or at the latest on the next
heartbeat).

A stopping node: until its clients resume elsewhere nobody would number their events, so before it stops
it asks the other nodes (through the bus) to adopt its gateway sessions as detached."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest

from meadhall.core.clock import MovableClock
from meadhall.gateway.connection import Connection
from meadhall.gateway.hub import GatewaySession, Hub, NodeMessage, State
from meadhall.gateway.resume import ATTACHED_TTL, RESUME_WINDOW, Owner, RedisResumeStore
from meadhall.realtime.events import Event
from tests.support.gateway import FrameSink as Sink

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
pytestmark = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")

USER, AUTH = 7, 70


def connection(sink: Sink) -> Connection:
    return Connection(sink.send, sink.close, 512, sink.overflow)


async def flush() -> None:
    """Let the connections' writer tasks send what is queued."""
    import asyncio

    for _ in range(5):
        await asyncio.sleep(0)


@pytest.fixture
async def hubs() -> AsyncIterator[tuple[Hub, Hub]]:
    import redis.asyncio as aioredis

    prefix = f"test-{uuid.uuid4().hex[:12]}"
    clients = [aioredis.from_url(TEST_REDIS_URL, decode_responses=True) for _ in range(2)]
    clock = MovableClock()
    try:
        yield Hub(RedisResumeStore(clients[0], prefix), clock), Hub(RedisResumeStore(clients[1], prefix), clock)
    finally:
        keys = [k async for k in clients[0].scan_iter(match=f"{prefix}:*")]
        if keys:
            await clients[0].delete(*keys)
        for c in clients:
            await c.aclose()


def message(n: int) -> Event:
    return Event("MESSAGE_CREATE", {"n": n}, (USER,), id=f"bus-{n}")


async def identify_on(hub: Hub, sink: Sink) -> GatewaySession:
    """What the endpoint does for IDENTIFY."""
    gs = GatewaySession(uuid.uuid4().hex, USER, AUTH, State.PENDING, conn=connection(sink))
    await hub.store.open(gs.id, Owner(USER, AUTH), hub.clock.timestamp())
    hub.register(gs)
    await hub.go_live(gs, '{"v":1}')
    return gs


async def resume_on(hub: Hub, session_id: str, seq: int, sink: Sink) -> GatewaySession:
    """What the endpoint does for RESUME (these hubs have no event log: nothing to catch up from)."""
    now = hub.clock.timestamp()
    meta = await hub.store.peek(session_id, now)
    assert meta is not None and meta.owner == Owner(USER, AUTH)
    assert await hub.store.keep(session_id, ATTACHED_TTL, now) >= seq
    conn = connection(sink)
    assert await hub.resume(session_id, USER, AUTH, conn, seq, meta.pos) is not None
    gs = hub.sessions[session_id]
    assert gs.conn is conn and gs.state is State.LIVE
    return gs


async def test_resume_elsewhere_when_both_nodes_kept_up(hubs):
    node_a, node_b = hubs
    first = Sink()
    gs = await identify_on(node_a, first)
    for hub in (node_a, node_b):
        await hub.on_event(message(1))
    await flush()
    assert first.dispatches()[-1][0] == 2
    await node_a.detach(gs, gs.conn)  # the client went away at s = 2
    for hub in (node_a, node_b):
        await hub.on_event(message(2))

    second = Sink()
    await resume_on(node_b, gs.id, 2, second)
    for hub in (node_a, node_b):  # both append it (A still holds the detached copy): one number
        await hub.on_event(message(3))
    await flush()
    assert second.dispatches() == [(3, "MESSAGE_CREATE", {"n": 2}), (4, "RESUMED", {"replayed": 1}),
                                   (5, "MESSAGE_CREATE", {"n": 3})]


async def test_an_event_the_lagging_node_numbers_after_the_hand_over_is_delivered_with_the_next(hubs):
    node_a, node_b = hubs
    first = Sink()
    gs = await identify_on(node_a, first)
    for hub in (node_a, node_b):
        await hub.on_event(message(1))
    await node_a.detach(gs, gs.conn)

    await node_b.on_event(message(2))  # B has it; A lags behind
    second = Sink()
    await resume_on(node_b, gs.id, 2, second)
    await node_a.on_event(message(2))  # A numbers it now, for its detached copy
    for hub in (node_b, node_a):
        await hub.on_event(message(3))
    await flush()
    assert second.dispatches() == [(3, "RESUMED", {"replayed": 0}), (4, "MESSAGE_CREATE", {"n": 2}),
                                   (5, "MESSAGE_CREATE", {"n": 3})]


async def test_a_gap_is_filled_at_the_next_heartbeat_when_nothing_else_comes(hubs):
    node_a, node_b = hubs
    gs = await identify_on(node_a, Sink())
    await node_a.detach(gs, gs.conn)

    await node_b.on_event(message(1))
    second = Sink()
    held = await resume_on(node_b, gs.id, 1, second)
    await node_a.on_event(message(1))
    await flush()
    assert second.dispatches() == [(2, "RESUMED", {"replayed": 0})]

    await node_b.heartbeat(held)
    await flush()
    assert second.dispatches() == [(2, "RESUMED", {"replayed": 0}), (3, "MESSAGE_CREATE", {"n": 1})]
    await node_b.heartbeat(held)  # nothing more
    await flush()
    assert len(second.dispatches()) == 2


class Bus:
    """One channel, one order: every hub gets every event (as RedisBus delivers)."""

    def __init__(self, *hubs: Hub) -> None:
        self.hubs = hubs
        self.published: list[Event] = []

    async def publish(self, events: list[Event]) -> None:
        self.published += events
        for ev in events:
            for hub in self.hubs:
                await hub.on_event(ev)


async def test_a_stopping_node_hands_its_sessions_over(hubs):
    node_a, node_b = hubs
    away, live = Sink(), Sink()
    detached = await identify_on(node_a, away)
    await node_a.detach(detached, detached.conn)
    attached = await identify_on(node_a, live)
    pending = GatewaySession("pending", USER, AUTH, State.PENDING)  # READY never went out: not handed over
    node_a.register(pending)
    own = await identify_on(node_b, Sink())

    bus = Bus(node_a, node_b)
    await node_a.hand_over(bus)  # returns once its own request came back (at once here)
    [request] = bus.published
    assert request.type == NodeMessage.ADOPT and request.users == ()
    assert sorted(s[0] for s in request.data["sessions"]) == sorted([detached.id, attached.id])
    adopted = {gs.id: gs for gs in node_b.sessions.values() if gs.id != own.id}
    assert set(adopted) == {detached.id, attached.id}
    assert all(gs.state is State.DETACHED and gs.conn is None and gs.user_id == USER
               and gs.auth_session_id == AUTH for gs in adopted.values())
    assert node_b.sessions[own.id] is own

    # Node A is gone; an event comes; the client of the live session resumes on B and gets it.
    await node_b.on_event(message(1))
    second = Sink()
    held = node_b.sessions[attached.id]
    assert await resume_on(node_b, attached.id, 1, second) is held
    await flush()
    assert second.dispatches() == [(2, "MESSAGE_CREATE", {"n": 1}), (3, "RESUMED", {"replayed": 1})]

    # The other adopted session was never resumed: forgotten after the resume window.
    node_b.clock.advance(RESUME_WINDOW)
    node_b.sweep()
    assert detached.id not in node_b.sessions and attached.id in node_b.sessions


async def test_hand_over_without_sessions_publishes_nothing(hubs):
    node_a, node_b = hubs
    bus = Bus(node_a, node_b)
    await node_a.hand_over(bus)
    assert bus.published == []
