"""Event fan-out. `LocalBus` delivers in-process; `RedisBus` appends to a Redis Stream that every node reads,
so that every node's gateway hub delivers to its own connections (docs/scaling.md)."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from meadhall.metrics import Metrics
from meadhall.realtime.events import Event

Handler = Callable[[Event], Awaitable[None]]
# A handler's synchronous test of whether an event concerns it at all; events it refuses are not handed to it.
Wants = Callable[[Event], bool]
# A handler of several log entries at once, (entry id, event) in log order: the gateway numbers them in one
# Redis call. Used by RedisBus for the entries of one read; the single-event handler everywhere else.
BatchHandler = Callable[[list[tuple[str, Event]]], Awaitable[None]]
START_TIMEOUT = 10.0  # seconds for the first reads at start (the process stops when Redis is unreachable)
# The log keeps at least this long (seconds): a session resumes at the latest ATTACHED_TTL (180 s) after its
# last heartbeat's refresh of its position, which comes every 30-45 s; the rest is clock skew between nodes.
KEEP_S = 300.0
BLOCK_MS = 1000  # a read waits this long for new entries, so that a dead Redis is noticed within a second or so
READ_TIMEOUT = 5.0  # seconds a read (or the epoch check) may take before the connection counts as dead
READ_COUNT = 500  # entries per read
RETRY_AFTER = 0.5  # seconds between attempts while Redis is away
EPOCH_EVERY = 5.0  # seconds between checks that Redis still holds its data (a FLUSHDB breaks no connection)
# Entries kept in memory for resumes (at most this many, for at most this long): most RESUMEs need only the
# last seconds of the log, and idle memory stays flat.
WINDOW_ENTRIES = 50_000
WINDOW_S = 120.0
SINCE_PAGE = 1000
log = structlog.get_logger("meadhall.bus")


class LocalBus:
    def __init__(self) -> None:
        self._handlers: list[tuple[Handler, Wants | None, BatchHandler | None]] = []
        self.metrics: Metrics | None = None  # set by the runtime when METRICS_ENABLED

    def subscribe(self, handler: Handler, wants: Wants | None = None, batch: BatchHandler | None = None) -> None:
        """`wants`: asked first for each event, so that the events a handler has no use for cost no coroutine
        (a profile change publishes one MEMBER_UPDATE per guild of the user, most for no session here).
        `batch`: the same handler for several log entries at once, where the bus reads a log; unsubscribing
        `handler` removes it too."""
        self._handlers.append((handler, wants, batch))

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
        for handler, wants, _batch in list(self._handlers):
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
    """Publishes every event on one Redis Stream, an ordered log that every node reads at its own pace
    from its last position (docs/gateway.md, docs/scaling.md).

    The entry id is the event's position in the log. `reading` is the id of the entry being handed to the
    handlers (or last handed), `position` that of the last entry whose handlers all returned. The gateway
    numbers the events a session missed while nobody held it from the log (`since`): the stream keeps at
    least KEEP_S seconds, the longest a session can wait to resume, and the node keeps the entries it read
    lately in memory so that a RESUME storm does not read them back from Redis.

    `subscriber` is the client whose connection waits on the stream: it has no read timeout (a quiet log is
    not an outage: each read is bounded here instead), unlike `client`, whose commands are bounded (runtime.py).

    Redis keeps nothing on disk: when it comes back empty, what it held for this node's sessions is gone. An
    epoch key, set once by whichever node finds it missing, tells: when it changes, `on_reset` handlers run."""

    def __init__(self, client: Any, channel: str = "meadhall:events", subscriber: Any = None) -> None:
        super().__init__()
        self.client = client
        self.subscriber = subscriber
        self.channel = channel  # the stream's key
        self.epoch_key = f"{channel}:epoch"
        self.reading = "0-0"
        self.position = "0-0"
        self.on_reset: list[Callable[[], Awaitable[None]]] = []
        # Entries read lately, oldest first: (position as a tuple, id, event, time read). Every entry after
        # `_window_from` up to `reading` is in it.
        self._window: deque[tuple[tuple[int, int], str, Event, float]] = deque()
        self._window_from: tuple[int, int] = (0, 0)
        self._epoch: str | None = None
        self._epoch_checked = 0.0
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def _reader_client(self) -> Any:
        return self.subscriber or self.client

    async def start(self) -> None:
        # Bounded: the subscriber has no read timeout, so a hung Redis would hold the start for ever.
        async with asyncio.timeout(START_TIMEOUT):
            await self._check_epoch()
            last = await self._reader_client.xrevrange(self.channel, "+", "-", count=1)
        # Events published from here on are read; what came before concerns nobody on this node yet.
        self.reading = self.position = last[0][0] if last else "0-0"
        self._window_from = stream_id(self.reading)
        self._reader = asyncio.create_task(self._read(), name="redis-bus-reader")

    async def publish(self, events: list[Event]) -> None:
        if not events:
            return
        published = time.time()
        # MINID trims (approximately, whole nodes at a time) what is older than KEEP_S by this node's clock.
        minid = f"{int((published - KEEP_S) * 1000)}-0"
        async with self.client.pipeline(transaction=False) as pipe:
            for i, ev in enumerate(events):
                if not ev.id:
                    # In the caller's list: if the pipeline fails part-way, the caller keeps the events for a
                    # later publish (db/uow.py) under the same ids, and a session numbers an event once per id.
                    ev = events[i] = ev._replace(id=uuid.uuid4().hex)
                pipe.xadd(self.channel, {"e": _stamped(ev.to_json(), published)}, minid=minid, approximate=True)
            await pipe.execute()

    async def _check_epoch(self) -> None:
        """Compare Redis's epoch with the one this node saw; a different (or a lost) one means Redis lost its
        data: the handlers of `on_reset` end what depended on it."""
        epoch = uuid.uuid4().hex
        async with self._reader_client.pipeline(transaction=False) as pipe:
            pipe.set(self.epoch_key, epoch, nx=True)
            pipe.get(self.epoch_key)
            _, current = await pipe.execute()
        self._epoch_checked = time.monotonic()
        previous, self._epoch = self._epoch, current
        if previous is None or previous == current:
            return
        log.warning("redis lost its data; ending what depended on it")
        # The entries kept in memory belong to the lost log; new ones follow `reading` in the new one.
        self._window.clear()
        self._window_from = stream_id(self.reading)
        for handler in list(self.on_reset):
            try:
                await handler()
            except Exception:
                log.exception("bus reset handler failed")

    async def _read(self) -> None:
        failed = False
        # Not only cancellation: redis-py sometimes swallows a cancellation that lands in a blocking read.
        while not self._closed:
            try:
                if failed or time.monotonic() - self._epoch_checked >= EPOCH_EVERY:
                    async with asyncio.timeout(READ_TIMEOUT):
                        await self._check_epoch()
                    if failed:
                        log.info("redis bus reader reconnected")
                    failed = False
                async with asyncio.timeout(READ_TIMEOUT):
                    answer = await self._reader_client.xread({self.channel: self.reading}, count=READ_COUNT,
                                                             block=BLOCK_MS)
                await self._handle(answer)
                self._trim(time.monotonic())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._closed:
                    return
                if not failed:  # no traceback: it is an outage, and rendering one took seconds under load
                    log.warning("redis bus reader failed; reading again", error=repr(exc))
                failed = True
                await asyncio.sleep(RETRY_AFTER)

    async def _handle(self, answer: Any) -> None:
        if not answer:
            return
        metrics = self.metrics
        window = self._window
        for _stream, entries in answer:
            now = time.monotonic()
            batch: list[tuple[str, Event]] = []
            for entry_id, fields in entries:
                raw = fields.get("e") if fields else None
                if raw is None:
                    continue
                ev = _decoded(raw, entry_id)
                if ev is None:
                    continue
                window.append((stream_id(entry_id), entry_id, ev, now))
                if metrics is not None:
                    metrics.observe_bus_lag(_published_at(raw))
                batch.append((entry_id, ev))
            if not entries:
                continue
            # Every entry up to the last of this read is being handed over from here on: a gateway session
            # registered from now is caught up to it, and sees every later entry live.
            self.reading = entries[-1][0]
            await self._dispatch_batch(batch)
            self.position = entries[-1][0]

    async def _dispatch_batch(self, batch: list[tuple[str, Event]]) -> None:
        for handler, wants, many in list(self._handlers):
            if many is not None:
                # The whole read, unfiltered: an entry may change what the ones after it concern (a
                # GATEWAY_ADOPT gives the gateway sessions that the next entries target), so the batch handler
                # asks its own test entry by entry, in order.
                try:
                    await many(batch)
                except Exception:  # one failing receiver must not stop the others
                    log.exception("event handler failed", event_type=batch[0][1].type)
                continue
            wanted = batch if wants is None else [entry for entry in batch if wants(entry[1])]
            for _entry_id, ev in wanted:
                try:
                    await handler(ev)
                except Exception:
                    log.exception("event handler failed", event_type=ev.type)

    def _trim(self, now: float) -> None:
        window = self._window
        while window and (len(window) > WINDOW_ENTRIES or window[0][3] < now - WINDOW_S):
            self._window_from = window.popleft()[0]

    async def since(self, after: str, upto: str) -> list[tuple[str, Event]] | None:
        """The log's entries after `after` up to `upto` (both ids), oldest first; None when the log no
        longer holds all of them (trimmed, or lost by Redis)."""
        start, end = stream_id(after), stream_id(upto)
        if end <= start:
            return []
        if start >= self._window_from:
            window = self._window
            lo = bisect.bisect_right(window, start, key=_key)  # a deque indexes in O(n / 64)
            hi = bisect.bisect_right(window, end, lo=lo, key=_key)
            return [(entry[1], entry[2]) for entry in itertools.islice(window, lo, hi)]
        return await self._since_in_redis(after, upto, start)

    async def _since_in_redis(self, after: str, upto: str, start: tuple[int, int]) -> list[tuple[str, Event]] | None:
        try:
            info = await self.client.xinfo_stream(self.channel)
        except Exception as exc:
            if "no such key" in str(exc).lower():
                return None
            raise
        # Trimming removes the oldest entries: everything after `after` is still there when the stream holds an
        # entry at or before it, or never dropped any.
        first = stream_id(info.get("recorded-first-entry-id") or "0-0")
        if first > start and int(info.get("entries-added", 0)) > int(info.get("length", 0)):
            return None
        out: list[tuple[str, Event]] = []
        cursor = f"({after}"
        while True:
            page = await self.client.xrange(self.channel, cursor, upto, count=SINCE_PAGE)
            for entry_id, fields in page:
                raw = fields.get("e") if fields else None
                ev = _decoded(raw) if raw is not None else None
                if ev is not None:
                    out.append((entry_id, ev))
            if len(page) < SINCE_PAGE:
                return out
            cursor = f"({page[-1][0]}"

    async def close(self) -> None:
        self._closed = True
        reader = self._reader
        if reader is not None:
            reader.cancel()
            # redis-py sometimes loses a cancellation that lands in a blocking read: closing the reader's
            # connection ends that read, and the loop sees `_closed`.
            if not (await asyncio.wait({reader}, timeout=0.2))[0]:
                with contextlib.suppress(Exception):
                    await self._reader_client.connection_pool.disconnect()
                await asyncio.wait({reader}, timeout=1.0)
            if reader.done() and not reader.cancelled():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    reader.result()
        if self.subscriber is not None:
            with contextlib.suppress(Exception):
                await self.subscriber.aclose()
        await super().close()


def _decoded(raw: str, entry_id: str = "") -> Event | None:
    """An entry's event; None for one that does not decode (logged): read again and again, it would stop
    the node's reader for good."""
    try:
        return Event.from_json(raw)
    except Exception:
        log.error("undecodable event in the log; skipped", entry_id=entry_id)
        return None


def _key(entry: tuple[tuple[int, int], str, Event, float]) -> tuple[int, int]:
    return entry[0]


def stream_id(entry_id: str) -> tuple[int, int]:
    """A stream id ("ms-seq") as a tuple that orders as the log does."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)
