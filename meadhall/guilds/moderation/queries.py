"""SQL for guild bans. Never commits."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.schema import guild_bans
from meadhall.guilds.rows import BanRow

# ---- guild bans --------------------------------------------------------------------------------


async def select_ban(conn: AsyncConnection, guild_id: int, user_id: int) -> BanRow | None:
    stmt = select(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    return cast("BanRow | None", (await conn.execute(stmt)).mappings().first())


async def select_bans(conn: AsyncConnection, guild_id: int) -> list[BanRow]:
    """Newest first (ties by user id, newest-id first)."""
    stmt = (
        select(guild_bans)
        .where(guild_bans.c.guild_id == guild_id)
        .order_by(guild_bans.c.created_at.desc(), guild_bans.c.user_id.desc())
    )
    return cast("list[BanRow]", list((await conn.execute(stmt)).mappings()))


async def upsert_ban(conn: AsyncConnection, guild_id: int, user_id: int, reason: str | None, author_id: int,
                  now: datetime) -> None:
    """Insert the ban, or update the reason and author of an existing one (its date stays)."""
    values = {"guild_id": guild_id, "user_id": user_id, "reason": reason, "author_id": author_id, "created_at": now}
    await conn.execute(dialect.upsert(conn, guild_bans, values, ["guild_id", "user_id"], ["reason", "author_id"]))


async def delete_ban_row(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    result = await conn.execute(
        delete(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    )
    return result.rowcount == 1

