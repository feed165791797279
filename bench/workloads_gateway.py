"""Gateway fan-out workloads (issue targets for the WebSocket gateway, docs/gateway.md).

- `gateway_fanout_1`, `_10`, `_50`: one sender POSTs messages into a room, one at a time; N users each
  hold one identified gateway connection. Latency = POST start -> the last receiver has read the
  MESSAGE_CREATE of that message (matched by nonce).
- `gateway_viewers_1000`: 1000 users joined to one guild, each with one identified connection; senders
  post at a steady rate (open loop, GATEWAY_RATE messages/s, default 25) so that deliveries/s = rate x 1000.
  Checks that every connection receives every message exactly once, in the same order everywhere, with
  contiguous `s`; reports deliveries/s, last-receiver latency, server CPU, and server RSS before and after
  the connections (KiB per connection).

The receivers are `LeanGateway` connections, not `websockets`: the HTTP upgrade written by hand, server
frames (unmasked) parsed from the byte stream, and dispatches read with byte searches (`s` and `t` at the
end of the frame, the nonce inside it); only HELLO, READY and the rare control frames are JSON-decoded.
One core has to read 20,000+ frames/s here, and the figure must measure the server, not the client.

Connections survive between runs as gateway sessions: a run closes its connections and the next one
RESUMEs them (as real clients do), so that detached sessions do not pile up in the hub and make later
runs deliver to more sessions than the first.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import resource
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.drivers import Context, OpError, Samples, Skip, expect
from bench.harness import CLOCK_TICKS, ServerProcess, mib, ms, percentile, snapshot
from bench.workloads import register

GATEWAY_PATH = "/gateway?v=1&encoding=json"
CONNECT_CONCURRENCY = 32  # handshakes + IDENTIFY/RESUME in flight while a fleet connects
JOIN_CONCURRENCY = 16
HEARTBEAT_EVERY = 20.0  # the server wants one every 30 s (4009 after 45 s without)
DELIVERY_WAIT = 10.0  # after the last send, how long missing deliveries are waited for
VIEWERS = 1000
VIEWER_SENDERS = 8
DEFAULT_RATE = 25.0  # messages/s into the viewers' room: 25,000 deliveries/s with 1000 viewers
CREATE_USERS_LIMIT = 1800.0  # seconds allowed to `meadhall create-user --count 1000`


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


def _server_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of the server process itself (the kernel's share is mostly the socket
    writes: one send per frame per connection)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return 0.0, 0.0
    fields = raw[raw.rfind(")") + 2:].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def _cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# ---- message tracking ----------------------------------------------------------------------------


class Sent:
    """One message: when its POST started, how many receivers have read it, first and last read."""

    __slots__ = ("index", "start", "count", "first", "last", "done")

    def __init__(self, index: int, start: float, done: asyncio.Future[None] | None) -> None:
        self.index = index
        self.start = start
        self.count = 0
        self.first = 0.0
        self.last = 0.0
        self.done = done


class Tracker:
    """Arrivals of the messages of one run, keyed by nonce (bytes, as read from the frame)."""

    def __init__(self, receivers: int) -> None:
        self.receivers = receivers
        self.messages: dict[bytes, Sent] = {}
        self.unknown = 0  # MESSAGE_CREATE with a nonce of no message of this run
        self.extra = 0  # arrivals beyond `receivers` (duplicates)

    def expect(self, nonce: str, index: int, start: float, *, future: bool) -> Sent:
        done = asyncio.get_running_loop().create_future() if future else None
        sent = Sent(index, start, done)
        self.messages[nonce.encode()] = sent
        return sent

    def arrive(self, nonce: bytes, now: float) -> Sent | None:
        sent = self.messages.get(nonce)
        if sent is None:
            self.unknown += 1
            return None
        sent.count += 1
        if sent.count == 1:
            sent.first = now
        sent.last = now
        if sent.count == self.receivers:
            if sent.done is not None and not sent.done.done():
                sent.done.set_result(None)
        elif sent.count > self.receivers:
            self.extra += 1
        return sent

    def complete(self) -> list[Sent]:
        return [s for s in self.messages.values() if s.count >= self.receivers]


# ---- the lean client -------------------------------------------------------------------------------

def _client_frame(opcode: int, data: bytes) -> bytes:
    """A masked client frame (RFC 6455 5.3); client frames here are small (IDENTIFY, HEARTBEAT, pong)."""
    n = len(data)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    if not n:
        return head + mask
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
    return head + mask + (int.from_bytes(data, "big") ^ key).to_bytes(n, "big")


class GatewayClosed(OpError):
    pass


class LeanGateway(asyncio.Protocol):
    """One gateway connection. Counts what a benchmark needs per frame and nothing else:

    - every dispatch must carry `s` = previous + 1 (`gaps` counts breaks, `last_s` is kept for RESUME);
    - a MESSAGE_CREATE goes to the run's Tracker by nonce; `got` counts them and `order` folds their
      message indices into a hash, equal on every connection iff all saw the same order."""

    def __init__(self, user: dict[str, Any], host: str, port: int) -> None:
        self.user = user
        self.host = host
        self.port = port
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.handshaken = False
        self.session_id: str | None = None
        self.last_s = 0
        self.gaps = 0
        self.got = 0
        self.order = 0
        self.tracker: Tracker | None = None
        self.closed: str | None = None  # why the connection ended (close code / connection lost)
        self.overflow_suspect = False
        self.acks = 0  # HEARTBEAT_ACKs read
        self._resume: tuple[str, int] | None = None
        self._hello_only = False
        self._started: asyncio.Future[str] | None = None  # READY / RESUMED / failure

    # -- connection
    async def open(self, resume: tuple[str, int] | None, wait: float = 30.0, *, hello_only: bool = False) -> str:
        """Connect, HELLO, IDENTIFY (or RESUME `(session_id, seq)`); returns "ready" or "resumed".
        A refused RESUME (session expired) falls back to IDENTIFY and returns "ready". With `hello_only`,
        returns "hello" once HELLO is read (no gateway session is made)."""
        loop = asyncio.get_running_loop()
        self._started = loop.create_future()
        self._resume = resume
        self._hello_only = hello_only
        if resume is not None:
            self.session_id, self.last_s = resume
        await loop.create_connection(lambda: self, self.host, self.port)
        return await asyncio.wait_for(asyncio.shield(self._started), wait)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write((f"GET {GATEWAY_PATH} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                         "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())

    def connection_lost(self, exc: Exception | None) -> None:
        if self.closed is None:
            self.closed = f"connection lost ({exc or 'EOF'})"
        self._fail(self.closed)

    def _fail(self, why: str) -> None:
        if self._started is not None and not self._started.done():
            self._started.set_exception(GatewayClosed(why))

    def send_json(self, payload: Any) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_client_frame(0x1, json.dumps(payload, separators=(",", ":")).encode()))

    def heartbeat(self) -> None:
        self.send_json({"op": 1, "d": self.last_s or None})

    def close(self) -> None:
        """Close frame 1000 then the socket (the server then detaches the gateway session)."""
        if self.transport is not None and not self.transport.is_closing():
            if self.closed is None:
                self.closed = "closed by the client"
            self.transport.write(_client_frame(0x8, (1000).to_bytes(2, "big")))
            self.transport.close()

    # -- reading
    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        buf = self.buf + data if self.buf else data
        if not self.handshaken:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buf = buf
                return
            status = buf[:buf.find(b"\r\n")]
            if b" 101 " not in status:
                self.closed = f"upgrade refused: {status.decode(errors='replace')}"
                self._fail(self.closed)
                assert self.transport is not None
                self.transport.close()
                return
            self.handshaken = True
            buf = buf[end + 4:]
        pos, n = 0, len(buf)
        while n - pos >= 2:
            b1 = buf[pos + 1]
            size = b1 & 0x7F
            head = 2
            if size == 126:
                if n - pos < 4:
                    break
                size = int.from_bytes(buf[pos + 2:pos + 4], "big")
                head = 4
            elif size == 127:
                if n - pos < 10:
                    break
                size = int.from_bytes(buf[pos + 2:pos + 10], "big")
                head = 10
            end = pos + head + size
            if end > n:
                break
            opcode = buf[pos] & 0x0F
            payload = buf[pos + head:end]
            pos = end
            if opcode == 0x1:
                self._text(payload, now)
            elif opcode == 0x9:  # ping: answer, or uvicorn closes the connection after its ping timeout
                assert self.transport is not None
                self.transport.write(_client_frame(0xA, payload))
            elif opcode == 0x8:
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                self.closed = f"closed by the server ({code})"
                self._fail(self.closed)
                assert self.transport is not None
                self.transport.close()
                return
        self.buf = buf[pos:] if pos < n else b""

    def _text(self, payload: bytes, now: float) -> None:
        if payload.startswith(b'{"op":0,'):
            # Dispatch: ...,"s":<n>,"t":"<type>"}  (protocol.dispatch puts s and t last)
            t_at = payload.rfind(b',"t":"')
            s = int(payload[payload.rfind(b'"s":', 0, t_at) + 4:t_at])
            if s != self.last_s + 1:
                self.gaps += 1
            self.last_s = s
            kind = payload[t_at + 6:-2]
            if kind == b"MESSAGE_CREATE":
                tracker = self.tracker
                if tracker is not None:
                    at = payload.find(b'"nonce":"') + 9
                    sent = tracker.arrive(payload[at:payload.find(b'"', at)], now)
                    if sent is not None:
                        self.got += 1
                        self.order = (self.order * 1_000_003 + sent.index + 1) % 2_305_843_009_213_693_951
            elif kind in (b"READY", b"RESUMED"):
                self._started_with(kind, payload)
            return
        frame = json.loads(payload)
        op = frame.get("op")
        if op == 10:  # HELLO
            if self._hello_only:
                if self._started is not None and not self._started.done():
                    self._started.set_result("hello")
            elif self._resume is not None:
                sid, seq = self._resume
                self.send_json({"op": 6, "d": {"token": self.user["token"], "session_id": sid, "seq": seq}})
            else:
                self._identify()
        elif op == 9:  # INVALID_SESSION
            d = frame.get("d") or {}
            if self._resume is not None and d.get("reason") == "session_expired":
                self._resume = None  # the connection stays open for a new IDENTIFY
                self.session_id, self.last_s = None, 0
                self._identify()
            elif self._started is not None and not self._started.done():
                self._started.set_exception(OpError(f"INVALID_SESSION {d}"))
        elif op == 11:  # HEARTBEAT_ACK: queued after every frame sent before it (Fleet.quiet)
            self.acks += 1
        # RECONNECT (7): nothing to do here

    def _identify(self) -> None:
        self.send_json({"op": 2, "d": {"token": self.user["token"], "properties": {
            "os": "linux", "browser": "meadhall-bench", "device": "lean"}}})

    def _started_with(self, kind: bytes, payload: bytes) -> None:
        if kind == b"READY":
            self.session_id = json.loads(payload)["d"]["session_id"]
        if self._started is not None and not self._started.done():
            self._started.set_result(kind.decode().lower())


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
        before = sum(_server_times(self.server.pid))
        while time.perf_counter() < deadline:
            await asyncio.sleep(settle)
            after = sum(_server_times(self.server.pid))
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


async def _guild_with_members(ctx: Context, key: str, owner: dict[str, Any], members: list[dict[str, Any]],
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


async def _probe_gateway(ctx: Context, user: dict[str, Any]) -> None:
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


# ---- fan-out latency: 1, 10, 50 receivers ------------------------------------------------------------
#
# Disjoint users per workload (sender + receivers), so that one workload's detached gateway sessions
# (kept 120 s by the server) are not in the next one's audience.

FANOUTS = {1: 0, 10: 2, 50: 13}  # receivers -> index of the sender among the prepared users


def _fanout_users(ctx: Context, receivers: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    users = ctx.users()
    first = FANOUTS[receivers]
    return users[first], users[first + 1:first + 1 + receivers]


def _fanout_setup(receivers: int) -> Callable[[Context], Any]:
    async def setup(ctx: Context) -> None:
        sender, receivers_ = _fanout_users(ctx, receivers)
        await _probe_gateway(ctx, sender)
        await _guild_with_members(ctx, f"gw_fanout_room:{receivers}", sender, receivers_, f"Fanout {receivers}")

    return setup


def _fanout(receivers: int) -> Callable[[Context], Any]:
    async def fn(ctx: Context) -> Samples:
        sender, receivers_ = _fanout_users(ctx, receivers)
        room = ctx.shared[f"gw_fanout_room:{receivers}"]
        run = ctx.shared[f"gw_fanout_run:{receivers}"] = ctx.shared.get(f"gw_fanout_run:{receivers}", 0) + 1
        fleet = Fleet(ctx.server, receivers_, f"fanout{receivers}", ctx.shared)
        await fleet.connect()
        tracker = Tracker(len(receivers_))
        fleet.track(tracker)
        samples = Samples()
        cpu0 = _cpu_self()
        try:
            async with ctx.http_pool(1) as http:
                phase = time.perf_counter()
                for i in range(ctx.requests):
                    nonce = f"f{receivers}r{run}m{i}"
                    start = time.perf_counter()
                    sent = tracker.expect(nonce, i, start, future=True)
                    try:
                        resp = await http.post(f"/api/v1/channels/{room}/messages",
                                               json={"content": f"fanout message {i}", "nonce": nonce},
                                               headers=_auth(sender))
                        if resp.status_code != 201:
                            raise OpError(f"send: HTTP {resp.status_code} {resp.text[:120]}")
                        assert sent.done is not None
                        await asyncio.wait_for(sent.done, 5.0)
                    except TimeoutError:
                        samples.error(f"message {i}: {sent.count}/{len(receivers_)} receivers within 5 s")
                        continue
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        continue
                    samples.latencies.append(sent.last - start)
                samples.wall_s = time.perf_counter() - phase
            check = fleet.check(tracker)
            client_cpu = _cpu_self() - cpu0
        finally:
            await fleet.close()
        if not check.ok:
            samples.error(f"deliveries: {check.describe()}")
        spread = sorted(s.last - s.first for s in tracker.complete())
        progress(f"gateway_fanout_{receivers}: {check.describe()}; first-to-last receiver p50 "
                 f"{ms(percentile(spread, 50))} ms; client cpu {client_cpu:.2f} s "
                 f"({client_cpu / (samples.wall_s or 1):.0%} of the send phase); sessions identified "
                 f"{fleet.identified}, resumed {fleet.resumed}")
        return samples

    return fn


for _n in FANOUTS:
    register(f"gateway_fanout_{_n}", setup=_fanout_setup(_n), needs_users=FANOUTS[_n] + 1 + _n,
             description=f"POST a message (one at a time) into a room with {_n} receiver(s) on the gateway; "
                         "latency = POST start -> MESSAGE_CREATE read by the last receiver")(_fanout(_n))


# ---- 1000 viewers of one room -----------------------------------------------------------------------


def _rate() -> float:
    return float(os.environ.get("GATEWAY_RATE", DEFAULT_RATE))


async def _viewer_users(ctx: Context) -> list[dict[str, Any]]:
    """The 1000 viewers: the users the harness prepared when there are enough, else made here with
    `meadhall create-user --count 1000 --sessions FILE` (about 0.2 s of argon2 per user, one at a time:
    3-6 minutes, more than the harness allows its own create-user, and a failure here skips only this
    workload)."""
    if "gw_viewer_users" in ctx.shared:
        return list(ctx.shared["gw_viewer_users"])
    users = list(ctx.shared.get("users") or [])
    if len(users) < VIEWERS:
        path = ctx.data_dir.parent / f"viewers-{secrets.token_hex(4)}.jsonl"
        started = time.perf_counter()
        progress(f"gateway_viewers_1000: meadhall create-user --count {VIEWERS} --sessions {path.name} ...")
        rc, out, err = await ctx.cli("create-user", "--count", str(VIEWERS), "--prefix",
                                     f"gwv{secrets.token_hex(3)}u", "--sessions", str(path),
                                     "--data-dir", str(ctx.data_dir), limit=CREATE_USERS_LIMIT)
        if rc != 0:
            tail = (err or out).strip().splitlines()[-1:] or ["no output"]
            raise Skip(f"skipped: meadhall create-user --count {VIEWERS} failed (exit {rc}): {tail[0][:200]}")
        users = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        progress(f"gateway_viewers_1000: {len(users)} users created in {time.perf_counter() - started:.0f} s")
    ctx.shared["gw_viewer_users"] = users[:VIEWERS]
    return users[:VIEWERS]


async def _viewers_setup(ctx: Context) -> None:
    users = await _viewer_users(ctx)
    await _probe_gateway(ctx, users[0])
    await _guild_with_members(ctx, "gw_viewers_room", users[0], users[1:], "Viewers")
    # Memory of the connections, measured once on first connection (IDENTIFY, READY built).
    await asyncio.sleep(0.5)
    before = snapshot(ctx.server.pid)
    fleet = Fleet(ctx.server, users, "viewers", ctx.shared)
    seconds = await fleet.connect(resume=False)
    await asyncio.sleep(1.0)
    after = snapshot(ctx.server.pid)
    await fleet.close()
    per_conn = (after.rss_kib - before.rss_kib) / VIEWERS
    ctx.shared["gw_viewers_memory"] = (before.rss_kib, after.rss_kib)
    progress(f"gateway_viewers_1000: {VIEWERS} connections identified in {seconds:.1f} s; server RSS "
             f"{mib(before.rss_kib)} MiB before, {mib(after.rss_kib)} MiB after: {per_conn:.1f} KiB per "
             f"connection (target <= 40)")


@register("gateway_viewers_1000", setup=_viewers_setup,
          description=f"{VIEWERS} identified gateway connections viewing one room (users made in setup with "
                      f"`meadhall create-user --count {VIEWERS}`); {VIEWER_SENDERS} senders post "
                      "at GATEWAY_RATE msg/s (default 25, open loop); latency = POST start -> read by the last "
                      "viewer; every viewer must read every message once, in order")
async def gateway_viewers_1000(ctx: Context) -> Samples:
    users = await _viewer_users(ctx)
    room = ctx.shared["gw_viewers_room"]
    run = ctx.shared["gw_viewers_run"] = ctx.shared.get("gw_viewers_run", 0) + 1
    senders = users[:VIEWER_SENDERS]
    rate = _rate()
    fleet = Fleet(ctx.server, users, "viewers", ctx.shared)
    rss0 = snapshot(ctx.server.pid).rss_kib
    connect_s = await fleet.connect()
    tracker = Tracker(len(users))
    fleet.track(tracker)
    samples = Samples()
    late: list[float] = []
    await asyncio.sleep(0.5)
    rss1 = snapshot(ctx.server.pid).rss_kib
    try:
        async with ctx.http_pool(VIEWER_SENDERS * 2) as http:

            async def send(i: int) -> None:
                nonce = f"v{run}m{i}"
                sender = senders[i % len(senders)]
                async with http.client() as client:
                    start = time.perf_counter()
                    late.append(start - scheduled[i])
                    tracker.expect(nonce, i, start, future=False)
                    try:
                        resp = await client.post(f"/api/v1/channels/{room}/messages",
                                                 json={"content": f"viewers message {i}", "nonce": nonce},
                                                 headers=_auth(sender))
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        return
                if resp.status_code != 201:
                    samples.error(f"send: HTTP {resp.status_code} {resp.text[:120]}")

            server0 = snapshot(ctx.server.pid)
            times0 = _server_times(ctx.server.pid)
            cpu0 = _cpu_self()
            phase = time.perf_counter()
            scheduled = [phase + i / rate for i in range(ctx.requests)]
            tasks: list[asyncio.Task[None]] = []
            for i, at in enumerate(scheduled):
                delay = at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(i)))
            await asyncio.gather(*tasks)
            sent_all = time.perf_counter()
            deadline = sent_all + DELIVERY_WAIT
            while len(tracker.complete()) < len(tracker.messages) and time.perf_counter() < deadline:
                if all(c.closed is not None for c in fleet.conns):
                    break
                await asyncio.sleep(0.05)
            last_read = max((s.last for s in tracker.messages.values() if s.count), default=sent_all)
            wall = max(last_read, sent_all) - phase
            client_cpu = _cpu_self() - cpu0
            server1 = snapshot(ctx.server.pid)
            times1 = _server_times(ctx.server.pid)
        await asyncio.sleep(0.5)
        rss2 = snapshot(ctx.server.pid).rss_kib
        check = fleet.check(tracker)
    finally:
        await fleet.close()
    complete = tracker.complete()
    samples.latencies = [s.last - s.start for s in complete]
    samples.wall_s = wall
    if not check.ok:
        samples.error(f"deliveries: {check.describe()}")
    server_cpu = server1.cpu_s - server0.cpu_s
    server_sys = times1[1] - times0[1]
    late.sort()
    spread = sorted(s.last - s.first for s in complete)
    progress(f"gateway_viewers_1000 pass {run}: rate {rate:g} msg/s -> {check.deliveries / wall:.0f} deliveries/s "
             f"over {wall:.2f} s; {check.describe()}")
    progress(f"gateway_viewers_1000 pass {run}: server cpu {server_cpu:.2f} s = {server_cpu / wall:.0%} of a core, "
             f"{server_cpu * 1e6 / max(1, check.deliveries):.1f} us per delivery ({server_sys / (server_cpu or 1):.0%} "
             f"in the kernel); client cpu {client_cpu:.2f} s "
             f"= {client_cpu / wall:.0%}; first-to-last viewer p50 {ms(percentile(spread, 50))} ms, p99 "
             f"{ms(percentile(spread, 99))} ms; send start late p99 {ms(percentile(late, 99))} ms")
    progress(f"gateway_viewers_1000 pass {run}: connect {connect_s:.1f} s (identified {fleet.identified}, resumed "
             f"{fleet.resumed}); server RSS {mib(rss0)} MiB before connecting, {mib(rss1)} MiB connected "
             f"({(rss1 - rss0) / VIEWERS:.1f} KiB/connection), {mib(rss2)} MiB after the messages "
             f"({(rss2 - rss0) / VIEWERS:.1f} KiB/connection with resume buffers)")
    return samples


# ---- RESUME storm: many connections resume at once while live fan-out goes on --------------------------
#
# STORM_RESUMERS users' connections close, the room keeps getting messages (numbered for their detached
# sessions), then all of them RESUME at the same moment while STORM_WATCHERS other members watch the room
# live. What the storm costs the others: the watchers' delivery rate and latency before and during it, and
# the node's bus lag (its /metrics) in each window. Users after the fan-out workloads' (disjoint audiences).

STORM_FIRST = 64
STORM_WATCHERS = 20
STORM_RATE = 25.0  # messages/s into the room (open loop, GATEWAY_STORM_RATE): 500 live deliveries/s to the
# watchers, and as many appends per second for each detached session


_LAG_BUCKET = re.compile(r'^meadhall_bus_lag_seconds_bucket\{le="([^"]+)"\} ([0-9.e+]+)$', re.MULTILINE)


async def bus_lag_buckets(server: ServerProcess) -> dict[float, float]:
    """Cumulative counts of the node's `meadhall_bus_lag_seconds` by upper bound (the workload asks for
    METRICS_ENABLED)."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10.0, trust_env=False) as client:
        resp = await client.get("/metrics")
    if resp.status_code != 200:
        return {}
    return {float(le): float(n) for le, n in _LAG_BUCKET.findall(resp.text)}


