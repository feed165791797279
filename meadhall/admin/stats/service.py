"""Instance statistics (docs/admin.md, "Statistics"): growth of users and messages per UTC day, activity,
storage and the busiest servers of a range of days ending today. A fixed number of queries whatever the
range; messages are summed from their counts per room and day, never read."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.views import PRESENCE_TIMEOUT
from meadhall.admin.access import require_admin
from meadhall.admin.stats import queries
from meadhall.auth.sessions import Principal
from meadhall.db.dialect import database_size_bytes
from meadhall.db.schema import users
from meadhall.guilds.views import guild_view
from meadhall.runtime import Runtime

TOP_GUILDS = 10


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


def _days(first: date, days: int) -> list[date]:
    return [first + timedelta(days=offset) for offset in range(days)]


def _growth(total: int, dates: list[date], per_day: list[int], later: int) -> list[dict]:
    """One `{date, new, total}` per day: `total` counts the rows made by the end of that day; `later` are the
    rows made after the last day."""
    running = total - sum(per_day) - later  # made before the first day
    growth = []
    for day, new in zip(dates, per_day, strict=True):
        running += new
        growth.append({"date": day.isoformat(), "new": new, "total": running})
    return growth


async def _user_growth(conn: AsyncConnection, first: date, days: int) -> tuple[int, list[dict]]:
    total = await queries.count_rows(conn, users)
    dates = _days(first, days)
    bounds = [queries.id_at(_ms(d)) for d in [*dates, first + timedelta(days=days)]]
    *per_day, later = await queries.count_in_ranges(conn, users, bounds)
    return total, _growth(total, dates, per_day, later)


async def _message_growth(conn: AsyncConnection, first: date, days: int) -> tuple[int, list[dict]]:
    found = await queries.select_message_days(conn, queries.day_number(first))
    dates = _days(first, days)
    per_day = [found.per_day.get(queries.day_number(d), 0) for d in dates]
    last = queries.day_number(dates[-1])
    later = sum(n for d, n in found.per_day.items() if d > last)
    return found.total, _growth(found.total, dates, per_day, later)


async def access_instance_stats(rt: Runtime, principal: Principal, days: int) -> dict[str, Any]:
    require_admin(principal)
    async with rt.read() as uow:
        conn, now = uow.conn, uow.now
        today = now.astimezone(UTC).date()
        first = today - timedelta(days=days - 1)
        user_total, user_growth = await _user_growth(conn, first, days)
        message_total, message_growth = await _message_growth(conn, first, days)
        counts = await queries.select_user_counts(conn, now, now - PRESENCE_TIMEOUT)
        files_bytes, files_count = await queries.select_file_totals(conn)
        database_bytes = await database_size_bytes(conn)
        top = await queries.select_top_guilds(conn, queries.day_number(first), queries.day_number(today),
                                              TOP_GUILDS)
        rows = await queries.select_guilds_by_ids(conn, [guild_id for guild_id, _ in top])
    top_guilds = [{"guild": guild_view(rows[g]), "messages": n, "members": int(rows[g]["member_count"])}
                  for g, n in top if g in rows]
    return {"stats": {
        "range": {"from": first.isoformat(), "to": today.isoformat(), "days": days},
        "users": {"total": user_total, "banned": counts.banned, "deleted": counts.deleted, "growth": user_growth},
        "messages": {"total": message_total, "growth": message_growth},
        "activity": {"online_now": counts.online_now, "active_1d": counts.active_1d,
                     "active_7d": counts.active_7d, "active_30d": counts.active_30d},
        "storage": {"database_bytes": database_bytes, "files_bytes": files_bytes, "files_count": files_count},
        "top_guilds": top_guilds,
    }}
