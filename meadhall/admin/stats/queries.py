"""SQL of the instance statistics (docs/admin.md, "Statistics"). Users are counted by id: ids are snowflakes
that begin with their creation time, so a time range is an id range on the primary key (an index-only range
count on its index). Messages are counted from `room_days` (db/schema/stats.py), their number per room and
UTC day kept by triggers, a few rows per room and day instead of every message. Never commits."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import cast

from sqlalchemy import Table, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import ScalarSelect

from meadhall.core.ids import EPOCH_MS
from meadhall.db.schema import channels, files, guilds, room_days, users
from meadhall.guilds.rows import GuildRow

_TIME_SHIFT = 1 << 22  # the bits of a snowflake below its milliseconds
_UNIX_DAY_ZERO = date(1970, 1, 1)


def id_at(ms: int) -> int:
    """The smallest id made at or after unix milliseconds `ms`."""
    return max(ms - EPOCH_MS, 0) * _TIME_SHIFT


def day_number(day: date) -> int:
    """`room_days.day` of a UTC date: the triggers' day of an id (migration 0020)."""
    return (day - _UNIX_DAY_ZERO).days


async def count_rows(conn: AsyncConnection, table: Table) -> int:
    """All rows (COUNT(*) without a condition: SQLite counts the smallest index without reading rows)."""
    return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def count_in_ranges(conn: AsyncConnection, table: Table, bounds: list[int]) -> list[int]:
    """Rows with ids in each [bounds[i], bounds[i + 1]), and then those from the last bound on: one
    statement of index-only range counts on the primary key (faster than grouping by a computed day)."""
    id_col = table.c.id
    ranges = [select(func.count()).select_from(table).where(id_col >= lo, id_col < hi).scalar_subquery()
              for lo, hi in itertools.pairwise(bounds)]
    after = select(func.count()).select_from(table).where(id_col >= bounds[-1]).scalar_subquery()
    return [int(n) for n in (await conn.execute(select(*ranges, after))).one()]


@dataclass(frozen=True)
class UserCounts:
    total: int
    banned: int
    deleted: int
    online_now: int
    active_1d: int
    active_7d: int
    active_30d: int


async def select_user_counts(conn: AsyncConnection, now: datetime, online_since: datetime) -> UserCounts:
    """Account totals and activity, each a count on a partial index of users (migration 0020) rather than
    one pass over every account. Active: `last_seen_at` within the period, deleted accounts aside. Online:
    the effective-status rule of user summaries (seen within the presence timeout, not `invisible`), banned
    and deleted accounts aside."""
    present = users.c.deleted_at.is_(None)

    def count(*conditions: ColumnElement[bool]) -> ScalarSelect[int]:
        return select(func.count()).select_from(users).where(*conditions).scalar_subquery()

    stmt = select(
        count(),
        count(users.c.banned_at.is_not(None)),
        count(users.c.deleted_at.is_not(None)),
        count(present, users.c.last_seen_at > online_since, users.c.banned_at.is_(None),
              users.c.status != "invisible"),
        *(count(present, users.c.last_seen_at >= now - timedelta(days=d)) for d in (1, 7, 30)),
    )
    row = (await conn.execute(stmt)).one()
    return UserCounts(*(int(v) for v in row))


async def select_file_totals(conn: AsyncConnection) -> tuple[int, int]:
    """(bytes, count) of the stored files."""
    size, count = (await conn.execute(select(func.coalesce(func.sum(files.c.size), 0), func.count()))).one()
    return int(size), int(count)


@dataclass(frozen=True)
class MessageDays:
    total: int
    per_day: dict[int, int]  # day number -> messages, from the first day asked on (later days included)


async def select_message_days(conn: AsyncConnection, first_day: int) -> MessageDays:
    """Every message, and the messages of each day from `first_day` on: one pass over room_days, the days
    before `first_day` summed as one group."""
    # kept by trigger: see derived registry "room_days"
    day = case((room_days.c.day >= first_day, room_days.c.day), else_=None).label("counted_day")
    rows = (await conn.execute(select(day, func.sum(room_days.c.messages)).group_by(day.name))).all()
    per_day = {int(d): int(n) for d, n in rows if d is not None}
    return MessageDays(sum(int(n) for _d, n in rows), per_day)


async def select_top_guilds(conn: AsyncConnection, first_day: int, last_day: int, limit: int
                            ) -> list[tuple[int, int]]:
    """(guild id, messages of the days first_day..last_day) of the guilds with most, most first, the older
    guild first on a tie; guild rooms only."""
    count = func.sum(room_days.c.messages)
    stmt = (select(channels.c.guild_id, count)
            .select_from(room_days.join(channels, channels.c.id == room_days.c.channel_id))
            .where(room_days.c.day >= first_day, room_days.c.day <= last_day, channels.c.guild_id.is_not(None))
            .group_by(channels.c.guild_id).having(count > 0)
            .order_by(count.desc(), channels.c.guild_id).limit(limit))
    return [(int(g), int(n)) for g, n in (await conn.execute(stmt)).all()]


async def select_guilds_by_ids(conn: AsyncConnection, guild_ids: list[int]) -> dict[int, GuildRow]:
    if not guild_ids:
        return {}
    rows = (await conn.execute(select(guilds).where(guilds.c.id.in_(guild_ids)))).mappings()
    return {row["id"]: cast(GuildRow, row) for row in rows}
