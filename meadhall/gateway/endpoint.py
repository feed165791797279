"""`/gateway`: the handshake checks, then one reader loop per connection (docs/gateway.md).

The reader handles the client's frames (IDENTIFY, RESUME, HEARTBEAT) and the time limits; everything
sent goes through the connection's queue (connection.py), in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any

import orjson
import structlog
from fastapi import APIRouter, WebSocket
from fastapi.responses import JSONResponse

from meadhall.accounts.presence import client_closed, client_opened, client_refreshed, touch
from meadhall.api.client import client_key
from meadhall.api.errors import outage
from meadhall.auth.cookies import COOKIE_NAME
from meadhall.core.errors import AppError, rate_limited
from meadhall.gateway import protocol as p
from meadhall.gateway.auth import GatewayIdentity, Refused, identify
from meadhall.gateway.connection import Connection
from meadhall.gateway.hub import GatewaySession, Hub, NodeMessage, State, new_session_id
from meadhall.gateway.ready import ready_payload
from meadhall.gateway.resume import ATTACHED_TTL, GONE, Owner
from meadhall.gateway.wire import EXTENSION
from meadhall.realtime.events import Event
from meadhall.runtime import Runtime

router = APIRouter()
log = structlog.get_logger("meadhall.gateway")


@router.websocket("/gateway")
async def gateway(websocket: WebSocket) -> None:
    """The realtime gateway: a WebSocket carrying JSON frames (HELLO, IDENTIFY or RESUME, heartbeats,
    dispatches). Authenticated by the token in IDENTIFY, or by the session cookie read at the handshake."""
    rt: Runtime = websocket.app.state.runtime
    refused = await _handshake_limit(rt, websocket)
    if refused is not None:
        await _refuse(websocket, refused)  # docs/gateway.md: HTTP 429 at the handshake
        return
    cookie = websocket.cookies.get(COOKIE_NAME)
    origin = websocket.headers.get("origin")
    if cookie and origin and origin.rstrip("/") != rt.settings.public_origin:
        await _refuse(websocket, AppError("auth.origin_mismatch"))  # docs/gateway.md: HTTP 403 at the handshake
        return
    await websocket.accept()
    params = websocket.query_params
    if params.get("v", "1") != "1" or params.get("encoding", "json") != "json":
        await websocket.close(p.CLOSE_BAD_VERSION)
        return
    await GatewayReader(rt, websocket.app.state.hub, websocket, cookie).run()


async def _handshake_limit(rt: Runtime, websocket: WebSocket) -> AppError | None:
    """Every handshake takes a token of `gateway.connect` for its client address (docs/reference/limits.md); the
    refusal to answer, if any (429, or 503 when the shared store is down)."""
    try:
        decision = await rt.limiter.hit("gateway.connect", client_key(websocket), rt.now_ts())
    except Exception as exc:
        unavailable = outage(exc)
        if unavailable is None:
            raise
        log.warning("gateway handshake refused: dependency unavailable", error=repr(exc))
        return unavailable
    if decision.allowed:
        return None
    return rate_limited(decision.bucket, decision.retry_after, decision.headers())


async def _refuse(websocket: WebSocket, err: AppError) -> None:
    """Answer the upgrade with an HTTP error in the usual envelope (plain 403 where the server cannot)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        response = JSONResponse(err.body(), status_code=err.status, headers=err.headers)
        await websocket.send_denial_response(response)
    else:
        await websocket.close()


def _log_failed_step(what: str, exc: Exception) -> None:
    """An outage is logged in one line: rendering its trace took over a second of the event loop, which every
    connection of the node waited out (a close during an outage is when every connection fails this way)."""
    if outage(exc) is not None:
        log.warning(what, error=repr(exc))
    else:
        log.warning(what, exc_info=exc)


