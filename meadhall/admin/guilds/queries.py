"""SQL of instance administration's server list and main flag. Never commits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.text import escape_like, norm
from meadhall.db.schema import guilds
from meadhall.guilds.rows import GuildRow

# The transaction lock that keeps one main server while two administrators set it at once (db/dialect/).
MAIN_FLAG_LOCK = 0x6D61696E  # "main"


@dataclass(frozen=True)
class GuildFilter:
    q: str | None = None
    owner_id: int | None = None
    main: bool | None = None


def _where(f: GuildFilter) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if f.q:
        where.append(guilds.c.name_norm.like("%" + escape_like(norm(f.q)) + "%", escape="\\"))
    if f.owner_id is not None:
        where.append(guilds.c.owner_id == f.owner_id)
    if f.main is not None:
        where.append(guilds.c.is_main.is_(f.main))
    return where


async def select_guild_page(conn: AsyncConnection, f: GuildFilter, before: int | None, limit: int
                            ) -> list[GuildRow]:
    """Newest first; `limit + 1` rows at most, the extra one telling that more follow."""
    stmt = select(guilds).where(*_where(f))
    if before is not None:
        stmt = stmt.where(guilds.c.id < before)
    stmt = stmt.order_by(guilds.c.id.desc()).limit(limit + 1)
    return cast("list[GuildRow]", list((await conn.execute(stmt)).mappings()))


async def count_guilds(conn: AsyncConnection, f: GuildFilter) -> int:
    return int((await conn.execute(select(func.count()).select_from(guilds).where(*_where(f)))).scalar_one())


async def clear_other_main(conn: AsyncConnection, keep_id: int) -> list[GuildRow]:
    """Clear the main flag of every guild but `keep_id`; the rows as they were before."""
    rows = list((await conn.execute(
        select(guilds).where(guilds.c.is_main.is_(True), guilds.c.id != keep_id).with_for_update()
    )).mappings())
    if rows:
        await conn.execute(update(guilds).where(guilds.c.id.in_([r["id"] for r in rows])).values(is_main=False))
    return cast("list[GuildRow]", rows)
