"""One open WebSocket's outgoing side: a bounded queue drained by its own writer task, so that the hub
hands a frame over without awaiting the client, and a slow client never stalls the others."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable

SendText = Callable[[str], Awaitable[None]]
Close = Callable[[int], Awaitable[None]]


class Connection:
    def __init__(self, send: SendText, close: Close, max_queued: int, on_overflow: Callable[[], None]) -> None:
        self._send = send
        self._close = close
        self._max_queued = max_queued
        self._on_overflow = on_overflow
        self._queue: deque[str | int] = deque()  # a frame, or a close code (the last item)
        self._wake = asyncio.Event()
        self.last_seq = 0  # highest dispatch sequence number queued
        self.closing = False  # no more frames are accepted
        self.overflowed = False
        self._writer = asyncio.create_task(self._write(), name="gateway-writer")

    def send(self, frame: str) -> None:
        """A control frame (HELLO, HEARTBEAT_ACK, INVALID_SESSION)."""
        self._enqueue(frame)

    def push(self, seq: int, frame: str) -> None:
        """A dispatch; numbers at or below the last one queued were already delivered (resume overlap)."""
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        self._enqueue(frame)

    def close(self, code: int) -> None:
        """Close after the frames already queued (INVALID_SESSION then 4004, SESSION_INVALIDATED then 4010)."""
        if not self.closing:
            self._queue.append(code)
            self.closing = True
            self._wake.set()

    def _enqueue(self, item: str) -> None:
        if self.closing:
            return
        if len(self._queue) >= self._max_queued:
            # The client reads too slowly: drop it (it can RESUME from the buffer) rather than grow.
            self.closing = True
            self.overflowed = True
            self._queue.clear()
            self._writer.cancel()
            self._on_overflow()
            return
        self._queue.append(item)
        self._wake.set()

    async def _write(self) -> None:
        queue = self._queue
        while True:
            while not queue:
                self._wake.clear()
                await self._wake.wait()
            item = queue.popleft()
            try:
                if isinstance(item, int):
                    await self._close(item)
                    return
                await self._send(item)
            except Exception:  # the client went away; the reader sees the disconnect
                self.closing = True
                return

    async def finish(self, grace: float = 2.0) -> None:
        """Let a queued close frame go out, then stop the writer."""
        if self.closing and not self.overflowed:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._writer), grace)
        self.closing = True
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._writer
