"""Unit of work: one transaction per request. Events queued on it are published only after the commit
succeeds and are dropped on rollback (house rule 3). A CLI run writes them to the outbox instead, in the same
transaction, for a serving process to publish (docs/architecture.md, "CLI effects reach live connections"); so do
the events of a committed change that the bus refused (Redis unreachable for a moment)."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import structlog
from sqlalchemy import Engine, insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from meadhall.core.clock import Clock
from meadhall.core.ids import SnowflakeGenerator
from meadhall.db import dialect
from meadhall.db.engine import WROTE_FLAG
from meadhall.db.schema.outbox import event_outbox

if TYPE_CHECKING:
    # Type only: db sits below realtime and imports nothing of it at run time (docs/architecture.md,
    # the layers). The unit of work holds events; it does not build or deliver them.
    from meadhall.realtime.events import Event

log = structlog.get_logger("meadhall.uow")

_INSERT_OUTBOX = insert(event_outbox)


class Publisher(Protocol):
    """Where committed events go: the realtime bus satisfies this, so db needs no import of it."""

    async def publish(self, events: list[Event]) -> None: ...


class UnitOfWork:
    def __init__(self, conn: AsyncConnection, clock: Clock, ids: SnowflakeGenerator,
                 audit_key: bytes | None = None) -> None:
        self.conn = conn
        self.clock = clock
        self.ids = ids
        # The key of the audit chain's HMAC (docs/audit.md): every writer records audit through its unit of
        # work, and the key comes from SECRET_KEY, which only the runtime holds.
        self.audit_key = audit_key
        self.now: datetime = clock.now()  # one time for everything written in this transaction
        self.events: list[Event] = []
        self._after_commit: list[Callable[[], Awaitable[object]]] = []

    def next_id(self) -> int:
        return self.ids.next()

    def emit(self, *events: Event) -> None:
        """Queue events; they leave only after the commit."""
        self.events.extend(e for e in events if e.users)

    def after_commit(self, callback: Callable[[], Awaitable[object]]) -> None:
        """Run side effects that must not happen for a rolled-back transaction (file deletion, ...)."""
        self._after_commit.append(callback)


@asynccontextmanager
async def unit_of_work(
    engine: AsyncEngine, clock: Clock, ids: SnowflakeGenerator, bus: Publisher, *, write: bool = True,
    outbox: bool = False, audit_key: bytes | None = None,
) -> AsyncIterator[UnitOfWork]:
    """`outbox`: the process has no way to the serving processes' bus (a CLI run): the events of a write are
    stored in `event_outbox` within this transaction, so they exist exactly when the change does. So are they
    while earlier events of this process wait there (`_WAITING`)."""
    async with dialect.write_lock(engine) if write else contextlib.nullcontext():
        async with engine.connect() as conn:
            option = dialect.WRITE_OPTION if write else dialect.READ_OPTION
            conn = await conn.execution_options(**{option: True})
            async with conn.begin():
                conn.info[WROTE_FLAG] = False
                uow = UnitOfWork(conn, clock, ids, audit_key)
                yield uow
                if write and uow.events and (outbox or engine.sync_engine in _WAITING):
                    await conn.execute(_INSERT_OUTBOX, [{"created_at": uow.now, "body": ev.to_json()}
                                                        for ev in uow.events])
                    uow.events = []
    # Reached only when the transaction committed.
    if uow.events:
        try:
            await bus.publish(uow.events)
        except Exception:
            # The data is committed, so the request succeeds; its events wait in the outbox that every serving
            # process drains (realtime/outbox.py) until the bus takes them. Dropped, they would leave every
            # gateway session that outlives a short Redis outage deaf to this change.
            await _keep_for_later(engine, clock, ids, bus, uow.events)
    for callback in uow._after_commit:
        await callback()


# The engines of this process whose refused events wait in the outbox. Until a drain of this process finds it
# empty, the events of later changes join them there instead of going to the bus at once, which would let them
# overtake the earlier ones (an older USER_UPDATE arriving last would win in every client). Per engine: how many
# refused batches are being written to the outbox right now, and how many were ever (a generation).
_WAITING: weakref.WeakKeyDictionary[Engine, list[int]] = weakref.WeakKeyDictionary()


def outbox_mark(engine: AsyncEngine) -> int | None:
    """Taken by a drain before it looks at the outbox: the generation of refused batches, or None while one is
    still being written (its row may not be visible yet: this drain must not end the waiting)."""
    state = _WAITING.get(engine.sync_engine)
    if state is None:
        return 0
    return None if state[0] else state[1]


def outbox_drained(engine: AsyncEngine, mark: int | None) -> None:
    """The outbox was found empty after `mark` was taken: unless a batch was refused since, changes publish their
    events at once again."""
    state = _WAITING.get(engine.sync_engine)
    if state is not None and mark is not None and not state[0] and state[1] == mark:
        del _WAITING[engine.sync_engine]


async def _keep_for_later(engine: AsyncEngine, clock: Clock, ids: SnowflakeGenerator, bus: Publisher,
                          events: list[Event]) -> None:
    """`events` carry the ids the bus gave them before it failed, if it did part of its work (realtime/bus.py):
    published again, they are numbered once per session."""
    log.warning("event publish failed; the events wait in the outbox", count=len(events), exc_info=True)
    state = _WAITING.setdefault(engine.sync_engine, [0, 0])
    state[0] += 1
    state[1] += 1
    try:
        async with unit_of_work(engine, clock, ids, bus, outbox=True) as later:
            later.emit(*events)
    except Exception:
        log.exception("event publish failed and the events could not be kept", count=len(events))
    finally:
        state[0] -= 1
