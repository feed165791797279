"""The hub's delivery without a network: a slow client is dropped when its queue overflows and never
delays the others; one encoding per event; session filters."""

from __future__ import annotations

import asyncio
import json

from meadhall.core.clock import MovableClock
from meadhall.gateway.connection import Connection
from meadhall.gateway.hub import GatewaySession, Hub, NodeMessage, State
from meadhall.gateway.resume import MemoryResumeStore, Owner
from meadhall.realtime.events import Event


class Sink:
    def __init__(self, blocked: bool = False) -> None:
        self.frames: list[dict] = []
        self.closed: int | None = None
        self.gate = asyncio.Event()
        if not blocked:
            self.gate.set()
        self.overflowed = False

    async def send(self, frame: str) -> None:
        await self.gate.wait()
        self.frames.append(json.loads(frame))

    async def close(self, code: int) -> None:
        self.closed = code

    def overflow(self) -> None:
        self.overflowed = True


async def live(hub: Hub, sink: Sink, user_id: int, auth_session: int, max_queued: int = 512) -> GatewaySession:
    conn = Connection(sink.send, sink.close, max_queued, sink.overflow)
    gs = GatewaySession(f"s{user_id}-{auth_session}", user_id, auth_session, State.PENDING, conn=conn)
    await hub.store.open(gs.id, Owner(user_id, auth_session), hub.clock.timestamp())
    hub.register(gs)
    await hub.go_live(gs, "{}")
    return gs


async def settle(sinks: list[Sink], count: int) -> None:
    for _ in range(200):
        if all(len(s.frames) >= count for s in sinks):
            return
        await asyncio.sleep(0.005)


async def test_slow_client_is_dropped_on_overflow_and_others_get_everything():
    hub = Hub(MemoryResumeStore(), MovableClock())
    fast, slow = Sink(), Sink(blocked=True)
    await live(hub, fast, 1, 10)
    slow_gs = await live(hub, slow, 2, 20, max_queued=50)
    for i in range(200):
        await hub.on_event(Event("MESSAGE_CREATE", {"i": i}, (1, 2)))
    await settle([fast], 201)
    assert [f["d"]["i"] for f in fast.frames[1:]] == list(range(200))
    assert [f["s"] for f in fast.frames] == list(range(1, 202))
    assert slow.overflowed and slow_gs.conn is not None and slow_gs.conn.overflowed
    # The dropped client's events stay in its resume buffer, numbered, for a RESUME.
    replay = await hub.store.replay(slow_gs.id, 1, hub.clock.timestamp())
    assert replay is not None and replay.frames is not None and len(replay.frames) == 200


async def test_sessions_and_exclude_sessions_filter_connections():
    hub = Hub(MemoryResumeStore(), MovableClock())
    phone, laptop, other = Sink(), Sink(), Sink()
    await live(hub, phone, 1, 10)
    await live(hub, laptop, 1, 11)
    await live(hub, other, 2, 20)
    await hub.on_event(Event("READ_STATE_UPDATE", {"x": 1}, (1,), exclude_sessions=(10,)))
    await hub.on_event(Event("SESSION_INVALIDATED", {"reason": "logout", "session_id": "11"}, (1,), sessions=(11,)))
    await settle([phone, laptop], 2)
    assert [f["t"] for f in phone.frames] == ["READY"]
    assert [f["t"] for f in laptop.frames] == ["READY", "READ_STATE_UPDATE", "SESSION_INVALIDATED"]
    assert laptop.closed == 4010
    assert [f["t"] for f in other.frames] == ["READY"]
    assert "s1-11" not in hub.sessions and "s1-10" in hub.sessions


async def test_payload_is_encoded_once_per_event(monkeypatch):
    hub = Hub(MemoryResumeStore(), MovableClock())
    sinks = [Sink() for _ in range(20)]
    for i, sink in enumerate(sinks):
        await live(hub, sink, 100 + i, 1000 + i)
    calls = 0
    original = Event.payload_json

    def counting(self: Event) -> str:
        nonlocal calls
        calls += 1
        return original(self)

    monkeypatch.setattr(Event, "payload_json", counting)
    await hub.on_event(Event("MESSAGE_CREATE", {"content": "x"}, tuple(range(100, 120))))
    await settle(sinks, 2)
    assert calls == 1
    assert all(s.frames[1]["d"] == {"content": "x"} for s in sinks)


async def test_detached_sessions_keep_numbering_and_expire_after_the_window():
    clock = MovableClock()
    hub = Hub(MemoryResumeStore(), clock)
    sink = Sink()
    gs = await live(hub, sink, 1, 10)
    await hub.detach(gs, gs.conn)
    await hub.on_event(Event("X", {"n": 1}, (1,)))
    replay = await hub.store.replay(gs.id, 1, clock.timestamp())
    assert replay is not None and [f[0] for f in replay.frames] == [2]
    clock.advance(121)
    assert hub.sweep() == 1
    assert gs.id not in hub.sessions
    assert await hub.store.replay(gs.id, 1, clock.timestamp()) is None


async def test_an_event_for_nobody_here_does_not_wait_for_the_delivery_lock():
    """While a delivery holds the lock (a Redis round trip, say), an event none of whose receivers has a session
    on this node returns at once; one for a session here waits its turn and then arrives."""
    hub = Hub(MemoryResumeStore(), MovableClock())
    here = Sink()
    await live(hub, here, 1, 10)
    async with hub._lock:
        await asyncio.wait_for(hub.on_event(Event("MEMBER_UPDATE", {"x": 1}, (2, 3))), 0.5)
        waiting = asyncio.create_task(hub.on_event(Event("MEMBER_UPDATE", {"x": 2}, (1, 2))))
        await asyncio.sleep(0.05)
        assert not waiting.done()
    await asyncio.wait_for(waiting, 1.0)
    await settle([here], 2)
    assert [f["d"] for f in here.frames[1:]] == [{"x": 2}]


async def test_the_hub_asks_the_bus_only_for_events_of_its_sessions_and_node_messages():
    """`Hub.wants`, the bus's test before it hands over an event: receivers with a session on this node, or a
    message between nodes (which names no receiver)."""
    hub = Hub(MemoryResumeStore(), MovableClock())
    await live(hub, Sink(), 1, 10)
    assert hub.wants(Event("MEMBER_UPDATE", {}, (1, 2)))
    assert not hub.wants(Event("MEMBER_UPDATE", {}, (2, 3)))
    assert not hub.wants(Event("MEMBER_UPDATE", {}, ()))
    assert hub.wants(Event(NodeMessage.EVICT, {"connections": []}, ()))
    assert hub.wants(Event.from_json(Event(NodeMessage.ADOPT, {}, ()).to_json()))  # as Redis hands it over
