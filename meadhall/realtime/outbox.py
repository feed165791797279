"""The event outbox (docs/architecture.md, "CLI effects reach live connections"): a CLI run has no way to the
serving processes' bus, so its unit of work stores its events in `event_outbox` in the transaction of the change
(db/uow.py); every serving process polls the table and publishes what it claims on its own bus.

Each row is claimed by one process (the claim deletes it), so with Redis every node gets each event once, from
whichever node claimed it. The claim commits only after the bus took the events: a bus that refuses them (Redis
unreachable) rolls the claim back and the rows wait for the next poll."""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.core.clock import Clock, as_utc
from meadhall.core.ids import SnowflakeGenerator
from meadhall.db import dialect
from meadhall.db.uow import Publisher, outbox_drained, outbox_mark, unit_of_work
from meadhall.realtime.events import Event
from meadhall.realtime.queries import delete_outbox_batch, select_outbox_pending

# A command's effect may take 2 seconds to reach the connections (docs/operations.md); an idle poll is one
# indexed read.
POLL_EVERY = 0.5
# A row this old was written while no serving process ran (one would have claimed it within a poll): every
# connection open then has closed, and a gateway session that could still RESUME past it lives at most the
# resume window (120 s, docs/gateway.md). Connections opened since got the change in READY, and an old
# USER_UPDATE or MEMBER_UPDATE published now could overwrite a newer state in a client: such rows are dropped.
STALE_AFTER = 120.0
BATCH = 500

log = structlog.get_logger("meadhall.outbox")


def _fresh(created_at: datetime, cutoff: datetime) -> bool:
    created = as_utc(created_at)
    return created is not None and created >= cutoff


def _decoded(body: str) -> Event | None:
    """A row that does not decode (written by another version during an upgrade, say) is dropped: rolled back
    again and again, it would hold every later row, and this process's changes queued behind them."""
    try:
        return Event.from_json(body)
    except Exception:
        log.error("undecodable outbox row dropped")
        return None


class OutboxDrain:
    def __init__(self, engine: AsyncEngine, clock: Clock, ids: SnowflakeGenerator, bus: Publisher) -> None:
        self.engine = engine
        self.clock = clock
        self.ids = ids
        self.bus = bus
        self.failing = False

    async def run(self) -> None:
        """One poll (the periodic job). It repeats twice a second, so a failure (database or Redis down) is
        logged once, and its end once."""
        try:
            await self.drain()
        except Exception:
            if not self.failing:
                log.exception("outbox drain failed; retrying every poll")
            self.failing = True
        else:
            if self.failing:
                log.info("outbox drain working again")
            self.failing = False

    async def drain(self) -> int:
        """Publish and delete the waiting rows, oldest first; returns how many events were published."""
        published = 0
        mark = outbox_mark(self.engine)
        while await self._pending():  # until empty (another node may have claimed the rest meanwhile)
            _claimed, sent = await self._publish_batch()
            published += sent
        outbox_drained(self.engine, mark)  # this process's changes publish at once again
        return published

    async def _pending(self) -> bool:
        """The idle cost of the outbox: one read of at most one key, without a transaction on SQLite."""
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(**{dialect.READ_OPTION: True})
            return await select_outbox_pending(conn)

    async def _publish_batch(self) -> tuple[int, int]:
        async with unit_of_work(self.engine, self.clock, self.ids, self.bus) as uow:
            rows = await delete_outbox_batch(uow.conn, BATCH)
            cutoff = uow.now - timedelta(seconds=STALE_AFTER)
            fresh = [row["body"] for row in rows if _fresh(row["created_at"], cutoff)]
            if len(fresh) < len(rows):
                log.info("stale outbox rows dropped", count=len(rows) - len(fresh), older_than_seconds=STALE_AFTER)
            events = [ev for ev in map(_decoded, fresh) if ev is not None]
            if events:
                # Inside the claim's transaction, on purpose: these changes committed long ago; what must not
                # commit before the bus has the events is the deletion of their rows.
                await self.bus.publish(events)
        return len(rows), len(events)
