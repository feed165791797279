"""SQL for guild bans. Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import RowMapping, delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.views import UserColumns
from meadhall.db import dialect
from meadhall.db.schema import (
    guild_bans,
    users,
)

Row = RowMapping


# ---- guild bans --------------------------------------------------------------------------------


async def select_ban(conn: AsyncConnection, guild_id: int, user_id: int) -> Row | None:
    stmt = select(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    return (await conn.execute(stmt)).mappings().first()


async def select_bans(conn: AsyncConnection, guild_id: int) -> list[Row]:
    """Newest first (ties by user id, newest-id first)."""
    stmt = (
        select(guild_bans)
        .where(guild_bans.c.guild_id == guild_id)
        .order_by(guild_bans.c.created_at.desc(), guild_bans.c.user_id.desc())
    )
    return list((await conn.execute(stmt)).mappings())


async def upsert_ban(conn: AsyncConnection, guild_id: int, user_id: int, reason: str | None, author_id: int,
                  now: Any) -> None:
    """Insert the ban, or update the reason and author of an existing one (its date stays)."""
    values = {"guild_id": guild_id, "user_id": user_id, "reason": reason, "author_id": author_id, "created_at": now}
    await conn.execute(dialect.upsert(conn, guild_bans, values, ["guild_id", "user_id"], ["reason", "author_id"]))


async def delete_ban(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    result = await conn.execute(
        delete(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    )
    return result.rowcount == 1


async def select_users_by_id(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, UserColumns]:
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    return {row["id"]: dict(row) for row in (await conn.execute(select(users).where(users.c.id.in_(ids)))).mappings()}