class FrameRate:
    """At most FRAMES_PER_WINDOW client frames in any FRAME_WINDOW_S (a sliding window)."""

    def __init__(self) -> None:
        # A plain list: most connections send only heartbeats, so it holds a few entries (a deque
        # allocates a 64-slot block per connection).
        self._times: list[float] = []

    def allow(self, now: float) -> bool:
        times = self._times
        if len(times) >= p.FRAMES_PER_WINDOW:
            if now - times[0] < p.FRAME_WINDOW_S:
                return False
            del times[0]
        times.append(now)
        return True


class GatewayReader:
    def __init__(self, rt: Runtime, hub: Hub, websocket: WebSocket, cookie: str | None) -> None:
        self.rt = rt
        self.hub = hub
        self.ws = websocket
        self.cookie = cookie
        self.timing: p.Timing = websocket.app.state.gateway_timing
        self.gs: GatewaySession | None = None
        self.who: GatewayIdentity | None = None
        self.last_heartbeat = 0.0
        self.rate = FrameRate()
        self.task = asyncio.current_task()
        # The server's direct write path for text frames, when it offers one (gateway/wire.py).
        sink = websocket.scope.get("extensions", {}).get(EXTENSION)
        self.conn = Connection(self._send, self._close, self.timing.max_queued_frames, self._overflow, sink)
        self.conn_id = new_session_id()  # what the per-user connection cap counts (gateway/caps.py)
        self.retrying = False

    async def _send(self, frame: str) -> None:
        await self.ws.send_text(frame)

    async def _close(self, code: int) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close(code)

    def _overflow(self) -> None:
        log.info("gateway client too slow; dropped", user_id=self.who.user_id if self.who else None)
        if self.task is not None:
            self.task.cancel()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self.conn.send(p.hello(self.timing))
        deadline = loop.time() + self.timing.identify_deadline
        try:
            while not self.conn.closing:
                wait = deadline - loop.time()
                try:
                    # Not `wait_for`: on Python 3.11 it wraps each receive in a task, which every idle connection
                    # then holds (memory per connection).
                    async with asyncio.timeout(max(wait, 0.0)):
                        message = await self.ws.receive()
                except TimeoutError:
                    identified = self.gs is not None
                    self.conn.close(p.CLOSE_TIMED_OUT if identified else p.CLOSE_NOT_AUTHENTICATED)
                    break
                if message["type"] == "websocket.disconnect":
                    break
                close = await self._handle(message, loop.time())
                if close is not None:
                    self.conn.close(close)
                    break
                if self.gs is not None and self.gs.state is not State.PENDING:
                    deadline = self.last_heartbeat + self.timing.heartbeat_timeout
                elif self.retrying:  # told to RESUME again: a long outage must not end in 4003 (a fresh IDENTIFY)
                    deadline = loop.time() + self.timing.identify_deadline
                    self.retrying = False
        except asyncio.CancelledError:
            if not self.conn.overflowed:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except Exception:
            log.exception("gateway connection failed")
            self.conn.close(p.CLOSE_UNKNOWN_ERROR)
        finally:
            await self._teardown()

    async def _teardown(self) -> None:
        """Release what the connection holds. Each step runs whatever the ones before it raised (a Redis
        error in the session's last keep once left cap entries behind for good)."""
        await self._closed_for_presence()
        gs = self.gs
        if gs is not None:
            try:
                await self.hub.detach(gs, self.conn)
            except Exception as exc:  # the session then expires with its last refresh instead
                _log_failed_step("gateway session not kept for resume", exc)
        try:
            await self.hub.release(self.conn_id)
        except Exception as exc:  # a shared store outage: the entry goes stale without heartbeats instead
            _log_failed_step("gateway connection cap entry not released", exc)
        await self.conn.finish()

    async def _handle(self, message: Mapping[str, Any], now: float) -> int | None:
        """Handle one client frame; returns a close code to end the connection."""
        text = message.get("text")
        if text is None:
            return p.CLOSE_DECODE_ERROR  # binary frame
        if len(text) > p.MAX_FRAME_BYTES or len(text.encode()) > p.MAX_FRAME_BYTES:
            return p.CLOSE_TOO_BIG
        if not self.rate.allow(now):
            return p.CLOSE_RATE_LIMITED
        try:
            frame = json.loads(text)
        except ValueError:
            return p.CLOSE_DECODE_ERROR
        if not isinstance(frame, dict) or type(frame.get("op")) is not int:
            return p.CLOSE_DECODE_ERROR
        op, d = frame["op"], frame.get("d")
        if op == p.OP_HEARTBEAT:
            return await self._heartbeat(now)
        if op == p.OP_IDENTIFY or op == p.OP_RESUME:
            if self.gs is not None:
                return p.CLOSE_ALREADY_AUTHENTICATED
            try:
                return await (self._identify(d, now) if op == p.OP_IDENTIFY else self._resume(d, now))
            except Exception as exc:
                if outage(exc) is None:
                    raise
                return self._unavailable(op, exc)
        return p.CLOSE_UNKNOWN_OPCODE

    def _unavailable(self, op: int, exc: Exception) -> int | None:
        """Redis or the database did not answer during IDENTIFY or RESUME (docs/gateway.md, "Outages"). A session
        that went live before the failure (a later step such as presence failed) goes on. Otherwise a RESUME is
        told to try again (INVALID_SESSION `retry`, resumable: the client waits 1-5 s and resumes on this
        connection; its session is untouched), and an IDENTIFY's connection closes as a passing error, after
        which the client connects again. Logged without a trace: an outage is not a fault of the code."""
        log.warning("gateway session start: shared store unavailable", op=op, error=repr(exc))
        gs = self.gs
        if gs is not None and gs.state is State.LIVE:
            return None
        if gs is not None:
            self.hub.forget(gs)
            self.gs = None  # `who` stays: the connection's presence entry, if made, is removed at its close
        if op == p.OP_RESUME:
            self.conn.send(p.invalid_session("retry", True))
            self.retrying = True  # the identify deadline counts again from here
            return None
        return p.CLOSE_UNKNOWN_ERROR

    # ---- opcodes -------------------------------------------------------------------------------

    async def _heartbeat(self, now: float) -> int | None:
        self.conn.send(p.HEARTBEAT_ACK)
        self.last_heartbeat = now
        if self.gs is not None and self.who is not None:
            try:
                await self.hub.heartbeat(self.gs)
                await self.hub.caps.refresh(self.who.user_id, self.conn_id, self.rt.clock.timestamp())
                await client_refreshed(self.rt, self.who.user_id, self.conn_id, p.stale_after(self.timing))
                await touch(self.rt, self.who.user_id, in_client=True)
            except Exception as exc:
                if outage(exc) is None:
                    raise
                # Redis is unreachable: the connection stays open (nothing could be delivered or resumed
                # meanwhile), and the steps after the first failure are skipped, since each would wait out its
                # own timeout while this reader stops reading (frames pile up, and the heartbeat deadline ends a
                # beating client with 4009). Once Redis answers, a session it lost is ended (hub.lost_state).
                log.debug("gateway heartbeat: shared store unavailable", error=repr(exc))
        return None

    async def _closed_for_presence(self) -> None:
        """The user stops being online in a client through this connection at once (docs/push.md)."""
        if self.who is None:
            return
        try:
            await client_closed(self.rt, self.who.user_id, self.conn_id)
        except Exception as exc:  # a shared store outage: the entry lapses at its safety expiry instead
            _log_failed_step("gateway connection not removed from presence", exc)

    async def _count(self, gs: GatewaySession) -> None:
        """Count this identified connection against its user's cap; over it, the user's oldest
        connections are closed with 4013 by the nodes holding them (docs/gateway.md)."""
        stale_before = self.rt.clock.timestamp() - p.stale_after(self.timing)
        evicted = await self.hub.attach(self.conn_id, gs, self.conn, stale_before)
        # Online in a client from here until the close (docs/push.md; accounts/presence.py).
        await client_opened(self.rt, gs.user_id, self.conn_id, p.stale_after(self.timing))
        if evicted:
            await self.rt.bus.publish([Event(NodeMessage.EVICT, {"connections": evicted}, ())])

    async def _who(self, d: Any) -> GatewayIdentity | int:
        """The identity of IDENTIFY/RESUME's token (or the handshake cookie), or the close code after
        INVALID_SESSION."""
        token = d.get("token") if isinstance(d, dict) else None
        if token is not None and not isinstance(token, str):
            return p.CLOSE_DECODE_ERROR
        try:
            return await identify(self.rt, token or self.cookie)
        except Refused as refused:
            self.conn.send(p.invalid_session(refused.reason, False))
            return p.CLOSE_AUTH_FAILED

    async def _identify(self, d: Any, now: float) -> int | None:
        if d is not None and not isinstance(d, dict):
            return p.CLOSE_DECODE_ERROR
        who = await self._who(d)
        if isinstance(who, int):
            return who
        gs = GatewaySession(new_session_id(), who.user_id, who.session_id, State.PENDING, conn=self.conn)
        self.hub.register(gs)  # from here on its events are held until READY has gone out
        self.gs, self.who, self.last_heartbeat = gs, who, now
        # Its position in the event log: what came before is in READY, read after this.
        await self.hub.store.open(gs.id, Owner(who.user_id, who.session_id), self.rt.clock.timestamp(),
                                  self.hub.reading())
        await self._count(gs)
        ready = await ready_payload(self.rt, who, gs.id)
        if ready is None:
            self.conn.send(p.invalid_session("unauthorized", False))
            return p.CLOSE_AUTH_FAILED
        # orjson: a READY of 100 guilds, 300 conversations and 1,000 friends is over a megabyte, which
        # json.dumps took about 15 ms to encode (docs/benchmarks.md).
        await self.hub.go_live(gs, orjson.dumps(ready).decode())
        self.last_heartbeat = asyncio.get_running_loop().time()  # the timeout counts from READY
        if self.rt.metrics is not None:  # `now` is when the IDENTIFY frame was received
            self.rt.metrics.ready.observe(self.last_heartbeat - now)
        await touch(self.rt, who.user_id, in_client=True)
        return None

    async def _resume(self, d: Any, now: float) -> int | None:
        if not isinstance(d, dict) or not isinstance(d.get("session_id"), str) or type(d.get("seq")) is not int:
            return p.CLOSE_DECODE_ERROR
        sid, seq = d["session_id"], d["seq"]
        who = await self._who(d)
        if isinstance(who, int):
            return who
        # Metadata only: the owner, the last number and the log position; the buffer is read once, later.
        found = await self.hub.store.peek(sid, self.rt.clock.timestamp())
        if found is None:
            self.conn.send(p.invalid_session("session_expired", False))
            return None  # the connection stays open for a new IDENTIFY
        if found.owner.user_id != who.user_id:
            self.conn.send(p.invalid_session("unauthorized", False))
            return p.CLOSE_AUTH_FAILED
        if found.owner.auth_session_id != who.session_id:
            # The gateway session belongs to another sign-in of this user: start a new one.
            self.conn.send(p.invalid_session("session_expired", False))
            return None
        if seq > found.last_seq:
            return p.CLOSE_INVALID_SEQ
        if await self.hub.store.keep(sid, ATTACHED_TTL, self.rt.clock.timestamp()) == GONE:
            self.conn.send(p.invalid_session("session_expired", False))
            return None
        replayed = await self.hub.resume(sid, who.user_id, who.session_id, self.conn, seq, found.pos)
        if replayed is None:
            self.conn.send(p.invalid_session("session_expired", False))
            return None
        gs = self.hub.sessions.get(sid)
        if gs is None or gs.conn is not self.conn:  # ended meanwhile (revoked, or taken over)
            return p.CLOSE_UNKNOWN_ERROR
        self.gs, self.who, self.last_heartbeat = gs, who, now
        await self._count(gs)
        self.last_heartbeat = asyncio.get_running_loop().time()
        await touch(self.rt, who.user_id, in_client=True)
        return None