def lag_p99(before: dict[float, float], after: dict[float, float]) -> str:
    """The p99 of what the histogram observed between two scrapes: the upper bound of its bucket."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if not total:
        return "none observed"
    bound = next(b for b, n in zip(bounds, counts, strict=True) if n >= total * 0.99)
    return f"<= {ms(bound)} ms ({int(total)} events)" if bound != float("inf") else f"> {ms(bounds[-2])} ms"


def _storm_rate() -> float:
    return float(os.environ.get("GATEWAY_STORM_RATE", STORM_RATE))


def _storm_resumers() -> int:
    return int(os.environ.get("GATEWAY_STORM", 96))


def _storm_concurrency() -> int:
    """RESUMEs in flight at once (GATEWAY_STORM_CONCURRENCY, default all of them)."""
    return int(os.environ.get("GATEWAY_STORM_CONCURRENCY", _storm_resumers()))


def _storm_users(ctx: Context) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    users = ctx.users()
    sender = users[STORM_FIRST]
    watchers = users[STORM_FIRST + 1:STORM_FIRST + 1 + STORM_WATCHERS]
    resumers = users[STORM_FIRST + 1 + STORM_WATCHERS:STORM_FIRST + 1 + STORM_WATCHERS + _storm_resumers()]
    return sender, watchers, resumers


async def _storm_setup(ctx: Context) -> None:
    sender, watchers, resumers = _storm_users(ctx)
    await _probe_gateway(ctx, sender)
    await _guild_with_members(ctx, "gw_storm_room", sender, watchers + resumers, "Storm")


@register("gateway_resume_storm", setup=_storm_setup, needs_users=STORM_FIRST + 1 + STORM_WATCHERS + 96,
          metrics=True,
          description=f"GATEWAY_STORM (default 96) connections RESUME at once, a third into a phase of "
                      f"--requests messages sent at GATEWAY_STORM_RATE/s (default {STORM_RATE:g}) into a room that {STORM_WATCHERS} other "
                      "connections watch live; latency = POST start -> read by the last watcher; reports the "
                      "watchers' delivery rate, latency and the node's bus lag before and during the storm")
async def gateway_resume_storm(ctx: Context) -> Samples:
    sender, watchers, resumers = _storm_users(ctx)
    room = ctx.shared["gw_storm_room"]
    run = ctx.shared["gw_storm_run"] = ctx.shared.get("gw_storm_run", 0) + 1
    away = Fleet(ctx.server, resumers, "storm_resumers", ctx.shared)
    await away.connect()
    await away.close()  # detached: the messages below are numbered for them, and replayed at their RESUME
    live = Fleet(ctx.server, watchers, "storm_watchers", ctx.shared)
    await live.connect()
    tracker = Tracker(len(watchers))
    live.track(tracker)
    samples = Samples()
    timeline: list[tuple[float, int]] = []  # (time, deliveries to the watchers so far)
    storm: dict[str, Any] = {}
    resumed: list[LeanGateway] = []

    async def watch() -> None:
        while True:
            timeline.append((time.perf_counter(), sum(c.got for c in live.conns)))
            await asyncio.sleep(0.1)

    async def resume_all() -> None:
        storm["lag0"] = await bus_lag_buckets(ctx.server)
        storm["start"] = time.perf_counter()
        gate = asyncio.Semaphore(_storm_concurrency())

        async def one(user: dict[str, Any]) -> float:
            conn = LeanGateway(user, ctx.server.host, ctx.server.port)
            resumed.append(conn)
            async with gate:
                started = time.perf_counter()
                await conn.open(away.sessions.get(user["id"]), wait=60.0)
                return time.perf_counter() - started

        storm["resume_s"] = sorted(await asyncio.gather(*(one(u) for u in resumers)))
        storm["end"] = time.perf_counter()
        await asyncio.sleep(1.0)
        storm["lag1"] = await bus_lag_buckets(ctx.server)

    watcher = asyncio.create_task(watch())
    lag_start = await bus_lag_buckets(ctx.server)
    try:
        async with ctx.http_pool(16) as http:

            async def send(i: int) -> None:
                nonce = f"storm{run}m{i}"
                async with http.client() as client:
                    start = time.perf_counter()
                    tracker.expect(nonce, i, start, future=False)
                    try:
                        resp = await client.post(f"/api/v1/channels/{room}/messages",
                                                 json={"content": f"storm message {i}", "nonce": nonce},
                                                 headers=_auth(sender))
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        return
                if resp.status_code != 201:
                    samples.error(f"send: HTTP {resp.status_code} {resp.text[:120]}")

            phase = time.perf_counter()
            rate = _storm_rate()
            scheduled = [phase + i / rate for i in range(ctx.requests)]
            tasks: list[asyncio.Task[None]] = []
            storm_task: asyncio.Task[None] | None = None
            for i, at in enumerate(scheduled):
                delay = at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(i)))
                if i == len(scheduled) // 3:
                    storm_task = asyncio.create_task(resume_all())
            await asyncio.gather(*tasks)
            if storm_task is not None:
                await storm_task
            deadline = time.perf_counter() + DELIVERY_WAIT
            while len(tracker.complete()) < len(tracker.messages) and time.perf_counter() < deadline:
                if all(c.closed is not None for c in live.conns):
                    break
                await asyncio.sleep(0.05)
            lag_end = await bus_lag_buckets(ctx.server)
        check = live.check(tracker)
        storm_gaps = sum(c.gaps for c in resumed)
        storm_closed = [c.closed for c in resumed if c.closed is not None]
    finally:
        watcher.cancel()
        for conn in resumed:
            if conn.session_id is not None and conn.closed is None:
                away.sessions[conn.user["id"]] = (conn.session_id, conn.last_s)
            conn.close()
        await live.close()
    samples.latencies = [s.last - s.start for s in tracker.complete()]
    samples.wall_s = max(s.last for s in tracker.complete()) - phase if tracker.complete() else 0.0
    if not check.ok:
        samples.error(f"deliveries: {check.describe()}")
    if storm_gaps or storm_closed:
        samples.error(f"resumed connections: {storm_gaps} gaps in s, closed {storm_closed[:3]}")

    def rate(t0: float, t1: float) -> tuple[float, float]:
        """The watchers' deliveries/s over [t0, t1], and the lowest over any 0.5 s within it."""
        points = [(t, n) for t, n in timeline if t0 <= t <= t1]
        if len(points) < 2:
            return 0.0, 0.0
        mean = (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])
        lows = [(n2 - n1) / (t2 - t1_) for (t1_, n1), (t2, n2) in zip(points, points[5:], strict=False)]
        return mean, min(lows, default=mean)

    def latency(t0: float, t1: float) -> str:
        lat = sorted(s.last - s.start for s in tracker.complete() if t0 <= s.start < t1)
        return f"p50 {ms(percentile(lat, 50))} ms, p99 {ms(percentile(lat, 99))} ms, max {ms(lat[-1] if lat else 0)} ms"

    def lag(a: dict[float, float], b: dict[float, float]) -> str:
        return f"bus lag p99 {lag_p99(a, b)}"

    s0, s1 = storm["start"], storm["end"] + 1.0
    before, before_low = rate(phase, s0)
    during, during_low = rate(s0, s1)
    resume_s = storm["resume_s"]
    progress(f"gateway_resume_storm pass {run}: {len(resumers)} RESUMEs at once in {s1 - 1.0 - s0:.2f} s "
             f"(each: p50 {ms(percentile(resume_s, 50))} ms, p99 {ms(percentile(resume_s, 99))} ms); "
             f"{check.describe()}")
    progress(f"gateway_resume_storm pass {run}: watchers' deliveries/s before {before:.0f} (lowest 0.5 s "
             f"{before_low:.0f}), during the storm {during:.0f} (lowest 0.5 s {during_low:.0f}); latency before "
             f"{latency(phase, s0)}; during {latency(s0, s1)}")
    progress(f"gateway_resume_storm pass {run}: before the storm {lag(lag_start, storm['lag0'])}; during "
             f"{lag(storm['lag0'], storm['lag1'])}; after {lag(storm['lag1'], lag_end)}")
    return samples
