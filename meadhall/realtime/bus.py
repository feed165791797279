"""Event fan-out. `LocalBus` delivers in-process; `RedisBus` publishes on Redis pub/sub so that every
node's gateway hub delivers to its own connections (API.md section 7)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from meadhall.realtime.events import Event

Handler = Callable[[Event], Awaitable[None]]
log = structlog.get_logger("meadhall.bus")


class LocalBus:
    def __init__(self) -> None:
        self._handlers: list[Handler] = []

    def subscribe(self, handler: Handler) -> None:
        self._handlers.append(handler)

    def unsubscribe(self, handler: Handler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)

    async def publish(self, events: list[Event]) -> None:
        for ev in events:
            await self._dispatch(ev)

    async def _dispatch(self, ev: Event) -> None:
        for handler in list(self._handlers):
            try:
                await handler(ev)
            except Exception:  # one failing receiver must not stop the others
                log.exception("event handler failed", event_type=ev.type)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        self._handlers.clear()


class RedisBus(LocalBus):
    """Publishes every event on one channel; a reader task hands received events to local handlers."""

    def __init__(self, client: Any, channel: str = "meadhall:events") -> None:
        super().__init__()
        self.client = client
        self.channel = channel
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(self.channel)
        # Read the subscription confirmation so that events published right after start are not missed.
        await self._pubsub.get_message(timeout=1.0)
        self._reader = asyncio.create_task(self._read(), name="redis-bus-reader")

    async def publish(self, events: list[Event]) -> None:
        if not events:
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for ev in events:
                if not ev.id:
                    ev = dataclasses.replace(ev, id=uuid.uuid4().hex)
                pipe.publish(self.channel, ev.to_json())
            await pipe.execute()

    async def _read(self) -> None:
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") == "message":
                        await self._dispatch(Event.from_json(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("redis bus reader failed; resubscribing")
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    await self._pubsub.subscribe(self.channel)

    async def close(self) -> None:
        if self._reader:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        await super().close()
