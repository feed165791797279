"""The gateway connections of a workload (`Fleet`: one LeanGateway per user, their sessions kept between
runs), what a run's deliveries looked like (`FleetCheck`), and the setup the fan-out workloads share: a
guild joined through one invitation, a probe of /gateway.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bench.drivers import Context, OpError, Skip, expect
from bench.gateway_client import GatewayClosed, LeanGateway, Tracker
from bench.harness import CLOCK_TICKS, ServerProcess

CONNECT_CONCURRENCY = 32  # handshakes + IDENTIFY/RESUME in flight while a fleet connects
JOIN_CONCURRENCY = 16
HEARTBEAT_EVERY = 20.0  # the server wants one every 30 s (4009 after 45 s without)


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


def server_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of the server process itself (the kernel's share is mostly the socket
    writes: one send per frame per connection)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return 0.0, 0.0
    fields = raw[raw.rfind(")") + 2:].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


@dataclass
class FleetCheck:
    """What a run's deliveries looked like, over all connections."""

    messages: int = 0
    complete: int = 0  # messages every connection read
    deliveries: int = 0
    gaps: int = 0  # breaks in `s` over all connections
    missing: int = 0  # expected deliveries not read
    duplicates: int = 0
    unknown: int = 0
    orders: int = 0  # distinct message orders seen (1 = the same order everywhere)
    closed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.complete == self.messages and not self.gaps and not self.missing and not self.duplicates
                and self.orders <= 1 and not self.closed)

    def describe(self) -> str:
        text = (f"{self.complete}/{self.messages} messages read by every connection, {self.deliveries} "
                f"deliveries, missing {self.missing}, duplicates {self.duplicates}, s gaps {self.gaps}, "
                f"orders {self.orders}")
        if self.closed:
            text += f", {len(self.closed)} connections closed (e.g. {self.closed[0]})"
        return text


class Fleet:
    """The gateway connections of one workload, one per user; their gateway sessions outlive a run."""

    def __init__(self, server: ServerProcess, users: list[dict[str, Any]], name: str, shared: dict[str, Any],
                 conn_class: type[LeanGateway] = LeanGateway) -> None:
        self.conn_class = conn_class  # a subclass reads other dispatches (bench/workloads_social.py)
        self.server = server
        self.users = users
        # Gateway session (id, last s) per user, kept in the bench's shared dict between runs.
        self.sessions: dict[str, tuple[str, int]] = shared.setdefault(f"gw_sessions:{name}", {})
        self.conns: list[LeanGateway] = []
        self.identified = 0
        self.resumed = 0
        self._heartbeats: asyncio.Task[None] | None = None

    async def connect(self, *, resume: bool = True) -> float:
        """Open every connection (RESUME where a session is known); returns the seconds it took."""
        started = time.perf_counter()
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def one(user: dict[str, Any]) -> LeanGateway:
            conn = self.conn_class(user, self.server.host, self.server.port)
            async with gate:
                how = await conn.open(self.sessions.get(user["id"]) if resume else None)
            if how == "ready":
                self.identified += 1
            else:
                self.resumed += 1
            return conn

        results = await asyncio.gather(*(one(u) for u in self.users), return_exceptions=True)
        self.conns = [c for c in results if isinstance(c, LeanGateway)]
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            await self.close()
            raise OpError(f"{len(failed)} of {len(self.users)} gateway connections failed: {failed[0]}")
        self._heartbeats = asyncio.create_task(self._beat(), name="lean-gateway-heartbeats")
        return time.perf_counter() - started

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY)
            for conn in self.conns:
                conn.heartbeat()

    async def quiet(self, *, settle: float = 0.25, limit: float = 20.0) -> None:
        """Before a measured phase: heartbeat every connection now (the next beats are HEARTBEAT_EVERY away),
        wait for every HEARTBEAT_ACK (the server queues it after all it was still writing to that
        connection: the frames a RESUME replayed, say), then until the server has been idle for `settle`
        seconds. The phase then holds neither the tail of the connects nor a burst of a thousand heartbeats
        (each an activity write, not a delivery), which landed in one phase or the other by chance and moved
        its CPU per delivery by several percent."""
        if self._heartbeats is not None:
            self._heartbeats.cancel()
        acked = [conn.acks for conn in self.conns]
        for conn in self.conns:
            conn.heartbeat()
        self._heartbeats = asyncio.create_task(self._beat(), name="lean-gateway-heartbeats")
        deadline = time.perf_counter() + limit
        for _ in range(int(limit / 0.05)):
            if not any(conn.acks <= before and conn.closed is None
                       for conn, before in zip(self.conns, acked, strict=True)):
                break
            await asyncio.sleep(0.05)
        before = sum(server_times(self.server.pid))
        while time.perf_counter() < deadline:
            await asyncio.sleep(settle)
            after = sum(server_times(self.server.pid))
            if after - before <= 2 / CLOCK_TICKS:  # at most two ticks of CPU: idle
                return
            before = after

    def track(self, tracker: Tracker) -> None:
        for conn in self.conns:
            conn.tracker = tracker
            conn.got = 0
            conn.order = 0
            conn.gaps = 0

    def check(self, tracker: Tracker) -> FleetCheck:
        sent = tracker.messages.values()
        return FleetCheck(
            messages=len(tracker.messages),
            complete=len(tracker.complete()),
            deliveries=sum(c.got for c in self.conns),
            gaps=sum(c.gaps for c in self.conns),
            missing=sum(max(0, tracker.receivers - s.count) for s in sent),
            duplicates=tracker.extra,
            unknown=tracker.unknown,
            orders=len({c.order for c in self.conns}),
            closed=[f"{c.user['username']}: {c.closed}" for c in self.conns if c.closed is not None],
        )

    async def close(self) -> None:
        if self._heartbeats is not None:
            self._heartbeats.cancel()
            self._heartbeats = None
        for conn in self.conns:
            if conn.session_id is not None and conn.closed is None:
                self.sessions[conn.user["id"]] = (conn.session_id, conn.last_s)
            conn.tracker = None
            conn.close()
        self.conns = []
        await asyncio.sleep(0.2)  # let the server see the closes before the next step measures anything


