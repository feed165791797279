"""SQL of the instance statistics (docs/admin.md, "Statistics"). Messages and users are counted by id:
ids are snowflakes that begin with their creation time, so a time range is an id range on the primary key
(an index-only range count on its index). Never commits."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from meadhall.core.ids import EPOCH_MS
from meadhall.db.schema import channels, files, guilds, messages, users
from meadhall.guilds.rows import GuildRow

_TIME_SHIFT = 1 << 22  # the bits of a snowflake below its milliseconds


def id_at(ms: int) -> int:
    """The smallest id made at or after unix milliseconds `ms`."""
    return max(ms - EPOCH_MS, 0) * _TIME_SHIFT


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
    """Account totals and activity in one pass over the users. Active: `last_seen_at` within the period,
    deleted accounts aside. Online: the effective-status rule of user summaries (seen within the presence
    timeout, not `invisible`), banned and deleted accounts aside."""
    present = users.c.deleted_at.is_(None)

    def tally(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    online = present & users.c.banned_at.is_(None) & (users.c.status != "invisible") & (
        users.c.last_seen_at > online_since)
    stmt = select(
        func.count(),
        func.count(users.c.banned_at),
        func.count(users.c.deleted_at),
        tally(online),
        *(tally(present & (users.c.last_seen_at >= now - timedelta(days=d))) for d in (1, 7, 30)),
    )
    row = (await conn.execute(stmt)).one()
    return UserCounts(*(int(v) for v in row))


async def select_file_totals(conn: AsyncConnection) -> tuple[int, int]:
    """(bytes, count) of the stored files."""
    size, count = (await conn.execute(select(func.coalesce(func.sum(files.c.size), 0), func.count()))).one()
    return int(size), int(count)


async def select_top_guilds(conn: AsyncConnection, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
    """(guild id, messages with ids in [lo, hi)) of the guilds with most, most first, the older guild first on
    a tie; guild rooms only. Counted per room on the (channel_id, id) index, an index-only range count each,
    and summed here: summed in SQL, SQLite would run each room's count again for HAVING and ORDER BY."""
    in_room = (select(func.count()).select_from(messages)
               .where(messages.c.channel_id == channels.c.id, messages.c.id >= lo, messages.c.id < hi)
               .scalar_subquery())
    stmt = select(channels.c.guild_id, in_room).where(channels.c.guild_id.is_not(None))
    per_guild: dict[int, int] = {}
    for guild_id, count in (await conn.execute(stmt)).all():
        per_guild[int(guild_id)] = per_guild.get(int(guild_id), 0) + int(count)
    busiest = sorted(((-n, g) for g, n in per_guild.items() if n > 0))[:limit]
    return [(g, -n) for n, g in busiest]


async def select_guilds_by_ids(conn: AsyncConnection, guild_ids: list[int]) -> dict[int, GuildRow]:
    if not guild_ids:
        return {}
    rows = (await conn.execute(select(guilds).where(guilds.c.id.in_(guild_ids)))).mappings()
    return {row["id"]: cast(GuildRow, row) for row in rows}
