"""Event envelope and the buses: LocalBus in-process, RedisBus across nodes (docs/scaling.md)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from meadhall.realtime.bus import LocalBus, RedisBus
from meadhall.realtime.events import Event, event

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
needs_redis = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")

BIG = 175928847299117063  # a snowflake above 2**53: must survive JSON exactly


def recorder() -> tuple[list[Event], Callable[[Event], Any]]:
    seen: list[Event] = []

    async def handler(ev: Event) -> None:
        seen.append(ev)

    return seen, handler

POLL_INTERVAL = 0.005
POLLS = 1000


async def wait_for(predicate: Callable[[], bool]) -> None:
    """Poll until `predicate()` holds; fail after about five seconds."""
    for _ in range(POLLS):
        if predicate():
            return
        await asyncio.sleep(POLL_INTERVAL)
    raise AssertionError("condition not met within 5 s")


# ---------------------------------------------------------------- Event envelope


@pytest.mark.parametrize(
    "ev",
    [
        Event("MESSAGE_CREATE", {"id": str(BIG), "content": "héllo ✓ ", "n": None}, (1, BIG)),
        Event("SESSION_DELETE", {"session_id": "7"}, (5,), sessions=(7, BIG)),
        Event("READ_STATE_UPDATE", {"x": [1, {"y": True}]}, (5, 6), exclude_sessions=(9,)),
        Event("X", {}, (1,), sessions=(), exclude_sessions=(2, 3)),
    ],
)
def test_event_json_round_trip(ev):
    back = Event.from_json(ev.to_json())
    assert back == ev
    assert back.sessions == ev.sessions  # None stays None, () stays ()
    assert Event.from_json(ev.to_json().encode()) == ev


def test_event_json_keeps_none_and_empty_sessions_apart():
    everyone = Event("T", {}, (1,), sessions=None)
    nobody = Event("T", {}, (1,), sessions=())
    assert Event.from_json(everyone.to_json()).sessions is None
    assert Event.from_json(nobody.to_json()).sessions == ()


def test_event_helper_sorts_and_deduplicates_audience():
    ev = event("T", {"a": 1}, [3, 1, 3, 2, 1], exclude_sessions=(4,))
    assert ev.users == (1, 2, 3)
    assert ev.exclude_sessions == (4,)
    assert event("T", {}, {9, 8}).users == (8, 9)


# ---------------------------------------------------------------- LocalBus


async def test_local_bus_delivers_in_order_to_every_subscriber():
    bus = LocalBus()
    first, h1 = recorder()
    second, h2 = recorder()
    bus.subscribe(h1)
    bus.subscribe(h2)
    events = [Event(f"E{i}", {"i": i}, (1,)) for i in range(5)]
    await bus.publish(events[:3])
    await bus.publish(events[3:])
    assert first == events
    assert second == events


async def test_local_bus_failing_handler_does_not_stop_others():
    bus = LocalBus()
    calls: list[str] = []

    async def broken(ev: Event) -> None:
        calls.append("broken")
        raise RuntimeError("receiver bug")

    seen, good = recorder()
    bus.subscribe(broken)
    bus.subscribe(good)
    events = [Event("A", {}, (1,)), Event("B", {}, (1,))]
    await bus.publish(events)  # must not raise
    assert seen == events
    assert calls == ["broken", "broken"]  # the broken handler still gets every event


async def test_a_handler_gets_only_the_events_its_test_accepts_and_the_others_get_all():
    bus = LocalBus()
    picky_seen, picky = recorder()
    asked: list[str] = []

    def wants(ev: Event) -> bool:
        asked.append(ev.type)
        return 2 in ev.users

    all_seen, everything = recorder()
    bus.subscribe(picky, wants)
    bus.subscribe(everything)
    events = [Event("A", {}, (1,)), Event("B", {}, (1, 2)), Event("C", {}, (3,))]
    await bus.publish(events)
    assert [e.type for e in picky_seen] == ["B"]
    assert asked == ["A", "B", "C"]
    assert all_seen == events
    bus.unsubscribe(picky)  # a handler subscribed with a test is unsubscribed by itself
    await bus.publish([Event("D", {}, (2,))])
    assert [e.type for e in picky_seen] == ["B"]


async def test_local_bus_unsubscribe_and_close():
    bus = LocalBus()
    seen, handler = recorder()
    bus.subscribe(handler)
    await bus.publish([Event("A", {}, (1,))])
    bus.unsubscribe(handler)
    bus.unsubscribe(handler)  # unknown handler: no error
    await bus.publish([Event("B", {}, (1,))])
    assert [e.type for e in seen] == ["A"]

    bus.subscribe(handler)
    await bus.close()
    await bus.publish([Event("C", {}, (1,))])
    assert [e.type for e in seen] == ["A"]


# ---------------------------------------------------------------- RedisBus


def without_ids(events: list[Event]) -> list[Event]:
    """RedisBus gives every published event an id (resume buffers append an event once per gateway
    session by it, whichever node appends): compare the rest, after checking the ids are there."""
    assert all(e.id for e in events), events
    return [e._replace(id="") for e in events]


@pytest.fixture
async def redis_pair() -> AsyncIterator[tuple[RedisBus, RedisBus, str]]:
    """Two nodes, each with its own connection, on a channel of their own."""
    import redis.asyncio as aioredis

    channel = f"test-{uuid.uuid4().hex[:12]}:events"
    clients = [aioredis.from_url(TEST_REDIS_URL, decode_responses=True) for _ in range(2)]
    buses = [RedisBus(c, channel=channel) for c in clients]
    for bus in buses:
        await bus.start()  # reads from the log's end as it is now: nothing to wait for
    try:
        yield buses[0], buses[1], channel
    finally:
        for bus in buses:
            await bus.close()
        await clients[0].delete(channel, f"{channel}:epoch")
        for c in clients:
            await c.aclose()


async def publish_marker(bus: RedisBus, seen: list[Event]) -> None:
    """Publish a marker and wait for it: Redis delivers one publisher's messages in order, so once the
    marker is in, everything published before it has arrived too (no fixed sleeps)."""
    marker = Event("MARKER", {"m": uuid.uuid4().hex}, (0,))
    await bus.publish([marker])
    await wait_for(lambda: any(e.data == marker.data for e in seen))
    seen[:] = [e for e in seen if e.data != marker.data]


@needs_redis
async def test_redis_bus_event_reaches_the_other_node(redis_pair):
    node_a, node_b, _ = redis_pair
    seen_b, handler_b = recorder()
    node_b.subscribe(handler_b)
    ev = Event("MESSAGE_CREATE", {"id": str(BIG)}, (1, BIG), sessions=(3,), exclude_sessions=(4,))
    await node_a.publish([ev])
    await wait_for(lambda: len(seen_b) == 1)
    assert without_ids(seen_b) == [ev]


@needs_redis
async def test_redis_bus_delivers_once_to_the_publishing_node_too(redis_pair):
    node_a, node_b, _ = redis_pair
    seen_a, handler_a = recorder()
    node_a.subscribe(handler_a)
    ev = Event("T", {"k": 1}, (1,))
    await node_a.publish([ev])
    await publish_marker(node_b, seen_a)
    assert without_ids(seen_a) == [ev]  # not twice (once locally, once via Redis)


@needs_redis
async def test_redis_bus_keeps_order(redis_pair):
    node_a, node_b, _ = redis_pair
    seen_b, handler_b = recorder()
    node_b.subscribe(handler_b)
    events = [Event("E", {"i": i}, (1,)) for i in range(50)]
    await node_a.publish(events[:20])
    await node_a.publish(events[20:])
    await wait_for(lambda: len(seen_b) >= 50)
    assert without_ids(seen_b) == events
    assert len({e.id for e in seen_b}) == 50


@needs_redis
async def test_redis_bus_failing_handler_does_not_stop_reader(redis_pair):
    node_a, node_b, _ = redis_pair

    async def broken(ev: Event) -> None:
        raise RuntimeError("receiver bug")

    seen_b, handler_b = recorder()
    node_b.subscribe(broken)
    node_b.subscribe(handler_b)
    await node_a.publish([Event("A", {}, (1,))])
    await node_a.publish([Event("B", {}, (1,))])
    await wait_for(lambda: len(seen_b) == 2)
    assert [e.type for e in seen_b] == ["A", "B"]


@needs_redis
async def test_redis_bus_channels_are_isolated(redis_pair):
    import redis.asyncio as aioredis

    node_a, _, _ = redis_pair
    client = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
    other = RedisBus(client, channel=f"test-{uuid.uuid4().hex[:12]}:events")
    await other.start()
    try:
        seen_other, handler = recorder()
        other.subscribe(handler)
        await node_a.publish([Event("ELSEWHERE", {}, (1,))])
        await publish_marker(other, seen_other)
        assert seen_other == []
    finally:
        await other.close()
        await client.delete(other.channel, other.epoch_key)
        await client.aclose()


@needs_redis
async def test_redis_bus_publish_nothing_is_a_no_op(redis_pair):
    node_a, node_b, _ = redis_pair
    seen_b, handler_b = recorder()
    node_b.subscribe(handler_b)
    await node_a.publish([])
    await publish_marker(node_a, seen_b)
    assert seen_b == []


@needs_redis
async def test_redis_bus_close_stops_delivery(redis_pair):
    node_a, node_b, _ = redis_pair
    seen_b, handler_b = recorder()
    node_b.subscribe(handler_b)
    await node_b.close()
    assert node_b._reader is not None and node_b._reader.done()
    seen_a, handler_a = recorder()
    node_a.subscribe(handler_a)
    await node_a.publish([Event("AFTER_CLOSE", {}, (1,))])
    await wait_for(lambda: len(seen_a) == 1)
    assert seen_b == []


@needs_redis
async def test_redis_bus_reader_comes_back_by_itself_when_its_connection_dies(redis_pair):
    """A Redis restart or a network cut kills the reader's connection: it reads again, from where it
    stopped, within seconds and without a restart of the node; nothing published meanwhile is lost."""
    import redis.asyncio as aioredis

    node_a, _, channel = redis_pair
    name = f"bus-reader-{uuid.uuid4().hex[:8]}"
    client = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
    subscriber = aioredis.from_url(TEST_REDIS_URL, decode_responses=True, client_name=name)
    reader = RedisBus(client, channel=channel, subscriber=subscriber)
    await reader.start()
    seen, handler = recorder()
    reader.subscribe(handler)
    try:
        await node_a.publish([Event("BEFORE", {}, (1,))])
        await wait_for(lambda: len(seen) == 1)
        killed = 0
        for entry in await client.client_list():
            if entry.get("name") == name:
                killed += await client.execute_command("CLIENT", "KILL", "ID", entry["id"], "SKIPME", "yes")
        assert killed >= 1
        await node_a.publish([Event("DURING", {}, (1,))])
        await wait_for(lambda: len(seen) == 2)  # within five seconds
        await node_a.publish([Event("AFTER", {}, (1,))])
        await wait_for(lambda: len(seen) == 3)
        assert [e.type for e in seen] == ["BEFORE", "DURING", "AFTER"]
    finally:
        await reader.close()
        await client.aclose()


@needs_redis
async def test_redis_bus_tells_its_node_when_redis_lost_its_data(redis_pair, monkeypatch):
    from meadhall.realtime import bus as bus_module

    monkeypatch.setattr(bus_module, "EPOCH_EVERY", 0.05)
    node_a, node_b, _ = redis_pair
    resets: list[str] = []

    async def reset() -> None:
        resets.append("b")

    node_b.on_reset.append(reset)
    await asyncio.sleep(0.2)
    assert resets == []  # the same Redis, checked several times: nothing lost
    await node_b.client.delete(node_b.epoch_key)  # FLUSHDB, or a restart without persistence
    await wait_for(lambda: resets == ["b"])
    seen, handler = recorder()
    node_b.subscribe(handler)
    await node_a.publish([Event("AFTER", {}, (1,))])
    await wait_for(lambda: len(seen) == 1)
    assert resets == ["b"]  # once: the new epoch is the one both nodes see from now on


@needs_redis
async def test_redis_bus_gives_ids_in_the_callers_list_even_when_the_publish_fails():
    """The unit of work keeps a refused batch for later (db/uow.py): the ids given before the failure stay."""
    import redis.asyncio as aioredis

    client = aioredis.from_url("redis://127.0.0.1:1", decode_responses=True)  # nothing listens there
    bus = RedisBus(client, channel=f"test-{uuid.uuid4().hex[:12]}:events")
    events = [Event("A", {}, (1,)), Event("B", {}, (2,), id="given")]
    with pytest.raises(Exception):  # noqa: B017 (whatever the client raises for a refused connection)
        await bus.publish(events)
    assert events[0].id and events[1].id == "given"
    await client.aclose()


@needs_redis
async def test_redis_bus_skips_an_undecodable_entry_and_reads_on(redis_pair):
    node_a, node_b, channel = redis_pair
    seen_b, handler_b = recorder()
    node_b.subscribe(handler_b)
    await node_a.client.xadd(channel, {"e": "{not json"})
    ev = Event("MESSAGE_CREATE", {"id": "1"}, (1,))
    await node_a.publish([ev])
    await wait_for(lambda: len(seen_b) == 1)
    assert without_ids(seen_b) == [ev]
