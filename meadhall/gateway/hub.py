"""The node's hub: which gateway sessions of which users live here, and delivery of every bus event to
them (docs/reference/events.md). Each event's payload is encoded once; each receiving gateway session gets the next
sequence number from the resume store (one batched call per event) and its connection gets the frame
through its own queue.

A gateway session is PENDING while its READY is being built (events are held, unnumbered, and follow
READY), RESUMING while its buffer is being replayed (numbered frames are held), LIVE with a connection,
and DETACHED for the resume window after its connection closed (its events are still numbered and
buffered, so a RESUME here or on another node replays them).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

import structlog

from meadhall.core.clock import Clock
from meadhall.gateway import protocol
from meadhall.gateway.caps import ConnectionCaps, MemoryConnectionCaps
from meadhall.gateway.connection import Connection
from meadhall.gateway.resume import ATTACHED_TTL, RESUME_WINDOW, Append, ResumeStore, appended_seq
from meadhall.metrics import Metrics
from meadhall.realtime.events import Event, EventType

log = structlog.get_logger("meadhall.gateway")

HAND_OVER_WAIT = 2.0  # seconds a stopping node waits for its request to come back through the bus


class NodeMessage(StrEnum):
    """Messages between gateway nodes, carried on the event bus in the same envelope as dispatches.

    They are not dispatches and deliberately not members of `EventType`: no client ever receives one
    (the hub consumes them before delivery), and docs/reference/events.md, generated from EventType,
    lists only what clients receive. Their names start with `GATEWAY_` so that they cannot collide
    with a dispatch type."""

    # A stopping node's request that the other nodes hold its gateway sessions: see `Hub.hand_over`.
    ADOPT = "GATEWAY_ADOPT"
    # A node's request that whichever node holds these connections closes them with 4013: the user went
    # over the connection cap (docs/gateway.md, gateway/caps.py).
    EVICT = "GATEWAY_EVICT"


_NODE_MESSAGES = frozenset(m.value for m in NodeMessage)  # plain strings: an Enum member hashes by its name


class State(Enum):
    PENDING = "pending"
    RESUMING = "resuming"
    LIVE = "live"
    DETACHED = "detached"


@dataclass(eq=False)
class GatewaySession:
    id: str
    user_id: int
    auth_session_id: int
    state: State
    conn: Connection | None = None
    held_events: list[Event] = field(default_factory=list)
    held_frames: list[tuple[int, str]] = field(default_factory=list)
    detached_at: float = 0.0


def new_session_id() -> str:
    return uuid.uuid4().hex


class Hub:
    def __init__(self, store: ResumeStore, clock: Clock, caps: ConnectionCaps | None = None,
                 metrics: Metrics | None = None) -> None:
        self.store = store
        self.clock = clock
        self.caps: ConnectionCaps = caps or MemoryConnectionCaps()
        self.metrics = metrics
        self.sessions: dict[str, GatewaySession] = {}
        self.by_user: dict[int, list[GatewaySession]] = {}
        # This node's identified connections by connection id (what the cap counts), with their session.
        self.attached: dict[str, tuple[GatewaySession, Connection]] = {}
        # Numbering and handing over frames happen under one lock, so sequence numbers follow bus order
        # even while a Redis round trip is in flight.
        self._lock = asyncio.Lock()
        self._handing_over: tuple[str, asyncio.Event] | None = None

    # ---- registry ------------------------------------------------------------------------------

    def register(self, gs: GatewaySession) -> None:
        self.sessions[gs.id] = gs
        self.by_user.setdefault(gs.user_id, []).append(gs)

    def forget(self, gs: GatewaySession) -> None:
        if self.sessions.get(gs.id) is gs:
            del self.sessions[gs.id]
        peers = self.by_user.get(gs.user_id)
        if peers is not None:
            if gs in peers:
                peers.remove(gs)
            if not peers:
                del self.by_user[gs.user_id]

    def connected(self, user_id: int) -> bool:
        """Whether the user has an open gateway connection on this node."""
        return any(gs.conn is not None for gs in self.by_user.get(user_id, ()))

    def connection_count(self) -> int:
        return sum(1 for gs in self.sessions.values() if gs.conn is not None)

    # ---- connection cap (docs/gateway.md) -----------------------------------------------------------

    async def attach(self, conn_id: str, gs: GatewaySession, conn: Connection, stale_before: float) -> list[str]:
        """Count an identified connection against its user's cap; returns the connection ids to close
        with 4013 (the caller asks every node through the bus: they may live anywhere)."""
        self.attached[conn_id] = (gs, conn)
        return await self.caps.attach(gs.user_id, conn_id, self.clock.timestamp(), stale_before)

    async def release(self, conn_id: str) -> None:
        entry = self.attached.pop(conn_id, None)
        if entry is not None:
            await self.caps.release(entry[0].user_id, conn_id)

    async def _evict(self, ev: Event) -> None:
        for conn_id in ev.data.get("connections", ()):
            entry = self.attached.pop(conn_id, None)
            if entry is None:
                continue
            gs, conn = entry
            log.info("gateway connection replaced (connection cap)", user_id=gs.user_id)
            if gs.conn is conn:
                # The client is told not to come back (4013), so its session is not kept for RESUME.
                await self._end([gs], protocol.CLOSE_REPLACED)
            else:
                conn.close(protocol.CLOSE_REPLACED)

    # ---- delivery ------------------------------------------------------------------------------

    def _targets(self, ev: Event) -> list[GatewaySession]:
        out: list[GatewaySession] = []
        by_user = self.by_user
        for uid in ev.users:
            peers = by_user.get(uid)
            if not peers:
                continue
            for gs in peers:
                if ev.sessions is not None and gs.auth_session_id not in ev.sessions:
                    continue
                if ev.exclude_sessions and gs.auth_session_id in ev.exclude_sessions:
                    continue
                out.append(gs)
        return out

    def wants(self, ev: Event) -> bool:
        """The bus's test before handing over an event: a node message, or a receiver with a session here. Most
        events on a node of several, and a profile change's MEMBER_UPDATE in each of 100 guilds, have none, and
        skip the handler and the lock. A session registered after this test needs nothing of the event: its
        READY is read after the commit that published it."""
        return ev.type in _NODE_MESSAGES or self._has_receiver_here(ev)

    def _has_receiver_here(self, ev: Event) -> bool:
        return any(map(self.by_user.__contains__, ev.users))

    async def on_event(self, ev: Event) -> None:
        """The bus handler: deliver one event to this node's gateway sessions."""
        if ev.type == NodeMessage.ADOPT:
            self._adopt(ev)
            return
        if ev.type == NodeMessage.EVICT:
            await self._evict(ev)
            return
        if not self._has_receiver_here(ev):  # when called without the bus's `wants`
            return
        async with self._lock:
            targets = self._targets(ev)
            if not targets:
                return
            await self._deliver(ev, targets)
        if ev.type == EventType.SESSION_INVALIDATED:
            await self._end(targets, protocol.CLOSE_INVALIDATED)

    async def _deliver(self, ev: Event, targets: list[GatewaySession]) -> None:
        payload = ev.payload_json()
        numbered: list[GatewaySession] = []
        for gs in targets:
            if gs.state is State.PENDING:
                gs.held_events.append(ev)
            else:
                numbered.append(gs)
        if not numbered:
            return
        event_id = ev.id or new_session_id()
        results = await self.store.append_event([gs.id for gs in numbered], event_id, ev.type, payload,
                                                self.clock.timestamp())
        if self.metrics is not None:
            self.metrics.events_delivered.inc(len(numbered))
        for gs, result in zip(numbered, results, strict=True):
            seq = appended_seq(result)
            if seq is None:
                await self._end([gs], protocol.CLOSE_TIMED_OUT, drop=False)
                continue
            if gs.state is State.LIVE and gs.conn is not None:
                if seq > gs.conn.last_seq + 1:
                    await self._fill(gs, seq - 1)
                if gs.conn is not None:
                    gs.conn.push(seq, protocol.dispatch(seq, ev.type, payload))
            elif gs.state is State.RESUMING:
                gs.held_frames.append((seq, protocol.dispatch(seq, ev.type, payload)))

    async def _end(self, targets: list[GatewaySession], close_code: int, *, drop: bool = True) -> None:
        """End gateway sessions: close their connections after what is queued, forget them here and
        (unless the store already lost them) delete their resume state."""
        for gs in targets:
            if gs.conn is not None:
                gs.conn.close(close_code)
            self.forget(gs)
        if drop:
            await self.store.drop([gs.id for gs in targets])

    # ---- session flow --------------------------------------------------------------------------

    async def go_live(self, gs: GatewaySession, ready: str) -> None:
        """READY as dispatch 1, then the events held while it was built."""
        assert gs.conn is not None
        async with self._lock:
            held, gs.held_events = gs.held_events, []
            items = [Append(gs.id, new_session_id(), EventType.READY, ready, replayable=False)]
            items += [Append(gs.id, ev.id or new_session_id(), ev.type, ev.payload_json()) for ev in held]
            results = await self.store.append(items, self.clock.timestamp())
            gs.state = State.LIVE
            for item, result in zip(items, results, strict=True):
                seq = appended_seq(result)
                if seq is not None:
                    gs.conn.push(seq, protocol.dispatch(seq, item.type, item.payload))

    async def finish_resume(self, gs: GatewaySession, after: int, frames: list[tuple[int, str, str]]) -> int:
        """Send the replayed dispatches and those numbered meanwhile, then RESUMED; returns the count."""
        conn = gs.conn
        assert conn is not None
        async with self._lock:
            pending = {seq: protocol.dispatch(seq, t, p) for seq, t, p in frames if seq > after}
            for seq, frame in gs.held_frames:
                if seq > after:
                    pending.setdefault(seq, frame)
            gs.held_frames = []
            conn.last_seq = after
            replayed = 0
            for seq in sorted(pending):
                if seq > conn.last_seq + 1:  # numbered by another node after the replay was read
                    replayed += await self._fill(gs, seq - 1)
                conn.push(seq, pending[seq])
                replayed += 1
            payload = f'{{"replayed":{replayed}}}'
            [result] = await self.store.append([Append(gs.id, new_session_id(), EventType.RESUMED, payload)],
                                               self.clock.timestamp())
            resumed_seq = appended_seq(result)
            gs.state = State.LIVE
            if resumed_seq is not None:
                if resumed_seq > conn.last_seq + 1:
                    await self._fill(gs, resumed_seq - 1)
                conn.push(resumed_seq, protocol.dispatch(resumed_seq, EventType.RESUMED, payload))
            return replayed

    async def _fill(self, gs: GatewaySession, upto: int) -> int:
        """Push the dispatches up to `upto` that another node numbered for this session and this node
        never handled: during a hand-over the previous node still holds the session detached and may
        number an event this node had handled before taking over (pub/sub readers run at their own
        pace). They are read back from the shared buffer. Called under the lock; returns the count."""
        conn = gs.conn
        if conn is None or upto <= conn.last_seq:
            return 0
        replay = await self.store.replay(gs.id, conn.last_seq, self.clock.timestamp())
        if replay is None or replay.frames is None:
            log.warning("gateway session lost dispatches; closing", session_id=gs.id)
            conn.close(protocol.CLOSE_UNKNOWN_ERROR)  # the client resumes, or identifies again
            return 0
        frames = [(seq, t, p) for seq, t, p in replay.frames if seq <= upto]
        for seq, type_, payload in frames:
            conn.push(seq, protocol.dispatch(seq, type_, payload))
        return len(frames)

    async def heartbeat(self, gs: GatewaySession) -> None:
        """A heartbeat: keep the session attached, and send what another node numbered for it since this
        node's last dispatch (the hand-over case of `_fill` when no later event comes along)."""
        last = await self.store.keep(gs.id, ATTACHED_TTL, self.clock.timestamp())
        conn = gs.conn
        if conn is not None and gs.state is State.LIVE and last > conn.last_seq:
            async with self._lock:  # a dispatch being numbered right now is pushed before this fills
                if gs.conn is conn and gs.state is State.LIVE:
                    await self._fill(gs, last)

    async def detach(self, gs: GatewaySession, conn: Connection) -> None:
        """The connection closed: keep the session for the resume window (unless it never got going)."""
        if gs.conn is not conn:
            return  # a RESUME on a new connection took it over
        gs.conn = None
        if gs.state in (State.PENDING, State.RESUMING) or self.sessions.get(gs.id) is not gs:
            self.forget(gs)
            return
        gs.state = State.DETACHED
        gs.detached_at = self.clock.timestamp()
        await self.store.keep(gs.id, RESUME_WINDOW, gs.detached_at)

    def sweep(self) -> int:
        """Forget detached sessions whose resume window has passed; returns how many."""
        now = self.clock.timestamp()
        stale = [gs for gs in self.sessions.values()
                 if gs.state is State.DETACHED and gs.detached_at + RESUME_WINDOW <= now]
        for gs in stale:
            self.forget(gs)
        sweep_store = getattr(self.store, "sweep", None)
        if sweep_store is not None:
            sweep_store(now)
        return len(stale)

    async def hand_over(self, bus: Any) -> None:
        """Before this node stops, when other nodes share the bus: they adopt its gateway sessions as
        detached, so the events produced until each client RESUMEs (on any node) are numbered and
        buffered; without this nobody would number them. Returns once the request has come back
        through the bus: events before it were numbered here, events after it are numbered by the
        other nodes (one channel, one order)."""
        sessions = [[gs.id, gs.user_id, gs.auth_session_id] for gs in self.sessions.values()
                    if gs.state is not State.PENDING]
        if not sessions:
            return
        marker = new_session_id()
        self._handing_over = (marker, asyncio.Event())
        await bus.publish([Event(NodeMessage.ADOPT, {"marker": marker, "sessions": sessions}, ())])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._handing_over[1].wait(), HAND_OVER_WAIT)

    def _adopt(self, ev: Event) -> None:
        """Another node stops: hold its sessions detached (numbering their events) until their clients
        resume, here or elsewhere, or the resume window passes (`sweep`)."""
        mine = self._handing_over
        if mine is not None and ev.data.get("marker") == mine[0]:
            mine[1].set()
            return
        now = self.clock.timestamp()
        for session_id, user_id, auth_session_id in ev.data.get("sessions", ()):
            if session_id not in self.sessions:
                self.register(GatewaySession(session_id, int(user_id), int(auth_session_id), State.DETACHED,
                                             detached_at=now))

    async def shutdown(self) -> None:
        """Service restart: ask every client to reconnect and resume (op 7, then close 1012)."""
        for gs in list(self.sessions.values()):
            if gs.conn is not None:
                gs.conn.send(protocol.RECONNECT)
                gs.conn.close(protocol.CLOSE_RESTART)
