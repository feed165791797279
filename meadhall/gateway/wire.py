"""uvicorn's WebSocket protocol (the websockets sans-io implementation) with one ASGI extension, `meadhall.frames`:
the protocol itself, through which a gateway connection writes a text frame straight to its transport.

Why: through the ASGI send, each frame cost a coroutine, Starlette's and uvicorn's message checks, a websockets
`Frame` object, its serialisation and two joins, for every receiver of every event; delivery to a thousand viewers
spent most of its user time there. A server-to-client text frame is a two-to-ten-byte header and the UTF-8 text
(unmasked, RFC 6455 5.2), so `write_text` writes exactly what websockets would.

The extension is offered only when no WebSocket extension was negotiated (permessage-deflate would have to
compress each frame): the gateway speaks uncompressed frames (API.md), and the server turns deflate off
(`ws_per_message_deflate=False`). Without the extension, or under another server, the gateway sends through ASGI
(gateway/connection.py). Control frames and the close still go through ASGI: they are rare, and the close
keeps uvicorn's closing handshake.
"""

from __future__ import annotations

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


class GatewayWebSocketProtocol(WebSocketsSansIOProtocol):
    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self.response.status_code == 101 and not self.conn.extensions:
            self.scope["extensions"][EXTENSION] = self

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
