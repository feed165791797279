"""RESUME across nodes from the shared event log (docs/gateway.md): two nodes, each a hub on its own
RedisBus reader, sharing one Redis (stream, resume store). A node "dies" as a SIGKILL leaves things: its
reader stops, nothing is handed over, its sessions stay in Redis as they were. The client resumes on the
other node, which numbers from the log what nobody numbered meanwhile.

Also: a session whose position the log no longer covers is not resumable; a session the store lost is closed
at its next heartbeat (never silently deaf); Redis coming back empty ends every session of a node.

Needs TEST_REDIS_URL; each test uses keys and a stream of its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from meadhall.core.clock import MovableClock
from meadhall.gateway import protocol
from meadhall.gateway.connection import Connection
from meadhall.gateway.hub import GatewaySession, State
from meadhall.realtime import bus as bus_module
from tests.support.resume_nodes import (
    AUTH,
    OTHER,
    TEST_REDIS_URL,
    USER,
    Node,
    Sink,
    check_contiguous,
    message,
    published_and_read,
    running_cluster,
    wait_until,
)

pytestmark = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")


@pytest.fixture
async def cluster() -> AsyncIterator[Callable[[], Any]]:
    """Starts nodes on demand (a node started later has read nothing of the log before it)."""
    async with running_cluster() as start:
        yield start


@pytest.mark.parametrize("client_seq", [3, 2], ids=["client-saw-all", "client-missed-one-a-sent"])
async def test_resume_on_another_node_after_a_kill_gets_every_missed_message_once(cluster, client_seq):
    node_a, node_b = await cluster(), await cluster()
    first = Sink()
    gs = await node_a.identify(first)
    await published_and_read(node_b, [message(1), message(2)], node_a, node_b)
    await wait_until(lambda: first.messages() == [1, 2])  # s = 2 and 3, after READY (1)
    await node_a.die()
    # Nobody holds the session now: until its RESUME, its events are numbered by no one.
    await published_and_read(node_b, [message(n) for n in range(3, 8)], node_b)
    await published_and_read(node_b, [message(99, user=OTHER)], node_b)  # concerns somebody else

    second = Sink()
    replayed = await node_b.resume(gs.id, client_seq, second)
    await wait_until(lambda: any(t == "RESUMED" for _, t, _ in second.dispatches()))
    expected = ([2] if client_seq == 2 else []) + [3, 4, 5, 6, 7]
    assert replayed == len(expected)
    assert second.messages() == expected
    assert second.dispatches()[0][0] == client_seq + 1
    assert second.dispatches()[-1] == (client_seq + 1 + len(expected), "RESUMED", {"replayed": len(expected)})
    check_contiguous(second)

    await published_and_read(node_b, [message(8)], node_b)
    await wait_until(lambda: second.messages()[-1:] == [8])
    assert second.messages() == expected + [8]
    check_contiguous(second)
    assert node_b.hub.sessions[gs.id].state is State.LIVE


async def test_live_traffic_during_the_resume_is_neither_missed_nor_doubled(cluster):
    node_a, node_b = await cluster(), await cluster()
    first = Sink()
    gs = await node_a.identify(first)
    await published_and_read(node_b, [message(1)], node_a, node_b)
    await wait_until(lambda: first.messages() == [1])
    await node_a.die()
    await published_and_read(node_b, [message(n) for n in range(2, 40)], node_b)

    async def traffic() -> None:
        for n in range(40, 240, 4):
            await node_b.bus.publish([message(n + i) for i in range(4)])
            await asyncio.sleep(0)

    second = Sink()
    sender = asyncio.create_task(traffic())
    await asyncio.sleep(0.005)  # some of it is in flight
    assert await node_b.resume(gs.id, 2, second) is not None
    await sender
    await published_and_read(node_b, [message(240)], node_b)
    await wait_until(lambda: second.messages()[-1:] == [240])
    assert second.messages() == list(range(2, 241))
    check_contiguous(second)
    assert [t for _, t, _ in second.dispatches()].count("RESUMED") == 1


async def test_a_session_resumes_from_the_log_in_redis_when_the_node_never_read_that_part(cluster):
    node_a = await cluster()
    gs = await node_a.identify(Sink())
    await published_and_read(node_a, [message(1)], node_a)
    await node_a.die()
    await node_a.bus.publish([message(2)])  # read by no node
    node_b = await cluster()  # reads from here on: message 2 comes from Redis (XRANGE)
    await published_and_read(node_b, [message(3)], node_b)
    meta = await node_b.hub.store.peek(gs.id, node_b.hub.clock.timestamp())
    assert meta is not None and node_b.bus._window_from > bus_module.stream_id(meta.pos)
    second = Sink()
    assert await node_b.resume(gs.id, 2, second) == 2
    await wait_until(lambda: any(t == "RESUMED" for _, t, _ in second.dispatches()))
    assert second.messages() == [2, 3]
    check_contiguous(second)


async def lost_part_of_the_log(cluster: Callable[[], Any]) -> tuple[GatewaySession, Node]:
    """A session of a node that died, and a node that never read what followed its position, which the
    log then dropped (as its trimming does after KEEP_S seconds)."""
    node_a = await cluster()
    gs = await node_a.identify(Sink())
    await published_and_read(node_a, [message(1)], node_a)
    await node_a.die()
    await node_a.bus.publish([message(2)])  # read by no node
    node_b = await cluster()
    await published_and_read(node_b, [message(3)], node_b)
    [[last, _]] = await node_b.client.xrevrange(node_b.bus.channel, "+", "-", count=1)
    await node_b.client.xtrim(node_b.bus.channel, minid=last, approximate=False)
    return gs, node_b


async def test_a_session_older_than_the_log_is_not_resumable(cluster):
    gs, node_b = await lost_part_of_the_log(cluster)

    second = Sink()
    assert await node_b.resume(gs.id, 2, second) is None
    assert second.dispatches() == []
    assert gs.id not in node_b.hub.sessions  # the endpoint answers INVALID_SESSION session_expired


async def test_the_endpoint_tells_a_client_the_session_expired_when_the_log_lost_it(cluster):
    from meadhall.gateway.endpoint import GatewayReader

    gs, node_b = await lost_part_of_the_log(cluster)

    sent: list[str] = []

    class Identity:
        user_id, session_id = USER, AUTH

    reader = GatewayReader.__new__(GatewayReader)
    reader.hub, reader.gs, reader.who = node_b.hub, None, None
    reader.conn = Connection(lambda f: _append(sent, f), _noop_close, 64, lambda: None)
    reader.rt = _Runtime(node_b.hub.clock)

    async def who(d: Any) -> Any:
        return Identity()

    reader._who = who  # type: ignore[method-assign]
    assert await reader._resume({"token": "t", "session_id": gs.id, "seq": 2}, 0.0) is None
    assert [json.loads(f) for f in sent] == [{"op": 9, "d": {"reason": "session_expired", "resumable": False},
                                             "s": None, "t": None}]
    assert reader.gs is None  # the connection stays open for IDENTIFY


async def _append(sent: list[str], frame: str) -> None:
    sent.append(frame)


async def _noop_close(code: int) -> None:
    return None


class _Runtime:
    def __init__(self, clock: MovableClock) -> None:
        self.clock = clock


async def test_a_session_the_store_lost_is_closed_at_its_next_heartbeat(cluster):
    node_a = await cluster()
    sink = Sink()
    gs = await node_a.identify(sink)
    await node_a.hub.heartbeat(gs)  # alive: nothing happens
    await asyncio.sleep(0)
    assert sink.closed is None and gs.id in node_a.hub.sessions
    await node_a.hub.store.drop([gs.id])  # as a Redis restarted empty would have it

    await node_a.hub.heartbeat(gs)
    await wait_until(lambda: sink.closed == protocol.CLOSE_TIMED_OUT)
    assert gs.id not in node_a.hub.sessions
    # Its RESUME finds nothing (INVALID_SESSION session_expired); a new IDENTIFY works.
    assert await node_a.hub.store.peek(gs.id, node_a.hub.clock.timestamp()) is None
    again = Sink()
    await node_a.identify(again)
    await published_and_read(node_a, [message(1)], node_a)
    await wait_until(lambda: again.messages() == [1])


async def test_redis_coming_back_empty_ends_the_sessions_it_lost_and_delivery_goes_on(cluster, monkeypatch):
    monkeypatch.setattr(bus_module, "EPOCH_EVERY", 0.5)
    node_a = await cluster()
    sinks = [Sink(), Sink()]
    lost = [await node_a.identify(sink) for sink in sinks]
    # What FLUSHDB or a restart without persistence leaves: nothing of the sessions, no epoch.
    await node_a.hub.store.drop([gs.id for gs in lost])
    await node_a.client.delete(node_a.bus.epoch_key)
    newer = Sink()  # identified after Redis came back, before the node noticed: it is not lost
    kept = await node_a.identify(newer)

    await wait_until(lambda: all(s.closed == protocol.CLOSE_TIMED_OUT for s in sinks))
    assert list(node_a.hub.sessions) == [kept.id]
    assert newer.closed is None
    again = Sink()
    await node_a.identify(again)
    await published_and_read(node_a, [message(1)], node_a)
    await wait_until(lambda: again.messages() == [1] and newer.messages() == [1])
    assert again.closed is None and newer.closed is None
