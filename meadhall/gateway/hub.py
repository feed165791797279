"""The node's hub: which gateway sessions of which users live here, and delivery of every bus event to
them (docs/reference/events.md). Each event's payload is encoded once; each receiving gateway session gets the next
sequence number from the resume store (one batched call per event) and its connection gets the frame
through its own queue.

A gateway session is PENDING while its READY is being built (events are held, unnumbered, and follow
READY), RESUMING while what it missed is numbered and its buffer replayed (events are held, unnumbered, and
follow the replay), LIVE with a connection, and DETACHED for the resume window after its connection closed
(its events are still numbered and buffered, so a RESUME here or on another node replays them).

With several nodes the bus is an ordered log (realtime/bus.py) and each session records its position in it
(`pos`): a RESUME on any node first numbers, from the log, the events after that position that nobody
numbered (its node died), then replays (docs/gateway.md). Redis round trips happen outside the hub's lock
wherever the session's state holds its events meanwhile, so that a RESUME storm does not stall delivery.
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
from meadhall.gateway.resume import (
    ATTACHED_TTL,
    BUFFER_SIZE,
    GONE,
    RESUME_WINDOW,
    Append,
    ResumeStore,
    appended_seq,
)
from meadhall.metrics import Metrics
from meadhall.realtime.bus import LocalBus, RedisBus
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


@dataclass(eq=False, slots=True)
class GatewaySession:
    id: str
    user_id: int
    auth_session_id: int
    state: State
    conn: Connection | None = None
    # Events held unnumbered (PENDING, RESUMING), with their position in the event log ("" without one).
    held_events: list[tuple[Event, str]] = field(default_factory=list)
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
        # The shared event log, with several nodes (`follow`); None on a single node.
        self.log: RedisBus | None = None
        # False once the hub stops taking events (`unfollow`): the log reads on, but what it reads from then is
        # not numbered here, so no session's position may be raised past it.
        self.following = False

    def follow(self, bus: LocalBus) -> None:
        """Take this node's events from the bus; with a shared log, RESUME catches up from it, and a Redis
        that lost its data ends this node's sessions (their state in Redis is gone)."""
        bus.subscribe(self.on_event, self.wants, batch=self.on_events)
        self.following = True
        if isinstance(bus, RedisBus):
            self.log = bus
            bus.on_reset.append(self.lost_state)

    def unfollow(self, bus: LocalBus) -> None:
        """Stop taking events (a stopping node, after its hand-over): the sessions it still holds keep the
        positions they have, so a RESUME elsewhere numbers from there whatever this hub did not."""
        bus.unsubscribe(self.on_event)
        self.following = False

    def reading(self) -> str:
        """The log position of the event being delivered now (or last): every later event is handed to this
        hub after this moment, so it sees the sessions registered now."""
        return self.log.reading if self.log is not None else ""

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
        pos = self.reading()  # the bus hands over one entry at a time: this one's
        async with self._lock:
            targets = self._targets(ev)
            if not targets:
                return
            await self._deliver(ev, targets, pos)
        if ev.type == EventType.SESSION_INVALIDATED:
            await self._end(targets, protocol.CLOSE_INVALIDATED)

    async def on_events(self, batch: list[tuple[str, Event]]) -> None:
        """The log's handler: the entries (position, event) of one read, numbered in one store call. Under
        load most of the bus's work here was one Redis round trip per event, behind which everything waited.

        Whatever fails part-way, the read is over for this hub (the bus moves on): the sessions the entries not yet
        handled target are let go as in `_append_or_let_go`, so no later event raises their position past them."""
        run: list[tuple[str, Event]] = []
        handled = 0  # the entries before this index are handled
        try:
            for i, (pos, ev) in enumerate(batch):
                if ev.type in _NODE_MESSAGES:
                    await self._deliver_run(run)
                    run, handled = [], i
                    await self.on_event(ev)
                    handled = i + 1
                elif self._has_receiver_here(ev):
                    run.append((pos, ev))
                    if ev.type == EventType.SESSION_INVALIDATED:  # its sessions end before anything later
                        await self._deliver_run(run)
                        run, handled = [], i + 1
                elif not run:
                    handled = i + 1
            await self._deliver_run(run)
        except Exception as exc:
            await self._let_go([ev for _, ev in batch[handled:]], exc)

    async def _let_go(self, events: list[Event], exc: Exception) -> None:
        lost = [gs for ev in events if ev.type not in _NODE_MESSAGES for gs in self._targets(ev)]
        lost = [gs for gs in dict.fromkeys(lost) if self.sessions.get(gs.id) is gs]
        log.warning("gateway delivery failed part-way; closing the sessions concerned to resume", count=len(lost),
                    error=repr(exc))
        await self._end(lost, protocol.CLOSE_UNKNOWN_ERROR, drop=False)

    async def _deliver_run(self, run: list[tuple[str, Event]]) -> None:
        if not run:
            return
        revoked: list[GatewaySession] = []
        async with self._lock:
            items: list[Append] = []
            receivers: list[GatewaySession] = []
            for pos, ev in run:
                targets = self._targets(ev)
                if not targets:
                    continue
                if ev.type == EventType.SESSION_INVALIDATED:
                    revoked += targets
                payload = ev.payload_json()
                event_id = ev.id or new_session_id()
                for gs in targets:
                    if gs.state is State.PENDING or gs.state is State.RESUMING:
                        gs.held_events.append((ev, pos))
                    else:
                        items.append(Append(gs.id, event_id, ev.type, payload, True, pos))  # positional: cheaper
                        receivers.append(gs)
            if items:
                results = await self._append_or_let_go(items, receivers)
                await self._push_numbered(receivers, items, results)
        if revoked:
            await self._end(revoked, protocol.CLOSE_INVALIDATED)

    async def _append_or_let_go(self, items: list[Append], receivers: list[GatewaySession]) -> list[int]:
        """Number `items` for their sessions. When the store fails (Redis away), the read has moved on and
        nothing will number these events here again: the sessions are let go, their connections closed as a
        passing error and their state in the store left as it was, so their clients RESUME (here or on another
        node, once Redis answers) and are caught up from the log from the position they had before these
        events. Kept here, a later event would raise that position past what they missed."""
        try:
            results = await self.store.append(items, self.clock.timestamp())
        except Exception as exc:
            lost = [gs for gs in dict.fromkeys(receivers) if self.sessions.get(gs.id) is gs]
            log.warning("gateway sessions could not be numbered for; closing them to resume", count=len(lost),
                        error=repr(exc))
            await self._end(lost, protocol.CLOSE_UNKNOWN_ERROR, drop=False)
            return [GONE] * len(items)
        if self.metrics is not None:
            self.metrics.events_delivered.inc(len(items))
        return results

    async def _push_numbered(self, receivers: list[GatewaySession], items: list[Append], results: list[int]) -> None:
        """Hand each receiver its numbered dispatch. The common case (a live connection whose last dispatch is the
        one before) is a plain push, with no coroutine per receiver; the others go through `_numbered`."""
        live = State.LIVE
        dispatch = protocol.dispatch
        for gs, item, result in zip(receivers, items, results, strict=True):
            conn = gs.conn
            if conn is not None and gs.state is live and result > 0 and result == conn.last_seq + 1:
                conn.push(result, dispatch(result, item.type, item.payload))
            else:
                await self._numbered(gs, appended_seq(result), item.type, item.payload)

    async def _numbered(self, gs: GatewaySession, seq: int | None, type_: str, payload: str) -> None:
        if seq is None:
            if self.sessions.get(gs.id) is gs:
                await self._end([gs], protocol.CLOSE_TIMED_OUT, drop=False)
            return
        if gs.state is State.LIVE and gs.conn is not None:
            if seq > gs.conn.last_seq + 1:
                await self._fill(gs, seq - 1)
            if gs.conn is not None:
                gs.conn.push(seq, protocol.dispatch(seq, type_, payload))
        elif gs.state is State.RESUMING:
            gs.held_frames.append((seq, protocol.dispatch(seq, type_, payload)))

    async def _deliver(self, ev: Event, targets: list[GatewaySession], pos: str = "") -> None:
        payload = ev.payload_json()
        numbered: list[GatewaySession] = []
        for gs in targets:
            if gs.state is State.PENDING or gs.state is State.RESUMING:
                gs.held_events.append((ev, pos))
            else:
                numbered.append(gs)
        if not numbered:
            return
        event_id = ev.id or new_session_id()
        items = [Append(gs.id, event_id, ev.type, payload, True, pos) for gs in numbered]
        results = await self._append_or_let_go(items, numbered)
        await self._push_numbered(numbered, items, results)

    async def _end(self, targets: list[GatewaySession], close_code: int, *, drop: bool = True) -> None:
        """End gateway sessions: close their connections after what is queued, forget them here and
        (unless the store already lost them) delete their resume state."""
        for gs in targets:
            if gs.conn is not None:
                gs.conn.close(close_code)
            self.forget(gs)
        if drop and targets:
            try:
                await self.store.drop([gs.id for gs in targets])
            except Exception as exc:  # their state expires by itself; this must not stop the read it is part of
                log.warning("gateway sessions not dropped from the store", count=len(targets), error=repr(exc))

    # ---- session flow --------------------------------------------------------------------------

    async def _number_held(self, gs: GatewaySession, first: list[Append]) -> list[tuple[int, str]] | None:
        """Number `first`, then the events held for the session (PENDING or RESUMING), outside the lock: the
        state holds the session's new events meanwhile, so their order stays the log's. Returns the frames,
        or None when the store lost the session. Loops until nothing more was held during a round trip."""
        frames: list[tuple[int, str]] = []
        items = first
        while True:
            held, gs.held_events = gs.held_events, []
            items += [self._held_item(gs, ev, pos) for ev, pos in held]
            if not items:
                return frames
            results = await self.store.append(items, self.clock.timestamp())
            for item, result in zip(items, results, strict=True):
                seq = appended_seq(result)
                if seq is None:
                    return None
                frames.append((seq, protocol.dispatch(seq, item.type, item.payload)))
            items = []

    @staticmethod
    def _held_item(gs: GatewaySession, ev: Event, pos: str) -> Append:
        return Append(gs.id, ev.id or new_session_id(), ev.type, ev.payload_json(), pos=pos)

    async def _go_on(self, gs: GatewaySession, frames: list[tuple[int, str]]) -> bool:
        """Under the lock: number what was held since the last round trip (rarely anything), push every
        frame in order, filling gaps another node numbered, and go LIVE. False when the store lost it."""
        held, gs.held_events = gs.held_events, []
        if held:
            more = await self._number_held(gs, [self._held_item(gs, ev, pos) for ev, pos in held])
            if more is None:
                return False
            frames += more
        frames += gs.held_frames
        gs.held_frames = []
        gs.state = State.LIVE
        conn = gs.conn
        pending = dict(frames)
        for seq in sorted(pending):
            if conn is None:
                break
            if seq > conn.last_seq + 1:  # numbered by another node meanwhile
                await self._fill(gs, seq - 1)
            conn.push(seq, pending[seq])
        return True

    async def go_live(self, gs: GatewaySession, ready: str) -> None:
        """READY as dispatch 1, then the events held while it was built."""
        assert gs.conn is not None
        first = [Append(gs.id, new_session_id(), EventType.READY, ready, replayable=False)]
        frames = await self._number_held(gs, first)
        async with self._lock:
            if frames is None or not await self._go_on(gs, frames):
                await self._end([gs], protocol.CLOSE_TIMED_OUT, drop=False)

    async def resume(self, session_id: str, user_id: int, auth_session_id: int, conn: Connection, after: int,
                     pos: str) -> int | None:
        """RESUME here (any node): hold the session's new events, number from the log what it missed since
        `pos` (nobody numbered it if its node died; numbering is idempotent per event id, so a node still
        holding it is harmless), replay what follows `after`, then RESUMED and the held events. Returns how
        many dispatches were replayed, or None when the session cannot be resumed (the log or the buffer no
        longer covers what it missed, or the store lost it): the client identifies again."""
        gs = self.sessions.get(session_id)
        if gs is None:
            gs = GatewaySession(session_id, user_id, auth_session_id, State.RESUMING, conn=conn)
            self.register(gs)
        else:
            previous = gs.conn
            gs.conn, gs.state, gs.held_frames = conn, State.RESUMING, []
            if previous is not None and previous is not conn:
                previous.close(protocol.CLOSE_UNKNOWN_ERROR)  # a stale connection of the same session
        upto = self.reading()  # synchronous with the registration: later events are held for it
        try:
            replayed = await self._catch_up_and_replay(gs, after, pos, upto)
        except BaseException:
            self._abandon(gs, conn)
            raise
        if replayed is None:
            self._abandon(gs, conn)
        return replayed

    def _abandon(self, gs: GatewaySession, conn: Connection) -> None:
        if gs.conn is conn:
            gs.conn, gs.held_events, gs.held_frames = None, [], []
            self.forget(gs)

    async def _catch_up_and_replay(self, gs: GatewaySession, after: int, pos: str, upto: str) -> int | None:
        conn = gs.conn
        assert conn is not None
        catch_up: list[Append] = []
        if self.log is not None and pos:
            missed = await self.log.since(pos, upto)
            if missed is None:
                log.info("gateway session older than the event log; not resumable", session_id=gs.id)
                return None
            catch_up = [self._held_item(gs, ev, eid) for eid, ev in missed
                        if ev.type not in _NODE_MESSAGES and self._concerns(gs, ev)]
            if len(catch_up) > BUFFER_SIZE:  # more than the buffer holds: the replay could not cover it
                log.info("gateway session missed more than its buffer holds; not resumable", session_id=gs.id)
                return None
        numbered = await self._number_held(gs, catch_up)
        if numbered is None:
            return None
        replay = await self.store.replay(gs.id, after, self.clock.timestamp())
        if replay is None or replay.frames is None:
            return None
        frames = [(seq, protocol.dispatch(seq, t, p)) for seq, t, p in replay.frames]
        revoked = next((i for i, (_, t, _) in enumerate(replay.frames) if t == EventType.SESSION_INVALIDATED), None)
        if revoked is not None:
            return await self._replay_and_end(gs, conn, after, frames[:revoked + 1])
        replayed = len(frames)
        payload = f'{{"replayed":{replayed}}}'
        resumed = await self._number_held(gs, [Append(gs.id, new_session_id(), EventType.RESUMED, payload)])
        if resumed is None:
            return None
        async with self._lock:
            if gs.conn is not conn:  # another RESUME of the same session took it over meanwhile
                return replayed
            conn.last_seq = after
            if not await self._go_on(gs, frames + resumed):
                return None
        return replayed

    async def _replay_and_end(self, gs: GatewaySession, conn: Connection, after: int,
                              frames: list[tuple[int, str]]) -> int:
        """What the session missed ends with SESSION_INVALIDATED (its sign-in was revoked while nobody held
        it): the client gets what came before and the invalidation, then close 4010, never RESUMED and live."""
        async with self._lock:
            if gs.conn is conn:
                conn.last_seq = after
                for seq, frame in frames:
                    conn.push(seq, frame)
                gs.held_events, gs.held_frames = [], []
                await self._end([gs], protocol.CLOSE_INVALIDATED)
        return len(frames)

    @staticmethod
    def _concerns(gs: GatewaySession, ev: Event) -> bool:
        """`_targets` for one session."""
        if gs.user_id not in ev.users:
            return False
        if ev.sessions is not None and gs.auth_session_id not in ev.sessions:
            return False
        return not (ev.exclude_sessions and gs.auth_session_id in ev.exclude_sessions)

    async def _fill(self, gs: GatewaySession, upto: int) -> int:
        """Push the dispatches up to `upto` that another node numbered for this session and this node
        never handled: during a hand-over the previous node still holds the session detached and may
        number an event this node had handled before taking over (pub/sub readers run at their own
        pace). They are read back from the shared buffer. Called under the lock; returns the count."""
        conn = gs.conn
        if conn is None or upto <= conn.last_seq:
            return 0
        try:
            replay = await self.store.replay(gs.id, conn.last_seq, self.clock.timestamp())
        except Exception as exc:  # the client resumes, and the replay is read then
            log.warning("gateway gap not filled; closing to resume", session_id=gs.id, error=repr(exc))
            conn.close(protocol.CLOSE_UNKNOWN_ERROR)
            return 0
        if replay is None or replay.frames is None:
            log.warning("gateway session lost dispatches; closing", session_id=gs.id)
            conn.close(protocol.CLOSE_UNKNOWN_ERROR)  # the client resumes, or identifies again
            return 0
        frames = [(seq, t, p) for seq, t, p in replay.frames if seq <= upto]
        for seq, type_, payload in frames:
            conn.push(seq, protocol.dispatch(seq, type_, payload))
        return len(frames)

    def _processed(self, gs: GatewaySession) -> str:
        """The position the session's `pos` may be raised to: every event up to it was handed to this hub
        while the session was registered and numbered here (not while its RESUME is catching up, not once the
        hub stopped taking events, not for a session it let go)."""
        if (self.log is None or not self.following or gs.state is State.PENDING or gs.state is State.RESUMING
                or self.sessions.get(gs.id) is not gs):
            return ""
        return self.log.position

    async def heartbeat(self, gs: GatewaySession) -> None:
        """A heartbeat: keep the session attached (and its log position recent), and send what another node
        numbered for it since this node's last dispatch (the hand-over case of `_fill` when no later event
        comes along). A session the store lost (Redis restarted empty) is ended: its client resumes, is
        told the session expired, and identifies again (never silently deaf)."""
        last = await self.store.keep(gs.id, ATTACHED_TTL, self.clock.timestamp(), self._processed(gs))
        if last == GONE:
            if self.sessions.get(gs.id) is gs:
                log.info("gateway session lost by the store; closing", session_id=gs.id)
                await self._end([gs], protocol.CLOSE_TIMED_OUT, drop=False)
            return
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
        await self.store.keep(gs.id, RESUME_WINDOW, gs.detached_at, self._processed(gs))

    async def lost_state(self) -> None:
        """Redis lost its data (it restarted empty): the sessions here that it no longer holds lost their
        numbers and buffer. Close their connections as timed out: their clients RESUME, are told the session
        expired, and identify. Sessions opened since Redis came back (before this was noticed) stay; so do
        those being set up, whose next store call finds out by itself."""
        settled = [gs for gs in self.sessions.values()
                   if gs.state is not State.PENDING and gs.state is not State.RESUMING]
        alive = await self.store.existing([gs.id for gs in settled], self.clock.timestamp())
        doomed = [gs for gs in settled if gs.id not in alive and self.sessions.get(gs.id) is gs]
        if doomed:
            log.warning("gateway sessions lost with Redis's data; closing them", count=len(doomed))
            await self._end(doomed, protocol.CLOSE_TIMED_OUT, drop=False)

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
