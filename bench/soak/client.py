"""Clients that behave as the web client does (web/src/lib/gateway.ts, web/src/lib/store.svelte.ts):

- a lost connection RESUMEs on the next node, after the web client's back-off (doubling from 1 s up to
  30 s, with jitter; the first attempt waits 0.5-1 s); RECONNECT or a close 1001 / 1012 (a node going away
  on purpose) reconnects at once, spread over 250 ms;
- INVALID_SESSION `resumable: true` waits 1-5 s and RESUMEs again; `session_expired` (or a close after which
  a session cannot resume, 4003 / 4007) IDENTIFYs again and fills the gap from history: each watched room's
  messages after the newest id held when its session was lost (less a few seconds: ids are taken before commit
  and two nodes commit out of id order; the overlap is deduplicated by id);
- heartbeats as HELLO tells, the first after interval x random; a heartbeat not acknowledged by the next one
  means a dead connection: close and RESUME;
- 4004, 4010 and 4013 end the client (the web client signs out): a failure of the run.

Senders retry an unanswered send (network error, 5xx, timeout) on the next node with the same nonce, and
wait out a 429 / 503 for its Retry-After.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.soak.verdict import ClientRecord, HttpTally, Send

GATEWAY_PATH = "/gateway?v=1&encoding=json"
FINAL_CLOSES = {4004: "authentication failed", 4010: "session invalidated", 4013: "replaced"}
FRESH_CLOSES = {4003, 4007}
# A MESSAGE_CREATE as meadhall/gateway/protocol.py writes it: {"op":0,"d":{"id":"...",...},"s":N,"t":"..."}.
# Read with string searches, not json.loads: a thousand clients read thousands of these a second.
MESSAGE_HEAD = '{"op":0,"d":{"id":"'
MESSAGE_TAIL = ',"t":"MESSAGE_CREATE"}'
RESTART_CLOSES = {"close 1001", "close 1012", "RECONNECT"}
RESTART_SPREAD = 0.25
FILL_MARGIN_MS = 5000  # gap fill starts this long before the newest id held (commits land out of id order)
SEND_TIMEOUT = 5.0
SEND_GIVE_UP = 90.0  # a send unanswered this long is given up (and the run fails)
MAX_WAIT = 10.0  # longest Retry-After honoured at once


def backoff(attempt: int) -> float:
    base = min(30.0, 1.0 * 2**attempt)
    return base / 2 + base / 2 * random.random()


@dataclass
class Nodes:
    """Where clients connect and what the run knows about its fault windows."""

    urls: list[str]
    in_window: Callable[[float], bool]  # is monotonic time t inside a fault window (or its grace)?
    fault_at: Callable[[float], str | None]  # the kind of the fault whose window holds t
    tally: HttpTally = field(default_factory=HttpTally)
    # One HTTP client per node, its requests in flight bounded by its pool: httpcore's pool looks at every
    # queued request for each connection event, and a queue of thousands (a dead node's retries) stalled
    # the whole harness at 100 % CPU.
    clients: list[httpx.AsyncClient] = field(default_factory=list)
    gates: list[asyncio.Semaphore] = field(default_factory=list)
    POOL = 64

    def open(self) -> None:
        limits = httpx.Limits(max_connections=self.POOL, max_keepalive_connections=self.POOL)
        timeout = httpx.Timeout(SEND_TIMEOUT, connect=2.0)
        self.clients = [httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False) for _ in self.urls]
        self.gates = [asyncio.Semaphore(self.POOL) for _ in self.urls]

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()

    def ws(self, i: int) -> str:
        return self.urls[i % len(self.urls)].replace("http://", "ws://") + GATEWAY_PATH

    def answer(self, resp: httpx.Response, started: float, what: str) -> None:
        """Count one answer against the promises: a 500 is always an error; another 5xx only inside a
        fault window, and a 503 must say Retry-After."""
        code = resp.status_code
        if code < 500:
            if code == 429:
                self.tally.rate_limited += 1
            else:
                self.tally.ok += 1
            return
        if code == 500:
            self.tally.error(f"{what}: HTTP 500 {resp.text[:120]}")
        elif not (self.in_window(started) or self.in_window(time.monotonic())):
            self.tally.error(f"{what}: HTTP {code} outside a fault window {resp.text[:120]}")
        elif code == 503 and "retry-after" not in resp.headers:
            self.tally.error(f"{what}: HTTP 503 without Retry-After")
        elif code == 503:
            self.tally.in_window_503 += 1
        else:
            self.tally.in_window_5xx += 1


def retry_after(resp: httpx.Response) -> float:
    try:
        return min(MAX_WAIT, max(0.1, float(resp.headers.get("retry-after", "1"))))
    except ValueError:
        return 1.0


async def request(nodes: Nodes, method: str, path: str, *, token: str, start: int,
                  what: str, json_body: Any = None, give_up: float = SEND_GIVE_UP) -> tuple[httpx.Response | str, int]:
    """One request with the client's retry rules: the next node after a network error, a timeout or a 5xx,
    the Retry-After of a 429 / 503. Returns the answer (2xx or a 4xx that retrying cannot change) or why it
    gave up, and the number of attempts."""
    deadline = time.monotonic() + give_up
    attempt = 0
    last = "no attempt"
    while time.monotonic() < deadline:
        node = (start + attempt) % len(nodes.urls)
        attempt += 1
        began = time.monotonic()
        try:
            async with nodes.gates[node]:
                resp = await nodes.clients[node].request(method, nodes.urls[node] + path, json=json_body,
                                                         headers={"Authorization": f"Bearer {token}"})
        except (httpx.TransportError, httpx.TimeoutException) as exc:
            nodes.tally.network_errors += 1
            last = f"node {node}: {type(exc).__name__}"
            await asyncio.sleep(min(2.0, 0.1 * 2 ** min(attempt, 5)))
            continue
        nodes.answer(resp, began, what)
        if resp.status_code in (429, 503):
            last = f"node {node}: HTTP {resp.status_code}"
            await asyncio.sleep(retry_after(resp))
            continue
        if resp.status_code >= 500:
            last = f"node {node}: HTTP {resp.status_code}"
            await asyncio.sleep(min(2.0, 0.1 * 2 ** min(attempt, 5)))
            continue
        return resp, attempt
    return f"gave up after {attempt} attempts (last: {last})", attempt


class Latencies:
    """Send -> delivery at each client, in seconds, split by whether the send began inside a fault window."""

    def __init__(self, total: int) -> None:
        self.sent_at = array("d", bytes(8 * total))  # monotonic start of each message's first attempt
        self.windowed = bytearray(total)
        self.first_at = array("d", bytes(8 * total))  # monotonic first delivery of each message, any client
        self.quiet: array[float] = array("d")
        self.faulty: array[float] = array("d")

    def delivered(self, index: int, now: float) -> None:
        start = self.sent_at[index]
        if not self.first_at[index]:
            self.first_at[index] = now
        if start:
            (self.faulty if self.windowed[index] else self.quiet).append(now - start)


@dataclass
class Reconnect:
    """One loss of a connection and how the client came back."""

    lost_at: float
    fault: str | None  # the kind of the fault whose window the loss fell in
    how: str = ""  # "resumed" / "identified"
    back_s: float | None = None  # loss -> RESUMED / READY
    resume_s: float | None = None  # RESUME sent -> RESUMED


class GatewayClient:
    def __init__(self, name: str, user: dict[str, Any], rooms: dict[str, int], node: int, nodes: Nodes,
                 run_tag: str, total: int, latencies: Latencies) -> None:
        self.name = name
        self.user = user
        self.nodes = nodes
        self.node = node
        self.prefix = f"soak {run_tag}."
        self.latencies = latencies
        self.newest: dict[str, int] = dict(rooms)  # room -> newest id held (start: the room's newest)
        self.record = ClientRecord(name, frozenset(rooms), bytearray(total), bytearray(total))
        self.session_id: str | None = None
        self.seq = 0
        self.gaps = 0  # dispatches whose s was not the previous + 1
        self.ready = asyncio.Event()  # set while a session is live (READY / RESUMED seen on this connection)
        self.stopping = False
        self.need_fill = False
        self.fills: set[asyncio.Task[None]] = set()
        self.reconnects: list[Reconnect] = []
        self.invalid_sessions: dict[str, int] = {}
        self.closes: dict[str, int] = {}
        self.reconnect_frames = 0
        self.trace: list[tuple[float, str]] = []  # (monotonic, what): connection events, for a failed run's report
        self._task: asyncio.Task[None] | None = None
        self._attempt = 0
        self._prompt_pending = False
        self._resume_sent = 0.0
        self.acked = True

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"soak-client-{self.name}")

    async def stop(self) -> None:
        self.stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self.fills):
            task.cancel()

    # -- the connection loop
    async def _run(self) -> None:
        while not self.stopping:
            reason = await self._connection()
            self.ready.clear()
            if self.stopping:
                return
            self.closes[reason] = self.closes.get(reason, 0) + 1
            self.trace.append((time.monotonic(), f"node {self.node % len(self.nodes.urls)}: {reason}"))
            if self.record.ended is not None:
                return
            self.node += 1  # as the web client after a drop: the next node (another server behind the name)
            if not self.reconnects or self.reconnects[-1].back_s is not None:  # a new loss, not a failed retry
                now = time.monotonic()
                self.reconnects.append(Reconnect(now, self.nodes.fault_at(now)))
            if reason in RESTART_CLOSES and not self._prompt_pending:
                # A node going away on purpose: at once (spread over 250 ms), as the web client; a second
                # one before a session is ready falls back to the back-off.
                self._prompt_pending = True
                await asyncio.sleep(RESTART_SPREAD * random.random())
            else:
                await asyncio.sleep(backoff(self._attempt))
                self._attempt += 1

    async def _connection(self) -> str:
        try:
            async with connect(self.nodes.ws(self.node), open_timeout=10, ping_interval=None,
                               close_timeout=2, max_size=2**24, compression=None) as ws:
                return await self._session(ws)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else 1006
            return self._closed(code)
        except InvalidHandshake as exc:
            return f"handshake refused ({str(exc)[:60]})"
        except (OSError, TimeoutError) as exc:
            return f"connect failed ({type(exc).__name__})"

    def _closed(self, code: int) -> str:
        if code in FINAL_CLOSES:
            self.record.ended = f"closed {code} ({FINAL_CLOSES[code]})"
        elif code in FRESH_CLOSES:
            self._forget_session()
        return f"close {code}"

    def _forget_session(self) -> None:
        if self.session_id is not None:
            self.need_fill = True
        self.session_id = None
        self.seq = 0

    async def _session(self, ws: ClientConnection) -> str:
        hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
        interval = float(hello["d"]["heartbeat_interval"]) / 1000
        if self.session_id is not None:
            self._send_resume(ws)
        else:
            self._identify(ws)
        beats = asyncio.create_task(self._heartbeats(ws, interval))
        try:
            async for raw in ws:
                if isinstance(raw, str) and raw.startswith(MESSAGE_HEAD) and raw.endswith(MESSAGE_TAIL):
                    self._fast_message(raw)
                    continue
                frame = json.loads(raw)
                if frame.get("op") == 7:  # RECONNECT: the node drains; leave now, its 1012 would follow
                    self.reconnect_frames += 1
                    await ws.close(4000)
                    return "RECONNECT"
                self._frame(ws, frame)
                if self.record.ended is not None:
                    await ws.close()
                    return "ended"
        finally:
            beats.cancel()
        code = ws.close_code if ws.close_code is not None else 1006
        return self._closed(code)

    def _identify(self, ws: ClientConnection) -> None:
        self._send(ws, {"op": 2, "d": {"token": self.user["token"],
                                       "properties": {"os": "linux", "browser": "meadhall-soak", "device": "soak"}}})

    def _send_resume(self, ws: ClientConnection) -> None:
        self._resume_sent = time.monotonic()
        self._send(ws, {"op": 6, "d": {"token": self.user["token"], "session_id": self.session_id,
                                       "seq": self.seq}})

    def _send(self, ws: ClientConnection, payload: Any) -> None:
        task = asyncio.create_task(ws.send(json.dumps(payload, separators=(",", ":"))))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _heartbeats(self, ws: ClientConnection, interval: float) -> None:
        await asyncio.sleep(interval * random.random())
        while True:
            self.acked = False
            self._send(ws, {"op": 1, "d": self.seq or None})
            await asyncio.sleep(interval)
            if not self.acked:  # a dead connection: close and RESUME on a new one
                await ws.close(4000)
                return

    # -- frames
    def _frame(self, ws: ClientConnection, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        if op == 0:
            s = int(frame["s"])
            if self.seq and s != self.seq + 1 and frame["t"] != "READY":
                self.gaps += 1
            self.seq = s
            self._dispatch(frame["t"], frame["d"])
        elif op == 11:
            self.acked = True
        elif op == 9:
            d = frame.get("d") or {}
            reason = str(d.get("reason"))
            self.invalid_sessions[reason] = self.invalid_sessions.get(reason, 0) + 1
            self.trace.append((time.monotonic(), f"INVALID_SESSION {d}"))
            if d.get("resumable"):
                asyncio.get_running_loop().call_later(1 + 4 * random.random(), self._send_resume, ws)
            elif reason in ("unauthorized", "banned"):
                self.record.ended = f"INVALID_SESSION {reason}"
            else:
                self._forget_session()
                self._identify(ws)
        elif op == 1:
            self._send(ws, {"op": 1, "d": self.seq or None})

    def _fast_message(self, raw: str) -> None:
        t_at = len(raw) - len(MESSAGE_TAIL)
        s = int(raw[raw.rfind('"s":', 0, t_at) + 4:t_at])
        if self.seq and s != self.seq + 1:
            self.gaps += 1
        self.seq = s
        now = time.monotonic()
        at = raw.find('"channel_id":"')
        room = raw[at + 14:raw.find('"', at + 14)] if at > 0 else ""
        if room not in self.newest:
            return
        ident = int(raw[len(MESSAGE_HEAD):raw.find('"', len(MESSAGE_HEAD))])
        if ident > self.newest[room]:
            self.newest[room] = ident
        at = raw.find('"content":"' + self.prefix)
        if at < 0:
            return
        at += 11 + len(self.prefix)
        end = at
        while end < len(raw) and raw[end].isdigit():
            end += 1
        if end > at:
            self._count(int(raw[at:end]), now, filled=False)

    def _dispatch(self, kind: str, d: Any) -> None:
        now = time.monotonic()
        if kind == "MESSAGE_CREATE":
            self._message(d, now, filled=False)
        elif kind in ("READY", "RESUMED"):
            if kind == "READY":
                self.session_id = d["session_id"]
            self.trace.append((now, f"{kind} on node {self.node % len(self.nodes.urls)} at s={self.seq}"))
            if not self.record.covered_from_ms:
                self.record.covered_from_ms = int(time.time() * 1000)
            self._attempt = 0
            self._prompt_pending = False
            self.ready.set()
            if self.reconnects and self.reconnects[-1].back_s is None:
                last = self.reconnects[-1]
                last.how = "resumed" if kind == "RESUMED" else "identified"
                last.back_s = now - last.lost_at
                if kind == "RESUMED":
                    last.resume_s = now - self._resume_sent
            if kind == "READY" and self.need_fill:
                self.need_fill = False
                # The gap begins at what the client held when its session was lost: live dispatches of the
                # new session raise `newest` before a later room's fill starts.
                task = asyncio.create_task(self._fill(dict(self.newest)))
                self.fills.add(task)
                task.add_done_callback(self.fills.discard)

    def _message(self, d: dict[str, Any], now: float, *, filled: bool) -> None:
        room = str(d.get("channel_id"))
        if room not in self.newest:
            return
        ident = int(d["id"])
        if ident > self.newest[room]:
            self.newest[room] = ident
        content = d.get("content") or ""
        if not content.startswith(self.prefix):
            return
        try:
            index = int(content[len(self.prefix):].split()[0])
        except (ValueError, IndexError):
            return
        self._count(index, now, filled=filled)

    def _count(self, index: int, now: float, *, filled: bool) -> None:
        if index >= len(self.record.dispatched):
            return
        if filled:
            self.record.filled[index] = 1
        else:
            if self.record.dispatched[index] < 255:
                self.record.dispatched[index] += 1
            if self.record.dispatched[index] == 1 and not self.record.filled[index]:
                self.latencies.delivered(index, now)

    async def _fill(self, held: dict[str, int]) -> None:
        """After a new IDENTIFY: each watched room's messages after the newest one held, page by page."""
        for room in sorted(held):
            after = max(0, held[room] - (FILL_MARGIN_MS << 22))
            while True:
                resp, _ = await request(self.nodes, "GET",
                                     f"/api/v1/channels/{room}/messages?after={after}&limit=100",
                                     token=self.user["token"], start=self.node, what="gap fill", give_up=60)
                if isinstance(resp, str) or resp.status_code != 200:
                    self.record.fill_errors += 1
                    break
                page = resp.json()
                messages = page.get("messages", [])
                self.trace.append((time.monotonic(), f"fill {room} after {after}: {len(messages)} messages, "
                                                     f"has_more {page.get('has_more')}"))
                for message in messages:
                    self._message(message, time.monotonic(), filled=True)
                if not messages or not page.get("has_more"):
                    break
                after = max(int(m["id"]) for m in messages)