# ---- setup: a guild per workload, joined through one invitation -------------------------------------


async def guild_with_members(ctx: Context, key: str, owner: dict[str, Any], members: list[dict[str, Any]],
                              name: str) -> str:
    """Create a guild owned by `owner`, join `members` through one invitation (concurrently); returns the
    id of its system room (viewable by every member). Once per bench run per `key`."""
    if key in ctx.shared:
        return str(ctx.shared[key])
    async with ctx.http() as http:
        resp = await http.post("/api/v1/guilds", json={"name": name}, headers=_auth(owner))
        if resp.status_code in (404, 405):
            raise Skip(f"skipped: POST /api/v1/guilds not available (HTTP {resp.status_code})")
        room = expect(resp, 201).json()["guild"]["system_channel_id"]
        invite = expect(await http.post(f"/api/v1/channels/{room}/invites", json={"max_uses": 0},
                                        headers=_auth(owner)), 201).json()["invite"]["code"]
    started = time.perf_counter()
    async with ctx.http_pool(JOIN_CONCURRENCY) as pool:

        async def join(i: int) -> None:
            expect(await pool.post(f"/api/v1/invites/{invite}", headers=_auth(members[i])), 200)

        joined = await ctx.drive(join, n=len(members), concurrency=JOIN_CONCURRENCY)
    if joined.errors:
        raise OpError(f"{joined.errors} of {len(members)} joins failed: {joined.error_examples[:1]}")
    if len(members) > 50:
        progress(f"{name}: {len(members)} members joined in {time.perf_counter() - started:.1f} s")
    ctx.shared[key] = room
    return str(room)


async def probe_gateway(ctx: Context, user: dict[str, Any]) -> None:
    """Skip when /gateway is missing; else one lean connection up to HELLO (no gateway session is made, so
    no detached session of a member stays in later runs' audiences)."""
    probe = LeanGateway(user, ctx.server.host, ctx.server.port)
    try:
        await probe.open(None, wait=10.0, hello_only=True)
    except GatewayClosed as exc:
        if "upgrade refused" in str(exc) and (" 403 " in str(exc) or " 404 " in str(exc)):
            raise Skip("skipped: /gateway not available (HTTP 403/404 at the WebSocket upgrade)") from None
        raise
    finally:
        probe.close()
