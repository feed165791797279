"""One open WebSocket's outgoing side. The hub hands a frame over without awaiting the client, and a
slow client never stalls the others:

- when nothing is waiting, the frame is written at once: straight to the transport when the server offers
  it (`FrameSink`, gateway/wire.py: no coroutine, no ASGI message, no websockets frame object per delivery),
  else the ASGI send coroutine is started by hand and, as it does whenever the transport accepts data,
  completes without suspending (no task switch per frame);
- when it does suspend (the client's socket buffer is full), or the sink's transport is paused, a writer
  task finishes it and drains the frames queued behind it, in order;
- a queue that reaches its bound means the client reads too slowly: it is dropped (it can RESUME).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

# Coroutine functions, not any awaitable: `_put` starts the coroutine by hand (`send(None)`) to write
# without a task when the socket accepts at once.
SendText = Callable[[str], Coroutine[Any, Any, None]]
Close = Callable[[int], Coroutine[Any, Any, None]]


class FrameSink(Protocol):
    """A direct write path for text frames (gateway/wire.py)."""

    def write_text(self, text: str) -> bool:
        """True once written; False when the transport is paused; raises `Closed` when nothing more can go out."""
        ...

    async def writable_again(self) -> None: ...


async def _complete(coro: Coroutine[Any, Any, Any], awaiting: Any) -> None:
    """Finish a coroutine that was started by hand and suspended on the future `awaiting`."""
    try:
        while True:
            with contextlib.suppress(Exception):  # the coroutine itself sees the future's outcome
                await awaiting
            try:
                awaiting = coro.send(None)
            except StopIteration:
                return
    except asyncio.CancelledError:
        coro.close()
        raise


class Connection:
    __slots__ = ("_send", "_close", "_max_queued", "_on_overflow", "_queue", "_writer", "_sink", "last_seq", "closing",
                 "overflowed")

    def __init__(self, send: SendText, close: Close, max_queued: int, on_overflow: Callable[[], None],
                 sink: FrameSink | None = None) -> None:
        self._send = send
        self._sink = sink
        self._close = close
        self._max_queued = max_queued
        self._on_overflow = on_overflow
        self._queue: deque[str | int] | None = None  # a frame, or a close code (the last item)
        self._writer: asyncio.Task[None] | None = None  # only while a send is suspended
        self.last_seq = 0  # highest dispatch sequence number queued
        self.closing = False  # no more frames are accepted
        self.overflowed = False

    def send(self, frame: str) -> None:
        """A control frame (HELLO, HEARTBEAT_ACK, INVALID_SESSION)."""
        self._enqueue(frame)

    def push(self, seq: int, frame: str) -> None:
        """A dispatch; numbers at or below the last one queued were already delivered (resume overlap)."""
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        sink = self._sink
        if sink is not None and self._writer is None and not self.closing:
            # What `_enqueue` and `_put` come to when nothing waits (nothing is queued then), without their checks:
            # this runs once per receiver of every event.
            self._write_now(sink, frame)
            return
        self._enqueue(frame)

    def close(self, code: int) -> None:
        """Close after the frames already queued (INVALID_SESSION then 4004, SESSION_INVALIDATED then 4010)."""
        if not self.closing:
            self._put(code)
            self.closing = True

    def _enqueue(self, item: str) -> None:
        if self.closing:
            return
        queue = self._queue
        if queue is not None and len(queue) >= self._max_queued:
            # The client reads too slowly: drop it (it can RESUME from the buffer) rather than grow.
            self.closing = True
            self.overflowed = True
            queue.clear()
            if self._writer is not None:
                self._writer.cancel()
            self._on_overflow()
            return
        self._put(item)

    def _put(self, item: str | int) -> None:
        if self._writer is not None:
            self._queued().append(item)
            return
        sink = self._sink
        if sink is not None and type(item) is str:
            self._write_now(sink, item)
            return
        coro = self._send(item) if isinstance(item, str) else self._close(item)
        try:
            awaiting = coro.send(None)
        except StopIteration:
            return  # written
        except Exception:  # the client went away; the reader sees the disconnect
            self.closing = True
            return
        self._writer = asyncio.ensure_future(self._drain(coro, awaiting))

    def _write_now(self, sink: FrameSink, frame: str) -> None:
        """Write `frame` through the sink while nothing is queued; a paused transport hands it to a writer task."""
        try:
            if sink.write_text(frame):
                return
        except Exception:  # Closed, or a fault of this one connection: it must not stop the others' delivery
            self.closing = True
            return
        self._wait_for_transport(frame)

    def _wait_for_transport(self, frame: str) -> None:
        """The sink's transport is paused: a writer task writes `frame` and what follows once it drains."""
        self._queued().append(frame)
        self._writer = asyncio.ensure_future(self._drain(None, None))

    def _queued(self) -> deque[str | int]:
        # Made on first use: an empty deque holds a 64-slot block, and most connections never queue.
        if self._queue is None:
            self._queue = deque()
        return self._queue

    async def _drain(self, coro: Coroutine[Any, Any, Any] | None, awaiting: Any) -> None:
        sink = self._sink
        try:
            if coro is not None:
                await _complete(coro, awaiting)
            queue = self._queued()
            while queue:
                item = queue.popleft()
                if isinstance(item, int):
                    await self._close(item)
                    return
                if sink is None:
                    await self._send(item)
                    continue
                while not sink.write_text(item):
                    await sink.writable_again()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.closing = True
        finally:
            self._writer = None

    async def finish(self, grace: float = 2.0) -> None:
        """Let a queued close frame go out, then stop writing."""
        writer = self._writer
        if writer is not None and self.closing and not self.overflowed:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(writer), grace)
        self.closing = True
        writer = self._writer
        if writer is not None:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer
