"""Event fan-out. `LocalBus` delivers in-process; `RedisBus` publishes on Redis pub/sub so that every
node's gateway hub delivers to its own connections (docs/scaling.md)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from meadhall.metrics import Metrics
from meadhall.realtime.events import Event

Handler = Callable[[Event], Awaitable[None]]
# A handler's synchronous test of whether an event concerns it at all; events it refuses are not handed to it.
Wants = Callable[[Event], bool]
START_TIMEOUT = 10.0  # seconds for the subscription at start (the process stops when Redis is unreachable)
log = structlog.get_logger("meadhall.bus")


class LocalBus:
    def __init__(self) -> None:
        self._handlers: list[tuple[Handler, Wants | None]] = []
        self.metrics: Metrics | None = None  # set by the runtime when METRICS_ENABLED

    def subscribe(self, handler: Handler, wants: Wants | None = None) -> None:
        """`wants`: asked first for each event, so that the events a handler has no use for cost no coroutine
        (a profile change publishes one MEMBER_UPDATE per guild of the user, most for no session here)."""
        self._handlers.append((handler, wants))

    def unsubscribe(self, handler: Handler) -> None:
        self._handlers[:] = [entry for entry in self._handlers if entry[0] != handler]

    async def publish(self, events: list[Event]) -> None:
        metrics = self.metrics
        published = time.time() if metrics is not None else 0.0
        for ev in events:
            if metrics is not None:  # in-process: the time the batch's earlier events took to deliver
                metrics.observe_bus_lag(published)
            await self._dispatch(ev)

    async def _dispatch(self, ev: Event) -> None:
        for handler, wants in list(self._handlers):
            if wants is not None and not wants(ev):
                continue
            try:
                await handler(ev)
            except Exception:  # one failing receiver must not stop the others
                log.exception("event handler failed", event_type=ev.type)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        self._handlers.clear()


def _stamped(raw: str, published: float) -> str:
    """The event's JSON object with its publication time (wall clock, comparable across nodes) as
    its first member `p`; `Event.from_json` ignores members it does not know."""
    return f'{{"p":{published:.6f},{raw[1:]}'


def _published_at(raw: str) -> float:
    if raw.startswith('{"p":'):
        try:
            return float(raw[5:raw.index(",", 5)])
        except ValueError:
            return 0.0
    return 0.0


class RedisBus(LocalBus):
    """Publishes every event on one channel; a reader task hands received events to local handlers.

    `subscriber` is the client whose connection waits on the channel: it has no read timeout (a quiet
    channel is not an outage), unlike `client`, whose commands are bounded (runtime.py)."""

    def __init__(self, client: Any, channel: str = "meadhall:events", subscriber: Any = None) -> None:
        super().__init__()
        self.client = client
        self.subscriber = subscriber
        self.channel = channel
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._pubsub = (self.subscriber or self.client).pubsub(ignore_subscribe_messages=True)
        # The subscriber has no read timeout, so a hung Redis would hold the start for ever: bounded here.
        async with asyncio.timeout(START_TIMEOUT):
            await self._pubsub.subscribe(self.channel)
            # Read the subscription confirmation so that events published right after start are not missed.
            await self._pubsub.get_message(timeout=1.0)
        self._reader = asyncio.create_task(self._read(), name="redis-bus-reader")

    async def publish(self, events: list[Event]) -> None:
        if not events:
            return
        published = time.time()
        async with self.client.pipeline(transaction=False) as pipe:
            for ev in events:
                if not ev.id:
                    ev = ev._replace(id=uuid.uuid4().hex)
                pipe.publish(self.channel, _stamped(ev.to_json(), published))
            await pipe.execute()

    async def _read(self) -> None:
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") == "message":
                        raw = message["data"]
                        if self.metrics is not None:
                            self.metrics.observe_bus_lag(_published_at(raw))
                        await self._dispatch(Event.from_json(raw))
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
        if self.subscriber is not None:
            with contextlib.suppress(Exception):
                await self.subscriber.aclose()
        await super().close()
