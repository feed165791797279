"""The gateway's direct write path (gateway/wire.py, gateway/connection.py): the frames it writes are exactly
websockets' own, no compression is negotiated, and a paused transport keeps every frame, in order, before the
close."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from meadhall.gateway.connection import Connection
from meadhall.gateway.wire import Closed, GatewayWebSocketProtocol, frame_header


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 300, 65535, 65536, 70000])
def test_frame_header_is_websockets_serialisation(length):
    data = ("é" * (length // 2) + "x" * (length % 2)).encode()
    assert len(data) == length
    assert frame_header(length) + data == Frame(Opcode.TEXT, data).serialize(mask=False)


async def test_a_client_offering_deflate_gets_plain_frames(gateway, accounts):
    alice = await accounts.register("alice")
    async with connect(gateway.url + "/gateway?v=1&encoding=json", proxy=None) as ws:
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None  # offered by default, refused
        hello = json.loads(await ws.recv())
        assert hello["op"] == 10
        await ws.send(json.dumps({"op": 2, "d": {"token": alice["token"]}}))
        ready = json.loads(await ws.recv())
        assert ready["t"] == "READY" and ready["s"] == 1


class PausedSink:
    """A transport that takes nothing until released, then everything."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.written: list[str] = []
        self.gone = False

    def write_text(self, text: str) -> bool:
        if self.gone:
            raise Closed
        if not self.open.is_set():
            return False
        self.written.append(text)
        return True

    async def writable_again(self) -> None:
        await self.open.wait()


async def test_paused_transport_keeps_order_and_closes_after_the_frames():
    sink = PausedSink()
    closed: list[int] = []

    async def send(frame: str) -> None:
        raise AssertionError("the sink takes text frames")

    async def close(code: int) -> None:
        closed.append(code)

    conn = Connection(send, close, 16, lambda: None, sink)
    for seq in range(1, 6):
        conn.push(seq, f"frame {seq}")
    conn.close(4010)
    await asyncio.sleep(0.01)
    assert sink.written == [] and closed == []
    sink.open.set()
    await conn.finish()
    assert sink.written == [f"frame {seq}" for seq in range(1, 6)]
    assert closed == [4010]


async def test_a_gone_transport_stops_the_connection():
    sink = PausedSink()
    sink.gone = True

    async def send(frame: str) -> None:
        raise AssertionError("the sink takes text frames")

    async def close(code: int) -> None:
        pass

    conn = Connection(send, close, 16, lambda: None, sink)
    conn.push(1, "frame")
    assert conn.closing and sink.written == []


async def test_a_fault_in_one_write_closes_that_connection_and_reaches_no_caller():
    """A write that fails otherwise than Closed (a transport error, text that cannot be encoded) ends that
    connection only: the hub delivering to a thousand receivers must not stop at one."""

    class FaultySink(PausedSink):
        def write_text(self, text: str) -> bool:
            raise UnicodeEncodeError("utf-8", text, 0, 1, "surrogates not allowed")

    async def send(frame: str) -> None:
        raise AssertionError("the sink takes text frames")

    async def close(code: int) -> None:
        pass

    conn = Connection(send, close, 16, lambda: None, FaultySink())
    conn.push(1, "frame")  # does not raise
    assert conn.closing
    conn.push(2, "another")  # nothing more is tried on a closing connection
    assert conn.closing


def test_a_lost_connection_lets_go_of_the_protocol_held_in_its_scope(monkeypatch):
    """The scope holds the protocol (its extension): a lost connection drops that reference, so the protocol is
    freed with the connection instead of waiting for the collector of reference cycles."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    lost = []
    monkeypatch.setattr(WebSocketsSansIOProtocol, "connection_lost", lambda self, exc: lost.append(exc))
    protocol = GatewayWebSocketProtocol.__new__(GatewayWebSocketProtocol)
    protocol.scope = {"extensions": {"meadhall.frames": protocol}}
    protocol.connection_lost(None)
    assert lost == [None]
    assert protocol.scope["extensions"] == {}


@pytest.mark.parametrize("length", [0, 125, 126, 300, 65535, 65536])
def test_write_text_writes_websockets_frame(length):
    written: list[bytes] = []

    class Transport:
        def write(self, data: bytes) -> None:
            written.append(data)

    proto = GatewayWebSocketProtocol.__new__(GatewayWebSocketProtocol)
    proto.disconnected, proto.close_sent = False, False
    proto.conn = type("Conn", (), {"state": State.OPEN})()
    proto.writable = asyncio.Event()
    proto.transport = Transport()  # type: ignore[assignment]
    text = "x" * length
    assert proto.write_text(text) is False  # paused
    proto.writable.set()
    assert proto.write_text(text) is True
    assert written == [Frame(Opcode.TEXT, text.encode()).serialize(mask=False)]
    proto.close_sent = True
    with pytest.raises(Closed):
        proto.write_text(text)
