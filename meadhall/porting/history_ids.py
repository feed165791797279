"""Message ids for imported history: snowflakes made from the SOURCE time, so that a room's history (ordered
by id everywhere: pages, search, read marks) comes in the source's order, and an imported message sorts
before everything written here since.

Snowflakes count milliseconds from 2024-01-01 (core/ids.py) and cannot go below it, yet most Discord history is
older. Times before 2024 are therefore squeezed, in order, into the first 2^20 milliseconds of the id space
(2015-01-01 .. 2024-01-01 over ~17 minutes: one id millisecond per ~4.5 source minutes, each holding 4 million
ids). Order is kept; only the per-day statistics (room_days, which read the day from the id) count such
messages on 2024-01-01.

Ids are unique without a lock: each id is at least the previous one plus one (so one import never repeats an
id, whatever order it is fed in), and the walk skips every id already in `messages` (an earlier import of the
same era), read in ordered chunks beside the generator, so memory stays bounded. The +1 rule holds within one
`HistoryIds`: a caller starting another for the same import (a room of its own, so that rooms do not follow
each other in id order) writes what it holds first, so that the new one finds those ids and skips them.
"""

from __future__ import annotations

import time
from collections import deque
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.ids import EPOCH_MS, MAX_ID
from meadhall.db.schema import messages

OLDEST_MS = 1_420_070_400_000  # 2015-01-01T00:00:00Z, Discord's own epoch: nothing older exists there
SQUEEZED_MS = 1 << 20  # id milliseconds that hold all pre-2024 history
_CHUNK = 4096


def base_id(at: datetime) -> int:
    """The smallest id a message of source time `at` may take. A time in the future (a clock that was wrong)
    counts as a second ago: the ids made here from now on must stay above every imported one."""
    ms = min(int(at.timestamp() * 1000), int(time.time() * 1000) - 1000)
    if ms >= EPOCH_MS + SQUEEZED_MS:
        return min((ms - EPOCH_MS) << 22, MAX_ID)
    if ms >= EPOCH_MS:
        return (ms - EPOCH_MS) << 22
    span = EPOCH_MS - OLDEST_MS
    return (max(ms - OLDEST_MS, 0) * SQUEEZED_MS // span) << 22


class HistoryIds:
    """Ids for messages of one import, in the order `next` is called."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self._last = -1
        self._taken: deque[int] = deque()  # ids already in `messages` at or after the last one, ascending
        self._taken_until = -1  # `_taken` holds every existing id in (_last, _taken_until]
        self._exhausted = False

    async def next(self, at: datetime) -> int:
        candidate = max(base_id(at), self._last + 1)
        while True:
            while self._taken and self._taken[0] < candidate:
                self._taken.popleft()
            if not self._taken and not self._exhausted and candidate > self._taken_until:
                await self._read_from(candidate)
                continue
            if self._taken and self._taken[0] == candidate:
                candidate += 1
                continue
            break
        self._last = candidate
        return candidate

    async def _read_from(self, start: int) -> None:
        rows = (await self.conn.execute(
            select(messages.c.id).where(messages.c.id >= start).order_by(messages.c.id).limit(_CHUNK))).all()
        self._taken.extend(int(r[0]) for r in rows)
        if len(rows) < _CHUNK:
            # Nothing beyond: later ids are free (this import's own are never repeated by the +1 rule).
            self._exhausted = True
        else:
            self._taken_until = int(rows[-1][0])