class Senders:
    """An open-loop schedule: message i at t0 + i / rate, from sender i % S into one of its guild's rooms."""

    def __init__(self, users: list[dict[str, Any]], rooms_of: Callable[[int], list[str]], nodes: Nodes,
                 run_tag: str, rate: float, total: int, latencies: Latencies) -> None:
        self.users = users
        self.rooms_of = rooms_of
        self.nodes = nodes
        self.run_tag = run_tag
        self.rate = rate
        self.total = total
        self.latencies = latencies
        self.sends: list[Send] = []
        self.retried = 0  # sends that needed more than one attempt
        self.repeats = 0  # 200 answers: the server recognised a nonce already stored
        self.late: list[float] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        t0 = time.monotonic()
        for i in range(self.total):
            if stop.is_set():
                break
            delay = t0 + i / self.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                self.late.append(-delay)
            sender = i % len(self.users)
            rooms = self.rooms_of(sender)
            send = Send(i, str(self.users[sender]["id"]), rooms[(i // len(self.users)) % len(rooms)])
            self.sends.append(send)
            task = asyncio.create_task(self._send(send, sender))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _send(self, send: Send, sender: int) -> None:
        nonce = f"{self.run_tag}.{send.index}"
        self.latencies.sent_at[send.index] = now = time.monotonic()
        self.latencies.windowed[send.index] = self.nodes.in_window(now)
        body = {"content": f"soak {nonce} from sender {sender}", "nonce": nonce}
        resp, attempts = await request(self.nodes, "POST", f"/api/v1/channels/{send.room}/messages",
                                       token=self.users[sender]["token"], start=send.index, what="send",
                                       json_body=body)
        self.retried += attempts > 1
        if isinstance(resp, str):
            send.gave_up = resp
        elif resp.status_code in (200, 201):
            send.acked_id = int(resp.json()["message"]["id"])
            self.repeats += resp.status_code == 200
        else:
            send.gave_up = f"HTTP {resp.status_code} {resp.text[:120]}"
            self.nodes.tally.error(f"send {send.index}: unexpected HTTP {resp.status_code} {resp.text[:120]}")
