"""The lean gateway client of the fan-out workloads: `LeanGateway`, one connection counting what a
benchmark needs per frame, and `Tracker`, the arrivals of one run's messages by nonce.

The HTTP upgrade is written by hand, server frames (unmasked) are parsed from the byte stream, and
dispatches are read with byte searches (`s` and `t` at the end of the frame, the nonce inside it); only
HELLO, READY and the rare control frames are JSON-decoded. One core has to read 20,000+ frames/s in
gateway_viewers_1000, and the figure must measure the server, not the client.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from typing import Any

from bench.drivers import OpError

GATEWAY_PATH = "/gateway?v=1&encoding=json"


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
