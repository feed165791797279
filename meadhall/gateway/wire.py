"""uvicorn's WebSocket protocol (the websockets sans-io implementation) with one ASGI extension, `meadhall.frames`:
the protocol itself, through which a gateway connection writes a text frame straight to its transport.

Why: through the ASGI send, each frame cost a coroutine, Starlette's and uvicorn's message checks, a websockets
`Frame` object, its serialisation and two joins, for every receiver of every event; delivery to a thousand viewers
spent most of its user time there. A server-to-client text frame is a two-to-ten-byte header and the UTF-8 text
(unmasked, RFC 6455 5.2), so `write_text` writes exactly what websockets would.

The extension is offered only when no WebSocket extension was negotiated (permessage-deflate would have to
compress each frame): the gateway speaks uncompressed frames, and the server turns deflate off
(`ws_per_message_deflate=False`). Without the extension, or under another server, the gateway sends through ASGI
(gateway/connection.py). Control frames and the close still go through ASGI: they are rare, and the close
keeps uvicorn's closing handshake.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

EXTENSION = "meadhall.frames"
# The value for `uvicorn.Config(ws=...)`.
PROTOCOL = "meadhall.gateway.wire:GatewayWebSocketProtocol"

_TEXT = 0x81  # FIN + opcode 1 (text)
_HEAD16 = struct.Struct("!BBH")  # the header of a frame of 126 to 65535 bytes


class Closed(Exception):
    """The connection can take no more frames (closed, closing, or the client went away)."""


def frame_header(length: int) -> bytes:
    """The header of an unmasked, unfragmented text frame carrying `length` bytes."""
    if length < 126:
        return bytes((_TEXT, length))
    if length < 65536:
        return bytes((_TEXT, 126)) + length.to_bytes(2, "big")
    return bytes((_TEXT, 127)) + length.to_bytes(8, "big")


class _Mailbox:
    """What uvicorn's protocol asks of its `asyncio.Queue` of received messages (`put_nowait`, `get`, `empty`),
    without the Queue's four deques (each a 64-slot block: about 3 KiB per connection). One reader: the ASGI
    application's `receive` (the gateway reads its connection from one task)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Any:
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._items.pop(0)

    def empty(self) -> bool:
        return not self._items


class _Flag:
    """`asyncio.Event` for the protocol's `writable`, whose waiters (rare: a paused transport) get a list only
    when there are some, instead of a deque per connection."""

    __slots__ = ("_value", "_waiters")

    def __init__(self) -> None:
        self._value = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        self._value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
        return True


class GatewayWebSocketProtocol(WebSocketsSansIOProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Memory per connection (a thousand viewers hold a thousand of these): leaner stand-ins for the Queue and
        # the Event, which uvicorn uses only through the methods they have.
        self.queue = _Mailbox()  # type: ignore[assignment]
        self.writable = _Flag()  # type: ignore[assignment]
        self.writable.set()

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept":
            # The handshake is over: its request and response (about 3 KiB of header objects) are not read again.
            self.request = self.response = None  # type: ignore[assignment]

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self.response.status_code == 101 and not self.conn.extensions:
            # ASGI extensions are dicts by convention; this one is the protocol itself (its `write_text`).
            self.scope["extensions"][EXTENSION] = self  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        # The scope held the protocol itself: let go of it, so a closed connection is freed at once rather than at
        # the oldest generation's next collection.
        extensions = self.scope.get("extensions") if hasattr(self, "scope") else None
        if extensions is not None:
            extensions.pop(EXTENSION, None)

    def write_text(self, text: str) -> bool:
        """Write one text frame now: True once written, False when the transport is paused (its buffer is over the
        high-water mark: wait for `writable` and write it again). Raises Closed when no frame can go out, as
        uvicorn's send would refuse it (a close sent or received, the client gone)."""
        if self.disconnected or self.close_sent or self.conn.state is not State.OPEN:
            raise Closed
        if not self.writable.is_set():
            return False
        data = text.encode()
        length = len(data)
        # frame_header's common case inline (a dispatch is 126 to 65535 bytes; this runs once per receiver of
        # every event).
        if 126 <= length < 65536:
            self.transport.write(_HEAD16.pack(_TEXT, 126, length) + data)
        else:
            self.transport.write(frame_header(length) + data)
        return True

    async def writable_again(self) -> None:
        await self.writable.wait()
